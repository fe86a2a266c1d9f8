#!/usr/bin/python3
"""Generate the seed corpora for fuzz/corpus/{model,pb,wire,lint,extdata,
testdata,manifest,criteria,docs} and fuzz/manifest_model.inc (run with
/usr/bin/python3, onnx 1.12):

    /usr/bin/python3 fuzz/gen_corpus.py fuzz/corpus [ZOO_DIR]

Small models are made here with onnx.helper, tensors with numpy_helper, plus
hand-made malformed bytes.  Real files are added where they exist: the
example bundles (examples/), the ONNX test data
(/usr/share/libonnx-testdata/data, a few small node tests) and, when given,
the diagnose zoo made by tests/zoo/make_zoo.py (ZOO_DIR: its bundles of at
most 64 KiB models).  Each corpus stays well under 2 MB."""
import os
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1]
ZOO = sys.argv[2] if len(sys.argv) > 2 else None
for d in ("model", "pb", "wire", "lint", "extdata", "testdata", "manifest", "criteria", "docs"):
    os.makedirs(os.path.join(OUT, d), exist_ok=True)


def save(kind, name, data, limit=20000):
    if not isinstance(data, (bytes, bytearray)):
        data = data.SerializeToString()
    assert len(data) < limit, (name, len(data))
    with open(os.path.join(OUT, kind, name), "wb") as f:
        f.write(data)
    return data


def vi(name, et=TensorProto.FLOAT, shape=(2, 3)):
    return helper.make_tensor_value_info(name, et, shape)


def model(graph, opset=13, **kw):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], **kw)
    m.ir_version = 8
    return m


models = {}

# 1. the chain used by the unit tests, with an initializer and value_info
g = helper.make_graph(
    [helper.make_node("Relu", ["A"], ["B"], name="relu"),
     helper.make_node("Neg", ["B"], ["C"], name="neg"),
     helper.make_node("Exp", ["C"], ["D"], name="exp"),
     helper.make_node("Mul", ["D", "W"], ["E"], name="mul"),
     helper.make_node("Shape", ["E"], ["S"], name="shape")],
    "chain", [vi("A")], [vi("E")],
    [numpy_helper.from_array(np.array([2, 4, 8], np.float32), "W")],
    value_info=[vi("B"), vi("D")])
models["chain.onnx"] = model(g, producer_name="seed", doc_string="a chain")

# 2. every attribute type
sub = helper.make_graph([helper.make_node("Identity", ["X"], ["Y"])], "sub", [], [vi("Y")])
sp = helper.make_sparse_tensor(
    numpy_helper.from_array(np.array([1.5, -2], np.float32), "sv"),
    numpy_helper.from_array(np.array([1, 3], np.int64), "si"), [4])
attrs = dict(
    f=0.25, i=-7, s=b"bytes", t=numpy_helper.from_array(np.arange(3, dtype=np.int8), "t"),
    g=sub, floats=[1.5, -2.5], ints=[1, -1, 2**62], strings=[b"a", b"", b"ccc"],
    tensors=[numpy_helper.from_array(np.array(0.5), "t0"),
             numpy_helper.from_array(np.array([1, 2], np.uint16), "t1")],
    graphs=[sub, sub], sparse=sp, sparses=[sp, sp])
node = helper.make_node("Custom", ["X", "", "W"], ["Y", ""], name="n0", domain="com.example",
                        **attrs)
node.attribute.append(helper.make_attribute("tp", helper.make_tensor_type_proto(TensorProto.INT64, [7])))
node.attribute.append(helper.make_attribute(
    "tps", [helper.make_tensor_type_proto(TensorProto.FLOAT, None),
            helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.BOOL, None))]))
ref = onnx.AttributeProto()
ref.name, ref.ref_attr_name, ref.type = "r", "outer", onnx.AttributeProto.INT
node.attribute.append(ref)
g = helper.make_graph([node], "attrs", [vi("X")], [vi("Y")],
                      [numpy_helper.from_array(np.ones(3, np.float32), "W")])
models["attributes.onnx"] = model(g, opset_imports=None) if False else model(g)
models["attributes.onnx"].opset_import.append(helper.make_opsetid("com.example", 1))

# 3. If with two branches
then_g = helper.make_graph([helper.make_node("Neg", ["X"], ["t"])], "then", [], [vi("t")])
else_g = helper.make_graph([helper.make_node("Abs", ["X"], ["e"])], "else", [], [vi("e")])
g = helper.make_graph(
    [helper.make_node("ReduceSum", ["X"], ["s"], keepdims=0),
     helper.make_node("Greater", ["s", "zero"], ["c"]),
     helper.make_node("If", ["c"], ["Y"], then_branch=then_g, else_branch=else_g)],
    "if", [vi("X")], [vi("Y")],
    [numpy_helper.from_array(np.array(0, np.float32), "zero")])
models["if_branches.onnx"] = model(g)

# 4. Loop with a body, and If nested inside it
body = helper.make_graph(
    [helper.make_node("Add", ["x_in", "one"], ["x_out"]),
     helper.make_node("Identity", ["cond_in"], ["cond_out"]),
     helper.make_node("If", ["cond_in"], ["dbg"], then_branch=then_g, else_branch=else_g)],
    "body", [vi("i", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []), vi("x_in")],
    [vi("cond_out", TensorProto.BOOL, []), vi("x_out"), vi("dbg")])
g = helper.make_graph(
    [helper.make_node("Loop", ["M", "cond", "X"], ["Y", "scan"], body=body)],
    "loop", [vi("M", TensorProto.INT64, []), vi("cond", TensorProto.BOOL, []), vi("X")],
    [vi("Y"), vi("scan", TensorProto.FLOAT, None)],
    [numpy_helper.from_array(np.ones((2, 3), np.float32), "one")])
models["loop_nested_if.onnx"] = model(g)

# 5. Constants of every flavour, Cast, Dropout, TopK (type rules)
g = helper.make_graph(
    [helper.make_node("Constant", [], ["c0"], value=numpy_helper.from_array(np.eye(2, dtype=np.float64))),
     helper.make_node("Constant", [], ["c1"], value_float=1.5),
     helper.make_node("Constant", [], ["c2"], value_ints=[1, 2, 3]),
     helper.make_node("Constant", [], ["c3"], value_string="hi"),
     helper.make_node("Cast", ["X"], ["x16"], to=TensorProto.FLOAT16),
     helper.make_node("Cast", ["x16"], ["xb"], to=TensorProto.BFLOAT16),
     helper.make_node("Dropout", ["X"], ["dr", "mask"]),
     helper.make_node("TopK", ["X", "k"], ["vals", "idx"]),
     helper.make_node("ArgMax", ["X"], ["am"]),
     helper.make_node("Equal", ["X", "X"], ["eq"]),
     helper.make_node("Where", ["eq", "X", "X"], ["wh"])],
    "rules", [vi("X")], [vi("wh")],
    [numpy_helper.from_array(np.array([1], np.int64), "k")])
models["type_rules.onnx"] = model(g)

# 6. a local function and a call to it
fn = helper.make_function("local", "MyFn", ["x"], ["y"],
                          [helper.make_node("Neg", ["x"], ["t"]), helper.make_node("Exp", ["t"], ["y"])],
                          [helper.make_opsetid("", 13)])
g = helper.make_graph([helper.make_node("MyFn", ["X"], ["Y"], domain="local")], "fn", [vi("X")], [vi("Y")])
m = model(g, functions=[fn])
m.opset_import.append(helper.make_opsetid("local", 1))
models["function.onnx"] = m

# 7. sparse initializer
g = helper.make_graph([helper.make_node("Add", ["X", "S"], ["Y"])], "sparse", [vi("X", shape=[4])],
                      [vi("Y", shape=[4])], sparse_initializer=[sp])
g.sparse_initializer[0].values.name = "S"
models["sparse_init.onnx"] = model(g)

# 8. sequence, optional, map and sparse types; symbolic dims
seq = helper.make_tensor_sequence_value_info("seq", TensorProto.INT64, None)
opt = helper.make_value_info("opt", helper.make_optional_type_proto(
    helper.make_tensor_type_proto(TensorProto.FLOAT16, ["N"])))
mp = onnx.ValueInfoProto()
mp.name = "map"
mp.type.map_type.key_type = TensorProto.STRING
mp.type.map_type.value_type.tensor_type.elem_type = TensorProto.FLOAT
spv = helper.make_sparse_tensor_value_info("sp", TensorProto.FLOAT, [10])
g = helper.make_graph([helper.make_node("Identity", ["X"], ["Y"])], "types",
                      [vi("X", shape=["batch", 3, None]), seq, opt, mp, spv],
                      [vi("Y", shape=["batch", 3, None])])
models["value_types.onnx"] = model(g)

# 9. external data (refused without a folder)
w = numpy_helper.from_array(np.ones(4, np.float32), "W")
w.data_location = TensorProto.EXTERNAL
for k, v in (("location", "weights.bin"), ("offset", "0"), ("length", "16")):
    e = w.external_data.add()
    e.key, e.value = k, v
w.ClearField("raw_data")
g = helper.make_graph([helper.make_node("Add", ["X", "W"], ["Y"])], "ext", [vi("X", shape=[4])],
                      [vi("Y", shape=[4])], [w])
models["external.onnx"] = model(g)

# 10. metadata, doc strings, several opsets, model_version, domain
m = model(helper.make_graph([helper.make_node("Relu", ["X"], ["Y"])], "meta", [vi("X")], [vi("Y")]),
          producer_name="pytorch", producer_version="1.13.1", domain="org.example", model_version=3,
          doc_string="docs")
m.opset_import.append(helper.make_opsetid("ai.onnx.ml", 3))
m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
helper.set_model_props(m, {"author": "seed", "license": "none"})
models["metadata.onnx"] = m

# 11. initializers of every dtype, raw and typed
inits = []
for dt, arr in [(TensorProto.FLOAT, np.array([1.5, -2], np.float32)),
                (TensorProto.DOUBLE, np.array([0.1], np.float64)),
                (TensorProto.INT8, np.array([-128, 127], np.int8)),
                (TensorProto.UINT8, np.array([0, 255], np.uint8)),
                (TensorProto.INT16, np.array([-3], np.int16)),
                (TensorProto.UINT16, np.array([65535], np.uint16)),
                (TensorProto.INT32, np.array([-1, 2**31 - 1], np.int32)),
                (TensorProto.INT64, np.array([-2**63], np.int64)),
                (TensorProto.UINT32, np.array([2**32 - 1], np.uint32)),
                (TensorProto.UINT64, np.array([2**64 - 1], np.uint64)),
                (TensorProto.BOOL, np.array([True, False])),
                (TensorProto.FLOAT16, np.array([1, -0.0], np.float16)),
                (TensorProto.COMPLEX64, np.array([1 + 2j], np.complex64)),
                (TensorProto.COMPLEX128, np.array([3 - 4j], np.complex128))]:
    name = TensorProto.DataType.Name(dt).lower()
    inits.append(numpy_helper.from_array(arr, name + "_raw"))
    vals = arr.view(np.uint16).tolist() if dt == TensorProto.FLOAT16 else arr.tolist()
    inits.append(helper.make_tensor(name + "_typed", dt, arr.shape, vals))
inits.append(helper.make_tensor("bf16", TensorProto.BFLOAT16, [2], [0x3f80, 0xc000]))
inits.append(helper.make_tensor("str", TensorProto.STRING, [2], [b"a", b""]))
inits.append(helper.make_tensor("scalar", TensorProto.FLOAT, [], [3.0]))
inits.append(helper.make_tensor("empty", TensorProto.FLOAT, [0, 3], []))
g = helper.make_graph([helper.make_node("Identity", ["float_raw"], ["Y"])], "dtypes", [],
                      [vi("Y", shape=[2])], inits)
models["all_dtypes.onnx"] = model(g)

# 12. a small CNN block as exporters write it
rng = np.random.default_rng(0)
g = helper.make_graph(
    [helper.make_node("Conv", ["X", "cw", "cb"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                      name="/backbone/Conv"),
     helper.make_node("BatchNormalization", ["c", "s", "b", "mu", "var"], ["bn"], epsilon=1e-5),
     helper.make_node("Relu", ["bn"], ["r"]),
     helper.make_node("GlobalAveragePool", ["r"], ["p"]),
     helper.make_node("Flatten", ["p"], ["f"]),
     helper.make_node("Gemm", ["f", "gw", "gb"], ["Y"], transB=1)],
    "cnn", [vi("X", shape=["N", 2, 4, 4])], [vi("Y", shape=["N", 3])],
    [numpy_helper.from_array(rng.standard_normal((4, 2, 3, 3)).astype(np.float32), "cw"),
     numpy_helper.from_array(np.zeros(4, np.float32), "cb"),
     numpy_helper.from_array(np.ones(4, np.float32), "s"),
     numpy_helper.from_array(np.zeros(4, np.float32), "b"),
     numpy_helper.from_array(np.zeros(4, np.float32), "mu"),
     numpy_helper.from_array(np.ones(4, np.float32), "var"),
     numpy_helper.from_array(rng.standard_normal((3, 4)).astype(np.float32), "gw"),
     numpy_helper.from_array(np.zeros(3, np.float32), "gb")])
models["cnn_block.onnx"] = model(g)

# 13. quantization and Scan
g = helper.make_graph(
    [helper.make_node("QuantizeLinear", ["X", "sc", "zp"], ["q"]),
     helper.make_node("DequantizeLinear", ["q", "sc", "zp"], ["Y"])],
    "quant", [vi("X")], [vi("Y")],
    [numpy_helper.from_array(np.array(0.1, np.float32), "sc"),
     numpy_helper.from_array(np.array(3, np.uint8), "zp")])
models["quantize.onnx"] = model(g)
scan_body = helper.make_graph([helper.make_node("Add", ["acc", "x"], ["acc_out"]),
                               helper.make_node("Identity", ["acc_out"], ["y"])],
                              "scan_body", [vi("acc", shape=[3]), vi("x", shape=[3])],
                              [vi("acc_out", shape=[3]), vi("y", shape=[3])])
g = helper.make_graph([helper.make_node("Scan", ["init", "X"], ["final", "ys"], body=scan_body,
                                        num_scan_inputs=1)],
                      "scan", [vi("init", shape=[3]), vi("X", shape=[5, 3])],
                      [vi("final", shape=[3]), vi("ys", shape=[5, 3])])
models["scan.onnx"] = model(g)

for name, m in models.items():
    save("model", name, m)

# --- hand-made malformed models -------------------------------------------
chain = models["chain.onnx"].SerializeToString()
save("model", "bad_empty.onnx", b"")
save("model", "bad_lfs_pointer.onnx",
     b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"ab" * 32 + b"\nsize 1234\n")
save("model", "bad_truncated.onnx", chain[: len(chain) // 2])
save("model", "bad_varint_11_bytes.onnx", b"\x08" + b"\x80" * 10 + b"\x00" + chain[2:])
save("model", "bad_graph_varint.onnx", b"\x08\x08\x38\x01")
save("model", "bad_two_graphs.onnx", chain + b"\x3a\x00")
save("model", "bad_group_wire_type.onnx", chain + b"\x4b\x4c")


def nested(levels):
    """Graphs nested through If attributes, `levels` deep."""
    g = helper.make_graph([], "leaf", [], [])
    for _ in range(levels):
        g = helper.make_graph([helper.make_node("If", ["c"], ["y"], then_branch=g)], "lvl", [], [])
    return model(g)


save("model", "deep_64.onnx", nested(64))
save("model", "bad_deep_70.onnx", nested(70))
# a sparse initializer without values
sp_novals = onnx.SparseTensorProto()
sp_novals.indices.CopyFrom(numpy_helper.from_array(np.array([0], np.int64), "i"))
sp_novals.dims.append(3)
g = helper.make_graph([helper.make_node("Relu", ["X"], ["Y"])], "sp", [vi("X")], [vi("Y")],
                      sparse_initializer=[sp_novals])
save("model", "sparse_without_values.onnx", model(g))

# --- TensorProto files ------------------------------------------------------
pbs = {}
for dt, arr in [(TensorProto.FLOAT, np.arange(6, dtype=np.float32).reshape(2, 3)),
                (TensorProto.DOUBLE, np.array([[0.5], [-1e300]])),
                (TensorProto.FLOAT16, np.array([1, 65504, -0.0], np.float16)),
                (TensorProto.INT8, np.array([-1, 1], np.int8)),
                (TensorProto.INT16, np.array([-300], np.int16)),
                (TensorProto.INT32, np.array([[-7]], np.int32)),
                (TensorProto.INT64, np.array([2**40, -2**40], np.int64)),
                (TensorProto.UINT8, np.array([255], np.uint8)),
                (TensorProto.UINT16, np.array([65535], np.uint16)),
                (TensorProto.UINT32, np.array([4294967295], np.uint32)),
                (TensorProto.UINT64, np.array([2**64 - 1], np.uint64)),
                (TensorProto.BOOL, np.array([True, False, True])),
                (TensorProto.COMPLEX64, np.array([1 + 1j, -2j], np.complex64)),
                (TensorProto.COMPLEX128, np.array([0.5 - 0.25j]))]:
    name = TensorProto.DataType.Name(dt).lower()
    if dt not in (TensorProto.INT16, TensorProto.UINT16, TensorProto.UINT32):
        pbs[f"{name}_raw.pb"] = numpy_helper.from_array(arr, "x")
    vals = arr.view(np.uint16).ravel().tolist() if dt == TensorProto.FLOAT16 else arr.ravel().tolist()
    if dt in (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT8, TensorProto.INT64,
              TensorProto.UINT64, TensorProto.BOOL, TensorProto.COMPLEX128, TensorProto.UINT32):
        pbs[f"{name}_typed.pb"] = helper.make_tensor("x", dt, arr.shape, vals)
pbs["bfloat16_typed.pb"] = helper.make_tensor("x", TensorProto.BFLOAT16, [2], [0x3f80, 0x7fc0])
pbs["string.pb"] = helper.make_tensor("s", TensorProto.STRING, [3], [b"a", b"", b"\xff\x00"])
pbs["scalar.pb"] = numpy_helper.from_array(np.array(2.5, np.float32), "scalar")
pbs["empty_dims.pb"] = numpy_helper.from_array(np.zeros((2, 0, 3), np.float32), "empty")
for name, t in pbs.items():
    save("pb", name, t)
good = pbs["float_raw.pb"].SerializeToString()
save("pb", "bad_truncated.pb", good[:-5])
save("pb", "bad_negative_dim.pb", b"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x10\x01\x4a\x00")
save("pb", "bad_wrong_typed_field.pb", b"\x08\x01\x10\x01\x38\x05")  # float in int64_data
save("pb", "bad_raw_short.pb", b"\x08\x02\x10\x01\x4a\x04\x00\x00\x80\x3f")
save("pb", "bad_segment.pb", b"\x08\x01\x10\x01\x1a\x04\x08\x00\x10\x01\x4a\x04\x00\x00\x00\x00")
ext = numpy_helper.from_array(np.ones(2, np.float32), "x")
ext.ClearField("raw_data")
ext.data_location = TensorProto.EXTERNAL
e = ext.external_data.add()
e.key, e.value = "location", "x.bin"
save("pb", "bad_external.pb", ext)

# --- wire: raw protobuf shapes ------------------------------------------------
save("wire", "model_chain.onnx", chain)
save("wire", "model_attributes.onnx", models["attributes.onnx"])
save("wire", "model_function.onnx", models["function.onnx"])
save("wire", "pb_float_typed.pb", pbs["float_typed.pb"])
save("wire", "pb_int64_typed.pb", pbs["int64_typed.pb"])
save("wire", "pb_string.pb", pbs["string.pb"])
save("wire", "varint_max_10_bytes.bin", b"\x08" + b"\xff" * 9 + b"\x01")
save("wire", "varint_11_bytes.bin", b"\x08" + b"\x80" * 10 + b"\x00")
save("wire", "varint_10th_byte_2.bin", b"\x08" + b"\xff" * 9 + b"\x02")
save("wire", "every_wire_type.bin",
     b"\x08\x96\x01" + b"\x11" + struct.pack("<Q", 0x0102030405060708) + b"\x1a\x03abc" +
     b"\x25" + struct.pack("<I", 0xdeadbeef) + b"\xf8\xff\xff\xff\x0f\x01")
save("wire", "groups_and_6_7.bin", b"\x0b\x0c\x0e\x0f")
save("wire", "field_zero.bin", b"\x00\x01\x02\x00")
save("wire", "len_past_end.bin", b"\x0a\x05abc")
save("wire", "packed_mixed.bin",
     b"\x0a\x0e\x01\xac\x02" + b"\xff" * 9 + b"\x01\x00" + b"\x12\x0c" + struct.pack("<3I", 1, 2, 3) +
     b"\x1a\x10" + struct.pack("<2Q", 5, 6) + b"\x22\x06" + b"\x00" * 6)
nest = b"\x08\x01"
for _ in range(20):
    nest = b"\x12" + bytes([len(nest)]) + nest if len(nest) < 128 else nest
save("wire", "nested_messages.bin", nest)

# --- lint: the models above, models for the rules, real exports -------------
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for name, m in models.items():
    save("lint", name, m)
save("lint", "deep_64.onnx", nested(64))
save("lint", "sparse_without_values.onnx", model(g))


def rule_model(name, nodes, inputs, outputs, inits=(), opset=13):
    save("lint", name, model(helper.make_graph(nodes, name, inputs, outputs, list(inits)), opset))


f32 = lambda a: numpy_helper.from_array(np.array(a, np.float32))  # noqa: E731
i64 = lambda a, n: numpy_helper.from_array(np.array(a, np.int64), n)  # noqa: E731
X4 = vi("X", shape=["N", 3, 8, 8])
rule_model("rule_dropout_training.onnx",
           [helper.make_node("Dropout", ["X", "ratio", "train"], ["Y", "mask"], name="/drop/Dropout")],
           [vi("X")], [vi("Y"), vi("mask", TensorProto.BOOL)],
           [numpy_helper.from_array(np.array(0.5, np.float32), "ratio"),
            numpy_helper.from_array(np.array(True), "train")])
rule_model("rule_bn_training.onnx",
           [helper.make_node("BatchNormalization", ["X", "s", "b", "mu", "var"], ["Y", "rm", "rv"],
                             training_mode=1, name="/bn/BatchNormalization")],
           [X4], [vi("Y", shape=["N", 3, 8, 8]), vi("rm", shape=[3]), vi("rv", shape=[3])],
           [numpy_helper.from_array(np.ones(3, np.float32), n) for n in ("s", "b", "mu", "var")], 15)
rule_model("rule_random.onnx",
           [helper.make_node("RandomNormalLike", ["X"], ["r"]),
            helper.make_node("RandomUniform", [], ["u"], shape=[2, 3]),
            helper.make_node("Bernoulli", ["X"], ["bb"]),
            helper.make_node("Add", ["r", "u"], ["Y"])],
           [vi("X")], [vi("Y")], opset=15)
rule_model("rule_shapes.onnx",
           [helper.make_node("Shape", ["X"], ["s"]),
            helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
            helper.make_node("Reshape", ["X", "shape"], ["r"]),
            helper.make_node("Expand", ["r", "eshape"], ["Y"]),
            helper.make_node("ConstantOfShape", ["s"], ["c"])],
           [X4], [vi("Y", shape=[2, 192])],
           [i64(0, "zero"), i64([2, -1], "shape"), i64([2, 192], "eshape")])
rule_model("rule_opsem.onnx",
           [helper.make_node("TopK", ["X", "k"], ["v", "i"], sorted=0),
            helper.make_node("ArgMax", ["X"], ["am"], select_last_index=1),
            helper.make_node("Resize", ["X", "", "scales"], ["rs"], mode="linear",
                             coordinate_transformation_mode="align_corners"),
            helper.make_node("Pad", ["X", "pads"], ["pd"], mode="reflect"),
            helper.make_node("Div", ["am", "two"], ["dv"]),
            helper.make_node("Mod", ["am", "two"], ["md"], fmod=0),
            helper.make_node("Round", ["X"], ["rd"]),
            helper.make_node("Cast", ["X"], ["ci"], to=TensorProto.INT32),
            helper.make_node("Cast", ["ci"], ["cf"], to=TensorProto.FLOAT16),
            helper.make_node("IsNaN", ["X"], ["nan"]),
            helper.make_node("GridSample", ["X", "grid"], ["gs"], align_corners=1),
            helper.make_node("Upsample", ["X", "scales"], ["up"], mode="nearest"),
            helper.make_node("Add", ["v", "v"], ["Y"])],
           [X4], [vi("Y", shape=["N", 3, 8, 1])],
           [i64([1], "k"), f32([1, 1, 2, 2]), i64([0, 0, 1, 1, 0, 0, 1, 1], "pads"),
            i64(2, "two"), numpy_helper.from_array(np.zeros((1, 8, 8, 2), np.float32), "grid")],
           16)
save("lint", "rule_opset7.onnx", model(helper.make_graph(
    [helper.make_node("Upsample", ["X"], ["Y"], scales=[1.0, 1.0, 2.0, 2.0])], "old",
    [X4], [vi("Y", shape=["N", 3, 16, 16])]), 7))
for ex in ("healthy", "training"):
    with open(os.path.join(ROOT, "examples", ex, "model.onnx"), "rb") as f:
        save("lint", f"example_{ex}.onnx", f.read(), 65536)
if ZOO:
    for b in sorted(os.listdir(ZOO)):
        p = os.path.join(ZOO, b, "model.onnx")
        if os.path.isfile(p) and os.path.getsize(p) < 65536:
            with open(p, "rb") as f:
                save("lint", f"zoo_{b}.onnx", f.read(), 65536)

# the fixed model of fuzz_manifest, as C initializer bytes
with open(os.path.join(ROOT, "examples", "training", "model.onnx"), "rb") as f:
    mb = f.read()
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "manifest_model.inc"), "w") as f:
    f.write("/* examples/training/model.onnx, written by fuzz/gen_corpus.py */\n")
    for i in range(0, len(mb), 16):
        f.write(" ".join(f"0x{b:02x}," for b in mb[i:i + 16]) + "\n")

# --- extdata: external-data entries against fuzz_extdata's folder ----------
# weights.bin (4096 bytes), sub/w2.bin (64), empty.bin (0), link.bin (a
# symlink), adir/ (a folder), ../outside.bin


def ext_tensor(name, dt, dims, entries):
    t = onnx.TensorProto()
    t.name, t.data_type = name, dt
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    for k, v in entries:
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


def ext_model(name, tensors):
    g = helper.make_graph([helper.make_node("Identity", [tensors[0].name], ["Y"])], "ext", [],
                          [vi("Y", shape=None)], tensors)
    save("extdata", name, model(g))


L = "location"
ext_model("ok_whole_file.onnx", [ext_tensor("w", TensorProto.UINT8, [4096], [(L, "weights.bin")])])
ext_model("ok_offset_length.onnx", [ext_tensor("w", TensorProto.FLOAT, [4, 4],
                                               [(L, "weights.bin"), ("offset", "1024"), ("length", "64")])])
ext_model("ok_sub_and_dot.onnx", [ext_tensor("a", TensorProto.INT64, [8], [(L, "./sub/w2.bin")]),
                                  ext_tensor("b", TensorProto.INT16, [2], [(L, "sub//w2.bin"), ("offset", "60")]),
                                  ext_tensor("c", TensorProto.FLOAT16, [3], [(L, "weights.bin"), ("offset", "4090")])])
ext_model("ok_empty.onnx", [ext_tensor("e", TensorProto.FLOAT, [0, 3], [(L, "empty.bin")])])
ext_model("ok_checksum_and_unknown_key.onnx",
          [ext_tensor("w", TensorProto.DOUBLE, [2], [(L, "weights.bin"), ("checksum", "0" * 40),
                                                      ("basepath", "x"), ("length", "16")])])
ext_model("ok_same_file_twice.onnx",
          [ext_tensor(f"w{i}", TensorProto.INT32, [4], [(L, "weights.bin"), ("offset", str(16 * i))])
           for i in range(6)])
for name, entries, dt, dims in [
        ("bad_symlink", [(L, "link.bin")], TensorProto.UINT8, [16]),
        ("bad_folder", [(L, "adir")], TensorProto.UINT8, [1]),
        ("bad_dotdot", [(L, "../outside.bin")], TensorProto.UINT8, [16]),
        ("bad_dotdot_inner", [(L, "sub/../weights.bin")], TensorProto.UINT8, [16]),
        ("bad_absolute", [(L, "/etc/passwd")], TensorProto.UINT8, [16]),
        ("bad_backslash", [(L, "sub\\w2.bin")], TensorProto.UINT8, [16]),
        ("bad_ort_marker", [(L, "*/_ORT_MEM_ADDR_/*")], TensorProto.UINT8, [16]),
        ("bad_empty_location", [(L, "")], TensorProto.UINT8, [16]),
        ("bad_no_location", [("offset", "0")], TensorProto.UINT8, [16]),
        ("bad_missing_file", [(L, "nope.bin")], TensorProto.UINT8, [16]),
        ("bad_offset_past_end", [(L, "weights.bin"), ("offset", "5000")], TensorProto.UINT8, [1]),
        ("bad_offset_huge", [(L, "weights.bin"), ("offset", "18446744073709551615")], TensorProto.UINT8, [1]),
        ("bad_offset_negative", [(L, "weights.bin"), ("offset", "-1")], TensorProto.UINT8, [1]),
        ("bad_offset_text", [(L, "weights.bin"), ("offset", "12abc")], TensorProto.UINT8, [1]),
        ("bad_length_past_end", [(L, "weights.bin"), ("offset", "4000"), ("length", "200")], TensorProto.UINT8, [200]),
        ("bad_length_mismatch", [(L, "weights.bin"), ("length", "10")], TensorProto.FLOAT, [4]),
        ("bad_length_huge", [(L, "weights.bin"), ("length", "9223372036854775807")], TensorProto.UINT8, [4]),
        ("bad_dims_too_big", [(L, "weights.bin")], TensorProto.DOUBLE, [1 << 40]),
        ("bad_string_external", [(L, "weights.bin")], TensorProto.STRING, [2]),
        ("bad_dup_location", [(L, "weights.bin"), (L, "sub/w2.bin")], TensorProto.UINT8, [8]),
        ("bad_nul_in_location", [(L, "weights.bin\x00x")], TensorProto.UINT8, [8])]:
    try:
        ext_model(name + ".onnx", [ext_tensor("w", dt, dims, entries)])
    except ValueError:
        pass
# external data in a Constant's tensor attribute and in a sparse initializer
ct = ext_tensor("cv", TensorProto.FLOAT, [4], [(L, "weights.bin"), ("offset", "64")])
g = helper.make_graph([helper.make_node("Constant", [], ["Y"], value=ct)], "c", [], [vi("Y", shape=[4])])
save("extdata", "ok_constant_attr.onnx", model(g))
spx = onnx.SparseTensorProto()
spx.values.CopyFrom(ext_tensor("S", TensorProto.FLOAT, [2], [(L, "weights.bin"), ("offset", "8")]))
spx.indices.CopyFrom(numpy_helper.from_array(np.array([0, 2], np.int64), "si"))
spx.dims.append(4)
g = helper.make_graph([helper.make_node("Identity", ["S"], ["Y"])], "s", [], [vi("Y", shape=[4])],
                      sparse_initializer=[spx])
save("extdata", "ok_sparse_values.onnx", model(g))
save("extdata", "model_external.onnx", models["external.onnx"])

# --- testdata: folders packed as pieces "\xffONP"-separated ------------------
# slot bytes (fuzz_testdata.c): 0 model.onnx, 1 set_0/input_0, 2 set_0/input_1,
# 3 set_0/output_0, 4 set_1/input_0, 5 set_1/output_0, 6 set_7/input_0,
# 7 set_0/input_3, 8 set_0/output_1, 9 set_x/input_0, 10 set_01/input_00,
# 11 a file named test_data_set_2
SEP = b"\xffONP"


def pack(pieces):
    return SEP.join(bytes([slot]) + data for slot, data in pieces)


def rd(path):
    with open(path, "rb") as f:
        return f.read()


for ex in ("healthy", "training"):
    d = os.path.join(ROOT, "examples", ex)
    pieces = [(0, rd(os.path.join(d, "model.onnx")))]
    for k, slot_in, slot_out in ((0, 1, 3), (1, 4, 5)):
        s = os.path.join(d, f"test_data_set_{k}")
        pieces += [(slot_in, rd(os.path.join(s, "input_0.pb"))), (slot_out, rd(os.path.join(s, "output_0.pb")))]
    save("testdata", f"example_{ex}.bin", pack(pieces), 65536)
TD = "/usr/share/libonnx-testdata/data/node"
for t in ("test_add", "test_cast_FLOAT_to_FLOAT16", "test_reshape_reordered_all_dims",
          "test_strnormalizer_export_monday_casesensintive_upper", "test_topk", "test_gather_0"):
    d = os.path.join(TD, t)
    if not os.path.isdir(d):
        continue
    s = os.path.join(d, "test_data_set_0")
    pieces = [(0, rd(os.path.join(d, "model.onnx")))]
    for k, slot in ((0, 1), (1, 2)):
        if os.path.exists(os.path.join(s, f"input_{k}.pb")):
            pieces.append((slot, rd(os.path.join(s, f"input_{k}.pb"))))
    for k, slot in ((0, 3), (1, 8)):
        if os.path.exists(os.path.join(s, f"output_{k}.pb")):
            pieces.append((slot, rd(os.path.join(s, f"output_{k}.pb"))))
    save("testdata", f"onnx_{t}.bin", pack(pieces), 65536)
fl = pbs["float_raw.pb"].SerializeToString()
save("testdata", "gap_input_3.bin", pack([(1, fl), (7, fl), (3, fl)]))
save("testdata", "sets_0_1_7_x_01.bin", pack([(1, fl), (4, fl), (6, fl), (9, fl), (10, fl), (5, good)]))
save("testdata", "file_named_like_a_set.bin", pack([(11, fl), (1, fl)]))
save("testdata", "bad_tensors.bin", pack([(1, b""), (2, fl[:-3]), (3, b"\x08\x01\x10\x01\x38\x05"),
                                          (4, b"\x93NUMPY"), (0, b"\x08\x08\x38\x01")]))
save("testdata", "empty.bin", b"")
save("testdata", "model_only.bin", pack([(0, chain)]))

# --- manifest: parity.json --------------------------------------------------
import json  # noqa: E402

man = {}
for ex in ("healthy", "training"):
    raw = rd(os.path.join(ROOT, "examples", ex, "parity.json"))
    save("manifest", f"example_{ex}.json", raw)
    man[ex] = json.loads(raw)
if ZOO:
    for b in sorted(os.listdir(ZOO)):
        p = os.path.join(ZOO, b, "parity.json")
        if os.path.isfile(p) and os.path.getsize(p) < 20000:
            save("manifest", f"zoo_{b}.json", rd(p))
J = lambda o: json.dumps(o).encode()  # noqa: E731
t = man["training"]
save("manifest", "every_key.json", J({
    "schema": "onnxparity.capture/1",
    "training": {"any": True, "modules_in_training": ["drop", "bn", "", 7], "export_mode": "TRAINING"},
    "module_map": {"drop": "/drop/Dropout", "bn": ["/bn/BatchNormalization"], "x": None},
    "warnings": [{"category": "TracerWarning", "category_module": "torch.jit",
                  "message": "Converting a tensor to a Python boolean", "file": "m.py", "line": 12,
                  "code": "if x.sum() > 0:"},
                 {"category": "UserWarning", "message": "ONNX export mode is set to TrainingMode"},
                 {"category": "UserWarning", "message": "random", "line": -5},
                 {"category": None, "message": 3, "file": ["x"], "line": 1e300}, "text", 5],
    "shape_risks": [{"name": "x", "dim": 0, "sizes": [1, 2, 4]}, {"name": "x", "dim": 99, "sizes": []},
                    {"name": 1, "dim": -1, "sizes": "a"}],
    "eager_vs_trace": {"same_modules_called": False, "note": "took the other branch"},
    "deterministic": False,
    "export_args": {"traced_fixture": 0},
    "fixtures": [{"inputs": [{"name": "x", "shape": [1, 3]}]}, {"inputs": [{"name": "x", "shape": [4, 3]}]},
                 {"inputs": [{"name": "x", "shape": [-1, 1e20]}]}, {"inputs": None}, 3]}))
save("manifest", "types_swapped.json", J({k: (7 if isinstance(v, dict) else {"a": v}) for k, v in t.items()}))
# the capture's record of a forward that writes its inputs or its state (rules_state.c)
save("manifest", "state.json", J({
    "state": {"changed_by_forward": [{"name": "calls", "kind": "buffer", "how": "values", "fixtures": [0, 1]},
                                     {"name": "cache", "kind": "attribute", "how": "added", "fixtures": [1, "x"]},
                                     {"name": 5, "kind": None}, {"kind": "parameter"}, "calls"],
              "inputs_written": [{"name": "x", "path": "args[0]", "fixtures": list(range(12))},
                                 {"name": "", "fixtures": None}, 7],
              "state_drift": True},
    "warnings": [{"message": "Removing mutation from node aten::add_ on block input: 'calls'. x"},
                 {"message": "Removing mutation from node  on block input: '"},
                 {"message": "Removing mutation from node " + "a" * 300 + " on block input: 'cache'"}],
    "deterministic": False, "determinism": {"verdict": "state-drift"}}))
save("manifest", "empty_object.json", b"{}")
save("manifest", "bad_array.json", b"[1, 2]")
save("manifest", "bad_truncated.json", rd(os.path.join(ROOT, "examples", "training", "parity.json"))[:300])
save("manifest", "bad_empty.json", b"")
save("manifest", "bad_nul.json", b'{"training": {"any": true}}\x00{')
save("manifest", "deep_nesting.json", b'{"warnings": ' + b"[" * 2000 + b"]" * 2000 + b"}")
save("manifest", "unicode.json", '{"warnings": [{"message": "\\ud800 \\u0000 é", "file": "\\u0000"}]}'.encode())

# --- criteria: gate criteria files -----------------------------------------
lint_ids = ["ONP101", "ONP102", "ONP201", "dropout-training"]
out = {"rtol": 1e-4, "atol": 1e-5, "top1_min": 1, "mismatch_frac_max": 0,
       "shapes": [[1, 10], [2, 10], [4, 10]], "max_abs": 2.4e-7, "needed_rtol": 0, "needed_atol": 0,
       "measured": {"max_abs": 1.2e-7}}
crit = {"schema": "onnxparity.criteria/1", "model_sha256": "ab" * 32, "margin": 2, "fixtures": 3,
        "lint_clean": lint_ids, "outputs": {"logits": out}}
save("criteria", "recorded.json", json.dumps(crit, indent="\t").encode())
save("criteria", "two_outputs_nulls.json", J(dict(crit, outputs={
    "a": dict(out, top1_min=None, max_abs=None, needed_rtol=None, needed_atol=None, shapes=[]),
    "b": dict(out, shapes=[[], [0], [1] * 32])})))
for name, patch in [("bad_schema", {"schema": "onnxparity.criteria/2"}),
                    ("bad_fixtures_fraction", {"fixtures": 2.5}),
                    ("bad_fixtures_negative", {"fixtures": -1}),
                    ("bad_margin_string", {"margin": "2"}),
                    ("bad_lint_unknown", {"lint_clean": ["ONP999"]}),
                    ("bad_lint_not_array", {"lint_clean": "ONP101"}),
                    ("bad_outputs_array", {"outputs": [out]}),
                    ("bad_output_not_object", {"outputs": {"y": 3}}),
                    ("bad_top1_over_1", {"outputs": {"y": dict(out, top1_min=1.5)}}),
                    ("bad_rtol_missing", {"outputs": {"y": {k: v for k, v in out.items() if k != "rtol"}}}),
                    ("bad_rank_33", {"outputs": {"y": dict(out, shapes=[[1] * 33])}}),
                    ("bad_65_shapes", {"outputs": {"y": dict(out, shapes=[[1]] * 65)}}),
                    ("bad_dim_negative", {"outputs": {"y": dict(out, shapes=[[2, -1]])}}),
                    ("bad_dim_huge", {"outputs": {"y": dict(out, shapes=[[1e300]])}}),
                    ("bad_long_name", {"outputs": {"n" * 300: out}})]:
    save("criteria", name + ".json", J(dict(crit, **patch)))
save("criteria", "bad_nan.json", J(crit).replace(b'"margin": 2', b'"margin": NaN'))
save("criteria", "bad_inf.json", J(crit).replace(b'"rtol": 0.0001', b'"rtol": 1e999'))
save("criteria", "bad_truncated.json", J(crit)[:120])
save("criteria", "bad_empty.json", b"")
save("criteria", "bad_not_object.json", b'"onnxparity.criteria/1"')
save("criteria", "dup_output_keys.json",
     J(crit).replace(b'"outputs": {', b'"outputs": {"logits": ' + J(out) + b", "))

# --- docs: the result documents diff and report read back (fuzz_docs) -------
# One small document of each kind, as the tool writes them, then the same
# documents with one member of the wrong type each (issue 36).
metrics = {"shape_ok": True, "dtype_ok": True, "rtol": 1e-4, "atol": 1e-5, "count": 10, "mismatches": 0,
           "mismatch_frac": 0, "max_abs": 2.98e-8, "max_rel": 4.55e-7, "mean_abs": 1e-8, "rms": 1.2e-8,
           "cosine": 1, "needed_rtol": 0, "needed_atol": 0, "nan_matched": 0, "nan_mismatch": 0,
           "inf_mismatch": 0, "worst": {"index": 2, "expected": 0.09, "actual": 0.09},
           "histogram": [0, 0, 0, 0, 4, 6, 0, 0, 0, 0, 0, 0]}
output = dict(name="logits", dtype="float32", shape=[1, 10], **metrics, **{"pass": True})
output["judgment"] = {"verdict": "within-tolerance", "pass": True, "vacuous": "no", "noise_source": "ort-perturbation",
                      "envelope": {"max_abs": 8.8e-7, "rms": 7e-7, "floor": 5e-7}, "beyond_envelope": False}
output["topk"] = {"k": 1, "rows": 1, "top1_agree": 1, "flipped": 0, "topk_agree": 1, "noise_driven_flips": 0,
                  "min_margin": 0.25}
env = {"onnxparity": "0.1.0", "ort_version": "1.29.0", "ort_library": "lib/libonnxruntime.so.1",
       "provider": "CPUExecutionProvider", "opt_level": "all", "intra_threads": 0, "inter_threads": 0,
       "model_sha256": "ab" * 32, "session_config": [], "opset": 13, "exporter": "legacy",
       "torch_version": "1.13.0", "upgraded_to_opset7": False}
cause = {"id": "training-mode", "confidence": "high", "node": "/bn/BatchNormalization", "evidence": ["lint ONP104"],
         "fix": "call model.eval()", "suggested_atol": None}
fd = {"node": "/bn/BatchNormalization", "op_type": "BatchNormalization", "output": "/bn/out", "module": "bn",
      "reference": "eager", "max_abs": 2.25, "envelope_max": 7e-6, "fixture": 0}
check = {"schema": "onnxparity.check/1", "verdict": "pass", "model": "m.onnx", "environment": env,
         "options": {"top_k": "auto", "strict_tol": False, "noise_estimate": True, "lint": True},
         "fixtures": [{"index": 0, "dir": "b/test_data_set_0", "status": "pass", "outputs": [output]},
                      {"index": 1, "dir": "b/test_data_set_1", "status": "error", "error": "crashed", "outputs": []}],
         "summary": {"fixtures": 2, "fixtures_failed": 1, "outputs_compared": 1, "outputs_failed": 0,
                     "topk": {"rows": 1, "top1_agree": 1, "flip_rate_upper": 0.95, "confidence": 0.95}},
         "causes": [cause], "first_divergent": fd, "latent": [{"rule": "ONP301"}],
         "lint": {"errors": 1, "warnings": 0, "infos": 0, "findings": [
             {"id": "ONP104", "name": "batchnorm-training", "severity": "error", "node": "n",
              "location": {"kind": "node"}, "message": "m"}]},
         "adequacy": {"verdict": "adequate", "samples": 7, "fixtures": 3, "shape_groups": 3, "near_boundary": 0,
                      "flags": [{"level": "info", "id": "few-samples", "message": "m"}]},
         "shard": {"index": 0, "count": 2, "fixtures_total": 4}}
bisect = {"schema": "onnxparity.bisect/1", "verdict": "diverges", "model": "m.onnx", "fixture": None,
          "fixtures": [0, 1], "reference": "eager", "instrumented_reproduces": True, "fallback": None,
          "summary": {"values_exposed": 2, "values_compared": 2, "values_failed": 1},
          "first_divergent": dict(fd, index=1, inputs_agree=True,
                                  inputs=[{"name": "x", "source": "eager", "max_abs": 0, "max_rel": 0, "pass": True}],
                                  local={"verdict": "local", "max_abs": 2.1, "max_rel": 1.5, "mismatches": 20},
                                  metrics=metrics),
          "curve": [{"value": "a", "node": "relu", "op_type": "Relu", "module": None, "max_abs": 0, "pass": True},
                    {"value": "/bn/out", "node": "/bn/BatchNormalization", "op_type": "BatchNormalization",
                     "module": "bn", "max_abs": "inf", "pass": False}]}
level = {"level": "all", "ran": True, "pass": False, "deterministic": True,
         "outputs": [{"name": "logits", "max_abs": 0.51, "pass": False}]}
sweep_part = {"levels": [level, dict(level, level="disable", deterministic=None, error="skipped", outputs=[])],
              "first_failing_level": None,
              "optimizer_search": {"searched": False, "culprit": None, "sessions": 0, "note": ""},
              "configurations": [{"index": 0, "provider": "CPUExecutionProvider", "available": True, "levels": [level]}]}
sweep = {"schema": "onnxparity.sweep/1", "verdict": "fail", "model": "m.onnx", "environment": env, "fixtures": 3,
         "sweep": sweep_part}
diagnose = {"schema": "onnxparity.diagnose/1", "verdict": "fail", "model": "m.onnx", "nondeterministic": False,
            "causes": [cause], "latent": [], "first_divergent": dict(fd, local="local"), "sweep": sweep_part,
            "probes": {"determinism": {"runs": 2, "deterministic": True}}, "environment": env}
gate = {"schema": "onnxparity.gate/1", "verdict": "fail", "model": "m.onnx", "criteria": "c.json",
        "environment": env, "environment_recorded": True, "env_drift_policy": "warn",
        "environment_drift": [{"field": "model_sha256", "kind": "note", "recorded": "a", "current": None,
                               "effect": "note"}],
        "causes": [cause], "first_divergent": None,
        "regressions": [{"fixture": "test_data_set_0", "output": "logits", "check": "max_abs", "value": 0.48,
                         "limit": 2.4e-7, "message": "m"}],
        "checks": [{"output": "logits", "check": "max_abs", "measured": 0.48, "limit": 2.4e-7, "bound": "max",
                    "pass": False},
                   {"output": None, "check": "fixtures", "measured": "nan", "limit": 3, "bound": "min", "pass": True}],
        "summary": {"fixtures": 3, "outputs": 1, "regressions": 1}}
for name, doc in (("check", check), ("bisect", bisect), ("sweep", sweep), ("diagnose", diagnose), ("gate", gate)):
    save("docs", name + ".json", J(doc))


def retyped(doc, path, value):
    """doc with the member at path (keys and indices) set to value."""
    doc = json.loads(J(doc))
    at = doc
    for k in path[:-1]:
        at = at[k]
    at[path[-1]] = value
    return doc


O0 = ["fixtures", 0, "outputs", 0]
for name, doc, path, value in [
        ("bad_max_abs_string", check, O0 + ["max_abs"], "x"),
        ("bad_max_abs_array", check, O0 + ["max_abs"], []),
        ("bad_max_abs_negative", check, O0 + ["max_abs"], -1),
        ("bad_pass_string", check, O0 + ["pass"], "yes"),
        ("bad_mismatch_frac", check, O0 + ["mismatch_frac"], 1.5),
        ("bad_envelope_negative", check, O0 + ["judgment", "envelope", "max_abs"], "-inf"),
        ("bad_topk_rows", check, O0 + ["topk", "rows"], 2.5),
        ("bad_shape_dim", check, O0 + ["shape", 1], "10"),
        ("bad_env_threads", check, ["environment", "intra_threads"], "0"),
        ("bad_session_config", check, ["environment", "session_config"], [1]),
        ("bad_curve_pass", bisect, ["curve", 1, "pass"], 0),
        ("bad_local_number", bisect, ["first_divergent", "local"], 3),
        ("bad_levels_object", sweep, ["sweep", "levels"], {"all": level}),
        ("bad_probes_list", diagnose, ["probes"], [1, 2]),
        ("bad_checks_measured", gate, ["checks", 0, "measured"], {"v": 1}),
        ("bad_summary_count", gate, ["summary", "regressions"], -1)]:
    save("docs", name + ".json", J(retyped(doc, path, value)))
out0 = dict(output)
del out0["pass"]
save("docs", "bad_pass_missing.json", J(retyped(check, O0, out0)))
save("docs", "bad_not_object.json", b'["onnxparity.check/1"]')
save("docs", "bad_truncated.json", J(check)[:200])
print("ok")
