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


def entry(name, verdict, cause, node=None, args=(), why="", left_out=None, dynamo=None):
    """left_out: why the current diagnose gets this bundle wrong.  Such a bundle
    is made only with --left-out and is not in zoo.json's "bundles".
    dynamo: under a torch with the dynamo exporter, either {"fallback": words}
    (torch.export refuses the defect; the capture falls back to legacy and
    exporter_fallback must contain the words) or {"legacy": why} (a defect of
    the legacy exporter: captured with it, plus the twin "<name>_dynamo",
    healthy, or left out with the misdiagnosis given as "twin_left_out")."""
    dynamo = dict(dynamo or {})

    def deco(fn):
        e = dict(name=name, verdict=verdict, cause=cause, node=list(node or []), args=list(args),
                 why=why or (fn.__doc__ or "").strip(), build=seeded(fn), left_out=left_out,
                 exporter="auto", expect_exporter="dynamo" if DYNAMO else "legacy",
                 expect_fallback=None)
        if DYNAMO and "fallback" in dynamo:
            e.update(expect_exporter="legacy", expect_fallback=dynamo["fallback"])
        if DYNAMO and "legacy" in dynamo:
            e.update(exporter="legacy", expect_exporter="legacy")
        ZOO.append(e)
        if DYNAMO and "legacy" in dynamo:
            ZOO.append(dict(e, name=f"{name}_dynamo", verdict="pass", cause=None, node=[],
                            why=dynamo["legacy"], exporter="dynamo", expect_exporter="dynamo",
                            left_out=dynamo.get("twin_left_out")))
        return fn
    return deco


# faulty ---------------------------------------------------------------------

_BN_TRAIN = {"fallback": "BatchNorm in training mode"}


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
           "error and lint's baked-shape finding names the Reshape")
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
       dynamo={"legacy": "torch.export computes x.abs().max() in the graph: ORT agrees with eager",
               "twin_left_out": "check passes, but diagnose's batch-invariance probe sees samples "
                                "interact (the max is over the whole batch, in eager too) and "
                                "reports training-mode (medium), verdict fail"})
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


# --------------------------------------------------------------------------- helpers

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
                        "expect_exporter": e["expect_exporter"], "expect_fallback": e["expect_fallback"]})
        print(f"{e['name']:30s} {time.time() - t:6.2f}s", flush=True)
    doc = {"schema": "onnxparity.zoo/1", "torch": torch.__version__,
           "torchvision": torchvision.__version__,
           "not_covered": {"execution-provider": "needs a second execution provider to compare "
                           "with; the CPU-only ONNX Runtime here has one",
                           "unknown": "the residue when no rule explains a failure; not planted"},
           "bundles": listing, "left_out": left}
    (a.out / "zoo.json").write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{len(listing)} bundles in {time.time() - t0:.1f}s -> {a.out}")


if __name__ == "__main__":
    main()
