#!/usr/bin/python3
"""make_cases.py — writes the hostile-input suite (issue 7) into a folder.

    /usr/bin/python3 tests/bad_inputs/make_cases.py OUTDIR

Every case gets its own folder OUTDIR/ID/ holding the files it needs, all
generated here (nothing large is committed; the zip bombs are built in a
few megabytes at most).  OUTDIR/cases.json is the table the pytest file
tests/py/test_bad_inputs.py drives, one test per entry:

    id       the case name (also its folder)
    argv     the command line; "onnxparity" stands for the binary
    exit     the documented exit code (docs/cli.md)
    stderr   a regex the one-line error must match (search, not full
             match): it names the file and the field / byte / member
    absent   paths that must not exist afterwards (outputs of the command,
             so a failed command leaves no partial file)
    junit_error  JUnit files the command must write even though it fails:
             a complete document holding one errored case that says why
             (issue 17: the CI upload step always gets a file)
    valid    for the cases that must succeed on hostile names: each entry
             {"path", "kind": html|xml|json} must parse and must not carry
             the hostile text raw (stdout is "-")
    needs_ort  the case runs ONNX Runtime (check); the test skips it when
             the library cannot be found
    known_bug  why the tool does not meet the case yet (code another team
             owns): an expected failure, which fails the test once fixed
    timeout  seconds before the case counts as a hang (default 60)

How to add a case: write a function below that builds the files in `d`
(its own folder) and returns case(...) — or a list of them — and add it to
CASES at the bottom.  Keep every file small; use the real examples only by
copying (examples/healthy).
"""
import hashlib
import json
import os
import pathlib
import shutil
import socket
import struct
import sys
import zipfile
import zlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
HEALTHY = ROOT / "examples" / "healthy"

# --- protobuf wire helpers (hand-rolled so the bytes can be anything) ---------


def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def fv(num, value):
    """A varint field."""
    return varint(num << 3) + varint(value)


def fl(num, payload):
    """A length-delimited field."""
    if isinstance(payload, str):
        payload = payload.encode()
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def tensor(dims, dtype, raw=None, name=None, extra=b""):
    """TensorProto: dims(1) data_type(2) name(8) raw_data(9)."""
    out = b"".join(fv(1, d) for d in dims) + fv(2, dtype)
    if name is not None:
        out += fl(8, name)
    if raw is not None:
        out += fl(9, raw)
    return out + extra


def ext_entry(key, value):
    return fl(13, fl(1, key) + fl(2, value))  # TensorProto.external_data: StringStringEntryProto


def ext_tensor(pairs, dims=(4,), dtype=1, name="w"):
    """An initializer with data_location = EXTERNAL (field 14 = 1)."""
    body = b"".join(fv(1, d) for d in dims) + fv(2, dtype) + fl(8, name)
    body += b"".join(ext_entry(k, v) for k, v in pairs) + fv(14, 1)
    return body


def model(graph_body, ir=8, opset=13):
    """ModelProto: ir_version(1) opset_import(8) graph(7)."""
    return fv(1, ir) + fl(8, fl(1, "") + fv(2, opset)) + fl(7, graph_body)


def value_info(name, elem=1, dims=(4,)):
    shape = b"".join(fl(1, fv(1, d)) for d in dims)
    ttype = fv(1, elem) + fl(2, shape)
    return fl(1, name) + fl(2, fl(1, ttype))


def graph_with_initializer(init_body):
    return fl(5, init_body) + fl(2, "g") + fl(12, value_info("w"))


# --- npy helpers ------------------------------------------------------------------

NPY_MAGIC = b"\x93NUMPY"


def npy(header, data, version=(1, 0)):
    h = header.encode("latin1")
    lenfmt = "<H" if version[0] == 1 else "<I"
    pre = 6 + 2 + struct.calcsize(lenfmt)
    pad = (64 - (pre + len(h) + 1) % 64) % 64
    h = h + b" " * pad + b"\n"
    return NPY_MAGIC + bytes(version) + struct.pack(lenfmt, len(h)) + h + data


def npy_f4(n=4):
    return npy("{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % n, b"\0" * (4 * n))


# --- the table --------------------------------------------------------------------


def case(cid, argv, code, regex, absent=(), valid=(), needs_ort=False, known_bug=None, timeout=None,
         unchanged=(), junit_error=()):
    """unchanged: files whose bytes the command must leave as they were (an
    output aimed at an input); their sha256 is recorded here."""
    return {"id": cid, "argv": [str(a) for a in argv], "exit": code, "stderr": regex,
            "absent": [str(a) for a in absent], "valid": list(valid), "needs_ort": needs_ort,
            "junit_error": [str(a) for a in junit_error],
            "known_bug": known_bug, "timeout": timeout,
            "unchanged": [[str(f), hashlib.sha256(pathlib.Path(f).read_bytes()).hexdigest()] for f in unchanged]}


def w(path, data):
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return path


# --- external data -----------------------------------------------------------------


def ext_model(d, pairs, dims=(4,)):
    m = w(d / "model" / "m.onnx", model(graph_with_initializer(ext_tensor(pairs, dims))))
    w(d / "secret.bin", b"\0" * 16)
    w(d / "model" / "w.bin", b"\0" * 16)
    return m


def inspect(cid, d, pairs, code, regex, dims=(4,)):
    m = ext_model(d, pairs, dims)
    return case(cid, ["onnxparity", "inspect", m], code, regex)


EXT_LOC = r"m\.onnx: .*external_data.*location"


def c_ext_dotdot(d):
    return inspect("ext_dotdot", d, [("location", "../secret.bin"), ("length", "16")], 2, EXT_LOC)


def c_ext_a_dotdot(d):
    (d / "model" / "a").mkdir(parents=True)
    return inspect("ext_a_dotdot", d, [("location", "a/../../secret.bin")], 2, EXT_LOC)


def c_ext_absolute(d):
    return inspect("ext_absolute", d, [("location", str(d / "secret.bin"))], 2, EXT_LOC)


def c_ext_backslash(d):
    return inspect("ext_backslash", d, [("location", "..\\secret.bin")], 2, EXT_LOC)


def c_ext_empty_location(d):
    return inspect("ext_empty_location", d, [("location", "")], 2, EXT_LOC)


def c_ext_ort_mem_addr(d):
    return inspect("ext_ort_mem_addr", d, [("location", "*/_ORT_MEM_ADDR_/*"), ("offset", "4096")],
                   2, EXT_LOC + ".*_ORT_MEM_ADDR_")


def c_ext_symlink_file(d):
    c = inspect("ext_symlink_file", d, [("location", "link.bin")], 2, EXT_LOC + ".*symbolic link")
    os.symlink("../secret.bin", d / "model" / "link.bin")
    return c


def c_ext_symlink_dir(d):
    c = inspect("ext_symlink_dir", d, [("location", "sub/secret.bin")], 2,
                EXT_LOC + ".*symbolic link")
    os.symlink("..", d / "model" / "sub")
    return c


def c_ext_duplicate_location(d):
    # a reader keeping the first and one keeping the last would open different files
    return inspect("ext_duplicate_location", d, [("location", "w.bin"), ("location", "../secret.bin")],
                   2, r"m\.onnx: .*external_data at byte \d+: key 'location' given twice")


def c_ext_duplicate_offset(d):
    return inspect("ext_duplicate_offset", d, [("location", "w.bin"), ("offset", "0"), ("offset", "8")],
                   2, r"m\.onnx: .*external_data at byte \d+: key 'offset' given twice")


def c_ext_offset_past_end(d):
    return inspect("ext_offset_past_end", d, [("location", "w.bin"), ("offset", "8"), ("length", "16")],
                   3, r"m\.onnx: .*external_data.*(offset|length)")


def c_ext_offset_wraps(d):
    # offset + 16 wraps around 2^64 to 8: inside the 16-byte file if added naively
    return inspect("ext_offset_wraps", d,
                   [("location", "w.bin"), ("offset", str((1 << 64) - 8)), ("length", "16")],
                   3, r"m\.onnx: .*external_data.*offset")


def c_ext_offset_int64_wraps(d):
    return inspect("ext_offset_int64_wraps", d,
                   [("location", "w.bin"), ("offset", str((1 << 63) - 8)), ("length", "16")],
                   3, r"m\.onnx: .*external_data.*offset")


def c_ext_offset_negative(d):
    return inspect("ext_offset_negative", d, [("location", "w.bin"), ("offset", "-8")], 3,
                   r"m\.onnx: .*external_data.*offset")


def c_ext_length_mismatch(d):
    return inspect("ext_length_mismatch", d, [("location", "w.bin"), ("length", "12")], 3,
                   r"m\.onnx: .*external_data.*length")


def c_ext_missing_file(d):
    return inspect("ext_missing_file", d, [("location", "nothere.bin")], 3,
                   r"m\.onnx: .*external_data.*nothere\.bin")


def c_ext_location_is_dir(d):
    (d / "model" / "sub").mkdir(parents=True)
    return inspect("ext_location_is_dir", d, [("location", "sub")], 2,
                   EXT_LOC + r".*'sub' is a folder")


# --- TensorProto (.pb) through convert ------------------------------------------------


def convert(cid, d, fname, data, code, regex, out="out.npy"):
    p = w(d / fname, data)
    o = d / out
    return case(cid, ["onnxparity", "convert", p, o], code, regex, absent=[o])


def c_pb_negative_dim(d):
    return convert("pb_negative_dim", d, "t.pb", tensor([2, -3 & ((1 << 64) - 1)], 1, b""), 3,
                   r"t\.pb: TensorProto\.dims.*negative")


def c_pb_dims_overflow(d):
    return convert("pb_dims_overflow_int64", d, "t.pb", tensor([1 << 62, 4, 3], 1, b"\0" * 4), 3,
                   r"t\.pb: TensorProto\.dims.*overflow")


def c_pb_dims_overflow_bytes(d):
    # product fits int64, product x 8 bytes does not
    return convert("pb_dims_overflow_bytes", d, "t.pb", tensor([1 << 61, 2], 11, b"\0" * 8), 3,
                   r"t\.pb: TensorProto\.(dims|raw_data).*")


def c_pb_raw_short(d):
    return convert("pb_raw_short", d, "t.pb", tensor([2, 3], 1, b"\0" * 20), 3,
                   r"t\.pb: TensorProto\.raw_data at byte \d+: 20 bytes")


def c_pb_raw_long(d):
    return convert("pb_raw_long", d, "t.pb", tensor([2, 3], 1, b"\0" * 28), 3,
                   r"t\.pb: TensorProto\.raw_data at byte \d+: 28 bytes")


def c_pb_raw_scalar_long(d):
    return convert("pb_raw_scalar_long", d, "t.pb", tensor([], 1, b"\0" * 8), 3,
                   r"t\.pb: TensorProto\.raw_data at byte \d+: 8 bytes")


def c_pb_raw_scalar_short(d):
    return convert("pb_raw_scalar_short", d, "t.pb", tensor([], 11, b"\0" * 4), 3,
                   r"t\.pb: TensorProto\.raw_data at byte \d+: 4 bytes")


def c_pb_f16_int32_packed_pairs(d):
    # four float16 values packed two per int32: int32_data holds one per element
    body = fv(1, 4) + fv(2, 10) + fl(5, varint(0x3C003C00) + varint(0x3C003C00))
    return convert("pb_f16_int32_data_pairs", d, "t.pb", body, 3,
                   r"t\.pb: TensorProto\.int32_data.*2")


def c_pb_f16_int32_too_many(d):
    body = fv(1, 2) + fv(2, 10) + fl(5, b"".join(varint(0x3C00) for _ in range(3)))
    return convert("pb_f16_int32_data_extra", d, "t.pb", body, 3, r"t\.pb: TensorProto\.int32_data.*3")


def c_pb_varint_11(d):
    return convert("pb_varint_11_bytes", d, "t.pb", b"\x08" + b"\xff" * 10 + b"\x01", 3,
                   r"t\.pb: .*at byte \d+: .*varint")


def c_pb_varint_10th_big(d):
    return convert("pb_varint_10th_byte_over_1", d, "t.pb", b"\x08" + b"\xff" * 9 + b"\x7f", 3,
                   r"t\.pb: .*at byte \d+: .*varint")


def c_pb_truncated_len(d):
    return convert("pb_truncated_length", d, "t.pb", tensor([4], 1, b"\0" * 16)[:-3], 3,
                   r"t\.pb: .*at byte \d+")


def c_pb_typed_wrong_field(d):
    body = fv(1, 2) + fv(2, 7) + fl(4, struct.pack("<2f", 1, 2))  # float_data on int64
    return convert("pb_typed_wrong_field", d, "t.pb", body, 3, r"t\.pb: TensorProto\.float_data")


def c_pb_raw_and_typed(d):
    body = tensor([2], 1, b"\0" * 8) + fl(4, struct.pack("<2f", 1, 2))
    return convert("pb_raw_and_typed", d, "t.pb", body, 3, r"t\.pb: TensorProto\.(raw_data|float_data)")


def c_pb_external_fixture(d):
    body = tensor([4], 1, None, name="x") + ext_entry("location", "../../etc/passwd") + fv(14, 1)
    return convert("pb_external_in_fixture", d, "t.pb", body, 2,
                   r"t\.pb: TensorProto\.(external_data|data_location)")


def c_pb_empty_is_scalar_without_data(d):
    return convert("pb_empty_file", d, "t.pb", b"", 3, r"t\.pb: ")


def c_pb_group_wire_type(d):
    return convert("pb_group_wire_type", d, "t.pb", b"\x0b\x0c", 3, r"t\.pb: .*at byte \d+: .*wire type")


def c_pb_field_zero(d):
    return convert("pb_field_number_0", d, "t.pb", b"\x00\x01", 3, r"t\.pb: .*at byte \d+: .*field")


# --- models (inspect, expose, extract) --------------------------------------------------


def deep_if(depth):
    g = fl(2, "g")
    for _ in range(depth):
        attr = fl(1, "then_branch") + fv(20, 5) + fl(6, g)
        node = fl(4, "If") + fl(5, attr)
        g = fl(1, node)
    return g


def c_model_deep_subgraphs(d):
    m = w(d / "m.onnx", model(deep_if(10000)))
    o = d / "out.onnx"
    return [case("model_deep_subgraphs_10000", ["onnxparity", "inspect", m], 3,
                 r"m\.onnx: .*at byte \d+: .*deep"),
            case("expose_deep_subgraphs_10000", ["onnxparity", "expose", m, o, "--all"], 3,
                 r"m\.onnx: .*at byte \d+: .*deep", absent=[o])]


def c_model_deep_types(d):
    t = fl(1, fv(1, 1))  # TypeProto.tensor_type {elem_type: float}
    for _ in range(10000):
        t = fl(4, fl(1, t))  # TypeProto.sequence_type {elem_type: t}
    vi = fl(1, "x") + fl(2, t)
    m = w(d / "m.onnx", model(fl(2, "g") + fl(11, vi)))
    return case("model_deep_types_10000", ["onnxparity", "inspect", m], 3,
                r"m\.onnx: .*at byte \d+: .*deep")


def c_model_lfs(d):
    m = w(d / "m.onnx", "version https://git-lfs.github.com/spec/v1\n"
          "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n")
    return case("model_git_lfs_pointer", ["onnxparity", "inspect", m], 3, r"m\.onnx: .*Git LFS")


def c_model_empty(d):
    m = w(d / "m.onnx", b"")
    return case("model_empty", ["onnxparity", "inspect", m], 3, r"m\.onnx: .*empty")


def c_model_truncated(d):
    data = (HEALTHY / "model.onnx").read_bytes()
    m = w(d / "m.onnx", data[: len(data) // 2 + 7])
    o = d / "out.onnx"
    return [case("model_truncated_real", ["onnxparity", "inspect", m], 3, r"m\.onnx: .*at byte \d+"),
            case("extract_truncated_real", ["onnxparity", "extract", m, o, "--inputs", "input",
                                            "--outputs", "logits"], 3, r"m\.onnx: .*at byte \d+",
                 absent=[o])]


def c_model_dir(d):
    (d / "m.onnx").mkdir(parents=True)
    o = d / "out.onnx"
    return case("model_is_directory", ["onnxparity", "expose", d / "m.onnx", o, "--all"], 2,
                r"m\.onnx: is a folder", absent=[o])


def c_model_missing(d):
    d.mkdir(parents=True, exist_ok=True)
    return case("model_nonexistent", ["onnxparity", "inspect", d / "nothere.onnx"], 3,
                r"nothere\.onnx: ")


def c_model_init_negative_dim(d):
    init = tensor([4, -1 & ((1 << 64) - 1)], 1, b"", name="w")
    m = w(d / "m.onnx", model(graph_with_initializer(init)))
    return case("model_initializer_negative_dim", ["onnxparity", "inspect", m], 3,
                r"m\.onnx: .*dims.*negative")


def c_model_init_dims_overflow(d):
    init = tensor([1 << 40, 1 << 40], 1, b"\0" * 4, name="w")
    m = w(d / "m.onnx", model(graph_with_initializer(init)))
    return case("model_initializer_dims_overflow", ["onnxparity", "inspect", m], 3,
                r"m\.onnx: .*dims.*overflow")


def c_model_init_raw_short(d):
    init = tensor([4], 1, b"\0" * 15, name="w")
    m = w(d / "m.onnx", model(graph_with_initializer(init)))
    return case("model_initializer_raw_short", ["onnxparity", "inspect", m], 3,
                r"m\.onnx: .*raw_data.*15 bytes")


# --- .npy ---------------------------------------------------------------------------------


def c_npy_bad_magic(d):
    return convert("npy_bad_magic", d, "t.npy", b"\x93NUMPX\x01\x00" + b"\0" * 120, 3,
                   r"t\.npy: npy.* at byte 0", out="out.pb")


def c_npy_bad_version(d):
    data = bytearray(npy_f4())
    data[6] = 9
    return convert("npy_bad_version", d, "t.npy", bytes(data), 3, r"t\.npy: npy.*at byte 6.*version",
                   out="out.pb")


def c_npy_4gib_header(d):
    # 12 bytes: magic, version 3.0, header length 0xFFFFFFFF
    return convert("npy_header_4gib_in_12_bytes", d, "t.npy", NPY_MAGIC + b"\x03\x00" + b"\xff" * 4, 3,
                   r"t\.npy: npy.*at byte 8", out="out.pb")


def c_npy_extra_key(d):
    return convert("npy_extra_header_key", d, "t.npy",
                   npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1, }", b"\0" * 4), 3,
                   r"t\.npy: npy\.header.*at byte \d+", out="out.pb")


def c_npy_missing_key(d):
    return convert("npy_missing_header_key", d, "t.npy", npy("{'descr': '<f4', 'shape': (1,), }", b"\0" * 4),
                   3, r"t\.npy: npy\.header.*fortran_order", out="out.pb")


def c_npy_object(d):
    return convert("npy_object_dtype", d, "t.npy",
                   npy("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", b"\x80\x04N."), 2,
                   r"t\.npy: npy\.header.*descr.*object", out="out.pb")


def c_npy_truncated(d):
    return convert("npy_truncated_data", d, "t.npy",
                   npy("{'descr': '<f4', 'fortran_order': False, 'shape': (10,), }", b"\0" * 12), 3,
                   r"t\.npy: npy\.data.*12", out="out.pb")


def c_npy_trailing(d):
    return convert("npy_trailing_data", d, "t.npy",
                   npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", b"\0" * 12), 3,
                   r"t\.npy: npy\.data at byte \d+: 4 trailing", out="out.pb")


def c_npy_negative_shape(d):
    return convert("npy_negative_dim", d, "t.npy",
                   npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", b""), 3,
                   r"t\.npy: npy\.header.*shape", out="out.pb")


def c_npy_shape_overflow(d):
    return convert("npy_dims_overflow", d, "t.npy",
                   npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4), }",
                       b"\0" * 8), 3, r"t\.npy: npy\.header.*shape.*overflow", out="out.pb")


def c_npy_structured(d):
    return convert("npy_structured_dtype", d, "t.npy",
                   npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", b"\0" * 4),
                   2, r"t\.npy: npy\.header\.descr at byte \d+: structured", out="out.pb")


def c_npy_empty(d):
    return convert("npy_empty_file", d, "t.npy", b"", 3, r"t\.npy: npy\.magic at byte 0", out="out.pb")


def c_npy_nul_in_header(d):
    return convert("npy_control_chars_in_header", d, "t.npy",
                   npy("{'descr': '<f4\x00\x1b[31m', 'fortran_order': False, 'shape': (1,), }", b"\0" * 4), 2,
                   r"t\.npy: npy\.header\.descr at byte \d+: .*'<f4\\x00\\x1b\[31m'", out="out.pb")


# --- .npz -------------------------------------------------------------------------------------


def zip_with(entries, compress=zipfile.ZIP_STORED):
    """entries: [(name, bytes)] written without any name policy."""
    import io
    bio = io.BytesIO()
    with zipfile.ZipFile(bio, "w", compress) as z:
        for name, data in entries:
            zi = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            zi.compress_type = compress
            z.writestr(zi, data)
    return bytearray(bio.getvalue())


def patch_sizes(buf, name, comp=None, size=None):
    """Rewrite the sizes of member `name` in its local header and central record."""
    nb = name.encode()
    i = 0
    while True:
        i = buf.find(b"PK\x03\x04", i)
        if i < 0:
            break
        if buf[i + 30:i + 30 + len(nb)] == nb:
            if comp is not None:
                struct.pack_into("<I", buf, i + 18, comp)
            if size is not None:
                struct.pack_into("<I", buf, i + 22, size)
        i += 4
    i = 0
    while True:
        i = buf.find(b"PK\x01\x02", i)
        if i < 0:
            break
        if buf[i + 46:i + 46 + len(nb)] == nb:
            if comp is not None:
                struct.pack_into("<I", buf, i + 20, comp)
            if size is not None:
                struct.pack_into("<I", buf, i + 24, size)
        i += 4
    return buf


def npz_case(cid, d, data, code, regex):
    return convert(cid, d, "t.npz", bytes(data), code, regex)


def c_npz_bomb_understated(d):
    # 64 MiB of zeros (about 64 KiB deflated) whose headers declare 200 bytes
    payload = npy_f4(16 << 20)
    buf = zip_with([("x.npy", payload)], zipfile.ZIP_DEFLATED)
    patch_sizes(buf, "x.npy", size=200)
    return npz_case("npz_bomb_understated", d, buf, 3, r"t\.npz: npz\.member.*x\.npy.*inflates past.*200")


def c_npz_bomb_over_cap(d):
    # a zip64 member declaring 17 GiB, more than the 16 GiB cap: refused before inflating
    big = 17 << 30
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    stream = comp.compress(npy_f4(1 << 20)) + comp.flush()
    name = b"x.npy"
    z64 = struct.pack("<HHQQ", 1, 16, big, len(stream))
    crc = 0
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, 8, 0, 0x21, crc, 0xFFFFFFFF, 0xFFFFFFFF,
                        len(name), len(z64)) + name + z64
    cd_extra = struct.pack("<HHQQ", 1, 16, big, len(stream))
    cd = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, 8, 0, 0x21, crc, 0xFFFFFFFF, 0xFFFFFFFF,
                     len(name), len(cd_extra), 0, 0, 0, 0, 0) + name + cd_extra
    body = local + stream
    cd_off = len(body)
    eocd = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(cd), cd_off, 0)
    return npz_case("npz_bomb_over_cap", d, body + cd + eocd, 2, r"t\.npz: npz\.member.*x\.npy.*over the limit")


def c_npz_zip64_inconsistent(d):
    buf = zip_with([("x.npy", npy_f4())])
    eocd = buf.rfind(b"PK\x05\x06")
    cd_off = struct.unpack_from("<I", buf, eocd + 16)[0]
    cd_size = struct.unpack_from("<I", buf, eocd + 12)[0]
    # a zip64 end record + locator that disagree with the classic end record
    z64 = struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, 7, 7, cd_size, cd_off + 1000)
    loc = struct.pack("<IIQI", 0x07064B50, 0, eocd, 1)
    end = bytearray(buf[eocd:])
    struct.pack_into("<HH", end, 8, 0xFFFF, 0xFFFF)
    struct.pack_into("<I", end, 16, 0xFFFFFFFF)
    data = bytes(buf[:eocd]) + z64 + loc + bytes(end)
    return npz_case("npz_zip64_inconsistent", d, data, 3, r"t\.npz: npz")


def c_npz_dotdot(d):
    return npz_case("npz_member_dotdot", d, zip_with([("../x.npy", npy_f4())]), 2,
                    r"t\.npz: npz\.member at byte \d+: .*\.\.")


def c_npz_nul(d):
    # Python's zipfile cuts names at a NUL: write "a_b.npy", then patch the byte
    buf = zip_with([("a_b.npy", npy_f4())])
    for sig, at in ((b"PK\x03\x04", 30), (b"PK\x01\x02", 46)):
        i = buf.find(sig)
        assert buf[i + at:i + at + 7] == b"a_b.npy"
        buf[i + at + 1] = 0
    return npz_case("npz_member_nul", d, buf, 2, r"t\.npz: npz\.member at byte \d+: .*a\\x00b\.npy.*NUL")


def c_npz_control_chars(d):
    # the member name reaches the message: still one line, no terminal escapes
    return npz_case("npz_member_control_chars", d,
                    zip_with([("a\nb\x1b[31m\r.npy", b"\x93NUMPY\x01\x00\xff\xff")]), 3,
                    r"t\.npz:a b\?\[31m : npz\.member\.npy\.header_len at byte 8")


def c_pb_name_control_chars(d):
    return convert("pb_name_control_chars", d, "t.pb", tensor([2], 1, b"\0" * 4, name="a\nb\x1b[31m\r"), 3,
                   r"t\.pb: TensorProto\.raw_data at byte \d+: .*\(tensor 'a b\?\[31m '\)")


def c_npz_dup(d):
    return npz_case("npz_member_duplicate", d, zip_with([("x.npy", npy_f4()), ("x.npy", npy_f4(2))]), 2,
                    r"t\.npz: npz\.member.*duplicate.*x\.npy")


def c_npz_absolute(d):
    return npz_case("npz_member_absolute", d, zip_with([("/x.npy", npy_f4())]), 2,
                    r"t\.npz: npz\.member at byte \d+: .*absolute")


def c_npz_garbage(d):
    return npz_case("npz_not_a_zip", d, b"PK\x03\x04" + b"\xff" * 60, 3, r"t\.npz: npz")


def c_npz_empty(d):
    return npz_case("npz_empty_file", d, b"", 3, r"t\.npz: npz.*empty")


def c_npz_bad_member(d):
    return npz_case("npz_member_bad_npy", d, zip_with([("x.npy", b"\x93NUMPY\x01\x00\xff\xff")]), 3,
                    r"t\.npz:x: npz\.member.*npy")


# --- other paths -----------------------------------------------------------------------------


def c_convert_dir(d):
    (d / "t.npy").mkdir(parents=True)
    o = d / "out.pb"
    return case("convert_input_is_directory", ["onnxparity", "convert", d / "t.npy", o], 2,
                r"t\.npy: is a folder",
                absent=[o])


def c_convert_missing(d):
    d.mkdir(parents=True, exist_ok=True)
    o = d / "out.pb"
    return case("convert_input_nonexistent", ["onnxparity", "convert", d / "nothere.npy", o], 3,
                r"nothere\.npy: ", absent=[o])


def c_convert_out_dir_missing(d):
    p = w(d / "t.npy", npy_f4())
    o = d / "nodir" / "out.pb"
    return case("convert_output_folder_missing", ["onnxparity", "convert", p, o], 3, r"out\.pb: ",
                absent=[o])


# --- JSON: parity.json, criteria, report and merge inputs -------------------------------------------

DEEP_JSON = "[" * 10000 + "]" * 10000
NAN_JSON = '{"schema": "onnxparity.capture/1", "deterministic": NaN}'
BAD_UTF8 = b'{"schema": "onnxparity.capture/1", "warnings": [{"category": "TracerWarning", "message": "\xff\xfe bad \xc3", "file": "m\xe9.py", "line": 3}]}'


def bundle(d, parity=None):
    b = d / "bundle"
    shutil.copytree(HEALTHY, b, ignore=shutil.ignore_patterns("intermediates"))
    if parity is not None:
        w(b / "parity.json", parity)
    return b


def c_parity_nan(d):
    b = bundle(d, NAN_JSON)
    return case("parity_json_nan", ["onnxparity", "lint", b], 3, r"parity\.json: at byte \d+: not valid JSON")


def c_parity_deep(d):
    b = bundle(d, DEEP_JSON)
    return case("parity_json_deep_nesting", ["onnxparity", "lint", b], 3,
                r"parity\.json: at byte \d+: not valid JSON")


def c_parity_utf8(d):
    # JSON is UTF-8 (RFC 8259, and Python's json refuses it too): refused
    # where it is read, never repaired (issue 15, strict reading)
    b = bundle(d, BAD_UTF8)
    return case("parity_json_invalid_utf8", ["onnxparity", "lint", b, "--format", "json"], 3,
                r"parity\.json: at byte \d+: not valid JSON.*unable to decode byte 0xff")


CRIT = {"schema": "onnxparity.criteria/1", "fixtures": 3, "lint_clean": [],
        "outputs": {"logits": {"rtol": 1e-4, "atol": 1e-5, "top1_min": None, "mismatch_frac_max": 0,
                               "shapes": [], "max_abs": None, "needed_rtol": None, "needed_atol": None}}}


def gate(cid, d, text, code, regex):
    b = bundle(d)
    c = w(d / "c.json", text)
    j = d / "gate.xml"
    return case(cid, ["onnxparity", "gate", b, "--criteria", c, "--junit", j], code, regex,
                junit_error=[j])


def c_crit_nan(d):
    return gate("criteria_nan", d, json.dumps(CRIT).replace('"max_abs": null', '"max_abs": NaN'), 2,
                r"c\.json: at byte \d+: not valid JSON")


def c_crit_big_number(d):
    return gate("criteria_overflowing_number", d, json.dumps(CRIT).replace('"max_abs": null', '"max_abs": 1e999'),
                2, r"c\.json: at byte \d+: not valid JSON: real number overflow")


def c_crit_deep(d):
    return gate("criteria_deep_nesting", d, '{"schema": ' + DEEP_JSON + "}", 2, r"c\.json: at byte \d+: not valid JSON")


def c_crit_utf8(d):
    crit = json.dumps(CRIT).encode().replace(b'"logits"', b'"logits\xff\xc0"')
    crit = crit.replace(b'"max_abs": null', b'"max_abs": "x"')
    return gate("criteria_invalid_utf8", d, crit, 2, r"c\.json: (at byte \d+|outputs\.logits.*)")


def c_crit_name_newline(d):
    crit = json.dumps(CRIT).replace('"logits"', '"lo\\ngits\\u001b[2J"').replace('"max_abs": null', '"max_abs": -1')
    return gate("criteria_name_control_chars", d, crit, 2,
                r"c\.json: outputs\.lo gits\?\[2J\.max_abs: not a finite number")


def c_crit_wrong_type(d):
    return gate("criteria_wrong_type", d, json.dumps(CRIT).replace('"fixtures": 3', '"fixtures": -1'), 2,
                r"c\.json: fixtures: ")


HOSTILE = "</script><script>alert(1)</script>\x01\x1b[31m\u2028'\"&"


def check_doc(name):
    metrics = {"shape_ok": True, "dtype_ok": True, "rtol": 1e-4, "atol": 1e-5, "count": 2,
               "mismatches": 0, "mismatch_frac": 0, "max_abs": 0, "max_rel": 0, "cosine": 1,
               "needed_rtol": 0, "needed_atol": 0, "histogram": [2] + [0] * 11}
    out = dict(name=name, dtype="float32", shape=[2], **metrics)
    out["pass"] = True
    return {"schema": "onnxparity.check/1", "verdict": "pass", "model": name + ".onnx",
            "environment": {"onnxparity": name, "ort_version": "1.29.0", "provider": name},
            "fixtures": [{"index": 0, "dir": name, "status": "pass", "outputs": [out]}],
            "summary": {"fixtures": 1, "fixtures_failed": 0, "outputs_compared": 1, "outputs_failed": 0},
            "causes": [{"id": name, "confidence": "high", "node": name, "evidence": [name], "fix": name}],
            "first_divergent": {"node": name, "op_type": name, "output": name, "module": name}}


def report(cid, d, data, code, regex, name="r.json"):
    p = w(d / name, data)
    h = d / "r.html"
    return case(cid, ["onnxparity", "report", p, "--html", h], code, regex, absent=[h])


def c_report_nan(d):
    return report("report_nan", d, json.dumps(check_doc("y")).replace('"max_abs": 0', '"max_abs": NaN'), 3,
                  r"r\.json: at byte \d+: not a JSON document")


def c_report_deep(d):
    return report("report_deep_nesting", d, '{"schema": "onnxparity.check/1", "x": ' + DEEP_JSON + "}", 3,
                  r"r\.json: at byte \d+: not a JSON document")


def c_report_empty(d):
    return report("report_empty_file", d, b"", 3, r"r\.json: at byte 0: not a JSON document")


def c_report_dir(d):
    (d / "r.json").mkdir(parents=True)
    h = d / "r.html"
    return case("report_input_is_directory", ["onnxparity", "report", d / "r.json", "--html", h], 3,
                r"r\.json: ", absent=[h])


def c_report_hostile_names(d):
    p = w(d / "r.json", json.dumps(check_doc(HOSTILE)))
    h = d / "r.html"
    return case("report_hostile_names", ["onnxparity", "report", p, "--html", h], 0, None,
                valid=[{"path": str(h), "kind": "html"}])


def c_report_hostile_every_schema(d):
    """Hostile text in every string member of bisect, sweep and diagnose documents."""
    H = HOSTILE
    env = {"onnxparity": H, "ort_version": H, "provider": H, "opt_level": H}
    causes = [{"id": H, "confidence": H, "node": H, "evidence": [H, H], "fix": H}]
    fd = {"node": H, "op_type": H, "output": H, "module": H, "index": 0, "max_abs": 1, "max_rel": 1,
          "inputs": [{"name": H, "source": H, "max_abs": 0, "pass": True}],
          "metrics": {"histogram": [1] * 12, "note": H}}
    curve = [{"value": H, "node": H, "op_type": H, "module": H, "max_abs": 1e-3, "pass": False, "note": H}]
    levels = [{"level": H, "ran": True, "error": H, "outputs": [{"name": H, "max_abs": 0.5, "pass": False}]}]
    sweep = {"schema": "onnxparity.sweep/1", "verdict": H, "model": H, "environment": env, "levels": levels,
             "optimizer_search": {"culprit": H, "sessions": 3, "note": H}}
    docs = {
        "b.json": {"schema": "onnxparity.bisect/1", "verdict": "diverges", "model": H, "environment": env,
                   "summary": {"values_compared": 1}, "first_divergent": fd, "curve": curve, "error": H},
        "s.json": sweep,
        "g.json": {"schema": "onnxparity.diagnose/1", "verdict": "fail", "model": H, "environment": env,
                   "causes": causes, "first_divergent": fd, "sweep": sweep,
                   "probes": {H: {"status": H, "evidence": [H], "note": H}}},
    }
    ps = [w(d / n, json.dumps(x, ensure_ascii=False).encode()) for n, x in docs.items()]
    h = d / "r.html"
    return case("report_hostile_every_schema", ["onnxparity", "report", *ps, "--html", h], 0, None,
                valid=[{"path": str(h), "kind": "html"}])


def c_report_invalid_utf8(d):
    doc = json.dumps(check_doc("NAME")).encode().replace(b"NAME", b"y\xff\xc3(\xed\xa0\x80z")
    p = w(d / "r.json", doc)
    h = d / "r.html"
    return case("report_invalid_utf8_names", ["onnxparity", "report", p, "--html", h], 3,
                r"r\.json: at byte \d+: not a JSON document.*unable to decode byte 0xff", absent=[h])


HUGE = 1e300


def c_report_huge_numbers(d):
    """Numbers at the edge of double: indices, counts and errors far past any
    size render (no undefined float-to-integer cast).  The negative ones a
    schema's count or error cannot hold (issue 36: typed reading) are refused,
    exit 2, each naming its member: those were the inputs of the UBSan finds."""
    doc = check_doc("y")
    out = doc["fixtures"][0]["outputs"][0]
    out.update(histogram=[1.7e308] * 6 + [HUGE] * 6, count=HUGE, mismatches=HUGE, max_abs=1.7e308,
               max_rel=5e-324, shape=[HUGE, -HUGE, 2])
    doc["fixtures"][0]["index"] = HUGE
    bis = {"schema": "onnxparity.bisect/1", "verdict": "diverges", "model": "m",
           "summary": {"values_exposed": HUGE, "values_compared": HUGE},
           "first_divergent": {"node": "n", "op_type": "Add", "output": "v", "index": HUGE, "max_abs": 1.7e308,
                               "fixture": -HUGE, "inputs": [{"name": "a", "max_abs": HUGE}],
                               "metrics": {"histogram": [HUGE] * 12}},
           "curve": [{"value": "v%d" % i, "max_abs": v, "pass": i % 2 == 0}
                     for i, v in enumerate([1.7e308, 1e-300, 5e-324, 0, HUGE, -0.0])]}
    bis2 = dict(bis, first_divergent=dict(bis["first_divergent"], index=1.7e308))
    sweep = {"schema": "onnxparity.sweep/1", "verdict": "fail", "model": "m",
             "levels": [{"level": "all", "ran": True, "outputs": [{"name": "y", "max_abs": 1.7e308, "pass": False}]},
                        {"level": "disable", "ran": True, "outputs": [{"name": "y", "max_abs": HUGE, "pass": True}]}]}
    ps = [w(d / n, json.dumps(x)) for n, x in (("c.json", doc), ("b.json", bis), ("b2.json", bis2), ("s.json", sweep))]
    h = d / "r.html"
    cases = [case("report_huge_numbers", ["onnxparity", "report", *ps, "--html", h], 0, None,
                  valid=[{"path": str(h), "kind": "html"}])]
    for cid, base, path, value, rx in [
            ("fixture_index", doc, ["fixtures", 0, "index"], -HUGE, r"fixtures\[0\]\.index: not a whole number >= 0"),
            ("mismatches", doc, OUT0 + ["mismatches"], -HUGE,
             r"fixtures\[0\]\.outputs\[0\]\.mismatches: not a whole number >= 0"),
            ("histogram", doc, OUT0 + ["histogram", 6], -1e300,
             r"fixtures\[0\]\.outputs\[0\]\.histogram\[6\]: not a whole number >= 0"),
            ("first_divergent_index", bis, ["first_divergent", "index"], -HUGE,
             r"first_divergent\.index: not a whole number >= 0"),
            ("curve_error", bis, ["curve", 1], {"value": "v", "max_abs": -1.7e308, "pass": True},
             r"curve\[1\]\.max_abs: not a number >= 0 or null")]:
        p = w(d / cid / "r.json", json.dumps(_typed(base, path, value)))
        cases.append(case("report_huge_negative_" + cid, ["onnxparity", "report", p, "--html", p.with_suffix(".html")],
                          2, r"r\.json: " + rx, absent=[p.with_suffix(".html")]))
    return cases


def c_merge_huge_shard(d):
    docs = []
    for k in range(2):
        doc = check_doc("y")
        doc["environment"]["model_sha256"] = "0" * 64
        doc["shard"] = {"index": HUGE if k else -HUGE, "count": HUGE, "fixtures_total": HUGE}
        docs.append(w(d / ("s%d.json" % k), json.dumps(doc)))
    return case("merge_huge_shard_numbers", ["onnxparity", "merge", *docs], 2,
                r"\S*s0\.json: shard\.(index|count):? (is )?not a whole number")


def c_parity_huge_numbers(d):
    man = {"schema": "onnxparity.capture/1", "export_args": {"traced_fixture": HUGE},
           "fixtures": [{"inputs": [{"name": "input", "shape": [HUGE, -HUGE, 1e20, 3]}]}],
           "shape_risks": [{"name": "input", "dim": HUGE, "sizes": [HUGE, -HUGE]}],
           "warnings": [{"category": "TracerWarning", "message": "m", "file": "f.py", "line": HUGE}]}
    b = bundle(d, json.dumps(man))
    return case("parity_json_huge_numbers", ["onnxparity", "lint", b, "--format", "json"], 0, None,
                valid=[{"path": "-", "kind": "json"}])


def c_merge_nan(d):
    p = w(d / "a.json", json.dumps(check_doc("y")).replace('"max_abs": 0', '"max_abs": NaN'))
    return case("merge_nan", ["onnxparity", "merge", p, p], 3, r"a\.json: at byte \d+")


def c_merge_deep(d):
    p = w(d / "a.json", DEEP_JSON)
    return case("merge_deep_nesting", ["onnxparity", "merge", p, p], 3, r"a\.json: at byte \d+")


# --- hostile names reaching every report of check (needs ONNX Runtime) ------------------------------


def identity_bundle(d, out_name):
    """A bundle whose one Identity node's output has a hostile name."""
    node = fl(1, "x") + fl(2, out_name) + fl(3, out_name) + fl(4, "Identity")
    g = fl(1, node) + fl(2, "g") + fl(11, value_info("x")) + fl(12, value_info(out_name))
    b = d / "bundle"
    w(b / "model.onnx", model(g))
    w(b / "test_data_set_0" / "input_0.pb", tensor([4], 1, struct.pack("<4f", 1, 2, 3, 4), name="x"))
    w(b / "test_data_set_0" / "output_0.pb", tensor([4], 1, struct.pack("<4f", 1, 2, 3, 5), name=out_name))
    return b


def c_check_hostile_names(d):
    b = identity_bundle(d, HOSTILE.encode() + b"\xff")
    h, j, s = d / "c.html", d / "c.xml", d / "c.sarif"
    return case("check_hostile_names_in_reports",
                ["onnxparity", "check", b, "--format", "json", "--html", h, "--junit", j, "--sarif", s], 1,
                None, valid=[{"path": "-", "kind": "json"}, {"path": str(h), "kind": "html"},
                             {"path": str(j), "kind": "xml"}, {"path": str(s), "kind": "json"}],
                needs_ort=True)


def c_check_truncated_model(d):
    b = bundle(d)
    data = (b / "model.onnx").read_bytes()
    (b / "model.onnx").write_bytes(data[: len(data) // 3])
    h, j, s = d / "c.html", d / "c.xml", d / "c.sarif"
    return case("check_truncated_model_no_outputs",
                ["onnxparity", "check", b, "--format", "json", "--html", h, "--junit", j, "--sarif", s], 3,
                r"model\.onnx: .*at byte \d+", absent=[h, s], junit_error=[j], needs_ort=True)


def c_check_fixture_bad(d):
    b = bundle(d)
    (b / "test_data_set_1" / "output_0.pb").write_bytes(tensor([1, 10], 1, b"\0" * 12))
    h, j = d / "c.html", d / "c.xml"
    return case("check_fixture_raw_short",
                ["onnxparity", "check", b, "--html", h, "--junit", j], 3,
                r"output_0\.pb: TensorProto\.raw_data at byte \d+: 12 bytes", absent=[h],
                junit_error=[j], needs_ort=True)


def c_check_sarif_invalid_utf8(d):
    b = bundle(d, BAD_UTF8)
    sarif = d / "c.sarif"
    return case("check_sarif_invalid_utf8_manifest", ["onnxparity", "check", b, "--format", "json", "--sarif", sarif],
                3, r"parity\.json: at byte \d+: not valid JSON.*0xff", absent=[sarif], needs_ort=True)


HOSTILE_UTF8 = BAD_UTF8.replace(b"\xff\xfe bad \xc3", "</script>\\u001b[31m\u2028 \\\"'&".encode()).replace(b"m\xe9.py", "m\u00e9.py".encode())


def c_lint_sarif_hostile_manifest(d):
    b = bundle(d, HOSTILE_UTF8)
    return case("lint_sarif_hostile_manifest", ["onnxparity", "lint", b, "--format", "sarif"], 0, None,
                valid=[{"path": "-", "kind": "json"}])


def c_gate_record_hostile_names(d):
    b = identity_bundle(d, HOSTILE.encode() + b"\xff")
    c = d / "crit.json"
    # the identity bundle fails on purpose (4 vs 5): recorded with --allow-failing
    return case("gate_record_hostile_names", ["onnxparity", "gate", b, "--criteria", c, "--record", "--allow-failing"],
                0, None,
                valid=[{"path": str(c), "kind": "json"}], needs_ort=True)


def c_gate_junit_hostile_names(d):
    name = HOSTILE.encode()
    b = identity_bundle(d, name)
    crit = json.dumps(CRIT).replace('"fixtures": 3', '"fixtures": 1').replace('"max_abs": null', '"max_abs": 0')
    # JSON cannot carry invalid UTF-8 (refused: criteria_invalid_utf8), so the
    # criteria name the model's output without the stray byte
    crit = crit.encode().replace(b'"logits"', json.dumps(HOSTILE).encode())
    c = w(d / "crit.json", crit)
    j = d / "g.xml"
    return case("gate_junit_hostile_names", ["onnxparity", "gate", b, "--criteria", c, "--junit", j, "--format", "json"],
                1, None, valid=[{"path": "-", "kind": "json"}, {"path": str(j), "kind": "xml"}], needs_ort=True)


def hostile_model():
    bad = b"y\xff\n</script>\x1b"
    node = fl(1, "x") + fl(2, bad) + fl(3, b"n\xc3(") + fl(4, b"Op\xfe")
    g = fl(1, node) + fl(2, "g") + fl(11, value_info("x")) + fl(12, value_info(bad))
    md = fl(14, fl(1, b"k\xff") + fl(2, b"v\x01\xc0"))
    return model(g) + md + fl(2, b"prod\xff\x1b")


def c_inspect_hostile_names(d):
    m = w(d / "m.onnx", hostile_model())
    return case("inspect_json_hostile_names", ["onnxparity", "inspect", m, "--format", "json"], 0, None,
                valid=[{"path": "-", "kind": "json"}])


def c_lint_hostile_names(d):
    m = w(d / "m.onnx", hostile_model())
    return case("lint_sarif_hostile_names", ["onnxparity", "lint", m, "--format", "sarif"], 0, None,
                valid=[{"path": "-", "kind": "json"}])


def c_compare_npz_invalid_utf8(d):
    raw = zip_with([("ab.npy", npy_f4())])
    for sig, at in ((b"PK\x03\x04", 30), (b"PK\x01\x02", 46)):
        i = raw.find(sig)
        raw[i + at] = 0xFF
    a, b = w(d / "a.npz", bytes(raw)), w(d / "b.npz", bytes(raw))
    return case("compare_json_invalid_utf8_member", ["onnxparity", "compare", a, b, "--format", "json"], 0, None,
                valid=[{"path": "-", "kind": "json"}])


def c_merge_hostile_names(d):
    doc = check_doc(HOSTILE)
    doc["environment"]["model_sha256"] = "0" * 64
    p = w(d / "a.json", json.dumps(doc, ensure_ascii=False).encode())
    return case("merge_json_hostile_names", ["onnxparity", "merge", p, p, "--format", "json"], 0, None,
                valid=[{"path": "-", "kind": "json"}])


def c_merge_schema_control_chars(d):
    doc = dict(check_doc("y"), schema="x\ny\x1b[2J")
    p = w(d / "a.json", json.dumps(doc))
    return case("merge_schema_control_chars", ["onnxparity", "merge", p, "--format", "json"], 2,
                r"merge: \S*a\.json: schema 'x\?y\?\[2J', not")


def c_path_with_newline(d):
    m = w(d / "bad\nname\x1b.onnx", b"")
    return case("path_with_control_chars", ["onnxparity", "inspect", m], 3, r"bad name\?\.onnx: at byte 0: empty")


def c_pb_more(d):
    return [
        convert("pb_rank_33", d / "a", "t.pb", tensor([1] * 33, 1, b"\0" * 4), 3,
                r"t\.pb: TensorProto\.dims at byte \d+: rank 33"),
        convert("pb_length_2_64_minus_1", d / "b", "t.pb", fv(1, 4) + fv(2, 1) + b"\x4a" + b"\xff" * 9 + b"\x01", 3,
                r"t\.pb: protobuf at byte \d+: field 9 claims 18446744073709551615 bytes"),
        convert("pb_length_2_63_minus_1", d / "c", "t.pb", fv(1, 4) + fv(2, 1) + b"\x4a" + varint((1 << 63) - 1) + b"\0" * 16,
                3, r"t\.pb: protobuf at byte \d+: field 9 claims 9223372036854775807 bytes"),
        convert("pb_string_count_2_40", d / "e", "t.pb", fv(1, 1 << 40) + fv(2, 8) + fl(6, b"a"), 3,
                r"t\.pb: TensorProto\.string_data at byte \d+: 1 values where dims give 1099511627776"),
    ]


def c_npy_more(d):
    def h(shape="(1,)", descr="'<f4'", fortran="False", extra=""):
        return "{'descr': %s, 'fortran_order': %s, 'shape': %s, %s}" % (descr, fortran, shape, extra)
    return [
        convert("npy_unicode_itemsize_2_31", d / "a", "t.npy", npy(h(descr="'<U2147483647'"), b"\0" * 8), 3,
                r"t\.npy: npy\.header\.descr at byte \d+: string dtype too long", out="out.pb"),
        convert("npy_itemsize_past_2_64", d / "b", "t.npy", npy(h(descr="'<U99999999999999999999'"), b"\0" * 8), 2,
                r"t\.npy: npy\.header\.descr at byte \d+: unsupported dtype", out="out.pb"),
        convert("npy_rank_40", d / "c", "t.npy", npy(h(shape="(" + "1," * 40 + ")"), b"\0" * 4), 2,
                r"t\.npy: npy\.header\.shape at byte \d+: more than 32", out="out.pb"),
        convert("npy_5000_open_parens", d / "e", "t.npy", npy(h(shape="(" * 5000), b"\0" * 4), 3,
                r"t\.npy: npy\.header\.shape at byte \d+", out="out.pb"),
        convert("npy_dim_past_2_63", d / "f", "t.npy", npy(h(shape="(99999999999999999999999999,)"), b"\0" * 4), 3,
                r"t\.npy: npy\.header\.shape at byte \d+: .*2\^63", out="out.pb"),
        convert("npy_duplicate_key", d / "g", "t.npy", npy(h(extra="'descr': '<f8', "), b"\0" * 4), 3,
                r"t\.npy: npy\.header\.descr at byte \d+: duplicate key", out="out.pb"),
        convert("npy_fortran_order_string", d / "h", "t.npy", npy(h(fortran="'yes'"), b"\0" * 4), 3,
                r"t\.npy: npy\.header\.fortran_order at byte \d+", out="out.pb"),
    ]


def c_npz_eocd_65535_entries(d):
    eocd = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 65535, 65535, 0xFFFFFF, 0, 0)
    return npz_case("npz_eocd_65535_entries", d, eocd, 3, r"t\.npz: npz")


def c_model_million_nodes(d):
    # 2 MB holding a million nodes: answered in time, not a hang
    m = w(d / "m.onnx", model(fl(1, fl(4, "Relu")) * 1000000 + fl(2, "g")))
    return case("model_million_nodes", ["onnxparity", "inspect", m, "--format", "json"], 0, None,
                valid=[{"path": "-", "kind": "json"}])


def c_report_long_curve(d):
    bis = {"schema": "onnxparity.bisect/1", "verdict": "diverges", "model": "m",
           "first_divergent": {"node": "n", "index": 5},
           "curve": [{"value": "v%d" % i, "max_abs": i * 1e-9, "pass": i % 2 == 0} for i in range(100000)]}
    p = w(d / "b.json", json.dumps(bis))
    h = d / "r.html"
    return case("report_curve_100000_points", ["onnxparity", "report", p, "--html", h], 0, None,
                valid=[{"path": str(h), "kind": "html"}])


def c_testdata_layouts(d):
    out = []
    for cid, how, regex in (
            ("testdata_input_is_directory", "dir", r"test_data_set_0/input_0\.pb: is a folder"),
            ("testdata_input_gap", "gap", r"test_data_set_0: input_0 is missing \(\.pb, \.npy or \.npz"),
            ("testdata_input_is_device", "dev", r"test_data_set_0/input_0\.pb: is not a regular file")):
        b = d / how
        shutil.copytree(HEALTHY, b, ignore=shutil.ignore_patterns("intermediates"))
        f = b / "test_data_set_0" / "input_0.pb"
        if how == "dir":
            f.unlink()
            f.mkdir()
        elif how == "gap":
            f.rename(f.with_name("input_3.pb"))
        else:
            f.unlink()
            f.symlink_to("/dev/zero")
        h, j = d / (how + ".html"), d / (how + ".xml")
        out.append(case(cid, ["onnxparity", "check", b, "--html", h, "--junit", j], 2, regex, absent=[h],
                        junit_error=[j]))
    return out


def c_ext_beyond_initializers(d):
    """External data where ONNX Runtime also loads it: a Constant's value, a
    TENSORS attribute, an If branch's initializer, a sparse initializer."""
    out = []
    bad = ext_tensor([("location", "../secret.bin"), ("length", "16")], name="c")
    sub = fl(5, bad) + fl(2, "sub") + fl(12, value_info("c"))
    sparse = fl(1, ext_tensor([("location", "../secret.bin"), ("length", "4")], dims=(1,), name="c"))
    sparse += fl(2, tensor([1], 7, b"\0" * 8, name="ci")) + fv(3, 4)
    graphs = {
        "ext_in_constant_value": fl(1, fl(2, "c") + fl(4, "Constant") + fl(5, fl(1, "value") + fv(20, 4) + fl(5, bad))),
        "ext_in_tensors_attribute": fl(1, fl(2, "c") + fl(4, "Custom") + fl(5, fl(1, "ts") + fv(20, 9) + fl(10, bad))),
        "ext_in_if_branch": fl(1, fl(1, "cond") + fl(2, "c") + fl(4, "If") +
                               fl(5, fl(1, "then_branch") + fv(20, 5) + fl(6, sub)) +
                               fl(5, fl(1, "else_branch") + fv(20, 5) + fl(6, sub))),
        "ext_in_sparse_initializer": fl(15, sparse),
    }
    for cid, g in graphs.items():
        m = w(d / cid / "model" / "m.onnx", model(g + fl(2, "g") + fl(12, value_info("c"))))
        w(d / cid / "secret.bin", b"\0" * 16)
        out.append(case(cid, ["onnxparity", "inspect", m], 2, EXT_LOC + ".*'\\.\\./secret\\.bin' leaves"))
    return out


def c_check_ext_unsafe(d):
    """check checks the model's external data with the tool's own rules
    before ONNX Runtime opens any file (ORT's own refusal would be exit 4)."""
    out = []
    for cid, loc in (("check_ext_dotdot", "../secret.bin"), ("check_ext_symlink", "link.bin")):
        b = d / cid / "bundle"
        init = ext_tensor([("location", loc), ("length", "16")], name="c")
        node = fl(1, "x") + fl(1, "c") + fl(2, "y") + fl(4, "Add")
        g = fl(5, init) + fl(1, node) + fl(2, "g") + fl(11, value_info("x")) + fl(12, value_info("y"))
        w(b / "model.onnx", model(g))
        w(d / cid / "secret.bin", b"\0" * 16)
        if loc == "link.bin":
            os.symlink("../secret.bin", b / "link.bin")
        w(b / "test_data_set_0" / "input_0.pb", tensor([4], 1, b"\0" * 16, name="x"))
        w(b / "test_data_set_0" / "output_0.pb", tensor([4], 1, b"\0" * 16, name="y"))
        h = d / cid / "c.html"
        out.append(case(cid, ["onnxparity", "check", b, "--html", h], 2, r"model\.onnx: .*external_data.*location",
                        absent=[h], needs_ort=True))
        # the other commands that hand the model to ONNX Runtime check it the same way
        for cmd in ("bisect", "sweep", "diagnose"):
            out.append(case(f"{cid}_{cmd}", ["onnxparity", cmd, b], 2,
                            r"model\.onnx: .*external_data.*location", needs_ort=True))
    return out


def c_run_save_hostile_names(d):
    """run --save DIR names files after the outputs: a name may not leave DIR."""
    out = []
    for cid, name, code, regex in (("run_save_traversal_name", b"../../pwn", 0, None),
                                   ("run_save_control_chars_name", b"a\nb\x1b", 0, None),
                                   ("run_save_name_too_long", b"a" * 300, 3, r"sv/a+.*too long")):
        node = fl(1, "x") + fl(2, name) + fl(4, "Identity")
        g = fl(1, node) + fl(2, "g") + fl(11, value_info("x")) + fl(12, value_info(name))
        m = w(d / cid / "m.onnx", model(g))
        x = w(d / cid / "x.pb", tensor([4], 1, b"\0" * 16, name="x"))
        sv = d / cid / "sv"
        sv.mkdir()
        absent = [d / cid / "pwn.npy", d / "pwn.npy", sv / ("a" * 300 + ".npy")]
        out.append(case(cid, ["onnxparity", "run", m, x, "--save", sv], code, regex, absent=absent, needs_ort=True))
    return out


def c_compare_symlink_loops(d):
    """Ten links back up the tree per folder: followed, 10^16 paths (a hang)."""
    for side in ("a", "b"):
        w(d / side / "sub" / "x.npy", npy_f4())
        for k in range(10):
            os.symlink("..", d / side / "sub" / ("loop%d" % k))
    return case("compare_dirs_symlink_loops", ["onnxparity", "compare", d / "a", d / "b", "--format", "json"], 0, None,
                valid=[{"path": "-", "kind": "json"}])


def c_model_no_nodes(d):
    """A graph with nothing in it (UBSan: qsort of a NULL table)."""
    m = w(d / "m.onnx", model(fl(2, "g")))
    return case("model_without_nodes", ["onnxparity", "inspect", m, "--format", "json"], 0, None,
                valid=[{"path": "-", "kind": "json"}])


def c_model_deep_in_function(d):
    """The 10,000-deep If chain as the body of a model-local function."""
    g = deep_if(10000)  # one GraphProto.node field: tag 0x0a, length, NodeProto
    n, i, shift = 0, 1, 0
    while True:  # the outermost node's length
        b = g[i]
        n |= (b & 0x7F) << shift
        shift += 7
        i += 1
        if not b & 0x80:
            break
    node = g[i:i + n]
    m = w(d / "m.onnx", model(fl(2, "g")) + fl(25, fl(1, "f") + fl(10, "d") + fl(7, node)))
    return case("model_deep_subgraphs_in_function", ["onnxparity", "lint", m], 3,
                r"m\.onnx: functions\[0\]\.node\[0\].* at byte \d+: subgraphs nested deeper than 64")


def c_model_deep_type_attribute(d):
    t = fl(1, fv(1, 1))
    for _ in range(10000):
        t = fl(9, fl(1, t))  # TypeProto.optional_type {elem_type: t}
    attr = fl(1, "tp") + fv(20, 13) + fl(14, t)
    m = w(d / "m.onnx", model(fl(1, fl(4, "X") + fl(5, attr)) + fl(2, "g")))
    return case("model_deep_type_attribute", ["onnxparity", "inspect", m], 3,
                r"m\.onnx: graph\.node\[0\]\.attribute\[0\]\.TypeProto at byte \d+: types nested deeper than 64")


def c_edit_unknown_names(d):
    src = w(d / "m.onnx", (HEALTHY / "model.onnx").read_bytes())
    o1, o2 = d / "x.onnx", d / "e.onnx"
    return [case("extract_unknown_output", ["onnxparity", "extract", src, o1, "--inputs", "input", "--outputs",
                                            "nope\x1b"], 2, r"nope", absent=[o1]),
            case("expose_unknown_value", ["onnxparity", "expose", src, o2, "--values", "nope,also\nnot"], 2,
                 r"nope", absent=[o2])]


def c_fifos(d):
    """Named pipes where files are expected: opening one for reading waits for
    a writer forever unless the tool opens it non-blocking and refuses it."""
    d.mkdir(parents=True, exist_ok=True)

    def fifo(path):
        path = pathlib.Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            path.unlink()
        os.mkfifo(path)
        return path

    NOT_REG = r": is not a regular file"
    out = [case("fifo_as_model", ["onnxparity", "inspect", fifo(d / "m.onnx")], 2, r"m\.onnx" + NOT_REG),
           case("fifo_as_npy", ["onnxparity", "convert", fifo(d / "t.npy"), d / "o.pb"], 2, r"t\.npy" + NOT_REG,
                absent=[d / "o.pb"]),
           case("fifo_as_report_input", ["onnxparity", "report", fifo(d / "r.json"), "--html", d / "r.html"], 3,
                r"r\.json" + NOT_REG, absent=[d / "r.html"]),
           case("fifo_as_merge_input", ["onnxparity", "merge", fifo(d / "a.json")], 3, r"a\.json" + NOT_REG)]
    m = ext_model(d / "ext", [("location", "pipe.bin")])
    fifo(d / "ext" / "model" / "pipe.bin")
    out.append(case("fifo_as_external_data", ["onnxparity", "inspect", m], 2, EXT_LOC + r".*'pipe\.bin' is not a regular"))
    b = bundle(d / "parity", None)
    fifo(b / "parity.json")
    out.append(case("fifo_as_parity_json", ["onnxparity", "lint", b], 2, r"parity\.json" + NOT_REG))
    b = bundle(d / "fixture", None)
    fifo(b / "test_data_set_0" / "input_0.pb")
    out.append(case("fifo_as_fixture", ["onnxparity", "check", b], 2, r"input_0\.pb" + NOT_REG))
    b = bundle(d / "gate", None)
    out.append(case("fifo_as_gate_criteria", ["onnxparity", "gate", b, "--criteria", fifo(d / "c.json")], 3,
                    r"c\.json" + NOT_REG, timeout=5))
    return out


def c_npz_methods(d):
    out = []
    for cid, off, value, regex in (("npz_member_bzip2", (8, 10), 12, r"compression method 12"),
                                   ("npz_member_encrypted", (6, 8), 1, r"is encrypted")):
        buf = zip_with([("x.npy", npy_f4())])
        for sig, at in ((b"PK\x03\x04", off[0]), (b"PK\x01\x02", off[1])):
            struct.pack_into("<H", buf, buf.find(sig) + at, value)
        out.append(npz_case(cid, d / cid, buf, 2, r"t\.npz: npz\.member: 'x\.npy' .*" + regex))
    return out


def c_output_is_directory(d):
    p = w(d / "t.npy", npy_f4())
    r = w(d / "r.json", json.dumps(check_doc("y")))
    (d / "out.pb").mkdir()
    (d / "r.html").mkdir()
    # the folder stays; no temporary file ("NAME.tmp.XXXXXX") may be left beside it
    return [case("convert_output_is_directory", ["onnxparity", "convert", p, d / "out.pb"], 2,
                 r"out\.pb: is a folder, not a file", absent=[d / "out.pb.tmp"]),
            case("report_output_is_directory", ["onnxparity", "report", r, "--html", d / "r.html"], 2,
                 r"r\.html: is a folder, not a file", absent=[d / "r.html.tmp"])]


def c_testdata_index_past_2_64(d):
    b = bundle(d)
    f = b / "test_data_set_0" / "input_0.pb"
    shutil.copy(f, f.with_name("input_99999999999999999999999.pb"))
    return case("testdata_input_index_past_2_64", ["onnxparity", "check", b, "--format", "json"], 0, None,
                valid=[{"path": "-", "kind": "json"}], needs_ort=True)


# --- issue 15: outputs never destroy inputs; strict JSON; strict numbers ------------

CHECK_DOC = json.dumps(check_doc("y"))
SAME = r"is the same file as '.*', which this command reads"
INSIDE = r"is inside the fixture folder '.*test_data_set_0', which this command reads"


def c_output_onto_input(d):
    """Every output flag aimed at a file the command reads: exit 2, one line
    naming both paths, the input unchanged, no temporary beside it."""
    b = bundle(d)
    mdl, out0 = b / "model.onnx", b / "test_data_set_0" / "output_0.pb"
    in0 = b / "test_data_set_0" / "input_0.pb"
    new = b / "test_data_set_0" / "report.html"
    crit = w(d / "crit.json", json.dumps(CRIT))
    doc = w(d / "doc.json", json.dumps(check_doc("y")))
    ib = d / "ib"
    shutil.copytree(HEALTHY, ib)  # with intermediates, for bisect
    ib_mdl = ib / "model.onnx"
    run_in = d / "s" / "output_0.pb"
    run_in.parent.mkdir()
    shutil.copy(in0, run_in)
    cases = []
    for flag in ("--junit", "--html", "--sarif", "--summary"):  # --summary appends: no less harm
        cases.append(case(f"check_{flag[2:]}_onto_fixture_output", ["onnxparity", "check", b, flag, out0], 2,
                          r"output_0\.pb: " + SAME, unchanged=[out0], needs_ort=True))
        cases.append(case(f"check_{flag[2:]}_onto_model", ["onnxparity", "check", b, flag, mdl], 2,
                          r"model\.onnx: " + SAME, unchanged=[mdl], needs_ort=True))
    cases += [
        case("check_html_new_file_in_fixture_folder", ["onnxparity", "check", b, "--html", new], 2,
             r"report\.html: " + INSIDE, absent=[new], needs_ort=True),
        case("check_save_optimized_onto_model", ["onnxparity", "check", b, "--save-optimized", mdl], 2,
             r"model\.onnx: " + SAME, unchanged=[mdl], needs_ort=True),
        case("check_save_optimized_onto_fixture", ["onnxparity", "check", b, "--save-optimized", in0], 2,
             r"input_0\.pb: (" + SAME + "|" + INSIDE + ")", unchanged=[in0], needs_ort=True),
        case("gate_junit_onto_criteria", ["onnxparity", "gate", b, "--criteria", crit, "--junit", crit], 2,
             r"crit\.json: " + SAME, unchanged=[crit], needs_ort=True),
        case("gate_summary_onto_criteria", ["onnxparity", "gate", b, "--criteria", crit, "--summary", crit], 2,
             r"crit\.json: " + SAME, unchanged=[crit], needs_ort=True),
        case("check_summary_new_file_in_fixture_folder",
             ["onnxparity", "check", b, "--summary", b / "test_data_set_0" / "summary.md"], 2,
             r"summary\.md: " + INSIDE, absent=[b / "test_data_set_0" / "summary.md"], needs_ort=True),
        case("gate_record_criteria_onto_model", ["onnxparity", "gate", b, "--criteria", mdl, "--record"], 2,
             r"model\.onnx: " + SAME, unchanged=[mdl], needs_ort=True),
        case("bisect_html_onto_model", ["onnxparity", "bisect", ib, "--html", ib_mdl], 2,
             r"model\.onnx: " + SAME, unchanged=[ib_mdl], needs_ort=True),
        case("diagnose_html_onto_fixture", ["onnxparity", "diagnose", b, "--no-sweep", "--no-bisect", "--html", in0],
             2, r"input_0\.pb: " + SAME, unchanged=[in0], needs_ort=True),
        case("report_html_onto_its_input", ["onnxparity", "report", doc, "--html", doc], 2,
             r"doc\.json: " + SAME, unchanged=[doc]),
        case("convert_onto_its_input", ["onnxparity", "convert", in0, in0], 2,
             r"input_0\.pb: " + SAME, unchanged=[in0]),
        case("expose_onto_its_model", ["onnxparity", "expose", mdl, mdl, "--all"], 2,
             r"model\.onnx: " + SAME, unchanged=[mdl]),
        # run reads its input from S/output_0.pb and would save output 0 there
        case("run_save_onto_its_input",
             ["onnxparity", "run", mdl, "--input", f"image={run_in}", "--save", run_in.parent, "--save-format", "pb"],
             2, r"output_0\.pb: " + SAME, unchanged=[run_in], needs_ort=True),
    ]
    return cases


def c_output_onto_input_by_link(d):
    """The same file under another name (a symlink, a hard link): by inode."""
    t = w(d / "t.npy", npy_f4())
    os.symlink("t.npy", d / "alias.npy")
    os.link(t, d / "hard.npy")
    return [case("convert_onto_input_via_symlink", ["onnxparity", "convert", t, d / "alias.npy"], 2,
                 r"alias\.npy: " + SAME, unchanged=[t]),
            case("convert_onto_input_via_hard_link", ["onnxparity", "convert", t, d / "hard.npy"], 2,
                 r"hard\.npy: " + SAME, unchanged=[t])]


def c_output_special_files(d):
    """A socket is refused; a character device is written in place (never
    renamed over: /dev/null stays a device).  FIFOs: tests/py/test_outputs.py."""
    t = w(d / "t.npy", npy_f4())
    doc = w(d / "doc.json", CHECK_DOC)
    s = d / "sock.npy"
    sk = socket.socket(socket.AF_UNIX)
    sk.bind(str(s))
    sk.close()
    return [case("convert_output_is_socket", ["onnxparity", "convert", t, s], 2,
                 r"sock\.npy: is not a regular file, a character device or a FIFO"),
            case("report_html_dev_null", ["onnxparity", "report", doc, "--html", "/dev/null"], 0, None)]


def c_sweep_save_optimized_file(d):
    b = bundle(d)
    f = w(d / "opt.onnx", b"not a folder")
    return case("sweep_save_optimized_is_a_file", ["onnxparity", "sweep", b, "--once", "--save-optimized", f], 2,
                r"--save-optimized wants a folder; '.*opt\.onnx' is a file", unchanged=[f], needs_ort=True)


NEW_DIR = r"exists \(%s\); an output folder must be new: nothing is written into an existing folder or through a link"
INSIDE_READ = r"is inside the folder '.*%s', which this command reads; refusing to write there"
def c_save_repro(d):
    """Issue 36: --save-repro makes a new folder or nothing: an existing
    folder (the user's model.onnx in it), an empty one, a file, a symlink to
    a folder or a dangling one, a path inside the bundle, a fixture folder or
    a --data folder are refused before anything runs (exit 2, the path
    named), nothing written there nor by --html.  The bundle is
    examples/training: bisect finds a local divergence there and, before
    the rule, wrote its reproducer into each of these paths."""
    b = d / "bundle"
    shutil.copytree(ROOT / "examples" / "training", b)
    data = d / "data"
    shutil.copytree(ROOT / "examples" / "training", data)
    full = w(d / "full" / "model.onnx", b"the user's own model")
    empty = d / "empty"
    empty.mkdir()
    other = w(d / "other" / "model.onnx", b"another folder's model")
    os.symlink("other", d / "link")
    os.symlink("made-through-link", d / "dangling")
    f = w(d / "file", b"a file")
    html = d / "report.html"
    bis = ["onnxparity", "bisect", b, "--save-repro"]
    made = ("README.md", "model.onnx", "test_data_set_0")
    cases = [
        case("bisect_save_repro_existing_folder", bis + [full.parent, "--html", html], 2,
             r"full: " + NEW_DIR % "a folder", unchanged=[full],
             absent=[full.parent / "README.md", full.parent / "test_data_set_0", html], needs_ort=True),
        case("bisect_save_repro_empty_folder", bis + [empty], 2, r"empty: " + NEW_DIR % "a folder",
             absent=[empty / m for m in made], needs_ort=True),
        case("bisect_save_repro_is_a_file", bis + [f], 2, r"file: " + NEW_DIR % "a file", unchanged=[f],
             needs_ort=True),
        case("bisect_save_repro_symlink_to_folder", bis + [d / "link", "--format", "json"], 2,
             r"link: " + NEW_DIR % "a symbolic link", unchanged=[other],
             absent=[other.parent / "README.md", other.parent / "test_data_set_0"], needs_ort=True),
        case("bisect_save_repro_dangling_symlink", bis + [d / "dangling"], 2,
             r"dangling: " + NEW_DIR % "a symbolic link", absent=[d / "made-through-link"], needs_ort=True),
        case("bisect_save_repro_inside_fixture_folder", bis + [b / "test_data_set_0" / "repro"], 2,
             r"repro: " + INSIDE_READ % "bundle", absent=[b / "test_data_set_0" / "repro"], needs_ort=True),
        case("bisect_save_repro_inside_bundle", bis + [f"{b}/repro/"], 2,
             r"repro/: " + INSIDE_READ % "bundle", absent=[b / "repro"], needs_ort=True),
        case("bisect_save_repro_inside_data_folder",
             ["onnxparity", "bisect", "--model", data / "model.onnx", "--data", data / "test_data_set_0",
              "--save-repro", data / "test_data_set_0" / "repro"], 2,
             r"repro: " + INSIDE_READ % "test_data_set_0", absent=[data / "test_data_set_0" / "repro"],
             needs_ort=True),
        case("diagnose_save_repro_existing_folder",
             ["onnxparity", "diagnose", b, "--no-sweep", "--save-repro", full.parent], 2,
             r"full: " + NEW_DIR % "a folder", unchanged=[full], absent=[full.parent / "README.md"],
             needs_ort=True),
        case("diagnose_save_repro_symlink_to_folder",
             ["onnxparity", "diagnose", b, "--no-sweep", "--save-repro", d / "link"], 2,
             r"link: " + NEW_DIR % "a symbolic link", unchanged=[other],
             absent=[other.parent / "README.md"], needs_ort=True),
    ]
    return cases


def c_json_trailing_documents(d):
    """What `>>` leaves: a second document after the first; NUL bytes; text."""
    fail = check_doc("y")
    fail["verdict"] = "fail"
    two = CHECK_DOC + "\n" + json.dumps(fail) + "\n"
    m = w(d / "m.json", two)
    r = w(d / "r.json", two)
    b = bundle(d / "p1", json.dumps({"schema": "onnxparity.capture/1"}) + "\n" +
               json.dumps({"schema": "onnxparity.capture/1", "training": {"any": True}}))
    b2 = bundle(d / "p2", json.dumps({"schema": "onnxparity.capture/1"}).encode() + b"\0" * (1 << 20))
    h = d / "r.html"
    return [
        case("merge_second_document", ["onnxparity", "merge", m], 3, r"m\.json: at byte \d+: not valid JSON"),
        case("report_second_document", ["onnxparity", "report", r, "--html", h], 3,
             r"r\.json: at byte \d+: not a JSON document", absent=[h]),
        case("parity_json_second_document", ["onnxparity", "lint", b], 3,
             r"parity\.json: at byte \d+: not valid JSON"),
        case("parity_json_nul_bytes_after", ["onnxparity", "lint", b2], 3,
             r"parity\.json: at byte \d+: not valid JSON"),
        gate("criteria_text_after_object", d / "g", json.dumps(CRIT) + " trailing", 2,
             r"c\.json: at byte \d+: not valid JSON"),
    ]


def c_json_duplicate_keys(d):
    dup_crit = json.dumps(CRIT).replace('"fixtures": 3', '"fixtures": 3, "fixtures": 1')
    dup_doc = CHECK_DOC.replace('"verdict": "pass"', '"verdict": "fail", "verdict": "pass"')
    m = w(d / "m.json", dup_doc)
    r = w(d / "r.json", dup_doc)
    b = bundle(d / "p", '{"schema": "onnxparity.capture/1", "deterministic": true, "deterministic": false}')
    h = d / "r.html"
    return [
        gate("criteria_duplicate_key", d / "g", dup_crit, 2, r"c\.json: at byte \d+: not valid JSON: duplicate"),
        case("merge_duplicate_key", ["onnxparity", "merge", m], 3, r"m\.json: at byte \d+: not valid JSON: duplicate"),
        case("report_duplicate_key", ["onnxparity", "report", r, "--html", h], 3,
             r"r\.json: at byte \d+: not a JSON document of onnxparity: duplicate", absent=[h]),
        case("parity_json_duplicate_key", ["onnxparity", "lint", b], 3,
             r"parity\.json: at byte \d+: not valid JSON.*duplicate"),
    ]


def c_json_nul_escapes(d):
    crit_schema = json.dumps(CRIT).replace('"onnxparity.criteria/1"', '"onnxparity.criteria/1\\u0000x"')
    crit_name = json.dumps(CRIT).replace('"logits"', '"logits\\u0000other"')
    nul_doc = CHECK_DOC.replace('"onnxparity.check/1"', '"onnxparity.check/1\\u0000"')
    m = w(d / "m.json", nul_doc)
    b = bundle(d / "p", '{"schema": "onnxparity.capture/1\\u0000"}')
    return [
        gate("criteria_nul_in_schema", d / "g1", crit_schema, 2, r"c\.json: at byte \d+: .*\\u0000 \(NUL\)"),
        gate("criteria_nul_in_output_name", d / "g2", crit_name, 2, r"c\.json: at byte \d+: .*\\u0000 \(NUL\)"),
        case("merge_nul_in_schema", ["onnxparity", "merge", m], 3, r"m\.json: at byte \d+: .*\\u0000 \(NUL\)"),
        case("parity_json_nul_in_string", ["onnxparity", "lint", b], 3, r"parity\.json: at byte \d+: .*\\u0000"),
    ]


def c_intermediates_index_strict(d):
    """bisect's intermediates index: a second document and a duplicate key."""
    out = []
    for cid, text in (("bisect_index_second_document", '{"entries": []}\n{"entries": []}'),
                      ("bisect_index_duplicate_key", '{"entries": [], "entries": []}')):
        ib = d / cid
        shutil.copytree(HEALTHY, ib)
        idx = ib / "test_data_set_0" / "intermediates" / "index.json"
        idx.write_text(text)
        out.append(case(cid, ["onnxparity", "bisect", ib], 3, r"index\.json: at byte \d+: not valid JSON",
                        needs_ort=True))
    return out


def c_numeric_options(d):
    """NaN, infinities, overflow, leading space and trailing text: refused, one line."""
    b = bundle(d)
    t = w(d / "t.npy", npy_f4())
    chk = ["onnxparity", "check", b]
    bad = [
        ("tol_nan_atol", chk + ["--tol", "logits=0,nan"], r"--tol wants NAME=RTOL,ATOL, not 'logits=0,nan'"),
        ("tol_inf_rtol", chk + ["--tol", "logits=inf,0"], r"--tol wants NAME=RTOL,ATOL"),
        ("tol_trailing_text", chk + ["--tol", "logits=0,0x"], r"--tol wants NAME=RTOL,ATOL"),
        ("rtol_nan", chk + ["--rtol", "nan"], r"--rtol wants a finite number >= 0, not 'nan'"),
        ("atol_overflow", chk + ["--atol", "1e999"], r"--atol wants a finite number >= 0, not '1e999'"),
        ("rtol_leading_space", chk + ["--rtol", " 1"], r"--rtol wants a finite number >= 0"),
        ("top_k_past_int", chk + ["--top-k", "4294967301"], r"--top-k wants an integer from 1 to 2147483647"),
        ("top_k_negative", chk + ["--top-k", "-1"], r"--top-k wants an integer from 1 to 2147483647, not '-1'"),
        ("threads_past_int", chk + ["--threads", "4294967297"], r"--threads wants an integer from 0 to 1024"),
        ("threads_past_limit", chk + ["--threads", "100000"], r"--threads wants an integer from 0 to 1024"),
        ("inter_threads_past_limit", chk + ["--inter-threads", "1025"], r"--inter-threads wants an integer from 0 to 1024"),
        ("threads_trailing", chk + ["--threads", "2x"], r"--threads wants an integer"),
        ("shard_leading_space", chk + ["--shard", " 0/2"], r"--shard wants I/N with 0 <= I < N, not ' 0/2'"),
        ("shard_past_long", chk + ["--shard", "0/18446744073709551617"], r"--shard wants I/N with 0 <= I < N"),
        ("shard_trailing", chk + ["--shard", "0/2x"], r"--shard wants I/N with 0 <= I < N"),
        ("timeout_nan", chk + ["--timeout", "nan"], r"--timeout wants a finite number >= 0, not 'nan'"),
        ("compare_rtol_inf", ["onnxparity", "compare", t, t, "--rtol", "inf"], r"--rtol wants a finite number"),
        ("bisect_chunk_overflow", ["onnxparity", "bisect", b, "--chunk", "99999999999999999999"],
         r"--chunk wants an integer from 0 to 2147483647"),
        ("gate_margin_nan", ["onnxparity", "gate", b, "--criteria", d / "c.json", "--margin", "nan"],
         r"--margin wants a finite number >= 0, not 'nan'"),
        ("max_memory_leading_space", ["onnxparity", "inspect", b / "model.onnx", "--max-memory", " 1G"],
         r"--max-memory wants a size"),
    ]
    return [case("option_" + cid, argv, 2, "^onnxparity [a-z]+: " + rx) for cid, argv, rx in bad]


def c_summary_special_files(d):
    """--summary (issue 36): the append never waits (a FIFO nobody reads is
    refused at once, where open() blocked forever) and a failed write says so
    in one line naming the file (/dev/full exited 3 without a word)."""
    b = bundle(d)
    crit = w(d / "crit.json", json.dumps(CRIT))
    fifo = d / "s.fifo"
    os.mkfifo(fifo)
    NO_READER = r"s\.fifo: cannot open for appending: a FIFO that no process reads"
    FULL = r"/dev/full: cannot append the summary: No space left on device"
    gate = ["onnxparity", "gate", b, "--criteria", crit, "--no-bisect"]
    return [case("check_summary_fifo_without_reader", ["onnxparity", "check", b, "--summary", fifo], 3, NO_READER,
                 needs_ort=True, timeout=20),
            case("gate_summary_fifo_without_reader", gate + ["--summary", fifo], 3, NO_READER,
                 needs_ort=True, timeout=20, unchanged=[crit]),
            case("check_summary_dev_full", ["onnxparity", "check", b, "--summary", "/dev/full"], 3, FULL,
                 needs_ort=True),
            case("gate_summary_dev_full", gate + ["--summary", "/dev/full"], 3, FULL, needs_ort=True)]


def c_criteria_environment_types(d):
    """Criteria environment fields of the wrong type (issue 36): a number for
    a version, a list for a provider, 2.5 or "x" for an opset, a negative
    thread count, a session config that is not a list of strings were read
    as drift or as no drift; each is exit 2 naming the field."""
    out = []
    for i, (field, value, why) in enumerate([
            ("ort_version", 1.29, "not a string"), ("provider", ["cpu"], "not a string"),
            ("opset", 2.5, "not a whole number >= 0"), ("opset", "x", "not a whole number >= 0"),
            ("intra_threads", -1, "not a whole number >= 0"),
            ("session_config", [1], "not an array of strings"),
            ("session_config", "a=1", "not an array of strings")]):
        crit = dict(CRIT, environment={field: value})
        out.append(gate(f"criteria_env_{field}_{i}", d / f"env{i}", json.dumps(crit), 2,
                        rf"c\.json: environment\.{field}: {why}"))
    return out


def c_merge_typed_shards(d):
    """merge reads its shards typed, as diff and report do (issue 36): a
    max_abs of "x", a pass of "yes" in a shard are exit 2 naming the member
    (they were merged as "not measured" and as "failed")."""
    out = []
    for i, (path, value, rx) in enumerate([
            (["fixtures", 0, "outputs", 0, "max_abs"], "x", r"fixtures\[0\]\.outputs\[0\]\.max_abs"),
            (["fixtures", 0, "outputs", 0, "pass"], "yes", r"fixtures\[0\]\.outputs\[0\]\.pass")]):
        docs = []
        for k in range(2):
            doc = check_doc("y")
            doc["environment"]["model_sha256"] = "0" * 64
            doc["shard"] = {"index": k, "count": 2, "fixtures_total": 2}
            docs.append(w(d / f"m{i}_{k}.json", json.dumps(_typed(doc, path, value) if k else doc)))
        out.append(case(f"merge_shard_typed_{i}", ["onnxparity", "merge", *docs], 2,
                        rf"m{i}_1\.json: {rx}"))
    return out


def c_criteria_special_files(d):
    """gate --record's --criteria (issue 36): the old criteria are read only
    from a regular file (a FIFO blocked in open(), /dev/full was read for
    ever), and the new ones are written in place to a FIFO only when a
    process reads it, at once refused otherwise; /dev/full says why."""
    b = bundle(d)
    fifo = d / "c.fifo"
    os.mkfifo(fifo)
    rec = ["onnxparity", "gate", b, "--record"]
    return [case("gate_record_criteria_fifo_without_reader", rec + ["--criteria", fifo], 3,
                 r"c\.fifo: cannot open: a FIFO that no process reads", needs_ort=True, timeout=20),
            case("gate_record_criteria_dev_full", rec + ["--criteria", "/dev/full"], 3,
                 r"/dev/full: cannot write: No space left on device", needs_ort=True, timeout=20)]


def _typed(doc, path, value):
    """doc with the member at path (a list of keys and indices) set to value,
    or removed when value is DROP."""
    doc = json.loads(json.dumps(doc))
    at = doc
    for k in path[:-1]:
        at = at[k]
    if value is DROP:
        del at[path[-1]]
    else:
        at[path[-1]] = value
    return doc


DROP = object()
OUT0 = ["fixtures", 0, "outputs", 0]


def c_diff_typed_members(d):
    """diff reads every member it compares with the type check-1.json gives
    it (issue 36): a max_abs of "x" or [] counted as unchanged, -1 as
    improved, a pass of "yes" as a failure; each is now exit 2 naming the
    file and the member's path.  The good side is OLD; the last case puts
    the bad member in OLD to show the file named is the one that holds it."""
    good = check_doc("y")
    good["fixtures"][0]["outputs"][0]["judgment"] = {"verdict": "within-tolerance", "pass": True,
                                                     "envelope": {"max_abs": 1e-6}}
    good["fixtures"][0]["outputs"][0]["topk"] = {"k": 1, "rows": 2, "top1_agree": 2}
    old = w(d / "old.json", json.dumps(good))
    NUM = r"not a number >= 0 or null"
    bad = [
        ("max_abs_string", OUT0 + ["max_abs"], "x", r"max_abs: " + NUM),
        ("max_abs_array", OUT0 + ["max_abs"], [], r"max_abs: " + NUM),
        ("max_abs_negative", OUT0 + ["max_abs"], -1, r"max_abs: " + NUM),
        ("max_abs_minus_inf", OUT0 + ["max_abs"], "-inf", r"max_abs: " + NUM),
        ("max_rel_object", OUT0 + ["max_rel"], {}, r"max_rel: " + NUM),
        ("mismatch_frac_over_one", OUT0 + ["mismatch_frac"], 1.5, r"mismatch_frac: not a number from 0 to 1"),
        ("pass_string", OUT0 + ["pass"], "yes", r"pass: not true or false"),
        ("pass_missing", OUT0 + ["pass"], DROP, r"pass: missing"),
        ("name_number", OUT0 + ["name"], 7, r"name: not a string"),
        ("envelope_negative", OUT0 + ["judgment", "envelope", "max_abs"], -2,
         r"judgment\.envelope\.max_abs: " + NUM),
        ("topk_rows_string", OUT0 + ["topk", "rows"], "2", r"topk\.rows: not a whole number >= 0"),
        ("top1_agree_over_rows", OUT0 + ["topk", "top1_agree"], 3, r"topk\.top1_agree: more than topk\.rows"),
        ("outputs_object", ["fixtures", 0, "outputs"], {"name": "y"}, r"fixtures\[0\]\.outputs: not an array"),
        ("env_threads_string", ["environment", "intra_threads"], "4",
         r"environment\.intra_threads: not a whole number >= 0"),
        ("env_session_config_number", ["environment", "session_config"], 3,
         r"environment\.session_config: not an array"),
    ]
    out = []
    for cid, path, value, rx in bad:
        new = w(d / cid / "new.json", json.dumps(_typed(good, path, value)))
        where = r"new\.json: " + (r"fixtures\[0\]\.outputs\[0\]\." if path[:4] == OUT0 else "")
        out.append(case("diff_" + cid, ["onnxparity", "diff", old, new], 2, where + rx))
    worse = w(d / "old_bad" / "old.json", json.dumps(_typed(good, OUT0 + ["pass"], "yes")))
    out.append(case("diff_old_side_pass_string", ["onnxparity", "diff", worse, old], 2,
                    r"old_bad/old\.json: fixtures\[0\]\.outputs\[0\]\.pass: not true or false"))
    return out


def c_report_typed_members(d):
    """report renders only documents whose members have their schema's
    types (issue 36): a pass of "yes" showed as a failure, a max_abs of []
    as a dash, a fixture status 5 as nothing.  Exit 2 naming the file and
    the member's path, no page written (also when the bad document is the
    second of two).  Each case changes one member of a document that renders."""
    chk = check_doc("y")
    bis = {"schema": "onnxparity.bisect/1", "verdict": "diverges", "model": "m",
           "summary": {"values_exposed": 2, "values_compared": 2, "values_failed": 1},
           "first_divergent": {"node": "n", "op_type": "Add", "output": "v", "index": 1, "max_abs": 0.5},
           "curve": [{"value": "u", "node": "a", "op_type": "Relu", "max_abs": 0, "pass": True},
                     {"value": "v", "node": "n", "op_type": "Add", "max_abs": 0.5, "pass": False}]}
    level = {"level": "all", "ran": True, "pass": False,
             "outputs": [{"name": "y", "max_abs": 0.5, "pass": False}]}
    swp = {"schema": "onnxparity.sweep/1", "verdict": "fail", "model": "m",
           "sweep": {"levels": [level], "first_failing_level": "all",
                     "optimizer_search": {"searched": False, "culprit": None, "sessions": 0}}}
    dia = {"schema": "onnxparity.diagnose/1", "verdict": "fail", "model": "m", "causes": [],
           "first_divergent": {"node": "n", "op_type": "Add", "output": "v", "local": "local"},
           "probes": {"determinism": {"runs": 2, "deterministic": True}}, "sweep": swp["sweep"]}
    gat = {"schema": "onnxparity.gate/1", "verdict": "fail", "model": "m", "criteria": "c.json",
           "environment_recorded": True, "env_drift_policy": "warn", "environment_drift": [],
           "causes": [], "first_divergent": None,
           "regressions": [{"fixture": "f", "output": "y", "check": "max_abs", "value": 0.5, "limit": 0.1,
                            "message": "m"}],
           "checks": [{"output": "y", "check": "max_abs", "measured": 0.5, "limit": 0.1, "bound": "max",
                       "pass": False}],
           "summary": {"fixtures": 1, "outputs": 1, "regressions": 1}}
    h = d / "r.html"
    out = []
    bad = [
        ("pass_string", chk, OUT0 + ["pass"], "yes", OUT0, r"pass: not true or false"),
        ("max_abs_array", chk, OUT0 + ["max_abs"], [], OUT0, r"max_abs: not a number >= 0 or null"),
        ("negative_count", chk, OUT0 + ["mismatches"], -1, OUT0, r"mismatches: not a whole number >= 0"),
        ("fraction_dim", chk, OUT0 + ["shape"], [2, 2.5], OUT0, r"shape\[1\]: not a whole number"),
        ("histogram_string", chk, OUT0 + ["histogram"], "12 bins", OUT0, r"histogram: not an array"),
        ("status_number", chk, ["fixtures", 0, "status"], 5, [], r"fixtures\[0\]\.status: not a string"),
        ("cause_evidence_string", chk, ["causes", 0, "evidence"], "e", [], r"causes\[0\]\.evidence: not an array"),
        ("verdict_number", chk, ["verdict"], 1, [], r"verdict: not a string"),
        ("fixtures_object", chk, ["fixtures"], {}, [], r"fixtures: not an array"),
        ("bisect_curve_pass_string", bis, ["curve", 1, "pass"], "false", [], r"curve\[1\]\.pass: not true or false"),
        ("bisect_curve_negative_error", bis, ["curve", 0, "max_abs"], -1, [],
         r"curve\[0\]\.max_abs: not a number >= 0 or null"),
        ("bisect_summary_fraction", bis, ["summary", "values_compared"], 1.5, [],
         r"summary\.values_compared: not a whole number >= 0"),
        ("sweep_levels_object", swp, ["sweep", "levels"], {"all": level}, [], r"sweep\.levels: not an array"),
        ("sweep_ran_string", swp, ["sweep", "levels", 0, "ran"], "yes", [],
         r"sweep\.levels\[0\]\.ran: not true or false"),
        ("diagnose_probes_list", dia, ["probes"], [{"id": "determinism"}], [], r"probes: not an object or null"),
        ("diagnose_local_number", dia, ["first_divergent", "local"], 1, [],
         r"first_divergent\.local: not a string or an object or null"),
        ("gate_measured_object", gat, ["checks", 0, "measured"], {"v": 1}, [],
         r"checks\[0\]\.measured: not a number or null"),
        ("gate_regressions_count_string", gat, ["summary", "regressions"], "1", [],
         r"summary\.regressions: not a whole number >= 0"),
    ]
    for cid, base, path, value, prefix, rx in bad:
        p = w(d / cid / "r.json", json.dumps(_typed(base, path, value)))
        where = r"r\.json: " + (r"fixtures\[0\]\.outputs\[0\]\." if prefix else "")
        out.append(case("report_" + cid, ["onnxparity", "report", p, "--html", h], 2, where + rx, absent=[h]))
    first = w(d / "first.json", json.dumps(chk))
    second = w(d / "second" / "r.json", json.dumps(_typed(chk, OUT0 + ["pass"], 1)))
    out.append(case("report_second_document_typed", ["onnxparity", "report", first, second, "--html", h], 2,
                    r"second/r\.json: fixtures\[0\]\.outputs\[0\]\.pass: not true or false", absent=[h]))
    return out


CASES = [v for k, v in sorted(globals().items()) if k.startswith("c_") and callable(v)]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_cases.py OUTDIR")
    out = pathlib.Path(sys.argv[1]).resolve()
    out.mkdir(parents=True, exist_ok=True)
    table = []
    for fn in CASES:
        d = out / fn.__name__[2:]
        d.mkdir()
        got = fn(d)
        table.extend(got if isinstance(got, list) else [got])
    ids = [c["id"] for c in table]
    assert len(ids) == len(set(ids)), "duplicate case ids"
    (out / "cases.json").write_text(json.dumps(table, indent=1))
    print(f"{len(table)} cases in {out}")


if __name__ == "__main__":
    main()
