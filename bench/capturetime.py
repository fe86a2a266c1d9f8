"""bench/capturetime.py OUT_DIR REPS [--header] — what a capture costs
against what a user does without onnxparity: one plain `torch.onnx.export`
(the same exporter, dynamic batch, traced on the same fixture) plus one
eager forward per fixture under no_grad.  The goal (issue #16): capture
within 1.5x of that.

Captures torchvision's resnet18 over 8, 32 and 128 fixtures of two shapes
and an nn.TransformerEncoder over 8 and 32 (random weights, this
interpreter's torch and its default exporter) at the defaults, with the
float64 reference off, and with every fixture's intermediates stored,
REPS times each, interleaved (each round: the plain run, then one capture
per column, after one warm-up plain run), and prints Markdown table rows
(the section head and the table's header first with --header): median wall
times and the ratios of the medians.
The bounded extras (the float64 pass, the determinism rerun, the stored
intermediates) cover the first fixtures of each shape group, so the ratio
falls as the fixtures grow: the rows show how fast.  bench/run.sh calls it once per torch (Debian's 1.13 with the
legacy exporter, the venv's 2.x with dynamo) and joins the rows.
"""
import contextlib
import inspect
import os
import pathlib
import shutil
import statistics
import sys
import time
import warnings

import torch

import onnxparity
from onnxparity import _export

GOAL = 1.5


def resnet18(n):
    import torchvision
    torch.manual_seed(0)
    m = torchvision.models.resnet18().eval()
    g = torch.Generator().manual_seed(1)
    return "resnet18, %d fixtures of 2 and 4 images, 112x112" % n, m, [
        torch.randn(b, 3, 112, 112, generator=g) for b in (2, 4) * (n // 2)]


def transformer(n):
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=128, nhead=4, dim_feedforward=256,
                                             batch_first=True)
    m = torch.nn.TransformerEncoder(layer, num_layers=4).eval()
    g = torch.Generator().manual_seed(1)
    return "TransformerEncoder (4 layers, d 128), %d fixtures of 2 and 4 x 32 tokens" % n, m, [
        torch.randn(b, 32, 128, generator=g) for b in (2, 4) * (n // 2)]


CASES = ((resnet18, 8), (resnet18, 32), (resnet18, 128), (transformer, 8), (transformer, 32))

# the columns: capture()'s options beyond the defaults
SETTINGS = ({}, {"reference64": 0}, {"intermediates": "all"})


def plain(model, fixtures, path, exporter):
    """torch.onnx.export traced on fixture 0 (dynamic batch) + one eager forward per fixture."""
    t0 = time.perf_counter()
    kw = dict(input_names=["x"], output_names=["y"])
    if exporter == "legacy":
        kw["dynamic_axes"] = {"x": {0: "batch"}, "y": {0: "batch"}}
        if "dynamo" in inspect.signature(torch.onnx.export).parameters:
            kw["dynamo"] = False
    else:
        from torch.export import Dim
        kw.update(dynamo=True, dynamic_shapes={"src" if "src" in inspect.signature(model.forward).parameters
                                               else "x": {0: Dim.DYNAMIC}})
    torch.onnx.export(model, (fixtures[0],), str(path), **kw)
    with torch.no_grad():
        for x in fixtures:
            model(x)
    return time.perf_counter() - t0


def capture(model, fixtures, out, exporter, options):
    if out.exists():
        shutil.rmtree(out)
    os.sync()  # the last run's files are not this one's writeback
    t0 = time.perf_counter()
    onnxparity.capture(model, fixtures, out, exporter=exporter, progress=False, **options)
    return time.perf_counter() - t0


def ratio(r):
    return "%.2f×" % r if r <= GOAL else "**%.2f×**" % r


def header():
    print("## capture time against a plain export")
    print()
    print("`onnxparity.capture` against what a user runs without it: one "
          "`torch.onnx.export` traced on the first fixture (dynamic batch) plus one eager forward "
          "per fixture under `no_grad`, with the same torch and exporter; median of the runs "
          "each, interleaved (each round runs the plain export and then each capture column).  "
          "Goal (issue #16): capture within %.1f× of the plain run." % GOAL)
    print()
    print("| torch, exporter | model | plain export + forwards | capture (defaults) | ratio "
          "| reference64 off | ratio | intermediates=\"all\" | ratio |")
    print("|---|---|---|---|---|---|---|---|---|")


def footer():
    print()
    print("Goal %.1f×.  Beyond the plain run, a capture at its defaults makes a snapshot of the "
          "model and checks the state after every forward; its bounded extras cover the first "
          "two fixtures of each shape group: the float64 reference (a float64 forward of resnet18 "
          "on a CPU costs two to four float32 ones, channels_last included, plus the statistics "
          "of every intermediate), the "
          "stored intermediates (resnet18 at 112×112: 41 files, 10 MB at batch 2 and 20 MB at "
          "batch 4) and, on the first of them, the determinism rerun.  With two shape groups "
          "that is 4 fixtures at any count: half of 8, a thirty-second of 128, so the ratio "
          "falls toward the per-fixture cost (a forward on a copy of the fixture, the state "
          "check, its input and output files).  `intermediates=\"all\"` stores every "
          "fixture's, for bisect against eager on every fixture (the other fixtures of a "
          "default bundle bisect against ONNX Runtime at opt-level disable).  Each timed "
          "capture starts after an `os.sync()`.  On a shared 2-core VM the ratios move between "
          "runs by up to about 0.2 (the dynamo export alone varies by a second): a row "
          "within 0.2 of 1.5× is neither a clear pass nor a clear fail.  Where the plain run "
          "is short, the bounded extras alone come near half of it: under torch 1.13 the "
          "legacy export of resnet18 takes 0.35 to 0.5 s, and the float64 forwards of the 4 "
          "covered fixtures about as long (a float64 forward at batch 4 costs 2.3 float32 "
          "ones), so at 8 fixtures the defaults cannot come within 1.5× of the plain run "
          "however little else the capture does, and at 32 they sit at its edge; the dynamo "
          "export of the same model takes 2 to 3 s, and the same extras are a sixth to a "
          "third of it.  `reference64=1` halves the float64 part, "
          "`reference64=0` removes it (the judge then falls back to its estimate from ONNX "
          "Runtime itself, docs/compare.md)." % GOAL)


def main():
    out_dir = pathlib.Path(sys.argv[1])
    reps = int(sys.argv[2])
    if "--header" in sys.argv[3:]:
        header()
        return
    if "--footer" in sys.argv[3:]:
        footer()
        return
    out_dir.mkdir(parents=True, exist_ok=True)
    warnings.simplefilter("ignore")
    exporter = "dynamo" if _export.has_dynamo_exporter() else "legacy"
    for make, n in CASES:
        label, model, fixtures = make(n)
        cap = out_dir / "cap"
        with contextlib.redirect_stdout(sys.stderr):  # torch.onnx's own progress lines
            plain(model, fixtures, out_dir / "plain.onnx", exporter)  # warm-up: first export's imports
            t_plain, times = [], [[] for _ in SETTINGS]
            for _ in range(reps):  # interleaved: a slow spell of the machine hits every column
                t_plain.append(plain(model, fixtures, out_dir / "plain.onnx", exporter))
                for col, s in zip(times, SETTINGS):
                    col.append(capture(model, fixtures, cap, exporter, s))
        t_plain = statistics.median(t_plain)
        times = [statistics.median(col) for col in times]
        cells = " | ".join("%.2f s | %s" % (t, ratio(t / t_plain)) for t in times)
        print("| %s, %s | %s | %.2f s | %s |" % (torch.__version__.split("+")[0], exporter, label,
                                                 t_plain, cells), flush=True)
    shutil.rmtree(out_dir / "cap", ignore_errors=True)


if __name__ == "__main__":
    main()
