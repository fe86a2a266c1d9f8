"""onnxparity.gate in-process (issue 28): the library's gate run
(onp_gate_run) and document (onp_doc_gate) are the tool's, so the Python
API's result is `onnxparity gate --format json` byte for byte, the criteria
it records are the file the tool records, and a run that is no baseline is
refused with the tool's own reason, writing nothing.

    PYTHONPATH=python /usr/bin/python3 -m pytest -q tests/py/test_api_gate.py
"""
import json

import pytest

from conftest import ROOT, run

api = pytest.importorskip("onnxparity.api")

EXAMPLES = ROOT / "examples"


def cli_gate(onnxparity, *args):
    r = run([onnxparity, "gate", *map(str, args), "--format", "json"])
    return r.returncode, r.stdout, r.stderr


def test_record_writes_the_tools_file(onnxparity, lib, tmp_path):
    by_api, by_cli = tmp_path / "api.json", tmp_path / "cli.json"
    doc = api.gate(EXAMPLES / "healthy", criteria=by_api, record=True, margin=3)
    rc, out, err = cli_gate(onnxparity, EXAMPLES / "healthy", "--criteria", by_cli, "--record",
                            "--margin", "3")
    assert rc == 0, err
    assert by_api.read_text() == by_cli.read_text()
    assert doc == json.loads(by_api.read_text()) == json.loads(out)
    assert doc["margin"] == 3 and doc["outputs"]


def test_gating_document_is_the_tools(onnxparity, lib, tmp_path):
    crit = tmp_path / "criteria.json"
    api.gate(EXAMPLES / "healthy", criteria=crit, record=True)
    rc, out, err = cli_gate(onnxparity, EXAMPLES / "healthy", "--criteria", crit)
    r = api.gate(EXAMPLES / "healthy", criteria=crit)
    assert rc == r.exit_code == 0, err
    assert r.text.strip() == out.strip()
    assert r.passed and not r.regressions and r.first_divergent is None
    assert r.checks and all(k.passed and (k.margin is None or float(k.margin) >= 1) for k in r.checks)


def test_a_regression_is_named_as_the_tool_names_it(onnxparity, lib, tmp_path):
    """Criteria recorded on the healthy model, gated against the training-mode
    export of the same network: the regression, the cause and the first
    divergent node are the tool's, and the node is the BatchNormalization
    the training-mode export left live (planted by the example's maker)."""
    crit = tmp_path / "criteria.json"
    api.gate(EXAMPLES / "healthy", criteria=crit, record=True)
    rc, out, err = cli_gate(onnxparity, EXAMPLES / "training", "--criteria", crit)
    r = api.gate(EXAMPLES / "training", criteria=crit)
    assert rc == r.exit_code == 1, err
    assert r.document == json.loads(out)
    assert r.verdict == "fail" and r.regressions
    assert {x.check for x in r.regressions} & {"noise", "max_abs", "needed_atol", "top1"}
    assert r.first_divergent is not None and r.first_divergent.op_type == "BatchNormalization"
    assert r.causes[0].id == "training-mode"
    assert any(not k.passed and k.margin is not None and float(k.margin) < 1 for k in r.checks)
    # the policy and the bisect switch mean what the flags mean
    quiet = api.gate(EXAMPLES / "training", criteria=crit, bisect=False, env_drift="fail")
    assert quiet.first_divergent is None and quiet.document["env_drift_policy"] == "fail"


def test_a_failing_run_is_no_baseline(onnxparity, lib, tmp_path):
    crit = tmp_path / "criteria.json"
    with pytest.raises(api.RecordRefused) as e:
        api.gate(EXAMPLES / "training", criteria=crit, record=True)
    assert not crit.exists()
    p = run([onnxparity, "gate", EXAMPLES / "training", "--criteria", crit, "--record"])
    assert p.returncode == e.value.exit_code == 1
    assert p.stderr.strip() == f"onnxparity gate: {e.value.message}"
    assert "not recording criteria" in e.value.message and "--allow-failing" in e.value.message
    doc = api.gate(EXAMPLES / "training", criteria=crit, record=True, allow_failing=True)
    assert crit.exists() and doc["outputs"]


def test_errors_say_what_the_tool_says(onnxparity, lib, tmp_path):
    bad = tmp_path / "criteria.json"
    bad.write_text('{"schema": "onnxparity.criteria/1", "outputs": 3}')
    with pytest.raises(api.UsageError) as e:
        api.gate(EXAMPLES / "healthy", criteria=bad)
    p = run([onnxparity, "gate", EXAMPLES / "healthy", "--criteria", bad])
    assert p.returncode == e.value.exit_code == 2
    assert f"onnxparity: {e.value}" in p.stderr
    for opts in ({"margin": 3}, {"env_drift": "sometimes"}):  # without effect, or a bad value
        with pytest.raises(api.UsageError) as e:
            api.gate(EXAMPLES / "healthy", criteria=bad, **opts)
        p = run([onnxparity, "gate", EXAMPLES / "healthy", "--criteria", bad, *api.flags(opts)])
        assert p.returncode == 2 and e.value.message in p.stderr
    with pytest.raises(api.FileError):
        api.gate(EXAMPLES / "healthy", criteria=tmp_path / "missing.json")


def test_targets_in_process_are_the_tools(onnxparity, lib, tmp_path):
    """Criteria naming two deployment targets (the bundled ORT 1.29, and ORT
    1.30 at opt-level basic), recorded and gated in-process: the file and the
    document are the tool's, and every regression of the training-mode export
    names its target; the training-mode BatchNormalization regresses under
    both."""
    import os

    lib2 = os.environ.get("ONNXPARITY_ORT_LIB2")
    if not lib2 or not os.path.exists(lib2):
        pytest.skip("no second ONNX Runtime (ONNXPARITY_ORT_LIB2)")
    targets = ["tool=bundled", f"v130={lib2}@basic"]
    by_api, by_cli = tmp_path / "api.json", tmp_path / "cli.json"
    doc = api.gate(EXAMPLES / "healthy", criteria=by_api, record=True, targets=targets)
    rc, out, err = cli_gate(onnxparity, EXAMPLES / "healthy", "--criteria", by_cli, "--record",
                            *[x for t in targets for x in ("--target", t)])
    assert rc == 0, err
    assert by_api.read_text() == by_cli.read_text()
    assert [t["name"] for t in doc["targets"]] == ["tool", "v130"]
    assert [t["environment"]["ort_version"] for t in doc["targets"]] == ["1.29.0", "1.30.0"]
    assert doc["targets"][0]["opt_level"] is None and doc["targets"][1]["opt_level"] == "basic"
    assert doc["targets"][1]["environment"]["opt_level"] == "basic"
    r = api.gate(EXAMPLES / "training", criteria=by_api, bisect=False)
    rc, out, err = cli_gate(onnxparity, EXAMPLES / "training", "--criteria", by_api, "--no-bisect")
    assert rc == r.exit_code == 1, err
    assert r.document == json.loads(out)
    assert {t["name"]: t["verdict"] for t in r.document["targets"]} == {"tool": "fail",
                                                                        "v130": "fail"}
    assert {x.target for x in r.regressions} == {"tool", "v130"}
    by_target = {n: [x for x in r.regressions if x.target == n] for n in ("tool", "v130")}
    assert all(by_target.values())
    # one target alone: the plain gate; the API refuses as the tool does
    with pytest.raises(api.UsageError, match="two or more"):
        api.gate(EXAMPLES / "healthy", criteria=tmp_path / "x.json", record=True,
                 targets=["tool=bundled"])
