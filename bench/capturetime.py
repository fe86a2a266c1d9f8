"""bench/capturetime.py OUT_DIR REPS [--header] — what a capture costs
against what a user does without onnxparity: one plain `torch.onnx.export`
(the same exporter, dynamic batch, traced on the same fixture) plus one
eager forward per fixture under no_grad.  The goal (issue #16): capture
within 1.5x of that.

Captures torchvision's resnet18 over 8 and over 32 fixtures of two shapes
and an nn.TransformerEncoder over 8 (random weights, this interpreter's
torch and its default exporter), with the float64 reference off and at its
default, REPS times each, and prints Markdown table rows (the section head
and the table's header first with --header): median wall times and the
ratios.  bench/run.sh calls it once per torch (Debian's 1.13 with the
legacy exporter, the venv's 2.x with dynamo) and joins the rows.
"""
import inspect
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


CASES = ((resnet18, 8), (resnet18, 32), (transformer, 8))


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


def capture(model, fixtures, out, exporter, reference64):
    if out.exists():
        shutil.rmtree(out)
    t0 = time.perf_counter()
    onnxparity.capture(model, fixtures, out, exporter=exporter, reference64=reference64, progress=False)
    return time.perf_counter() - t0


def header():
    print("## capture time against a plain export")
    print()
    print("`onnxparity.capture` (intermediates on) against what a user runs without it: one "
          "`torch.onnx.export` traced on the first fixture (dynamic batch) plus one eager forward "
          "per fixture under `no_grad`, with the same torch and exporter; median of the runs "
          "each.  Goal (issue #16): capture within %.1f× of the plain run." % GOAL)
    print()
    print("| torch, exporter | model | plain export + forwards | capture, reference64 off | ratio "
          "| capture, default reference64 | ratio | goal %.1f× (off / default) |" % GOAL)
    print("|---|---|---|---|---|---|---|---|")


def footer():
    print()
    print("Beyond the plain run, a capture makes a snapshot of the model (and compares the whole "
          "state with it after every forward), reruns the first fixture of each shape group for "
          "determinism, keeps and writes the intermediates of every fixture, and, at the default, "
          "runs the float64 reference on the first two fixtures of each shape group: with 8 "
          "fixtures in two shapes that is half of them, and a float64 forward on a CPU costs "
          "about three float32 ones (section above).  Over 32 fixtures the fixed costs "
          "spread.")


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
        t_plain = statistics.median(plain(model, fixtures, out_dir / "plain.onnx", exporter)
                                    for _ in range(reps))
        t_off = statistics.median(capture(model, fixtures, out_dir / "cap", exporter, 0) for _ in range(reps))
        t_def = statistics.median(capture(model, fixtures, out_dir / "cap", exporter, 2) for _ in range(reps))
        r_off, r_def = t_off / t_plain, t_def / t_plain
        verdict = " / ".join("met" if r <= GOAL else "**not met**" for r in (r_off, r_def))
        print("| %s, %s | %s | %.2f s | %.2f s | %.2f× | %.2f s | %.2f× | %s |"
              % (torch.__version__.split("+")[0], exporter, label, t_plain, t_off, r_off, t_def,
                 r_def, verdict), flush=True)
    shutil.rmtree(out_dir / "cap", ignore_errors=True)


if __name__ == "__main__":
    main()
