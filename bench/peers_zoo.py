"""bench/peers_zoo.py BIN WORK [--only NAME ...] — the project's zoo through onnxparity and its
two peers: which tool names the cause, which names the layer.

The zoo is made by its own generator (tests/zoo/make_zoo.py, run here under
torch 2.x, so its captures use the dynamo exporter where torch.export takes
the model); this script only watches it: it records the ONNXProgram each
dynamo export returns (torch.verification needs the ExportedProgram inside
it), keyed by the bundle being made.  Then, per bundle of zoo.json:

* onnxparity: `diagnose BUNDLE --format json` (with the entry's args); the
  verdict, the top cause id, and its node as test_zoo matches it (every
  string of the entry's "node" inside the node's name, op_type and name
  scopes).
* torch.onnx.verification: `verify_onnx_program(program, args,
  compare_intermediates=True)` on fixture 0 and 1 against eager; bad is
  max_abs_diff > 1e-3 (the table; kinder to it than its own warning
  threshold, max_abs_diff > 0.01 or max_rel_diff > 0.1, whose relative half
  fires on float noise near zero: the summary gives both); the layer is the
  first bad value's ONNX node, matched like onnxparity's.  It
  has no cause to name, and cannot run on a legacy export (no
  ExportedProgram).
* Polygraphy: `polygraphy run --onnxrt` with the bundle's inputs and
  expected outputs (bench/peers.py's files); a verdict per output, no cause,
  no layer.

Run with the torch 2.x environment's python (.venv-torch2).  Prints a
markdown section on stdout.
"""
import contextlib
import functools
import io
import json
import pathlib
import shutil
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve()
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "zoo"))
sys.path.insert(0, str(HERE.parent))

RTOL, ATOL = "1e-4", "1e-5"


def make_zoo(binary, out, only):
    """Run the zoo generator (its bundles named in ``only``, or all);
    returns {bundle name: ONNXProgram} of its dynamo exports."""
    import torch
    import make_zoo as zoo
    programs, current = {}, [None]
    real = torch.onnx.export

    @functools.wraps(real)  # the capture reads export's signature (dynamo=)
    def keep(*a, **kw):
        p = real(*a, **kw)
        if kw.get("dynamo") and p is not None:
            programs[current[0]] = p
        return p

    def tagged(name, build):
        def run(d, ctx):
            current[0] = name
            return build(d, ctx)
        return run

    for e in zoo.ZOO:
        e["build"] = tagged(e["name"], e["build"])
    torch.onnx.export = keep
    try:
        with contextlib.redirect_stdout(sys.stderr):
            zoo.main([str(out), "--onnxparity", str(binary)] + (["--only", *only] if only else []))
    finally:
        torch.onnx.export = real
    return programs


def words(nodes, made, value=None, name=None):
    """test_zoo's node words: name, op_type and name scopes of the node
    called ``name`` or making ``value``."""
    n = nodes.get(name) if name else made.get(value)
    if n is None:
        return name or value or ""
    meta = {p.key: p.value for p in n.metadata_props}
    return " ".join([n.name, n.op_type, meta.get("pkg.torch.onnx.name_scopes", "")])


def graph(bundle):
    import onnx
    g = onnx.load(str(bundle / "model.onnx"), load_external_data=False).graph
    return {n.name: n for n in g.node}, {o: n for n in g.node for o in n.output}


def fixture_args(bundle, k):
    import onnx
    import torch
    from onnx import numpy_helper
    d = bundle / f"test_data_set_{k}"
    files = sorted(d.glob("input_*.pb"), key=lambda p: int(p.stem.split("_")[1]))
    return tuple(torch.from_numpy(numpy_helper.to_array(onnx.load_tensor(str(f))).copy()) for f in files)


def warned(i):
    """verify_onnx_program's own judgment: it logs a warning for a value above these."""
    return i.max_abs_diff > 0.01 or i.max_rel_diff > 0.1


def off(i):
    """An absolute reading kinder to it: the relative half of its warning fires on
    float noise near zero (a healthy resnet18's first BatchNorm: max_abs 8e-7,
    max_rel 0.12); 1e-3 absolute is far above the zoo's float noise."""
    return i.max_abs_diff > 1e-3


def verify(program, bundle):
    """{reading: first bad value or None} for the readings off and warned,
    over fixtures 0 and 1 (a fixture's run ends the search of a reading that
    found one), with the verdict and the seconds: one run per fixture."""
    from torch.onnx.verification import verify_onnx_program
    t0 = time.perf_counter()
    first = {"off": None, "warned": None}
    for k in range(2):
        if not (bundle / f"test_data_set_{k}").is_dir() or all(first.values()):
            break
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                infos = verify_onnx_program(program, args=fixture_args(bundle, k), compare_intermediates=True)
        except Exception as e:  # what the user would see: it did not run
            return f"error ({type(e).__name__})", first, time.perf_counter() - t0
        for name, bad_if in (("off", off), ("warned", warned)):
            if first[name] is None:
                first[name] = next((i.name for i in infos if bad_if(i)), None)
    return ("fail" if first["off"] else "pass"), first, time.perf_counter() - t0


def optimizer_effect_absent(binary, bundle):
    """test_zoo's rule for a graph-optimization bundle: bitwise equal at every
    level on this CPU means there is nothing to find."""
    r = subprocess.run([str(binary), "check", str(bundle), "--rtol", "0", "--atol", "0", "--no-lint",
                        "--no-bisect"], capture_output=True, text=True)
    return r.returncode == 0


def polygraphy(poly, bundle, tmp):
    import peers
    with contextlib.redirect_stdout(sys.stderr):
        from polygraphy.comparator import IterationResult, RunResults
        from polygraphy.json import save_json
        fx = peers.fixtures(bundle)
        save_json([feed for feed, _ in fx], str(tmp / "inputs.json"))
        results = RunResults()
        results.append(("eager", [IterationResult(outputs=outs, runner_name="eager") for _, outs in fx]))
        results.save(str(tmp / "outputs.json"))
    t0 = time.perf_counter()
    r = subprocess.run([poly, "run", str(bundle / "model.onnx"), "--onnxrt", "--load-inputs",
                        str(tmp / "inputs.json"), "--load-outputs", str(tmp / "outputs.json"),
                        "--rtol", RTOL, "--atol", ATOL], capture_output=True, text=True)
    t = time.perf_counter() - t0
    text = r.stdout + r.stderr
    ok = r.returncode == 0 and "PASSED" in text and "FAILED" not in text
    return ("pass" if ok else "fail" if "FAILED" in text else f"error (exit {r.returncode})"), t


def main():
    binary, work = pathlib.Path(sys.argv[1]).resolve(), pathlib.Path(sys.argv[2]).resolve()
    only = sys.argv[4:] if len(sys.argv) > 3 and sys.argv[3] == "--only" else []
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    poly = shutil.which("polygraphy", path=str(pathlib.Path(sys.executable).parent))
    if poly is None:
        sys.exit("bench/peers_zoo.py: no polygraphy beside this python (run it with .venv-torch2/bin/python)")
    t0 = time.perf_counter()
    programs = make_zoo(binary, work / "zoo", only)
    t_make = time.perf_counter() - t0
    listing = json.loads((work / "zoo" / "zoo.json").read_text())["bundles"]
    rows, tot = [], {"ours": 0.0, "ver": 0.0, "poly": 0.0}
    for e in listing:
        b = work / "zoo" / e["name"]
        nodes, made = graph(b)
        t = time.perf_counter()
        r = subprocess.run([str(binary), "diagnose", str(b), "--format", "json", *e["args"]],
                           capture_output=True, text=True, timeout=600)
        tot["ours"] += time.perf_counter() - t
        doc = json.loads(r.stdout) if r.stdout.strip() else {}
        top = (doc.get("causes") or [None])[0]
        ours_cause = top["id"] if top else None
        ours_layer = all(w in words(nodes, made, name=top.get("node")) for w in e["node"]) if top and \
            top.get("node") else False
        absent = e["cause"] == "graph-optimization" and optimizer_effect_absent(binary, b)
        if e["name"] in programs:
            v_verdict, first, tv = verify(programs[e["name"]], b)
            v_value, w_value = first["off"], first["warned"]
            w_verdict = v_verdict if v_verdict.startswith("error") else "fail" if w_value else "pass"
            v_layer = bool(v_value) and all(w in words(nodes, made, value=v_value) for w in e["node"])
            w_layer = bool(w_value) and all(w in words(nodes, made, value=w_value) for w in e["node"])
        else:
            v_verdict, v_value, tv, v_layer = "cannot run (legacy export: no ExportedProgram)", None, 0.0, False
            w_verdict, w_layer = v_verdict, False
        tot["ver"] += tv
        tmp = work / "poly"
        tmp.mkdir(exist_ok=True)
        p_verdict, tp = polygraphy(poly, b, tmp)
        tot["poly"] += tp
        rows.append(dict(e=e, absent=absent, ours=doc.get("verdict"), ours_cause=ours_cause, ours_layer=ours_layer,
                         v_verdict=v_verdict, v_value=v_value, v_layer=v_layer, w_verdict=w_verdict,
                         w_layer=w_layer, p_verdict=p_verdict))
    print("## Peers over the zoo: who names the cause, who names the layer")
    print()
    print(f"The project's zoo ({len(listing)} bundles, tests/zoo/make_zoo.py under torch "
          f"{__import__('torch').__version__}, made in {t_make:.0f} s; bench/peers_zoo.py). Verdict right: "
          "pass on a healthy bundle, fail on a planted one. Cause right: the top cause is the planted one "
          "(onnxparity only: neither peer has causes). Layer right: the node each names holds every "
          "string of the entry's node (module path and/or op type, as test_zoo matches it); "
          "'-' where nothing is planted in a node.")
    print()
    print("| bundle | exporter | planted (cause @ node) | onnxparity diagnose | cause | layer | "
          "verification | layer | polygraphy |")
    print("|---|---|---|---|---|---|---|---|---|")
    score = {k: 0 for k in ("ov", "oc", "ol", "vv", "vl", "vr", "wv", "wl", "pv", "n_fail", "n_node")}
    skipped = [r["e"]["name"] for r in rows if r["absent"]]
    for r in rows:
        e = r["e"]
        if r["absent"]:
            print(f"| {e['name']} | {e['exporter'] or '-'} | {e['cause']} | not scored: ONNX Runtime's "
                  "optimizers change no bit of it on this CPU (test_zoo skips it too) | | | | | |")
            continue
        want = e["verdict"]
        has_node = want == "fail" and bool(e["node"])
        cause_ok = (r["ours_cause"] == e["cause"]) if want == "fail" else None
        mark = {True: "yes", False: "no", None: "-"}
        score["ov"] += r["ours"] == want
        score["vv"] += r["v_verdict"] == want
        score["wv"] += r["w_verdict"] == want
        score["vr"] += not r["v_verdict"].startswith("cannot")
        score["pv"] += r["p_verdict"] == want
        if want == "fail":
            score["n_fail"] += 1
            score["oc"] += bool(cause_ok)
        if has_node:
            score["n_node"] += 1
            score["ol"] += r["ours_layer"]
            score["vl"] += r["v_layer"]
            score["wl"] += r["w_layer"]
        planted = f"{e['cause']} @ {'+'.join(e['node']) or '-'}" if e["cause"] else "healthy"
        v_said = r["v_verdict"] + (f" at `{r['v_value']}`" if r["v_value"] else "")
        print(f"| {e['name']} | {e['exporter']} | {planted} | {r['ours']}, {r['ours_cause'] or '-'} | "
              f"{mark[cause_ok]} | {mark[r['ours_layer'] if has_node else None]} | {v_said} | "
              f"{mark[r['v_layer'] if has_node else None]} | {r['p_verdict']} |")
    n = len(rows) - len(skipped)
    print()
    if skipped:
        print(f"Not scored ({', '.join(skipped)}): their reference is ONNX Runtime's own output at "
              "ORT_DISABLE_ALL, and on this CPU ORT_ENABLE_ALL gives the same bits, so there is no "
              "defect to find here (`check --rtol 0 --atol 0` passes).")
        print()
    print(f"Verdict right: onnxparity {score['ov']}/{n}, verification {score['vv']}/{n} (it ran on "
          f"{score['vr']}; {score['wv']} by its own warning threshold), polygraphy {score['pv']}/{n}. "
          f"Cause named: onnxparity {score['oc']}/{score['n_fail']}, verification 0 and polygraphy 0 (no "
          f"causes). Layer named, of the {score['n_node']} defects planted in a node: onnxparity "
          f"{score['ol']}, verification {score['vl']} ({score['wl']} by its own warning threshold), "
          f"polygraphy 0 (it compares the graph outputs only). Time over the zoo: "
          f"diagnose {tot['ours']:.1f} s, verification {tot['ver']:.1f} s (in process, two fixtures), "
          f"polygraphy {tot['poly']:.1f} s.")


if __name__ == "__main__":
    main()
