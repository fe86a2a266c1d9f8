"""bench/peers.py BIN BUNDLE [REPS] — Polygraphy beside onnxparity on one bundle.

What a user would run instead of `onnxparity check BUNDLE`: `polygraphy run
MODEL --onnxrt --load-inputs IN.json --load-outputs OUT.json` with the same
inputs and the same expected (eager) outputs, the same rtol/atol.  Run with
the torch 2.x environment's python (.venv-torch2: polygraphy 0.49.26,
onnxruntime 1.23.2); the bundle's test_data_set_K/*.pb become Polygraphy's
JSON input and output files first (not timed).  Each command: best-of-REPS
wall time and the peak RSS of one more run (GNU time).  Prints a markdown
section on stdout.
"""
import contextlib
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

import onnx
from onnx import numpy_helper
from onnxparity import ortlib

with contextlib.redirect_stdout(sys.stderr):  # polygraphy logs to stdout; the markdown goes there
    from polygraphy.comparator import IterationResult, RunResults
    from polygraphy.json import save_json

RTOL, ATOL = "1e-4", "1e-5"


def fixtures(bundle):
    """[(feed {name: array}, outputs {name: array})] of the bundle's fixtures."""
    out = []
    for d in sorted(bundle.glob("test_data_set_*"), key=lambda p: int(p.name.rsplit("_", 1)[1])):
        def read(pattern):
            res = {}
            for f in sorted(d.glob(pattern), key=lambda p: int(p.stem.rsplit("_", 1)[1])):
                t = onnx.load_tensor(str(f))
                res[t.name] = numpy_helper.to_array(t)
            return res
        out.append((read("input_*.pb"), read("output_*.pb")))
    return out


def measure(cmd, reps):
    best = None
    for _ in range(reps):
        t0 = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True)
        t = time.perf_counter() - t0
        best = t if best is None or t < best else best
    timed = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], capture_output=True, text=True)
    rss_kib = int(timed.stderr.strip().splitlines()[-1])
    return best, rss_kib, r


def main():
    binary, bundle = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    polygraphy = shutil.which("polygraphy", path=str(pathlib.Path(sys.executable).parent))
    if polygraphy is None:
        sys.exit("bench/peers.py: no polygraphy beside this python (run it with .venv-torch2/bin/python)")
    fx = fixtures(bundle)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="peers-"))
    try:
        with contextlib.redirect_stdout(sys.stderr):
            save_json([feed for feed, _ in fx], str(tmp / "inputs.json"))
            results = RunResults()
            results.append(("eager", [IterationResult(outputs=outs, runner_name="eager") for _, outs in fx]))
            results.save(str(tmp / "outputs.json"))
        # the same ONNX Runtime for both: the onnxruntime package's own library
        ours_cmd = [str(binary), "check", str(bundle), "--rtol", RTOL, "--atol", ATOL, "--format", "json",
                    "--ort-lib", str(ortlib.find()[0])]
        poly_cmd = [polygraphy, "run", str(bundle / "model.onnx"), "--onnxrt",
                    "--load-inputs", str(tmp / "inputs.json"), "--load-outputs", str(tmp / "outputs.json"),
                    "--rtol", RTOL, "--atol", ATOL]
        t_ours, m_ours, r_ours = measure(ours_cmd, reps)
        t_poly, m_poly, r_poly = measure(poly_cmd, reps)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    verdict = json.loads(r_ours.stdout)["verdict"] if r_ours.stdout.strip() else f"exit {r_ours.returncode}"
    env = json.loads(r_ours.stdout).get("environment", {}) if r_ours.stdout.strip() else {}
    poly_text = r_poly.stdout + r_poly.stderr
    poly_pass = r_poly.returncode == 0 and "PASSED" in poly_text and "FAILED" not in poly_text
    ort_py = __import__("onnxruntime").__version__
    print("## Peers: Polygraphy against check")
    print()
    print(f"One bundle ({bundle.name}: {len(fx)} fixtures), the same inputs and eager outputs, rtol {RTOL}, "
          f"atol {ATOL}; best of {reps}, peak RSS of one more run. `polygraphy run --onnxrt` "
          f"(polygraphy {__import__('polygraphy').__version__}, onnxruntime {ort_py} in Python) "
          "reads the fixtures from its JSON files, written beforehand; `onnxparity check` reads the bundle "
          f"and loads the same package's library (`--ort-lib`, ORT {env.get('ort_version', '?')} through the "
          "C API, in its worker process).")
    print()
    print("| command | verdict | time | peak RSS | time vs check | RSS vs check |")
    print("|---|---|---|---|---|---|")
    print(f"| onnxparity check | {verdict} | {t_ours:.3f} s | {m_ours / 1024:.0f} MiB | 1.00× | 1.00× |")
    print(f"| polygraphy run --onnxrt | {'pass' if poly_pass else 'fail'} | {t_poly:.3f} s | "
          f"{m_poly / 1024:.0f} MiB | {t_poly / t_ours:.2f}× | {m_poly / m_ours:.2f}× |")
    print()
    print("What each says on this bundle: check gives the verdict per fixture and output with the "
          "tolerance that would pass, lint findings and, on a failure, causes; polygraphy gives "
          "per-output error statistics and PASSED/FAILED per iteration.")


if __name__ == "__main__":
    main()
