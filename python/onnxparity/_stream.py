"""capture_stream(): a bundle from an iterable of fixtures (a DataLoader, a
generator) too long to hold in memory, with a cap.

The stream is cut in two:
  * the head, the first ``head`` items, goes through capture() as a list:
    the export is traced on it, and the bounded extras (the intermediates of
    the first K fixtures of each shape group, the float64 reference, the
    determinism rerun) cover it;
  * the tail, every later item up to ``limit``, gets the float32 eager truth
    only: one forward per item from the model's snapshotted state, its
    inputs and outputs written as test_data_set_K/ and the item dropped
    before the next is drawn.
So memory holds the head plus one batch, never the set.  The adequacy
report and parity.json are written over every fixture at the end, and the
bundle appears atomically (a staging folder renamed into place).  Layout
and options: docs/capture.md ("Streamed capture")."""
import importlib
import json
import os
import shutil
import time
from typing import Any, Callable, Dict, Iterable, List, Optional, Union

import torch

from . import _adequacy, _bounded, _eager, _fixtures, _state
from . import _reference64 as _r64
from ._staging import Staging
from ._tensors import dtype_name, write_pb
from .errors import CaptureError, FixtureError, OutputError

# the capture module (the package's name `capture` is the function): its steps
# are looked up at call time, so a wrapper put on them applies here too
_cap = importlib.import_module(__package__ + ".capture")

HEAD_DEFAULT = 4

_OPTIONS = dict(input_names=None, output_names=None, dynamic_axes="auto", opset=None, exporter="auto",
                allow_training=False, large_model=False, trace_fixture=None, progress=None)


def capture_stream(model: torch.nn.Module, batches: Iterable[Any],
                   out_dir: Union[str, "os.PathLike[str]"], *, limit: Optional[int] = None,
                   head: int = HEAD_DEFAULT, fixture_of: Optional[Callable[[Any], Any]] = None,
                   labels_of: Optional[Callable[[Any], Any]] = None,
                   intermediates: Union[bool, int, str] = _bounded.DEFAULT_PER_GROUP,
                   reference64: Union[int, bool, str, None] = _r64.DEFAULT_PER_GROUP,
                   **options: Any) -> Dict[str, Any]:
    """Capture ``model`` over the fixtures that ``batches`` yields (any
    iterable: each item a fixture as capture() takes one) into ``out_dir``;
    returns the parsed parity.json.

    limit: at most this many fixtures are drawn (None: until the iterable
    ends).  head: how many of them go through the full capture (the traced
    fixture, dynamic axes "auto", intermediates and reference64 look at
    these only).  fixture_of(item) -> the fixture, labels_of(item) -> the
    item's true labels (a 1-D tensor or sequence, for the adequacy report);
    for a DataLoader of (x, y): fixture_of=lambda b: b[0],
    labels_of=lambda b: b[1].  intermediates / reference64: as capture()'s,
    over the head; the tail never stores intermediates.  Other ``options``
    are capture()'s."""
    bad = set(options) - set(_OPTIONS)
    if bad:
        raise TypeError(f"capture_stream: unknown option(s) {', '.join(sorted(bad))}")
    if not isinstance(head, int) or isinstance(head, bool) or head < 1:
        raise CaptureError(f"head must be a count >= 1, not {head!r}")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        raise CaptureError(f"limit must be a count >= 1 or None, not {limit!r}")
    o = dict(_OPTIONS, **options, intermediates=intermediates, reference64=reference64)
    try:
        items = iter(batches)
    except TypeError:
        raise FixtureError(f"batches: {type(batches).__name__} is not iterable") from None
    split = _Split(fixture_of, labels_of)
    head_fx: List[Any] = []
    while len(head_fx) < min(head, limit or head):
        item = next(items, _END)
        if item is _END:
            break
        head_fx.append(split(item, len(head_fx)))
    item = None  # the head lives in head_fx only
    if not head_fx:
        raise FixtureError("batches: the iterable yielded no fixtures")
    started = time.perf_counter()
    with Staging(out_dir) as stage:
        doc = _capture_head(model, head_fx, stage.tmp, o)
        tail = _Tail(model, doc, head_fx[0], o)
        k = len(head_fx)
        del head_fx
        while limit is None or k < limit:
            item = next(items, _END)
            if item is _END:
                break
            doc["fixtures"].append(tail.write(stage.tmp, k, split(item, k)))
            k += 1
            del item
        tail.close()
        doc["stream"] = {"head": min(head, k), "tail": k - min(head, k), "limit": limit,
                         "seconds": round(time.perf_counter() - started, 3),
                         "tail_passes": "the float32 eager truth only (no determinism rerun, no float64 "
                                        "reference, no intermediates)"}
        doc["adequacy"] = _adequacy.report(stage.tmp, doc, split.labels or None)
        (stage.tmp / "parity.json").write_text(json.dumps(doc, indent=1) + "\n")
        stage.commit()
    _bounded.print_size(out_dir, doc)
    return doc


_END = object()


class _Split:
    """item -> fixture, keeping the labels (small: one int per sample)."""

    def __init__(self, fixture_of, labels_of):
        self.fixture_of, self.labels_of = fixture_of, labels_of
        self.labels = {}

    def __call__(self, item, k):
        if self.labels_of is not None:
            y = self.labels_of(item)
            self.labels[k] = [int(v) for v in (y.reshape(-1).tolist() if isinstance(y, torch.Tensor) else y)]
        return self.fixture_of(item) if self.fixture_of is not None else item


def _capture_head(model, head_fx, root, o):
    """capture() of the head into root/head, its files moved up into root."""
    sub = root / "head"
    doc = _cap._capture(model, head_fx, sub, _cap.CaptureOptions(**o), source=None)
    for p in sub.iterdir():
        shutil.move(str(p), str(root / p.name))
    sub.rmdir()
    return doc


class _Tail:
    """The float32 eager truth of the items after the head, one at a time."""

    def __init__(self, model, doc, first, o):
        self.model = model
        params = _fixtures.forward_params(model)
        head, self.form = _fixtures.normalize(first, params)
        self.params = params
        self.structure = _fixtures.structure(head[0])
        self.key_order = _fixtures.keyword_order(params, head[0].kwargs)
        self.in_paths = [i["path"] for i in doc["inputs"]]
        self.g_in = doc["export_args"]["input_names"]
        self.g_out = doc["export_args"]["output_names"]
        f0 = doc["fixtures"][0]
        self.out_sig = [(x["dtype"], len(x["shape"])) for x in f0["outputs"]]
        self.stored = bool(doc["intermediates"]["fixtures_stored"])
        self.policy = _bounded.parse_policy(o["intermediates"])
        self.flags, on = _cap._training_modules(model)
        self.eval_all = bool(on)
        self.snap = _state.Snapshot(model)
        in_names = list(o["input_names"]) if o["input_names"] else \
            _fixtures.default_input_names(params, head[0], self.key_order)
        self.eager = _eager.Eager(model, self.snap, "sequence", self.key_order, in_names)

    def write(self, root, k, item):
        fxs, _ = _fixtures.normalize([item], self.params)
        fx = fxs[0]
        if _fixtures.structure(fx) != self.structure:
            raise FixtureError(f"fixture {k} differs from fixture 0 in structure (number of inputs, "
                               "nesting, keyword names, dtype or rank); shapes may differ between "
                               "fixtures, nothing else may")
        by_path = dict(_fixtures.flatten_inputs(fx, self.key_order))
        with _cap._modes(self.model, self.flags, eval_all=self.eval_all):
            raw, _ = self.eager.run(k, fx, _eager.SEED + k)
        flat = _eager.flat_outputs(raw, k)
        sig = [(dtype_name(t), t.dim()) for _, _, t in flat]
        if sig != self.out_sig:
            raise OutputError(f"fixture {k}: the outputs differ from fixture 0's in number, dtype or rank: "
                              f"{sig} vs {self.out_sig}")
        d = root / f"test_data_set_{k}"
        d.mkdir()
        for j, (name, path) in enumerate(zip(self.g_in, self.in_paths)):
            write_pb(d / f"input_{j}.pb", by_path[path], name)
        for j, (_, _, t) in enumerate(flat):
            write_pb(d / f"output_{j}.pb", t, self.g_out[j])
        entry = {"dir": d.name, "deterministic": None, "determinism_checked": False,
                 "inputs": [{"name": n, "dtype": dtype_name(by_path[p]), "shape": list(by_path[p].shape)}
                            for n, p in zip(self.g_in, self.in_paths)],
                 "outputs": [{"name": self.g_out[j], "dtype": dtype_name(t), "shape": list(t.shape)}
                             for j, (_, _, t) in enumerate(flat)],
                 "streamed": True}
        if self.stored:
            entry["intermediates"] = 0
            entry["intermediates_skipped"] = ("a streamed fixture after the head: "
                                              + _bounded.skipped_note(self.policy))
        return entry

    def close(self):
        self.snap.restore()
