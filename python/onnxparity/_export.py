"""The two torch exporters behind one call, with every warning recorded.

* legacy: the TorchScript-tracing exporter, the only one in torch < 2.5
  (``dynamic_axes``, opset <= 17 in torch 1.13).  The model is exported in
  ``TrainingMode.EVAL`` with constant folding (torch's defaults, what a
  deployment export does): BatchNorm after Conv is fused into the Conv.  With
  ``allow_training`` and modules in training mode it is exported with
  ``TrainingMode.PRESERVE`` and without constant folding, so the graph holds
  what the modules' flags say (live Dropout, batch-statistics BatchNorm).
* dynamo: ``torch.onnx.export(..., dynamo=True, dynamic_shapes=...)`` (torch.export
  underneath), used when torch >= 2.5 has it.
"""
import contextlib
import inspect
import linecache
import re
import warnings

import torch

from .errors import ExportError


def torch_version():
    m = re.match(r"(\d+)\.(\d+)", torch.__version__)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def _export_params():
    try:
        return inspect.signature(torch.onnx.export).parameters
    except (TypeError, ValueError):
        return {}


def has_dynamo_exporter():
    return torch_version() >= (2, 5) and "dynamo" in _export_params()


def resolve_exporter(name):
    if name not in ("auto", "legacy", "dynamo"):
        raise ValueError(f"exporter must be 'auto', 'legacy' or 'dynamo', not {name!r}")
    if name == "dynamo" and not has_dynamo_exporter():
        raise ExportError(f"exporter='dynamo' needs torch >= 2.5 with torch.onnx.export(dynamo=True); "
                          f"this is torch {torch.__version__}")
    if name == "auto":
        return "dynamo" if has_dynamo_exporter() else "legacy"
    return name


def warning_record(w):
    cat = w.category
    return {"category": cat.__name__, "category_module": cat.__module__, "message": str(w.message),
            "file": w.filename, "line": w.lineno, "where": f"{w.filename}:{w.lineno}",
            "code": linecache.getline(w.filename, w.lineno).strip() if w.lineno else ""}


@contextlib.contextmanager
def recording_warnings(sink):
    """Record every warning (filters set to 'always' inside), then show them
    again through the caller's own filters."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            sink.extend(caught)
    for w in caught:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)


def export_legacy(model, args, kwargs, path, *, input_names, output_names, dynamic_axes, opset,
                  training):
    from torch.onnx import TrainingMode
    export_args = tuple(args) + ((dict(kwargs),) if kwargs else ())
    if not kwargs and export_args and isinstance(export_args[-1], dict):
        export_args = export_args + ({},)  # a trailing dict would be read as keyword inputs
    kw = dict(export_params=True, input_names=list(input_names), output_names=list(output_names),
              dynamic_axes=dynamic_axes or None,
              training=TrainingMode.PRESERVE if training else TrainingMode.EVAL,
              do_constant_folding=not training)
    if opset is not None:
        kw["opset_version"] = int(opset)
    if "dynamo" in _export_params():
        kw["dynamo"] = False
    torch.onnx.export(model, export_args, str(path), **kw)
    return {"training": "PRESERVE" if training else "EVAL", "do_constant_folding": not training,
            "dynamic_axes": _axes_json(dynamic_axes)}


def _axes_json(axes):
    if not axes:
        return None
    return {name: {str(d): n for d, n in sorted(dims.items())} for name, dims in axes.items()}


def _dim_factory():
    from torch.export import Dim
    made = {}

    def make(name):
        if hasattr(Dim, "AUTO"):
            return Dim.AUTO  # torch finds the ranges and the equalities itself
        ident = re.sub(r"\W", "_", name)
        if not ident or ident[0].isdigit():
            ident = "d_" + ident
        if ident not in made:
            made[ident] = Dim(ident)
        return made[ident]

    return make


def dynamic_shapes_for(forward, args, kwargs, flat_dims):
    """torch.export's dynamic_shapes, shaped like the forward's arguments:
    {parameter name: spec}, a spec being {dim: Dim} for a tensor (None when
    static) or a tuple of specs.  ``flat_dims`` is {flattened input index:
    {dim: axis name}} in the order of _fixtures.flatten_inputs."""
    make = _dim_factory()
    counter = iter(range(1 << 30))

    def spec(x):
        if isinstance(x, torch.Tensor):
            dims = flat_dims.get(next(counter))
            return {d: make(n) for d, n in dims.items()} if dims else None
        if isinstance(x, dict):
            return {k: spec(v) for k, v in x.items()}
        return tuple(spec(v) for v in x)

    bound = inspect.signature(forward).bind(*args, **kwargs)
    return {name: spec(value) for name, value in bound.arguments.items()}


def export_dynamo(model, args, kwargs, path, *, input_names, output_names, flat_dims, opset,
                  large):
    params = _export_params()
    kw = {"dynamo": True}
    if kwargs:
        kw["kwargs"] = dict(kwargs)
    kw["input_names"] = list(input_names)
    kw["output_names"] = list(output_names)
    if opset is not None:
        kw["opset_version"] = int(opset)
    shapes = None
    if flat_dims:
        shapes = dynamic_shapes_for(model.forward, args, kwargs, flat_dims)
        kw["dynamic_shapes"] = shapes
    if "external_data" in params:
        kw["external_data"] = bool(large)
    torch.onnx.export(model, tuple(args), str(path), **kw)
    return {"dynamic_shapes": _shapes_json(shapes)}


def _shapes_json(shapes):
    def one(s):
        if s is None:
            return None
        if isinstance(s, dict) and all(isinstance(k, int) for k in s):
            return {str(k): str(v) for k, v in s.items()}
        if isinstance(s, dict):
            return {k: one(v) for k, v in s.items()}
        return [one(v) for v in s]
    return one(shapes)
