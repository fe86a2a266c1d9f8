"""Fixtures: what the caller passes, normalised to (args, kwargs), and the one
order in which their tensors become ONNX graph inputs.

Accepted forms (see docs/capture.md):
  * a tensor (or numpy array)            -> one fixture, one positional input
  * a tuple                              -> one fixture, positional inputs;
                                            a trailing dict holds keyword inputs
  * a dict of tensors                    -> one fixture, keyword inputs
  * a list, generator, DataLoader or any other iterable of the above
                                         -> one fixture per item (inside an
                                            item a list reads like a tuple)
Positional inputs may nest tuples/lists/dicts of tensors; they flatten depth
first, dicts in insertion order (as both torch exporters flatten them).

A trailing dict reads as torch.onnx.export reads it: keyword inputs, unless
it is empty (torch's "{} last: no keywords, the dict before it is
positional") or none of its keys is a parameter of the forward while a
positional parameter is left for it (then it is that positional input).
"""
import inspect

import numpy as np
import torch

from .errors import FixtureError, OutputError

_HINT = ("expected a torch.Tensor, a numpy array, a tuple/list of them, a dict of them "
         "(keyword inputs), or an iterable (list, generator, DataLoader) of those")


class Fixture:
    """One set of model inputs: positional ``args`` (a tuple, possibly nested)
    and keyword ``kwargs`` (a dict)."""

    __slots__ = ("args", "kwargs")

    def __init__(self, args, kwargs):
        self.args = tuple(args)
        self.kwargs = dict(kwargs)


# Python values a forward may take beside its tensors (an int size, a flag,
# a mode name): passed to the forward as they are and baked into the graph
# by the exporter, never a graph input (torch.export specializes them)
CONSTANTS = (bool, int, float, str, type(None))


def scalar_tensor(x, float_dtype):
    """A Python bool, int or float as the 0-d tensor an exporter makes of it:
    bool, int64, or ``float_dtype`` (the legacy exporter's inputs are
    float64, dynamo's SymFloat outputs float32)."""
    dtype = torch.bool if isinstance(x, bool) else torch.int64 if isinstance(x, int) else float_dtype
    return torch.tensor(x, dtype=dtype)


def _leaf(x, where):
    if isinstance(x, torch.Tensor):
        return x.detach()
    if isinstance(x, CONSTANTS):
        return x
    if isinstance(x, np.ndarray):
        if x.dtype == object:
            raise FixtureError(f"{where}: numpy array of dtype object is not a tensor")
        return torch.from_numpy(np.ascontiguousarray(x))
    raise FixtureError(f"{where}: unsupported fixture value of type {type(x).__name__}; {_HINT}")


def _nest(x, where):
    if isinstance(x, (tuple, list)):
        if not x:
            raise FixtureError(f"{where}: an empty tuple/list is not an input")
        return tuple(_nest(v, f"{where}[{i}]") for i, v in enumerate(x))
    if isinstance(x, dict):
        if not x:
            raise FixtureError(f"{where}: an empty dict is not an input")
        return {k: _nest(v, f"{where}[{k!r}]") for k, v in x.items()}
    return _leaf(x, where)


def _kwargs(d, where):
    if not d:
        raise FixtureError(f"{where}: an empty dict is not a fixture")
    out = {}
    for k, v in d.items():
        if not isinstance(k, str):
            raise FixtureError(f"{where}: keyword input names must be strings, got {k!r}")
        out[k] = _nest(v, f"{where}[{k!r}]")
    return out


def _positional_dict(d, n_before, params):
    """The trailing dict ``d`` (after ``n_before`` positional inputs) is a
    positional input: none of its keys names a parameter of the forward
    (``params``, None when unknown) and a positional parameter is left."""
    if params is None or not d:
        return False
    if any(p.kind == p.VAR_KEYWORD for p in params):
        return False
    names = {p.name for p in params if p.kind != p.VAR_POSITIONAL}
    if any(k in names for k in d):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return n_before < len(positional) or any(p.kind == p.VAR_POSITIONAL for p in params)


def _one(item, where, params=None):
    if isinstance(item, (torch.Tensor, np.ndarray)):
        return Fixture((_leaf(item, where),), {})
    if isinstance(item, dict):
        if _positional_dict(item, 0, params):
            return Fixture((_nest(item, where),), {})
        return Fixture((), _kwargs(item, where))
    if isinstance(item, (tuple, list)):
        items = list(item)
        kwargs = {}
        if items and isinstance(items[-1], dict):
            if not items[-1]:
                items.pop()  # torch's convention: a trailing {} means "no keyword inputs"
            elif not _positional_dict(items[-1], len(items) - 1, params):
                kwargs = _kwargs(items.pop(), f"{where}[{len(items)}]")
        if not items and not kwargs:
            raise FixtureError(f"{where}: an empty tuple/list is not a fixture")
        return Fixture(tuple(_nest(v, f"{where}[{i}]") for i, v in enumerate(items)), kwargs)
    raise FixtureError(f"{where}: unsupported fixture of type {type(item).__name__}; {_HINT}")


def normalize(fixtures, params=None):
    """Returns (list of Fixture, form) where form is 'single' or 'sequence'.
    ``params``: the forward's parameters (forward_params), which say whether
    a trailing dict is keyword inputs or a positional dict."""
    if isinstance(fixtures, (torch.Tensor, np.ndarray, dict, tuple)):
        return [_one(fixtures, "fixtures", params)], "single"
    if fixtures is None or isinstance(fixtures, (str, bytes, int, float, bool)):
        raise FixtureError(f"fixtures: unsupported type {type(fixtures).__name__}; {_HINT}")
    try:
        items = iter(fixtures)
    except TypeError:
        raise FixtureError(f"fixtures: unsupported type {type(fixtures).__name__}; {_HINT}") from None
    out = [_one(item, f"fixture {k}", params) for k, item in enumerate(items)]
    if not out:
        raise FixtureError("fixtures: the iterable yielded no fixtures")
    return out, "sequence"


def _struct(x):
    if isinstance(x, torch.Tensor):
        return ("tensor", str(x.dtype), x.dim())
    if isinstance(x, CONSTANTS):  # the exporter bakes it in: every fixture must pass the same
        return ("constant", type(x).__name__, repr(x))
    if isinstance(x, dict):
        return ("dict",) + tuple((_key(k), _struct(v)) for k, v in x.items())
    return tuple(_struct(v) for v in x)


def _key(k):
    """A dict key as structure: strings and ints as they are, anything else
    (a tensor key) by its repr."""
    return k if isinstance(k, (str, int)) else repr(k)


def structure(fx):
    return (tuple(_struct(a) for a in fx.args), tuple(sorted((k, _struct(v)) for k, v in fx.kwargs.items())))


def check_consistent(fixtures):
    first = structure(fixtures[0])
    for k, fx in enumerate(fixtures[1:], 1):
        s = structure(fx)
        if s != first:
            raise FixtureError(
                f"fixture {k} differs from fixture 0 in structure (number of inputs, nesting, "
                f"keyword names, dtype or rank): {_describe(s)} vs {_describe(first)}; shapes may "
                "differ between fixtures, nothing else may")


def _describe(s):
    def one(x):
        if x and x[0] == "tensor":
            return f"{x[1].replace('torch.', '')}[rank {x[2]}]"
        if x and x[0] == "constant":
            return f"{x[1]} {x[2]}"
        if x and x[0] == "dict":
            return "{" + ", ".join(f"{k!r}: {one(v)}" for k, v in x[1:]) + "}"
        return "(" + ", ".join(one(v) for v in x) + ")"
    args, kwargs = s
    parts = [one(a) for a in args] + [f"{k}={one(v)}" for k, v in kwargs]
    return "(" + ", ".join(parts) + ")"


def forward_params(model):
    """The parameters of ``model.forward`` without ``self`` (a list of
    inspect.Parameter), None when unknown.  A TorchScript module's come from
    its compiled schema: Python's signature of a ScriptModule subclass's
    method includes ``self``, a traced module's has none."""
    if isinstance(model, torch.jit.ScriptModule):
        try:
            args = model.forward.schema.arguments
        except (AttributeError, RuntimeError):
            args = None
        if args:
            P = inspect.Parameter
            return [P(a.name, P.POSITIONAL_OR_KEYWORD) for a in args[1:]
                    if a.name.isidentifier()]
    try:
        params = list(inspect.signature(model.forward).parameters.values())
    except (TypeError, ValueError):
        return None
    return params


def keyword_order(params, kwargs):
    """Keyword inputs in the forward's parameter order (the order torch's
    exporter uses), then any extra names (a **kwargs forward) as given."""
    params = params or []
    names = [p.name for p in params]
    return [n for n in names if n in kwargs] + [k for k in kwargs if k not in names]


def flatten_inputs(fx, key_order, legacy=False):
    """[(path, tensor)] in graph-input order: positional depth first, then
    keywords.  ``legacy``: as the legacy exporter's TorchScript trace
    flattens them, a Python bool, int or float is an input too (a 0-d bool,
    int64 or float64 tensor), and a dict keyed by tensors has each key tensor
    an input before its value (path ``...key(K)``).  Under dynamo
    (torch.export) both are constants of the graph, no input; None and
    strings are constants under both."""
    out = []

    def walk(x, path):
        if isinstance(x, torch.Tensor):
            out.append((path, x))
        elif isinstance(x, dict):
            for j, (k, v) in enumerate(x.items()):
                if legacy and isinstance(k, torch.Tensor):
                    out.append((f"{path}.key({j})", k))
                walk(v, f"{path}[{k!r}]")
        elif isinstance(x, CONSTANTS):
            if legacy and isinstance(x, (bool, int, float)):
                out.append((path, scalar_tensor(x, torch.float64)))
        else:
            for i, v in enumerate(x):
                walk(v, f"{path}[{i}]")

    for i, a in enumerate(fx.args):
        walk(a, f"args[{i}]")
    for k in key_order:
        walk(fx.kwargs[k], f"kwargs[{k!r}]")
    return out


def _expand(base, x, legacy=False):
    if isinstance(x, torch.Tensor):
        return [base]
    if isinstance(x, CONSTANTS):
        return [base] if legacy and isinstance(x, (bool, int, float)) else []
    names = []
    if isinstance(x, dict):
        for j, (k, v) in enumerate(x.items()):
            if legacy and isinstance(k, torch.Tensor):
                names.append(f"{base}_{j}_key")
            names.extend(_expand(f"{base}_{k if isinstance(k, (str, int)) else j}", v, legacy))
        return names
    for j, v in enumerate(x):
        names.extend(_expand(f"{base}_{j}", v, legacy))
    return names


def unique(names):
    seen, out = set(), []
    for n in names:
        m, i = n, 1
        while m in seen:
            m, i = f"{n}_{i}", i + 1
        seen.add(m)
        out.append(m)
    return out


def default_input_names(params, fx, key_order, legacy=False):
    names = []
    if params is None:
        flat = flatten_inputs(fx, key_order, legacy)
        return [f"input_{i}" for i in range(len(flat))]
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    var = next((p for p in params if p.kind == p.VAR_POSITIONAL), None)
    for i, a in enumerate(fx.args):
        if i < len(positional):
            base = positional[i].name
        elif var is not None:
            base = f"{var.name}_{i - len(positional)}"
        else:
            base = f"input_{i}"
        names.extend(_expand(base, a, legacy))
    for k in key_order:
        names.extend(_expand(k, fx.kwargs[k], legacy))
    return unique(names)


def flatten_outputs(out, where="output"):
    """[(path, name_parts, tensor)] depth first: tuples/lists in order, dicts in
    insertion order (the order both torch exporters use).  A Python bool, int
    or float (a size the forward returns: a SymInt, SymBool or SymFloat under
    torch.export, which the dynamo exporter writes as a 0-d output) becomes a
    0-d tensor of bool, int64 or float32.  Anything else that is not a tensor
    is an OutputError."""
    flat = []

    def walk(x, path, parts):
        if isinstance(x, torch.Tensor):
            flat.append((path, parts, x))
        elif isinstance(x, (bool, int, float)):
            flat.append((path, parts, scalar_tensor(x, torch.float32)))
        elif isinstance(x, (tuple, list)):
            if not x:
                raise OutputError(f"{path} is an empty {type(x).__name__}: the forward must return tensors")
            for i, v in enumerate(x):
                walk(v, f"{path}[{i}]", parts + [str(i)])
        elif isinstance(x, dict):
            for k, v in x.items():
                walk(v, f"{path}[{k!r}]", parts + [str(k)])
        else:
            raise OutputError(
                f"{path} is {type(x).__name__} ({_short(x)}), not a tensor: the forward must return a "
                "tensor, or tuples/lists/dicts of tensors, for the export to have outputs to compare")

    walk(out, where, [])
    if not flat:
        raise OutputError(f"{where}: the forward returned no tensors")
    return flat


def _short(x):
    r = repr(x)
    return r if len(r) <= 40 else r[:37] + "..."


def default_output_names(out, flat):
    if isinstance(out, torch.Tensor):
        return ["output"]
    if isinstance(out, dict):
        return unique(["_".join(parts) for _, parts, _ in flat])
    return unique(["_".join(["output"] + parts) for _, parts, _ in flat])


def output_structure(flat):
    """What every fixture's outputs must share: paths and dtypes.  Ranks may
    differ (a squeeze of a dynamic dim): each fixture is judged on its own
    outputs, as ONNX Runtime produces them."""
    return [(path, str(t.dtype)) for path, _, t in flat]
