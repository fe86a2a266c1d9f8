"""The deployment chain's transforms (docs/chain.md): named, pinned recipes
that make a stage model from a bundle's export, each with the package and
version that made it recorded.

Each transform reads ``src`` (an ONNX model file) and writes ``dst``; the
bundle is given to the ones that need its fixtures (static quantization
calibrates on the fixtures' inputs).  The packages are those of the torch
2.x test environment (scripts/requirements-torch2.in): onnxruntime (its
offline optimizer and its quantization tools), onnxconverter-common
(float16) and onnxslim.  A transform whose package is missing raises
ModuleNotFoundError naming it.

How to add a transform: a function (src, dst, bundle, **options) -> None,
and a row in TRANSFORMS: its name, the precision of what it makes
(fp32|fp16|bf16|int8, what `onnxparity chain --precision` takes), the
packages whose versions the stage records, the function.
"""
from __future__ import annotations

import glob
import importlib.metadata
import os
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence


def _level(name: str) -> Any:
    import onnxruntime as ort
    levels = {"basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
              "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED}
    if name not in levels:
        # 'all' adds layout transforms for this CPU (NCHWc): a model only this
        # machine's ORT build runs, so not a stage to ship
        raise ValueError(f"ORT offline optimization level must be one of {sorted(levels)}, not {name!r}")
    return levels[name]


def ort_optimize(src: str, dst: str, bundle: Optional[str] = None, level: str = "extended") -> None:
    """ONNX Runtime's offline graph optimization at `level`: the session
    writes the graph it optimized (SessionOptions.optimized_model_filepath)."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = _level(level)
    so.optimized_model_filepath = dst
    ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])


def _f16_options(keep_io_types: bool, op_block_list: Optional[Sequence[str]],
                 node_block_list: Optional[Sequence[str]]) -> Dict[str, Any]:
    """The keyword arguments of a float16 converter's
    convert_float_to_float16 (a block list left out: the converter's default)."""
    kw: Dict[str, Any] = {"keep_io_types": keep_io_types}
    if op_block_list is not None:
        kw["op_block_list"] = list(op_block_list)
    if node_block_list is not None:
        kw["node_block_list"] = list(node_block_list)
    return kw


def float16(src: str, dst: str, bundle: Optional[str] = None, keep_io_types: bool = True,
            op_block_list: Optional[Sequence[str]] = None,
            node_block_list: Optional[Sequence[str]] = None) -> None:
    """ONNX Runtime's float16 converter (onnxruntime.transformers.float16,
    its maintained copy of onnxconverter-common's), inputs and outputs kept
    float32 (keep_io_types) by default; block lists as the converter takes
    them (None: the converter's default op block list)."""
    import onnx
    from onnxruntime.transformers import float16 as f16
    m = onnx.load(src)
    kw = _f16_options(keep_io_types, op_block_list, node_block_list)
    onnx.save(f16.convert_float_to_float16(m, **kw), dst)


def float16_occ(src: str, dst: str, bundle: Optional[str] = None, keep_io_types: bool = True,
                op_block_list: Optional[Sequence[str]] = None,
                node_block_list: Optional[Sequence[str]] = None) -> None:
    """onnxconverter-common's convert_float_to_float16 (options as float16).
    On a dynamo export of BERT its model is refused by ORT: a graph output
    that a node also reads (last_hidden_state into the pooler's Gather) stays
    float32 under keep_io_types while the node's output is declared float16
    (docs/chain.md); ResNet-class graphs convert."""
    import onnx
    from onnxconverter_common import float16 as f16
    m = onnx.load(src)
    kw = _f16_options(keep_io_types, op_block_list, node_block_list)
    out = f16.convert_float_to_float16(m, **kw)
    _fix_casts(out)
    onnx.save(out, dst)


def float16_region(src: str, dst: str, bundle: Optional[str] = None, keep_io_types: bool = True,
                   op_block_list: Optional[Sequence[str]] = None,
                   node_block_list: Optional[Sequence[str]] = None) -> None:
    """The `fp16` transform, then every blocked region kept float32 as a
    whole (keep_float32_regions): what the float16 block-list search
    (onnxparity._fp16search) applies its lists with.  Without block lists it
    makes the `fp16` transform's model."""
    import onnx
    from onnxruntime.transformers import float16 as f16
    m = onnx.load(src)
    kw = _f16_options(keep_io_types, op_block_list, node_block_list)
    out = f16.convert_float_to_float16(onnx.load(src), **kw)
    keep_float32_regions(out, m)
    onnx.save(out, dst)


def keep_float32_regions(m: Any, orig: Any) -> None:
    """Keep the float32 values of ONNX Runtime's float16 converter float32
    between its float32 nodes (`m` converted from `orig`, in place).

    The converter (onnxruntime 1.23's onnxruntime.transformers.float16)
    writes every blocked node as Cast(to=float) on each float16 input, the
    node, Cast(to=float16) on each output: a value between two blocked nodes
    goes float32 -> float16 -> float32, so a value beyond float16's range
    (65504) is Inf there whatever the block list holds.  Here:

    - each Cast(to=float16) -> Cast(to=float) round trip is removed: the
      reader of the second Cast reads the first Cast's float32 input (a
      graph output the second Cast writes becomes an Identity of it);
    - a blocked node's float32 input that the converter made a float16
      initializer (one float16 nodes read too, clamped to 65504) reads the
      original float32 initializer, under NAME + "_fp32";
    - a blocked node writes its output under its original name again, in
      float32 (the converter names it NODE_output_cast_I and gives the
      original name to the Cast to float16): the chain's values matched by
      name are then the float32 ones; float16 readers read
      NODE_output_fp16_I;
    - Casts nobody reads are removed, and the nodes put in topological
      order (the converter appends its Casts at the end of the graph).
    """
    from onnx import TensorProto
    g = m.graph
    orig_f32 = {i.name: i for i in orig.graph.initializer if i.data_type == TensorProto.FLOAT}
    nodes = _drop_round_trips(g, orig_f32)
    _own_names(g, nodes)
    _prune_and_sort(g, nodes)


def _cast_to(n: Any) -> Optional[int]:
    if n.op_type != "Cast":
        return None
    return next((a.i for a in n.attribute if a.name == "to"), None)


def _drop_round_trips(g: Any, orig_f32: Dict[str, Any]) -> List[Any]:
    """keep_float32_regions, first step: each Cast(to=float) of a
    Cast(to=float16), or of a float16 initializer that was float32, read as
    the float32 value.  Returns the nodes left (the graph's node list is
    rewritten by _prune_and_sort)."""
    from onnx import TensorProto
    outputs = {o.name for o in g.output}
    inits = {i.name for i in g.initializer}
    producer = {o: n for n in g.node for o in n.output}
    subst: Dict[str, str] = {}
    drop = set()
    for n in g.node:
        if _cast_to(n) != TensorProto.FLOAT:
            continue
        src = n.input[0]
        p = producer.get(src)
        if p is not None and _cast_to(p) == TensorProto.FLOAT16:
            target = p.input[0]
        elif src in inits and src in orig_f32:
            target = src + "_fp32"
            if target not in inits:
                t = g.initializer.add()
                t.CopyFrom(orig_f32[src])
                t.name = target
                inits.add(target)
        else:
            continue
        if n.output[0] in outputs:
            n.op_type = "Identity"
            del n.attribute[:]
            n.input[0] = target
        else:
            subst[n.output[0]] = target
            drop.add(id(n))
    for name in list(subst):
        v = subst[name]
        while v in subst:
            v = subst[v]
        subst[name] = v
    nodes = [n for n in g.node if id(n) not in drop]
    for n in nodes:
        for k, v in enumerate(n.input):
            n.input[k] = subst.get(v, v)
        for sub in _subgraphs(n):
            _rename_reads(sub, subst)
    return nodes


def _own_names(g: Any, nodes: List[Any]) -> None:
    """keep_float32_regions, second step: a blocked node's output under its
    own name again, float32; the converter's Cast to float16 after it writes
    NODE_output_fp16_I, which float16 readers read."""
    from onnx import TensorProto, ValueInfoProto
    outputs = {o.name for o in g.output}
    by_name = {n.name: n for n in nodes}
    rename: Dict[str, str] = {}
    moved = []
    for c in nodes:
        if _cast_to(c) != TensorProto.FLOAT16 or "_output_cast" not in c.name:
            continue
        base, _, idx = c.name.rpartition("_output_cast")
        p = by_name.get(base)
        if p is None or not idx.isdigit() or c.input[0] != f"{base}_output_cast_{idx}":
            continue
        x = c.output[0]
        if x in outputs:
            continue
        x16 = f"{base}_output_fp16_{idx}"
        rename[x] = x16         # float16 readers
        rename[c.input[0]] = x  # float32 readers
        p.output[int(idx)] = x
        c.input[0], c.output[0] = x, x16
        moved.append((x, x16))
    if not rename:
        return
    casts = {b for _, b in moved}
    for n in nodes:
        if n.op_type == "Cast" and n.output and n.output[0] in casts:
            continue
        for k, v in enumerate(n.input):
            if v in rename:
                n.input[k] = rename[v]
        for sub in _subgraphs(n):
            _rename_reads(sub, rename)
    vi = {v.name: v for v in g.value_info}
    added = []
    for x, x16 in moved:
        if x in vi:
            v16 = ValueInfoProto()
            v16.CopyFrom(vi[x])
            v16.name = x16
            added.append(v16)
            vi[x].type.tensor_type.elem_type = TensorProto.FLOAT
    gone = set(rename) - {x for x, _ in moved}
    kept = [v for v in g.value_info if v.name not in gone]
    del g.value_info[:]
    g.value_info.extend(kept + added)


def _subgraphs(n: Any) -> List[Any]:
    return [a.g for a in n.attribute if a.HasField("g")] + [x for a in n.attribute for x in a.graphs]


def _rename_reads(g: Any, rename: Dict[str, str]) -> None:
    """Outer values a subgraph reads, renamed (its own values left alone)."""
    own = {o for n in g.node for o in n.output} | {i.name for i in g.input} | {i.name for i in g.initializer}
    for n in g.node:
        for k, v in enumerate(n.input):
            if v in rename and v not in own:
                n.input[k] = rename[v]
        for sub in _subgraphs(n):
            _rename_reads(sub, rename)


def _reads(n: Any) -> set:
    """The values node `n` reads: its inputs and what its subgraphs read."""
    out = set(n.input)
    for sub in _subgraphs(n):
        for m in sub.node:
            out |= _reads(m)
    return out


def _prune_and_sort(g: Any, nodes: List[Any]) -> None:
    """keep_float32_regions, last step: Casts nobody reads and initializers
    nobody reads dropped, the nodes in topological order."""
    outputs = {o.name for o in g.output}
    while True:
        read = set().union(*(_reads(n) for n in nodes)) | outputs
        left = [n for n in nodes if n.op_type != "Cast" or any(o in read for o in n.output)]
        if len(left) == len(nodes):
            break
        nodes = left
    kept_inits = [i for i in g.initializer if i.name in read]
    del g.initializer[:]
    g.initializer.extend(kept_inits)
    produced = {o for n in nodes for o in n.output}
    needs = {id(n): {v for v in _reads(n) if v in produced} for n in nodes}
    made: set = set()
    order, pending = [], list(nodes)
    while pending:
        ready = [n for n in pending if needs[id(n)] <= made]
        if not ready:  # a cycle: leave the rest as it was
            order += pending
            break
        for n in ready:
            made.update(n.output)
        order += ready
        ids = {id(n) for n in ready}
        pending = [n for n in pending if id(n) not in ids]
    del g.node[:]
    g.node.extend(order)


def _fix_casts(m: Any) -> None:
    """onnxconverter-common 1.16 rewrites a value's value_info to float16 but
    leaves the `to` of the Cast that makes it: a dynamo export's
    Cast(to=float) (BERT's attention mask) then declares a float16 output and
    ORT refuses the model ("Type Error: Type (tensor(float16)) of output arg
    ... does not match expected type").  Such a Cast is made to cast to
    float16, as its value_info says."""
    from onnx import TensorProto
    f16_values = {v.name for v in m.graph.value_info
                  if v.type.tensor_type.elem_type == TensorProto.FLOAT16}
    for n in m.graph.node:
        if n.op_type != "Cast" or not n.output or n.output[0] not in f16_values:
            continue
        for a in n.attribute:
            if a.name == "to" and a.i == TensorProto.FLOAT:
                a.i = TensorProto.FLOAT16


# The ops quantize_dynamic quantizes here: the matmul class.  Its default
# list adds Conv (as ConvInteger), which ONNX Runtime 1.23's CPU provider has
# no kernel for with int8 weights (ORT_NOT_IMPLEMENTED "Could not find an
# implementation for ConvInteger(10)"); ORT's documentation points
# convolutional nets to static quantization (int8-qdq).
DYNAMIC_OPS = ("MatMul", "Gemm", "Attention", "LSTM", "GRU")


def int8_dynamic(src: str, dst: str, bundle: Optional[str] = None, per_channel: bool = False,
                 op_types: Sequence[str] = DYNAMIC_OPS) -> None:
    """onnxruntime.quantization.quantize_dynamic: int8 weights, activations
    quantized at run time, on the ops of `op_types`."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    # the quantizer re-infers shapes and refuses the value_info torch's
    # dynamo exporter writes for some Gemm weights (ShapeInferenceError
    # "Inferred shape and existing shape differ"): quantize a copy without it
    m = onnx.load(src)
    del m.graph.value_info[:]
    tmp = dst + ".noinfo.onnx"
    onnx.save(m, tmp)
    try:
        quantize_dynamic(tmp, dst, per_channel=per_channel, weight_type=QuantType.QInt8,
                         op_types_to_quantize=list(op_types))
    finally:
        os.unlink(tmp)


def fixture_inputs(bundle: str, model: str) -> Iterator[Dict[str, Any]]:
    """The bundle's fixtures as input feeds of `model` (input_K.pb feeds
    graph input K by position, as the test-data layout says)."""
    import onnx
    from onnx import numpy_helper
    names = [i.name for i in onnx.load(model, load_external_data=False).graph.input]
    inits = {i.name for i in onnx.load(model, load_external_data=False).graph.initializer}
    names = [n for n in names if n not in inits]
    for d in sorted(glob.glob(os.path.join(bundle, "test_data_set_*")),
                    key=lambda p: int(p.rsplit("_", 1)[1])):
        feed = {}
        for k, name in enumerate(names):
            path = os.path.join(d, f"input_{k}.pb")
            if not os.path.exists(path):
                break
            feed[name] = numpy_helper.to_array(onnx.load_tensor(path))
        if len(feed) == len(names):
            yield feed


def int8_qdq(src: str, dst: str, bundle: Optional[str] = None, per_channel: bool = False) -> None:
    """onnxruntime.quantization.quantize_static in QDQ format, calibrated
    (MinMax) on the inputs of the bundle's fixtures: int8 weights, uint8
    activations, as the quantizer defaults."""
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)
    if bundle is None:
        raise ValueError("int8-qdq calibrates on a bundle's fixtures: give the bundle")
    feeds = list(fixture_inputs(bundle, src))
    if not feeds:
        raise ValueError(f"{bundle}: no fixture inputs to calibrate on")

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.it = iter(feeds)

        def get_next(self) -> Optional[Dict[str, Any]]:
            return next(self.it, None)

    quantize_static(src, dst, Reader(), quant_format=QuantFormat.QDQ, per_channel=per_channel,
                    weight_type=QuantType.QInt8, activation_type=QuantType.QUInt8)


def slim(src: str, dst: str, bundle: Optional[str] = None) -> None:
    """onnxslim.slim: constant folding, dead-node removal, fusions."""
    import onnx
    import onnxslim
    onnx.save(onnxslim.slim(onnx.load(src)), dst)


@dataclass(frozen=True)
class Transform:
    name: str
    precision: str
    packages: Sequence[str]
    fn: Callable[..., None]
    options: Dict[str, Any]


TRANSFORMS: Dict[str, Transform] = {t.name: t for t in [
    Transform("ort-basic", "fp32", ("onnxruntime",), ort_optimize, {"level": "basic"}),
    Transform("ort-extended", "fp32", ("onnxruntime",), ort_optimize, {"level": "extended"}),
    Transform("slim", "fp32", ("onnxslim", "onnx"), slim, {}),
    Transform("fp16", "fp16", ("onnxruntime", "onnx"), float16, {"keep_io_types": True}),
    Transform("fp16-occ", "fp16", ("onnxconverter-common", "onnx"), float16_occ,
              {"keep_io_types": True}),
    Transform("fp16-region", "fp16", ("onnxruntime", "onnx"), float16_region,
              {"keep_io_types": True}),
    Transform("int8-dynamic", "int8", ("onnxruntime",), int8_dynamic, {}),
    Transform("int8-qdq", "int8", ("onnxruntime",), int8_qdq, {}),
]}


def versions(packages: Sequence[str]) -> Dict[str, str]:
    out = {}
    for p in packages:
        try:
            out[p] = importlib.metadata.version(p)
        except importlib.metadata.PackageNotFoundError:
            raise ModuleNotFoundError(f"the transform needs the package {p} "
                                      "(pip install -r scripts/requirements-torch2.txt)") from None
    return out


def make(bundle: str, out_dir: str, names: Sequence[str], src: Optional[str] = None,
         **options: Any) -> List[Dict[str, Any]]:
    """Each transform of `names` applied to the bundle's export (or `src`),
    written to out_dir/NAME.onnx.  Returns [{name, model, precision,
    transform, options, packages}] in order: what `onnxparity chain` takes
    as --stage NAME=MODEL --precision NAME=P.  `options` go to every
    transform that takes them (keep_io_types, op_block_list, ...)."""
    src = src or os.path.join(bundle, "model.onnx")
    os.makedirs(out_dir, exist_ok=True)
    stages = []
    for name in names:
        if name not in TRANSFORMS:
            raise ValueError(f"unknown transform {name!r}: one of {sorted(TRANSFORMS)}")
        t = TRANSFORMS[name]
        pk = versions(t.packages)
        opts = dict(t.options)
        code = t.fn.__code__
        opts.update({k: v for k, v in options.items() if k in code.co_varnames[:code.co_argcount]})
        dst = os.path.join(out_dir, f"{name}.onnx")
        t.fn(src, dst, bundle, **opts)
        stages.append({"name": name, "model": dst, "precision": t.precision, "transform": name,
                       "options": opts, "packages": pk})
    return stages


def stage_args(stages: Sequence[Dict[str, Any]]) -> List[str]:
    """The `onnxparity chain` arguments of `stages`."""
    out: List[str] = []
    for s in stages:
        out += ["--stage", f"{s['name']}={s['model']}", "--precision", f"{s['name']}={s['precision']}"]
    return out
