"""Capture of a generative decoder with its KV cache (docs/decode.md).

A causal language model (a transformers ``*ForCausalLM``) is exported as
the one forward a decode loop calls again and again::

    (input_ids [B, S], attention_mask [B, P + S], position_ids [B, S],
     past_key_values.{i}.key/value [B, H, P, D] for each layer i)
        -> (logits [B, S, V], present.{i}.key/value [B, H, P + S, D])

with the batch, the new length S and the past length P dynamic, so that the
same graph serves the prefill (P = 0) and every decode step (S = 1).  Beside
the model the bundle records the eager side of a greedy generation over the
prompts: the tokens, the float32 logits of every step for a bounded subset of
batches (top-K ids and values for all), the float64 noise of every step's
logits (a float64 copy of the model fed the same tokens), and the cache
shapes.  ``onnxparity generate-check`` runs the same loop in ONNX Runtime
and judges it token by token.

    import onnxparity
    onnxparity.capture_decode(model, "gen/", prompts, steps=16)

Prompts are lists of token ids; they are grouped in batches of
``batch_size`` and left-padded with ``pad_token_id`` (the attention mask
marks the padding; position ids count the real tokens only, as transformers'
``generate`` does).
"""
from __future__ import annotations

import copy
import importlib
import json
import os
import time
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch

from . import _export

SCHEMA = "onnxparity.decode-bundle/1"


# --------------------------------------------------------------------------- the forward


# transformers ships no type information mypy reads here: its modules are
# imported by name (Any to mypy), as the config is read through _config.
def _transformers(module: str) -> Any:
    return importlib.import_module(f"transformers.{module}")


def _config(model: torch.nn.Module) -> Any:
    """A transformers model's config (PretrainedConfig)."""
    return getattr(model, "config")


def _cache_class() -> Any:
    return _transformers("cache_utils").DynamicCache


def _exportable_attention(model: torch.nn.Module) -> None:
    """transformers' mask functions use torch.vmap, which torch.export cannot
    trace with dynamic shapes; its ExecuTorch integration registers the same
    SDPA attention with a mask built without vmap.  Switch the model to it
    (numerically the same attention)."""
    without_vmap = _transformers("integrations.executorch").sdpa_mask_without_vmap
    masks = _transformers("masking_utils").ALL_MASK_ATTENTION_FUNCTIONS
    attention = _transformers("modeling_utils").ALL_ATTENTION_FUNCTIONS
    masks.register("sdpa_without_vmap", without_vmap)
    attention.register("sdpa_without_vmap", attention["sdpa"])
    _config(model)._attn_implementation = "sdpa_without_vmap"


class DecoderStep(torch.nn.Module):
    """The decode loop's forward over a causal LM, with the cache flattened
    into tensors: (input_ids, attention_mask, position_ids, *past) -> (logits,
    *present), past and present as [key_0, value_0, key_1, value_1, ...].
    Subclass and override ``positions`` or ``past_of`` to plant a fault in
    the decode path (tests do)."""

    def __init__(self, model: torch.nn.Module, n_layers: int):
        super().__init__()
        self.model = model
        self.n_layers = n_layers

    def positions(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                  position_ids: torch.Tensor) -> torch.Tensor:
        return position_ids

    def past_of(self, past: Sequence[torch.Tensor]) -> Sequence[torch.Tensor]:
        return past

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                position_ids: torch.Tensor, *past: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        fed = self.past_of(past)
        cache = _cache_class()()
        for i in range(self.n_layers):
            cache.update(fed[2 * i], fed[2 * i + 1], i)
        out = self.model(input_ids=input_ids, attention_mask=attention_mask,
                         position_ids=self.positions(input_ids, attention_mask, position_ids),
                         past_key_values=cache, use_cache=True)
        present: List[torch.Tensor] = [out.logits]
        for i in range(self.n_layers):
            layer = out.past_key_values.layers[i]
            present += [layer.keys, layer.values]
        return tuple(present)


def cache_geometry(model: torch.nn.Module) -> Tuple[int, int, int]:
    """(layers, key/value heads, head dim) from a transformers config."""
    c = _config(model)
    layers = int(getattr(c, "num_hidden_layers", None) or c.n_layer)
    heads = int(getattr(c, "num_attention_heads", None) or c.n_head)
    kv_heads = int(getattr(c, "num_key_value_heads", None) or heads)
    hidden = int(getattr(c, "hidden_size", None) or c.n_embd)
    head_dim = int(getattr(c, "head_dim", None) or hidden // heads)
    return layers, kv_heads, head_dim


def io_names(n_layers: int) -> Tuple[List[str], List[str]]:
    past = [f"past_key_values.{i}.{kv}" for i in range(n_layers) for kv in ("key", "value")]
    present = [f"present.{i}.{kv}" for i in range(n_layers) for kv in ("key", "value")]
    return ["input_ids", "attention_mask", "position_ids"] + past, ["logits"] + present


def _example(step: DecoderStep, kv_heads: int, head_dim: int, vocab: int) -> Tuple[torch.Tensor, ...]:
    """Example inputs for the trace: batch 2, 3 new tokens over a past of 4
    (no dim 0 or 1, which torch.export would specialize)."""
    b, s, p = 2, 3, 4
    ids = torch.randint(0, vocab, (b, s), generator=torch.Generator().manual_seed(0))
    mask = torch.ones(b, p + s, dtype=torch.int64)
    pos = torch.arange(p, p + s).expand(b, s).contiguous()
    past = [torch.zeros(b, kv_heads, p, head_dim) for _ in range(2 * step.n_layers)]
    return (ids, mask, pos, *past)


def export_decoder(step: DecoderStep, path: str, *, opset: int = 18,
                   static_past: bool = False) -> str:
    """Export ``step`` to ``path`` with torch.export (dynamo): batch, new
    length and past length dynamic (Dim.DYNAMIC: torch finds the ranges and
    the equalities between inputs).  The guards torch 2.9 would install as a
    module (which its ONNX decomposition cannot read) are deferred to runtime
    asserts.  ``static_past``: leave the past length out of the dynamic dims,
    the export mistake that bakes the trace's past length (4) into the graph
    (tests plant it).  Returns the exporter's name."""
    _exportable_attention(step.model)
    layers, kv_heads, head_dim = step.n_layers, *cache_geometry(step.model)[1:]
    vocab = int(_config(step.model).vocab_size)
    args = _example(step, kv_heads, head_dim, vocab)
    dyn = torch.export.Dim.DYNAMIC
    shapes = ({0: dyn, 1: dyn}, {0: dyn, 1: dyn}, {0: dyn, 1: dyn},
              tuple({0: dyn} if static_past else {0: dyn, 2: dyn} for _ in range(2 * layers)))
    names_in, names_out = io_names(layers)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.export.export(step, args, dynamic_shapes=shapes, strict=False,
                                      prefer_deferred_runtime_asserts_over_guards=True)
        with _export.exporter_prints_to_stderr():
            torch.onnx.export(program, args, path, dynamo=True, input_names=names_in,
                              output_names=names_out, opset_version=opset, verbose=False)
    return "dynamo"


# --------------------------------------------------------------------------- the eager loop


def left_pad(prompts: Sequence[Sequence[int]], pad: int) -> Tuple[np.ndarray, np.ndarray]:
    """input_ids and attention_mask, int64 [B, L], prompts left-padded."""
    width = max(len(p) for p in prompts)
    ids = np.full((len(prompts), width), pad, dtype=np.int64)
    mask = np.zeros((len(prompts), width), dtype=np.int64)
    for r, p in enumerate(prompts):
        if len(p):
            ids[r, width - len(p):] = p
            mask[r, width - len(p):] = 1
    return ids, mask


def positions_of(mask: np.ndarray, new: int) -> np.ndarray:
    """Position ids of the last `new` columns of `mask`: the count of real
    tokens before each column (cumsum - 1), 1 on padding (transformers'
    generate)."""
    pos = np.cumsum(mask, axis=1) - 1
    pos[mask == 0] = 1
    return pos[:, -new:].astype(np.int64)


def sample_pick(logits: np.ndarray, u: np.ndarray, temperature: float
                ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Inverse-CDF sampling in vocabulary order, in float64, the rule
    onnxparity generate follows (onp_decode_sample): for each row,
    w_i = exp((l_i - max l) / T), c_k = cumsum(w)_k / sum(w) (summed in
    order), the token the first k with u < c_k (the last k with w_k > 0
    when rounding leaves none).  Returns the tokens [B] and eager's CDF just
    below and at each token ([B] each: the interval [lo, hi) holding u)."""
    l = logits.astype(np.float64)
    w = np.exp((l - l.max(axis=1, keepdims=True)) / temperature)
    c = np.cumsum(w, axis=1)
    cdf = c / c[:, -1:]
    below = u[:, None] < cdf
    last = w.shape[1] - 1 - np.argmax((w > 0)[:, ::-1], axis=1)
    tok = np.where(below.any(axis=1), np.argmax(below, axis=1), last)
    rows = np.arange(len(tok))
    lo = np.where(tok > 0, cdf[rows, np.maximum(tok - 1, 0)], 0.0)
    return tok.astype(np.int64), lo, cdf[rows, tok]


class _Sampler:
    """Fixed-seed sampling at temperature T: one uniform draw per row and
    step from numpy's PCG64 seeded once per capture, kept with eager's CDF
    interval of the token it drew (the bundle's uniform.npy, cdf.npy)."""

    def __init__(self, temperature: float, seed: int):
        self.temperature = temperature
        self.rng = np.random.default_rng(seed)
        self.uniform: List[np.ndarray] = []
        self.cdf: List[np.ndarray] = []

    def pick(self, logits: np.ndarray) -> np.ndarray:
        u = self.rng.random(logits.shape[0])
        tok, lo, hi = sample_pick(logits, u, self.temperature)
        self.uniform.append(u)
        self.cdf.append(np.stack([lo, hi], axis=1))
        return tok


def _greedy(step: DecoderStep, ids: np.ndarray, mask: np.ndarray, steps: int, dtype: torch.dtype,
            force: Optional[np.ndarray] = None, processor: Optional[Any] = None,
            sampler: Optional[_Sampler] = None, eos: Optional[int] = None, pad: int = 0
            ) -> Tuple[np.ndarray, List[np.ndarray], List[Tuple[int, ...]], np.ndarray]:
    """The loop on `step`: prefill, then one token per step, each step's
    token fed back with the cache.  ``force`` [B, steps]: feed these tokens
    instead of the loop's own (the float64 pass follows float32's tokens).
    ``processor(ids_so_far, logits) -> logits`` (a transformers
    LogitsProcessor): the pick is the argmax of its result; the raw logits
    are what is recorded.  ``sampler``: the pick is drawn (_Sampler) instead
    of the argmax.  ``eos``: a row that picked it is finished; its later
    tokens are ``pad`` (fed with mask 1, as transformers' generate does).
    Returns tokens [B, steps], the logits of each step ([B, V] each), the
    cache shape after each step and the last cache, [2 * layers, B, H, P, D]
    (the cache only grows: it holds every step's entries)."""
    layers, kv_heads, head_dim = step.n_layers, *cache_geometry(step.model)[1:]
    b = ids.shape[0]
    past = [torch.zeros(b, kv_heads, 0, head_dim, dtype=dtype) for _ in range(2 * layers)]
    cur_ids, cur_mask = torch.from_numpy(ids), mask.copy()
    new = ids.shape[1]
    tokens = np.zeros((b, steps), dtype=np.int64)
    logits: List[np.ndarray] = []
    shapes: List[Tuple[int, ...]] = []
    done = np.zeros(b, dtype=bool)
    with torch.no_grad():
        for t in range(steps):
            pos = torch.from_numpy(positions_of(cur_mask, new))
            out = step(cur_ids, torch.from_numpy(cur_mask), pos, *past)
            last = out[0][:, -1, :]
            logits.append(last.detach().numpy().copy())
            if force is not None:
                tokens[:, t] = force[:, t]
            elif sampler is not None:
                tokens[:, t] = sampler.pick(logits[-1])
            else:
                seen = torch.cat([torch.from_numpy(ids), torch.from_numpy(tokens[:, :t])], dim=1)
                scores = last if processor is None else processor(seen, last.clone())
                tokens[:, t] = scores.argmax(dim=-1).numpy()
            if eos is not None and force is None:
                tokens[done, t] = pad
                done |= tokens[:, t] == eos
            past = list(out[1:])
            shapes.append(tuple(past[0].shape))
            cur_ids = torch.from_numpy(tokens[:, t:t + 1].copy())
            cur_mask = np.concatenate([cur_mask, np.ones((b, 1), dtype=np.int64)], axis=1)
            new = 1
    return tokens, logits, shapes, np.stack([p.detach().numpy() for p in past])


def _noise(l32: np.ndarray, l64: np.ndarray) -> np.ndarray:
    """Per row: max and RMS of |float32 - float64|, max and RMS of |float64|."""
    d = np.abs(l32.astype(np.float64) - l64)
    a = np.abs(l64)
    return np.stack([d.max(axis=1), np.sqrt((d * d).mean(axis=1)), a.max(axis=1),
                     np.sqrt((a * a).mean(axis=1))], axis=1)


def _save(path: str, a: np.ndarray) -> None:
    np.save(path, np.ascontiguousarray(a))


# --------------------------------------------------------------------------- the capture


# Below this many parameters a forward's ops are too small for torch's
# intra-op threads to pay: the loops run on one thread (measured here, a
# 2-layer Llama of 30 k parameters: 7 ms a step on one thread, 110-150 ms on
# two, on a loaded 2-core machine).
SMALL_MODEL_PARAMS = 10_000_000

# Eager's cache (float32 and float64) is kept batch after batch while the
# bytes kept stay within this budget (capture_decode(cache_batches=None)):
# every batch of a small model, the first few of a large one.
CACHE_BUDGET_BYTES = 256 << 20


def _loop_threads(model: torch.nn.Module, threads: Optional[int]) -> int:
    if threads is not None:
        return threads
    small = sum(p.numel() for p in model.parameters()) < SMALL_MODEL_PARAMS
    return 1 if small else torch.get_num_threads()


def _record(eager: DecoderStep, step64: DecoderStep, out_dir: str,
            prompts: Sequence[Sequence[int]], *, steps: int, batch_size: int, pad_token_id: int,
            topk: int, logits_batches: int, cache_batches: Optional[int], processor: Optional[Any],
            sampler: Optional[_Sampler], eos: Optional[int]) -> List[Dict[str, Any]]:
    """The eager loops over every batch, written to out_dir/batch_K/;
    returns the manifest's batches."""
    batches: List[Dict[str, Any]] = []
    spent = 0  # bytes of eager's cache kept so far
    for k in range(0, len(prompts), batch_size):
        group = prompts[k:k + batch_size]
        ids, mask = left_pad(group, pad_token_id)
        if sampler is not None:
            sampler.uniform, sampler.cdf = [], []
        tokens, l32, shapes, c32 = _greedy(eager, ids, mask, steps, torch.float32,
                                           processor=processor, sampler=sampler, eos=eos,
                                           pad=pad_token_id)
        _, l64, _, c64 = _greedy(step64, ids, mask, steps, torch.float64, force=tokens)
        b32 = np.stack(l32, axis=1)  # [B, steps, V]
        b64 = np.stack(l64, axis=1)
        order = np.argsort(-b32, axis=2, kind="stable")[:, :, :topk]
        d = os.path.join(out_dir, f"batch_{len(batches)}")
        os.makedirs(d, exist_ok=True)
        _save(os.path.join(d, "input_ids.npy"), ids)
        _save(os.path.join(d, "attention_mask.npy"), mask)
        _save(os.path.join(d, "tokens.npy"), tokens)
        _save(os.path.join(d, "topk_ids.npy"), order.astype(np.int64))
        _save(os.path.join(d, "topk_logits.npy"), np.take_along_axis(b32, order, axis=2))
        _save(os.path.join(d, "noise.npy"),
              np.stack([_noise(b32[:, t], b64[:, t]) for t in range(steps)], axis=1))
        if sampler is not None:
            _save(os.path.join(d, "uniform.npy"), np.stack(sampler.uniform, axis=1))
            _save(os.path.join(d, "cdf.npy"), np.stack(sampler.cdf, axis=1))
        full = len(batches) < logits_batches
        cost = c32.nbytes + c64.nbytes
        keep_cache = (len(batches) < cache_batches if cache_batches is not None
                      else spent + cost <= CACHE_BUDGET_BYTES)
        spent += cost if keep_cache else 0
        if full:
            _save(os.path.join(d, "logits.npy"), b32)
            _save(os.path.join(d, "logits64.npy"), b64)
        if keep_cache:
            _save(os.path.join(d, "cache.npy"), c32)
            _save(os.path.join(d, "cache64.npy"), c64)
        batches.append({"dir": f"batch_{len(batches)}", "rows": len(group),
                        "prompt_len": int(ids.shape[1]),
                        "prompt_lengths": [len(p) for p in group],
                        "logits": full, "cache": keep_cache,
                        "cache_shapes": [list(s) for s in shapes]})
    return batches


def capture_decode(model: torch.nn.Module, out_dir: str, prompts: Sequence[Sequence[int]], *,
                   steps: int = 16, batch_size: int = 4, pad_token_id: int = 0, topk: int = 8,
                   logits_batches: int = 2, cache_batches: Optional[int] = None, opset: int = 18,
                   threads: Optional[int] = None, logits_processor: Optional[Any] = None,
                   eos_token_id: Optional[int] = None, do_sample: bool = False,
                   temperature: float = 1.0, seed: int = 0,
                   export_step: Optional[DecoderStep] = None) -> Dict[str, Any]:
    """Export ``model``'s decode forward to ``out_dir``/model.onnx and record
    the eager greedy generation of ``steps`` tokens for every prompt
    (docs/decode.md).  ``logits_batches``: how many batches (the first) keep
    their full float32 and float64 logits of every step; every batch keeps
    the top-``topk`` ids and float32 logits of every step and the float64
    noise of every step.  ``cache_batches``: how many batches (the first)
    keep eager's last cache and its float64 twin, which name the layer where
    a defect starts (None: every batch while the caches kept stay within
    CACHE_BUDGET_BYTES, 256 MiB).  ``eos_token_id``: a row stops at
    it (its later steps are not judged).  ``do_sample``: eager draws each
    token (sample_pick at ``temperature``, one uniform draw per row and step
    from numpy's generator seeded with ``seed``, recorded) instead of the
    argmax; generate draws ORT's token with the same draw.  ``threads``: torch's intra-op threads for the
    eager loops (restored after; None: one for a model under
    SMALL_MODEL_PARAMS parameters, else torch's own).  ``logits_processor``:
    applied to eager's logits before its pick, as transformers' generate
    applies a repetition penalty (a LogitsProcessor); its repr is recorded
    (generation.logits_processor), as are the raw logits.  The ONNX loop picks
    greedily on raw logits: a processor is a generation setting applied on
    eager's side only, which generate names.  ``export_step``: the
    module exported instead of
    the eager one (a planted fault; None: the model's own).  Returns the
    manifest written to generate.json."""
    if steps < 1 or batch_size < 1 or topk < 1 or not prompts:
        raise ValueError("capture_decode: steps, batch_size and topk must be >= 1, prompts not empty")
    if do_sample and (logits_processor is not None or not temperature > 0):
        raise ValueError("capture_decode: do_sample needs a positive temperature and no logits_processor")
    if any(len(p) == 0 for p in prompts):
        raise ValueError("capture_decode: a prompt is empty (prompt %d)" % [len(p) for p in prompts].index(0))
    model = model.eval()
    layers, kv_heads, head_dim = cache_geometry(model)
    vocab = int(_config(model).vocab_size)
    os.makedirs(out_dir, exist_ok=True)
    t0 = time.monotonic()
    _exportable_attention(model)
    eager = DecoderStep(model, layers)
    exporter = export_decoder(export_step or DecoderStep(model, layers),
                              os.path.join(out_dir, "model.onnx"), opset=opset)
    t_export = time.monotonic() - t0
    m64 = copy.deepcopy(model).double()
    step64 = DecoderStep(m64, layers)
    saved_threads = torch.get_num_threads()
    torch.set_num_threads(_loop_threads(model, threads))
    try:
        batches = _record(eager, step64, out_dir, prompts, steps=steps, batch_size=batch_size,
                          pad_token_id=pad_token_id, topk=topk, logits_batches=logits_batches,
                          cache_batches=cache_batches, processor=logits_processor,
                          sampler=_Sampler(temperature, seed) if do_sample else None,
                          eos=eos_token_id)
    finally:
        torch.set_num_threads(saved_threads)
    names_in, names_out = io_names(layers)
    manifest = {
        "schema": SCHEMA,
        "model": {"class": type(model).__name__, "model_type": getattr(_config(model), "model_type", ""),
                  "vocab": vocab},
        "exporter": exporter, "opset": opset,
        "torch": torch.__version__,
        "inputs": {"input_ids": names_in[0], "attention_mask": names_in[1],
                   "position_ids": names_in[2], "past": names_in[3:]},
        "outputs": {"logits": names_out[0], "present": names_out[1:]},
        "cache": {"layers": layers, "kv_heads": kv_heads, "head_dim": head_dim, "dtype": "float32"},
        "generation": {"strategy": "sample" if do_sample else "greedy", "steps": steps,
                       "temperature": temperature if do_sample else None,
                       "seed": seed if do_sample else None, "eos_token_id": eos_token_id,
                       "pad_token_id": pad_token_id, "padding": "left",
                       "position_ids": "cumsum-1",
                       "logits_processor": None if logits_processor is None else repr(logits_processor)},
        "topk": topk, "reference": "float64",
        "prompts": len(prompts),
        "batches": batches,
        "seconds": {"export": round(t_export, 3), "total": round(time.monotonic() - t0, 3)},
    }
    with open(os.path.join(out_dir, "generate.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    return manifest
