"""Selections among exact ties (issue 35): the eager forward's tie-sensitive
ops watched, and the same forward rerun with them breaking ties as ONNX
Runtime does.

torch promises no order among equal values: ``torch.topk``, ``torch.sort``,
``torch.max(x, dim)`` / ``argmax`` and torchvision's ``nms`` pick one of
several tied elements as their kernels happen to.  ONNX says which one
(TopK: among equal values the lower index first; ArgMax/ArgMin without
``select_last_index``: the first), and ONNX Runtime's NonMaxSuppression,
measured on ONNX Runtime 1.23.2 and 1.29 with tied scores (disjoint,
overlapping, identical and random boxes, up to 200 of them in three tie
groups), visits boxes by score, best first, the lower index first among
equal scores, and returns them in that order.  A fixture whose scores tie
exactly (a degenerate random init whose every anchor scores 1/C) can then
give other detections in eager and in ONNX Runtime without any defect of
the export.

``watch()`` wraps those ops for the duration of the truth forward: each
call runs the original op and records whether its result was chosen among
exact ties (``Watch.seen``: the ops' names).  Nothing else changes: the
outputs are the original op's.  ``onnx_order()`` replaces them by versions
that break ties in ONNX's order; the capture reruns a fixture under it only
when the watch saw ties, and keeps the outputs as the fixture's tie-ordered
reference when they differ from the truth (docs/formats.md).

What is wrapped: the ``torch`` functions and ``torch.Tensor`` methods of
those names (so every caller reaches them, however it imported torch), and
``torchvision.ops.nms`` / ``batched_nms`` (module attributes of
``torchvision.ops`` and ``torchvision.ops.boxes``; torchvision's detectors
call them through the module) when torchvision is already imported.  A
caller that bound one of torchvision's functions to its own name before the
capture, or calls ``torch.ops.torchvision.nms`` directly, is not seen.
"""
import contextlib
import sys
from typing import Any, Callable, Dict

import torch

# the ops watched, and the torch names each is patched under
_TORCH_FUNCS = ("topk", "sort", "argsort", "max", "min", "argmax", "argmin")


class Watch:
    """Which tie-sensitive ops chose among exact ties (``seen``, in call
    order, each name once)."""

    def __init__(self):
        self.seen = []

    def saw(self, name):
        if name not in self.seen:
            self.seen.append(name)


def _dim_arg(args, kwargs, pos, name, default):
    return args[pos] if len(args) > pos else kwargs.get(name, default)


def _has_dim(args, kwargs):
    """torch.max/min(x, dim, ...) rather than max(x) or max(x, other)."""
    d = _dim_arg(args, kwargs, 0, "dim", None)
    return isinstance(d, int) and not isinstance(d, bool)


# --- tie tests on an op's inputs and result (no_grad; never raising) -------

def _adjacent_equal(v, dim):
    n = v.shape[dim] if v.dim() else 0
    if n < 2:
        return False
    return bool((v.narrow(dim, 1, n - 1) == v.narrow(dim, 0, n - 1)).any())


def _topk_tied(x, values, dim):
    """Ties that decide a top-k: two selected values equal (their order),
    or the k-th value also outside the selection (which ones)."""
    k = values.shape[dim] if values.dim() else 0
    if k == 0:
        return False
    if _adjacent_equal(values, dim):
        return True
    kth = values.narrow(dim, k - 1, 1)
    return bool(((x == kth).sum(dim) > (values == kth).sum(dim)).any())


def _extreme_tied(x, values, dim, keepdim):
    """More than one element of a row equals its max (min)."""
    v = values if keepdim else values.unsqueeze(dim)
    return bool(((x == v).sum(dim) > 1).any())


def _scores_tied(scores):
    if scores.numel() < 2:
        return False
    s = _ORIG["torch.sort"](scores.reshape(-1))[0]
    return bool((s[1:] == s[:-1]).any())


# --- ONNX's tie order --------------------------------------------------------

def _stable_sort(x, dim, descending):
    return _ORIG["torch.sort"](x, dim=dim, descending=descending, stable=True)


def _first_index(x, values, dim, keepdim):
    """The first index along dim where x equals values (NaN equal to NaN)."""
    v = values if keepdim else values.unsqueeze(dim)
    eq = (x == v) | (torch.isnan(x) & torch.isnan(v)) if x.is_floating_point() else x == v
    n = x.shape[dim]
    shape = [1] * x.dim()
    shape[dim] = n
    ar = torch.arange(n, device=x.device).view(shape).expand_as(x)
    return torch.amin(torch.where(eq, ar, torch.full_like(ar, n)), dim=dim, keepdim=keepdim)


def _ordered_topk(x, k, dim, largest):
    v, i = _stable_sort(x, dim, largest)
    return torch.return_types.topk((v.narrow(dim, 0, k), i.narrow(dim, 0, k)))


def _ordered_extreme(name):
    amax = torch.amax if name in ("max", "argmax") else torch.amin

    def extreme(x, dim, keepdim):
        if x.dim() == 0:
            return x, torch.zeros((), dtype=torch.int64, device=x.device)
        values = amax(x, dim=dim, keepdim=keepdim)
        if x.is_floating_point():  # torch's max/min propagate NaN
            nan = torch.isnan(x).any(dim, keepdim=keepdim)
            values = torch.where(nan, torch.full_like(values, float("nan")), values)
        return values, _first_index(x, values, dim, keepdim)
    return extreme


def _ordered_nms(boxes, scores, iou_threshold):
    """torchvision's nms visiting boxes in ONNX Runtime's order: scores best
    first, the lower index first among equal ones (a strictly decreasing
    stand-in score of the same order, so torchvision's own sort has no tie
    to break and its own IoU test decides)."""
    order = _stable_sort(scores, 0, True)[1]
    rank = torch.empty_like(scores)
    rank[order] = torch.arange(scores.numel(), 0, -1, dtype=scores.dtype, device=scores.device)
    return _ORIG["torchvision.ops.boxes.nms"](boxes, rank, iou_threshold)


def _ordered_batched_nms(boxes, scores, idxs, iou_threshold):
    """batched_nms as it is exported (torchvision's coordinate trick: one
    NonMaxSuppression over boxes moved apart per class), in ONNX Runtime's
    order."""
    if boxes.numel() == 0:
        return torch.empty((0,), dtype=torch.int64, device=boxes.device)
    offsets = idxs.to(boxes) * (torch.amax(boxes) + 1)
    return _ordered_nms(boxes + offsets[:, None], scores, iou_threshold)


# --- the patches ---------------------------------------------------------------

_ORIG: Dict[str, Callable[..., Any]] = {}  # the unpatched functions, by "owner.name"


def _remember():
    if _ORIG:
        return
    for n in _TORCH_FUNCS:
        _ORIG[f"torch.{n}"] = getattr(torch, n)
        _ORIG[f"Tensor.{n}"] = getattr(torch.Tensor, n)


def _tv_modules():
    """torchvision.ops and torchvision.ops.boxes when imported (never
    imported here)."""
    ops, boxes = sys.modules.get("torchvision.ops"), sys.modules.get("torchvision.ops.boxes")
    return [m for m in (ops, boxes) if m is not None and hasattr(m, "nms")]


def _input_positional(fn):
    """fn, also when the caller passes the tensor by keyword
    (``torch.topk(input=x, k=2)``): the wrappers take it by position."""
    def call(*args, **kwargs):
        if not args and "input" in kwargs:
            kwargs = dict(kwargs)
            args = (kwargs.pop("input"),)
        return fn(*args, **kwargs)
    return call


def _tied(name, x, out, args, kwargs):
    """Whether op ``name``'s result ``out`` on tensor ``x`` was chosen among
    exact ties."""
    if name == "topk":
        return _topk_tied(x, out[0], _dim_arg(args, kwargs, 1, "dim", -1))
    if name in ("sort", "argsort"):
        dim = _sort_dim(args, kwargs)
        return _adjacent_equal(out[0] if name == "sort" else torch.gather(x, dim, out), dim)
    if name in ("max", "min"):
        return _has_dim(args, kwargs) and _extreme_tied(x, out[0], _dim_arg(args, kwargs, 0, "dim", None),
                                                        _dim_arg(args, kwargs, 1, "keepdim", False))
    d = _dim_arg(args, kwargs, 0, "dim", None)  # argmax, argmin
    x, d = (x.reshape(-1), 0) if d is None else (x, d)
    ext = (torch.amax if name == "argmax" else torch.amin)(x, dim=d, keepdim=False)
    return bool(x.numel()) and _extreme_tied(x, ext, d, False)


def _watching(name, orig, watch):
    """orig, recording in ``watch`` whether its result was chosen among ties
    (no test once ``watch`` has seen ties in ``name``)."""
    def call(x, *args, **kwargs):
        out = orig(x, *args, **kwargs)
        if name in watch.seen or not isinstance(x, torch.Tensor) or kwargs.get("out") is not None:
            return out
        try:
            with torch.no_grad():
                if _tied(name, x, out, args, kwargs):
                    watch.saw(name)
        except Exception:  # a check that cannot run says nothing; the op's result stands
            pass
        return out
    return call


def _sort_dim(args, kwargs):
    d = _dim_arg(args, kwargs, 0, "dim", -1)
    return d if isinstance(d, int) and not isinstance(d, bool) else -1


def _watching_nms(orig, watch):
    def call(boxes, scores, *args, **kwargs):
        try:
            if "nms" not in watch.seen and _scores_tied(scores.detach()):
                watch.saw("nms")
        except Exception:
            pass
        return orig(boxes, scores, *args, **kwargs)
    return call


def _ordered(name, orig):
    """orig, breaking ties in ONNX's order where it chooses along a dim."""
    if name == "topk":
        def topk(x, *args, **kwargs):
            k = _dim_arg(args, kwargs, 0, "k", None)
            dim = _dim_arg(args, kwargs, 1, "dim", -1)
            largest = _dim_arg(args, kwargs, 2, "largest", True)
            if kwargs.get("out") is not None or not isinstance(x, torch.Tensor) or x.dim() == 0:
                return orig(x, *args, **kwargs)
            return _ordered_topk(x, k, dim, largest)
        return topk
    if name in ("sort", "argsort"):
        def sort(x, *args, **kwargs):
            if kwargs.get("out") is not None or not isinstance(x, torch.Tensor):
                return orig(x, *args, **kwargs)
            dim = _sort_dim(args, kwargs)
            desc = _dim_arg(args, kwargs, 1, "descending", False)
            r = _stable_sort(x, dim, desc)
            return r if name == "sort" else r[1]
        return sort
    ext = _ordered_extreme(name)
    if name in ("max", "min"):
        def extreme(x, *args, **kwargs):
            if not _has_dim(args, kwargs) or kwargs.get("out") is not None or \
                    not isinstance(x, torch.Tensor):
                return orig(x, *args, **kwargs)
            v, i = ext(x, _dim_arg(args, kwargs, 0, "dim", None),
                       _dim_arg(args, kwargs, 1, "keepdim", False))
            rt = torch.return_types.max if name == "max" else torch.return_types.min
            return rt((v, i))
        return extreme

    def arg(x, *args, **kwargs):
        if kwargs.get("out") is not None or not isinstance(x, torch.Tensor):
            return orig(x, *args, **kwargs)
        d = _dim_arg(args, kwargs, 0, "dim", None)
        keep = _dim_arg(args, kwargs, 1, "keepdim", False)
        if d is None:
            i = ext(x.reshape(-1), 0, False)[1]
            return i.reshape([1] * x.dim()) if keep else i
        return ext(x, d, keep)[1]
    return arg


@contextlib.contextmanager
def _patched(make_torch, make_nms, make_batched):
    _remember()
    tv = _tv_modules()
    if "torchvision.ops.boxes" in sys.modules:
        _ORIG.setdefault("torchvision.ops.boxes.nms", sys.modules["torchvision.ops.boxes"].nms)
    saved = []
    try:
        for n in _TORCH_FUNCS:
            for owner, key in ((torch, f"torch.{n}"), (torch.Tensor, f"Tensor.{n}")):
                saved.append((owner, n, getattr(owner, n)))
                setattr(owner, n, _input_positional(make_torch(n, _ORIG[key])))
        for m in tv:
            for n, make in (("nms", make_nms), ("batched_nms", make_batched)):
                if make is not None and hasattr(m, n):
                    saved.append((m, n, getattr(m, n)))
                    setattr(m, n, make(getattr(m, n)))
        yield
    finally:
        for owner, n, f in reversed(saved):
            setattr(owner, n, f)


def watch(w):
    """The tie-sensitive ops record in Watch ``w`` whether they chose among
    exact ties; their results are the original ops'."""
    return _patched(lambda n, orig: _watching(n, orig, w),
                    lambda orig: _watching_nms(orig, w), None)


def onnx_order():
    """The tie-sensitive ops break ties as ONNX Runtime does (module
    comment)."""
    return _patched(_ordered, lambda orig: _ordered_nms,
                    lambda orig: _ordered_batched_nms)
