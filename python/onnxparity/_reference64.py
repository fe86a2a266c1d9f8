"""The float64 reference: a second eager pass of a deep copy of the model in
float64, on a bounded subset of the fixtures, and float32 eager's deviation
from it (the float noise the judge holds ONNX Runtime's error against).

Which fixtures: the first K of each shape group (fixtures whose flattened
input shapes are all equal), K from the ``reference64`` option.  The pass
runs like the float32 truth (eval, the same grad mode, the same RNG seed per
fixture) with forward hooks on the same modules, so an intermediate pairs
with its float64 counterpart by module path and call number.  The layout and
the statistics are documented in docs/capture.md ("The float64 reference").
"""
import copy
import math
import time

import torch

from . import _fixtures, _mapping, _state
from .errors import CaptureError

_clock = time.perf_counter

_FLOATING = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
DEFAULT_PER_GROUP = 2


def parse_count_policy(value, what, true_means, off_words, words_hint, kinds_hint):
    """An option that says which fixtures of each shape group get some extra
    work -> ('all', None) or ('per_shape_group', K).  True means
    ``true_means``; False / None / 0 / a word of ``off_words``: none; 'all':
    every fixture; an int K (or its decimal string): the first K of each
    group.  ``words_hint`` / ``kinds_hint`` end the error messages (a bad
    string, a bad type)."""
    if value is True:
        return true_means
    if value is False or value is None:
        return ("per_shape_group", 0)
    if isinstance(value, str):
        v = value.strip().lower()
        if v == "all":
            return ("all", None)
        if v in off_words:
            return ("per_shape_group", 0)
        try:
            value = int(v, 10)
        except ValueError:
            raise CaptureError(f"{what} must be {words_hint}, not {value!r}") from None
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise CaptureError(f"{what} must be >= 0, not {value}")
        return ("per_shape_group", value)
    raise CaptureError(f"{what} must be {kinds_hint}, not {value!r}")


def parse_policy(value):
    """``reference64`` option -> ('per_shape_group', K) or ('all', None).
    True is the default K, False/0/None/'off' is off."""
    return parse_count_policy(value, "reference64", ("per_shape_group", DEFAULT_PER_GROUP),
                              ("off",), "a count, 'all' or 'off'", "a count, True, False or 'all'")


def policy_doc(policy):
    kind, k = policy
    return {"all": True} if kind == "all" else {"per_shape_group": k}


def covered_fixtures(policy, flat_inputs):
    """Fixture indices the float64 pass runs on: the first K of each shape
    group, in fixture order (every fixture for 'all')."""
    kind, k = policy
    if kind == "all":
        return list(range(len(flat_inputs)))
    seen, out = {}, []
    for i, flat in enumerate(flat_inputs):
        key = tuple(tuple(t.shape) for _, t in flat)
        if seen.get(key, 0) < k:
            seen[key] = seen.get(key, 0) + 1
            out.append(i)
    return out


def is_floating(t):
    return isinstance(t, torch.Tensor) and t.dtype in _FLOATING


def to_float64(x):
    """A fixture value with every floating tensor cast to float64 (others as
    they are), always a copy; nested tuples and dicts kept."""
    if isinstance(x, torch.Tensor):
        return x.detach().to(torch.float64, copy=True) if x.dtype in _FLOATING else x.detach().clone()
    if isinstance(x, tuple):
        return tuple(to_float64(v) for v in x)
    if isinstance(x, dict):
        return {k: to_float64(v) for k, v in x.items()}
    return x


def make_model64(model):
    """A deep copy of ``model`` in float64 and eval mode, or raises.  A
    model with 4-D floating weights (2-D convolutions) gets them in
    channels_last: torch's float64 convolutions on a CPU run faster on that
    layout (resnet18's float64 pass: 8 % under torch 1.13, 22 % under 2.9),
    and the values are the same up to float64 rounding.
    The floating parameters go into the copy already converted (the deep
    copy's memo holds their float64 versions), so no float32 copy of the
    weights is made and converted again; shared parameters stay shared
    (a subclass of Parameter is deep-copied and converted as it is).
    Returns (model, memory format name)."""
    params = [p for p in model.parameters() if p.is_floating_point()]
    layout = torch.channels_last if any(p.dim() == 4 for p in params) else None
    memo = {}
    for p in params:
        if type(p) is not torch.nn.Parameter:  # a subclass: deep-copied as it is, then converted
            continue
        fmt = layout if layout is not None and p.dim() == 4 else torch.preserve_format
        memo[id(p)] = torch.nn.Parameter(p.detach().to(torch.float64, memory_format=fmt, copy=True),
                                         requires_grad=p.requires_grad)
    m = copy.deepcopy(model, memo)
    m.double()  # the floating buffers (the parameters are float64 already)
    m.eval()
    if layout is not None:
        m.to(memory_format=layout)  # buffers and anything else 4-D
        return m, "channels_last"
    return m, "contiguous"


class Scratch:
    """Work memory the statistics reuse from one intermediate to the next: a
    fresh allocation of several MB faults its pages in, which cost more than
    the arithmetic (the capture computes the statistics of every mapped
    intermediate of every covered fixture).  One per float64 pass, dropped
    with it."""

    def __init__(self):
        self.buf = torch.empty(0, dtype=torch.float64)

    def take(self, n):
        """A float64 vector of ``n`` elements (values undefined)."""
        if self.buf.numel() < n:
            self.buf = torch.empty(n, dtype=torch.float64)
        return self.buf[:n]


def _memory_flat(t):
    """A 1-D view of ``t``'s elements in memory order, when they fill one
    block (contiguous, channels_last, any dense permutation), else None."""
    if t.is_contiguous():
        return t.view(-1)
    expect = 1
    for d in sorted(range(t.dim()), key=lambda d: t.stride(d)):
        if t.shape[d] == 1:
            continue
        if t.stride(d) != expect:
            return None
        expect *= t.shape[d]
    return t.as_strided((t.numel(),), (1,), t.storage_offset())


def noise_stats(e32, e64, scratch=None):
    """float32 eager's deviation from float64 eager, all in float64:
    dev = e32 - e64 over the elements where both are finite; max_abs, rms,
    q999 (99.9th percentile of |dev|, linear interpolation as numpy's
    quantile) over those; scale_max and scale_rms over the finite elements
    of e64; count = all elements, nonfinite = elements where either side is
    not finite.  All zero for an empty tensor.

    Computed in torch (the capture's hot loop runs it on every intermediate
    of a covered fixture) without copying either side: dev is written in
    e64's memory order (a channels_last float64 output stays as it is) into
    ``scratch`` (a Scratch, reused: see there), and every statistic is a
    sum, an extreme or an order statistic, so the order does not change it
    beyond the last bits of a sum.  The sums of squares need no |.|; in the
    common all-finite case no mask is built: both sums of squares are finite
    exactly when every element is (a NaN or an infinity makes its dot NaN
    or inf; an overflow to inf, |x| > 1e154, also takes the masked path,
    which gives the same inf).  q999 reads the two order statistics it
    interpolates from the largest 0.1 % (``_quantile_high``)."""
    a = e32.detach().cpu()
    b = e64.detach().cpu().to(torch.float64)
    count = int(a.numel())
    zero = {"max_abs": 0.0, "rms": 0.0, "q999": 0.0, "scale_max": 0.0, "scale_rms": 0.0,
            "count": count, "nonfinite": 0}
    if count == 0:
        return zero
    b_flat = _memory_flat(b)
    if b_flat is None:  # an overlapping or gapped view: its values, contiguous
        b = b.contiguous()
        b_flat = b.view(-1)
    a = a.reshape(b.shape)
    dev_flat = (scratch or Scratch()).take(count)
    # the scratch vector seen with b's strides: dev lands in b's memory order
    torch.sub(a, b, out=dev_flat.as_strided(b.shape, b.stride(), 0))
    dd, bb = float(torch.dot(dev_flat, dev_flat)), float(torch.dot(b_flat, b_flat))
    if not (math.isfinite(dd) and math.isfinite(bb)):
        return _noise_stats_masked(dev_flat.abs_(), b_flat, zero)
    dev_flat.abs_()
    lo, hi = torch.aminmax(b_flat)
    return dict(zero, max_abs=float(dev_flat.max()), rms=math.sqrt(dd / count),
                q999=_quantile_high(dev_flat, 0.999), scale_max=max(float(hi), -float(lo)),
                scale_rms=math.sqrt(bb / count))


def _noise_stats_masked(dev, b, zero):
    """noise_stats where some element is not finite (or a square overflows):
    |dev| over the elements where both sides are finite, the scale over
    b's finite elements."""
    count = zero["count"]
    both = torch.isfinite(dev)
    dev = dev[both]
    scale = b[torch.isfinite(b)].abs()
    out = dict(zero, nonfinite=count - int(dev.numel()))
    if dev.numel():
        out["max_abs"] = float(dev.max())
        out["rms"] = math.sqrt(float(torch.dot(dev, dev)) / dev.numel())
        out["q999"] = _quantile_high(dev, 0.999)
    if scale.numel():
        out["scale_max"] = float(scale.max())
        out["scale_rms"] = math.sqrt(float(torch.dot(scale, scale)) / scale.numel())
    return out


# _top reads long vectors in blocks of this many elements
_BLOCK = 32


def _quantile_high(v, q):
    """numpy.quantile(v, q) (method 'linear') of a non-empty 1-D float64
    tensor without NaN, for q near 1: the order statistics at
    floor(q (n-1)) and the one above it are the smallest two of the
    n - floor(q (n-1)) largest."""
    n = int(v.numel())
    pos = q * (n - 1)
    lo = int(math.floor(pos))
    top = _top(v, n - lo)
    a = float(top[-1])
    b = float(top[-2]) if n - lo >= 2 else a
    t = pos - lo
    # numpy's lerp: from below under one half, from above from one half on
    return a + (b - a) * t if t < 0.5 else b - (b - a) * (1 - t)


def _top(v, need):
    """The ``need`` largest values of 1-D ``v``, sorted, largest first.  A
    long vector goes by blocks of _BLOCK elements: with T the need-th
    largest block maximum, the need largest values are all >= T (the need
    largest block maxima are need elements >= T), so they lie in the blocks
    whose maximum is >= T, and a top-k over those blocks (and the tail that
    fills no block) is exact.  One pass over the vector, then top-ks over
    a few thousand values."""
    n = int(v.numel())
    full = n // _BLOCK
    if full < 4 * need:
        return torch.topk(v, need, largest=True, sorted=True).values
    blocks = v[:full * _BLOCK].view(full, _BLOCK)
    peak = blocks.amax(dim=1)
    t = torch.topk(peak, need, largest=True, sorted=True).values[-1]
    cand = torch.cat([blocks[peak >= t].reshape(-1), v[full * _BLOCK:]])
    return torch.topk(cand, need, largest=True, sorted=True).values


def counterpart(t32, t64):
    """Whether float64 tensor ``t64`` is the counterpart of eager tensor
    ``t32``: both floating, t64 in float64, the same shape."""
    return (is_floating(t32) and isinstance(t64, torch.Tensor) and t64.dtype == torch.float64
            and tuple(t32.shape) == tuple(t64.shape))


def one_line(e):
    msg = " ".join(str(e).split())
    if len(msg) > 400:
        msg = msg[:397] + "..."
    return f"{type(e).__name__}: {msg}" if msg else type(e).__name__


class Pass:
    """The float64 pass of one capture: the model's float64 copy, the covered
    fixtures, what was recorded, the time it took, and why it stopped (a
    failure turns the whole reference off: ``reason`` holds the exception)."""

    def __init__(self, model, policy, flat_inputs):
        self.policy = policy
        self.covered = covered_fixtures(policy, flat_inputs)
        self.model64 = None
        self.reason = None
        self.seconds = 0.0
        self.fixtures = []  # one document per covered fixture written
        self.snap = None    # a snapshot of model64 when the forward changes state
        self.memory_format, self.memory_note = None, None
        self.scratch = Scratch()
        if not self.covered:
            self.reason = "reference64 is off" if policy[1] == 0 else "no fixture covered"
            return
        t0 = _clock()
        try:
            self.model64, self.memory_format = make_model64(model)
        except Exception as e:  # any failure: the capture goes on without a reference
            self.fail(e, "copying the model to float64 failed")
        self.seconds += _clock() - t0

    def keep_state(self, stateful):
        """Before the first float64 forward: when the float32 forwards changed
        the model's state, snapshot the copy so that every covered fixture
        runs from the same state too (a stateless model needs no second copy)."""
        if stateful and self.active and self.snap is None:
            self.snap = _state.Snapshot(self.model64)

    @property
    def active(self):
        return self.model64 is not None

    def fail(self, e, what="the float64 forward raised"):
        self.reason = f"{what}: {one_line(e)}" if isinstance(e, BaseException) else str(e)
        self.model64 = None
        self.fixtures = []

    def run(self, k, fx, forward, pairs=None):
        """The float64 pass on fixture ``k`` (a Fixture) when it is covered:
        (flat outputs, {(module path, call number): noise_stats}), or None
        (not covered, or the pass failed: see ``reason``).
        ``forward(model, fx)`` runs the model like the float32 truth (grad
        mode, RNG seed).  ``pairs``: {call index: the float32 recording's
        Call} of the calls whose statistics are wanted (indices in call
        order, as the float32 recording's); each is computed in the float64
        forward's hook from the live output, so no float64 intermediate is
        kept.  A call whose path, call number, dtype or shape differ from
        its float32 counterpart has none."""
        if not self.active or k not in self.covered:
            return None
        pairs = pairs or {}
        t0 = _clock()
        try:
            try:
                return self._forward(fx, forward, pairs)
            except Exception as e:
                if self.memory_format != "channels_last":
                    raise
                # a forward that needs contiguous activations (a .view() after
                # a convolution): the copy goes back to the usual layout, once
                self.restore()
                self.model64.to(memory_format=torch.contiguous_format)
                self.memory_format = "contiguous"
                self.memory_note = f"channels_last refused on fixture {k}: {one_line(e)}"
                return self._forward(fx, forward, pairs)
        except Exception as e:  # the reference is optional by design
            self.fail(e, f"the float64 forward raised on fixture {k}")
            return None
        finally:
            self.restore()
            self.seconds += _clock() - t0

    def _forward(self, fx, forward, pairs):
        fx64 = _fixtures.Fixture(to_float64(fx.args), to_float64(fx.kwargs))  # copies
        stats = {}

        def sink(c, t64):
            c32 = pairs[c.index]
            if (c32.path, c32.call_no) == (c.path, c.call_no) and counterpart(c32.output, t64):
                stats[(c.path, c.call_no)] = noise_stats(c32.output, t64, self.scratch)

        with _mapping.Recorder(self.model64, _mapping.LegacyScopes(), keep=set(pairs), sink=sink):
            out = forward(self.model64, fx64)
        return [t for _, _, t in _fixtures.flatten_outputs(out)], stats

    def restore(self):
        """Every covered fixture from the same state, as the truth."""
        if self.model64 is not None and self.snap is not None:
            self.snap.restore()

    def release(self):
        """Drop the float64 copy and the work memory (the recorded documents
        stay)."""
        self.model64 = None
        self.scratch = None

    def doc(self):
        ok = self.reason is None
        return {"reference": "float64" if ok else None, "reason": None if ok else self.reason,
                "policy": policy_doc(self.policy),
                "fixtures_covered": [f["fixture"] for f in self.fixtures] if ok else [],
                "memory_format": self.memory_format if ok else None,
                "memory_note": self.memory_note if ok else None,
                "seconds": round(self.seconds, 6), "fixtures": self.fixtures if ok else []}
