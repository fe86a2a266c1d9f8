"""Exceptions raised by the capture.

Every refusal of the capture is a CaptureError (or a subclass), raised before
anything is left at the bundle's path: a bundle is written into a temporary
folder beside it and renamed into place only when complete.
"""
from typing import Iterable


class CaptureError(Exception):
    """The capture refused its input or could not finish; no bundle was written."""


class FixtureError(CaptureError):
    """A fixture of an unsupported type, or fixtures that disagree in structure."""


class ForwardError(CaptureError):
    """The model's forward raised on a fixture (the original is ``__cause__``)."""


class OutputError(CaptureError):
    """The forward returned something that is not a tensor (or a nest of tensors)."""


class TrainingModeError(CaptureError):
    """Submodules were in training mode; ``modules`` lists their paths."""

    def __init__(self, message: str, modules: Iterable[str]) -> None:
        super().__init__(message)
        self.modules = list(modules)


class ExportError(CaptureError):
    """torch.onnx.export failed, or wrote a graph that does not fit the fixtures."""
