"""Models built to the shape of real architectures the trials of issue 35
ran (torchvision's SSDlite, timm's MLP-Mixer and ConvNeXt, a VAE, a token
tagger), small enough for a test: tests/py/test_judge_round3.py and the zoo
(tests/zoo/make_zoo.py) build on them.  Each class says which architecture
it has the shape of and what of it matters to the judge."""
import torch


class TinySSD(torch.nn.Module):
    """SSDlite's shape at a small size: a strided conv backbone, per-anchor
    class logits and box offsets from 3x3 heads, softmax scores (background
    dropped), boxes decoded to pixels in [0, 320], the top `keep` anchors by
    score and their boxes gathered by index.  The class head starts near
    zero (as a fresh detector's does), so scores nearly tie."""

    def __init__(self, anchors=6, classes=5, keep=40):
        super().__init__()
        self.backbone = torch.nn.Sequential(
            torch.nn.Conv2d(3, 16, 3, 2, 1), torch.nn.ReLU6(), torch.nn.Conv2d(16, 32, 3, 2, 1),
            torch.nn.ReLU6(), torch.nn.Conv2d(32, 32, 3, 2, 1), torch.nn.ReLU6())
        self.cls = torch.nn.Conv2d(32, anchors * classes, 3, 1, 1)
        self.box = torch.nn.Conv2d(32, anchors * 4, 3, 1, 1)
        self.classes, self.keep = classes, keep
        torch.nn.init.normal_(self.cls.weight, std=3e-7)
        torch.nn.init.zeros_(self.cls.bias)

    def forward(self, x):
        f = self.backbone(x)
        n = x.shape[0]
        logits = self.cls(f).permute(0, 2, 3, 1).reshape(n, -1, self.classes)
        deltas = self.box(f).permute(0, 2, 3, 1).reshape(n, -1, 4)
        centers = torch.linspace(0, 320, deltas.shape[1], dtype=x.dtype).unsqueeze(-1)
        boxes = torch.cat([centers + 16 * deltas[..., :2], 32 * deltas[..., 2:].exp()], -1).clamp(0, 320)
        scores = logits.softmax(-1)[..., 1:].max(-1).values
        top = scores.topk(self.keep, dim=1)
        idx = top.indices.unsqueeze(-1).expand(-1, -1, 4)
        return boxes.gather(1, idx), top.values


class DropPath(torch.nn.Module):
    """Stochastic depth: drops whole samples in training, returns its input
    unchanged in eval (the same tensor)."""

    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        keep = (torch.rand(x.shape[0], 1, 1) > self.p).to(x.dtype)
        return x * keep / (1 - self.p)


class MixerBlock(torch.nn.Module):
    """MLP-Mixer's block: token mixing across patches (transposed in and
    out), channel mixing, each branch through DropPath into a residual."""

    def __init__(self, tokens, dim):
        super().__init__()
        self.norm1, self.norm2 = torch.nn.LayerNorm(dim), torch.nn.LayerNorm(dim)
        self.mlp_tokens = torch.nn.Sequential(torch.nn.Linear(tokens, 2 * tokens), torch.nn.GELU(),
                                              torch.nn.Linear(2 * tokens, tokens))
        self.mlp_channels = torch.nn.Sequential(torch.nn.Linear(dim, 2 * dim), torch.nn.GELU(),
                                                torch.nn.Linear(2 * dim, dim))
        self.drop_path = DropPath(0.1)

    def forward(self, x):
        x = x + self.drop_path(self.mlp_tokens(self.norm1(x).transpose(1, 2)).transpose(1, 2))
        return x + self.drop_path(self.mlp_channels(self.norm2(x)))


class Mixer(torch.nn.Module):
    def __init__(self, size=32, patch=8, dim=32, blocks=2, classes=10):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, dim, patch, patch)
        self.blocks = torch.nn.Sequential(*[MixerBlock((size // patch) ** 2, dim) for _ in range(blocks)])
        self.norm = torch.nn.LayerNorm(dim)
        self.head = torch.nn.Linear(dim, classes)

    def forward(self, x):
        x = self.stem(x).flatten(2).transpose(1, 2)
        return self.head(self.norm(self.blocks(x)).mean(1))


class OneImageDetector(TinySSD):
    """torchvision's detection output for one image: boxes [K, 4] in pixels,
    their scores [K] and labels [K] (int64), the K best anchors."""

    def __init__(self):
        super().__init__(keep=30)
        torch.nn.init.normal_(self.cls.weight, std=0.05)

    def forward(self, x):
        f = self.backbone(x)
        logits = self.cls(f).permute(0, 2, 3, 1).reshape(-1, self.classes)
        deltas = self.box(f).permute(0, 2, 3, 1).reshape(-1, 4)
        centers = torch.linspace(0, 320, deltas.shape[0], dtype=x.dtype).unsqueeze(-1)
        boxes = torch.cat([centers + 16 * deltas[:, :2], 32 * deltas[:, 2:].exp()], -1).clamp(0, 320)
        best = logits.softmax(-1)[:, 1:].max(-1)
        top = best.values.topk(self.keep)
        return boxes[top.indices], top.values, best.indices[top.indices] + 1


class SaturatedDetector(OneImageDetector):
    """OneImageDetector whose scores go through a steep sigmoid: every one
    of the K kept saturates to exactly 1.0, so the scores order nothing."""

    def forward(self, x):
        boxes, scores, labels = super().forward(x)
        return boxes, torch.sigmoid(1e3 * scores), labels


class SortedActivations(torch.nn.Module):
    """torch.sort of a ReLU, best first: the values and their indices; about
    half the values are exact zeros, tied, which ONNX's TopK and torch order
    differently."""

    def forward(self, x):
        v, i = torch.sort(torch.relu(x), descending=True)
        return v, i


class TokenTagger(torch.nn.Module):
    """Embedding + learned positions sliced to the sequence + a linear head."""

    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(50, 16)
        self.pos = torch.nn.Parameter(torch.randn(32, 16))
        self.fc = torch.nn.Linear(16, 4)

    def forward(self, ids):
        return self.fc(torch.relu(self.emb(ids) + self.pos[:ids.shape[1]]))


class TinyVAE(torch.nn.Module):
    """A VAE's forward: encode to (mu, logvar), sample z = mu + eps * std with
    torch.randn_like (the reparameterisation left in forward), decode."""

    def __init__(self):
        super().__init__()
        self.enc = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU())
        self.mu, self.logvar = torch.nn.Linear(64, 8), torch.nn.Linear(64, 8)
        self.dec = torch.nn.Sequential(torch.nn.Linear(8, 64), torch.nn.ReLU(), torch.nn.Linear(64, 32))

    def forward(self, x):
        h = self.enc(x)
        mu, logvar = self.mu(h), self.logvar(h)
        return self.dec(mu + torch.randn_like(mu) * torch.exp(0.5 * logvar))


class ConvNeXtBlock(torch.nn.Module):
    """ConvNeXt's block: depthwise 7x7, LayerNorm over channels, an inverted
    MLP, and layer scale initialised at 1e-6 on the residual branch."""

    def __init__(self, dim=16):
        super().__init__()
        self.dw = torch.nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = torch.nn.LayerNorm(dim, eps=1e-6)
        self.pw1, self.pw2 = torch.nn.Linear(dim, 4 * dim), torch.nn.Linear(4 * dim, dim)
        self.gamma = torch.nn.Parameter(1e-6 * torch.ones(dim))

    def forward(self, x):
        y = self.norm(self.dw(x).permute(0, 2, 3, 1))
        y = self.gamma * self.pw2(torch.nn.functional.gelu(self.pw1(y)))
        return x + y.permute(0, 3, 1, 2)


class TinyConvNeXt(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 16, 4, 4)
        self.block = ConvNeXtBlock()
        self.head = torch.nn.Linear(16, 10)

    def forward(self, x):
        return self.head(self.block(self.stem(x)).mean((2, 3)))


class TinyUNet(torch.nn.Module):
    """U-Net's shape for segmentation: two strided encoder stages, a
    bottleneck, transposed-conv decoder stages concatenated with the skips,
    per-pixel class logits [N, C, H, W]."""

    def __init__(self, classes=3):
        super().__init__()

        def conv(i, o):
            return torch.nn.Sequential(torch.nn.Conv2d(i, o, 3, padding=1), torch.nn.BatchNorm2d(o),
                                       torch.nn.ReLU())
        self.enc1, self.enc2, self.mid = conv(3, 8), conv(8, 16), conv(16, 32)
        self.pool = torch.nn.MaxPool2d(2)
        self.up2, self.dec2 = torch.nn.ConvTranspose2d(32, 16, 2, 2), conv(32, 16)
        self.up1, self.dec1 = torch.nn.ConvTranspose2d(16, 8, 2, 2), conv(16, 8)
        self.out = torch.nn.Conv2d(8, classes, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(self.pool(e1))
        m = self.mid(self.pool(e2))
        d2 = self.dec2(torch.cat([self.up2(m), e2], 1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], 1))
        return self.out(d1)


class TinyViT(torch.nn.Module):
    """ViT's shape: patch embedding by a strided conv, a class token and
    learned positions, pre-norm encoder layers, the class token's logits."""

    def __init__(self, size=32, patch=8, dim=32, classes=10):
        super().__init__()
        self.patch = torch.nn.Conv2d(3, dim, patch, patch)
        self.cls = torch.nn.Parameter(0.02 * torch.randn(1, 1, dim))
        self.pos = torch.nn.Parameter(0.02 * torch.randn(1, (size // patch) ** 2 + 1, dim))
        layer = torch.nn.TransformerEncoderLayer(dim, 4, 2 * dim, dropout=0.1, batch_first=True,
                                                 norm_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, 2)
        self.norm = torch.nn.LayerNorm(dim)
        self.head = torch.nn.Linear(dim, classes)

    def forward(self, x):
        t = self.patch(x).flatten(2).transpose(1, 2)
        t = torch.cat([self.cls.expand(t.shape[0], -1, -1), t], 1) + self.pos
        return self.head(self.norm(self.encoder(t))[:, 0])


class RepVGGBlock(torch.nn.Module):
    """RepVGG's training-time block: a 3x3 and a 1x1 conv branch summed, then
    DropPath, then the BatchNorm identity branch added in place
    (``x += identity``), then ReLU."""

    def __init__(self, c=16):
        super().__init__()
        self.identity = torch.nn.BatchNorm2d(c)
        self.conv_kxk = torch.nn.Sequential(torch.nn.Conv2d(c, c, 3, padding=1, bias=False),
                                            torch.nn.BatchNorm2d(c))
        self.conv_1x1 = torch.nn.Sequential(torch.nn.Conv2d(c, c, 1, bias=False), torch.nn.BatchNorm2d(c))
        self.drop_path = DropPath(0.1)
        self.act = torch.nn.ReLU()

    def forward(self, x):
        identity = self.identity(x)
        x = self.conv_1x1(x) + self.conv_kxk(x)
        x = self.drop_path(x)
        x += identity
        return self.act(x)


class TinyRepVGG(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 16, 3, 2, 1)
        self.block = RepVGGBlock()
        self.head = torch.nn.Linear(16, 10)

    def forward(self, x):
        return self.head(self.block(self.stem(x)).mean((2, 3)))


class ScaleWhenPositive(torch.nn.Module):
    """A gate that halves its features when their mean is positive: a branch
    on a tensor's value, which the trace fixes to the traced fixture's path."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(16, 16)

    def forward(self, x):
        h = self.proj(x)
        if h.mean() > 0:
            h = h * 0.5
        return h


class GatedMLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = torch.nn.Linear(8, 16)
        self.gate = ScaleWhenPositive()
        self.out = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.out(torch.relu(self.gate(torch.relu(self.inp(x)))))


class DeadFeatureDetector(torch.nn.Module):
    """A one-image detector shaped like a fresh SSDlite: its class head sees
    features it ignores (weight 0, as activations that vanished through a
    random backbone), so every anchor scores the same; the top 8 anchors by
    score are kept and non-maximum suppression runs on their boxes.  The
    first 8 anchors sit on one box, the others apart."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.pool = torch.nn.AdaptiveAvgPool2d(8)
        self.cls = torch.nn.Conv2d(8, 1, 1)
        self.reg = torch.nn.Conv2d(8, 4, 1)
        with torch.no_grad():
            self.cls.weight.zero_()
        grid = torch.stack(torch.meshgrid(torch.arange(8.0), torch.arange(8.0), indexing="ij"), -1)
        xy = (grid.reshape(64, 2) * 20).roll(-8, 0)
        xy[:8] = 0  # the first 8 anchors on one box
        self.register_buffer("anchors", torch.cat([xy, xy + 10], 1))

    def forward(self, x):
        import torchvision
        f = self.pool(torch.relu(self.conv(x[:1])))
        scores = torch.sigmoid(self.cls(f)).flatten()
        boxes = self.anchors + 0.01 * self.reg(f).flatten(2)[0].t()
        top = scores.topk(8)
        b = boxes[top.indices]
        keep = torchvision.ops.nms(b, top.values, 0.5)
        return b[keep], top.values[keep]
