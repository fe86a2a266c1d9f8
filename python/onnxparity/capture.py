"""capture(): export a model and write its eager truth as an onnxparity bundle;
export_submodules(): one bundle per named submodule, fed with the activations
it really received.  The bundle layout and parity.json are documented in
docs/capture.md."""
import contextlib
import dataclasses
import importlib.metadata
import json
import os
import platform
import re
import shutil
import sys
import warnings
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np
import onnx
import torch

from . import __version__
from . import _eager, _export, _fixtures, _mapping, _progress, _state
from . import _adequacy, _bounded  # issue 19: bounded intermediates, adequacy
from . import _ortenv  # issue 29: the environment's onnxruntime
from . import _reference64 as _r64
from ._staging import Staging
from ._tensors import dtype_name, safe_stem, writable, write_pb
from .errors import CaptureError, ExportError, FixtureError, OutputError, TrainingModeError

SCHEMA = "onnxparity.capture/1"
_LARGE = 2 * 1024 ** 3 - 64 * 1024 ** 2  # protobuf's 2 GiB limit, with room for the graph


# dynamic_axes: "batch", "auto", None, or {name: {dim: axis name} | [dims]}
DynamicAxes = Union[str, None, Mapping[str, Union[Mapping[int, str], Sequence[int]]]]


@dataclasses.dataclass(frozen=True)
class CaptureOptions:
    """capture()'s options (docs/capture.md, "API"), one object to keep or
    pass around: ``capture(model, fixtures, out, options=opts)``.

    dynamic_axes: "auto" (the default: dim 0 of every input and output plus
    every dim whose size varies across the fixtures), "batch" (dim 0 only), a
    dict {name: {dim: axis name} or [dims]} as torch.onnx.export takes it,
    reproduced exactly, or None (all static).
    exporter: "auto" (dynamo when torch >= 2.5 has it, else legacy), "legacy"
    or "dynamo".  allow_training: export modules left in training mode as
    they are (to reproduce that bug) instead of refusing.  reference64: the
    float64 reference pass runs on the first K fixtures of each shape group
    (an int K, True = 2, False/0 = off, "all" = every fixture).
    intermediates: an int K stores those of the first K fixtures of each
    shape group (default 2, the fixtures the float64 reference covers), True
    or "all" every fixture's, False/0/"none" none (docs/capture.md, "Bounded
    bundles").  trace_fixture: the fixture the exporter traces (an index; "auto": the
    first whose dynamic dims are all >= 2); default None: "auto" under the
    dynamo exporter (torch.export specializes a dim of size 1), the first
    fixture under legacy, as torch.onnx.export is called.  progress: stages and per-fixture counts on
    stderr; None (default): when stderr is a terminal."""

    input_names: Optional[Sequence[str]] = None
    output_names: Optional[Sequence[str]] = None
    dynamic_axes: DynamicAxes = "auto"
    opset: Optional[int] = None
    exporter: str = "auto"
    intermediates: Union[bool, int, str] = _bounded.DEFAULT_PER_GROUP
    allow_training: bool = False
    large_model: bool = False
    reference64: Union[int, bool, str, None] = _r64.DEFAULT_PER_GROUP
    trace_fixture: Union[int, str, None] = None
    progress: Optional[bool] = None


_OPTION_NAMES = frozenset(f.name for f in dataclasses.fields(CaptureOptions))


def capture(model: torch.nn.Module, fixtures: Any, out_dir: Union[str, "os.PathLike[str]"], *,
            options: Optional[CaptureOptions] = None,
            input_names: Optional[Sequence[str]] = None, output_names: Optional[Sequence[str]] = None,
            dynamic_axes: DynamicAxes = "auto", opset: Optional[int] = None, exporter: str = "auto",
            intermediates: Union[bool, int, str] = _bounded.DEFAULT_PER_GROUP,
            allow_training: bool = False,
            large_model: bool = False,
            reference64: Union[int, bool, str, None] = _r64.DEFAULT_PER_GROUP,
            trace_fixture: Union[int, str, None] = None,
            progress: Optional[bool] = None) -> Dict[str, Any]:
    """Export ``model`` to ONNX and write the bundle ``out_dir``: model.onnx,
    test_data_set_K/{input_I,output_J}.pb (the eager outputs under no_grad),
    test_data_set_K/intermediates/ and parity.json.  Returns the parsed
    parity.json.  Raises a CaptureError (nothing written) on bad input.

    The options are CaptureOptions' (see there), given one by one or as
    ``options``; a keyword given with another value than its default
    overrides the same field of ``options``."""
    given = dict(input_names=input_names, output_names=output_names, dynamic_axes=dynamic_axes,
                 opset=opset, exporter=exporter, intermediates=intermediates,
                 allow_training=allow_training, large_model=large_model, reference64=reference64,
                 trace_fixture=trace_fixture, progress=progress)
    doc = _capture(model, fixtures, out_dir, _options(options, given), source=None)
    _bounded.print_size(out_dir, doc)  # issue 19: the size, on a terminal only
    return doc


def _options(options: Optional[CaptureOptions], given: Mapping[str, Any]) -> CaptureOptions:
    """``options`` (or the defaults) with every entry of ``given`` that is not
    its default applied."""
    base = options if options is not None else CaptureOptions()
    if not isinstance(base, CaptureOptions):
        raise TypeError(f"options must be a CaptureOptions, not {type(base).__name__}")
    default = CaptureOptions()
    changed = {k: v for k, v in given.items() if type(v) is not type(getattr(default, k))
               or v != getattr(default, k)}
    return dataclasses.replace(base, **changed) if changed else base


# --------------------------------------------------------------------------- helpers

def _training_modules(model):
    flags = {name: bool(m.training) for name, m in model.named_modules()}
    return flags, [name or "<root>" for name, t in flags.items() if t]


_MODE_SENSITIVE = (torch.nn.modules.dropout._DropoutNd, torch.nn.modules.batchnorm._BatchNorm,
                   torch.nn.modules.instancenorm._InstanceNorm, torch.nn.RNNBase, torch.nn.MultiheadAttention,
                   torch.nn.TransformerEncoderLayer, torch.nn.TransformerDecoderLayer)


def _mode_sensitive(m):
    """Whether module m computes otherwise in training mode: a BatchNorm or
    InstanceNorm only with running statistics (without them both modes use
    the batch's or the instance's own)."""
    norms = (torch.nn.modules.batchnorm._BatchNorm, torch.nn.modules.instancenorm._InstanceNorm)
    if isinstance(m, norms):
        return bool(m.track_running_stats)
    return isinstance(m, _MODE_SENSITIVE)


def _refuse_training(model, on):
    mods = dict(model.named_modules())

    def label(n):
        return f"{n} ({type(mods['' if n == '<root>' else n]).__name__})"

    sensitive = [n for n in on if _mode_sensitive(mods["" if n == "<root>" else n])]
    others = [n for n in on if n not in sensitive]
    shown = [label(n) for n in (sensitive + others)[:12]]
    more = f" and {len(on) - len(shown)} more" if len(on) > len(shown) else ""
    head = (f"{len(on)} module(s) are in training mode"
            + (f", {len(sensitive)} of them behave differently in it" if sensitive else ""))
    raise TrainingModeError(
        f"{head}: {', '.join(shown)}{more}. Exported like this, Dropout stays live; BatchNorm uses "
        "batch statistics under the legacy exporter (torch 2.15's dynamo exporter writes it with its "
        "running statistics, torch 2.9's fails on it). Call model.eval() before capturing, or pass "
        "allow_training=True "
        "(--allow-training) to record the bug on purpose.", on)


@contextlib.contextmanager
def _modes(model, flags, eval_all):
    """Run with every module in eval mode (eval_all), then put every module's
    own flag back (torch's exporter resets them all from the root's)."""
    try:
        if eval_all:
            model.eval()
        yield
    finally:
        for name, m in model.named_modules():
            if name in flags:
                m.training = flags[name]


def _sizes(tensors_per_fixture, j, d, rank):
    """The sizes of dim ``d`` of tensor ``j`` over the fixtures where that
    tensor has rank ``rank`` (an output's rank may differ per fixture)."""
    return sorted({int(ts[j].shape[d]) for ts in tensors_per_fixture if ts[j].dim() == rank})


def _resolve_axes(mode, names, tensors_per_fixture, ref, ignored):
    """{name: {dim: axis name}} over inputs+outputs (names aligned with each
    fixture's tensor list; None for an output torch names itself), ranks
    those of fixture ``ref`` (the traced one).  Names in a dict that are
    neither an input nor an output are warned about and appended to
    ``ignored``, as torch.onnx.export warns and ignores them."""
    first = tensors_per_fixture[ref]
    if mode is None or mode is False:
        return {}
    if mode in ("batch", "auto"):
        axes = {n: {0: "batch"} for n, t in zip(names, first) if n is not None and t.dim() >= 1}
        if mode == "auto":
            for j, n in enumerate(names):
                for d in range(1, first[j].dim() if n is not None else 0):
                    if len(_sizes(tensors_per_fixture, j, d, first[j].dim())) > 1:
                        axes.setdefault(n, {})[d] = f"{n}_dim{d}"
        return axes
    if isinstance(mode, dict):
        axes = {}
        for n, dims in mode.items():
            if n not in names:
                known = ", ".join(x for x in names if x is not None)
                warnings.warn(f"dynamic_axes names {n!r}, which is neither an input nor an output "
                              f"(they are: {known}): ignored, as torch.onnx.export ignores it",
                              UserWarning, stacklevel=4)
                ignored.append(n)
                continue
            if isinstance(dims, dict):
                axes[n] = {int(d): str(a) for d, a in dims.items()}
            elif isinstance(dims, (list, tuple)):
                axes[n] = {int(d): f"{n}_dim{int(d)}" for d in dims}
            else:
                raise CaptureError(f"dynamic_axes[{n!r}] must be a dict or a list of dims")
            rank = first[names.index(n)].dim()
            for d in axes[n]:
                if not 0 <= d < rank:
                    raise CaptureError(f"dynamic_axes[{n!r}]: dim {d} out of range for rank {rank}")
        return axes
    raise CaptureError(f"dynamic_axes must be 'batch', 'auto', a dict or None, not {mode!r}")


def _shape_risks(names, axes, tensors_per_fixture, ref):
    risks = []
    for j, n in enumerate(names):
        rank = tensors_per_fixture[ref][j].dim()
        for d in range(rank if n is not None else 0):
            sizes = _sizes(tensors_per_fixture, j, d, rank)
            if len(sizes) > 1 and d not in axes.get(n, {}):
                risks.append({"name": n, "dim": d, "sizes": sizes,
                              "note": "varies across fixtures but is not dynamic: the graph bakes "
                                      "the traced size in"})
    return risks


def _trace_choice(value, n):
    """trace_fixture: a fixture index (negative counts from the end, as in
    Python), "auto" or None (the default); returns the index, or "auto" /
    None (resolved once the exporter and the dynamic axes are known, by
    _traced_fixture)."""
    if value is None or value == "auto":
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise CaptureError(f"trace_fixture must be a fixture index or 'auto', not {value!r}")
    if not -n <= value < n:
        raise CaptureError(f"trace_fixture={value}: there are {n} fixture(s)")
    return value % n


_TRACE_RULES = {
    "index": "the fixture asked for (trace_fixture)",
    "auto": "the first fixture whose dynamic input dims are all >= 2 (trace_fixture=\"auto\")",
    "default-dynamo": "the default under dynamo: the first fixture whose dynamic input dims are all "
                      ">= 2, since torch.export specializes a dim of size 1",
    "default-legacy": "the default under legacy: the first fixture, as a plain torch.onnx.export of "
                      "it traces",
}


def _traced_fixture(asked, which, mode, in_names, flat_inputs):
    """The traced fixture's index and the rule that chose it (a key of
    _TRACE_RULES) from trace_fixture as _trace_choice resolved it."""
    if isinstance(asked, int):
        return asked, "index"
    if asked is None and which == "legacy":
        return 0, "default-legacy"
    axes = _input_axes(mode, in_names, flat_inputs, 0)
    return _pick_example(axes, in_names, flat_inputs), ("auto" if asked == "auto" else "default-dynamo")


def _pick_example(in_axes, in_names, flat_inputs):
    """trace_fixture="auto": the first fixture whose dynamic input dims are all
    >= 2 (a batch-1 trace can bake a squeeze or a broadcast), else 0."""
    for k, flat in enumerate(flat_inputs):
        if all(t.shape[d] >= 2 for n, (_, t) in zip(in_names, flat) for d in in_axes.get(n, {})):
            return k
    return 0


def _graph_io(mp):
    inits = {i.name for i in mp.graph.initializer}
    return [i.name for i in mp.graph.input if i.name not in inits], [o.name for o in mp.graph.output]


def _model_bytes(model):
    return sum(t.numel() * t.element_size() for t in list(model.parameters()) + list(model.buffers()))


def _versions():
    v = {"onnxparity_python": __version__, "torch": torch.__version__, "onnx": onnx.__version__,
         "numpy": np.__version__, "python": platform.python_version()}
    tv = sys.modules.get("torchvision")
    if tv is not None:
        v["torchvision"] = getattr(tv, "__version__", None)
    for key, dist in (("onnxscript", "onnxscript"), ("onnx_ir", "onnx-ir")):
        try:  # the dynamo exporter's translation and optimizer; read without importing them
            v[key] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            pass
    return v


def _json_dump(path, doc):
    path.write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n")


# --------------------------------------------------------------------------- capture

def _from_exported_program(model, source):
    """A torch.export.ExportedProgram given as the model (torch.onnx.export
    takes one): captured through its module() (a GraphModule that runs the
    program eagerly), which both the eager truth and the export use; the
    bundle's source says so.  Its modules' training flags are cleared: the
    program was traced in the mode it was, module() marks every module as
    training whatever that was, and eval() is refused on it by some torches.
    Anything else is returned as it is."""
    ep_type = getattr(getattr(torch, "export", None), "ExportedProgram", None)
    if ep_type is None or not isinstance(model, ep_type):
        return model, source
    module = model.module()
    for m in module.modules():  # the program's graph is fixed: its modules' flags mean nothing
        m.training = False
    user = set(model.graph_signature.user_inputs)
    dims = [[d for d, n in enumerate(node.meta["val"].shape) if isinstance(n, torch.SymInt)]
            for node in model.graph.nodes if node.op == "placeholder" and node.name in user
            and isinstance(node.meta.get("val"), torch.Tensor)]
    note = {"kind": "exported_program", "dynamic_dims": dims,
            "note": "a torch.export.ExportedProgram: captured through its module(), exported again "
                    "from it; dynamic_axes \"auto\" means the program's own dynamic dims"}
    return module, (dict(source, exported_program=note) if source else note)


def _program_axes(o, source, in_names):
    """Options for a capture of an ExportedProgram (source["kind"]): the
    default dynamic_axes ("auto") becomes the dims the program itself holds
    dynamic, as a plain torch.onnx.export of the program keeps them."""
    if not source or source.get("kind") != "exported_program" or o.dynamic_axes != "auto":
        return o
    dims = source["dynamic_dims"]
    axes = {n: d for n, d in zip(in_names, dims) if d}
    return dataclasses.replace(o, dynamic_axes=axes or None)


def _capture(model, fixtures, out_dir, o, source):
    model, source = _from_exported_program(model, source)
    if not isinstance(model, torch.nn.Module):
        raise CaptureError(f"model must be a torch.nn.Module, not {type(model).__name__}")
    params = _fixtures.forward_params(model)
    fxs, form = _fixtures.normalize(fixtures, params)
    _fixtures.check_consistent(fxs)
    policy64 = _r64.parse_policy(o.reference64)
    policy_int = _bounded.parse_policy(o.intermediates)  # issue 19
    example = _trace_choice(o.trace_fixture, len(fxs))
    flags, on = _training_modules(model)
    if on and not o.allow_training:
        _refuse_training(model, on)
    which, why_legacy = _export.resolve_exporter(o.exporter), None
    if which == "dynamo" and isinstance(model, torch.jit.ScriptModule) and o.exporter == "auto":
        which, why_legacy = "legacy", ("a TorchScript module: torch.export cannot trace it (torch.onnx."
                                       "export(dynamo=True) refuses it); used legacy")

    key_order = _fixtures.keyword_order(params, fxs[0].kwargs)
    if fxs[0].kwargs:
        params = params or []
        if not any(p.kind == p.VAR_KEYWORD for p in params):
            extra = [k for k in fxs[0].kwargs if k not in {p.name for p in params}]
            if extra:
                raise FixtureError(f"keyword input(s) {', '.join(map(repr, extra))}: the forward has no "
                                   "such parameter")
    if which == "legacy" and fxs[0].kwargs:
        kwonly = [p.name for p in (params or [])
                  if p.kind == p.KEYWORD_ONLY and p.name in fxs[0].kwargs]
        if kwonly:
            raise FixtureError(f"keyword-only parameter(s) {', '.join(kwonly)}: torch's legacy exporter "
                               "passes every input by position; make them ordinary parameters or wrap "
                               "the model")
    legacy = which == "legacy"  # its trace makes Python numbers and a dict's key tensors inputs
    flat_inputs = [_fixtures.flatten_inputs(fx, key_order, legacy) for fx in fxs]
    if not flat_inputs[0]:
        raise FixtureError("the fixtures hold no tensor: the exported graph would have no input")
    in_names = list(o.input_names) if o.input_names else \
        _fixtures.default_input_names(params, fxs[0], key_order, legacy)
    o = _program_axes(o, source, in_names)
    if len(in_names) != len(flat_inputs[0]):
        raise CaptureError(f"input_names has {len(in_names)} names for {len(flat_inputs[0])} input "
                           f"tensors ({', '.join(p for p, _ in flat_inputs[0])})")
    plan = _Plan(fxs=fxs, form=form, flags=flags, on=on, which=which, why_legacy=why_legacy,
                 key_order=key_order, flat_inputs=flat_inputs, in_names=in_names, policy64=policy64,
                 legacy=legacy,
                 example=example, policy_int=policy_int,
                 store_int=_bounded.stored_fixtures(policy_int, flat_inputs))
    # the model as given: whatever happens below, it is put back
    plan.progress = prog = _progress.Progress(o.progress)
    prog.stage("snapshot of the model")
    snap = _state.Snapshot(model)
    try:
        doc = _capture_bundle(model, plan, snap, out_dir, o, source)
    except BaseException:
        prog.abort()
        raise
    finally:
        snap.restore()
    prog.done(f"wrote {out_dir}: {len(fxs)} fixture(s), exporter {doc['exporter']}")
    return doc


class _Plan:
    """What the capture knows before its first forward."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def _input_axes(mode, in_names, flat_inputs, ref):
    """The dynamic axes of the inputs alone (to pick the traced fixture before
    any forward); the full resolution, outputs included, comes later."""
    if isinstance(mode, dict):
        mode = {n: d for n, d in mode.items() if n in in_names}
    return _resolve_axes(mode, in_names, [[t for _, t in fi] for fi in flat_inputs], ref, [])


def _eager_truth(model, plan, eager, example):
    """The truth of every fixture (see _eager): the traced fixture's forward
    records the call tree with data flow (for the module map), the other
    fixtures that store intermediates every module output while the budget
    lasts; the rest record nothing.

    The state checks after each forward run in the snapshot's fast mode
    (_state) once the first forward has been checked value by value and
    changed nothing, and while no forward changes anything.  Behind them:
    when a forward checked fast reports a change, or the whole state
    compared value by value afterwards differs from the snapshot (a write
    past torch's version counters), every forward runs again with every
    check reading every value, so no change is missed or put on the wrong
    fixture."""
    snap = eager.snap
    try:
        truths, used_fast = _eager_forwards(model, plan, eager, example, fast=True)
        redo = used_fast and (any(t.changed for t in truths) or snap.changes(full=True))
    finally:
        snap.fast = False
    if redo:
        snap.restore(full=True)
        truths, _ = _eager_forwards(model, plan, eager, example, fast=False)
    return truths


def _eager_forwards(model, plan, eager, example, fast):
    """The forwards of _eager_truth -> (truths, whether a check ran in fast mode)."""
    truths, budget, structure = [], _eager.Budget(), None
    eager.snap.fast, used_fast = False, False  # the first forward's check reads every value
    reruns = set(_eager.rerun_fixtures(plan.flat_inputs))
    plan.progress.stage("eager forwards", len(plan.fxs))
    for k, fx in enumerate(plan.fxs):
        plan.progress.step(k)
        if k == example:
            rec = _mapping.Recorder(model, _mapping.LegacyScopes(), dataflow=True)
        elif k in plan.store_int:  # only the fixtures that store their intermediates
            rec = _mapping.Recorder(model, _mapping.LegacyScopes())
        else:
            rec = None
        used_fast |= eager.snap.fast
        t = eager.truth(k, fx, plan.flat_inputs[k], rec, None if k == example else budget,
                        rerun=k in reruns)
        # fast checks from the second forward on, while no forward changes the state
        if not fast or t.changed:
            eager.snap.fast = False
        elif k == 0:
            eager.snap.fast = True
        s = _fixtures.output_structure(t.flat)
        if k == 0:
            structure = s
        elif s != structure:
            raise OutputError(f"fixture {k}: the outputs differ from fixture 0's in structure or dtype: "
                              f"{s} vs {structure}")
        if k:
            t.raw = t.flat = None  # fixture 0's name the outputs; the others' are not needed
        if k != example:
            t.fx = None  # the traced fixture's copy: its tensors' ids are the graph inputs
        truths.append(t)
    return truths, used_fast


def _restyle(calls, style):
    """Scope names of recorded calls for the exporter actually used."""
    for c in calls:
        c.raw = style.raw(calls[c.parent].raw if c.parent is not None else "", c.path)


def _capture_bundle(model, plan, snap, out_dir, o, source):
    """The capture proper, once _capture has planned it: the eager forwards
    (beside the float64 copy), the export, the module map, then every
    fixture's files and parity.json, written into a staging folder that
    becomes out_dir when complete.  Returns parity.json's document."""
    export_training = bool(plan.on)
    example, plan.trace_rule = _traced_fixture(plan.example, plan.which, o.dynamic_axes, plan.in_names,
                                               plan.flat_inputs)

    # the float64 copy is taken before any forward, from the model as given
    ref64 = _r64.Pass(model, plan.policy64, plan.flat_inputs)
    eager = _eager.Eager(model, snap, plan.form, plan.key_order, plan.in_names, plan.legacy)
    with _modes(model, plan.flags, eval_all=export_training):
        truths = _eager_truth(model, plan, eager, example)
    ref64.keep_state(any(t.changed for t in truths))
    det = [t.deterministic for t in truths]  # a second forward of a fixture may update its entry
    shapes = _output_plan(model, plan, o, truths, example)

    with Staging(out_dir) as stage:
        ex = _export_and_read(model, plan, snap, example, shapes, o, stage.tmp)
        with _modes(model, plan.flags, eval_all=export_training):
            mm = _module_map(model, plan, eager, truths, example, ex)
            fixtures_doc, stems = _write_fixtures(model, plan, eager, truths, det, example, ex, mm,
                                                  ref64, stage.tmp)
        mm.traced_calls = None
        ref64.release()
        doc = _parity_doc(model, plan, snap, o, example, truths, det, shapes, ex, mm, ref64,
                          fixtures_doc, stems)
        if source is not None:
            doc["source"] = source
        doc["adequacy"] = _adequacy.report(stage.tmp, doc)  # issue 19: from the files just written
        _json_dump(stage.tmp / "parity.json", doc)
        stage.commit()
    return doc


def _output_plan(model, plan, o, truths, example):
    """What the export needs to know of the eager outputs: their names
    (output_names: one per output, or fewer, which torch names itself, or
    more, which the legacy exporter refuses and dynamo ignores; none an
    input's name), the dynamic axes of inputs and outputs over every fixture
    (``ignored``: what a dict of axes named that does not exist), the shape
    risks, and whether the model is large (external data)."""
    in_names, flat_inputs = plan.in_names, plan.flat_inputs
    first_out, first_flat = truths[0].raw, truths[0].flat
    for path, _, t in first_flat:
        if not writable(t.dtype):
            raise OutputError(f"{path} is {dtype_name(t)}: the bundle cannot hold that type (numpy has "
                              "none, and the comparison reads none); return it cast to a type it holds "
                              "(float16, float32) and compare that")
    out_names = list(o.output_names) if o.output_names else \
        _fixtures.default_output_names(first_out, first_flat)
    clash = set(in_names) & set(out_names)
    if clash:
        raise CaptureError(f"names used for both an input and an output: {', '.join(sorted(clash))}")

    eager_out = [t.outputs for t in truths]
    n_out = len(eager_out[0])
    all_names = in_names + out_names[:n_out] + [None] * (n_out - len(out_names))
    per_fixture = [[t for _, t in fi] + eo for fi, eo in zip(flat_inputs, eager_out)]
    ignored = []
    axes = _resolve_axes(o.dynamic_axes, all_names, per_fixture, example, ignored)
    risks = _shape_risks(all_names, axes, per_fixture, example)
    large = bool(o.large_model) or _model_bytes(model) > _LARGE
    return _Plan(out_names=out_names, n_out=n_out, first_flat=first_flat, axes=axes,
                 ignored=ignored, risks=risks, large=large)


def _export_and_read(model, plan, snap, example, shapes, o, tmp):
    """Export into tmp/model.onnx (_export_model's result, returned with more
    members), with a large model's tensors moved to external data where the
    exporter left them inline, and read back what the bundle needs: ``mp``
    (the ModelProto without its weights), ``external`` (the files beside
    model.onnx), ``g_in``/``g_out`` (the graph's inputs and outputs), ``feed``
    (the fixture input index of each graph input: the legacy exporter prunes
    inputs the graph does not use and the bundle feeds by position),
    ``pruned`` (the inputs dropped) and ``opset``."""
    in_names = plan.in_names
    onnx_path = tmp / "model.onnx"
    ex = _export_model(model, plan, snap, example, shapes.axes, shapes.out_names, o, tmp, shapes.large)
    if not onnx_path.exists():
        raise ExportError("torch.onnx.export wrote no model.onnx")

    external = [p.name for p in tmp.iterdir() if p.name != "model.onnx"]
    if shapes.large and not external:
        full = onnx.load(str(onnx_path))
        onnx.save_model(full, str(onnx_path), save_as_external_data=True,
                        all_tensors_to_one_file=True, location="model.onnx.data")
        del full
        external = [p.name for p in tmp.iterdir() if p.name != "model.onnx"]
    mp = onnx.load(str(onnx_path), load_external_data=False)
    g_in, g_out = _graph_io(mp)
    renamed = _renamed_inputs(ex.used, g_in, in_names, shapes.out_names)
    if renamed:
        g_in = [in_names[j] if n in renamed else n for j, n in enumerate(g_in)]
    if len(set(g_in)) != len(g_in) or not set(g_in) <= set(in_names):
        raise ExportError(f"the exported graph's inputs ({', '.join(g_in)}) are not the fixture "
                          f"tensors ({', '.join(in_names)})")
    if len(g_out) != shapes.n_out:
        raise ExportError(f"the exported graph has {len(g_out)} outputs ({', '.join(g_out)}) for "
                          f"{shapes.n_out} eager output tensors")
    ex.feed = [in_names.index(n) for n in g_in]
    ex.pruned = [n for n in in_names if n not in g_in]
    ex.renamed_inputs = renamed
    if renamed:  # the graph's own names from here on: the bundle feeds by them
        g_in = _graph_io(mp)[0]
    ex.external, ex.mp, ex.g_in, ex.g_out = external, mp, g_in, g_out
    ex.opset = next((i.version for i in mp.opset_import if i.domain in ("", "ai.onnx")), None)
    return ex


def _renamed_inputs(used, g_in, in_names, out_names):
    """{graph input name: the fixture input name it stands for} where the
    dynamo exporter named an input after an output: an input the forward
    returns unchanged is one ONNX value, and torch 2.9 gives it the output's
    name (2.15 keeps the input's).  Its graph inputs keep the forward's
    order, so the position says which input it is.  {} when nothing was
    renamed or the graph is not read that way."""
    if used != "dynamo" or len(g_in) != len(in_names) or set(g_in) <= set(in_names):
        return {}
    out = {}
    for n, want in zip(g_in, in_names):
        if n == want:
            continue
        if n not in out_names or n in in_names:
            return {}
        out[n] = want
    return out


def _module_map(model, plan, eager, truths, example, ex):
    """The module -> ONNX value map, from the traced fixture's eager call
    tree (run under the modes of the export).  Where the graph holds scopes
    the forward never entered, torch's exporter may have traced another path
    (it traces with autograd on; the TransformerEncoderLayer fast path is
    taken under no_grad only): the traced fixture runs again with autograd
    and that map is used when it places more calls.  Returns style, mapping,
    traced_calls (the call tree mapped), grad_mode (whether it came from the
    autograd forward), path_note (None when both forwards agree), leaf_paths
    and summary (_mapping.leaf_summary)."""
    style = _mapping.DynamoScopes(ex.value_scopes) if ex.used == "dynamo" else _mapping.LegacyScopes()
    leaf_paths = {n for n, m in model.named_modules() if n and not any(True for _ in m.children())}
    types = _mapping.value_types(ex.mp)

    def build(calls, fx_copy):
        _restyle(calls, style)
        flat_copy = _fixtures.flatten_inputs(fx_copy, plan.key_order, plan.legacy)
        input_ids = {id(flat_copy[i][1]): ex.g_in[j] for j, i in enumerate(ex.feed)}
        return _mapping.build(calls, ex.mp, style, input_ids, types)

    traced_calls = truths[example].calls
    mapping = build(traced_calls, truths[example].fx)
    grad_mode, path_note = False, None
    if mapping.paths_differ:
        rec = _mapping.Recorder(model, style, dataflow=True)
        _, fx_g = eager.run(example, plan.fxs[example], _eager.SEED + example, rec, grad=True)
        mapping_g = build(rec.calls, fx_g)
        path_note = ("under torch.no_grad() the eager forward calls other modules than the "
                     "traced (autograd-enabled) forward: a fast path or a grad-dependent branch")
        if len(mapping_g.value) > len(mapping.value):
            traced_calls, mapping, grad_mode = rec.calls, mapping_g, True
            path_note += "; intermediates come from a forward with autograd enabled, as traced"
    return _Plan(style=style, mapping=mapping, traced_calls=traced_calls, grad_mode=grad_mode,
                 path_note=path_note, leaf_paths=leaf_paths,
                 summary=_mapping.leaf_summary(model, mapping))


def _write_fixtures(model, plan, eager, truths, det, example, ex, mm, ref64, tmp):
    """Every fixture's folder tmp/test_data_set_K: inputs and eager outputs
    (.pb), the float64 reference where it runs, the module outputs where the
    bounded policy stores them.  Returns (parity.json "fixtures", stems: ONNX
    value -> the file stem of its intermediates).  Frees each fixture's call
    tree once written."""
    call_seq = [c.path for c in mm.traced_calls]
    taken = set()
    stems = {v: safe_stem(v, taken) for v in mm.mapping.primary}
    keep = set(mm.mapping.primary.values())
    fixtures_doc, index_files = [], []
    plan.progress.stage("writing fixtures" + (" (+ float64 reference)" if ref64.active else ""),
                        len(plan.fxs))
    for k, fxk in enumerate(plan.fxs):
        plan.progress.step(k)
        d = tmp / f"test_data_set_{k}"
        d.mkdir()
        tk = truths[k]
        entry = _fixture_files(d, plan.flat_inputs[k], tk, det[k], ex)
        store = k in plan.store_int  # issue 19: the bounded subset
        calls = _stored_calls(model, eager, k, fxk, example, tk, det, entry, mm, keep) if store else None
        pairs = {i: calls[i] for i in keep if i < len(calls)} if store else {}
        noise64 = _reference_fixture(ref64, d, k, fxk, tk.outputs, ex.g_out, pairs,
                                     mm.grad_mode if store else False, index_files)
        if not store:
            if plan.store_int:  # some fixtures store theirs: say why not this one
                entry["intermediates"] = 0
                entry["intermediates_skipped"] = _bounded.skipped_note(plan.policy_int)
        elif [c.path for c in calls] != call_seq:
            entry["intermediates"] = 0
            entry["intermediates_skipped"] = (
                "the forward called other modules than on the traced fixture "
                f"{example} (data-dependent control flow)")
        else:
            entry["intermediates"] = _write_intermediates(d, k, mm.mapping, calls, stems, noise64)
            if noise64 is not None:
                index_files.append(d / "intermediates" / "index.json")
        fixtures_doc.append(entry)
        tk.calls = None
        del calls, pairs, noise64
    return fixtures_doc, stems


def _fixture_files(d, flat_in, tk, det_k, ex):
    """A fixture's graph inputs and eager outputs as input_J.pb, output_J.pb
    in folder d; returns its parity.json "fixtures" entry (intermediates not
    yet said).  ``flat_in``: its flattened inputs; ``tk``: its eager truth."""
    real = _real_views(ex.mp)
    ins = [_as_graph_takes(flat_in[i][1], ex.g_in[j] in real) for j, i in enumerate(ex.feed)]
    outs = [_as_graph_takes(t, ex.g_out[j] in real) for j, t in enumerate(tk.outputs)]
    for j, t in enumerate(ins):
        write_pb(d / f"input_{j}.pb", t, ex.g_in[j])
    for j, t in enumerate(outs):
        write_pb(d / f"output_{j}.pb", t, ex.g_out[j])
    entry = {"dir": d.name, "deterministic": det_k,
             "inputs": [{"name": ex.g_in[j], "dtype": dtype_name(t), "shape": list(t.shape)}
                        for j, t in enumerate(ins)],
             "outputs": [{"name": ex.g_out[j], "dtype": dtype_name(t), "shape": list(t.shape)}
                         for j, t in enumerate(outs)],
             "inputs_written": tk.written,
             "state_changed": [c["name"] for c in tk.changed],
             "state_drift": tk.drift}
    if tk.ties:
        entry["ties"] = _tie_files(d, tk, ex, real)
    return entry


def _tie_files(d, tk, ex, real):
    """The fixture's tie-ordered reference (_eager step 5, docs/formats.md):
    tie_ordered/output_J.pb when the forward with ONNX's tie order gave
    other outputs; returns parity.json's "ties" entry."""
    doc = {"ops": list(tk.ties), "outputs_differ": tk.tie_ordered is not None}
    if tk.tie_ordered is not None:
        tdir = d / "tie_ordered"
        tdir.mkdir()
        for j, t in enumerate(tk.tie_ordered):
            write_pb(tdir / f"output_{j}.pb", _as_graph_takes(t, ex.g_out[j] in real), ex.g_out[j])
        doc["dir"] = "tie_ordered"
        doc["order"] = "onnx: TopK and sort the lower index first among equal values, ArgMax/ArgMin " \
                       "the first, NonMaxSuppression by score then the lower index"
        tk.tie_ordered = None
    if tk.tie_note:
        doc["note"] = tk.tie_note
    return doc


_REAL = {onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT16}


def _real_views(mp):
    """Names of the graph's inputs and outputs of a real floating type: where
    the fixture's tensor is complex there, the dynamo exporter takes and
    gives its real view (a trailing dim of 2: real, imaginary)."""
    return {v.name for v in list(mp.graph.input) + list(mp.graph.output)
            if v.type.tensor_type.elem_type in _REAL}


def _as_graph_takes(t, real):
    """``t`` as the graph reads or writes it: a complex tensor where the
    graph's value is real becomes torch.view_as_real(t)."""
    return torch.view_as_real(t.resolve_conj()) if real and t.is_complex() else t


def _stored_calls(model, eager, k, fxk, example, tk, det, entry, mm, keep):
    """The call tree whose module outputs fixture k stores: the traced one
    for the traced fixture, the one its eager forward recorded, else (the map
    came from an autograd forward, or nothing was recorded) a second forward
    from the same state with the same seed, keeping the outputs of the calls
    in ``keep``; without autograd that forward also tells whether fixture k
    is deterministic (det[k] and the entry updated)."""
    if k == example:
        return mm.traced_calls
    if not mm.grad_mode and tk.calls is not None:
        return tk.calls
    rk = _mapping.Recorder(model, mm.style, keep=keep)
    outk, _ = eager.run(k, fxk, _eager.SEED + k, rk, grad=mm.grad_mode)
    if not mm.grad_mode:
        same = eager.same(tk.outputs, outk)
        det[k] = entry["deterministic"] = same if det[k] is None else det[k] and same
    return rk.calls


def _parity_doc(model, plan, snap, o, example, truths, det, shapes, ex, mm, ref64, fixtures_doc,
                stems):
    """parity.json's document (docs/capture.md) from what the capture learned;
    adequacy and source are added by the caller."""
    export_training = bool(plan.on)
    flat_inputs, in_names, g_in, g_out = plan.flat_inputs, plan.in_names, ex.g_in, ex.g_out
    warnings_doc = [_export.warning_record(w) for w in ex.caught]
    _mapping.name_warning_modules(model, warnings_doc)
    mapping = mm.mapping
    return {
        "schema": SCHEMA,
        "versions": _versions(),
        "onnxruntime": _ortenv.describe(),
        "exporter": ex.used,
        "exporter_requested": o.exporter,
        "exporter_fallback": ex.fallback or plan.why_legacy,
        "opset": ex.opset,
        "model": {"file": "model.onnx", "class": f"{type(model).__module__}.{type(model).__qualname__}",
                  "external_data": sorted(ex.external), "parameter_bytes": _model_bytes(model)},
        "export_args": dict(ex.export_args, input_names=g_in, output_names=g_out,
                            opset_requested=o.opset, dynamic=_json_axes(shapes.axes),
                            dynamic_axes_mode=o.dynamic_axes if isinstance(
                                o.dynamic_axes, (str, type(None))) else "dict",
                            trace_fixture=o.trace_fixture, traced_fixture=example,
                            traced_fixture_rule=_TRACE_RULES[plan.trace_rule],
                            dynamic_axes_ignored=shapes.ignored, large_model=shapes.large),
        "inputs": [{"name": g_in[j], "path": flat_inputs[0][i][0]} for j, i in enumerate(ex.feed)],
        "pruned_inputs": [{"name": n, "path": flat_inputs[0][in_names.index(n)][0],
                           "note": "unused by the graph: the exporter dropped it"} for n in ex.pruned],
        "outputs": [{"name": g_out[j], "path": p} for j, (p, _, _) in enumerate(shapes.first_flat)],
        "shape_risks": shapes.risks,
        "training": {"any": export_training, "modules_in_training": plan.on,
                     "export_mode": "PRESERVE" if export_training and ex.used == "legacy" else
                     ("as-is" if export_training else "EVAL"),
                     "eager_mode": "eval", "flags": plan.flags},
        "deterministic": all(d is not False for d in det),
        "determinism": _determinism_doc(det, truths),
        "state": _state_doc(snap, truths, flat_inputs[0], in_names, ex.changed, warnings_doc),
        "warnings": warnings_doc,
        "fixtures": fixtures_doc,
        "module_map": {c.path if c.call_no == 0 else f"{c.path}#{c.call_no}": mapping.value[c.index]
                       for c in mapping.calls[1:] if c.index in mapping.value},
        "mapping": mm.summary,
        "module_calls": mapping.entries(mm.leaf_paths),
        "intermediates": {"enabled": bool(plan.store_int), "dir": "intermediates",
                          "index": "intermediates/index.json", "values": len(stems),
                          "forward_grad_enabled": mm.grad_mode,
                          "policy": _bounded.policy_doc(plan.policy_int),
                          "fixtures_stored": sorted(plan.store_int)},
        "eager_vs_trace": {"same_modules_called": mm.path_note is None, "note": mm.path_note},
        "noise": ref64.doc(),
    }


def _export_model(model, plan, snap, example, axes, out_names, o, tmp, large):
    """torch.onnx.export of the traced fixture (its own copy, from the
    snapshot) into tmp/model.onnx, with every warning recorded; the state the
    export's trace changed is recorded and put back.  Under exporter "auto" a
    failed dynamo export falls back to legacy (``fallback`` says why); where
    the fallback fails too, the ExportError gives both reasons, dynamo's
    first (the one a user of torch 2 fixes)."""
    fxs, flags, key_order, in_names, which = plan.fxs, plan.flags, plan.key_order, plan.in_names, plan.which
    onnx_path = tmp / "model.onnx"
    plan.progress.stage(f"torch.onnx.export ({which}) of fixture {example}")
    caught, fallback, used, export_args, value_scopes = [], None, which, {}, {}
    dynamo_error = ""
    fx = _state.copy_fixture(fxs[example])
    with _modes(model, flags, eval_all=False), torch.random.fork_rng(devices=[]):
        try:
            with _export.recording_warnings(caught):
                if which == "dynamo":
                    try:
                        flat_dims = {j: axes[n] for j, n in enumerate(in_names) if n in axes}
                        _warn_size_one(plan, example, flat_dims)
                        export_args, value_scopes = _export.export_dynamo(
                            model, fx.args, {k: fx.kwargs[k] for k in key_order}, onnx_path,
                            input_names=in_names, output_names=out_names, flat_dims=flat_dims,
                            opset=o.opset, large=large)
                    except Exception as e:
                        if o.exporter != "auto":
                            raise
                        dynamo_error = f"{type(e).__name__}: {e}"
                        fallback = f"dynamo export failed ({dynamo_error}); used legacy"
                        used = "legacy"
                        for p in tmp.iterdir():
                            shutil.rmtree(p) if p.is_dir() else p.unlink()
                        snap.restore()
                        fx = _state.copy_fixture(fxs[example])
                if used == "legacy":
                    export_args = _export.export_legacy(
                        model, fx.args, {k: fx.kwargs[k] for k in key_order}, onnx_path,
                        input_names=in_names, output_names=out_names, dynamic_axes=axes,
                        opset=o.opset, training=bool(plan.on))
        except CaptureError:
            raise
        except Exception as e:
            if fallback is not None:  # both failed: the dynamo reason is the one the user can act on first
                raise ExportError(f"torch.onnx.export failed under both exporters: dynamo "
                                  f"({dynamo_error}), then the legacy fallback ({type(e).__name__}: "
                                  f"{e})") from e
            raise ExportError(f"torch.onnx.export ({used}) failed: {type(e).__name__}: {e}") from e
        finally:
            changed = snap.changes()
            snap.restore()
    if fallback is not None or plan.why_legacy:  # said on stderr, not only in parity.json
        _export.warn_fallback(fallback or plan.why_legacy)
    return _Plan(caught=caught, fallback=fallback, used=used, export_args=export_args,
                 value_scopes=value_scopes, changed=changed)


def _warn_size_one(plan, example, flat_dims):
    """torch.export specializes a dim whose example size is 1 (its 0/1
    rule): a dynamic dim of size 1 in the traced fixture may become a
    constant of the graph.  Said as a warning (recorded with the export's)."""
    flat = plan.flat_inputs[example]
    ones = [f"{plan.in_names[j]} dim {d}" for j, dims in sorted(flat_dims.items()) for d in sorted(dims)
            if flat[j][1].shape[d] == 1]
    if ones:
        warnings.warn(f"the traced fixture {example} has size 1 in the dynamic dim(s) {', '.join(ones)}: "
                      "torch.export specializes a dim of size 1, so the graph may hold it as a constant; "
                      "trace a fixture with sizes >= 2 there (trace_fixture=K, or \"auto\")",
                      UserWarning, stacklevel=2)


def _determinism_doc(det, truths):
    """How the eager truth reproduces: 'nondeterministic' when a rerun from
    the restored state differs, else 'state-drift' when a forward from the
    state an earlier forward left differs, else 'deterministic'."""
    nondet = [k for k, d in enumerate(det) if d is False]
    drift = [k for k, t in enumerate(truths) if t.drift]
    verdict = "nondeterministic" if nondet else ("state-drift" if drift else "deterministic")
    return {"verdict": verdict, "nondeterministic_fixtures": nondet, "state_drift_fixtures": drift,
            "rerun_fixtures": [k for k, d in enumerate(det) if d is not None],
            "rerun": f"the first {_eager.RERUN_PER_GROUP} fixture(s) of each shape group again from the "
                     "restored state, with another RNG seed"}


_REMOVED_MUTATION = re.compile(r"Removing mutation from node (\S+) on block input: '([^']*)'")


def _state_doc(snap, truths, flat0, in_names, export_changed, warnings_doc):
    """parity.json "state": what the forward wrote (inputs, parameters,
    buffers, attributes) over the fixtures, what the export's trace changed,
    what the exporter froze (its "Removing mutation" warnings)."""
    written, changed = {}, {}
    for k, t in enumerate(truths):
        for n in t.written:
            written.setdefault(n, []).append(k)
        for c in t.changed:
            changed.setdefault((c["name"], c["kind"], c["how"]), []).append(k)
    paths = {n: p for n, (p, _) in zip(in_names, flat0)}
    kinds = {_state_name(s): s[3] for s in snap.tensors}
    frozen, seen = [], set()
    for i, w in enumerate(warnings_doc):
        m = _REMOVED_MUTATION.search(w["message"])
        if m and (m.group(1), m.group(2)) not in seen:
            seen.add((m.group(1), m.group(2)))
            frozen.append({"name": m.group(2), "op": m.group(1), "kind": kinds.get(m.group(2), "input"),
                           "warning": i})
    return {
        "restored": True,
        "snapshot": dict(snap.counts(), not_copied=snap.skipped),
        "inputs_written": [{"name": n, "path": paths[n], "fixtures": ks} for n, ks in written.items()],
        "changed_by_forward": [{"name": n, "kind": kind, "how": how, "fixtures": ks}
                               for (n, kind, how), ks in changed.items()],
        "changed_by_export": export_changed,
        "frozen_by_export": frozen,
        "state_drift": any(t.drift for t in truths),
    }


def _state_name(entry):
    _, path, name, _, _, _ = entry
    return f"{path}.{name}" if path else name


def _json_axes(axes):
    return {n: {str(d): a for d, a in sorted(dims.items())} for n, dims in axes.items()}


def _reference_fixture(ref64, d, k, fx, eager_k, g_out, pairs, grad, index_files):
    """The float64 pass on fixture ``k`` when it is covered: writes
    ``reference64/output_J.pb`` (floating outputs) and the fixture's document,
    and returns {(module path, call number): noise_stats} of the float32
    calls ``pairs`` holds ({call index: Call}, see _r64.Pass.run) for the
    intermediates' index (None when not covered or when the pass failed; a
    failure removes what earlier fixtures wrote, the reference is then off
    for the whole bundle)."""
    was_active = ref64.active
    got = ref64.run(k, fx, lambda m, f: _forward_plain(m, f, grad, _eager.SEED + k), pairs)
    if got is None:
        if was_active and not ref64.active:  # it failed here: undo what it wrote before
            _drop_reference(d.parent, index_files)
        return None
    outs64, noise64 = got
    if len(outs64) != len(eager_k):
        ref64.fail(f"the float64 forward returned {len(outs64)} output tensors on fixture {k}, the "
                   f"float32 one {len(eager_k)}")
        _drop_reference(d.parent, index_files)
        return None
    rdir = d / "reference64"
    rdir.mkdir()
    outputs = []
    for j, (t32, t64) in enumerate(zip(eager_k, outs64)):
        if _r64.counterpart(t32, t64):
            write_pb(rdir / f"output_{j}.pb", t64, g_out[j])
            outputs.append(dict({"name": g_out[j], "file": f"reference64/output_{j}.pb"},
                                **_r64.noise_stats(t32, t64, ref64.scratch)))
    ref64.fixtures.append({"fixture": k, "dir": d.name, "outputs": outputs})
    return noise64


def _drop_reference(root, index_files):
    """Undo what the float64 pass wrote: reference64/ folders and the
    intermediates' "noise" keys."""
    for rdir in root.glob("test_data_set_*/reference64"):
        shutil.rmtree(rdir, ignore_errors=True)
    for path in index_files:
        idx = json.loads(path.read_text())
        for e in idx["entries"]:
            e.pop("noise", None)
        _json_dump(path, idx)
    index_files.clear()


def _forward_plain(model, fx, grad, seed):
    """A forward like the eager truth's (no_grad unless ``grad``, seeded),
    letting any exception through."""
    with _eager.seeded(seed), (torch.enable_grad() if grad else torch.no_grad()):
        return model(*fx.args, **fx.kwargs)


def _write_intermediates(d, k, mapping, calls, stems, noise64=None):
    idir = d / "intermediates"
    idir.mkdir()
    entries = []
    claim = {}
    for i, v in mapping.value.items():
        claim.setdefault(v, []).append(i)
    for v, primary in mapping.primary.items():
        t = calls[primary].output
        if t is None:
            continue
        stem = stems[v]
        write_pb(idir / f"{stem}.pb", t, v)
        members = sorted(claim.get(v, []))
        e = {"file": f"{stem}.pb", "value": v, "module": calls[primary].path,
             "call": calls[primary].call_no,
             "modules": [{"module": calls[i].path, "call": calls[i].call_no, "kind": mapping.kind[i]}
                         for i in members],
             "dtype": dtype_name(t), "shape": list(t.shape)}
        noise = noise64.get((calls[primary].path, calls[primary].call_no)) if noise64 is not None else None
        if noise is not None:
            e["noise"] = noise
        entries.append(e)
    entries.sort(key=lambda e: e["file"])
    _json_dump(idir / "index.json", {"schema": "onnxparity.intermediates/1", "fixture": k,
                                      "entries": entries})
    return len(entries)


# --------------------------------------------------------------------------- submodules

def export_submodules(model: torch.nn.Module, fixtures: Any, out_dir: Union[str, "os.PathLike[str]"],
                      names: Union[str, Sequence[str]], *, options: Optional[CaptureOptions] = None,
                      **overrides: Any) -> Dict[str, Any]:
    """Export each named submodule (``'backbone'``, ``'head'``, dotted paths)
    alone, as its own bundle ``out_dir/<name>/``, fed with the activations it
    received during the full model's forward on ``fixtures`` (one fixture per
    call).  The options are capture()'s: ``options`` and/or keywords (which
    override it).  Writes ``out_dir/submodules.json``; returns it parsed.
    All or nothing: on any error no out_dir is left."""
    if not isinstance(model, torch.nn.Module):
        raise CaptureError(f"model must be a torch.nn.Module, not {type(model).__name__}")
    if isinstance(names, str):
        names = [names]
    names = list(names)
    if not names:
        raise CaptureError("names: no submodule named")
    unknown = [n for n in names if not isinstance(n, str) or not n]
    if unknown:
        raise CaptureError(f"names must be non-empty module paths, got {unknown!r}")
    subs = {}
    known = dict(model.named_modules())
    for n in names:
        if n not in known:
            children = ", ".join(k for k, _ in model.named_children())
            raise CaptureError(f"no submodule {n!r} (children: {children})")
        subs[n] = known[n]
    bad = set(overrides) - _OPTION_NAMES
    if bad:
        raise TypeError(f"export_submodules: unknown option(s) {', '.join(sorted(bad))}")
    opts = dataclasses.replace(options if options is not None else CaptureOptions(), **overrides)

    fxs, form = _fixtures.normalize(fixtures, _fixtures.forward_params(model))
    _fixtures.check_consistent(fxs)
    flags, on = _training_modules(model)
    if on and not opts.allow_training:
        _refuse_training(model, on)

    received: Dict[str, List[Any]] = {n: [] for n in names}
    saved: Dict[str, Any] = {}

    def wrap(n, m):
        inner = m.forward

        def forward(*args, **kwargs):
            received[n].append(_detached(n, args, kwargs))
            return inner(*args, **kwargs)
        saved[n] = m.__dict__.get("forward")
        m.forward = forward

    # each forward on its own copy of the fixture, from the model as given
    snap = _state.Snapshot(model)
    changed: Dict[str, Dict[str, Any]] = {}
    try:
        with _modes(model, flags, eval_all=bool(on)):
            try:
                for n, m in subs.items():
                    wrap(n, m)
                for k, fx in enumerate(fxs):
                    try:
                        _eager.forward(model, _state.copy_fixture(fx), k, form, seed=_eager.SEED + k)
                        for c in snap.changes():
                            changed.setdefault(c["name"], dict(c, fixtures=[]))["fixtures"].append(k)
                    finally:
                        snap.restore()
            finally:
                for n, m in subs.items():
                    if n in saved:
                        if saved[n] is None:
                            del m.forward
                        else:
                            m.forward = saved[n]
        return _submodule_bundles(model, subs, names, received, fxs, opts, out_dir, list(changed.values()))
    finally:
        snap.restore()


def _submodule_bundles(model, subs, names, received, fxs, opts, out_dir, changed):
    """One bundle per submodule from the activations it received, and
    submodules.json (``changed``: what the parent's forwards changed in its
    state, restored after each)."""
    for n in names:
        if not received[n]:
            raise CaptureError(f"submodule {n!r} was never called during the forward")

    taken = set()
    with Staging(out_dir) as stage:
        listing = []
        for n in names:
            folder = safe_stem(n, taken)
            # a {} after a positional dict, as torch.onnx.export reads one (see _fixtures)
            sub_fixtures = [args + ((kwargs,) if kwargs else ({},) if args and isinstance(args[-1], dict)
                                    else ()) for args, kwargs in received[n]]
            sub_doc = _capture(subs[n], sub_fixtures, stage.tmp / folder, opts, source={
                "kind": "submodule", "parent_class": f"{type(model).__module__}.{type(model).__qualname__}",
                "module": n, "calls": len(received[n]), "parent_fixtures": len(fxs)})
            listing.append({"module": n, "dir": folder, "type": type(subs[n]).__name__,
                            "fixtures": len(sub_fixtures), "exporter": sub_doc["exporter"],
                            "mapping_rate": sub_doc["mapping"]["rate"]})
        doc = {"schema": "onnxparity.submodules/1", "versions": _versions(),
               "model_class": f"{type(model).__module__}.{type(model).__qualname__}",
               "fixtures": len(fxs), "submodules": listing,
               "parent_state": {"restored": True, "changed_by_forward": changed}}
        _json_dump(stage.tmp / "submodules.json", doc)
        stage.commit()
    return doc


def _detached(name, args, kwargs):
    def one(x, where):
        if isinstance(x, torch.Tensor):
            return x.detach().clone()
        if isinstance(x, (tuple, list)) and x:
            return tuple(one(v, f"{where}[{i}]") for i, v in enumerate(x))
        if isinstance(x, dict) and x:
            return {k: one(v, f"{where}[{k!r}]") for k, v in x.items()}
        if isinstance(x, _fixtures.CONSTANTS):  # passed as it came, as capture() takes one
            return x
        raise FixtureError(f"submodule {name!r} received {type(x).__name__} as {where}: only tensors "
                           "(or tuples, lists and dicts of tensors, and Python numbers, strings or "
                           "None beside them) can become ONNX inputs of a submodule bundle")
    return (tuple(one(a, f"argument {i}") for i, a in enumerate(args)),
            {k: one(v, f"keyword argument {k!r}") for k, v in kwargs.items()})
