"""One convention across commands (docs/cli.md, "Exit codes" and "Suggested
commands"):
- a provider this ONNX Runtime lacks is exit 2 (bad input) in every command
  that opens a session: run, check, gate, bisect, diagnose;
- a command the tool suggests is shell-quoted: run through /bin/sh as
  printed, it works on a bundle whose path has a space and a quote;
- a passing check states its lint warnings and the TracerWarnings the export
  recorded in one line, with the command that lists them."""
import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import ROOT, run

HEALTHY = ROOT / "examples" / "healthy"
TRAINING = ROOT / "examples" / "training"
ODD = "my bundle's copy"  # a space and a single quote


@pytest.fixture
def no_cuda(onnxparity):
    r = run([onnxparity, "run", HEALTHY / "model.onnx", HEALTHY / "test_data_set_0" / "input_0.pb",
             "--provider", "cuda"])
    if r.returncode == 0:
        pytest.skip("this ONNX Runtime has the CUDA provider")
    return r


def test_missing_provider_is_exit_2_everywhere(onnxparity, no_cuda, tmp_path):
    crit = tmp_path / "c.json"
    assert run([onnxparity, "gate", HEALTHY, "--criteria", crit, "--record"]).returncode == 0
    cmds = {
        "run": [HEALTHY / "model.onnx", HEALTHY / "test_data_set_0" / "input_0.pb"],
        "check": [HEALTHY],
        "gate": [HEALTHY, "--criteria", crit],
        "bisect": [HEALTHY],
        "diagnose": [HEALTHY, "--no-sweep"],
    }
    for cmd, args in cmds.items():
        r = run([onnxparity, cmd, *args, "--provider", "cuda"])
        assert r.returncode == 2, (cmd, r.returncode, r.stderr)
        assert "CUDAExecutionProvider" in r.stderr and "CPUExecutionProvider" in r.stderr, r.stderr
    # the JSON document of diagnose still says why
    r = run([onnxparity, "diagnose", HEALTHY, "--no-sweep", "--provider", "cuda", "--format", "json"])
    doc = json.loads(r.stdout)
    assert r.returncode == 2 and doc["verdict"] == "error" and "CUDA" in doc["error"]


def sh(line, onnxparity):
    """Run a printed command line through /bin/sh, `onnxparity` meaning the
    binary under test."""
    assert line.startswith("onnxparity "), line
    return subprocess.run(["sh", "-c", f'"$BIN" {line[len("onnxparity "):]}'], capture_output=True,
                          text=True, env=dict(os.environ, BIN=str(onnxparity)))


def test_suggested_bisect_is_quoted(onnxparity, tmp_path):
    b = tmp_path / ODD
    shutil.copytree(TRAINING, b)
    r = run([onnxparity, "check", b])
    assert r.returncode == 1, r.stderr
    m = re.search(r"\(onnxparity bisect (.+)\)$", r.stdout, re.M)
    assert m, r.stdout
    assert m.group(1) != str(b)  # quoted, not pasted
    rb = sh("onnxparity bisect " + m.group(1), onnxparity)
    assert rb.returncode == 1 and "first divergent" in rb.stdout, rb.stderr


def test_repro_readme_commands_are_quoted(onnxparity, tmp_path):
    repro = tmp_path / f"{ODD} repro"
    r = run([onnxparity, "bisect", TRAINING, "--save-repro", repro])
    assert r.returncode == 1, r.stderr
    readme = (repro / "README.md").read_text()
    line = next(ln.strip() for ln in readme.splitlines() if ln.strip().startswith("onnxparity check"))
    rc = sh(line, onnxparity)
    assert rc.returncode == 1 and "verdict: FAIL" in rc.stdout, (line, rc.stdout, rc.stderr)
    # the Python one-liner takes the folder as its argument
    py = next(ln.strip() for ln in readme.splitlines() if ln.strip().startswith("python3 -c"))
    assert py.endswith(" '" + str(repro).replace("'", "'\\''") + "'"), py


TRACER = {"category": "TracerWarning", "category_module": "torch.jit._trace",
          "file": "/src/mymodel.py", "line": 42, "code": "if x.sum() > 0:",
          "message": "Converting a tensor to a Python boolean might cause the trace to be "
                     "incorrect. We can't record the data flow of Python values."}


@pytest.mark.parametrize("command", ["check", "gate", "diagnose"])
def test_passing_run_counts_its_warnings(onnxparity, tmp_path, command):
    """check, gate and diagnose: a passing run says how many warnings and
    TracerWarnings it carries and which command lists them."""
    b = tmp_path / ODD
    shutil.copytree(HEALTHY, b)
    doc = json.loads((b / "parity.json").read_text())
    doc["warnings"] = [TRACER, TRACER, dict(TRACER, line=50)]  # 3 records, 2 distinct
    (b / "parity.json").write_text(json.dumps(doc))
    extra = {"check": [], "diagnose": ["--no-sweep"],
             "gate": ["--criteria", tmp_path / "criteria.json"]}[command]
    if command == "gate":
        rec = run([onnxparity, "gate", b, "--record", *extra])
        assert rec.returncode == 0, rec.stdout + rec.stderr
    r = run([onnxparity, command, b, *extra])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "verdict: pass" in r.stdout, r.stdout
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("latent ")]
    assert len(lines) == 1, r.stdout
    m = re.fullmatch(r"latent   (\d+) warning\(s\) explain no failure \(risks, not causes\): .*; "
                     r"(\d+) TracerWarning\(s\) recorded at export; (onnxparity lint .+) lists them",
                     lines[0])
    assert m, lines[0]
    assert m.group(2) == "3"
    lint = json.loads(run([onnxparity, "lint", b, "--format", "json"]).stdout)
    assert int(m.group(1)) == lint["summary"]["warning"] == 2
    listed = sh(m.group(3), onnxparity)
    assert listed.returncode == 0 and listed.stdout.count("ONP301") == 2, listed.stdout
    # a clean pass prints no such line
    if command == "gate":
        assert run([onnxparity, "gate", HEALTHY, "--record", *extra]).returncode == 0
    r = run([onnxparity, command, HEALTHY, *extra])
    assert r.returncode == 0 and "\nlatent " not in "\n" + r.stdout, r.stdout


def test_python_helper_quotes_its_command(tmp_path):
    """onnxparity.testing's failure text ends with the command it ran, quoted."""
    from onnxparity.testing import summarize
    cmd = ["onnxparity", "check", tmp_path / ODD, "--format", "json"]
    text = summarize(tmp_path / ODD, 3, None, "boom", cmd)
    line = text.splitlines()[-1]
    assert line.startswith("command: ") and subprocess.run(
        ["sh", "-c", 'printf "%s\\n" ' + line[len("command: "):]], capture_output=True,
        text=True).stdout.splitlines() == [str(a) for a in cmd], line
