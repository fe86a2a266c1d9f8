"""The in-process Python API (issue 28): onnxparity.check calls
libonnxparity.so through ctypes and returns the tool's own check document,
typed; onnxparity.testing runs on it without spawning the binary.

The equality with the command line on the zoo is in test_zoo.py (it shares
the zoo's captures); here: the document is byte for byte the tool's on the
shipped examples, errors are typed and say what the tool's one line says,
options mean what the tool's flags mean, a crashing kernel still costs one
fixture and not the caller, and testing spawns nothing.

    PYTHONPATH=python /usr/bin/python3 -m pytest -q tests/py/test_api.py
"""
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, run

api = pytest.importorskip("onnxparity.api")

EXAMPLES = ROOT / "examples"


def cli_doc(onnxparity, *args):
    r = run([onnxparity, "check", *map(str, args), "--format", "json"])
    return r.returncode, r.stdout, r.stderr


@pytest.mark.parametrize("bundle,args", [("healthy", []), ("training", []),
                                         ("healthy", ["--shard", "1/2", "--top-k", "off"]),
                                         ("training", ["--no-bisect", "--rtol", "0.5"])])
def test_document_is_the_tools_byte_for_byte(onnxparity, lib, bundle, args):
    rc, out, _ = cli_doc(onnxparity, EXAMPLES / bundle, *args)
    r = api.check(EXAMPLES / bundle, extra_args=args)
    assert r.exit_code == rc
    assert r.text.strip() == out.strip()
    assert r.document == json.loads(out)


def test_typed_result(lib):
    r = api.check(EXAMPLES / "training")
    assert not r.passed and r.verdict == "fail" and r.exit_code == 1
    assert r.causes[0].id == "training-mode" and r.causes[0].confidence == "high"
    assert r.first_divergent is not None
    assert r.first_divergent.node == r.document["first_divergent"]["node"]
    assert r.first_divergent.op_type == "BatchNormalization"
    assert len(r.fixtures) == 3 and all(f.status == "fail" for f in r.fixtures)
    o = r.fixtures[0].outputs[0]
    assert o.name == "logits" and not o.passed and o.judgment["verdict"] == "beyond-noise"
    assert o.metrics["max_abs"] > 0.01 and o.shape == [1, 10] and o.dtype == "float32"
    assert r.environment["model_sha256"] == r.document["environment"]["model_sha256"]
    h = api.check(EXAMPLES / "healthy", top_k="auto", threads=1, lint=False)
    assert h.passed and h.exit_code == 0 and h.options["lint"] is False
    assert h.environment["intra_threads"] == 1


def test_model_and_folders(onnxparity, lib):
    h = EXAMPLES / "healthy"
    rc, out, _ = cli_doc(onnxparity, "--model", h / "model.onnx", "--data", h)
    r = api.check(model=h / "model.onnx", data=[h])
    assert r.exit_code == rc and r.document == json.loads(out)
    with pytest.raises(api.UsageError):
        api.check(model=h / "model.onnx")  # no fixture folder


def test_errors_are_typed_and_say_what_the_tool_says(onnxparity, lib, tmp_path):
    cases = [  # (options, exception, the tool's exit code)
        ({"threads": "x"}, api.UsageError, 2),
        ({"shard": " 0/2"}, api.UsageError, 2),
        ({"tol": {"nope": (1, 1)}}, api.UsageError, 2),
        ({"extra_args": ["--bogus"]}, api.UsageError, 2),
        ({"provider": "no-such-provider"}, api.UsageError, 2),
    ]
    for opts, cls, code in cases:
        with pytest.raises(cls) as e:
            api.check(EXAMPLES / "healthy", **opts)
        assert e.value.exit_code == code
        p = run([onnxparity, "check", EXAMPLES / "healthy", *api.flags(opts)])
        assert p.returncode == code, (opts, p.stderr)
        assert e.value.message in p.stderr, (opts, str(e.value), p.stderr)
    # a file the tool cannot decode: the file and the field, as the tool names them
    b = tmp_path / "b"
    shutil.copytree(EXAMPLES / "healthy", b)
    (b / "test_data_set_0" / "input_0.pb").write_bytes(b"\x0a\xff\xff")
    with pytest.raises(api.OnnxParityError) as e:
        api.check(b)
    p = run([onnxparity, "check", b])
    assert e.value.exit_code == p.returncode == 3
    assert e.value.file and e.value.file.endswith("input_0.pb")
    assert f"onnxparity: {e.value}" in p.stderr
    with pytest.raises(api.FileError):
        api.check(tmp_path / "missing")
    with pytest.raises(TypeError, match="unknown option"):
        api.check(EXAMPLES / "healthy", tolerance=1)


def test_a_crashing_kernel_costs_one_fixture_not_the_caller(lib, tmp_path):
    """The library's worker process still holds ONNX Runtime: a kernel that
    crashes on one fixture marks that fixture (exit 4), in a child Python
    that then goes on and prints its result."""
    import test_isolation as iso
    testops = iso._testops_lib()
    b = iso.make_bundle(tmp_path / "crash", "CrashIfNegative")
    code = ("import sys, onnxparity.api as a\n"
            f"r = a.check({str(b)!r}, custom_op_libs=[{testops!r}])\n"
            "print(r.exit_code, [f.runtime_failure for f in r.fixtures])\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split()[0] == "4" and "'crashed'" in p.stdout


def test_testing_spawns_no_binary(lib, monkeypatch):
    """assert_export_parity / run_check run in this process: with spawning
    made impossible they still judge, and name the command to rerun."""
    from onnxparity import testing

    def refuse(*a, **k):
        raise AssertionError("onnxparity.testing spawned a process")
    monkeypatch.setattr(subprocess, "run", refuse)
    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setattr(os, "execv", refuse)
    doc = testing.assert_export_parity(EXAMPLES / "healthy", top_k="auto")
    assert doc["verdict"] == "pass"
    with pytest.raises(AssertionError) as e:
        testing.assert_export_parity(EXAMPLES / "training")
    assert "export parity fails" in str(e.value) and "training mode" in str(e.value)
    assert "command: " in str(e.value) and " check " in str(e.value)
    # the intermediates through the library's bisect, not expose/run/compare processes
    res = testing.assert_intermediates_parity(EXAMPLES / "healthy", 0, rtol=1e-3, atol=1e-4)
    index = json.loads((EXAMPLES / "healthy" / "test_data_set_0" / "intermediates" /
                        "index.json").read_text())
    assert len(res) == len(index["entries"]) >= 5 and all(x["pass"] for x in res)
    with pytest.raises(AssertionError, match="intermediates differ"):
        testing.assert_intermediates_parity(EXAMPLES / "training", 0, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("args", [[], ["--fixture", "1"], ["--reference", "disable"],
                                  ["--chunk", "2", "--rtol", "1e-3"]])
def test_bisect_document_is_the_tools(onnxparity, lib, args):
    """api.bisect: the document `bisect --format json` prints (the healthy
    example: deterministic), and its typed curve."""
    r = run([onnxparity, "bisect", EXAMPLES / "healthy", "--format", "json", *args])
    b = api.bisect(EXAMPLES / "healthy", extra_args=args)
    assert b.exit_code == r.returncode == 0 and b.verdict == "agrees"
    assert b.document == json.loads(r.stdout)
    assert len(b.curve) == len(b.document["curve"]) and all(p.passed for p in b.curve if
                                                             p.passed is not None)
    t = api.bisect(EXAMPLES / "training")
    assert t.verdict == "diverges" and t.exit_code == 1
    assert t.first_divergent["op_type"] == "BatchNormalization"
    with pytest.raises(api.UsageError, match="unknown option"):
        api.bisect(EXAMPLES / "healthy", top_k=1)  # a check option bisect does not take


def test_importing_the_api_imports_nothing_heavy():
    code = ("import sys, importlib.util\n"
            "spec = importlib.util.spec_from_file_location('api', sys.argv[1])\n"
            "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
            "print(sorted(k for k in ('torch', 'onnx', 'numpy') if k in sys.modules))\n")
    p = subprocess.run([sys.executable, "-c", code, str(ROOT / "python" / "onnxparity" / "api.py")],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout.strip() == "[]", p.stdout + p.stderr


@pytest.mark.parametrize("bundle,args", [("healthy", []), ("healthy", ["--no-sweep", "--rtol", "1e-3"])])
def test_diagnose_document_is_the_tools(onnxparity, lib, bundle, args):
    """api.diagnose: the document `diagnose --format json` prints (the
    healthy example is deterministic), typed."""
    r = run([onnxparity, "diagnose", EXAMPLES / bundle, "--format", "json", *args])
    d = api.diagnose(EXAMPLES / bundle, extra_args=args)
    assert d.exit_code == r.returncode == 0 and d.passed
    assert d.document == json.loads(r.stdout)
    assert (d.sweep is None) == ("--no-sweep" in args)
    assert d.probes["determinism"]["deterministic"] is True


def test_diagnose_names_the_cause(lib):
    d = api.diagnose(EXAMPLES / "training", sweep=False)
    assert d.verdict == "fail" and d.exit_code == 1
    assert d.causes[0].id == "training-mode" and d.causes[0].confidence == "high"
    assert d.first_divergent and d.first_divergent["op_type"] == "BatchNormalization"
    with pytest.raises(api.UsageError, match="unknown option"):
        api.diagnose(EXAMPLES / "healthy", top_k=1)
