"""The worker binds an output of 1 MiB or more into shared memory at its
declared shape (src/ort/ort_worker.c, out_shm_make).  When ORT refuses that
buffer (the run's shape is not the declared one) the run is done once more
into ORT's own memory; when a kernel fails, the run is not repeated: a
failing model runs once.  The runs are counted in what ORT logged
(`check --verbose`: one "Non-zero status code" error per failed run)."""
import os
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

N = 262144  # float32: 1 MiB, the worker's shared-memory threshold


def _libs():
    """ORT libraries to run under: the default, and ONNXPARITY_ORT_LIB2 when set."""
    libs = [None]
    lib2 = os.environ.get("ONNXPARITY_ORT_LIB2")
    if lib2 and os.path.exists(lib2):
        libs.append(lib2)
    return libs


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """y = Reshape(x, s), x and y declared float32 [1, N]; s comes at run time."""
    root = tmp_path_factory.mktemp("boundretry")
    g = helper.make_graph([helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape_at_runtime")],
                          "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, N]),
                                helper.make_tensor_value_info("s", TensorProto.INT64, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, N])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, str(root / "model.onnx"))
    return root


def _bundle(model, root, name, shape):
    b = root / name
    d = b / "test_data_set_0"
    d.mkdir(parents=True)
    (b / "model.onnx").write_bytes((model / "model.onnx").read_bytes())
    x = np.arange(N, dtype=np.float32).reshape(1, N)
    (d / "input_0.pb").write_bytes(numpy_helper.from_array(x, "x").SerializeToString())
    s = np.array(shape, np.int64)
    (d / "input_1.pb").write_bytes(numpy_helper.from_array(s, "s").SerializeToString())
    y = x.reshape(shape) if int(np.prod(shape)) == N else x
    (d / "output_0.pb").write_bytes(numpy_helper.from_array(y, "y").SerializeToString())
    return b


def _check(onnxparity, bundle, lib):
    argv = [onnxparity, "check", str(bundle), "--verbose"] + (["--ort-lib", lib] if lib else [])
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("lib", _libs())
def test_kernel_failure_runs_once(onnxparity, model, lib, tmp_path):
    b = _bundle(model, tmp_path, "kernel", [3, 7])  # 21 elements: Reshape's kernel refuses
    p = _check(onnxparity, b, lib)
    assert p.returncode != 0, p.stdout + p.stderr
    failed = [ln for ln in p.stderr.splitlines()
              if "Non-zero status code returned while running Reshape node" in ln
              and "reshape_at_runtime" in ln and ln.lstrip().startswith("error")]
    assert "cannot be reshaped to the requested shape" in p.stderr + p.stdout
    assert len(failed) == 1, p.stderr


@pytest.mark.parametrize("lib", _libs())
def test_bound_output_of_another_shape_is_run_again(onnxparity, model, lib, tmp_path):
    b = _bundle(model, tmp_path, "shape", [2, N // 2])  # valid, but not the declared [1, N]
    p = _check(onnxparity, b, lib)
    assert p.returncode == 0, p.stdout + p.stderr
