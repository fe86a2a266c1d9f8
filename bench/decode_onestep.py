"""The decode loop beside a one-step logits check (issue 31, Must-show 3).

A one-step check in the style of Hugging Face optimum's export validation:
one dummy input, the exported graph and eager run once, every output
compared at an absolute tolerance.  Two variants: without a past (8 tokens,
an all-ones mask, an empty cache) and with one (a random past of 8 positions,
1 new token at position 8).  Beside it `onnxparity generate` on a decode
bundle of the same model.  Both over the same planted faults (tests/py/
test_dynamo_decode.py plants them too); prints a Markdown table and the
loop's time and memory.

Run (the torch 2.x environment):
  PYTHONPATH=python .venv-torch2/bin/python bench/decode_onestep.py build/onnxparity
"""
import collections
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort
import torch
import transformers

from onnxparity import _decode

VOCAB, ATOL = 101, 1e-4


class PositionsAheadInCache(_decode.DecoderStep):
    def positions(self, input_ids, attention_mask, position_ids):
        cached = (attention_mask.sum(dim=1, keepdim=True) > input_ids.shape[1]).to(position_ids.dtype)
        return position_ids + cached


class PositionsConstant(_decode.DecoderStep):
    def positions(self, input_ids, attention_mask, position_ids):
        return torch.cumsum(torch.ones_like(input_ids), dim=1) - 1


class MaskIgnored(_decode.DecoderStep):
    def forward(self, input_ids, attention_mask, position_ids, *past):
        return super().forward(input_ids, torch.ones_like(attention_mask), position_ids, *past)


def llama():
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64,
                                   num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                   max_position_embeddings=64, initializer_range=0.2)
    return transformers.LlamaForCausalLM(cfg).eval()


def prompts(n=104):
    g = np.random.default_rng(1)
    return [list(g.integers(1, VOCAB, 1 + (3 * i) % 8)) for i in range(n)]


def one_step(model, path, with_past):
    """Eager vs ORT on one dummy input; True when every output is within ATOL
    (what the check accepts), or the refusal when ORT will not run it."""
    g = torch.Generator().manual_seed(7)
    p, s = (8, 1) if with_past else (0, 8)
    ids = torch.randint(1, VOCAB, (2, s), generator=g)
    mask = torch.ones(2, p + s, dtype=torch.int64)
    pos = torch.arange(p, p + s).expand(2, s).contiguous()
    past = [torch.randn(2, 2, p, 8, generator=g) for _ in range(4)]
    with torch.no_grad():
        want = _decode.DecoderStep(model, 2)(ids, mask, pos, *past)
    names_in, _ = _decode.io_names(2)
    feeds = dict(zip(names_in, [t.numpy() for t in (ids, mask, pos, *past)]))
    try:
        got = ort.InferenceSession(path).run(None, feeds)
    except Exception as e:  # ORT's refusal of the dummy's shapes
        return "refused: " + str(e).split("INVALID_ARGUMENT : ")[-1].splitlines()[0][:48]
    return all(np.abs(w.numpy() - o).max() <= ATOL for w, o in zip(want, got))


def placed(doc):
    """Where generate placed the defects: each placement with its count."""
    if not doc:
        return ""
    seen = collections.Counter()
    for p in doc["prompts"]:
        if p["class"] != "defect":
            continue
        w = p["where"]
        if w["kind"] in ("cache-entry", "graph-input"):
            seen[f"layer {w['layer']} {w['entry']}" + (" (input)" if w["kind"] == "graph-input" else "")] += 1
        elif w["kind"] == "generation-setting":
            seen["a setting, no layer"] += 1
        else:
            seen["not placed"] += 1
    ids = ", ".join(f"{c['id']} x{c['prompts']}" for c in doc.get("causes", []))
    return ("; " + ", ".join(f"{k} x{n}" for k, n in seen.most_common()) if seen else "") + \
        (f"; cause {ids}" if ids else "")


def main(binary):
    table = sys.stdout  # the markdown; the exporter's progress lines go to stderr
    sys.stdout = sys.stderr
    tmp = tempfile.mkdtemp(prefix="onp_decode_bench_")
    model = llama()
    t0 = time.monotonic()
    _decode.capture_decode(model, f"{tmp}/healthy", prompts(), steps=32, batch_size=8)
    capture_s = time.monotonic() - t0
    rows = []

    def refit(name, step, **kw):
        d = f"{tmp}/{name}"
        shutil.copytree(f"{tmp}/healthy", d)
        os.unlink(f"{d}/model.onnx")
        os.unlink(f"{d}/model.onnx.data")
        _decode.export_decoder(step, f"{d}/model.onnx", **kw)
        return d

    changed = copy.deepcopy(model)
    with torch.no_grad():
        changed.model.layers[1].self_attn.v_proj.weight.mul_(1.01)
    cases = [("healthy", f"{tmp}/healthy"),
             ("position ids ahead in the cache path", refit("ahead", PositionsAheadInCache(model, 2))),
             ("position ids constant", refit("const", PositionsConstant(model, 2))),
             ("attention mask ignored", refit("mask", MaskIgnored(model, 2))),
             ("past length baked at trace (4)",
              refit("baked", _decode.DecoderStep(model, 2), static_past=True)),
             ("a changed weight in the last layer", refit("weight", _decode.DecoderStep(changed, 2)))]
    proc = transformers.RepetitionPenaltyLogitsProcessor(penalty=2.0)
    _decode.capture_decode(model, f"{tmp}/penalty", prompts(), steps=32, batch_size=8,
                           logits_processor=proc)
    cases.append(("repetition penalty on eager only", f"{tmp}/penalty"))
    for name, d in cases:
        t = time.monotonic()
        r = subprocess.run(["/usr/bin/time", "-f", "%M", binary, "generate", d, "--format", "json"],
                           capture_output=True, text=True)
        secs = time.monotonic() - t
        rss = int(r.stderr.strip().splitlines()[-1])  # KB, the tool's own process
        doc = json.loads(r.stdout) if r.returncode in (0, 1) else None
        s = doc["summary"]["classes"] if doc else {}
        firsts = sorted({p["first_divergent_step"] for p in doc["prompts"]} - {None}) if doc else []
        loop = (f"exit {r.returncode}: {s.get('defect', '?')} defect, {s.get('near-tie', '?')} near-tie"
                + (f", first steps {firsts[:3]}" if firsts else "") + placed(doc))
        checks = [one_step(model, f"{d}/model.onnx", wp) for wp in (False, True)]
        words = ["pass" if c is True else ("FAIL" if c is False else c) for c in checks]
        rows.append((name, words[0], words[1], loop, secs, rss))
    sys.stdout = table
    print(f"Llama-style, 104 prompts x 32 steps; capture {capture_s:.1f} s\n")
    print("| fault | one step, no past | one step, past 8 | generate | loop time, memory |")
    print("|---|---|---|---|---|")
    for name, a, b, loop, secs, rss in rows:
        print(f"| {name} | {a} | {b} | {loop} | {secs:.2f} s, {rss / 1024:.0f} MB |")
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build/onnxparity")
