"""bench/capture64.py OUT_DIR REPS — what the float64 reference costs the capture.

Captures torchvision's resnet18 and an nn.TransformerEncoder (random
weights, /usr/bin/python3's torch) with `reference64` off, at its default
(the first 2 fixtures of each shape group) and on every fixture, REPS times
each, and prints a Markdown section for docs/benchmarks.md: the median wall
time of each, the ratio to `off`, and the float64 passes' own seconds as
parity.json records them.  Called by bench/run.sh.
"""
import json
import pathlib
import shutil
import statistics
import sys
import time
import warnings

import torch

import onnxparity


def resnet18():
    import torchvision
    torch.manual_seed(0)
    m = torchvision.models.resnet18().eval()
    g = torch.Generator().manual_seed(1)
    return "resnet18 (4 fixtures of 1 and 4 images, 112x112)", m, [
        torch.randn(b, 3, 112, 112, generator=g) for b in (1, 4, 1, 4)]


def transformer():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=128, nhead=4, dim_feedforward=256,
                                             batch_first=True)
    m = torch.nn.TransformerEncoder(layer, num_layers=4).eval()
    g = torch.Generator().manual_seed(1)
    return "TransformerEncoder (4 layers, d 128; 4 fixtures of 2 and 4 x 32 tokens)", m, [
        torch.randn(b, 32, 128, generator=g) for b in (2, 4, 2, 4)]


def one(model, fixtures, out, policy):
    if out.exists():
        shutil.rmtree(out)
    t0 = time.perf_counter()
    doc = onnxparity.capture(model, fixtures, out, reference64=policy, intermediates="all")
    dt = time.perf_counter() - t0
    return dt, (doc.get("noise") or {}).get("seconds") or 0.0


def main():
    out_dir = pathlib.Path(sys.argv[1])
    reps = int(sys.argv[2])
    out_dir.mkdir(parents=True, exist_ok=True)
    warnings.simplefilter("ignore")
    policies = [("off", 0), ("default (2 per shape group)", 2), ("every fixture", "all")]
    print("## capture: the float64 reference pass")
    print()
    print("`onnxparity.capture` (torch %s, legacy exporter, intermediates on) with `reference64` "
          "off, at its default and on every fixture; median of %d runs each.  The float64 pass "
          "runs a `.double()` copy of the model once per covered fixture, with forward hooks for "
          "the intermediates' statistics." % (torch.__version__, reps))
    print()
    print("| model | reference64 | capture time | vs off | float64 passes (parity.json) |")
    print("|---|---|---|---|---|")
    for make in (resnet18, transformer):
        label, model, fixtures = make()
        base = None
        for name, policy in policies:
            runs = [one(model, fixtures, out_dir / "cap", policy) for _ in range(reps)]
            t = statistics.median(r[0] for r in runs)
            f64 = statistics.median(r[1] for r in runs)
            base = base or t
            print("| %s | %s | %.2f s | %.2f× | %.2f s |" % (label, name, t, t / base, f64))
    shutil.rmtree(out_dir / "cap", ignore_errors=True)
    print()
    print("The extra cost is the float64 passes themselves (the last column) plus the model's "
          "float64 copy and the statistics; the default covers at most two fixtures per shape "
          "group (here both groups' two fixtures, so it equals every fixture), so with hundreds "
          "of fixtures its cost stays that of a few forwards.")


if __name__ == "__main__":
    main()
