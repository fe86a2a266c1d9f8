"""bench/large_model.py BIN OUT_DIR — a model over protobuf's 2 GiB limit,
captured, checked and bisected on this machine, each step's wall time and
peak RSS measured by GNU time in its own process.

The model: a Llama-style decoder (transformers' LlamaForCausalLM, random
weights from a config, nothing downloaded) in float32 with 582 M parameters,
2.17 GiB of weights: hidden 2048, 10 layers, 16 heads and 4 key-value heads,
MLP 5632, vocabulary 32000, untied head.  Two fixtures, (batch, sequence)
(2, 12), its second row padded, and (1, 8), the first traced (capture's
trace_fixture default: torch.export would fix every dim traced at size 1); the masks are built
without torch.vmap (docs/architectures.md: torch.export cannot trace
transformers' vmap masks with a dynamic dim).  Captured with the dynamo
exporter, external data throughout (the capture switches to it on its own
above 2 GiB - 64 MiB; this script checks that it did), and the float64
reference off: its deep copy of the model in float64 would add 6.5 GiB to the
peak, on a machine whose memory other jobs share; the judge then estimates
the noise envelope on ONNX Runtime's side and says so.

Run with the torch 2.x environment's python (.venv-torch2).  Prints a
markdown section on stdout; needs about 7 GiB of disk under OUT_DIR (the
bundle and bisect's scratch) and about 10 GiB of memory at the peak.
"""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

CONFIG = dict(vocab_size=32000, hidden_size=2048, intermediate_size=5632, num_hidden_layers=10,
              num_attention_heads=16, num_key_value_heads=4, max_position_embeddings=256,
              tie_word_embeddings=False, use_cache=False)
SHAPES = [(2, 12), (1, 8)]  # traced on the first: torch.export fixes a dim traced at 1


def capture(out):
    """The capture step, run in a child process of its own (its peak RSS is
    the capture's alone).  Prints one JSON line: parameter bytes, times."""
    import warnings
    warnings.filterwarnings("ignore")
    import torch
    import transformers
    from transformers.integrations.executorch import sdpa_mask_without_vmap
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    import onnxparity

    torch.set_num_threads(2)
    torch.manual_seed(0)
    t0 = time.perf_counter()
    model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**CONFIG)).eval()
    ALL_MASK_ATTENTION_FUNCTIONS.register("sdpa_without_vmap", sdpa_mask_without_vmap)
    ALL_ATTENTION_FUNCTIONS.register("sdpa_without_vmap", ALL_ATTENTION_FUNCTIONS["sdpa"])
    model.config._attn_implementation = "sdpa_without_vmap"
    t1 = time.perf_counter()
    g = torch.Generator().manual_seed(1)
    fixtures = []
    for b, s in SHAPES:
        mask = torch.ones(b, s, dtype=torch.int64)
        if b > 1:
            mask[-1, s // 2:] = 0
        fixtures.append({"input_ids": torch.randint(0, CONFIG["vocab_size"], (b, s), generator=g),
                         "attention_mask": mask})
    doc = onnxparity.capture(model, fixtures, out, exporter="dynamo", dynamic_axes="auto",
                             reference64=False)
    t2 = time.perf_counter()
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    print(json.dumps({"parameter_bytes": params, "init_s": t1 - t0, "capture_s": t2 - t1,
                      "exporter": doc["exporter"], "external": doc["model"]["external_data"],
                      "leaf_mapped": doc["mapping"]["leaf_mapped"],
                      "leaf_modules": doc["mapping"]["leaf_modules"]}))


def timed(cmd, env=None):
    """(completed process, wall seconds, peak RSS in KiB) of ``cmd`` under GNU time."""
    t0 = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
    if not m:
        sys.exit(f"large_model: no peak RSS from GNU time for {cmd[:3]}: {r.stderr[-2000:]}")
    return r, wall, int(m.group(1))


def gib(kib):
    return kib / 1024 ** 2


def measure(binary, work):
    """Capture, check and bisect the model under ``work``; returns the
    figures: capture (its child's JSON line), t_capture and m_capture (s,
    KiB), onnx_bytes, data_bytes, rows [(step, s, KiB, exit code, JSON)],
    bundle.  Exits with a message when a step fails."""
    binary, work = pathlib.Path(binary).resolve(), pathlib.Path(work).resolve()
    bundle = work / "llama-2g"
    shutil.rmtree(bundle, ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(pathlib.Path(__file__).resolve().parents[1] / "python"))
    r, t_cap, m_cap = timed([sys.executable, __file__, "--capture", str(bundle)], env)
    if r.returncode != 0:
        sys.exit(f"large_model: capture failed:\n{r.stderr[-4000:]}")
    cap = json.loads(r.stdout.strip().splitlines()[-1])
    onnx_bytes = (bundle / "model.onnx").stat().st_size
    data_bytes = sum((bundle / f).stat().st_size for f in cap["external"])
    if cap["parameter_bytes"] <= 2 * 1024 ** 3 or not cap["external"] or onnx_bytes >= 2 * 1024 ** 3:
        sys.exit(f"large_model: not a > 2 GiB model with external data: {cap}, model.onnx {onnx_bytes} B")
    rows = []
    for name, cmd in (("check", ["check", str(bundle), "--format", "json"]),
                      ("bisect", ["bisect", str(bundle), "--format", "json"])):
        r, t, m = timed([str(binary), *cmd])
        if r.returncode not in (0, 1):
            sys.exit(f"large_model: {name} exited {r.returncode}:\n{r.stderr[-4000:]}")
        doc = json.loads(r.stdout)
        rows.append((name, t, m, r.returncode, doc))
    return dict(capture=cap, t_capture=t_cap, m_capture=m_cap, onnx_bytes=onnx_bytes, data_bytes=data_bytes,
                rows=rows, bundle=bundle)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--capture":
        capture(pathlib.Path(sys.argv[2]))
        return
    res = measure(sys.argv[1], sys.argv[2])
    cap, t_cap, m_cap, rows, bundle = res["capture"], res["t_capture"], res["m_capture"], res["rows"], res["bundle"]
    onnx_bytes, data_bytes = res["onnx_bytes"], res["data_bytes"]
    check, bisect = rows[0][4], rows[1][4]
    print("## A model over 2 GiB: capture, check and bisect")
    print()
    print(f"A random-init Llama-style decoder (transformers LlamaForCausalLM, float32, "
          f"{cap['parameter_bytes'] / 1e6 / 4:.0f} M parameters, {cap['parameter_bytes'] / 1024 ** 3:.2f} GiB "
          f"of weights: hidden {CONFIG['hidden_size']}, {CONFIG['num_hidden_layers']} layers, "
          f"{CONFIG['num_attention_heads']} heads / {CONFIG['num_key_value_heads']} key-value heads, MLP "
          f"{CONFIG['intermediate_size']}, vocabulary {CONFIG['vocab_size']}), fixtures (batch, sequence) "
          f"{', '.join(str(s) for s in SHAPES)}, {cap['exporter']} exporter, float64 reference off "
          f"(bench/large_model.py). model.onnx is {onnx_bytes / 1024 ** 2:.1f} MiB, its external data "
          f"{data_bytes / 1024 ** 3:.2f} GiB in {len(cap['external'])} file(s); "
          f"{cap['leaf_mapped']}/{cap['leaf_modules']} leaf modules mapped. Each step in its own process, "
          "wall time and peak RSS from GNU time.")
    print()
    print("| step | result | time | peak RSS | peak RSS / weights |")
    print("|---|---|---|---|---|")
    w_kib = cap["parameter_bytes"] / 1024
    print(f"| capture (random init {cap['init_s']:.1f} s, then capture {cap['capture_s']:.1f} s) | "
          f"{len(SHAPES)} fixtures | {t_cap:.1f} s | {gib(m_cap):.2f} GiB | {m_cap / w_kib:.2f}× |")
    for name, t, m, rc, doc in rows:
        if name == "check":
            s = doc["summary"]
            what = f"{doc['verdict']}, {s['outputs_compared'] - s['outputs_failed']}/{s['outputs_compared']} outputs"
        else:
            fd = doc.get("first_divergent")
            what = f"{doc.get('verdict', 'exit ' + str(rc))}, first divergent: " + (
                f"{fd['node']} ({fd['op_type']}) in {fd.get('module')}" if fd else "none")
        print(f"| {name} | {what} | {t:.1f} s | {gib(m):.2f} GiB | {m / w_kib:.2f}× |")
    print()
    if check["verdict"] != "pass":
        print(f"check's causes: {json.dumps(check.get('causes'))[:1500]}")
    fd = bisect.get("first_divergent")
    if fd:
        print(f"bisect's first divergent value: {json.dumps(fd)}")
        print()
    if os.environ.get("LARGE_KEEP") != "1":
        shutil.rmtree(bundle, ignore_errors=True)


if __name__ == "__main__":
    main()
