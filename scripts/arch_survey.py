"""Healthy real architectures through check, diagnose and bisect (issue 35,
Must-show 3): torchvision classification, detection and segmentation
models, timm and transformers models, random weights (nothing downloaded),
captured with onnxparity.capture at their default exporter, then each
command run on the bundle.  A healthy export must pass all three: check and
diagnose exit 0, bisect exits 0 (agrees).  Writes one JSON line per model to
OUT/survey.jsonl as it goes and a markdown table (docs/architectures.md
quotes it) at the end.

Run (the torch 2.x environment; the binary built):
    PYTHONPATH=python .venv-torch2/bin/python scripts/arch_survey.py OUT \\
        --onnxparity build/onnxparity [--only NAME ...]
"""
import argparse
import json
import pathlib
import subprocess
import sys
import time
import warnings

import torch

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "tests" / "zoo"))
import onnxparity  # noqa: E402

warnings.filterwarnings("ignore")
torch.set_num_threads(2)


def images(*batches, size=64, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.rand(b, 3, size, size, generator=g) for b in batches]


def text(*shapes, vocab=100, seed=0):
    g = torch.Generator().manual_seed(seed)
    out = []
    for b, s in shapes:
        m = torch.ones(b, s, dtype=torch.int64)
        m[0, s // 2:] = 0
        out.append({"input_ids": torch.randint(0, vocab, (b, s), generator=g), "attention_mask": m})
    return out


class FirstImage(torch.nn.Module):
    """A torchvision detector on one image: its first result's boxes,
    scores and labels (the detectors take a list of images)."""

    def __init__(self, det):
        super().__init__()
        self.det = det

    def forward(self, x):
        r = self.det([x[0]])[0]
        return r["boxes"], r["scores"], r["labels"]


class SegOut(torch.nn.Module):
    """A torchvision segmentation model's "out" logits."""

    def __init__(self, seg):
        super().__init__()
        self.seg = seg

    def forward(self, x):
        return self.seg(x)["out"]


def tv(name, **kw):
    import torchvision
    return lambda: (getattr(torchvision.models, name)(weights=None, **kw).eval(), images(2, 3))


def tv_det(name, size=320, **kw):
    import torchvision
    def make():
        m = getattr(torchvision.models.detection, name)(weights=None, weights_backbone=None, **kw).eval()
        return FirstImage(m).eval(), {"fixtures": images(1, 1, 1, size=size), "output_names": ["boxes", "scores", "labels"],
                               "dynamic_axes": None}
    return make


def tv_det_untied(name, size=320, **kw):
    """tv_det with the class head's convolutions drawn at random (weights std
    0.01, biases std 0.5).  A fresh torchvision SSDlite (random backbone, no
    download) feeds its head features of zero, so every anchor scores
    exactly 1/C and no runtime reproduces torch's order among exact ties
    (ONP401).  Measured: the scores still tie here (each is its anchor
    type's bias, the features being zero; docs/architectures.md)."""
    make = tv_det(name, size=size, **kw)

    def remade():
        m, kw2 = make()
        g = torch.Generator().manual_seed(3)
        for mod in m.det.head.classification_head.modules():
            if isinstance(mod, torch.nn.Conv2d) and mod.out_channels % kw["num_classes"] == 0:
                with torch.no_grad():
                    mod.weight.copy_(0.01 * torch.randn(mod.weight.shape, generator=g))
                    if mod.bias is not None:
                        mod.bias.copy_(0.5 * torch.randn(mod.bias.shape, generator=g))
        return m, kw2
    return remade


def tv_det_calibrated(name, size=320, **kw):
    """tv_det with its BatchNorm statistics recalibrated on random images (a
    cumulative average over three train-mode passes of the backbone and the
    head), the step a pruned or re-initialised network gets before use.  A
    fresh torchvision SSDlite's activations shrink to about 1e-14 through
    its random backbone (BatchNorm's running variance 1 undoes nothing), so
    every score ties; recalibrated, features are of order 0.4 and the 300
    scores distinct: a detector whose outputs mean something to compare."""
    make = tv_det(name, size=size, **kw)

    def remade():
        m, kw2 = make()
        for b in m.modules():
            if isinstance(b, torch.nn.BatchNorm2d):
                b.reset_running_stats()
                b.momentum = None
        g = torch.Generator().manual_seed(7)
        m.det.train()
        with torch.no_grad():
            for _ in range(3):
                m.det.head(list(m.det.backbone(torch.rand(4, 3, size, size, generator=g)).values()))
        return m.eval(), kw2
    return remade


def tv_seg(name, **kw):
    import torchvision
    def make():
        m = getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None, **kw).eval()
        return SegOut(m).eval(), images(2, 3, size=64)
    return make


def timm_m(name, **kw):
    def make():
        import timm
        return timm.create_model(name, pretrained=False, num_classes=10, **kw).eval(), images(2, 3, size=kw.get("img_size", 64))
    return make


def hf(cls, cfg, **kw):
    def make():
        import transformers
        c = getattr(transformers, cfg)(**kw)
        return getattr(transformers, cls)(c).eval(), text((2, 8), (3, 12))
    return make


def hf_image(cls, cfg, size=64, **kw):
    """A transformers vision model from a small config, on pixel_values."""
    def make():
        import transformers
        g = torch.Generator().manual_seed(0)
        return (getattr(transformers, cls)(getattr(transformers, cfg)(**kw)).eval(),
                [{"pixel_values": torch.rand(b, 3, size, size, generator=g)} for b in (2, 3)])
    return make


def hf_audio():
    """Wav2Vec2 on raw audio of two lengths (800 and 1200 samples)."""
    import transformers
    c = transformers.Wav2Vec2Config(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                    intermediate_size=64, conv_dim=(16, 16, 16), conv_stride=(5, 2, 2),
                                    conv_kernel=(10, 3, 3), num_conv_pos_embeddings=16,
                                    num_conv_pos_embedding_groups=4, vocab_size=20)
    g = torch.Generator().manual_seed(0)
    return (transformers.Wav2Vec2Model(c).eval(),
            [{"input_values": torch.randn(b, n, generator=g)} for b, n in ((2, 800), (3, 1200))])


class DetrOut(torch.nn.Module):
    """DETR's class logits and boxes."""

    def __init__(self, detr):
        super().__init__()
        self.detr = detr

    def forward(self, pixel_values):
        r = self.detr(pixel_values=pixel_values)
        return r.logits, r.pred_boxes


def hf_detr():
    """DETR with a small ResNet backbone of its own (nothing downloaded)."""
    import transformers
    bb = transformers.ResNetConfig(embedding_size=16, hidden_sizes=[16, 32, 64, 128], depths=[1, 1, 1, 1],
                                   layer_type="basic", out_features=["stage4"])
    c = transformers.DetrConfig(use_timm_backbone=False, use_pretrained_backbone=False, backbone_config=bb,
                                d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=4,
                                decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64,
                                num_queries=10, num_labels=5, auxiliary_loss=False)
    return DetrOut(transformers.DetrForObjectDetection(c)).eval(), images(2, 3, size=96)


def tv_video(name, **kw):
    """A torchvision video model on clips of 4 frames at 32x32."""
    def make():
        import torchvision
        g = torch.Generator().manual_seed(0)
        return (getattr(torchvision.models.video, name)(weights=None, **kw).eval(),
                [torch.rand(b, 3, 4, 32, 32, generator=g) for b in (2, 3)])
    return make


def small(**kw):
    return dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, **kw)


def zoo(name, *args):
    def make():
        import models3
        return getattr(models3, name)(*args).eval(), images(2, 3, size=32)
    return make


MODELS = {
    # torchvision classification
    "tv resnet18": tv("resnet18", num_classes=10),
    "tv mobilenet_v2": tv("mobilenet_v2", num_classes=10),
    "tv mobilenet_v3_small": tv("mobilenet_v3_small", num_classes=10),
    "tv mobilenet_v3_large": tv("mobilenet_v3_large", num_classes=10),
    "tv efficientnet_b0": tv("efficientnet_b0", num_classes=10),
    "tv squeezenet1_1": tv("squeezenet1_1", num_classes=10),
    "tv shufflenet_v2_x0_5": tv("shufflenet_v2_x0_5", num_classes=10),
    "tv mnasnet0_5": tv("mnasnet0_5", num_classes=10),
    "tv regnet_x_400mf": tv("regnet_x_400mf", num_classes=10),
    "tv regnet_y_400mf": tv("regnet_y_400mf", num_classes=10),
    "tv googlenet": tv("googlenet", num_classes=10, aux_logits=False, init_weights=True),
    # torchvision detection and segmentation
    "tv ssdlite320_mobilenet_v3_large": tv_det("ssdlite320_mobilenet_v3_large", num_classes=5),
    "tv ssdlite320_mobilenet_v3_large (class head untied)":
        tv_det_untied("ssdlite320_mobilenet_v3_large", num_classes=5),
    "tv ssdlite320_mobilenet_v3_large (BatchNorm recalibrated)":
        tv_det_calibrated("ssdlite320_mobilenet_v3_large", num_classes=5),
    "tv lraspp_mobilenet_v3_large": tv_seg("lraspp_mobilenet_v3_large", num_classes=4),
    "tv deeplabv3_mobilenet_v3_large": tv_seg("deeplabv3_mobilenet_v3_large", num_classes=4,
                                               aux_loss=False),
    "tv fcn_resnet50": tv_seg("fcn_resnet50", num_classes=4, aux_loss=False),
    "tv swin_t": tv("swin_t", num_classes=10),
    "tv r3d_18 (video)": tv_video("r3d_18", num_classes=10),
    "hf DetrForObjectDetection": hf_detr,
    # timm
    "timm resnet18": timm_m("resnet18"),
    "timm levit_128s": timm_m("levit_128s", img_size=64),
    "timm fastvit_t8": timm_m("fastvit_t8"),
    "timm efficientnet_b0": timm_m("efficientnet_b0"),
    "timm mobilenetv3_small_050": timm_m("mobilenetv3_small_050"),
    "timm convnext_atto": timm_m("convnext_atto"),
    "timm vit_tiny_patch16_224": timm_m("vit_tiny_patch16_224", img_size=32, patch_size=8),
    "timm deit_tiny_patch16_224": timm_m("deit_tiny_patch16_224", img_size=32, patch_size=8),
    "timm mixer_s16_224": timm_m("mixer_s16_224", img_size=32, drop_path_rate=0.1),
    "timm regnetx_002": timm_m("regnetx_002"),
    "timm ghostnet_100": timm_m("ghostnet_100"),
    "timm mobilevit_xxs": timm_m("mobilevit_xxs"),
    "timm poolformer_s12": timm_m("poolformer_s12"),
    "timm resnet10t": timm_m("resnet10t"),
    "timm mobilenetv2_050": timm_m("mobilenetv2_050"),
    "timm lcnet_050": timm_m("lcnet_050"),
    "timm tinynet_e": timm_m("tinynet_e"),
    "timm repvgg_a0": timm_m("repvgg_a0"),
    # transformers
    "hf BertModel": hf("BertModel", "BertConfig", vocab_size=100, max_position_embeddings=64, **small()),
    "hf DistilBertModel": hf("DistilBertModel", "DistilBertConfig", vocab_size=100, dim=32, n_layers=2,
                             n_heads=4, hidden_dim=64, max_position_embeddings=64),
    "hf RobertaModel": hf("RobertaModel", "RobertaConfig", vocab_size=100, max_position_embeddings=64,
                          **small()),
    "hf AlbertModel": hf("AlbertModel", "AlbertConfig", vocab_size=100, embedding_size=16,
                         max_position_embeddings=64, **small()),
    "hf ElectraModel": hf("ElectraModel", "ElectraConfig", vocab_size=100, embedding_size=16,
                          max_position_embeddings=64, **small()),
    "hf BartModel encoder": hf("BartModel", "BartConfig", vocab_size=100, d_model=32, encoder_layers=2,
                               decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4,
                               encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=64),
    # the same seq2seq model as a user exports it for a one-step check: no
    # cache object among its outputs (use_cache=False; the decode loop is
    # onnxparity generate's)
    "hf BartModel (use_cache=False)": hf("BartModel", "BartConfig", vocab_size=100, d_model=32,
                                         encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                                         decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64,
                                         max_position_embeddings=64, use_cache=False),
    "hf T5EncoderModel": hf("T5EncoderModel", "T5Config", vocab_size=100, d_model=32, d_kv=8, d_ff=64,
                            num_layers=2, num_heads=4),
    "hf DebertaV2Model": hf("DebertaV2Model", "DebertaV2Config", vocab_size=100, max_position_embeddings=64,
                            **small()),
    "hf ConvNextV2Model": hf_image("ConvNextV2Model", "ConvNextV2Config", hidden_sizes=[16, 32, 64, 128],
                                   depths=[1, 1, 2, 1]),
    "hf SwinModel": hf_image("SwinModel", "SwinConfig", image_size=64, patch_size=4, embed_dim=16,
                             depths=[1, 2], num_heads=[2, 4], window_size=4),
    "hf SegformerModel": hf_image("SegformerModel", "SegformerConfig", num_encoder_blocks=2, depths=[1, 1],
                                  sr_ratios=[2, 1], hidden_sizes=[16, 32], num_attention_heads=[1, 2],
                                  patch_sizes=[7, 3], strides=[4, 2], mlp_ratios=[2, 2]),
    "hf CLIPVisionModel": hf_image("CLIPVisionModel", "CLIPVisionConfig", hidden_size=32, intermediate_size=64,
                                   num_hidden_layers=2, num_attention_heads=4, image_size=64, patch_size=16),
    "hf Wav2Vec2Model (audio)": hf_audio,
    # models built to a real architecture's shape (tests/zoo/models3.py)
    "TinySSD (SSDlite's shape, near-tied scores)": zoo("TinySSD"),
    "MLP-Mixer (DropPath in residuals)": zoo("Mixer"),
    "ConvNeXt block (layer scale)": zoo("TinyConvNeXt"),
    "U-Net (segmentation)": zoo("TinyUNet"),
    "ViT (class token, pre-norm)": zoo("TinyViT"),
}
FAMILY = {"tv ssdlite320_mobilenet_v3_large": "detection",
          "tv ssdlite320_mobilenet_v3_large (class head untied)": "detection",
          "tv ssdlite320_mobilenet_v3_large (BatchNorm recalibrated)": "detection",
          "TinySSD (SSDlite's shape, near-tied scores)": "detection",
          "tv lraspp_mobilenet_v3_large": "segmentation", "tv deeplabv3_mobilenet_v3_large": "segmentation",
          "tv fcn_resnet50": "segmentation", "hf SegformerModel": "segmentation (encoder)",
          "hf DetrForObjectDetection": "detection", "tv r3d_18 (video)": "video",
          "hf Wav2Vec2Model (audio)": "audio",
          "U-Net (segmentation)": "segmentation"}


def command(binary, cmd, bundle):
    t = time.time()
    r = subprocess.run([binary, cmd, str(bundle), "--format", "json"], capture_output=True, text=True,
                       timeout=900)
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        doc = {}
    top = (doc.get("causes") or [None])[0]
    return {"rc": r.returncode, "verdict": doc.get("verdict"), "secs": round(time.time() - t, 2),
            "top": top and f"{top['id']} ({top['confidence']})",
            "err": r.stderr.strip()[-300:] if r.returncode not in (0, 1) else None}


def one(name, make, out, binary):
    row = {"model": name, "family": FAMILY.get(name, "classification/encoder")}
    t = time.time()
    try:
        torch.manual_seed(0)
        model, fx = make()
        kw = {}
        if isinstance(fx, dict):
            kw = {k: v for k, v in fx.items() if k != "fixtures"}
            fx = fx["fixtures"]
        doc = onnxparity.capture(model, fx, out, **kw)
        row.update(exporter=doc.get("exporter"), fallback=doc.get("exporter_fallback"),
                   capture_s=round(time.time() - t, 1))
    except Exception as ex:  # noqa: BLE001 — the survey records what failed
        row.update(capture_error=f"{type(ex).__name__}: {str(ex)[:300]}")
        return row
    for cmd in ("check", "diagnose", "bisect"):
        row[cmd] = command(binary, cmd, out)
    row["healthy"] = all(row[c]["rc"] == 0 for c in ("check", "diagnose", "bisect"))
    return row


def table(rows):
    lines = ["| model | family | exporter | check | diagnose | bisect | capture |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        if "capture_error" in r:
            lines.append(f"| {r['model']} | {r['family']} | - | - | - | - | capture failed: "
                         f"{r['capture_error'][:80]} |")
            continue
        cell = [f"{r[c]['verdict']} (exit {r[c]['rc']})" for c in ("check", "diagnose", "bisect")]
        lines.append(f"| {r['model']} | {r['family']} | {r['exporter']} | " + " | ".join(cell)
                     + f" | {r['capture_s']} s |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=pathlib.Path)
    ap.add_argument("--onnxparity", default=str(ROOT / "build" / "onnxparity"))
    ap.add_argument("--only", nargs="*")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    log_path = a.out / "survey.jsonl"
    done = {}
    if log_path.exists():  # a rerun continues where the last one stopped
        for line in log_path.read_text().splitlines():
            r = json.loads(line)
            done[r["model"]] = r
    order = sorted(MODELS, key=lambda n: FAMILY.get(n) is None)  # detection, segmentation first
    rows = [done[n] for n in order if n in done]
    with open(log_path, "a") as log:
        for name in order:
            make = MODELS[name]
            if (a.only and name not in a.only) or name in done:
                continue
            d = a.out / name.replace(" ", "_").replace("(", "").replace(")", "").replace(",", "").replace("'", "")
            r = one(name, make, d, a.onnxparity)
            rows.append(r)
            log.write(json.dumps(r) + "\n")
            log.flush()
            print(json.dumps(r), flush=True)
    print(table(rows))


if __name__ == "__main__":
    main()
