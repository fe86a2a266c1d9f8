"""pytest helpers over the onnxparity library.

    from onnxparity.testing import assert_export_parity
    def test_export(tmp_path):
        onnxparity.capture(model.eval(), fixtures, tmp_path / "b")
        assert_export_parity(tmp_path / "b", rtol=1e-4, atol=1e-5, top_k="auto")

assert_export_parity and run_check run the check in this process through
the library (onnxparity.api: libonnxparity.so, the tool's own run, options
and document), and compare_intermediates through its bisect; no binary is
spawned.  The binary ($ONNXPARITY_BIN, else build/onnxparity of the
repository this package sits in, else the copy the pip wheel installed, else
`onnxparity` on PATH) only names the command a failure message gives to
rerun by hand.
"""
import json
import math
import os
import pathlib
import shlex
import shutil
from typing import Any, Dict, List, Optional, Tuple, Union

from . import api

PathLike = Union[str, "os.PathLike[str]"]

_REPO_BIN = pathlib.Path(__file__).resolve().parents[2] / "build" / "onnxparity"

def find_binary(binary: Optional[PathLike] = None) -> str:
    """The onnxparity executable: ``binary``, $ONNXPARITY_BIN, the repository's
    build/onnxparity, the one the pip wheel installed, or PATH."""
    for cand, why in ((binary, "binary="), (os.environ.get("ONNXPARITY_BIN"), "$ONNXPARITY_BIN")):
        if cand:
            if not os.access(cand, os.X_OK):
                raise FileNotFoundError(f"onnxparity binary {cand} (from {why}) is not an executable file")
            return str(cand)
    if os.access(_REPO_BIN, os.X_OK):
        return str(_REPO_BIN)
    from ._tool import BINARY as bundled  # the pip wheel's own copy
    if os.access(bundled, os.X_OK):
        return str(bundled)
    found = shutil.which("onnxparity")
    if found:
        return found
    raise FileNotFoundError("onnxparity binary not found: set $ONNXPARITY_BIN, build it with `make` "
                            f"({_REPO_BIN}), or put it on PATH")


def _flags(criteria):
    return api.flags(criteria, "criteria")


def run_check(bundle: PathLike, *, binary: Optional[PathLike] = None, timeout: float = 600,
              **criteria: Any) -> Tuple[int, Optional[Dict[str, Any]], str, List[str]]:
    """Check the bundle in this process with the criteria as the tool's
    options (onnxparity.api.check).  Returns (exit code, the check document
    or None, the tool's error line or "", the equivalent command line).
    ``timeout`` is accepted for older callers and not applied: the run's own
    per-fixture limit is the ``timeout`` criterion (--timeout)."""
    del timeout
    args = _flags(criteria)
    try:
        exe = find_binary(binary)
    except FileNotFoundError:
        exe = "onnxparity"
    cmd = [exe, "check", str(bundle), "--format", "json"] + args
    try:
        r = api.check(bundle, extra_args=args)
    except api.OnnxParityError as e:
        return e.exit_code, None, f"onnxparity: {e}\n", cmd
    return r.exit_code, r.document, "", cmd


def assert_export_parity(bundle: PathLike, *, binary: Optional[PathLike] = None, timeout: float = 600,
                         **criteria: Any) -> Dict[str, Any]:
    """Assert that ONNX Runtime reproduces the bundle's eager outputs.

    criteria: rtol, atol, top_k (int or "auto"), tol ({output: (rtol, atol)}),
    opt_level, provider, provider_options ({k: v}), threads, inter_threads,
    session_config ({k: v}), ort_lib, deterministic (bool), extra_args (list).
    Returns the check document (schema onnxparity.check/1) when parity holds;
    raises AssertionError with a readable summary when it does not."""
    rc, doc, err, cmd = run_check(bundle, binary=binary, timeout=timeout, **criteria)
    if rc == 0 and doc is not None and doc.get("verdict") == "pass":
        return doc
    raise AssertionError(summarize(bundle, rc, doc, err, cmd))


def _num(x):
    if isinstance(x, str):
        return x
    if x is None:
        return "-"
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return str(x)
    return f"{x:.3g}"


def _output_line(fx_dir, out):
    name = out.get("name", "?")
    if out.get("shape_ok") is False or out.get("dtype_ok") is False:
        line = f"{fx_dir} {name}: {'shape' if out.get('shape_ok') is False else 'dtype'} differs"
    else:
        line = (f"{fx_dir} {name}: {out.get('mismatches', '?')}/{out.get('count', '?')} elements differ, "
                f"max_abs {_num(out.get('max_abs'))}, max_rel {_num(out.get('max_rel'))}, "
                f"cosine {_num(out.get('cosine'))}; needs rtol {_num(out.get('needed_rtol'))} (atol kept) "
                f"or atol {_num(out.get('needed_atol'))} (rtol kept)")
        if out.get("nan_mismatch"):
            line += f", {out['nan_mismatch']} NaN mismatches"
    tk = out.get("topk") or {}
    if tk.get("flipped"):
        line += f"; top-1 flipped on {tk['flipped']} of {tk.get('rows', '?')} rows"
    if out.get("note"):
        line += f" ({out['note']})"
    return line


def summarize(bundle: PathLike, rc: int, doc: Optional[Dict[str, Any]], err: str, cmd: List[str]) -> str:
    """The AssertionError text: what failed, by how much, and what the
    bundle's parity.json says about likely causes."""
    if doc is None:
        msg = err.strip().splitlines()
        return (f"onnxparity check could not judge {bundle} (exit {rc}): "
                + ("; ".join(msg[-3:]) if msg else "no output")
                + f"\ncommand: {shlex.join(map(str, cmd))}")  # copy-pastes into a shell
    s = doc.get("summary", {})
    lines = [f"export parity fails for {bundle} (verdict {doc.get('verdict')}, exit {rc}): "
             f"{s.get('fixtures_failed', '?')} of {s.get('fixtures', '?')} fixtures failed, "
             f"{s.get('outputs_failed', '?')} of {s.get('outputs_compared', '?')} outputs differ"]
    details = []
    for fx in doc.get("fixtures", []):
        d = os.path.basename(str(fx.get("dir", fx.get("index", "?"))))
        if fx.get("status") == "error":
            details.append(f"{d}: error: {fx.get('error', '?')}")
        for out in fx.get("outputs", []):
            if not out.get("pass", True):
                details.append(_output_line(d, out))
    lines += ["  " + x for x in details[:15]]
    if len(details) > 15:
        lines.append(f"  ... and {len(details) - 15} more")
    tk = s.get("topk")
    if tk and tk.get("flipped"):
        lines.append(f"top-1 agreement {tk.get('top1_agree')}/{tk.get('rows')} rows")
    for c in doc.get("causes") or []:
        lines.append(f"cause {c.get('id')} ({c.get('confidence')}): {c.get('evidence', '')} "
                     f"fix: {c.get('fix', '')}")
    lines += _manifest_hints(bundle)
    env = doc.get("environment", {})
    lines.append(f"ONNX Runtime {env.get('ort_version', '?')}, {env.get('provider', '?')}, "
                 f"opt-level {env.get('opt_level', '?')}")
    lines.append("command: " + shlex.join(map(str, cmd)))  # copy-pastes into a shell
    return "\n".join(lines)


def _manifest_hints(bundle):
    try:
        m = json.loads((pathlib.Path(bundle) / "parity.json").read_text())
    except (OSError, ValueError):
        return []
    hints = []
    tr = m.get("training", {})
    if tr.get("any"):
        on = tr.get("modules_in_training", [])
        hints.append(f"parity.json: exported with {len(on)} module(s) in training mode "
                     f"({', '.join(on[:6])}{' ...' if len(on) > 6 else ''})")
    tracer = [w for w in m.get("warnings", []) if w.get("category") == "TracerWarning"]
    if tracer:
        hints.append(f"parity.json: {len(tracer)} TracerWarning(s) during export, first at "
                     + ", ".join(w.get("where", "?") for w in tracer[:3]))
    if m.get("deterministic") is False:
        hints.append("parity.json: the eager model is not deterministic (two runs differ)")
    st = m.get("state") or {}
    for w in st.get("inputs_written", [])[:3]:
        hints.append(f"parity.json: the forward writes to its input {w.get('name')} in place "
                     f"({len(w.get('fixtures', []))} fixture(s)); the capture ran it on copies")
    changed = [c.get("name", "?") for c in st.get("changed_by_forward", [])]
    if changed:
        hints.append(f"parity.json: the forward changes the model's state ({', '.join(changed[:6])}"
                     f"{' ...' if len(changed) > 6 else ''}); the capture restored it after every forward"
                     + ("; a forward from the changed state gives other outputs (state drift)"
                        if st.get("state_drift") else ""))
    for r in m.get("shape_risks", [])[:3]:
        hints.append(f"parity.json: {r['name']} dim {r['dim']} takes sizes {r['sizes']} across "
                     "fixtures but was exported static")
    return hints


# --------------------------------------------------------------------------- intermediates

def compare_intermediates(bundle: PathLike, fixture: int = 0, *, rtol: Optional[float] = None,
                          atol: Optional[float] = None, binary: Optional[PathLike] = None,
                          timeout: float = 600) -> List[Dict[str, Any]]:
    """Compare every intermediate of fixture ``fixture`` (the eager submodule
    outputs saved in test_data_set_K/intermediates/) with ONNX Runtime's value,
    by the tolerance alone, in this process: the library's bisect of that one
    fixture (onnxparity.api.bisect, reference eager, strict tolerance, no
    noise estimate).  Returns a list, in graph order, of {module, value, file,
    modules, pass, max_abs, max_rel, verdict}.  ``binary`` and ``timeout`` are
    accepted for older callers and not used: nothing is spawned."""
    del binary, timeout
    b = pathlib.Path(bundle)
    index = b / f"test_data_set_{fixture}" / "intermediates" / "index.json"
    entries = json.loads(index.read_text())["entries"]
    if not entries:
        return []
    r = api.bisect(b, fixture=fixture, reference="eager", rtol=rtol, atol=atol, strict_tol=True,
                   noise_estimate=False)
    order = {p.value: i for i, p in enumerate(r.curve)}
    by_value = {p.value: p for p in r.curve}
    result = []
    for e in entries:
        p = by_value.get(e["value"])
        row: Dict[str, Any] = {"pass": False, "result": "not compared"} if p is None or p.passed is None \
            else {"pass": p.passed, "max_abs": p.max_abs, "max_rel": p.max_rel, "verdict": p.verdict}
        result.append(dict(row, module=e["module"], value=e["value"], file=e["file"],
                           modules=[x["module"] for x in e.get("modules", [])]))
    result.sort(key=lambda x: order.get(x["value"], len(order)))
    return result


def assert_intermediates_parity(bundle: PathLike, fixture: int = 0, **kw: Any) -> List[Dict[str, Any]]:
    """compare_intermediates(), raising AssertionError that names the first
    module (in graph order) whose ONNX value differs from its eager output."""
    res = compare_intermediates(bundle, fixture, **kw)
    bad = [r for r in res if not r.get("pass")]
    if bad:
        first = bad[0]
        raise AssertionError(
            f"{len(bad)} of {len(res)} intermediates differ in {bundle} fixture {fixture}; first in graph "
            f"order: module {first['module']} (value {first['value']}): "
            f"max_abs {_num(first.get('max_abs'))}, "
            f"max_rel {_num(first.get('max_rel'))}; others: "
            + ", ".join(r["module"] for r in bad[1:8]) + (" ..." if len(bad) > 8 else ""))
    return res
