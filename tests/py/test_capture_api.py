"""The capture package's public API is typed (issue #16): every public
function of the public modules carries hints on every parameter and its
return value (mypy checks them: `make typecheck`), and capture()'s options
are one dataclass, CaptureOptions, whose fields are capture()'s keywords.

Run: PYTHONPATH=python /usr/bin/python3 -m pytest -q tests/py/test_capture_api.py
"""
import dataclasses
import importlib
import inspect

import pytest

torch = pytest.importorskip("torch")

import onnxparity  # noqa: E402

PUBLIC_MODULES = ["onnxparity", "onnxparity.capture", "onnxparity._stream", "onnxparity.testing",
                  "onnxparity.ortlib", "onnxparity.__main__", "onnxparity.errors"]


def public_functions():
    for name in PUBLIC_MODULES:
        mod = importlib.import_module(name)
        for attr, obj in vars(mod).items():
            if attr.startswith("_") or getattr(obj, "__module__", None) != mod.__name__:
                continue
            if inspect.isfunction(obj):
                yield f"{name}.{attr}", obj
            elif inspect.isclass(obj):
                init = obj.__dict__.get("__init__")
                if inspect.isfunction(init) and not dataclasses.is_dataclass(obj):
                    yield f"{name}.{attr}.__init__", init


FUNCTIONS = sorted(public_functions())


def test_there_are_public_functions_to_check():
    names = [n for n, _ in FUNCTIONS]
    for want in ("onnxparity.capture.capture", "onnxparity.capture.export_submodules",
                 "onnxparity._stream.capture_stream",
                 "onnxparity.testing.assert_export_parity", "onnxparity.testing.compare_intermediates",
                 "onnxparity.errors.TrainingModeError.__init__"):
        assert want in names


@pytest.mark.parametrize("name,fn", FUNCTIONS, ids=[n for n, _ in FUNCTIONS])
def test_public_function_is_annotated(name, fn):
    sig = inspect.signature(fn)
    missing = [p.name for p in sig.parameters.values()
               if p.name != "self" and p.annotation is inspect.Parameter.empty]
    assert not missing, f"{name}: parameters without a type hint: {missing}"
    assert sig.return_annotation is not inspect.Signature.empty, f"{name}: no return type"


def test_options_dataclass_matches_capture_keywords():
    kw = [p for p in inspect.signature(onnxparity.capture).parameters.values()
          if p.kind == p.KEYWORD_ONLY and p.name != "options"]
    fields = dataclasses.fields(onnxparity.CaptureOptions)
    assert [p.name for p in kw] == [f.name for f in fields]
    assert [p.default for p in kw] == [f.default for f in fields]


def test_options_object_and_keyword_overrides(tmp_path):
    model = torch.nn.Linear(3, 2).eval()
    opts = onnxparity.CaptureOptions(exporter="legacy", reference64=0, trace_fixture=1, progress=False)
    doc = onnxparity.capture(model, [torch.ones(2, 3), torch.ones(4, 3)], tmp_path / "a", options=opts)
    assert doc["exporter"] == "legacy" and doc["export_args"]["traced_fixture"] == 1
    assert doc["noise"]["reference"] is None
    # a keyword other than its default overrides the options' field
    doc = onnxparity.capture(model, [torch.ones(2, 3), torch.ones(4, 3)], tmp_path / "b", options=opts,
                             trace_fixture="auto", reference64=True)
    assert doc["export_args"]["trace_fixture"] == "auto" and doc["noise"]["reference"] == "float64"
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.exporter = "dynamo"  # type: ignore[misc]
    with pytest.raises(TypeError, match="CaptureOptions"):
        onnxparity.capture(model, torch.ones(2, 3), tmp_path / "c", options={"exporter": "legacy"})
