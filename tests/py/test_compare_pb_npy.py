"""Must-show: for every TensorProto under libonnx-testdata, numpy writes
X.npy from onnx.numpy_helper's reading of X.pb; `onnxparity compare X.pb
X.npy` exits 0 for every one, and exits 1 once one element of X.npy is
changed."""
import numpy as np
import onnx
from onnx import numpy_helper

from conftest import run
from test_testdata_read import non_tensor_files


def mutate(arr):
    """A copy with element 0 changed beyond any default tolerance."""
    b = arr.copy().reshape(-1)
    if b.dtype == np.bool_:
        b[0] = not b[0]
    elif b.dtype.kind in "iu":
        b[0] = b[0] + 1 if b[0] != np.iinfo(b.dtype).max else b[0] - 1
    elif b.dtype.kind == "f":
        b[0] = 1.0 if np.isnan(b[0]) else (b[0] + 1 + abs(b[0]) if np.isfinite(b[0]) else 0.0)
    elif b.dtype.kind == "c":
        b[0] = b[0] + 1 + abs(b[0])
    elif b.dtype.kind == "S":  # widen: a fixed-width array would truncate the change
        items = list(b)
        items[0] = items[0] + b"x"
        b = np.array(items, dtype=bytes)
    return b.reshape(arr.shape)


def test_pb_vs_numpy_npy(onnxparity, testdata, tmp_path):
    skip = non_tensor_files()
    pbs = sorted(p for p in testdata.rglob("*.pb") if str(p) not in skip)
    same_fail, changed_pass, skipped, n_changed = [], [], [], 0
    for i, p in enumerate(pbs):
        t = onnx.TensorProto()
        t.ParseFromString(p.read_bytes())
        arr = numpy_helper.to_array(t)
        if arr.dtype.kind in "OU":
            arr = np.array([s if isinstance(s, bytes) else str(s).encode() for s in arr.reshape(-1)],
                           dtype=object).reshape(arr.shape)
            if any(b"\0" in s for s in arr.reshape(-1)):
                skipped.append((p, "a string with a NUL byte: numpy's 'S' dtype cannot hold it"))
                continue
            arr = arr.astype(bytes) if arr.size else np.zeros(arr.shape, dtype="S1")
        npy = tmp_path / f"{i}.npy"
        np.save(npy, arr)
        r = run([onnxparity, "compare", p, npy])
        if r.returncode != 0:
            same_fail.append(f"{p}: exit {r.returncode}: {(r.stderr or r.stdout).strip()[-300:]}")
        if arr.size == 0:
            continue
        np.save(npy, mutate(arr))
        r = run([onnxparity, "compare", p, npy])
        n_changed += 1
        if r.returncode != 1:
            changed_pass.append(f"{p}: exit {r.returncode} after one element changed")
    print(f"\ncompare .pb vs numpy .npy: {len(pbs) - len(skipped)} tensors, {n_changed} mutated")
    for p, why in skipped:
        print(f"  skipped {p}: {why}")
    assert not same_fail, "\n".join(same_fail[:30])
    assert not changed_pass, "\n".join(changed_pass[:30])
    assert len(pbs) - len(skipped) > 3000
