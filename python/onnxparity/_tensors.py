"""Tensors to ONNX TensorProto files, and bitwise comparison."""
import re

import numpy as np
import onnx
import torch
from onnx import numpy_helper

# torch dtypes numpy cannot hold, stored by their bits
_BITS = {torch.bfloat16: (onnx.TensorProto.BFLOAT16, torch.int16)}


def dtype_name(t):
    return str(t.dtype).replace("torch.", "")


def tensor_proto(t, name):
    t = t.detach().cpu().contiguous()
    if t.dtype in _BITS:
        elem, view = _BITS[t.dtype]
        tp = onnx.TensorProto()
        tp.name = name
        tp.data_type = elem
        tp.dims.extend(t.shape)
        tp.raw_data = t.view(view).numpy().tobytes()
        return tp
    return numpy_helper.from_array(t.numpy(), name)


def write_pb(path, t, name):
    path.write_bytes(tensor_proto(t, name).SerializeToString())


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
