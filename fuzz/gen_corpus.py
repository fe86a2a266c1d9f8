#!/usr/bin/python3
"""Generate the seed corpora for fuzz/corpus/{model,pb,wire} (run with
/usr/bin/python3, onnx 1.12).  Everything is made here: small models with
onnx.helper, tensors with numpy_helper, and hand-made malformed bytes."""
import os
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1]
for d in ("model", "pb", "wire"):
    os.makedirs(os.path.join(OUT, d), exist_ok=True)


def save(kind, name, data):
    if not isinstance(data, (bytes, bytearray)):
        data = data.SerializeToString()
    assert len(data) < 20000, (name, len(data))
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
print("ok")
