"""Small models for the capture tests (no tests here).  Importable by the CLI
test as ``test_capture_models:FACTORY`` with tests/py on PYTHONPATH."""
import torch
from torch import nn


def _seeded(seed=0):
    torch.manual_seed(seed)


def _randomize_bn(model):
    """Non-trivial running statistics, so train and eval BatchNorm differ."""
    g = torch.Generator().manual_seed(123)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm):
                m.running_mean.copy_(torch.rand(m.running_mean.shape, generator=g) - 0.5)
                m.running_var.copy_(torch.rand(m.running_var.shape, generator=g) + 0.5)
    return model


class SmallNet(nn.Module):
    def __init__(self, classes=5):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
            nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.5), nn.Linear(16, classes))

    def forward(self, x):
        return self.head(self.features(x))


def small_net():
    """Factory for the CLI test: a random-weight SmallNet in eval mode."""
    _seeded(0)
    return _randomize_bn(SmallNet()).eval()


def small_net_training():
    _seeded(0)
    return _randomize_bn(SmallNet()).train()


class BackboneHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
            nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 16), nn.ReLU(),
                                  nn.Dropout(0.2), nn.Linear(16, 4))

    def forward(self, x):
        return self.head(self.backbone(x))


def backbone_head():
    _seeded(1)
    return _randomize_bn(BackboneHead()).eval()


class Branchy(nn.Module):
    """Python control flow on a tensor: the trace keeps one branch."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        y = self.lin(x)
        if x.sum() > 0:  # BRANCH-LINE
            return y * 2
        return y - 1


class ModuleBranch(nn.Module):
    """Data-dependent choice of submodule."""

    def __init__(self):
        super().__init__()
        self.pos = nn.Linear(4, 4)
        self.neg = nn.Linear(4, 4)

    def forward(self, x):
        if x.mean() > 0:
            return self.pos(x)
        return self.neg(x)


class TwoInputs(nn.Module):
    """Positional and keyword inputs, and a dict output."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(6, 3)
        self.b = nn.Linear(2, 3)

    def forward(self, x, bias=None, scale=None):
        out = self.a(x) + self.b(scale)
        if bias is not None:
            out = out + bias
        return {"sum": out, "prod": out * scale.sum(dim=1, keepdim=True)}


class UnusedInput(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x, unused, y):
        return self.lin(x) + y


class Raises(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        raise RuntimeError("deliberate failure in forward")


class NonTensorOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x), "label"


class Noisy(nn.Module):
    """Not reproducible run to run: noise drawn inside forward."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x) + torch.rand_like(x) * 1e-3


def transformer_encoder():
    _seeded(2)
    layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, dropout=0.1,
                                       batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=2).eval()


def branchy():
    """Factory for the CLI test of the fallback: dynamo refuses the branch."""
    _seeded(0)
    return Branchy().eval()
