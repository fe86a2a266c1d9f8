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

import numpy as np
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
    Returns (model, memory format name)."""
    m = copy.deepcopy(model)
    m.double()
    m.eval()
    if any(p.dim() == 4 and p.is_floating_point() for p in m.parameters()):
        m.to(memory_format=torch.channels_last)
        return m, "channels_last"
    return m, "contiguous"


def noise_stats(e32, e64):
    """float32 eager's deviation from float64 eager, all in float64:
    dev = e32 - e64 over the elements where both are finite; max_abs, rms,
    q999 (99.9th percentile of |dev|, linear interpolation as numpy's
    quantile) over those; scale_max and scale_rms over the finite elements
    of e64; count = all elements, nonfinite = elements where either side is
    not finite.  All zero for an empty tensor.

    Computed in torch (the capture's hot loop runs it on every intermediate
    of a covered fixture), with one float64 temporary: dev is made in place
    in the float32 side's float64 copy; the sums of squares need no |.|
    (x*x = |x|*|x| bit for bit, summed in the same order); scale's maximum
    is max(max b, -min b).  In the common all-finite case no mask is built:
    both sums of squares are finite exactly when every element is (a NaN or
    an infinity makes its dot NaN or inf; an overflow to inf, |x| > 1e154,
    also takes the masked path, which gives the same inf).  q999 reads the
    two order statistics it interpolates from a top-k of the largest 0.1 %,
    not from a full partition."""
    a = e32.detach().cpu().reshape(-1)
    b = e64.detach().cpu().reshape(-1).to(torch.float64)
    count = int(a.numel())
    zero = {"max_abs": 0.0, "rms": 0.0, "q999": 0.0, "scale_max": 0.0, "scale_rms": 0.0,
            "count": count, "nonfinite": 0}
    if count == 0:
        return zero
    dev = a.to(torch.float64, copy=True).sub_(b)
    dd, bb = float(torch.dot(dev, dev)), float(torch.dot(b, b))
    if not (math.isfinite(dd) and math.isfinite(bb)):
        return _noise_stats_masked(dev.abs_(), b, zero)
    dev.abs_()
    return dict(zero, max_abs=float(dev.max()), rms=math.sqrt(dd / count),
                q999=_quantile_high(dev, 0.999), scale_max=max(float(b.max()), -float(b.min())),
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


def _quantile_high(v, q):
    """numpy.quantile(v, q) (method 'linear') of a non-empty 1-D float64
    tensor, for q near 1: the order statistics at floor(q (n-1)) and the one
    above it are the smallest two of the top n - floor(q (n-1))."""
    n = int(v.numel())
    pos = q * (n - 1)
    lo = int(math.floor(pos))
    top = torch.topk(v, n - lo, largest=True, sorted=True).values
    a = float(top[-1])
    b = float(top[-2]) if n - lo >= 2 else a
    t = pos - lo
    # numpy's lerp: from below under one half, from above from one half on
    return a + (b - a) * t if t < 0.5 else b - (b - a) * (1 - t)


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

    def run(self, k, fx, forward, keep=None):
        """The float64 pass on fixture ``k`` (a Fixture) when it is covered:
        (flat outputs, {(module path, call number): output}), or None (not
        covered, or the pass failed: see ``reason``).  ``forward(model, fx)``
        runs the model like the float32 truth (grad mode, RNG seed).
        ``keep``: the indices of the module calls whose outputs are kept, in
        call order (as the float32 recording's; None: all)."""
        if not self.active or k not in self.covered:
            return None
        t0 = _clock()
        try:
            try:
                return self._forward(fx, forward, keep)
            except Exception as e:
                if self.memory_format != "channels_last":
                    raise
                # a forward that needs contiguous activations (a .view() after
                # a convolution): the copy goes back to the usual layout, once
                self.restore()
                self.model64.to(memory_format=torch.contiguous_format)
                self.memory_format = "contiguous"
                self.memory_note = f"channels_last refused on fixture {k}: {one_line(e)}"
                return self._forward(fx, forward, keep)
        except Exception as e:  # the reference is optional by design
            self.fail(e, f"the float64 forward raised on fixture {k}")
            return None
        finally:
            self.restore()
            self.seconds += _clock() - t0

    def _forward(self, fx, forward, keep):
        fx64 = _fixtures.Fixture(to_float64(fx.args), to_float64(fx.kwargs))  # copies
        with _mapping.Recorder(self.model64, _mapping.LegacyScopes(), keep=keep) as r:
            out = forward(self.model64, fx64)
        flat = [t for _, _, t in _fixtures.flatten_outputs(out)]
        calls = {(c.path, c.call_no): c.output for c in r.calls if c.output is not None}
        return flat, calls

    def restore(self):
        """Every covered fixture from the same state, as the truth."""
        if self.model64 is not None and self.snap is not None:
            self.snap.restore()

    def release(self):
        """Drop the float64 copy (the recorded documents stay)."""
        self.model64 = None

    def doc(self):
        ok = self.reason is None
        return {"reference": "float64" if ok else None, "reason": None if ok else self.reason,
                "policy": policy_doc(self.policy),
                "fixtures_covered": [f["fixture"] for f in self.fixtures] if ok else [],
                "memory_format": self.memory_format if ok else None,
                "memory_note": self.memory_note if ok else None,
                "seconds": round(self.seconds, 6), "fixtures": self.fixtures if ok else []}
