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
    kw: Dict[str, Any] = {"keep_io_types": keep_io_types}
    if op_block_list is not None:
        kw["op_block_list"] = list(op_block_list)
    if node_block_list is not None:
        kw["node_block_list"] = list(node_block_list)
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
    kw: Dict[str, Any] = {"keep_io_types": keep_io_types}
    if op_block_list is not None:
        kw["op_block_list"] = list(op_block_list)
    if node_block_list is not None:
        kw["node_block_list"] = list(node_block_list)
    out = f16.convert_float_to_float16(m, **kw)
    _fix_casts(out)
    onnx.save(out, dst)


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
