#!/usr/bin/env python3
"""wheel_launch.py — what the pip command costs over the C tool it launches
(issue 33, docs/install.md).

    python3 bench/wheel_launch.py [--wheel W.whl] [--bundle DIR] [--runs N] [--json OUT]

Installs the wheel (default: build/wheel/onnxparity-*.whl, from `make wheel`)
into a fresh virtual environment over /usr/bin/python3 with nothing else,
then times, interleaved run by run, two commands both ways:
  native  the tool the wheel carries (site-packages/onnxparity/_native/bin/onnxparity)
  pip     the console entry pip wrote (venv/bin/onnxparity: Python starts,
          imports onnxparity._tool, execs the tool)
  1. `--version`
  2. `check BUNDLE` (default examples/healthy: 3 fixtures through ONNX Runtime)
Each row: the median wall time of each (after one warm-up run), their ratio,
the difference, and whether the pip command is within the budget
1.2 x native + 60 ms.  Exit 0 within budget, 1 outside, 2 usage or set-up
failure.  A markdown table on stdout (one row per command, as
docs/benchmarks.md draws them); --json OUT writes the figures.
"""
import argparse
import glob
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
RATIO, SLACK = 1.2, 0.060  # the budget: pip <= RATIO * native + SLACK seconds


def die(msg: str) -> None:
    print(f"wheel_launch: {msg}", file=sys.stderr)
    sys.exit(2)


def clean_env() -> dict:
    return {k: v for k, v in os.environ.items()
            if not k.startswith("ONNXPARITY_") and k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def install(wheel: str, where: pathlib.Path) -> pathlib.Path:
    env = where / "env"
    for cmd in (["/usr/bin/python3", "-m", "venv", str(env)],
                [str(env / "bin" / "python"), "-m", "pip", "install", "-q", "--no-index", "--no-cache-dir",
                 "--disable-pip-version-check", wheel]):
        r = subprocess.run(cmd, capture_output=True, text=True, env=clean_env())
        if r.returncode:
            die(f"{' '.join(cmd[:3])}: {r.stderr.strip()[-500:]}")
    return env


def once(cmd: list, cwd: str) -> float:
    t = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=clean_env(), cwd=cwd)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        die(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.decode(errors='replace').strip()[-300:]}")
    return dt


def measure(native: list, pip: list, runs: int, cwd: str) -> dict:
    once(native, cwd), once(pip, cwd)  # warm-up: page cache, the .pyc files
    tn, tp = [], []
    for _ in range(runs):
        tn.append(once(native, cwd))
        tp.append(once(pip, cwd))
    n, p = statistics.median(tn), statistics.median(tp)
    return {"native_s": n, "pip_s": p, "ratio": p / n, "overhead_s": p - n,
            "limit_s": RATIO * n + SLACK, "within": p <= RATIO * n + SLACK, "runs": runs}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wheel", help="the wheel (default build/wheel/onnxparity-*.whl)")
    ap.add_argument("--bundle", default=str(ROOT / "examples" / "healthy"))
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--json", metavar="OUT")
    a = ap.parse_args()
    if a.runs < 1:
        die("--runs must be >= 1")
    wheel = a.wheel
    if not wheel:
        found = sorted(glob.glob(str(ROOT / "build" / "wheel" / "onnxparity-*.whl")))
        if len(found) != 1:
            die(f"{len(found)} wheels in build/wheel/: run `make wheel`, or give --wheel")
        wheel = found[0]
    if not os.path.isdir(a.bundle):
        die(f"{a.bundle}: not a folder")
    with tempfile.TemporaryDirectory(prefix="onp-wheel-bench-") as tmp:
        env = install(wheel, pathlib.Path(tmp))
        sites = glob.glob(str(env / "lib" / "python3*" / "site-packages" / "onnxparity" / "_native" / "bin" /
                              "onnxparity"))
        if len(sites) != 1:
            die(f"{wheel}: no tool in the installed package")
        native, pip = sites[0], str(env / "bin" / "onnxparity")
        rows = {}
        for name, args in (("--version", ["--version"]),
                           (f"check {os.path.basename(a.bundle.rstrip('/'))}", ["check", a.bundle])):
            rows[name] = measure([native] + args, [pip] + args, a.runs, tmp)
    print(f"| command | native (ms) | pip command (ms) | ratio | overhead (ms) | "
          f"budget {RATIO} x native + {SLACK * 1000:.0f} ms |")
    print("|---|---:|---:|---:|---:|---|")
    for name, m in rows.items():
        print(f"| `onnxparity {name}` | {m['native_s'] * 1e3:.1f} | {m['pip_s'] * 1e3:.1f} | {m['ratio']:.2f} | "
              f"{m['overhead_s'] * 1e3:+.1f} | {'within' if m['within'] else 'OUTSIDE'} "
              f"({m['limit_s'] * 1e3:.1f} ms) |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"wheel": os.path.basename(wheel), "budget": {"ratio": RATIO, "slack_s": SLACK},
                       "rows": rows}, f, indent=1)
    return 0 if all(m["within"] for m in rows.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
