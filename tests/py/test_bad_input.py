"""Bad input through the command line: every case gets the documented exit
code (2 usage / bad input, 3 I/O or format), exactly one line on stderr
naming the file (and the field where there is one), and no output file."""
import struct

import numpy as np
import pytest

from conftest import run


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(num, wt, payload=b"", value=None):
    tag = varint(num << 3 | wt)
    if wt == 0:
        return tag + varint(value)
    if wt == 2:
        return tag + varint(len(payload)) + payload
    raise ValueError


def tensor(dims, dtype, raw):
    return b"".join(field(1, 0, value=d) for d in dims) + field(2, 0, value=dtype) + field(9, 2, raw)


NPY_MAGIC = b"\x93NUMPY"

CASES = {
    # name: (file name, bytes, expected exit, words the message must hold)
    "pb_truncated": ("t.pb", tensor([4], 1, b"\0" * 16)[:-3], 3, ["t.pb", "protobuf"]),
    "pb_raw_short": ("t.pb", tensor([2, 3], 1, b"\0" * 20), 3, ["TensorProto.raw_data", "20 bytes"]),
    "pb_raw_long_scalar": ("t.pb", tensor([], 1, b"\0" * 8), 3, ["TensorProto.raw_data"]),
    "pb_negative_dim": ("t.pb", field(1, 0, value=(1 << 64) - 2) + field(2, 0, value=1), 3, ["negative"]),
    "pb_dims_overflow": ("t.pb", b"".join(field(1, 0, value=1 << 40) for _ in range(3)) + field(2, 0, value=1),
                         3, ["overflow"]),
    "pb_varint_11_bytes": ("t.pb", b"\x08" + b"\xff" * 10 + b"\x01", 3, ["varint"]),
    "pb_wire_type_mismatch": ("t.pb", field(2, 2, b"xx"), 3, ["TensorProto.data_type", "wire type"]),
    "pb_unknown_dtype": ("t.pb", tensor([1], 99, b"\0"), 3, ["data type 99"]),
    "npy_bad_magic": ("t.npy", b"\x93NUMPX\x01\x00" + b"\0" * 40, 3, ["t.npy"]),
    "npy_huge_header": ("t.npy", NPY_MAGIC + b"\x02\x00" + struct.pack("<I", 0xFFFFFFF0), 3, ["t.npy"]),
    "npy_object": ("t.npy", None, 2, ["object"]),
    "npy_truncated_data": ("t.npy", None, 3, ["npy.data"]),
    "model_empty": ("m.onnx", b"", 3, ["m.onnx", "empty"]),
    "model_lfs_pointer": ("m.onnx", b"version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 123\n", 3,
                          ["Git LFS"]),
    "model_garbage": ("m.onnx", b"\xff\xff\xff\xff", 3, ["m.onnx"]),
    "model_deep_nesting": ("m.onnx", None, 3, ["deeper"]),
}


def npy_bytes(header, data):
    h = header.encode()
    pad = (64 - (10 + len(h) + 1) % 64) % 64
    h = h + b" " * pad + b"\n"
    return NPY_MAGIC + b"\x01\x00" + struct.pack("<H", len(h)) + h + data


def deep_model(depth):
    """A ModelProto whose graph nests `depth` If-subgraphs deep."""
    g = field(2, 2, b"g")
    for _ in range(depth):
        attr = field(1, 2, b"then_branch") + field(20, 0, value=5) + field(6, 2, g)
        node = field(4, 2, b"If") + field(5, 2, attr)
        g = field(1, 2, node)
    return field(1, 0, value=8) + field(7, 2, g)


def materialize(name, tmp_path):
    fname, data, code, words = CASES[name]
    if name == "npy_object":
        data = npy_bytes("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", b"\0" * 16)
    elif name == "npy_truncated_data":
        data = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (10,), }", b"\0" * 12)
    elif name == "model_deep_nesting":
        data = deep_model(200)
    p = tmp_path / fname
    p.write_bytes(data)
    return p, code, words


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input(onnxparity, tmp_path, name):
    p, code, words = materialize(name, tmp_path)
    if p.suffix == ".onnx":
        r = run([onnxparity, "inspect", p])
    else:
        out = tmp_path / "out.npy"
        r = run([onnxparity, "convert", p, out])
        assert not out.exists(), "no output file on failure"
        assert not list(tmp_path.glob("out.npy*")), "no temporary file left behind"
    assert r.returncode == code, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert str(p) in lines[0] or p.name in lines[0]
    for w in words:
        assert w in lines[0], (w, lines[0])
    assert r.stdout == ""


def test_compare_exit_codes(onnxparity, tmp_path):
    a, b = tmp_path / "a.npy", tmp_path / "b.npy"
    np.save(a, np.arange(6, dtype=np.float32))
    np.save(b, np.arange(6, dtype=np.float32))
    assert run([onnxparity, "compare", a, b]).returncode == 0
    np.save(b, np.arange(6, dtype=np.float32) + 1)
    assert run([onnxparity, "compare", a, b]).returncode == 1
    assert run([onnxparity, "compare", a, tmp_path / "missing.npy"]).returncode == 3
    assert run([onnxparity, "compare", a]).returncode == 2
    assert run([onnxparity, "compare", a, b, "--rtol", "x"]).returncode == 2
    assert run([onnxparity, "nosuchcommand"]).returncode == 2


def test_unsafe_external_data_is_refused(onnxparity, tmp_path):
    """An initializer whose external location leaves the model's folder."""
    secret = tmp_path / "secret.bin"
    secret.write_bytes(b"\0" * 16)
    d = tmp_path / "model"
    d.mkdir()
    for loc in ("../secret.bin", "a/../../secret.bin", str(secret)):
        ext = b"".join(field(13, 2, field(1, 2, k.encode()) + field(2, 2, v.encode()))
                       for k, v in (("location", loc), ("offset", "0"), ("length", "16")))
        t = field(1, 0, value=4) + field(2, 0, value=1) + field(8, 2, b"w") + ext + field(14, 0, value=1)
        g = field(5, 2, t) + field(2, 2, b"g")
        (d / "m.onnx").write_bytes(field(1, 0, value=8) + field(7, 2, g))
        r = run([onnxparity, "inspect", d / "m.onnx"])
        assert r.returncode == 2, (loc, r.stderr)
        assert "location" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    (d / "link.bin").symlink_to(secret)
    ext = b"".join(field(13, 2, field(1, 2, k.encode()) + field(2, 2, v.encode()))
                   for k, v in (("location", "link.bin"), ("length", "16")))
    t = field(1, 0, value=4) + field(2, 0, value=1) + field(8, 2, b"w") + ext + field(14, 0, value=1)
    (d / "m.onnx").write_bytes(field(1, 0, value=8) + field(7, 2, field(5, 2, t)))
    r = run([onnxparity, "inspect", d / "m.onnx"])
    assert r.returncode == 2 and "symbolic link" in r.stderr
