"""Make the example bundles shipped in examples/ (run with /usr/bin/python3,
which has Debian's torch).  Each bundle uses the ONNX test-data layout:
model.onnx + test_data_set_K/input_0.pb, output_0.pb with the eager outputs.

  examples/healthy/    a small CNN exported in eval mode: parity holds
  examples/training/   the same CNN exported while still in training mode
                       (Dropout live, BatchNorm on batch statistics): the
                       classic export bug

Both are written by the project's own capture (python/onnxparity), with
fixtures at batch sizes 1, 2 and 4; fixed seeds make re-running reproduce the
models' weights and fixtures.
"""
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python"))
import onnxparity  # noqa: E402

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
    """Capture `model` with the project's own capture package."""
    gen = torch.Generator().manual_seed(1)
    fixtures = [torch.randn(batch, 3, 16, 16, generator=gen) for batch in (1, 2, 4)]
    model.train(training)
    onnxparity.capture(model, fixtures, ROOT / name, input_names=["image"], output_names=["logits"],
                       opset=13, allow_training=training)


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
