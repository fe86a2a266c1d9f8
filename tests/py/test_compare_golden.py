"""Must-show: a golden table of hand-picked pairs whose decisions and
metrics follow the documented rule (docs/compare.md) and agree with
numpy.isclose(actual, expected, rtol, atol, equal_nan=True) computed in
float64, which is the same rule for floating point."""
import json
import math

import numpy as np
import pytest

from conftest import run

F32, F64, F16 = np.float32, np.float64, np.float16
I64 = np.iinfo(np.int64)
nan, inf = float("nan"), float("inf")

# (name, expected, actual, dtype_expected, dtype_actual, rtol, atol, pass)
CASES = [
    ("equal", [1.0], [1.0], F32, F32, 1e-4, 1e-5, True),
    ("nan_both", [nan, 1.0], [nan, 1.0], F32, F32, 1e-4, 1e-5, True),
    ("nan_expected_only", [nan], [1.0], F32, F32, 1e-4, 1e-5, False),
    ("nan_actual_only", [1.0], [nan], F32, F32, 1e-4, 1e-5, False),
    ("inf_same", [inf], [inf], F32, F32, 1e-4, 1e-5, True),
    ("neg_inf_same", [-inf], [-inf], F32, F32, 1e-4, 1e-5, True),
    ("inf_opposite", [inf], [-inf], F32, F32, 1e-4, 1e-5, False),
    ("inf_vs_large", [inf], [3e38], F32, F32, 1.0, 1e30, False),
    ("large_vs_inf", [3e38], [inf], F32, F32, 1.0, 1e30, False),
    ("neg_zero", [-0.0], [0.0], F32, F32, 0.0, 0.0, True),
    ("subnormal_vs_zero", [1e-45], [0.0], F32, F32, 1e-4, 1e-5, True),
    ("subnormal_vs_zero_exact", [1e-45], [0.0], F32, F32, 0.0, 0.0, False),
    ("subnormals_equal", [1e-40, -1e-42], [1e-40, -1e-42], F32, F32, 0.0, 0.0, True),
    ("max_opposite", [3e38], [-3e38], F32, F32, 1e-4, 1e-5, False),
    ("zero_expected_small_actual", [0.0], [1e-6], F32, F32, 1e-4, 1e-5, True),
    ("zero_expected_big_actual", [0.0], [1e-4], F32, F32, 1e-4, 1e-5, False),
    ("boundary_exact", [1.0], [1.75], F64, F64, 0.5, 0.25, True),
    ("boundary_just_over", [1.0], [1.7500000001], F64, F64, 0.5, 0.25, False),
    ("relative_ok", [1000.0], [1000.05], F64, F64, 1e-4, 1e-5, True),
    ("relative_fail", [1000.0], [1000.2], F64, F64, 1e-4, 1e-5, False),
    ("asymmetric_rule", [1.0], [2.0], F64, F64, 0.5, 0.5, True),
    ("asymmetric_rule_swapped", [2.0], [1.0], F64, F64, 0.5, 0.0, True),
    ("asymmetric_rule_tight", [1.0], [2.0], F64, F64, 0.5, 0.4, False),
    ("f64_tiny", [1e-300], [2e-300], F64, F64, 0.0, 1e-299, True),
    ("f64_tiny_exact", [1e-300], [2e-300], F64, F64, 0.5, 0.0, False),
    ("f16_close", [1.0, 2.0], [1.0009765625, 2.0], F16, F16, 1e-3, 1e-3, True),
    ("f16_far", [1.0], [1.5], F16, F16, 1e-3, 1e-3, False),
    ("f16_nan", [nan], [nan], F16, F16, 1e-3, 1e-3, True),
    ("f16_inf", [inf], [65504.0], F16, F16, 1e-3, 1e-3, False),
    ("empty", np.zeros((0, 3)), np.zeros((0, 3)), F32, F32, 1e-4, 1e-5, True),
    ("scalar_equal", 2.5, 2.5, F32, F32, 0.0, 0.0, True),
    ("scalar_differs", 2.5, 2.75, F32, F32, 1e-4, 1e-5, False),
    ("shape_differs", [1.0, 2.0], [1.0, 2.0, 3.0], F32, F32, 1e-4, 1e-5, False),
    ("rank_differs", [[1.0, 2.0]], [1.0, 2.0], F32, F32, 1e-4, 1e-5, False),
    ("dtype_differs", [1.0], [1.0], F32, F64, 1e-4, 1e-5, False),
    ("int64_extremes_equal", [I64.max, I64.min], [I64.max, I64.min], np.int64, np.int64, 0, 0, True),
    ("int64_max_off_by_one", [I64.max], [I64.max - 1], np.int64, np.int64, 1.0, 10.0, False),
    ("int64_min_vs_max", [I64.min], [I64.max], np.int64, np.int64, 0, 0, False),
    ("int32_equal", [1, -2, 3], [1, -2, 3], np.int32, np.int32, 0, 0, True),
    ("uint8_differs", [255], [0], np.uint8, np.uint8, 0, 0, False),
    ("uint64_big", [2**64 - 1], [2**64 - 1], np.uint64, np.uint64, 0, 0, True),
    ("bool_equal", [True, False], [True, False], np.bool_, np.bool_, 0, 0, True),
    ("bool_differs", [True], [False], np.bool_, np.bool_, 0, 0, False),
    ("int_tolerance_ignored", [10], [11], np.int32, np.int32, 1.0, 5.0, False),
    ("mixed_mismatch_count", [1.0, nan, inf, 0.0, 5.0], [1.0, 2.0, inf, 1.0, 5.0], F32, F32, 1e-4, 1e-5, False),
]


def write(path, values, dtype):
    arr = np.array(values, dtype=dtype)
    np.save(path, arr)
    return arr


def compare(onnxparity, tmp_path, name, e, a, rtol, atol):
    r = run([onnxparity, "compare", tmp_path / f"{name}_e.npy", tmp_path / f"{name}_a.npy",
             "--rtol", repr(float(rtol)), "--atol", repr(float(atol)), "--format", "json"])
    assert r.returncode in (0, 1), r.stderr
    doc = json.loads(r.stdout)
    return r.returncode, doc["pairs"][0]


def num(v):
    return {"nan": nan, "inf": inf, "-inf": -inf}.get(v, v) if isinstance(v, str) else v


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_golden(onnxparity, tmp_path, case):
    name, ev, av, de, da, rtol, atol, want = case
    e = write(tmp_path / f"{name}_e.npy", ev, de)
    a = write(tmp_path / f"{name}_a.npy", av, da)
    rc, p = compare(onnxparity, tmp_path, name, e, a, rtol, atol)
    assert p["pass"] is want and rc == (0 if want else 1)
    if e.shape != a.shape or e.dtype != a.dtype:
        assert (not p["shape_ok"]) if e.shape != a.shape else (not p["dtype_ok"])
        return
    assert p["count"] == e.size
    if e.dtype.kind == "f":
        e64, a64 = e.astype(np.float64).ravel(), a.astype(np.float64).ravel()
        close = np.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=True)
        assert p["mismatches"] == int((~close).sum())
        fin = np.isfinite(e64) & np.isfinite(a64)
        d = np.abs(a64[fin] - e64[fin])
        assert num(p["max_abs"]) == (d.max() if d.size else 0.0)
        nz = fin & (e64 != 0)
        rel = np.abs(a64[nz] - e64[nz]) / np.abs(e64[nz])
        assert num(p["max_rel"]) == pytest.approx(rel.max() if rel.size else 0.0, rel=1e-12)
        assert p["nan_matched"] == int((np.isnan(e64) & np.isnan(a64)).sum())
        assert p["nan_mismatch"] == int((np.isnan(e64) ^ np.isnan(a64)).sum())
        if d.size:
            assert num(p["mean_abs"]) == pytest.approx(d.mean(), rel=1e-12)
            assert num(p["needed_atol"]) == pytest.approx(max(0.0, (d - rtol * np.abs(e64[fin])).max()), rel=1e-12, abs=1e-300)
        if not want:
            w = p["worst"]["index"]
            assert not close[w]
    else:
        assert p["mismatches"] == int((e.ravel() != a.ravel()).sum())


def test_random_arrays_agree_with_numpy(onnxparity, tmp_path):
    rng = np.random.default_rng(7)
    for trial in range(6):
        e = rng.standard_normal(5000).astype(F32)
        a = (e + rng.standard_normal(5000).astype(F32) * 10.0 ** -rng.integers(3, 8)).astype(F32)
        a[rng.integers(0, 5000, 5)] = nan
        e[rng.integers(0, 5000, 3)] = nan
        np.save(tmp_path / "e.npy", e)
        np.save(tmp_path / "a.npy", a)
        rc, p = compare(onnxparity, tmp_path, "", e, a, 1e-4, 1e-5) if False else (None, None)
        r = run([onnxparity, "compare", tmp_path / "e.npy", tmp_path / "a.npy", "--format", "json"])
        p = json.loads(r.stdout)["pairs"][0]
        close = np.isclose(a.astype(F64), e.astype(F64), rtol=1e-4, atol=1e-5, equal_nan=True)
        assert p["mismatches"] == int((~close).sum())
        assert p["pass"] == bool(close.all())
        hist = p["histogram"]
        fin = np.isfinite(e) & np.isfinite(a)
        assert sum(hist) == int(fin.sum())
