"""onnxparity, PyTorch side: capture an export and its eager truth as a bundle
(model.onnx + test_data_set_K/ + parity.json) for the onnxparity C tool.

    import onnxparity
    onnxparity.capture(model.eval(), [x_batch1, x_batch8], "bundle/")
    onnxparity.export_submodules(model, fixtures, "parts/", ["backbone", "head"])
    onnxparity.capture_stream(model, loader, "bundle/", limit=100, fixture_of=lambda b: b[0])
    onnxparity.compare_exporters(model, fixtures, "ab/")   # legacy vs dynamo, docs/exporters.md

    from onnxparity.testing import assert_export_parity
    assert_export_parity("bundle/", rtol=1e-4, atol=1e-5, top_k="auto")

    r = onnxparity.check("bundle/", top_k="auto")   # in-process, the tool's JSON typed
    r.verdict, r.causes, r.first_divergent

Importing the package is cheap: it imports no torch, onnx or numpy (the
``onnxparity`` command of the wheel imports this package before it execs the
C tool).  Each public name is loaded from its module on first use: the
capture's names (``capture``, ``export_submodules``, ``capture_stream``,
``CaptureOptions``) bring torch and onnx in (``pip install
onnxparity[capture]``), the in-process API's (``check``, ``bisect``,
``diagnose`` and their errors) ctypes and the shared library only.
"""
import sys

# typing costs more to import than the rest of the package together: not at
# run time (mypy reads the name TYPE_CHECKING as true wherever it is set)
TYPE_CHECKING = False

__version__ = "0.1.0"

# public name -> the module (in this package) that defines it.  How to add
# one: a row here, the name in __all__, and the import under TYPE_CHECKING
# below (what mypy and editors read).
_LAZY = {
    "capture": "capture", "export_submodules": "capture", "CaptureOptions": "capture",
    "capture_stream": "_stream",
    "capture_decode": "_decode",
    "generate": "_generate", "GenerateResult": "_generate", "GeneratePrompt": "_generate",
    "compare_exporters": "_exporters", "ExporterComparison": "_exporters",
    "CaptureError": "errors", "ExportError": "errors", "FixtureError": "errors",
    "ForwardError": "errors", "OutputError": "errors", "TrainingModeError": "errors",
    "check": "api", "CheckResult": "api", "bisect": "api", "BisectResult": "api",
    "diagnose": "api", "DiagnoseResult": "api", "OnnxParityError": "api", "UsageError": "api",
    "FileError": "api", "FormatError": "api", "RuntimeFailure": "api",
    "gate": "api", "GateResult": "api", "RecordRefused": "api",
}

# the modules that need the capture's packages (the `capture` extra)
_CAPTURE = ("capture", "_stream", "_decode", "_exporters")

__all__ = ["capture", "capture_stream", "export_submodules", "CaptureOptions", "CaptureError", "FixtureError",
           "ForwardError", "OutputError", "TrainingModeError", "ExportError", "__version__", "check",
           "CheckResult", "bisect", "BisectResult", "diagnose", "DiagnoseResult", "OnnxParityError",
           "UsageError", "FileError", "FormatError", "RuntimeFailure", "gate", "GateResult",
           "RecordRefused", "capture_decode", "generate", "GenerateResult", "GeneratePrompt",
           "compare_exporters", "ExporterComparison"]

if TYPE_CHECKING:
    from typing import Any, List
    from .errors import (CaptureError, ExportError, FixtureError, ForwardError, OutputError,
                         TrainingModeError)
    from .capture import CaptureOptions, capture, export_submodules
    from ._stream import capture_stream
    from ._decode import capture_decode
    from ._generate import GeneratePrompt, GenerateResult, generate
    from ._exporters import ExporterComparison, compare_exporters
    from .api import (BisectResult, CheckResult, DiagnoseResult, FileError, FormatError,
                      GateResult, OnnxParityError, RecordRefused, RuntimeFailure, UsageError,
                      bisect, check, diagnose, gate)


def __getattr__(name: str) -> "Any":
    """Loads a public name's module on first use and keeps the name here
    (the next lookup is an ordinary attribute)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib  # here: it imports warnings, a cost the command need not pay
    try:
        value = getattr(importlib.import_module(f".{module}", __name__), name)
    except ModuleNotFoundError as e:
        if module not in _CAPTURE or not e.name or e.name.startswith(__name__):
            raise
        raise ModuleNotFoundError(f"onnxparity.{name} needs {e.name}, which is not installed: "
                                  "pip install 'onnxparity[capture]' (torch, onnx, onnxscript, numpy)",
                                  name=e.name) from e
    globals()[name] = value
    return value


def __dir__() -> "List[str]":
    return sorted(set(globals()) | set(_LAZY))


class _Package(type(sys)):  # type: ignore[misc]  # types.ModuleType, without importing types
    """This package's module type.  ``onnxparity.capture`` is the function
    (as it was when the package imported the capture eagerly); importing the
    submodule of the same name (``import onnxparity.capture``,
    ``importlib.import_module("onnxparity.capture")``) would otherwise bind
    the module object to that attribute, and ``onnxparity.capture(...)``
    would then call a module."""

    def __setattr__(self, name: str, value: "Any") -> None:
        if name == "capture" and isinstance(value, type(sys)):
            value = value.capture
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
