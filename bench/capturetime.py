"""bench/capturetime.py OUT_DIR REPS — what a capture costs against what a
user does without onnxparity: one plain `torch.onnx.export` (the same
exporter, dynamic batch, traced on the same fixture) plus one eager forward
per fixture under no_grad.  The goal (issue #16): capture within 1.5x of that.

Captures torchvision's resnet18 and an nn.TransformerEncoder (random weights,
this interpreter's torch) over 8 fixtures of two shapes, with the float64
reference off and at its default, REPS times each, and prints a Markdown
section for docs/benchmarks.md: median wall times and the ratio.  Called by
bench/run.sh.
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


def resnet18():
    import torchvision
    torch.manual_seed(0)
    m = torchvision.models.resnet18().eval()
    g = torch.Generator().manual_seed(1)
    return "resnet18 (8 fixtures of 2 and 4 images, 112x112)", m, [
        torch.randn(b, 3, 112, 112, generator=g) for b in (2, 4) * 4]


def transformer():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=128, nhead=4, dim_feedforward=256,
                                             batch_first=True)
    m = torch.nn.TransformerEncoder(layer, num_layers=4).eval()
    g = torch.Generator().manual_seed(1)
    return "TransformerEncoder (4 layers, d 128; 8 fixtures of 2 and 4 x 32 tokens)", m, [
        torch.randn(b, 32, 128, generator=g) for b in (2, 4) * 4]


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


def main():
    out_dir = pathlib.Path(sys.argv[1])
    reps = int(sys.argv[2])
    out_dir.mkdir(parents=True, exist_ok=True)
    warnings.simplefilter("ignore")
    exporter = "dynamo" if _export.has_dynamo_exporter() else "legacy"
    print("## capture time against a plain export")
    print()
    print("`onnxparity.capture` (torch %s, %s exporter, intermediates on) against what a user runs "
          "without it: one `torch.onnx.export` traced on the first fixture (dynamic batch) plus one "
          "eager forward per fixture under `no_grad`; median of %d runs each.  Goal (issue #16): "
          "capture within %.1f× of the plain run." % (torch.__version__, exporter, reps, GOAL))
    print()
    print("| model | plain export + forwards | capture, reference64 off | ratio | capture, default "
          "reference64 | ratio | goal %.1f× (off / default) |" % GOAL)
    print("|---|---|---|---|---|---|---|")
    for make in (resnet18, transformer):
        label, model, fixtures = make()
        t_plain = statistics.median(plain(model, fixtures, out_dir / "plain.onnx", exporter)
                                    for _ in range(reps))
        t_off = statistics.median(capture(model, fixtures, out_dir / "cap", exporter, 0) for _ in range(reps))
        t_def = statistics.median(capture(model, fixtures, out_dir / "cap", exporter, 2) for _ in range(reps))
        r_off, r_def = t_off / t_plain, t_def / t_plain
        verdict = " / ".join("met" if r <= GOAL else "**not met**" for r in (r_off, r_def))
        print("| %s | %.2f s | %.2f s | %.2f× | %.2f s | %.2f× | %s |"
              % (label, t_plain, t_off, r_off, t_def, r_def, verdict))
    shutil.rmtree(out_dir / "cap", ignore_errors=True)
    print()
    print("Beyond the plain run, a capture makes a snapshot of the model (and compares the state "
          "after every forward), reruns the first fixture of each shape group for determinism, "
          "keeps and writes the intermediates, and, at the default, runs the float64 reference on "
          "the first two fixtures of each shape group (a float64 forward on a CPU costs several "
          "float32 ones; section above).")


if __name__ == "__main__":
    main()
