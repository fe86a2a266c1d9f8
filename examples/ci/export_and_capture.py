"""The export-and-capture step of the CI recipe (docs/ci.md): a small CNN
with fixed weights, exported in eval mode and captured with its eager
truth over six fixtures (batch sizes 1, 2 and 4, twice).  Fixed seeds: every
run writes the same model and fixtures.

    PYTHONPATH=python /usr/bin/python3 examples/ci/export_and_capture.py out/bundle

A real project puts its own model and real inputs here (docs/capture.md);
the recipe around it stays the same.
"""
import sys

import torch

import onnxparity


class SmallCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1))
        self.head = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(8, 5))

    def forward(self, x):
        return self.head(self.features(x))


def main(out):
    torch.manual_seed(0)
    model = SmallCNN().eval()  # eval(): never export in training mode
    gen = torch.Generator().manual_seed(1)
    fixtures = [torch.randn(b, 3, 12, 12, generator=gen) for b in (1, 2, 4, 1, 2, 4)]
    onnxparity.capture(model, fixtures, out, input_names=["image"], output_names=["logits"],
                       opset=13, reference64="all")


if __name__ == "__main__":
    main(sys.argv[1])
