"""The float16 block-list search (docs/chain.md, "The float16 block-list
search"): for a float16 stage beyond its envelope, a small node_block_list
(the form onnxruntime.transformers.float16.convert_float_to_float16 takes)
whose nodes, kept float32, bring the stage back within float16's envelope,
each candidate verified by converting again and judging the new stage with
the chain.

    python -m onnxparity.chainmake fp16-search BUNDLE OUT [--budget N]
    onnxparity.api.fp16_search(bundle, out_dir)   # the same, in Python

The search, in conversions (each one converted and judged = one check of the
budget):

1. the plain conversion (the `fp16` transform): within its envelope, the
   search has nothing to do and returns an empty list;
2. grow: the chain names the stage's first divergent node (by its export
   name; the converter keeps node names); it joins the list, which is
   applied with the `fp16-region` transform (the converter with the list,
   then each blocked region kept float32 as a whole), and the stage judged
   again.  When the node named is already in the list, its worst input's
   producer joins, else the producers of its float inputs.  Until the stage
   is within, the chain names no node, nothing new can join, or the budget
   is spent;
3. shrink: each node of the list, in the order it joined, is left out when
   the stage stays within without it (a bisection over the grown list:
   halves first, then single nodes, as the budget allows);
4. the op-type form: the list's op types added to the converter's default
   op_block_list, judged once (reported beside the list, not instead of it).

The answer's verdict is the chain's on the last list that passed (or, when
none did, on the last tried), with that model kept in OUT: a list is given as
found only when a conversion with it was judged within.
"""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Sequence

from . import _transforms


def _stage_of(doc: Dict[str, Any], name: str) -> Dict[str, Any]:
    return next(s for s in doc["stages"] if s["name"] == name)


class _Judge:
    """Converts with a block list and judges the stage, counting the checks."""

    def __init__(self, bundle: str, src: str, out_dir: str, budget: int, options: Dict[str, Any]):
        self.bundle, self.src, self.out_dir = bundle, src, out_dir
        self.budget, self.options, self.used = budget, options, 0
        self.seen: Dict[tuple, Dict[str, Any]] = {}

    def left(self) -> int:
        return self.budget - self.used

    def __call__(self, blocked: Sequence[str], ops: Sequence[str] = ()) -> Dict[str, Any]:
        from onnxruntime.transformers import float16 as f16

        from . import api
        key = (tuple(sorted(blocked)), tuple(sorted(ops)))
        if key in self.seen:
            return self.seen[key]
        self.used += 1
        name = "fp16" if not blocked and not ops else "fp16-region"
        dst = os.path.join(self.out_dir, f"try{self.used:03d}.onnx")
        if ops:
            _transforms.float16_region(self.src, dst, self.bundle,
                                       op_block_list=list(f16.DEFAULT_OP_BLOCK_LIST) + list(ops))
        elif blocked:
            _transforms.float16_region(self.src, dst, self.bundle, node_block_list=list(blocked))
        else:
            _transforms.float16(self.src, dst, self.bundle)
        doc = api.chain(self.bundle, stages=[(name, dst, "fp16")], **self.options)
        st = _stage_of(doc, name)
        fd = st.get("first_divergent") or {}
        first = fd.get("first") or {}
        inp = fd.get("input") or {}
        r = {"node_block_list": list(blocked), "op_types": list(ops), "model": dst, "status": st["status"],
             "verdict": doc["verdict"], "first_node": first.get("export_node") or first.get("node"),
             "first_value": first.get("value"), "first_op_type": first.get("export_op_type"),
             "input_node": inp.get("export_node") or inp.get("node"),
             "ratio": max((o.get("ratio") or 0.0 for o in st.get("outputs", [])), default=None),
             "message": st.get("message")}
        self.seen[key] = r
        return r


def _float_producers(model: Any, node_name: str) -> List[str]:
    """The producers, in the export, of `node_name`'s inputs (graph inputs
    and initializers have none)."""
    producer = {o: n.name for n in model.graph.node for o in n.output}
    node = next((n for n in model.graph.node if n.name == node_name), None)
    if node is None:
        return []
    return [producer[v] for v in node.input if v in producer]


def search(bundle: str, out_dir: str, *, src: Optional[str] = None, budget: int = 24,
           shrink: bool = True, **chain_options: Any) -> Dict[str, Any]:
    """Search a node_block_list for the float16 conversion of the bundle's
    export (or `src`) that is within float16's envelope (module docstring).

    Returns {"found", "verdict", "node_block_list", "transform", "model",
    "plain", "checks", "budget", "steps", "note"}: `found` is true when a
    conversion was judged within (`node_block_list` then is the list, empty
    when the plain conversion already is, `model` that conversion, `verdict`
    "pass"); false when the budget ran out or the search could not go on
    (`verdict` the last conversion's, `note` why).  `steps` lists every
    conversion judged: its list, its status, the first divergent node the
    chain named.  `op_form`: the found list's op types added to the
    converter's default op_block_list (every node of those types kept
    float32), judged once when the budget allows (its `op_types`, `status`,
    `verdict`, `model`), else None.  chain_options go to api.chain
    (ort_lib, ...)."""
    import onnx
    if budget < 1:
        raise ValueError(f"budget must be at least 1, not {budget}")
    src = src or os.path.join(bundle, "model.onnx")
    os.makedirs(out_dir, exist_ok=True)
    export = onnx.load(src, load_external_data=False)
    names = {n.name for n in export.graph.node}
    judge = _Judge(bundle, src, out_dir, budget, chain_options)
    grown: List[str] = []
    op_form: Optional[Dict[str, Any]] = None

    def answer(found: bool, last: Dict[str, Any], note: str) -> Dict[str, Any]:
        steps = list(judge.seen.values())
        return {"found": found, "verdict": last["verdict"], "status": last["status"],
                "node_block_list": last["node_block_list"] if found else [],
                "tried_node_block_list": last["node_block_list"],
                "grown_node_block_list": grown,
                "transform": "fp16" if not last["node_block_list"] else "fp16-region",
                "model": last["model"], "plain": steps[0], "checks": judge.used,
                "op_form": op_form, "budget": budget, "steps": steps, "note": note}

    plain = judge([])
    if plain["status"] == "within":
        return answer(True, plain, "the plain float16 conversion is within float16's envelope: "
                                   "nothing to block")
    if plain["status"] == "error":
        return answer(False, plain, f"ONNX Runtime refused the plain conversion: {plain['message']}")
    # grow along the first divergence
    blocked: List[str] = []
    last = plain
    while last["status"] != "within":
        if judge.left() <= 0:
            return answer(False, last, f"budget of {budget} conversions spent; no list within yet "
                                       f"(the last tried: {len(blocked)} nodes)")
        cand = [c for c in [last["first_node"]] if c in names and c not in blocked]
        if not cand and last["input_node"] in names and last["input_node"] not in blocked:
            cand = [last["input_node"]]
        if not cand and last["first_node"]:
            cand = [p for p in _float_producers(export, last["first_node"]) if p not in blocked]
        if not cand:
            why = ("the chain named no divergent node" if not last["first_node"]
                   else f"{last['first_node']} and the producers of its inputs are already float32")
            return answer(False, last, f"no list found: {why} (status {last['status']})")
        blocked += cand
        last = judge(blocked)
        if last["status"] == "error":
            return answer(False, last, f"ONNX Runtime refused the conversion: {last['message']}")
    best, grown = last, list(blocked)
    # shrink: halves, then single nodes, each kept out while the stage stays within
    if shrink:
        chunk = max(1, len(blocked) // 2)
        while chunk >= 1 and judge.left() > 0:
            k = 0
            while k < len(blocked) and judge.left() > 0:
                trial = blocked[:k] + blocked[k + chunk:]
                if trial and trial != blocked:
                    r = judge(trial)
                    if r["status"] == "within":
                        blocked, best = trial, r
                        continue
                k += chunk
            if chunk == 1:
                break
            chunk //= 2
    # the same in op-type form: the list's op types added to the converter's
    # default op_block_list, judged once when the budget allows
    if judge.left() > 0:
        kinds = {n.name: n.op_type for n in export.graph.node}
        op_form = judge([], sorted({kinds[n] for n in blocked}))
    return answer(True, best, f"{len(best['node_block_list'])} nodes kept float32 bring the stage "
                              f"within float16's envelope ({judge.used} conversions judged)")
