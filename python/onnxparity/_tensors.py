"""Tensors to ONNX TensorProto files, and bitwise comparison."""
import re
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper

# torch dtypes numpy cannot hold, stored by their bits
_BITS = {torch.bfloat16: (onnx.TensorProto.BFLOAT16, torch.int16)}
# the float8 types ONNX defines (TensorProto 17-20; numbered here, as onnx
# before 1.14 names none), where this torch has them: one byte, its code
_FLOAT8 = {getattr(torch, n): elem for n, elem in (("float8_e4m3fn", 17), ("float8_e4m3fnuz", 18),
                                                    ("float8_e5m2", 19), ("float8_e5m2fnuz", 20))
           if hasattr(torch, n)}
_BITS.update({dt: (elem, torch.uint8) for dt, elem in _FLOAT8.items()})


def writable(dtype):
    """Whether a tensor of ``dtype`` can become a .pb the tool compares: the
    four float8 types of ONNX can (their codes); the others (float8_e8m0fnu,
    float4, bit-packed ones) have no ONNX type the tool compares."""
    if dtype in _FLOAT8:
        return True
    return not re.match(r"(float8|float4|bits|u?int[1-7]$)", str(dtype).replace("torch.", ""))


def dtype_name(t):
    return str(t.dtype).replace("torch.", "")


def tensor_proto(t, name):
    t = t.detach().cpu().contiguous()
    if t.dtype in _BITS:
        elem, view = _BITS[t.dtype]
        tp = onnx.TensorProto()
        if name:  # as from_array: an empty name stays unset
            tp.name = name
        tp.data_type = elem
        tp.dims.extend(t.shape)
        tp.raw_data = t.view(view).numpy().tobytes()
        return tp
    return numpy_helper.from_array(t.numpy(), name)


# TensorProto.DataType of the torch dtypes whose raw_data is the tensor's
# memory as it is (bfloat16 included: its bits)
_ELEM = {torch.float32: onnx.TensorProto.FLOAT, torch.uint8: onnx.TensorProto.UINT8,
         torch.int8: onnx.TensorProto.INT8, torch.int16: onnx.TensorProto.INT16,
         torch.int32: onnx.TensorProto.INT32, torch.int64: onnx.TensorProto.INT64,
         torch.bool: onnx.TensorProto.BOOL, torch.float16: onnx.TensorProto.FLOAT16,
         torch.float64: onnx.TensorProto.DOUBLE, torch.bfloat16: onnx.TensorProto.BFLOAT16,
         **_FLOAT8}


def _varint(n):
    out = bytearray()
    while True:
        low = n & 0x7F
        n >>= 7
        if not n:
            out.append(low)
            return bytes(out)
        out.append(low | 0x80)


def _raw_view(t):
    """The bytes of contiguous CPU tensor ``t`` as a flat uint8 array (no copy)."""
    if t.dtype in _BITS:
        t = t.view(_BITS[t.dtype][1])
    return t.numpy().reshape(-1).view(np.uint8)


def write_pb(path, t, name):
    """Write ``t`` as a TensorProto file: the bytes numpy_helper.from_array
    + SerializeToString give (dims, data_type, name, raw_data, in field
    order), written here field by field so the tensor's memory goes to the
    file without two copies through protobuf (the capture writes one file
    per intermediate per fixture).  Other dtypes, or a big-endian host, go
    through tensor_proto."""
    t = t.detach().cpu().contiguous()
    elem = _ELEM.get(t.dtype)
    if elem is None or sys.byteorder != "little":
        path.write_bytes(tensor_proto(t, name).SerializeToString())
        return
    raw = _raw_view(t)
    label = name.encode("utf-8")
    head = b"".join(b"\x08" + _varint(int(d)) for d in t.shape)  # 1: dims (unpacked, proto2)
    head += b"\x10" + _varint(elem)                                # 2: data_type
    if label:  # from_array leaves an empty name unset
        head += b"\x42" + _varint(len(label)) + label              # 8: name
    head += b"\x4a" + _varint(raw.nbytes)                          # 9: raw_data
    with open(path, "wb") as f:
        f.write(head)
        f.write(raw.data)


def _bytes(t):
    t = t.detach().cpu().contiguous()
    if t.dtype in _BITS:
        t = t.view(_BITS[t.dtype][1])
    return np.ascontiguousarray(t.numpy()).reshape(-1).view(np.uint8)


# an integer dtype of each element size: torch.equal of two such views
# compares bits (the snapshot compares the whole state after every forward)
_INT_OF_SIZE = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def bitwise_equal(a, b):
    """Same dtype, same shape, same bits (NaN equals NaN of the same payload)."""
    if a.dtype != b.dtype or tuple(a.shape) != tuple(b.shape):
        return False
    ia, ib = a.detach().cpu().contiguous(), b.detach().cpu().contiguous()
    as_int = _INT_OF_SIZE.get(ia.element_size())
    if as_int is not None and not ia.is_complex() and not ia.is_quantized:
        return bool(torch.equal(ia.view(as_int), ib.view(as_int)))
    return bool(np.array_equal(_bytes(ia), _bytes(ib)))


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_stem(name, taken):
    """A file-system-safe, unique (case-insensitively) stem for an ONNX value name."""
    stem = _UNSAFE.sub("_", name.strip("/")).strip("._") or "value"
    if len(stem) > 120:
        import hashlib
        stem = stem[:100] + "_" + hashlib.sha256(name.encode()).hexdigest()[:12]
    cand, i = stem, 1
    while cand.lower() in taken:
        i += 1
        cand = f"{stem}-{i}"
    taken.add(cand.lower())
    return cand
