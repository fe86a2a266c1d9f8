"""pytest helpers over the onnxparity library.

    from onnxparity.testing import assert_export_parity
    def test_export(tmp_path):
        onnxparity.capture(model.eval(), fixtures, tmp_path / "b")
        assert_export_parity(tmp_path / "b", rtol=1e-4, atol=1e-5, top_k="auto")

assert_export_parity and run_check run the check in this process through
the library (onnxparity.api: libonnxparity.so, the tool's own run, options
and document); no binary is spawned.  The binary ($ONNXPARITY_BIN, else
build/onnxparity of the repository this package sits in, else the copy the
pip wheel installed, else `onnxparity` on PATH) names the command a failure
message gives to rerun by hand, and runs compare_intermediates.
"""
import json
import math
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import tempfile
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

def _pb_index(p):
    m = re.search(r"_(\d+)\.pb$", p.name)
    return int(m.group(1)) if m else 0


def compare_intermediates(bundle: PathLike, fixture: int = 0, *, rtol: Optional[float] = None,
                          atol: Optional[float] = None, binary: Optional[PathLike] = None,
                          timeout: float = 600) -> List[Dict[str, Any]]:
    """Run the bundle's model with every intermediate of fixture ``fixture``
    exposed as a graph output (``expose`` + ``run``) and compare each with the
    eager submodule output saved in test_data_set_K/intermediates/.  Returns a
    list, in graph order, of {module, value, file, pass, metrics...}."""
    import onnx
    b = pathlib.Path(bundle)
    d = b / f"test_data_set_{fixture}"
    entries = json.loads((d / "intermediates" / "index.json").read_text())["entries"]
    if not entries:
        return []
    mp = onnx.load(str(b / "model.onnx"), load_external_data=False)
    outs = [o.name for o in mp.graph.output]
    order = {o: i for i, n in enumerate(mp.graph.node) for o in n.output}
    extra = []
    for e in entries:
        if e["value"] not in outs and e["value"] not in extra:
            extra.append(e["value"])
    exe = find_binary(binary)
    with tempfile.TemporaryDirectory(prefix="onnxparity-inter-") as scratch:
        td = pathlib.Path(scratch)
        for f in b.iterdir():  # external data sits beside the model
            if f.is_file() and f.name not in ("model.onnx", "parity.json"):
                _link_or_copy(f, td / f.name)
        model = td / "exposed.onnx"
        _run([exe, "expose", str(b / "model.onnx"), str(model), "--values", ",".join(extra)], timeout)
        inputs = sorted(d.glob("input_*.pb"), key=_pb_index)
        _run([exe, "run", str(model)] + [str(p) for p in inputs]
             + ["--save", str(td / "out"), "--save-format", "pb"], timeout)
        act = td / "actual"
        act.mkdir()
        for e in entries:
            k = outs.index(e["value"]) if e["value"] in outs else len(outs) + extra.index(e["value"])
            shutil.copyfile(td / "out" / f"output_{k}.pb", act / e["file"])
        cmd = [exe, "compare", str(d / "intermediates"), str(act), "--format", "json"]
        if rtol is not None:
            cmd += ["--rtol", str(rtol)]
        if atol is not None:
            cmd += ["--atol", str(atol)]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if p.returncode not in (0, 1):
            raise RuntimeError(f"onnxparity compare failed (exit {p.returncode}): {p.stderr.strip()}")
        doc = json.loads(p.stdout)
    by_file = {pathlib.Path(pr["expected"]).name: pr for pr in doc.get("pairs", []) if pr.get("expected")}
    result = []
    for e in entries:
        pr = by_file.get(e["file"], {"pass": False, "result": "not compared"})
        result.append(dict(pr, module=e["module"], value=e["value"], file=e["file"],
                           modules=[x["module"] for x in e.get("modules", [])]))
    result.sort(key=lambda r: order.get(r["value"], len(order)))
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


def _run(cmd, timeout):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:2])} failed (exit {p.returncode}): {p.stderr.strip()}")
    return p


def _link_or_copy(src, dst):
    # ONNX Runtime resolves symlinks and refuses external data outside the
    # model's folder: a hard link (or a copy across file systems) stays inside
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)
