"""bench/tensorsize.py BIN BARE ORT_LIB WORK REPS SIZE... — check at size
against a bare ONNX Runtime run of the same model and fixture (issue 34,
Must-show 1).

The model: torch.nn.SiLU (x * sigmoid(x), the MLP activation) over a
[1, 16, H, W] float32 input, captured by onnxparity.capture under
/usr/bin/python3's torch, one fixture, twice per size: with the float64
reference (reference64/output_0.pb beside the fixture) and without it.
Elementwise, so ONNX Runtime's run is about one pass over the bytes and
every extra pass of check shows at full weight; and a model check passes
(a GroupNorm over 1.6 M-element groups fails here: ONNX Runtime's float32
statistics drift 1e-3 from float64 where eager's stay at 7e-7, and check
then bisects, which is not the cost this compares).  SIZE is one of 1MB, 100MB, 1GB: the bytes of the
input, and so of the output (MiB).

Per bundle, each command in its own process, run in turn (bare, check,
bare, check, ...) 4 x REPS times at 1MB and REPS times above: the best wall
time of each (time.perf_counter around the process), and the peak RSS of one
more run of each under GNU time:
  bare   BARE ORT_LIB BUNDLE --read-expected (bench/barecheck.c: the same
         ORT library and session options, the input read, one Run, the
         expected output and its float64 reference read while ORT's output
         is held, nothing compared)
  check  BIN check BUNDLE --ort-lib ORT_LIB
Prints a markdown table's rows (no header) on stdout, one per bundle, and a
last line "TARGETS met/total" for the summary.
"""
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

SHAPES = {"1MB": (1, 16, 128, 128), "100MB": (1, 16, 1600, 1024), "1GB": (1, 16, 4096, 4096)}
TIME_TARGET, RSS_TARGET = 1.3, 1.5


def capture(out, shape, ref64):
    """Capture SiLU over one input of `shape` into `out` (once)."""
    if (out / "model.onnx").exists():
        return
    code = ("import sys, torch, onnxparity\n"
            "torch.manual_seed(0)\n"
            "m = torch.nn.SiLU().eval()\n"
            f"x = torch.randn({shape!r}, generator=torch.Generator().manual_seed(1))\n"
            f"onnxparity.capture(m, [x], sys.argv[1], reference64={ref64!r}, intermediates=False)\n")
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    r = subprocess.run(["/usr/bin/python3", "-c", code, str(tmp)], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"tensorsize: capture of {out.name} failed:\n{r.stderr[-3000:]}")
    tmp.rename(out)


def timed(cmd):
    """(seconds, peak KiB, exit code) of one run under GNU time."""
    with tempfile.NamedTemporaryFile("r") as tf:
        r = subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", tf.name, *cmd],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        t, kib = tf.read().split()[-2:]
    if r.returncode not in (0, 1):
        sys.exit(f"tensorsize: {' '.join(cmd)} exited {r.returncode}:\n{r.stderr[-2000:]}")
    return float(t), int(kib), r.returncode


def wall(cmd):
    """Wall seconds of one bare run (time.perf_counter around the process:
    GNU time's %e has 10 ms steps, a quarter of a 1 MiB run)."""
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t = time.perf_counter() - t0
    if r.returncode not in (0, 1):
        sys.exit(f"tensorsize: {' '.join(cmd)} exited {r.returncode}")
    return t


def side_by_side(bare, check, reps):
    """Best wall time of each over `reps` runs taken in turn (bare, check,
    bare, ...: a load that comes and goes on this shared machine falls on
    both alike), then one run of each under GNU time for its peak RSS and
    check's exit code."""
    tb = tc = float("inf")
    for _ in range(reps):
        tb = min(tb, wall(bare))
        tc = min(tc, wall(check))
    _, mb, _ = timed(bare)
    _, mc, rc = timed(check)
    return tb, mb, tc, mc, rc


def main():
    binary, bare, ortlib, work, reps = sys.argv[1:6]
    reps = int(reps)
    work = pathlib.Path(work)
    work.mkdir(parents=True, exist_ok=True)
    met = total = 0
    for size in sys.argv[6:]:
        for ref64 in (True, False):
            b = work / f"silu-{size}-{'ref64' if ref64 else 'noref'}"
            capture(b, SHAPES[size], ref64)
            has_ref = (b / "test_data_set_0" / "reference64" / "output_0.pb").exists()
            on_disk = sum(f.stat().st_size for f in b.rglob("*") if f.is_file()) / 2**20
            n = 4 * reps if size == "1MB" else reps  # a 0.05 s command needs more tries
            tb, mb, tc, mc, rc = side_by_side([bare, ortlib, str(b), "--read-expected"],
                                              [binary, "check", str(b), "--ort-lib", ortlib], n)
            rt, rm = tc / tb, mc / mb
            ok = rt <= TIME_TARGET and rm <= RSS_TARGET
            met += ok
            total += 1
            print(f"| {size} | {'yes' if has_ref else 'no'} | {on_disk:.0f} MiB | {tb:.3f} s | "
                  f"{mb / 1024:.0f} MiB | {tc:.3f} s | {mc / 1024:.0f} MiB | "
                  f"{'pass' if rc == 0 else 'fail'} | {'**' if rt > TIME_TARGET else ''}{rt:.2f}×"
                  f"{'**' if rt > TIME_TARGET else ''} | {'**' if rm > RSS_TARGET else ''}{rm:.2f}×"
                  f"{'**' if rm > RSS_TARGET else ''} |", flush=True)
    print(f"TARGETS {met}/{total}")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    main()
