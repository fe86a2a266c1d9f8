"""Architectures nobody on the project wrote: transformers and timm models,
random weights from small configs (no downloads), with keyword inputs
(attention_mask) and ModelOutput / dict outputs, captured at two shapes under
both exporters of torch 2.x and checked under ONNX Runtime.

Needs transformers and timm (the torch 2.x environment, .venv-torch2, has
both); skips elsewhere and says why.  Prints a table (time per capture and
check) that docs/architectures.md quotes.

Run: PYTHONPATH=python ONNXPARITY_BIN=$PWD/build/onnxparity \
     .venv-torch2/bin/python -m pytest -q -s tests/py/test_dynamo_archs.py
"""
import re
import time

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
timm = pytest.importorskip("timm")

import onnxparity  # noqa: E402
from onnxparity import _export  # noqa: E402
from onnxparity.testing import assert_export_parity  # noqa: E402

pytestmark = [
    pytest.mark.skipif(not _export.has_dynamo_exporter(),
                       reason=f"torch {torch.__version__} has no dynamo exporter"),
    pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning",
                               "ignore::FutureWarning", "ignore::torch.jit.TracerWarning"),
]

VOCAB = 100
TIMES = []


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def text(*shapes, seed=0, mask=True, token_types=False):
    """One fixture per (batch, seq): token ids, and an attention mask whose
    first row is padded from the middle on."""
    g, out = _gen(seed), []
    for b, s in shapes:
        fx = {"input_ids": torch.randint(0, VOCAB, (b, s), generator=g)}
        if mask:
            m = torch.ones(b, s, dtype=torch.int64)
            m[0, s // 2:] = 0
            fx["attention_mask"] = m
        if token_types:
            fx["token_type_ids"] = torch.zeros(b, s, dtype=torch.int64)
        out.append(fx)
    return out


def images(*batches, size=32, channels=3, seed=0, key=None):
    g = _gen(seed)
    xs = [torch.randn(b, channels, size, size, generator=g) for b in batches]
    return [{key: x} for x in xs] if key else xs


def small(**kw):
    return dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, **kw)


def bert():
    return transformers.BertModel(transformers.BertConfig(vocab_size=VOCAB, max_position_embeddings=64,
                                                          **small())), text((2, 8), (3, 12), token_types=True)


def masks_without_vmap(model):
    """The decoders' attention masks built without torch.vmap, as
    transformers' own exporters (transformers.integrations.executorch) do:
    torch.export cannot trace masking_utils' vmap with a dynamic batch or
    sequence, which is what the capture's ExportError says to do."""
    from transformers.integrations.executorch import sdpa_mask_without_vmap
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS
    ALL_MASK_ATTENTION_FUNCTIONS.register("sdpa_without_vmap", sdpa_mask_without_vmap)
    ALL_ATTENTION_FUNCTIONS.register("sdpa_without_vmap", ALL_ATTENTION_FUNCTIONS["sdpa"])
    model.config._attn_implementation = "sdpa_without_vmap"
    return model


def gpt2_config():
    return transformers.GPT2Config(vocab_size=VOCAB, n_positions=64, n_embd=32, n_layer=2, n_head=4,
                                   use_cache=False)


def llama_config():
    return transformers.LlamaConfig(vocab_size=VOCAB, max_position_embeddings=64, num_key_value_heads=2,
                                    use_cache=False, **small())


def gpt2():
    return masks_without_vmap(transformers.GPT2Model(gpt2_config())), text((2, 8), (3, 12), seed=1)


class TextOnly(torch.nn.Module):
    """forward(input_ids, attention_mask) and nothing else.  torch's legacy
    exporter fills every forward parameter it is not given with its default:
    LlamaForCausalLM's logits_to_keep=0 becomes a graph input of its own, and
    LlamaModel (whose forward ends in **kwargs) fails with "multiple values
    for argument 'use_cache'".  A forward of exactly the inputs is what a
    user exports instead; the module names gain the prefix "lm."."""

    def __init__(self, lm):
        super().__init__()
        self.lm = lm

    def forward(self, input_ids, attention_mask):
        return self.lm(input_ids=input_ids, attention_mask=attention_mask)


def llama():
    lm = masks_without_vmap(transformers.LlamaForCausalLM(llama_config()))
    return TextOnly(lm), text((2, 8), (3, 12), seed=2)


def t5_encoder():
    cfg = transformers.T5Config(vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
                                use_cache=False)
    return transformers.T5EncoderModel(cfg), text((2, 8), (3, 12), seed=3)


def bart_encoder():
    cfg = transformers.BartConfig(vocab_size=VOCAB, d_model=32, encoder_layers=2, decoder_layers=2,
                                  encoder_attention_heads=4, decoder_attention_heads=4,
                                  encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=64,
                                  use_cache=False)
    return transformers.BartModel(cfg).get_encoder(), text((2, 8), (3, 12), seed=4)


def vit():
    cfg = transformers.ViTConfig(image_size=32, patch_size=8, **small())
    return transformers.ViTModel(cfg), images(2, 3, key="pixel_values", seed=5)


def whisper_encoder():
    cfg = transformers.WhisperConfig(vocab_size=VOCAB, d_model=32, encoder_layers=2, decoder_layers=2,
                                     encoder_attention_heads=4, decoder_attention_heads=4,
                                     encoder_ffn_dim=64, decoder_ffn_dim=64, num_mel_bins=16,
                                     max_source_positions=16, max_target_positions=16, use_cache=False,
                                     pad_token_id=0, bos_token_id=1, eos_token_id=2,
                                     decoder_start_token_id=1)
    g = _gen(6)
    # the encoder takes exactly 2 * max_source_positions frames: only the batch varies
    fx = [{"input_features": torch.randn(b, 16, 32, generator=g)} for b in (2, 3)]
    return transformers.WhisperModel(cfg).get_encoder(), fx


def timm_model(name, **kw):
    def make():
        return timm.create_model(name, pretrained=False, num_classes=10, **kw), images(2, 3, seed=7)
    make.__name__ = f"timm_{name}"
    return make


ARCHS = [bert, gpt2, llama, t5_encoder, bart_encoder, vit, whisper_encoder,
         timm_model("resnet18"), timm_model("vit_tiny_patch16_224", img_size=32, patch_size=8),
         timm_model("convnext_atto"), timm_model("mobilenetv3_small_050")]


@pytest.fixture(scope="session")
def binary(onnxparity):  # conftest's fixture: the binary's path (skips when it is not built)
    return onnxparity


@pytest.fixture(scope="module", autouse=True)
def table(request):
    yield
    if TIMES:
        w = max(len(r[0]) for r in TIMES)
        lines = [f"{'model':{w}s}  exporter  capture   check  mapped leaves"]
        lines += [f"{n:{w}s}  {e:8s}  {c:6.1f}s  {k:5.2f}s  {r}" for n, e, c, k, r in TIMES]
        capman = request.config.pluginmanager.getplugin("capturemanager")
        with capman.global_and_fixture_disabled():
            print("\n" + "\n".join(lines))


@pytest.mark.parametrize("exporter", ["dynamo", "legacy"])
@pytest.mark.parametrize("arch", ARCHS, ids=lambda f: f.__name__)
def test_architecture_captures_and_checks(arch, exporter, binary, tmp_path):
    torch.manual_seed(0)
    model, fixtures = arch()
    model.eval()
    t0 = time.perf_counter()
    doc = onnxparity.capture(model, fixtures, tmp_path / "b", exporter=exporter, dynamic_axes="auto")
    t1 = time.perf_counter()
    assert doc["exporter"] == exporter and doc["exporter_fallback"] is None
    assert len(doc["fixtures"]) == len(fixtures) >= 2
    assert len({tuple(f["inputs"][0]["shape"]) for f in doc["fixtures"]}) >= 2  # two shapes
    if isinstance(fixtures[0], dict):
        assert [i["path"] for i in doc["inputs"]] == [f"kwargs[{k!r}]" for k in fixtures[0]]
    check = assert_export_parity(tmp_path / "b", binary=binary, rtol=1e-3, atol=1e-4)
    t2 = time.perf_counter()
    s = doc["mapping"]
    TIMES.append((arch.__name__, exporter, t1 - t0, t2 - t1, f"{s['leaf_mapped']}/{s['leaf_modules']}"))
    assert check["summary"]["outputs_failed"] == 0


@pytest.mark.parametrize("config, cls", [(gpt2_config, "GPT2Model"), (llama_config, "LlamaForCausalLM")],
                         ids=["gpt2", "llama"])
def test_decoder_vmap_masks_are_an_export_error_naming_construct_and_fix(config, cls, tmp_path):
    """transformers 4.57 builds its decoders' causal and padding masks with
    torch.vmap over index functions (masking_utils); torch 2.9's torch.export
    cannot trace that with a dynamic batch or sequence (the same model
    exports with static shapes, and with the masks built without vmap: the
    ARCHS above).  The capture names vmap, the place, and transformers' own
    fix, and leaves nothing behind."""
    torch.manual_seed(0)
    model = getattr(transformers, cls)(config()).eval()
    with pytest.raises(onnxparity.ExportError) as e:
        onnxparity.capture(model, text((2, 8), (3, 12)), tmp_path / "b", exporter="dynamo",
                           dynamic_axes="auto")
    msg = str(e.value)
    assert re.search(r"torch\.vmap over a tensor with a dynamic dim at \S*masking_utils\.py:\d+", msg), msg
    assert "sdpa_mask_without_vmap" in msg and "_attn_implementation = 'sdpa_without_vmap'" in msg, msg
    assert not (tmp_path / "b").exists()
