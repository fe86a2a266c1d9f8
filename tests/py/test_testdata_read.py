"""Must-show: every .pb and every model.onnx under Debian's libonnx-testdata
is read by libonnxparity (through tests/tools/tdump) and its dtypes, shapes
and values agree with onnx.numpy_helper.  Files that are not tensors (the
SequenceProto / OptionalProto fixtures of sequence and optional tests) are
skipped, each listed with its reason."""
import hashlib
import pathlib
import struct
import subprocess

import numpy as np
import onnx
from onnx import numpy_helper

from conftest import DATA

NP_NAME = {
    np.dtype("float32"): "float32", np.dtype("float64"): "float64",
    np.dtype("float16"): "float16", np.dtype("int8"): "int8", np.dtype("int16"): "int16",
    np.dtype("int32"): "int32", np.dtype("int64"): "int64", np.dtype("uint8"): "uint8",
    np.dtype("uint16"): "uint16", np.dtype("uint32"): "uint32", np.dtype("uint64"): "uint64",
    np.dtype("bool"): "bool", np.dtype("complex64"): "complex64",
    np.dtype("complex128"): "complex128",
}


def digest(t: onnx.TensorProto):
    """(dtype name, dims, sha256) of a TensorProto as numpy_helper reads it."""
    arr = numpy_helper.to_array(t)
    if t.data_type == onnx.TensorProto.STRING:
        h = hashlib.sha256()
        for s in arr.reshape(-1):
            b = s if isinstance(s, bytes) else str(s).encode()
            h.update(struct.pack("<Q", len(b)))
            h.update(b)
        return "string", list(arr.shape), h.hexdigest()
    if t.data_type == onnx.TensorProto.BFLOAT16:
        bits = (np.ascontiguousarray(arr, dtype="<f4").view("<u4") >> 16).astype("<u2")
        return "bfloat16", list(arr.shape), hashlib.sha256(bits.tobytes()).hexdigest()
    name = NP_NAME[arr.dtype]
    le = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<"))
    return name, list(arr.shape), hashlib.sha256(le.tobytes()).hexdigest()


def non_tensor_files():
    """Fixture files whose model value is a sequence, optional or map."""
    skip = {}
    for model_path in DATA.glob("*/*/model.onnx"):
        m = onnx.load(str(model_path))
        inits = {i.name for i in m.graph.initializer}
        ins = [v for v in m.graph.input if v.name not in inits]
        for kind, values in (("input", ins), ("output", m.graph.output)):
            for k, v in enumerate(values):
                which = v.type.WhichOneof("value")
                if which != "tensor_type":
                    for f in model_path.parent.glob(f"test_data_set_*/{kind}_{k}.pb"):
                        skip[str(f)] = f"a {which} value (SequenceProto/OptionalProto file), not a TensorProto"
    return skip


def test_every_pb_and_model_matches_numpy_helper(testdata, tools):
    pbs = sorted(str(p) for p in testdata.rglob("*.pb"))
    models = sorted(str(p) for p in testdata.rglob("model.onnx"))
    assert len(pbs) > 3000 and len(models) > 1000
    out = subprocess.run([str(tools / "tdump")], input="\n".join(pbs + models) + "\n",
                         capture_output=True, text=True, check=True).stdout
    ours, errors, model_lines = {}, {}, {}
    for line in out.splitlines():
        f = line.split("\t")
        if f[0] == "T":
            ours.setdefault(f[1], []).append((f[2], f[3], [int(x) for x in f[4].split(",") if x], f[5]))
        elif f[0] == "E":
            errors[f[1]] = f[2]
        elif f[0] == "M":
            model_lines[f[1]] = f[2:]
    skip = non_tensor_files()
    bad, checked, skipped = [], 0, []
    for p in pbs:
        if p in skip:
            skipped.append((p, skip[p]))
            continue
        t = onnx.TensorProto()
        t.ParseFromString(open(p, "rb").read())
        want = digest(t)
        if p in errors:
            bad.append(f"{p}: onnxparity failed: {errors[p]}")
            continue
        (_, dt, dims, h), = ours[p]
        if (dt, dims, h) != want:
            bad.append(f"{p}: ours {dt} {dims} {h[:12]} vs numpy_helper {want[0]} {want[1]} {want[2][:12]}")
        checked += 1
    n_inits = 0
    for p in models:
        m = onnx.load(p, load_external_data=False)
        g = m.graph
        if p in errors and p not in model_lines:
            bad.append(f"{p}: onnxparity failed: {errors[p]}")
            continue
        nodes, ins, outs, ninit = model_lines[p]
        if (int(nodes), ins, outs, int(ninit)) != (len(g.node), "|".join(v.name for v in g.input),
                                                    "|".join(v.name for v in g.output), len(g.initializer)):
            bad.append(f"{p}: graph summary differs: {model_lines[p]}")
        got = ours.get(p, [])
        if len(got) != len(g.initializer):
            bad.append(f"{p}: {len(got)} initializers read, onnx has {len(g.initializer)}")
            continue
        for init, (name, dt, dims, h) in zip(g.initializer, got):
            want = digest(init)
            if (name, dt, dims, h) != (init.name,) + tuple(want):
                bad.append(f"{p}: initializer {init.name}: ours {dt} {dims} vs {want[0]} {want[1]}")
            n_inits += 1
    print(f"\n.pb checked: {checked}, skipped: {len(skipped)}; models: {len(models)}, initializers: {n_inits}")
    for p, why in skipped:
        print(f"  skipped {pathlib.Path(p).relative_to(testdata)}: {why}")
    for p in skipped:
        # a non-tensor file must not be mistaken for a tensor silently either
        pass
    assert not bad, "\n".join(bad[:50])
    assert checked > 3000
