"""onnxparity, PyTorch side: capture an export and its eager truth as a bundle
(model.onnx + test_data_set_K/ + parity.json) for the onnxparity C tool.

    import onnxparity
    onnxparity.capture(model.eval(), [x_batch1, x_batch8], "bundle/")
    onnxparity.export_submodules(model, fixtures, "parts/", ["backbone", "head"])
    onnxparity.capture_stream(model, loader, "bundle/", limit=100, fixture_of=lambda b: b[0])

    from onnxparity.testing import assert_export_parity
    assert_export_parity("bundle/", rtol=1e-4, atol=1e-5, top_k="auto")

    r = onnxparity.check("bundle/", top_k="auto")   # in-process, the tool's JSON typed
    r.verdict, r.causes, r.first_divergent
"""
__version__ = "0.1.0"

from .errors import (CaptureError, ExportError, FixtureError, ForwardError, OutputError,  # noqa: E402
                     TrainingModeError)
from .capture import CaptureOptions, capture, export_submodules  # noqa: E402
from ._stream import capture_stream  # noqa: E402
from .api import (BisectResult, CheckResult, DiagnoseResult, FileError, FormatError,  # noqa: E402
                  OnnxParityError, RuntimeFailure, UsageError, bisect, check, diagnose)

__all__ = ["capture", "capture_stream", "export_submodules", "CaptureOptions", "CaptureError", "FixtureError", "ForwardError",
           "OutputError", "TrainingModeError", "ExportError", "__version__", "check", "CheckResult", "bisect", "BisectResult", "diagnose", "DiagnoseResult",
           "OnnxParityError", "UsageError", "FileError", "FormatError", "RuntimeFailure"]
