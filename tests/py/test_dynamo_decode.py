"""The decode loop, token by token, with the KV cache (issue 31;
docs/decode.md, docs/generate.md): a tiny GPT-2 (random init) captured with
onnxparity.capture_decode, its greedy generation run again in ONNX Runtime
by `onnxparity generate`.

- healthy: every prompt (padded batches included) agrees, exit 0, the
  agreement bound is Clopper-Pearson's for 0 of N;
- planted in the decode path only (prefill identical, checked here in torch
  first): position ids one ahead once a cache exists -> every prompt a
  defect at step 1, not 0;
- attention mask ignored: only the padded rows are defects, at step 0;
- a near-tie made by construction (two lm_head rows equal in eager, so the
  float64 logits of the two tokens are equal: margin 0), ORT's copy of one
  row raised by a few ulps: the flip is a near-tie (exit 0; --strict exit 1);
  the same flip forced on a token eager ranks far below is a defect.

Needs transformers (the torch 2.x environment); skips elsewhere.
"""
import copy
import json
import math
import random
import shutil
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
onnx = pytest.importorskip("onnx")

from conftest import run  # noqa: E402
from consumers import validate_doc  # noqa: E402
from onnxparity import _decode, _export  # noqa: E402

pytestmark = [
    pytest.mark.skipif(not _export.has_dynamo_exporter(),
                       reason=f"torch {torch.__version__} has no dynamo exporter"),
    pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning",
                               "ignore::FutureWarning"),
]

VOCAB = 101  # not 3 * n_embd: the lm_head is the only [32, VOCAB] weight
PROMPTS, STEPS, BATCH = 104, 32, 8  # issue 31's scale: 100+ prompts x 32 steps


def gpt2(seed=0):
    torch.manual_seed(seed)
    cfg = transformers.GPT2Config(vocab_size=VOCAB, n_positions=64, n_embd=32, n_layer=2, n_head=2,
                                  initializer_range=0.2)
    return transformers.GPT2LMHeadModel(cfg).eval()


def prompts(n=PROMPTS, seed=1):
    """Lengths 1..8, so every batch is padded (left) except its longest rows."""
    rng = random.Random(seed)
    return [[rng.randrange(1, VOCAB) for _ in range(1 + (3 * i) % 8)] for i in range(n)]


def generate(onnxparity, bundle, *extra):
    r = run([onnxparity, "generate", bundle, "--format", "json", *extra])
    assert r.returncode in (0, 1), r.stderr
    doc = json.loads(r.stdout)
    validate_doc(doc, f"generate {bundle}")
    named_with_step_and_token(bundle, doc)
    return r.returncode, doc


def named_with_step_and_token(bundle, doc):
    """Every prompt that diverges is named with its step and eager's token
    there (read here from the bundle's tokens.npy), ORT's token where ORT
    ran the step (null where it refused it)."""
    man = json.loads((Path(bundle) / "generate.json").read_text())
    tokens = [np.load(Path(bundle) / b["dir"] / "tokens.npy") for b in man["batches"]]
    for p in doc["prompts"]:
        fd = p["first_divergence"]
        if p["first_divergent_step"] is None:
            assert fd is None
            continue
        t = p["first_divergent_step"]
        assert fd["step"] == t and fd["eager_token"] == tokens[p["batch"]][p["row"], t], (p["index"], fd)
        if p["refused_step"] == t:
            assert fd["ort_token"] is None
        else:
            assert fd["ort_token"] == p["steps"][t]["ort_token"] >= 0


@pytest.fixture(scope="module")
def healthy(tmp_path_factory):
    model = gpt2()
    out = tmp_path_factory.mktemp("gen") / "healthy"
    man = _decode.capture_decode(model, str(out), prompts(), steps=STEPS, batch_size=BATCH,
                                 logits_batches=1)
    return model, out, man


def refit(model, healthy_dir, tmp_path, step_cls, name, **kw):
    """The healthy bundle with its model.onnx replaced by an export of
    step_cls over the same weights (the eager record stays the truth)."""
    out = tmp_path / name
    shutil.copytree(healthy_dir, out)
    (out / "model.onnx").unlink()
    (out / "model.onnx.data").unlink()
    _decode.export_decoder(step_cls(model, model.config.num_hidden_layers), str(out / "model.onnx"), **kw)
    return out


class PositionsAheadInCache(_decode.DecoderStep):
    """Position ids one ahead whenever a cache exists (mask longer than the
    new tokens): the prefill is untouched, every decode step shifted."""

    def positions(self, input_ids, attention_mask, position_ids):
        cached = (attention_mask.sum(dim=1, keepdim=True) > input_ids.shape[1]).to(position_ids.dtype)
        return position_ids + cached


class PositionsConstant(_decode.DecoderStep):
    """Position ids made in the graph from the new tokens' count (0..S-1),
    the inputs ignored: right for an unpadded prefill, constant (0) at every
    decode step."""

    def positions(self, input_ids, attention_mask, position_ids):
        return torch.cumsum(torch.ones_like(input_ids), dim=1) - 1


class MaskIgnored(_decode.DecoderStep):
    def forward(self, input_ids, attention_mask, position_ids, *past):
        return super().forward(input_ids, torch.ones_like(attention_mask), position_ids, *past)


def causes(doc):
    """The run's causes: {id: prompts}; each defect prompt carries one."""
    for p in doc["prompts"]:
        assert (p["cause"] is not None) == (p["class"] == "defect"), p
    return {c["id"]: c["prompts"] for c in doc["causes"]}


def where(p):
    """A prompt's defect placed: (kind, step, layer, entry)."""
    w = p["where"]
    return w["kind"], w["step"], w["layer"], w["entry"]


def test_manifest_records_the_generation(healthy):
    _, out, man = healthy
    assert man["schema"] == "onnxparity.decode-bundle/1"
    assert man["prompts"] == PROMPTS and len(man["batches"]) == PROMPTS // BATCH
    b0 = man["batches"][0]
    assert b0["logits"] and not man["batches"][1]["logits"]
    # every batch keeps its cache (cache_batches=None), so every prompt's layer is judged
    assert all(b["cache"] for b in man["batches"])
    assert (out / "batch_12" / "cache64.npy").exists()
    assert b0["prompt_lengths"] == [1, 4, 7, 2, 5, 8, 3, 6] and b0["prompt_len"] == 8
    # the cache grows by one position per step, from the padded prompt
    assert [s[2] for s in b0["cache_shapes"]] == [8 + t for t in range(STEPS)]
    assert np.load(out / "batch_0" / "logits64.npy").dtype == np.float64
    assert not (out / "batch_1" / "logits.npy").exists()


def cp_upper(k, n, confidence=0.95):
    """One-sided Clopper-Pearson upper bound, by bisection on the binomial
    CDF (independent of the library's Beta quantile)."""
    if k >= n:
        return 1.0
    lo, hi = 0.0, 1.0
    for _ in range(100):
        p = (lo + hi) / 2
        cdf = sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(k + 1))
        lo, hi = (p, hi) if cdf > 1 - confidence else (lo, p)
    return (lo + hi) / 2


def healthy_run(onnxparity, out):
    """A healthy bundle: exit 0, no defect, near-ties allowed and counted;
    the bound is Clopper-Pearson's for the prompts that do not agree."""
    code, doc = generate(onnxparity, out)
    assert code == 0 and doc["verdict"] == "pass"
    s = doc["summary"]
    assert s["prompts"] == PROMPTS and s["classes"]["defect"] == 0
    assert s["tokens"] == PROMPTS * STEPS
    differ = PROMPTS - s["classes"]["agree"]
    assert s["prompt_agreement"]["flip_rate_upper"] == pytest.approx(cp_upper(differ, PROMPTS), rel=1e-6)
    for p in doc["prompts"]:
        assert p["first_logit_step"] is None and p["first_cache_entry"] is None
        assert p["cache_judged"] and p["where"]["kind"] == "none"
        assert all(st["logits_pass"] and st["cache_ok"] for st in p["steps"])
    return doc


def test_a_malformed_array_is_named(onnxparity, healthy, tmp_path):
    """An array of the wrong shape: exit 3, one line naming the file, the
    shape expected and the one found; a manifest member of the wrong type:
    exit 3 naming its path."""
    _, out, _ = healthy
    bad = tmp_path / "bad"
    shutil.copytree(out, bad)
    np.save(bad / "batch_1" / "tokens.npy", np.zeros((BATCH, STEPS - 1), dtype=np.int64))
    r = run([onnxparity, "generate", bad])
    assert r.returncode == 3 and r.stdout == "" and len(r.stderr.strip().splitlines()) == 1
    assert "batch_1/tokens.npy" in r.stderr and f"[{BATCH}, {STEPS}]" in r.stderr, r.stderr
    man = json.loads((out / "generate.json").read_text())
    man["batches"][1]["rows"] = "8"
    (bad / "generate.json").write_text(json.dumps(man))
    r = run([onnxparity, "generate", bad])
    assert r.returncode == 3 and "batches[1].rows" in r.stderr, r.stderr
    r = run([onnxparity, "generate", out, "--steps", str(STEPS + 1)])
    assert r.returncode == 2 and "--steps" in r.stderr


def test_healthy_gpt2_agrees(onnxparity, healthy):
    _, out, _ = healthy
    doc = healthy_run(onnxparity, out)
    assert doc["summary"]["classes"]["agree"] >= PROMPTS - 4
    # the release criterion on the bound: 0 of 104 differ gives 0.0284
    bound = doc["summary"]["prompt_agreement"]["flip_rate_upper"]
    code, strict = generate(onnxparity, out, "--max-differ-rate", "0.01")
    assert bound > 0.01 and code == 1 and strict["criteria"]["rate_exceeded"]
    code, loose = generate(onnxparity, out, "--max-differ-rate", "0.05")
    assert bound <= 0.05 and code == 0 and not loose["criteria"]["rate_exceeded"]
    # both the full-logits batch and the top-k batch are judged
    assert {st["judged_on"] for p in doc["prompts"] for st in p["steps"]} == {"logits", "top-k"}
    # the eager tokens are what the loop generated
    tokens = np.load(out / "batch_0" / "tokens.npy")
    assert [st["eager_token"] for st in doc["prompts"][0]["steps"]] == list(tokens[0])
    # progress on stderr, a line per batch, with --verbose; none with --quiet or off a terminal
    nb = PROMPTS // BATCH
    r = run([onnxparity, "generate", out, "--steps", "2", "--verbose"])
    assert r.returncode == 0 and r.stderr.splitlines() == \
        [f"generate: batch {k + 1}/{nb} batch_{k}" for k in range(nb)], r.stderr
    r = run([onnxparity, "generate", out, "--steps", "2"])
    assert r.returncode == 0 and r.stderr == ""


def test_positions_wrong_in_the_decode_path_named_at_step_1(onnxparity, healthy, tmp_path):
    model, out, _ = healthy
    # the premise, in torch: prefill identical, the first decode step not
    ids, mask = _decode.left_pad(prompts()[:BATCH], 0)
    good = _decode.DecoderStep(model, 2)
    bad = PositionsAheadInCache(model, 2)
    t_good, l_good, _, _ = _decode._greedy(good, ids, mask, 2, torch.float32)
    _, l_bad, _, _ = _decode._greedy(bad, ids, mask, 2, torch.float32, force=t_good)
    assert np.array_equal(l_good[0], l_bad[0])
    assert np.abs(l_good[1] - l_bad[1]).max() > 1e-3

    faulty = refit(model, out, tmp_path, PositionsAheadInCache, "positions")
    code, doc = generate(onnxparity, faulty)
    assert code == 1 and doc["verdict"] == "fail"
    assert doc["summary"]["classes"]["defect"] == PROMPTS
    for p in doc["prompts"]:
        assert p["class"] == "defect"
        assert p["first_divergent_step"] == 1 and p["first_logit_step"] == 1
        assert p["steps"][0]["logits_pass"] and p["steps"][0]["ort_token"] == p["steps"][0]["eager_token"]
        assert p["steps"][1]["logits"] in ("beyond-noise", "beyond-tolerance")
        assert p["why"].startswith("step 1:")
        # absolute positions enter at layer 0: its key is the first entry off, every prompt
        assert where(p) == ("cache-entry", 1, 0, "key"), p["where"]
    assert causes(doc) == {"decode-positions": PROMPTS}


def test_position_ids_constant_named_per_row(onnxparity, healthy, tmp_path):
    """Positions not advanced: every prompt a defect; the unpadded rows (whose
    prefill positions are right) first at step 1, the padded ones at 0."""
    model, out, man = healthy
    faulty = refit(model, out, tmp_path, PositionsConstant, "constpos")
    code, doc = generate(onnxparity, faulty, "--steps", "4")
    assert code == 1 and doc["summary"]["classes"]["defect"] == PROMPTS
    for p in doc["prompts"]:
        padded = p["prompt_len"] < man["batches"][p["batch"]]["prompt_len"]
        assert p["first_divergent_step"] == (0 if padded else 1), p
        assert p["first_logit_step"] == p["first_divergent_step"]
        # GPT-2's positions are added to the embedding: layer 0's key is off first
        assert where(p) == ("cache-entry", p["first_divergent_step"], 0, "key"), p["where"]
    assert causes(doc) == {"decode-positions": PROMPTS}


def test_attention_mask_ignored_names_the_padded_rows(onnxparity, healthy, tmp_path):
    model, out, man = healthy
    faulty = refit(model, out, tmp_path, MaskIgnored, "mask")
    code, doc = generate(onnxparity, faulty, "--steps", "3")
    assert code == 1
    for p in doc["prompts"]:
        padded = p["prompt_len"] < man["batches"][p["batch"]]["prompt_len"]
        assert p["class"] == ("defect" if padded else "agree"), p
        if padded:
            assert p["first_divergent_step"] == 0 and p["first_logit_step"] == 0
            # layer 0's key and value are projections of the embeddings,
            # before any attention: the mask first shows in layer 1's key
            assert where(p) == ("cache-entry", 0, 1, "key"), p["where"]
        else:
            assert where(p)[0] == "none"
    padded = sum(p["prompt_len"] < man["batches"][p["batch"]]["prompt_len"] for p in doc["prompts"])
    assert causes(doc) == {"decode-attention-mask": padded}


def test_past_length_baked_at_trace_is_named_at_step_0(onnxparity, healthy, tmp_path):
    """The past's sequence dim left static: the graph takes only the trace's
    past length (4), so ORT refuses the prefill's empty past. Every prompt a
    defect at step 0, ORT's message naming the input; exit 1, not an error."""
    model, out, _ = healthy
    faulty = refit(model, out, tmp_path, _decode.DecoderStep, "baked", static_past=True)
    code, doc = generate(onnxparity, faulty)
    assert code == 1 and doc["summary"]["classes"]["defect"] == PROMPTS
    for p in doc["prompts"]:
        assert p["refused_step"] == 0 and p["first_divergent_step"] == 0 and p["steps_run"] == 0
        assert "past_key_values.0.key" in p["why"] and "expected float32 [" in p["why"], p["why"]
        # the graph input whose length is fixed names the layer: the first, its key
        assert where(p) == ("graph-input", 0, 0, "key") and p["where"]["baked_length"] == 4
    assert causes(doc) == {"decode-past-baked": PROMPTS}
    # the graph's own declaration, read independently
    decl = {i.name: [d.dim_value if d.HasField("dim_value") else None
                     for d in i.type.tensor_type.shape.dim]
            for i in onnx.load(str(faulty / "model.onnx"), load_external_data=False).graph.input}
    assert decl["past_key_values.0.key"][2] == 4 and decl["past_key_values.1.value"][2] == 4


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64,
                                   num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                   max_position_embeddings=64, initializer_range=0.2)
    model = transformers.LlamaForCausalLM(cfg).eval()
    out = tmp_path_factory.mktemp("gen") / "llama"
    man = _decode.capture_decode(model, str(out), prompts(), steps=STEPS, batch_size=BATCH,
                                 logits_batches=1)
    return model, out, man


def test_llama_with_grouped_query_cache_agrees(onnxparity, llama):
    """A Llama-style decoder (RoPE, RMSNorm, 4 heads over 2 key/value heads):
    healthy, every prompt agrees, no cache entry leaves its noise; the cache
    is [B, 2, P, 8]."""
    _, out, man = llama
    assert man["cache"] == {"layers": 2, "kv_heads": 2, "head_dim": 8, "dtype": "float32"}
    assert man["batches"][0]["cache_shapes"][0] == [BATCH, 2, 8, 8]
    doc = healthy_run(onnxparity, out)
    assert doc["model_type"] == "llama"
    assert all(p["cache_judged"] for p in doc["prompts"])


def test_changed_weight_in_the_last_layer_is_named_by_its_cache(onnxparity, llama, tmp_path):
    """ORT's graph from a copy whose last layer's value projection is 1 %
    larger: a defect from the prefill on, and the first cache entry beyond
    its noise is layer 1's value (layer 0 and layer 1's key untouched)."""
    model, out, _ = llama
    changed = copy.deepcopy(model)
    with torch.no_grad():
        changed.model.layers[1].self_attn.v_proj.weight.mul_(1.01)
    faulty = refit(changed, out, tmp_path, _decode.DecoderStep, "lastlayer")
    code, doc = generate(onnxparity, faulty)
    assert code == 1
    for p in doc["prompts"]:
        assert p["class"] == "defect" and p["first_logit_step"] == 0
        assert where(p) == ("cache-entry", 0, 1, "value"), p["where"]
        assert p["first_cache_entry"]["step"] == 0
    assert causes(doc) == {"decode-layer": PROMPTS}
    assert (doc["causes"][0]["layer"], doc["causes"][0]["entry"]) == (1, "value")


def test_qwen2_agrees(onnxparity, tmp_path):
    """A third architecture, Qwen2 (biased q/k/v projections, grouped-query
    cache): healthy at the same scale."""
    torch.manual_seed(0)
    cfg = transformers.Qwen2Config(vocab_size=VOCAB, hidden_size=32, intermediate_size=64,
                                   num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                   max_position_embeddings=64, initializer_range=0.2)
    model = transformers.Qwen2ForCausalLM(cfg).eval()
    _decode.capture_decode(model, str(tmp_path / "qwen2"), prompts(), steps=STEPS, batch_size=BATCH)
    doc = healthy_run(onnxparity, tmp_path / "qwen2")
    assert doc["model_type"] == "qwen2"


def test_repetition_penalty_on_eager_only_is_a_defect(onnxparity, tmp_path):
    """Eager generated with a repetition penalty (transformers' processor),
    the loop in ORT is greedy on raw logits: the raw logits agree at every
    step, yet where the penalty changed eager's pick the token differs by a
    margin no noise explains (negative: eager's token is not its own argmax)."""
    model = gpt2(seed=5)
    proc = transformers.RepetitionPenaltyLogitsProcessor(penalty=2.0)
    man = _decode.capture_decode(model, str(tmp_path / "pen"), prompts(8), steps=8, batch_size=8,
                                 logits_processor=proc)
    assert "RepetitionPenalty" in man["generation"]["logits_processor"]
    code, doc = generate(onnxparity, tmp_path / "pen")
    defects = [p for p in doc["prompts"] if p["class"] == "defect"]
    assert code == 1 and defects, doc["summary"]
    assert causes(doc) == {"decode-generation-setting": len(defects)}
    for p in doc["prompts"]:
        assert all(st["logits_pass"] for st in p["steps"])  # the raw logits agree
        if p["class"] == "defect":
            st = p["steps"][p["first_token_step"]]
            assert st["eager_processed"] and st["margin"] < 0
            assert "applied on eager's side only" in p["why"]
            # a setting, not a layer: named with its step, no layer
            assert where(p) == ("generation-setting", p["first_token_step"], None, None)
            assert p["first_cache_entry"] is None
        else:
            assert p["class"] == "agree"


# --------------------------------------------------------------------------- near-tie vs defect


def tied_model():
    """GPT-2 whose lm_head rows TIE (the later index) and TOP (eager's first
    token for prompt 0) are equal: eager logits of the two are the same in
    float32 and float64, and argmax keeps the lower index."""
    model = gpt2(seed=3)
    ids, mask = _decode.left_pad(prompts()[:1], 0)
    _decode._exportable_attention(model)
    tokens, _, _, _ = _decode._greedy(_decode.DecoderStep(model, 2), ids, mask, 1, torch.float32)
    top, tie = int(tokens[0, 0]), VOCAB - 1
    assert top < tie and tie not in prompts(4)[0]
    with torch.no_grad():
        model.transformer.wte.weight[tie] = model.transformer.wte.weight[top]
    return model, top, tie


def bump_logit_column(bundle, token, factor):
    """Scale the lm_head's column `token` in the exported graph (the [E, V]
    initializer feeding the logits' MatMul)."""
    path = str(bundle / "model.onnx")
    m = onnx.load(path)
    hits = 0
    for init in m.graph.initializer:
        if list(init.dims) == [32, VOCAB]:
            w = onnx.numpy_helper.to_array(init).copy()
            w[:, token] *= np.float32(factor)
            init.CopyFrom(onnx.numpy_helper.from_array(w, init.name))
            hits += 1
    assert hits == 1
    (bundle / "model.onnx.data").unlink()
    onnx.save(m, path)


@pytest.fixture(scope="module")
def tied(tmp_path_factory):
    model, top, tie = tied_model()
    out = tmp_path_factory.mktemp("gen") / "tied"
    _decode.capture_decode(model, str(out), prompts(4), steps=3, batch_size=4, logits_batches=1)
    return out, top, tie


def test_near_tie_flip_is_told_from_a_defect(onnxparity, tied, tmp_path):
    out, top, tie = tied
    # independently: eager's token is TOP at step 0, and float64 puts TIE level with it
    l64 = np.load(out / "batch_0" / "logits64.npy")
    assert int(np.load(out / "batch_0" / "tokens.npy")[0, 0]) == top
    assert l64[0, 0, top] == l64[0, 0, tie] and l64[0, 0, top] > 0

    near = tmp_path / "near"
    shutil.copytree(out, near)
    bump_logit_column(near, tie, 1 + 2.0 ** -20)  # 8 ulps: ORT now ranks TIE first
    code, doc = generate(onnxparity, near)
    p = doc["prompts"][0]
    assert p["class"] == "near-tie", p["why"]
    d = p["divergence"]
    assert (d["step"], d["eager_token"], d["ort_token"]) == (0, top, tie)
    assert d["margin"] == 0 and d["envelope_max"] > 0
    assert code == 0 and doc["summary"]["classes"]["defect"] == 0
    code, doc = generate(onnxparity, near, "--strict")
    assert code == 1
    # a divergence before the step a release requires fails too, near-tie or not
    code, doc = generate(onnxparity, near, "--min-divergence-step", "1")
    assert code == 1 and doc["criteria"]["early_divergences"] >= 1

    # the same flip onto a token eager ranks far below: a defect
    l32 = np.load(out / "batch_0" / "logits.npy")[0, 0]
    # the highest-ranked token at least 5 % of the top logit below it
    low = max((v for v in range(VOCAB) if 0 < l32[v] < 0.95 * l32[top]), key=lambda v: l32[v])
    far = tmp_path / "far"
    shutil.copytree(out, far)
    bump_logit_column(far, low, float(l32[top] / l32[low]) * 1.01)
    code, doc = generate(onnxparity, far)
    p = doc["prompts"][0]
    assert code == 1 and p["class"] == "defect"
    assert p["first_token_step"] == 0 and p["steps"][0]["ort_token"] == low
    assert p["divergence"]["margin"] > p["divergence"]["envelope_max"]
    # the lm_head changed: no cache entry off, the difference enters after the cache
    assert set(causes(doc)) == {"decode-after-cache"}


# --------------------------------------------------------------------------- sampling and EOS

TEMPERATURE = 0.9


def sample_ref(logits, u, temperature):
    """Inverse-CDF sampling in plain Python floats (math.exp, summed in
    vocabulary order): the rule docs/generate.md states, apart from numpy's
    and the library's code."""
    top = max(float(x) for x in logits)
    w = [math.exp((float(x) - top) / temperature) for x in logits]
    z = 0.0
    for x in w:
        z += x
    run_ = 0.0
    for k, x in enumerate(w):
        run_ += x
        if u < run_ / z:
            return k
    return max(k for k, x in enumerate(w) if x > 0)


@pytest.fixture(scope="module")
def sampled(tmp_path_factory):
    """A GPT-2 sampled at T = 0.9 with a fixed seed, EOS a token eager draws
    in the first batch (so some rows stop early, the test checks not all)."""
    model = gpt2(seed=7)
    ids, mask = _decode.left_pad(prompts()[:BATCH], 0)
    _decode._exportable_attention(model)
    probe = _decode._Sampler(TEMPERATURE, 11)
    toks, _, _, _ = _decode._greedy(_decode.DecoderStep(model, 2), ids, mask, STEPS, torch.float32,
                                    sampler=probe)
    eos = int(toks[0, 5])
    out = tmp_path_factory.mktemp("gen") / "sampled"
    man = _decode.capture_decode(model, str(out), prompts(), steps=STEPS, batch_size=BATCH,
                                 logits_batches=1, do_sample=True, temperature=TEMPERATURE,
                                 seed=11, eos_token_id=eos)
    return out, man, eos


def eager_stops(out, man, eos):
    """Per prompt, eager's EOS step from tokens.npy (None: runs every step)."""
    stops = []
    for b in man["batches"]:
        for row in np.load(out / b["dir"] / "tokens.npy"):
            hit = np.flatnonzero(row == eos)
            stops.append(int(hit[0]) if len(hit) else None)
    return stops


def test_fixed_seed_sampling_with_eos_agrees(onnxparity, sampled):
    out, man, eos = sampled
    assert man["generation"]["strategy"] == "sample" and man["generation"]["eos_token_id"] == eos
    # the capture really sampled: eager's token is not its own argmax at many steps
    b0 = out / "batch_0"
    tokens, top = np.load(b0 / "tokens.npy"), np.load(b0 / "topk_ids.npy")[:, :, 0]
    stops = eager_stops(out, man, eos)
    live = np.array([[t <= (s if s is not None else STEPS) for t in range(STEPS)] for s in stops[:BATCH]])
    assert (tokens != top)[live].mean() > 0.2
    # ... by the rule stated, recomputed here from the logits and the draws
    l32, u = np.load(b0 / "logits.npy"), np.load(b0 / "uniform.npy")
    for r in range(BATCH):
        for t in range(STEPS):
            if live[r, t]:
                assert sample_ref(l32[r, t], u[r, t], TEMPERATURE) == tokens[r, t], (r, t)
    # EOS stops some rows early, not all
    assert any(s is not None and s < STEPS - 1 for s in stops) and any(s is None for s in stops)

    code, doc = generate(onnxparity, out)
    assert code == 0 and doc["generation"] == {"strategy": "sample", "temperature": TEMPERATURE,
                                               "eos_token_id": eos}
    s = doc["summary"]
    assert s["classes"]["defect"] == 0 and s["classes"]["agree"] >= PROMPTS - 2
    judged = [STEPS if st is None else st + 1 for st in stops]
    assert s["tokens"] == sum(judged)  # a row's steps after its EOS are not judged
    for p, st, n in zip(doc["prompts"], stops, judged):
        assert p["eos_step"] == st and p["steps_run"] == n and p["stop_divergence"] is None
        if p["class"] == "agree":
            assert all(x["uniform"] >= 0 and x["ort_token"] == x["eager_token"] for x in p["steps"])


def add_to_logit(bundle, token, c):
    """ORT's logits + c at `token`: an Add after the graph's logits output."""
    path = str(bundle / "model.onnx")
    m = onnx.load(path)
    out = next(o for o in m.graph.output if o.name == "logits")
    for n in m.graph.node:
        n.output[:] = ["logits_raw" if x == "logits" else x for x in n.output]
    bias = np.zeros(VOCAB, dtype=np.float32)
    bias[token] = c
    m.graph.initializer.append(onnx.numpy_helper.from_array(bias, "eos_bias"))
    m.graph.node.append(onnx.helper.make_node("Add", ["logits_raw", "eos_bias"], [out.name]))
    (bundle / "model.onnx.data").unlink()
    onnx.save(m, path, save_as_external_data=True, location="model.onnx.data")


def test_a_row_stopping_on_one_side_only_is_a_divergence(onnxparity, sampled, tmp_path):
    """ORT's EOS logit 2.0 higher: rows stop early on ORT's side. Which row
    stops at which step is predicted here from eager's logits + 2.0 and the
    recorded draws (teacher forcing keeps eager's context), and generate
    names exactly those, each a defect."""
    out, man, eos = sampled
    bad = tmp_path / "eos"
    shutil.copytree(out, bad)
    add_to_logit(bad, eos, 2.0)
    code, doc = generate(onnxparity, bad)
    assert code == 1
    b0 = out / "batch_0"
    tokens, l32, u = (np.load(b0 / n) for n in ("tokens.npy", "logits.npy", "uniform.npy"))
    stops = eager_stops(out, man, eos)
    named = 0
    for r, p in enumerate(doc["prompts"][:BATCH]):
        want = None
        for t in range(STEPS if stops[r] is None else stops[r] + 1):
            row = l32[r, t].copy()
            row[eos] += np.float32(2.0)
            ort = sample_ref(row, u[r, t], TEMPERATURE)
            if ort != tokens[r, t] and eos in (ort, tokens[r, t]):
                want = {"step": t, "stops": "ort" if ort == eos else "eager"}
                break
        assert p["stop_divergence"] == want, (r, p["stop_divergence"], want)
        assert p["class"] == "defect"
        named += want is not None
    assert named >= 2
    # the logits changed after the cache: every cache entry within its noise
    assert causes(doc) == {"decode-after-cache": doc["summary"]["classes"]["defect"]}
    assert any(p["stop_divergence"] and p["stop_divergence"]["stops"] == "ort" for p in doc["prompts"])


def test_the_python_api_gives_the_tools_answer(onnxparity, sampled, tmp_path):
    """onnxparity.generate in this process (api.h: onp_api_generate): the
    same document as the tool's, typed; options checked as the tool's."""
    import onnxparity as onp
    out, _, eos = sampled
    code, doc = generate(onnxparity, out, "--steps", "6", "--max-differ-rate", "0.5")
    r = onp.generate(out, steps=6, max_differ_rate=0.5)
    assert (r.exit_code, r.verdict, r.steps) == (code, doc["verdict"], 6)
    assert r.generation == doc["generation"] and r.summary["tokens"] == doc["summary"]["tokens"]
    assert [(p.cls, p.where, p.eos_step) for p in r.prompts] == \
        [(p["class"], p["where"], p["eos_step"]) for p in doc["prompts"]]
    with pytest.raises(onp.UsageError, match="--steps"):
        onp.generate(out, steps=STEPS + 1)
    with pytest.raises(onp.UsageError, match="top-k"):
        onp.generate(out, top_k=3)
    with pytest.raises(onp.FileError):
        onp.generate(tmp_path / "none")


def test_the_cache_kept_stays_within_its_budget(tmp_path, monkeypatch):
    """Eager's cache is kept batch after batch while the bytes kept stay
    within CACHE_BUDGET_BYTES (no export needed: the eager record only)."""
    model = gpt2()
    _decode._exportable_attention(model)
    step, step64 = _decode.DecoderStep(model, 2), _decode.DecoderStep(copy.deepcopy(model).double(), 2)
    # a batch of 4 prompts of 3 tokens, 4 steps: [4, 4, 2, 6, 16] float32 + float64
    one = 4 * 4 * 2 * 6 * 16 * (4 + 8)
    monkeypatch.setattr(_decode, "CACHE_BUDGET_BYTES", 2 * one)
    kw = dict(steps=4, batch_size=4, pad_token_id=0, topk=4, logits_batches=1, processor=None,
              sampler=None, eos=None)
    got = _decode._record(step, step64, str(tmp_path / "a"), [[1, 2, 3]] * 16, cache_batches=None, **kw)
    assert [b["cache"] for b in got] == [True, True, False, False]
    assert (tmp_path / "a" / "batch_1" / "cache64.npy").exists()
    assert not (tmp_path / "a" / "batch_2" / "cache.npy").exists()
    got = _decode._record(step, step64, str(tmp_path / "b"), [[1, 2, 3]] * 16, cache_batches=3, **kw)
    assert [b["cache"] for b in got] == [True, True, True, False]
