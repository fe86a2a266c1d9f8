"""The two torch exporters behind one call, with every warning recorded.

* legacy: the TorchScript-tracing exporter, the only one in torch < 2.5
  (``dynamic_axes``, opset <= 17 in torch 1.13).  The model is exported in
  ``TrainingMode.EVAL`` with constant folding (torch's defaults, what a
  deployment export does): BatchNorm after Conv is fused into the Conv.  With
  ``allow_training`` and modules in training mode it is exported with
  ``TrainingMode.PRESERVE`` and without constant folding, so the graph holds
  what the modules' flags say (live Dropout, batch-statistics BatchNorm).
* dynamo: ``torch.onnx.export(..., dynamo=True, dynamic_shapes=...)`` (torch.export
  underneath), used when torch >= 2.5 has it.  Each dynamic axis is
  ``Dim.DYNAMIC`` (torch >= 2.6: torch finds the range and the equalities
  between inputs itself, and refuses to bake the dim in), else ``Dim.AUTO``,
  else one named ``Dim`` per axis name.  The exported program's
  nn_module_stack of every graph node is handed to the mapping
  (value_scopes): the ONNX values carry the graph nodes' names.
  torch.export's refusals become an ExportError that names the construct
  (data-dependent control flow, a dynamic dim baked in, an operator without an
  ONNX translation) and the fix.
"""
import contextlib
import inspect
import linecache
import os
import re
import sys
import traceback
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


class ExporterFallbackWarning(UserWarning):
    """capture(exporter="auto") exported with the legacy exporter although the
    installed torch has the dynamo one: dynamo failed, or could not take the
    model (a TorchScript module).  The bundle's parity.json says the same
    (exporter, exporter_fallback), and `onnxparity check` names it."""


def warn_fallback(why):
    """Print the fallback on stderr (through warnings, so a caller can filter
    it by its class); ``why`` is parity.json's exporter_fallback text."""
    warnings.warn(f"onnxparity: exported with the legacy exporter, not dynamo: {why}",
                  ExporterFallbackWarning, stacklevel=2)


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


def exporter_prints_to_stderr():
    """A context in which what the exporter prints ("[torch.onnx] Obtain model
    graph ... ✅", onnxscript's "Applied N of general pattern rewrite rules.")
    goes to stderr: capture's stdout is its summary line (docs/capture.md),
    which scripts read."""
    return contextlib.redirect_stdout(sys.stderr)


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
    with exporter_prints_to_stderr():
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
        if hasattr(Dim, "DYNAMIC"):
            return Dim.DYNAMIC  # torch finds ranges and equalities; refuses to specialize
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
        if isinstance(x, (tuple, list)):
            return tuple(spec(v) for v in x)
        return None  # a Python constant (an int, a flag): torch.export specializes it

    bound = inspect.signature(forward).bind(*args, **kwargs)
    return {name: spec(value) for name, value in bound.arguments.items()}


def export_dynamo(model, args, kwargs, path, *, input_names, output_names, flat_dims, opset,
                  large):
    """Export with dynamo=True to ``path``.  Returns (export_args for
    parity.json, value_scopes for _mapping.DynamoScopes).  Raises ExportError
    with the construct and the fix when torch.export refuses the model."""
    params = _export_params()
    kw = {"dynamo": True}
    if kwargs:
        kw["kwargs"] = dict(kwargs)
    call_args = tuple(args)
    if not kwargs and call_args and isinstance(call_args[-1], dict):
        # torch.onnx.export reads a trailing dict as the keyword inputs unless
        # a {} follows it (the legacy exporter's convention, kept by dynamo's)
        call_args += ({},)
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
    try:
        with exporter_prints_to_stderr():
            program = torch.onnx.export(model, call_args, str(path), **kw)
    except Exception as e:
        raise ExportError(explain_dynamo_failure(e)) from e
    got = _program_opset(program)
    if opset is not None and got is not None and got != int(opset):
        warnings.warn(f"the dynamo exporter wrote opset {got}, not the opset {int(opset)} asked for "
                      "(torch exports at its own opset and converts down only where its version "
                      "converter can)", UserWarning, stacklevel=2)
    return {"dynamic_shapes": _shapes_json(shapes)}, value_scopes(program)


def _program_opset(program):
    model = getattr(program, "model", None)
    imports = getattr(model, "opset_imports", None)
    try:
        return int(imports[""]) if imports and "" in imports else None
    except (TypeError, ValueError):
        return None


def value_scopes(program):
    """{graph node name: scope} from the exported program torch.onnx.export
    returned (an ONNXProgram); {} when it has none."""
    from ._mapping import scope_of_module_stack
    ep = getattr(program, "exported_program", None)
    if ep is None:
        return {}
    out = {}
    for node in ep.graph.nodes:
        scope = scope_of_module_stack(node.meta.get("nn_module_stack"))
        if scope is not None:
            out[node.name] = scope
    return out


# --------------------------------------------------------------------------- why dynamo failed

_TORCH_DIR = os.path.dirname(torch.__file__)


def _chain(e):
    seen = []
    while e is not None and e not in seen:
        seen.append(e)
        e = e.__cause__ or e.__context__
    return seen


def _user_frame(excs):
    """file:line and source of the innermost frame outside torch in the
    tracebacks of ``excs`` (the user's code that torch.export stopped at)."""
    best = None
    for x in excs:
        for fr in traceback.extract_tb(x.__traceback__):
            f = fr.filename
            if f.startswith(_TORCH_DIR) or f.startswith("<") or f == __file__ or "/onnxparity/" in f:
                continue
            best = fr
    if best is None:
        return ""
    code = (best.line or "").strip()
    return f" at {best.filename}:{best.lineno}" + (f" ({code})" if code else "")


_FIRST_LINE = re.compile(r"[^\n]+")


def _brief(x, limit=300):
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(x)).strip()
    m = _FIRST_LINE.search(text)
    one = m.group(0) if m else type(x).__name__
    return one if len(one) <= limit else one[:limit] + "..."


def explain_dynamo_failure(e):
    """One message for a failed dynamo export: which construct torch.export or
    the ONNX translation refused, where in the user's code, and the fix."""
    excs = _chain(e)
    names = {type(x).__name__ for x in excs}
    text = "\n".join(str(x) for x in excs)
    where = _user_frame(excs)
    inner = excs[-1]
    if _under_vmap(excs) and ("not tracked with proxy" in text or "BatchedTensor" in text):
        return _explain_vmap(where, inner)
    if "GuardOnDataDependentSymNode" in names or "data-dependent" in text:
        return (f"dynamo export: data-dependent control flow{where}: Python branches on a tensor's "
                f"value ({_brief(inner)}). Fix: torch.cond(pred, true_fn, false_fn, (x,)) for a branch, "
                "torch.where for an elementwise choice, or exporter='legacy' to trace the one path the "
                "example takes")
    if "Constraints violated" in text or "ConstraintViolationError" in names:
        detail = next((ln.strip(" -") for ln in text.splitlines() if "Not all values" in ln
                       or "specialized" in ln), _brief(inner))
        return (f"dynamo export: a dim declared dynamic cannot be dynamic{where}: {detail}. Fix: compute "
                "sizes from x.shape (or -1) instead of literals, give the dim a range "
                "(torch.export.Dim(name, min=..., max=...)) through dynamic_axes, or leave it static "
                "(dynamic_axes=None or a dict without it)")
    if "Unsupported" in names or "graph break" in text.lower():
        return (f"dynamo export: torch.export cannot trace a construct{where} ({_brief(inner)}). Fix: "
                "rewrite it with tensor operations (no Python side effects, no unsupported builtins), "
                "or exporter='legacy'")
    if "ConversionError" in names and re.search(r"Key '\w*running_(mean|var)\w*' does not match", text):
        return ("dynamo export: BatchNorm in training mode: this torch's ONNX translation fails on the "
                f"running-statistics update that a training-mode BatchNorm makes ({_brief(inner)}). Fix: "
                "model.eval() before exporting (a deployment export), or exporter='legacy' to record "
                "the training-mode graph")
    op = re.search(r"(aten::[\w.]+|torch\.ops\.aten\.[\w.]+)", text)
    if "DispatchError" in names or "ConversionError" in names or (op and "translat" in text.lower()):
        what = f"operator {op.group(1)} has no ONNX translation at this opset" if op else \
            "the translation of the exported program to ONNX failed"
        return (f"dynamo export: {what}{where} ({_brief(inner)}). Fix: a newer opset, a "
                "custom_translation_table entry for the operator, or exporter='legacy'")
    return f"dynamo export failed{where}: {type(inner).__name__}: {_brief(inner)}"


def _under_vmap(excs):
    return any(fr.filename.endswith(os.path.join("_functorch", "vmap.py"))
               for x in excs for fr in traceback.extract_tb(x.__traceback__))


def _explain_vmap(where, inner):
    """torch.vmap over a tensor whose size is symbolic: torch.export (2.9)
    loses the size's proxy inside the vmapped function.  transformers' masks
    (masking_utils) are built that way; transformers ships a mask function
    without vmap for its own exporters."""
    msg = (f"dynamo export: torch.vmap over a tensor with a dynamic dim{where}: torch.export cannot "
           f"trace torch.vmap when a vmapped tensor's size is symbolic ({_brief(inner)}). Fix: build "
           "the tensor without torch.vmap (broadcast the index tensors: q[:, None] >= k[None, :]), or "
           "export with static shapes (dynamic_axes=None)")
    if "masking_utils.py" in where:
        msg += ("; for a transformers model (its attention masks come from masking_utils), the mask "
                "function transformers' own exporters use: ALL_MASK_ATTENTION_FUNCTIONS.register("
                "'sdpa_without_vmap', transformers.integrations.executorch.sdpa_mask_without_vmap), "
                "ALL_ATTENTION_FUNCTIONS.register('sdpa_without_vmap', ALL_ATTENTION_FUNCTIONS['sdpa']), "
                "then model.config._attn_implementation = 'sdpa_without_vmap'")
    return msg


def _dim_json(dim):
    """A dynamic_shapes entry as text: "Dim.DYNAMIC" / "Dim.AUTO" for torch's
    hints (whose repr is an internal class), else the Dim's name."""
    kind = getattr(getattr(dim, "type", None), "name", None)
    if kind in ("DYNAMIC", "AUTO", "STATIC"):
        return f"Dim.{kind}"
    return getattr(dim, "__name__", None) or str(dim)


def _shapes_json(shapes):
    def one(s):
        if s is None:
            return None
        if isinstance(s, dict) and all(isinstance(k, int) for k in s):
            return {str(k): _dim_json(v) for k, v in s.items()}
        if isinstance(s, dict):  # a dict keyed by tensors: each key by its repr
            return {k if isinstance(k, str) else repr(k): one(v) for k, v in s.items()}
        return [one(v) for v in s]
    return one(shapes)
