"""Make the example bundles shipped in examples/ (run with /usr/bin/python3,
which has Debian's torch).  Each bundle uses the ONNX test-data layout:
model.onnx + test_data_set_K/input_0.pb, output_0.pb with the eager outputs.

  examples/healthy/    a small CNN exported in eval mode: parity holds
  examples/training/   the same CNN exported while still in training mode
                       (Dropout live, BatchNorm on batch statistics): the
                       classic export bug

Until the capture package (python/onnxparity) lands, this script is the
capture: deterministic (fixed seeds), so re-running it reproduces the files.
"""
import pathlib
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper

ROOT = pathlib.Path(__file__).resolve().parents[1] / "examples"


class SmallCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
            torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(8, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1))
        self.head = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Dropout(0.5), torch.nn.Linear(16, 10))

    def forward(self, x):
        return self.head(self.features(x))


def write_bundle(name, model, training):
    out = ROOT / name
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    model.train(training)
    example = torch.randn(2, 3, 16, 16)
    mode = torch.onnx.TrainingMode.TRAINING if training else torch.onnx.TrainingMode.EVAL
    torch.onnx.export(model, example, str(out / "model.onnx"), input_names=["image"],
                      output_names=["logits"], dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}},
                      opset_version=13, training=mode, do_constant_folding=not training)
    model.eval()  # the eager truth is what the user meant: inference
    gen = torch.Generator().manual_seed(1)
    for k, batch in enumerate((1, 2, 4)):
        x = torch.randn(batch, 3, 16, 16, generator=gen)
        with torch.no_grad():
            y = model(x)
        d = out / f"test_data_set_{k}"
        d.mkdir(exist_ok=True)
        (d / "input_0.pb").write_bytes(numpy_helper.from_array(x.numpy(), "image").SerializeToString())
        (d / "output_0.pb").write_bytes(numpy_helper.from_array(y.numpy(), "logits").SerializeToString())


def main():
    torch.manual_seed(0)
    model = SmallCNN()
    # non-trivial BatchNorm statistics, so training vs eval mode really differ
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
    write_bundle("healthy", model, training=False)
    write_bundle("training", model, training=True)
    print(f"wrote {ROOT}/healthy and {ROOT}/training", file=sys.stderr)


if __name__ == "__main__":
    main()
