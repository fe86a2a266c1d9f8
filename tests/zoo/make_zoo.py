"""Generate the diagnose zoo: small real torch exports, each either healthy or
with one planted defect, plus zoo.json saying what `onnxparity diagnose`
must find on each (docs/diagnose.md; issue 5, Must-show 2).

Run with Debian's torch and torchvision:

    PYTHONPATH=python /usr/bin/python3 tests/zoo/make_zoo.py OUT_DIR [--onnxparity BIN]

The binary (default: $ONNXPARITY_BIN, else build/onnxparity) is needed for
one bundle only: graph-optimization, whose expected outputs are ONNX
Runtime's own at ORT_DISABLE_ALL (see that entry's "why").

zoo.json "bundles": name, verdict (pass|fail), cause (the expected top cause
id, null when healthy), node (strings the top cause's node must contain: the
planted node's module path and/or op_type; empty when nothing is planted in
a node), args (extra diagnose options), why, exporter (what the capture
used, from parity.json; null where parity.json is removed) and
expect_exporter / expect_fallback (what it must have used, and the words its
exporter_fallback must contain).  "left_out": bundles the current diagnose
gets wrong, with what it says instead (made only with --left-out).

Both exporters.  Under a torch with the dynamo exporter (torch 2.x) the
captures use it (exporter "auto"), and an entry's ``dynamo`` overrides say
what changes there: a defect torch.export refuses to export (a data-dependent
branch, BatchNorm in training mode) falls back to legacy, and the fallback
must name the construct; a defect only the legacy exporter makes (a traced
size, a truncating floor division, a frozen .item()) is captured with
exporter="legacy" on purpose, and a twin entry "<name>_dynamo" captures the
same model with the dynamo exporter, where it is healthy.

Cause ids covered: every one a CPU can produce.  `execution-provider` cannot
be in this zoo: it needs a second provider to disagree with, and the CPU-only
ONNX Runtime here has one (docs/diagnose.md).  `unknown` is what is left when
no rule explains a failure; nothing is planted for it.
"""
import argparse
import json
import os
import pathlib
import random
import shutil
import subprocess
import sys
import time
import warnings

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT / "python") not in sys.path:  # PYTHONPATH=python is the documented way
    sys.path.insert(0, str(ROOT / "python"))

import torch  # noqa: E402
import torchvision  # noqa: E402

import onnxparity  # noqa: E402
from onnxparity import _export  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import models3  # noqa: E402  (issue 35's architectures, shared with tests/py/test_judge_round3.py)

torch.set_num_threads(2)
DYNAMO = _export.has_dynamo_exporter()
_EXPORTER = ["auto"]  # the exporter of the entry being built


def capture(model, fixtures, out, **kw):
    """onnxparity.capture with the exporter the current entry asks for."""
    kw.setdefault("exporter", _EXPORTER[0])
    return onnxparity.capture(model, fixtures, out, **kw)
warnings.filterwarnings("ignore")


# --------------------------------------------------------------------------- inputs

def images(*batches, size=16, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(b, 3, size, size, generator=g) for b in batches]


def vectors(*batches, dim=12, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(b, dim, generator=g) for b in batches]


# --------------------------------------------------------------------------- models

class Block(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(c)
        self.conv2 = torch.nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(c)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(x + self.bn2(self.conv2(y)))


class ResNetish(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1, bias=False),
                                        torch.nn.BatchNorm2d(8), torch.nn.ReLU())
        self.block = Block(8)
        self.head = torch.nn.Linear(8, 5)

    def forward(self, x):
        return self.head(self.block(self.stem(x)).mean((2, 3)))


def trained_stats(model, shape=(8, 3, 16, 16)):
    """Give BatchNorm non-trivial running statistics, then eval()."""
    torch.manual_seed(1)
    model.train()
    with torch.no_grad():
        for _ in range(3):
            model(torch.randn(*shape) * 2 + 0.5)
    return model.eval()


class MLP(torch.nn.Module):
    """Linear - BatchNorm1d - ReLU - Dropout - Linear [- Dropout]."""

    def __init__(self, out_dropout=False):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(12, 16), torch.nn.BatchNorm1d(16),
                                       torch.nn.ReLU(), torch.nn.Dropout(0.5),
                                       torch.nn.Linear(16, 6))
        self.out_drop = torch.nn.Dropout(0.5) if out_dropout else None

    def forward(self, x):
        y = self.net(x)
        return self.out_drop(y) if self.out_drop is not None else y


class LiteralView(torch.nn.Module):
    """view(4, -1): a literal batch size written in the model."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        return self.conv(x).view(4, -1)


class TracedSizeView(torch.nn.Module):
    """int(y.shape[0]) is a Python int at trace time: the Reshape keeps it."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        return y.view(int(y.shape[0]), -1)


class Branchy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        if x.sum() > 0:  # resolved once, at trace time
            return y * 2
        return y - 1


class ItemScale(torch.nn.Module):
    """.item() turns a tensor into a Python number: traced as a constant."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(12, 6)

    def forward(self, x):
        s = x.abs().max().item()
        return self.fc(x / s)


class FloorDiv(torch.nn.Module):
    """int // int: torch floors, torch 1.13 exports a truncating Div."""

    def forward(self, x):
        return (x * 5) // 3


class Noisy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        return y + 0.1 * torch.randn_like(y)


class HandDropout(torch.nn.Module):
    """A dropout written by hand: live at inference whatever the mode."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(12, 6)

    def forward(self, x):
        y = self.fc(x)
        return y * (torch.rand_like(y) > 0.5).float() * 2


class PyRandomShift(torch.nn.Module):
    """The eager forward draws from Python's `random`: never the same twice;
    the trace keeps one draw as a constant."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(12, 6)

    def forward(self, x):
        return self.fc(x) + random.random()


class TinyEncoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32,
                                                 dropout=0.1, batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.head = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.head(self.encoder(x))


class BatchLoop(torch.nn.Module):
    """A Python loop over the batch: the trace unrolls it, one Gather per row."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(12, 6)

    def forward(self, x):
        return torch.stack([self.fc(x[i]) for i in range(x.shape[0])])


class FloatOfTensor(torch.nn.Module):
    """float(t): a tensor made a Python number at trace time."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(12, 6)

    def forward(self, x):
        return self.fc(x) * float(x.std())


class LenArange(torch.nn.Module):
    """len(x) is a Python int at trace time: arange keeps the traced batch."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(12, 6)

    def forward(self, x):
        return self.fc(x) + torch.arange(len(x), dtype=torch.float32)[:, None]


class SeqFlatten(torch.nn.Module):
    """x.reshape(b, int(x.shape[1]) * 16): the sequence length baked by the trace."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(16, 16)

    def forward(self, x):
        y = self.proj(x)
        return y.reshape(y.shape[0], int(y.shape[1]) * 16)


class SizeUpsample(torch.nn.Module):
    """interpolate(size=(int(h) * 2, int(w) * 2)): the image size baked by the trace."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        return torch.nn.functional.interpolate(y, size=(int(y.shape[2]) * 2, int(y.shape[3]) * 2),
                                               mode="nearest")


class ExpandLiteral(torch.nn.Module):
    """A learned bias expanded to int(x.shape[0]) rows: the trace keeps the number."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(12, 6)
        self.bias = torch.nn.Parameter(torch.randn(1, 6))

    def forward(self, x):
        return self.fc(x) + self.bias.expand(int(x.shape[0]), 6)


class PadToWindows(torch.nn.Module):
    """Pad the image to a multiple of 4 only when it is not one (decided in
    Python, as Swin decides its window padding), then split it into 4x4
    windows."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        h, w = y.shape[2], y.shape[3]
        if (h % 4 != 0) or (w % 4 != 0):
            y = torch.nn.functional.pad(y, (0, (4 - w % 4) % 4, 0, (4 - h % 4) % 4))
        b, c, hh, ww = y.shape
        return y.reshape(b, c, hh // 4, 4, ww // 4, 4).mean((3, 5))


class BernoulliMask(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(12, 6)

    def forward(self, x):
        y = self.fc(x)
        return y * torch.bernoulli(torch.full_like(y, 0.5))


class Upsampler(torch.nn.Module):
    """Conv then bilinear x2 upsampling (align_corners=False)."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        return torch.nn.functional.interpolate(self.conv(x), scale_factor=2.0, mode="bilinear",
                                               align_corners=False)


class CeilPool(torch.nn.Module):
    def __init__(self, pool):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.pool = pool

    def forward(self, x):
        return self.pool(self.conv(x))


class NanMax(torch.nn.Module):
    """amax over the features: torch propagates a NaN."""

    def forward(self, x):
        return x.amax(dim=1)


class TiedTopK(torch.nn.Module):
    """topk indices over coarsely rounded scores: ties decide the order."""

    def forward(self, x):
        return torch.topk((x * 2).round(), 3, dim=1).indices


class DistinctTopK(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(12, 8)

    def forward(self, x):
        v, i = torch.topk(self.fc(x), 3, dim=1)
        return v, i


class Classifier(torch.nn.Module):
    """Linear - ReLU - Linear over 12 features, 10 classes."""

    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(12, 64), torch.nn.ReLU())
        self.head = torch.nn.Linear(64, 10)

    def forward(self, x):
        return self.head(self.body(x))


class NearTie(torch.nn.Module):
    """A classifier whose two classes have almost the same weights: some rows
    sit on the boundary, closer than float32 noise."""

    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(12, 256), torch.nn.ReLU())
        self.head = torch.nn.Linear(256, 2)
        with torch.no_grad():
            g = torch.Generator().manual_seed(7)
            self.head.weight[1] = self.head.weight[0] + 5e-8 * torch.randn(256, generator=g)
            self.head.bias[1] = self.head.bias[0]

    def forward(self, x):
        return self.head(self.body(x))


class LSTMTagger(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(8, 16, batch_first=True)
        self.head = torch.nn.Linear(16, 5)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.head(y[:, -1])


# --------------------------------------------------------------------------- bundles

def seeded(fn):
    def wrapper(*a, **kw):
        torch.manual_seed(0)
        random.seed(0)
        return fn(*a, **kw)
    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


ZOO = []


def entry(name, verdict, cause, node=None, args=(), why="", left_out=None, dynamo=None, check=None):
    """left_out: why the current diagnose gets this bundle wrong.  Such a bundle
    is made only with --left-out and is not in zoo.json's "bundles".
    dynamo: under a torch with the dynamo exporter, either {"fallback": words}
    (torch.export refuses the defect; the capture falls back to legacy and
    exporter_fallback must contain the words) or {"legacy": why} (a defect of
    the legacy exporter: captured with it, plus the twin "<name>_dynamo",
    healthy, or left out with the misdiagnosis given as "twin_left_out"; "twin": False when
    torch.export refuses the model outright).
    check: what `onnxparity check` must say instead, where only diagnose's
    probes can see the defect: {"verdict", "cause", "why"}.
    A node string "A|B" matches either (an op the exporters spell two ways)."""
    dynamo = dict(dynamo or {})

    def deco(fn):
        e = dict(name=name, verdict=verdict, cause=cause, node=list(node or []), args=list(args),
                 why=why or (fn.__doc__ or "").strip(), build=seeded(fn), left_out=left_out,
                 exporter="auto", expect_exporter="dynamo" if DYNAMO else "legacy",
                 expect_fallback=None, check=check)
        if DYNAMO and "fallback" in dynamo:
            e.update(expect_exporter="legacy", expect_fallback=dynamo["fallback"])
        if DYNAMO and "legacy" in dynamo:
            e.update(exporter="legacy", expect_exporter="legacy")
        ZOO.append(e)
        if DYNAMO and "legacy" in dynamo and dynamo.get("twin", True):
            ZOO.append(dict(e, name=f"{name}_dynamo", verdict="pass", cause=None, node=[],
                            why=dynamo["legacy"], exporter="dynamo", expect_exporter="dynamo",
                            left_out=dynamo.get("twin_left_out"), check=None))
        return fn
    return deco


# faulty ---------------------------------------------------------------------

def _dynamo_keeps_training_batchnorm():
    """Whether this torch's dynamo exporter refuses a BatchNorm in training
    mode (torch 2.9: its translation fails on the running-statistics
    update), as opposed to writing it in inference form with the running
    statistics (torch 2.15), where its graph holds no defect.  Tried once,
    on a one-layer model."""
    import tempfile
    bn = torch.nn.BatchNorm1d(3).train()
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            torch.onnx.export(bn, (torch.ones(2, 3),), os.path.join(tmp, "m.onnx"), dynamo=True)
        except Exception:
            return True
    return False


# torch 2.9's dynamo refuses the defect (the capture falls back to legacy);
# torch 2.15's writes inference form: the defect is the legacy exporter's
_BN_TRAIN = ({"fallback": "BatchNorm in training mode"} if not DYNAMO or _dynamo_keeps_training_batchnorm()
             else {"legacy": "torch 2.15's dynamo exporter writes a BatchNorm left in training mode with "
                             "its running statistics (inference form): its graph holds no defect"})


@entry("bn_train_stem", "fail", "training-mode", ["stem", "BatchNormalization"], dynamo=_BN_TRAIN)
def _(out, ctx):
    """ResNet-ish CNN; the stem's BatchNorm left in training mode (batch statistics)."""
    m = trained_stats(ResNetish())
    m.stem[1].train()
    capture(m, images(4, 4), out, allow_training=True)


@entry("bn_train_block", "fail", "training-mode", ["block", "bn2", "BatchNormalization"], dynamo=_BN_TRAIN)
def _(out, ctx):
    """ResNet-ish CNN; the residual block's second BatchNorm left in training mode."""
    m = trained_stats(ResNetish())
    m.block.bn2.train()
    capture(m, images(4, 4, seed=2), out, allow_training=True)


@entry("bn1d_train_mlp", "fail", "training-mode", ["net.1", "BatchNormalization"], dynamo=_BN_TRAIN)
def _(out, ctx):
    """MLP (eval) whose BatchNorm1d was left in training mode."""
    m = trained_stats(MLP(), shape=(8, 12))
    m.net[1].train()
    capture(m, vectors(6, 6, seed=3), out, allow_training=True)


@entry("dropout_train_inside", "fail", "training-mode", ["net.3", "Dropout"])
def _(out, ctx):
    """MLP whose inner Dropout was left in training mode: a live Dropout in the graph."""
    m = trained_stats(MLP(), shape=(8, 12))
    m.net[3].train()
    capture(m, vectors(4, 4, seed=4), out, allow_training=True)


@entry("dropout_train_output", "fail", "training-mode", ["out_drop", "Dropout"])
def _(out, ctx):
    """Dropout on the model's output left in training mode."""
    m = trained_stats(MLP(out_dropout=True), shape=(8, 12))
    m.out_drop.train()
    capture(m, vectors(4, 4, seed=5), out, allow_training=True)


@entry("view_literal_static", "fail", "baked-shape", ["Reshape"])
def _(out, ctx):
    """view(4, -1) exported with every dim static; fixtures at batch 4 and 2."""
    capture(LiteralView().eval(), images(4, 2, 4, seed=6), out, dynamic_axes=None)


@entry("view_literal_dynamic", "fail", "baked-shape", ["Reshape"],
       why="the numbers agree (eager reshapes to [4, -1] too); batch invariance finds the shape "
           "error and lint's baked-shape finding names the Reshape",
       check={"verdict": "pass", "cause": None,
              "why": "every fixture agrees with eager, which reshapes to [4, -1] too: only "
                     "diagnose's batch-invariance probe (one sample alone) shows the literal "
                     "batch; check lists the Reshape's finding as a latent warning"})
def _(out, ctx):
    """view(4, -1) exported with a dynamic batch; fixtures at batch 4 and 2."""
    capture(LiteralView().eval(), images(4, 2, 4, seed=7), out)


@entry("view_traced_size", "fail", "baked-shape", ["Reshape"],
       dynamo={"legacy": "torch.export keeps int(y.shape[0]) symbolic: the Reshape follows the batch"})
def _(out, ctx):
    """view(int(y.shape[0]), -1) traced at batch 4; fixtures at batch 4 and 2."""
    capture(TracedSizeView().eval(), images(4, 2, 4, seed=8), out)


@entry("branch_on_sum", "fail", "traced-control-flow", dynamo={"fallback": "data-dependent control flow"})
def _(out, ctx):
    """`if x.sum() > 0` resolved at trace time; fixtures on both sides of it."""
    x = images(2, 2, 2, 2, seed=5)
    fx = [x[0].abs() + 0.1, -x[1].abs() - 0.1, x[2].abs() + 0.1, -x[3].abs() - 0.1]
    capture(Branchy().eval(), fx, out)


@entry("item_as_number", "fail", "traced-control-flow",
       dynamo={"legacy": "torch.export computes x.abs().max() in the graph: ORT agrees with "
                         "eager (diagnose's batch-invariance probe sees samples interact, the max "
                         "is over the whole batch, in eager too: a low note, no failure)"})
def _(out, ctx):
    """x / x.abs().max().item(): the trace keeps the traced fixture's maximum."""
    x = vectors(3, 3, 3, seed=9)
    capture(ItemScale().eval(), [x[0], x[1] * 4, x[2]], out)


@entry("floordiv_negative", "fail", "op-semantics", ["Div"],
       dynamo={"legacy": "the dynamo exporter floors integer division as torch does"})
def _(out, ctx):
    """int64 `(x * 5) // 3` on negative numbers: torch floors, the exported Div truncates."""
    g = torch.Generator().manual_seed(10)
    fx = [torch.randint(-50, -1, (3, 8), generator=g) for _ in range(2)]
    capture(FloorDiv().eval(), fx, out)


@entry("randn_like_noise", "fail", "nondeterminism", ["RandomNormalLike"])
def _(out, ctx):
    """y + 0.1 * torch.randn_like(y) in the forward."""
    capture(Noisy().eval(), images(2, 2, seed=11), out)


@entry("hand_dropout", "fail", "nondeterminism", ["RandomUniformLike"],
       why="the random node of a hand-written dropout mask is named through lint's ONP105")
def _(out, ctx):
    """y * (torch.rand_like(y) > 0.5): a dropout mask written by hand."""
    capture(HandDropout().eval(), vectors(3, 3, seed=12), out)


@entry("python_random", "fail", "reference",
       why="The eager forward adds random.random(): two eager runs on one fixture differ "
           "(parity.json deterministic=false, lint ONP602), so the eager truth itself is not "
           "reproducible; the trace keeps one draw as a constant.")
def _(out, ctx):
    capture(PyRandomShift().eval(), vectors(3, 3, seed=13), out)


@entry("optimizer_changes_bits", "fail", "graph-optimization", args=["--rtol", "0", "--atol", "0"],
       why="A healthy ResNet-ish CNN whose expected outputs are replaced by ONNX Runtime's own at "
           "ORT_DISABLE_ALL, compared bitwise (--rtol 0 --atol 0): against eager truth every level "
           "agrees within tolerance, so the only difference left to see is the one the optimizers "
           "make. parity.json and the eager intermediates are removed because they describe the "
           "eager outputs, which are no longer the reference.")
def _(out, ctx):
    healthy_cnn(out, ctx)
    orca_at_disable(out, ctx["bin"])


@entry("static_batch_input", "fail", "baked-shape")
def _(out, ctx):
    """A healthy CNN exported with every dim static (dynamic_axes=None) at batch 2; fixtures at batch 2 and 3."""
    capture(trained_stats(ResNetish()), images(2, 3, 2, seed=18), out, dynamic_axes=None)


@entry("encoder_dropout_train", "fail", "training-mode", ["layers.0", "Dropout"])
def _(out, ctx):
    """TransformerEncoder (eval) whose first layer's feed-forward Dropout was left in training mode."""
    m = TinyEncoder().eval()
    m.encoder.layers[0].dropout.train()
    g = torch.Generator().manual_seed(19)
    capture(m, [torch.randn(b, 5, 16, generator=g) for b in (2, 2)], out, allow_training=True)


@entry("optimizer_changes_bits_encoder", "fail", "graph-optimization", args=["--rtol", "0", "--atol", "0"],
       why="The healthy TransformerEncoder with expected outputs replaced by ONNX Runtime's own at "
           "ORT_DISABLE_ALL, compared bitwise (--rtol 0 --atol 0): see optimizer_changes_bits.")
def _(out, ctx):
    healthy_encoder(out, ctx)
    orca_at_disable(out, ctx["bin"])


# faulty: the families of issue 13 ----------------------------------------------

_LEGACY_TRACE = "torch.export keeps the size symbolic: the graph follows the input"


@entry("loop_over_batch", "fail", "traced-control-flow", ["Gather"],
       dynamo={"legacy": "torch.export refuses the loop over a dynamic batch (the capture's "
                         "ExportError says the dim was specialised): no dynamo twin",
               "twin": False})
def _(out, ctx):
    """A Python loop over x.shape[0], unrolled at trace time (batch 3); fixtures at batch 3 and 2."""
    capture(BatchLoop().eval(), vectors(3, 2, 3, seed=20), out)


@entry("float_of_tensor", "fail", "traced-control-flow",
       dynamo={"legacy": "torch.export computes x.std() in the graph"})
def _(out, ctx):
    """self.fc(x) * float(x.std()): the traced fixture's std kept as a constant."""
    x = vectors(3, 3, 3, seed=21)
    capture(FloatOfTensor().eval(), [x[0], x[1] * 3, x[2]], out)


@entry("len_arange", "fail", "baked-shape", dynamo={"legacy": _LEGACY_TRACE})
def _(out, ctx):
    """fc(x) + arange(len(x)): the traced batch (3) kept in a constant; fixtures at batch 3 and 2."""
    capture(LenArange().eval(), vectors(3, 2, 3, seed=22), out)


@entry("seq_len_baked", "fail", "baked-shape", ["Reshape"], dynamo={"legacy": _LEGACY_TRACE})
def _(out, ctx):
    """reshape(b, int(x.shape[1]) * 16) traced at sequence length 5; fixtures at 5 and 7."""
    g = torch.Generator().manual_seed(23)
    fx = [torch.randn(2, t, 16, generator=g) for t in (5, 7, 5)]
    capture(SeqFlatten().eval(), fx, out, dynamic_axes="auto")


@entry("image_size_baked", "fail", "baked-shape", ["Resize"], dynamo={"legacy": _LEGACY_TRACE})
def _(out, ctx):
    """interpolate(size=(int(h) * 2, int(w) * 2)) traced at 16x16; fixtures at 16 and 24."""
    capture(SizeUpsample().eval(), images(2, size=16, seed=24) + images(2, size=24, seed=25), out,
            dynamic_axes="auto")


@entry("window_pad_branch", "fail", "traced-control-flow",
       dynamo={"legacy": "torch.export decides `h % 4` on the traced size and specialises the image "
                         "size (a static export, refused at 18: no healthy twin)",
               "twin": False})
def _(out, ctx):
    """Window padding decided in Python (`if h % 4 != 0`), traced at 16x16 (no padding);
    fixtures at 16 and 18, where padding was needed."""
    capture(PadToWindows().eval(), images(2, size=16, seed=34) + images(2, size=18, seed=35), out,
            dynamic_axes="auto")


@entry("expand_traced_size", "fail", "baked-shape", ["Expand"], dynamo={"legacy": _LEGACY_TRACE})
def _(out, ctx):
    """fc(x) + bias.expand(int(x.shape[0]), 6) traced at batch 4; fixtures at batch 4 and 2."""
    capture(ExpandLiteral().eval(), vectors(4, 2, 4, seed=26), out)


@entry("bernoulli_forward", "fail", "nondeterminism", ["RandomUniformLike|Bernoulli"])
def _(out, ctx):
    """y * torch.bernoulli(full_like(y, 0.5)) in the forward."""
    capture(BernoulliMask().eval(), vectors(3, 3, seed=27), out)


@entry("resize_opset10", "fail", "op-semantics", ["Resize"],
       dynamo={"legacy": "the dynamo exporter needs opset 18 or later"})
def _(out, ctx):
    """Bilinear x2 upsampling (align_corners=False) exported at opset 10: Resize-10 has no
    coordinate mode and computes asymmetric coordinates."""
    capture(Upsampler().eval(), images(2, 2, seed=28), out, opset=10)


@entry("nan_in_reduction", "fail", "op-semantics", ["ReduceMax"])
def _(out, ctx):
    """x.amax(1) over rows holding a NaN: torch propagates it."""
    x = vectors(3, 3, seed=29)
    x[0][0, 3] = float("nan")
    x[1][2, 7] = float("nan")
    capture(NanMax().eval(), x, out)


@entry("topk_ties", "pass", None,
       why="topk indices of coarsely rounded scores: tied values, ordered differently by torch "
           "and by ONNX's TopK (the lower index first); the capture's rerun with ONNX's tie order "
           "gives ONNX Runtime's indices, so the difference is the ties' order alone: a pass with "
           "the tie-order note (issue 35)")
def _(out, ctx):
    """topk indices of coarsely rounded scores: tied values, ordered differently."""
    capture(TiedTopK().eval(), vectors(4, 4, dim=16, seed=30), out)


@entry("fp16_head", "fail", "reduced-precision", ["Cast"])
def _(out, ctx):
    """A classifier whose hidden features are narrowed to float16 in the ONNX after export
    (a partial float16 conversion); the eager truth is float32."""
    capture(Classifier().eval(), vectors(4, 4, seed=31), out)
    narrow_after(out, "Relu", 10)


@entry("bf16_head", "fail", "reduced-precision", ["Cast"])
def _(out, ctx):
    """The same classifier with its hidden features narrowed to bfloat16 after export."""
    capture(Classifier().eval(), vectors(4, 4, seed=32), out)
    narrow_after(out, "Relu", 16)


@entry("label_flip_near_tie", "fail", "float-noise")
def _(out, ctx):
    """A classifier with two almost identical classes: rows on the boundary flip under noise."""
    capture(NearTie().eval(), vectors(64, 64, seed=33), out)


# healthy --------------------------------------------------------------------

@entry("healthy_cnn", "pass", None)
def healthy_cnn(out, ctx):
    """ResNet-ish CNN with trained BatchNorm statistics, eval."""
    capture(trained_stats(ResNetish()), images(2, 3, 2, seed=3), out)


@entry("healthy_resnet18", "pass", None)
def _(out, ctx):
    """torchvision resnet18, random weights, eval, 64x64."""
    m = torchvision.models.resnet18(num_classes=10).eval()
    capture(m, images(2, 3, size=64, seed=14), out)


@entry("healthy_mobilenet_v3_small", "pass", None)
def _(out, ctx):
    """torchvision mobilenet_v3_small, random weights, eval, 64x64."""
    m = torchvision.models.mobilenet_v3_small(num_classes=10).eval()
    capture(m, images(2, 3, size=64, seed=15), out)


@entry("healthy_transformer_encoder", "pass", None)
def healthy_encoder(out, ctx):
    """nn.TransformerEncoder (2 layers, d_model 16, batch_first), eval."""
    g = torch.Generator().manual_seed(16)
    fx = [torch.randn(b, 5, 16, generator=g) for b in (2, 3, 2)]
    capture(TinyEncoder().eval(), fx, out)


@entry("healthy_mlp", "pass", None)
def _(out, ctx):
    """MLP with BatchNorm1d and Dropout, both eval."""
    capture(trained_stats(MLP(out_dropout=True), shape=(8, 12)), vectors(4, 3, 4, seed=17), out)


@entry("healthy_squeezenet", "pass", None)
def _(out, ctx):
    """torchvision squeezenet1_1 (MaxPool with ceil_mode), random weights, eval, 64x64."""
    m = torchvision.models.squeezenet1_1(num_classes=10).eval()
    capture(m, images(2, 3, size=64, seed=40), out)


@entry("healthy_shufflenet", "pass", None)
def _(out, ctx):
    """torchvision shufflenet_v2_x0_5 (channel shuffle reshapes), random weights, eval, 64x64."""
    m = torchvision.models.shufflenet_v2_x0_5(num_classes=10).eval()
    capture(m, images(2, 3, size=64, seed=41), out)


def _dynamo_translates_lstm():
    """torch 2.9's dynamo exporter has no translation for nn.LSTM's
    aten.unbind.int (the capture falls back to legacy); torch 2.15's has.
    Tried once, on a one-layer LSTM."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            torch.onnx.export(torch.nn.LSTM(3, 2, batch_first=True).eval(), (torch.ones(1, 2, 3),),
                              os.path.join(tmp, "m.onnx"), dynamo=True)
        except Exception:
            return False
    return True


@entry("healthy_lstm", "pass", None,
       dynamo=None if DYNAMO and _dynamo_translates_lstm() else
       {"fallback": "aten.unbind.int has no ONNX translation"})
def _(out, ctx):
    """nn.LSTM over a sequence, last step classified, eval."""
    g = torch.Generator().manual_seed(42)
    capture(LSTMTagger().eval(), [torch.randn(b, 6, 8, generator=g) for b in (2, 3)], out)


@entry("healthy_upsample", "pass", None)
def _(out, ctx):
    """Bilinear x2 upsampling at the default opset, where Resize has half_pixel coordinates."""
    capture(Upsampler().eval(), images(2, 3, seed=43), out)


@entry("healthy_static_by_design", "pass", None)
def _(out, ctx):
    """A CNN exported with every dim static on purpose; every fixture has the exported batch."""
    capture(trained_stats(ResNetish()), images(2, 2, 2, seed=44), out, dynamic_axes=None)


@entry("healthy_topk_distinct", "pass", None)
def _(out, ctx):
    """topk values and indices of distinct scores (no ties)."""
    capture(DistinctTopK().eval(), vectors(4, 3, seed=45), out)


# issue 35: the shapes trials on real architectures met -------------------------

@entry("healthy_ssd_near_ties", "pass", None,
       why="boxes gathered by a top-k on near-tied scores: float32 eager itself picks other boxes "
           "than float64 (the capture's float64 noise is most of the scale); that noise, not a "
           "one-ulp ORT estimate, judges them (issue 35)")
def _(out, ctx):
    """SSDlite's shape: per-anchor scores near a tie, the top 40 anchors' boxes gathered."""
    g = torch.Generator().manual_seed(50)
    m = models3.TinySSD()
    capture(m.eval(), [torch.rand(2, 3, 96, 96, generator=g) for _ in range(3)], out,
            output_names=["boxes", "scores"])


@entry("healthy_detector_boxes", "pass", None,
       why="boxes [30, 4] are floating [N, C] but a selection of decoded anchors, not class "
           "scores: no top-1 among coordinates (issue 35)")
def _(out, ctx):
    """torchvision's detection output for one image: boxes [30, 4], scores, int64 labels."""
    g = torch.Generator().manual_seed(51)
    capture(models3.OneImageDetector().eval(), [torch.rand(1, 3, 96, 96, generator=g) for _ in range(3)],
            out, output_names=["boxes", "scores", "labels"])


@entry("healthy_mlp_mixer", "pass", None,
       why="an eval DropPath returns its input inside x + drop_path(f(x).transpose(1, 2)): "
           "bisect compares it with the Transpose, not the residual Add (issue 35)")
def _(out, ctx):
    """MLP-Mixer: token and channel mixing, DropPath on both residual branches."""
    capture(models3.Mixer().eval(), images(2, 2, size=32, seed=52), out)


@entry("healthy_convnext", "pass", None)
def _(out, ctx):
    """ConvNeXt's block: depthwise 7x7, channels-last LayerNorm, layer scale 1e-6."""
    capture(models3.TinyConvNeXt().eval(), images(2, 3, size=32, seed=53), out)


@entry("healthy_unet", "pass", None)
def _(out, ctx):
    """U-Net segmentation: skip concatenations, transposed convs, per-pixel logits."""
    capture(trained_stats(models3.TinyUNet(), shape=(4, 3, 32, 32)), images(2, 3, size=32, seed=54),
            out)


@entry("healthy_vit", "pass", None)
def _(out, ctx):
    """ViT: patch embedding, class token, learned positions, pre-norm encoder layers."""
    capture(models3.TinyViT().eval(), images(2, 3, size=32, seed=55), out)


@entry("healthy_token_tagger", "pass", None)
def _(out, ctx):
    """Embedding + learned positions sliced to the sequence; sequences of 8 and 12."""
    g = torch.Generator().manual_seed(56)
    fx = [torch.randint(0, 50, s, generator=g) for s in ((2, 8), (2, 12), (3, 8))]
    capture(models3.TokenTagger().eval(), fx, out, input_names=["ids"])


@entry("healthy_convnext_absorbed_eps", "pass", None,
       why="a LayerNorm epsilon planted 1e5x too large inside a layer-scaled (1e-6) branch: the "
           "outputs stay within their noise, so check and diagnose pass; bisect names the "
           "LayerNormalization and says the divergence is absorbed (issue 35)")
def _(out, ctx):
    """ConvNeXt block with its LayerNorm epsilon moved to 0.1 in the graph (opset 17)."""
    import onnx
    capture(models3.TinyConvNeXt().eval(), images(2, 3, size=32, seed=57), out, opset=17)
    m = onnx.load(str(out / "model.onnx"))
    for n in m.graph.node:
        if n.op_type == "LayerNormalization":
            n.attribute.extend([onnx.helper.make_attribute("epsilon", 0.1)]
                               if not any(a.name == "epsilon" for a in n.attribute) else [])
            for a in n.attribute:
                if a.name == "epsilon":
                    a.f = 0.1
    onnx.save(m, str(out / "model.onnx"))


@entry("gate_value_branch", "fail", "traced-control-flow", [],
       dynamo={"fallback": "data-dependent control flow"},
       why="a gate halves its features when their mean is positive: the trace keeps the traced "
           "fixture's path; the branch left no node, so the node is the one after it (bisect's "
           "branch line names the source line and module gate) (issue 35)")
def _(out, ctx):
    """A Linear-ReLU model whose submodule branches on its features' mean."""
    g = torch.Generator().manual_seed(1)  # the traced fixture's mean < 0, the second's > 0
    capture(models3.GatedMLP().eval(), [torch.randn(2, 8, generator=g) + s for s in (3.0, -3.0, 3.0)],
            out)


@entry("detector_exact_ties", "pass", None,
       why="every anchor's score ties exactly (a class head that ignores its features, as a fresh "
           "SSDlite's): ONNX's TopK keeps the lowest indices, torch others, and NMS keeps another "
           "count; the capture reruns eager with ONNX's tie order and ONNX Runtime matches that "
           "run: the difference is the ties' order alone, a pass with the tie-order note (issue 35)")
def _(out, ctx):
    """top-8 anchors by score, then non-maximum suppression; all scores equal."""
    g = torch.Generator().manual_seed(61)
    capture(models3.DeadFeatureDetector().eval(), [torch.rand(1, 3, 16, 16, generator=g) for _ in range(2)],
            out, output_names=["boxes", "scores"], dynamic_axes=None)


@entry("vae_randn_forward", "fail", "nondeterminism", ["RandomNormal"])
def _(out, ctx):
    """A VAE that samples z = mu + eps * std with torch.randn_like in forward."""
    g = torch.Generator().manual_seed(58)
    capture(models3.TinyVAE().eval(), [torch.randn(4, 32, generator=g) for _ in range(2)], out)


@entry("tagger_seq_baked", "fail", "baked-shape", [],
       why="the size is fixed in the graph input's declaration ([batch, 8]), not in a node: ORT "
           "refuses the length-12 fixture before it runs")
def _(out, ctx):
    """A token tagger exported with only the batch dynamic: the sequence length 8 is baked."""
    g = torch.Generator().manual_seed(59)
    fx = [torch.randint(0, 50, s, generator=g) for s in ((2, 8), (2, 12), (3, 8))]
    capture(models3.TokenTagger().eval(), fx, out, input_names=["ids"],
            dynamic_axes={"ids": {0: "batch"}})


# --------------------------------------------------------------------------- helpers

# The families of issue 13 (what the zoo must cover) and their bundles.
FAMILIES = {
    "training-mode": ["bn_train_stem", "bn_train_block", "bn1d_train_mlp", "dropout_train_inside",
                      "dropout_train_output", "encoder_dropout_train"],
    "loop-unrolled": ["loop_over_batch"],
    "python-scalar-baked": ["item_as_number", "float_of_tensor", "view_traced_size", "len_arange",
                            "expand_traced_size"],
    "non-batch-dim-baked": ["seq_len_baked", "image_size_baked", "tagger_seq_baked"],
    "literal-reshape": ["view_literal_static", "view_literal_dynamic", "static_batch_input"],
    "random-ops": ["randn_like_noise", "hand_dropout", "bernoulli_forward", "python_random",
                   "vae_randn_forward"],
    "op-semantics": ["floordiv_negative", "resize_opset10", "nan_in_reduction"],
    "reduced-precision": ["fp16_head", "bf16_head"],
    "label-flip-in-tolerance": ["label_flip_near_tie"],
    "traced-branch": ["branch_on_sum", "window_pad_branch"],
    "optimizer": ["optimizer_changes_bits", "optimizer_changes_bits_encoder"],
}


def family_of(name):
    return next((f for f, names in FAMILIES.items() if name in names), None)



def narrow_after(bundle, op_type, to):
    """Round the output of the first `op_type` node to the ONNX type `to`
    (10 float16, 16 bfloat16) and back to float32: what a float16 conversion
    tool leaves in a graph."""
    import onnx
    from onnx import helper
    path = pathlib.Path(bundle) / "model.onnx"
    model = onnx.load(str(path))
    g = model.graph
    at = next(i for i, n in enumerate(g.node) if n.op_type == op_type)
    value = g.node[at].output[0]
    narrow, wide = value + "_narrow", value + "_wide"
    for n in g.node[at + 1:]:
        for k, name in enumerate(n.input):
            if name == value:
                n.input[k] = wide
    g.node.insert(at + 1, helper.make_node("Cast", [value], [narrow], name="/narrow/Cast", to=to))
    g.node.insert(at + 2, helper.make_node("Cast", [narrow], [wide], name="/narrow/Cast_1", to=1))
    onnx.save(model, str(path))


def orca_at_disable(bundle, binary):
    """Replace every expected output by ONNX Runtime's at ORT_DISABLE_ALL."""
    import onnx
    bundle = pathlib.Path(bundle)
    model = onnx.load(str(bundle / "model.onnx"), load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    ins = [i.name for i in model.graph.input if i.name not in inits]
    outs = [o.name for o in model.graph.output]
    (bundle / "parity.json").unlink()
    for d in sorted(bundle.glob("test_data_set_*")):
        shutil.rmtree(d / "intermediates", ignore_errors=True)
        cmd = [binary, "run", bundle / "model.onnx", "--opt-level", "disable", "--save", d / "ort"]
        for i, n in enumerate(ins):
            cmd += ["--input", f"{n}={d / f'input_{i}.pb'}"]
        sh(cmd)
        for j, n in enumerate(outs):
            src = d / "ort" / ("output.npy" if len(outs) == 1 else f"{n}.npy")
            if not src.exists():
                src = d / "ort" / f"{n}.npy"
            sh([binary, "convert", src, d / f"output_{j}.pb"])
        shutil.rmtree(d / "ort")


def sh(cmd):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))}: exit {r.returncode}\n{r.stdout}{r.stderr}")
    return r


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=pathlib.Path)
    ap.add_argument("--onnxparity", default=os.environ.get("ONNXPARITY_BIN",
                                                           str(ROOT / "build" / "onnxparity")))
    ap.add_argument("--only", nargs="*", help="names of the bundles to make (default: all)")
    ap.add_argument("--left-out", action="store_true",
                    help="also make the bundles the current diagnose gets wrong (listed in "
                         "zoo.json's \"left_out\", not in \"bundles\")")
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    ctx = {"bin": a.onnxparity}
    listing, left = [], []
    t0 = time.time()
    for e in ZOO:
        if a.only and e["name"] not in a.only:
            continue
        if e["left_out"]:
            left.append({"name": e["name"], "verdict": e["verdict"], "cause": e["cause"],
                         "node": e["node"], "why": e["why"], "misdiagnosis": e["left_out"]})
            if not a.left_out:
                continue
        d = a.out / e["name"]
        if d.exists():
            shutil.rmtree(d)
        t = time.time()
        _EXPORTER[0] = e["exporter"]
        e["build"](d, ctx)
        if e["left_out"]:
            print(f"{e['name']:30s} {time.time() - t:6.2f}s (left out)", flush=True)
            continue
        manifest = d / "parity.json"
        used = json.loads(manifest.read_text()) if manifest.exists() else {}
        listing.append({"name": e["name"], "verdict": e["verdict"], "cause": e["cause"],
                        "node": e["node"], "args": e["args"], "why": e["why"],
                        "exporter": used.get("exporter"), "exporter_fallback": used.get("exporter_fallback"),
                        "expect_exporter": e["expect_exporter"], "expect_fallback": e["expect_fallback"],
                        "check": e["check"], "family": family_of(e["name"])})
        print(f"{e['name']:30s} {time.time() - t:6.2f}s", flush=True)
    doc = {"schema": "onnxparity.zoo/1", "torch": torch.__version__,
           "torchvision": torchvision.__version__,
           "not_covered": {"execution-provider": "needs a second execution provider to compare "
                           "with; the CPU-only ONNX Runtime here has one",
                           "unknown": "the residue when no rule explains a failure; not planted"},
           "families": sorted(FAMILIES), "bundles": listing, "left_out": left}
    (a.out / "zoo.json").write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{len(listing)} bundles in {time.time() - t0:.1f}s -> {a.out}")


if __name__ == "__main__":
    main()
