"""The eager truth, exactly: every forward of the capture runs on its own
copy of the fixture's tensors, from the model's snapshotted state, and the
state is put back after it.  So the recorded inputs are the values the
forward was given, the recorded outputs belong to them, a forward that
writes to its input or changes the model's state is seen (and named), and
the determinism rerun measures the forward, not what an earlier forward
left behind.

Per fixture K (``Eager.truth``):
  1. the truth: one forward from the snapshot, seed _SEED + K, with forward
     hooks recording every module call's output (the intermediates come
     from this same forward where memory allows, see ``Budget``);
  2. what it wrote: the inputs whose copy changed, the state that changed;
  3. when the state changed: a forward from the changed state (seed
     _SEED + K again); other outputs = state drift; then the state is put
     back;
  4. the determinism rerun, on a bounded subset only (the first
     RERUN_PER_GROUP fixtures of each shape group, ``rerun_fixtures``): from
     the snapshot, seed _SEED_RERUN + K (another seed, so a forward that
     draws random numbers shows), compared bit for bit with the truth;
  5. only when a tie-sensitive op of the truth (torch.topk, sort, max along
     a dim, torchvision's nms: _ties) chose among exact ties: a forward from
     the snapshot, seed _SEED + K, with those ops breaking ties as ONNX
     Runtime does; its outputs are the fixture's tie-ordered reference when
     they differ from the truth's (docs/formats.md).
So a fixture outside that subset whose forward leaves the state alone and
meets no exact tie costs one eager forward, the truth.
"""
import contextlib

import torch

from . import _fixtures, _state, _ties
from ._tensors import bitwise_equal
from .errors import ForwardError, OutputError

# the RNG seed of fixture K's eager passes (the truth, its intermediates and
# the float64 reference) and of its determinism rerun
SEED, SEED_RERUN = 0x6f6e7000, 0x6f6e7800

# module outputs kept in memory from the truth forwards until the export's
# mapping says which are intermediates; a fixture beyond it records its
# intermediates in a second forward (from the same state, with the same seed)
KEEP_BYTES = 1024 ** 3

# the determinism rerun covers the first fixtures of each shape group
RERUN_PER_GROUP = 1


def rerun_fixtures(flat_inputs, per_group=None):
    """Indices of the fixtures the determinism rerun covers: the first
    ``per_group`` (RERUN_PER_GROUP) of each group of fixtures whose
    flattened input shapes are all equal, in fixture order."""
    per_group = RERUN_PER_GROUP if per_group is None else per_group
    seen, out = {}, []
    for k, flat in enumerate(flat_inputs):
        key = tuple(tuple(t.shape) for _, t in flat)
        if seen.get(key, 0) < per_group:
            seen[key] = seen.get(key, 0) + 1
            out.append(k)
    return out


@contextlib.contextmanager
def seeded(seed):
    """Run with the torch CPU RNG seeded to ``seed`` (None: as it is); the
    caller's RNG state is put back afterwards."""
    if seed is None:
        yield
        return
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield


def forward(model, fx, k, form, grad=False, seed=None):
    """model(*fx.args, **fx.kwargs) under no_grad (or with autograd), seeded;
    an exception becomes a ForwardError naming the fixture."""
    try:
        with seeded(seed), (torch.enable_grad() if grad else torch.no_grad()):
            return model(*fx.args, **fx.kwargs)
    except Exception as e:
        hint = ""
        if isinstance(e, TypeError) and "argument" in str(e):
            hint = (" (each fixture is the model's input: a top-level list is a sequence of fixtures, a "
                    "tuple is one fixture with several inputs; for a DataLoader of (input, label) pairs "
                    "pass (x for x, _ in loader))") if form == "sequence" else ""
        raise ForwardError(f"fixture {k}: the forward raised {type(e).__name__}: {e}{hint}") from e


def flat_outputs(out, k):
    try:
        return _fixtures.flatten_outputs(out)
    except OutputError as e:
        raise OutputError(f"fixture {k}: {e}") from None


class Budget:
    """Bytes of module outputs the truth forwards may keep."""

    def __init__(self, limit=None):
        self.left = KEEP_BYTES if limit is None else limit

    def take(self, calls):
        need = sum(c.output.numel() * c.output.element_size() for c in calls if c.output is not None)
        if need > self.left:
            return False
        self.left -= need
        return True


class Truth:
    """Fixture K's eager truth: ``raw`` (what forward returned) and ``flat``
    (flatten_outputs of it), ``outputs`` (clones, in graph-output order),
    ``calls`` (the Recorder's calls, or None: recorded later), ``fx`` (the
    copy it ran on), ``written`` (names of inputs it wrote), ``changed``
    (state changes), ``drift`` (None: nothing changed; else whether a forward
    from the changed state gives other outputs), ``deterministic`` (None:
    not rerun), ``ties`` (the tie-sensitive ops that chose among exact
    ties, [] when none), ``tie_ordered`` (step 5's outputs in graph-output
    order when they differ from ``outputs``, else None), ``tie_note``
    (why there is no tie-ordered reference though ties were seen, or
    None)."""

    __slots__ = ("raw", "flat", "outputs", "calls", "fx", "written", "changed", "drift",
                 "deterministic", "ties", "tie_ordered", "tie_note")


class Eager:
    """The forwards of one capture over ``model`` with snapshot ``snap``."""

    def __init__(self, model, snap, form, key_order, in_names, legacy=False):
        self.model = model
        self.snap = snap
        self.form = form
        self.key_order = key_order
        self.in_names = in_names
        self.legacy = legacy  # _fixtures.flatten_inputs as the legacy exporter flattens

    def run(self, k, fx, seed, recorder=None, grad=False, restore=True):
        """One forward of fixture ``k`` on a copy of ``fx``: (raw output, the
        copy).  The state is put back afterwards unless ``restore`` is
        False."""
        copy = _state.copy_fixture(fx)
        try:
            if recorder is None:
                out = forward(self.model, copy, k, self.form, grad=grad, seed=seed)
            else:
                with recorder:
                    out = forward(self.model, copy, k, self.form, grad=grad, seed=seed)
        finally:
            if restore:
                self.snap.restore()
        return out, copy

    def truth(self, k, fx, flat_original, recorder=None, budget=None, rerun=True):
        """Steps 1-4 of the module comment for fixture ``k`` (step 4 when
        ``rerun``)."""
        t = Truth()
        watch = _ties.Watch()
        with _ties.watch(watch):
            t.raw, t.fx = self.run(k, fx, SEED + k, recorder, restore=False)
        t.flat = flat_outputs(t.raw, k)
        t.outputs = [x.detach().clone() for _, _, x in t.flat]
        t.calls = recorder.calls if recorder is not None else None
        if t.calls is not None and budget is not None and not budget.take(t.calls):
            for c in t.calls:
                c.output = None
            t.calls = None
        t.written = _state.written(_fixtures.flatten_inputs(t.fx, self.key_order, self.legacy),
                                   flat_original,
                                   self.in_names)
        t.changed = self.snap.changes()
        t.drift = None
        if t.changed:
            again, _ = self.run(k, fx, SEED + k, restore=False)
            t.drift = not self.same(t.outputs, again)
            self.snap.restore()
        t.deterministic = None
        if rerun:
            again, _ = self.run(k, fx, SEED_RERUN + k)
            t.deterministic = self.same(t.outputs, again)
        t.ties, t.tie_ordered, t.tie_note = watch.seen, None, None
        if watch.seen:
            self.tie_ordered(k, fx, t)
        return t

    def tie_ordered(self, k, fx, t):
        """Step 5 of the module comment for fixture ``k`` into ``t``."""
        try:
            with _ties.onnx_order():
                again, _ = self.run(k, fx, SEED + k)
            flat = _fixtures.flatten_outputs(again)
        except (ForwardError, OutputError) as e:
            t.tie_note = f"the forward with ONNX's tie order failed: {e}"
            return
        if len(flat) != len(t.outputs) or any(a.dtype != x.dtype for a, (_, _, x) in zip(t.outputs, flat)):
            t.tie_note = "the forward with ONNX's tie order returned other outputs in number or dtype"
        elif not self.same_flat(t.outputs, flat):
            t.tie_ordered = [x.detach().clone() for _, _, x in flat]

    @staticmethod
    def same(outputs, raw):
        """The clones ``outputs`` and the output ``raw`` of another forward are
        bit-identical (same structure too)."""
        try:
            flat = _fixtures.flatten_outputs(raw)
        except OutputError:
            return False
        return Eager.same_flat(outputs, flat)

    @staticmethod
    def same_flat(outputs, flat):
        """``same`` on ``flat``, flatten_outputs of the other forward's output."""
        return len(flat) == len(outputs) and all(bitwise_equal(a, x) for a, (_, _, x) in zip(outputs, flat))
