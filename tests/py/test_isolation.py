"""Crash and hang isolation, and the memory cap (docs/reliability.md).

ONNX Runtime runs in a worker process: a kernel that crashes (SIGSEGV) or
never returns costs one fixture, which the report marks as a runtime
failure; the other fixtures still run and the command exits 4.  The
misbehaving kernels come from a custom-operator library built by the
Makefile (tests/customop/testops.c): CrashIfNegative and HangIfNegative
copy their input, and crash or hang when an element is negative.
"""
import json
import os
import pathlib
import subprocess
import tempfile
import xml.etree.ElementTree as ET

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import consumers
from conftest import ROOT

FIXTURES = [np.array([[1.0, 2.0, 3.0]], np.float32),
            np.array([[-1.0, 2.0, 3.0]], np.float32),  # the one that kills the kernel
            np.array([[4.0, 5.0, 6.0]], np.float32)]


def _testops_lib():
    d = pathlib.Path(os.environ.get("ONNXPARITY_TOOLS", str(ROOT / "build" / "tests" / "tools")))
    lib = d / "libonp_testops.so"
    if not lib.exists():
        pytest.skip(f"{lib} not built (make {lib.relative_to(ROOT) if lib.is_relative_to(ROOT) else lib})")
    return str(lib)


def make_bundle(root, op):
    """model.onnx: y = Relu(OP(x)); three fixtures, the second negative."""
    root.mkdir(parents=True, exist_ok=True)
    nodes = [helper.make_node(op, ["x"], ["t"], name="bad_kernel", domain="onnxparity.test"),
             helper.make_node("Relu", ["t"], ["y"], name="relu")]
    g = helper.make_graph(nodes, "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                            helper.make_opsetid("onnxparity.test", 1)])
    m.ir_version = 8
    onnx.save(m, str(root / "model.onnx"))
    for k, x in enumerate(FIXTURES):
        d = root / f"test_data_set_{k}"
        d.mkdir(exist_ok=True)
        (d / "input_0.pb").write_bytes(numpy_helper.from_array(x, "x").SerializeToString())
        y = np.maximum(x, 0)
        (d / "output_0.pb").write_bytes(numpy_helper.from_array(y, "y").SerializeToString())
    return root


def run(cmd, env_extra=None, timeout=120):
    env = dict(os.environ)
    # ASan's own SIGSEGV handler would turn the planted crash into a report
    # and exit 1; the test wants the plain signal, as a release build has.
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":handle_segv=0").lstrip(":")
    env.update(env_extra or {})
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    with tempfile.TemporaryDirectory() as tmp:  # the outputs through their readers (conftest.run)
        consumers.consume(cmd, r, tmp)
    return r


def test_crashing_kernel_marks_its_fixture_and_the_rest_completes(onnxparity, tmp_path):
    lib = _testops_lib()
    b = make_bundle(tmp_path / "crash", "CrashIfNegative")
    junit, html = tmp_path / "r.xml", tmp_path / "r.html"
    p = run([onnxparity, "check", str(b), "--custom-op-lib", lib, "--format", "json",
             "--junit", str(junit), "--html", str(html)])
    assert p.returncode == 4, p.stderr
    doc = json.loads(p.stdout)
    assert doc["verdict"] == "error"
    fx = {f["index"]: f for f in doc["fixtures"]}
    assert fx[0]["status"] == "pass" and fx[2]["status"] == "pass"
    assert fx[1]["status"] == "error" and fx[1]["runtime_failure"] == "crashed"
    assert "signal 11" in fx[1]["error"] and "Run [crashed]" in fx[1]["error"]
    # the reports are complete: the page and the JUnit file name the lost fixture
    cases = ET.parse(junit).getroot().iter("testcase")
    errs = [c for c in cases if c.find("error") is not None]
    assert len(errs) == 1 and "signal 11" in errs[0].find("error").get("message")
    assert "Run [crashed]" in html.read_text() and "signal 11" in html.read_text()


def test_crash_text_report_and_no_isolation_flag(onnxparity, tmp_path):
    lib = _testops_lib()
    b = make_bundle(tmp_path / "crash", "CrashIfNegative")
    p = run([onnxparity, "check", str(b), "--custom-op-lib", lib])
    assert p.returncode == 4
    assert "verdict: ERROR" in p.stdout and "1 of 3 fixtures" in p.stdout
    # --timeout means a worker that can be killed: refused with --no-isolate
    p = run([onnxparity, "check", str(b), "--custom-op-lib", lib, "--no-isolate",
             "--timeout", "5"])
    assert p.returncode == 2 and "--timeout" in p.stderr
    # without isolation the healthy fixtures run in-process as before
    ok = make_bundle(tmp_path / "ok", "CrashIfNegative")
    for d in ok.glob("test_data_set_1"):
        (d / "input_0.pb").write_bytes(numpy_helper.from_array(FIXTURES[0], "x").SerializeToString())
        (d / "output_0.pb").write_bytes(
            numpy_helper.from_array(np.maximum(FIXTURES[0], 0), "y").SerializeToString())
    # (the test library's op domain must outlive every session, so it is never
    # released; in-process, LeakSanitizer would count it against the tool)
    p = run([onnxparity, "check", str(ok), "--custom-op-lib", lib, "--no-isolate"],
            {"ASAN_OPTIONS": "detect_leaks=0"})
    assert p.returncode == 0, p.stdout + p.stderr


def test_hanging_kernel_times_out(onnxparity, tmp_path):
    lib = _testops_lib()
    b = make_bundle(tmp_path / "hang", "HangIfNegative")
    p = run([onnxparity, "check", str(b), "--custom-op-lib", lib, "--timeout", "2",
             "--format", "json"], timeout=60)
    assert p.returncode == 4, p.stderr
    doc = json.loads(p.stdout)
    fx = {f["index"]: f for f in doc["fixtures"]}
    assert fx[1]["runtime_failure"] == "timeout" and "2000 ms" in fx[1]["error"]
    assert fx[0]["status"] == "pass" and fx[2]["status"] == "pass"


def test_gate_reports_a_crash_as_a_runtime_failure(onnxparity, tmp_path):
    lib = _testops_lib()
    ok = make_bundle(tmp_path / "ok", "CrashIfNegative")
    d = ok / "test_data_set_1"
    (d / "input_0.pb").write_bytes(numpy_helper.from_array(FIXTURES[2], "x").SerializeToString())
    (d / "output_0.pb").write_bytes(
        numpy_helper.from_array(np.maximum(FIXTURES[2], 0), "y").SerializeToString())
    crit = tmp_path / "criteria.json"
    p = run([onnxparity, "gate", str(ok), "--criteria", str(crit), "--record",
             "--custom-op-lib", lib])
    assert p.returncode == 0, p.stdout + p.stderr
    bad = make_bundle(tmp_path / "bad", "CrashIfNegative")
    junit = tmp_path / "gate.xml"
    p = run([onnxparity, "gate", str(bad), "--criteria", str(crit), "--custom-op-lib", lib,
             "--format", "json", "--junit", str(junit)])
    assert p.returncode == 4, p.stdout + p.stderr
    doc = json.loads(p.stdout)
    assert doc["verdict"] == "error"
    assert any("signal 11" in g["message"] for g in doc["regressions"])
    assert junit.exists()


def test_sweep_sees_a_crash_that_comes_and_goes(onnxparity, tmp_path):
    """The same inputs crash the second time only: the sweep's determinism
    run says the level is not reproducible (and the sweep completes)."""
    lib = _testops_lib()
    b = make_bundle(tmp_path / "flaky", "CrashOnSecondRun")
    p = run([onnxparity, "sweep", str(b), "--custom-op-lib", lib, "--no-search",
             "--format", "json"])
    assert p.returncode in (0, 1), p.stderr
    levels = json.loads(p.stdout)["sweep"]["levels"]
    assert levels and all(lv["deterministic"] is False for lv in levels)
    assert all("second run failed" in lv["nondeterministic_output"] for lv in levels)
    assert all("signal 11" in lv["nondeterministic_output"] for lv in levels)


def test_run_command_reports_a_crash_in_one_line(onnxparity, tmp_path):
    lib = _testops_lib()
    b = make_bundle(tmp_path / "crash", "CrashIfNegative")
    out = tmp_path / "out"
    p = run([onnxparity, "run", str(b / "model.onnx"), "--custom-op-lib", lib,
             "--input", str(b / "test_data_set_1" / "input_0.pb"), "--save", str(out)])
    assert p.returncode == 4, p.stdout + p.stderr
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Run [crashed]" in lines[0] and "model.onnx" in lines[0]
    assert not out.exists() or not any(out.iterdir())


def test_missing_custom_op_library_is_a_runtime_error(onnxparity, tmp_path):
    b = make_bundle(tmp_path / "b", "CrashIfNegative")
    p = run([onnxparity, "check", str(b), "--custom-op-lib", str(tmp_path / "nope.so")])
    assert p.returncode == 4
    assert "nope.so" in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_max_memory_caps_tensor_data(onnxparity, tmp_path):
    a = tmp_path / "a.npy"
    np.save(a, np.arange(1 << 16, dtype=np.float32))  # 256 KiB
    b = tmp_path / "b.pb"
    b.write_bytes(numpy_helper.from_array(np.arange(1 << 16, dtype=np.float32), "v")
                  .SerializeToString())
    p = run([onnxparity, "compare", str(b), str(a), "--max-memory", "64K"])
    assert p.returncode == 2, p.stdout + p.stderr
    assert "memory cap" in p.stderr and "b.pb" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    p = run([onnxparity, "compare", str(b), str(a), "--max-memory=8M"])
    assert p.returncode == 0, p.stderr
    p = run([onnxparity, "compare", str(b), str(a)], {"ONNXPARITY_MAX_MEMORY": "1K"})
    assert p.returncode == 2 and "memory cap" in p.stderr
    p = run([onnxparity, "compare", str(b), str(a), "--max-memory", "lots"])
    assert p.returncode == 2 and "--max-memory" in p.stderr


def test_isolated_and_in_process_results_are_identical(onnxparity):
    ex = ROOT / "examples" / "healthy"
    if not (ex / "model.onnx").exists():
        pytest.skip("examples/healthy not generated")
    a = run([onnxparity, "check", str(ex), "--format", "json"])
    b = run([onnxparity, "check", str(ex), "--format", "json", "--no-isolate"])
    assert a.returncode == b.returncode == 0
    assert a.stdout == b.stdout
