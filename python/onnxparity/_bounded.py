"""Bounded bundles: which fixtures get their eager intermediates stored (the
``intermediates`` option), and the bundle's size printed at the end of a
capture.  Intermediates are the bulk of a bundle (every module output of
every fixture), so over hundreds of fixtures they are kept for a bounded,
documented subset: the first K fixtures of each shape group, the same rule
the float64 reference follows (_reference64.covered_fixtures).  Documented
in docs/capture.md ("Bounded bundles")."""
import os
import pathlib
import sys

from . import _reference64 as _r64

# the default of capture() and capture_stream(): the first DEFAULT_PER_GROUP
# fixtures of each shape group store their intermediates, the fixtures the
# float64 reference covers at its default (so each stored fixture has its
# noise statistics, and bisect's eager reference stands where the envelope
# was measured).  ``intermediates=True`` or "all" still means every fixture.
DEFAULT_PER_GROUP = _r64.DEFAULT_PER_GROUP


def parse_policy(value):
    """``intermediates`` option -> ('all', None) or ('per_shape_group', K).
    True / 'all': every fixture; False / None / 0 / 'none': none; an int K
    (or its decimal string): the first K fixtures of each shape group."""
    return _r64.parse_count_policy(value, "intermediates", ("all", None), ("none", "off"),
                                   "'all', 'none' or a count",
                                   "True, False, 'all', 'none' or a count")


def stored_fixtures(policy, flat_inputs):
    """The set of fixture indices whose intermediates are stored."""
    return set(_r64.covered_fixtures(policy, flat_inputs))


def policy_doc(policy):
    """parity.json intermediates.policy: {"all": true} or {"per_shape_group": K}."""
    return _r64.policy_doc(policy)


def skipped_note(policy):
    """Why a fixture outside the stored subset has no intermediates."""
    _, k = policy
    if not k:
        return "intermediates=none: no fixture stores its intermediates"
    return (f"beyond the stored subset (intermediates={k}: the first {k} fixture(s) of each shape "
            "group); bisect falls back to ONNX Runtime at opt-level disable as its reference")


def bundle_bytes(root):
    """Bytes of every file under ``root``."""
    total = 0
    for dirpath, _, files in os.walk(root):
        for f in files:
            p = os.path.join(dirpath, f)
            if not os.path.islink(p):
                total += os.path.getsize(p)
    return total


def human(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024.0


def print_size(root, doc, stream=None):
    """One line on stderr, only when it is a terminal (the capture is quiet
    otherwise): the bundle's size, fixtures and how many store
    intermediates."""
    stream = sys.stderr if stream is None else stream
    if not getattr(stream, "isatty", lambda: False)():
        return
    fx = doc.get("fixtures", [])
    with_int = sum(1 for f in fx if f.get("intermediates"))
    print(f"onnxparity: bundle {pathlib.Path(root)}: {human(bundle_bytes(root))}, {len(fx)} fixtures, "
          f"{with_int} with intermediates", file=stream)
