"""Issue 28, Must-show 2: one command reads the bundle's parity.json once.

The run layer (include/onnxparity/run.h) opens a bundle once: parity.json
is parsed into one document (onp_manifest) that the noise book, the
adequacy, the traced fixture, the export environment and the lint all read.
strace counts the opens of the file in the tool and every process it forks
(ONNX Runtime's worker): one per command that judges fixtures (it was five
in check and four in gate before the run layer).

    PYTHONPATH=python /usr/bin/python3 -m pytest -q tests/py/test_read_once.py
"""
import json
import re
import shutil
import subprocess

import pytest

from conftest import ROOT

TRAINING = ROOT / "examples" / "training"


def opens(onnxparity, tmp_path, *args):
    """(exit code, how many times the process tree opened a parity.json)."""
    log = tmp_path / "strace.log"
    r = subprocess.run(["strace", "-f", "-qq", "-e", "trace=open,openat", "-o", str(log),
                        onnxparity, *map(str, args)], capture_output=True, text=True, timeout=300)
    return r.returncode, len(re.findall(r'parity\.json"', log.read_text()))


@pytest.fixture(scope="module")
def strace():
    if not shutil.which("strace"):
        pytest.skip("strace is not installed (scripts/setup.sh installs it)")


@pytest.mark.parametrize("cmd", [["check"], ["check", "--format", "json"], ["diagnose"],
                                 ["check", "--shard", "1/2"]])
def test_judging_commands_read_parity_json_once(onnxparity, strace, tmp_path, cmd):
    b = tmp_path / "b"
    shutil.copytree(TRAINING, b)
    rc, n = opens(onnxparity, tmp_path, cmd[0], b, *cmd[1:])
    assert rc == 1, rc  # the training-mode example fails, bisect and causes included
    assert n == 1, f"{cmd}: parity.json opened {n} times"


def test_gate_reads_parity_json_once(onnxparity, strace, tmp_path):
    b = tmp_path / "b"
    shutil.copytree(TRAINING, b)
    crit = tmp_path / "criteria.json"
    rc, n = opens(onnxparity, tmp_path, "gate", b, "--record", "--allow-failing", "--criteria", crit)
    assert rc == 0 and n == 1, (rc, n)
    doc = json.loads(crit.read_text())
    for o in doc["outputs"].values():
        o["max_abs"] = 0.0  # every output regresses: gate bisects and derives the causes
    crit.write_text(json.dumps(doc))
    rc, n = opens(onnxparity, tmp_path, "gate", b, "--criteria", crit)
    assert rc == 1 and n == 1, (rc, n)


def test_counter_sees_a_second_read(onnxparity, strace, tmp_path):
    """The count is real: two commands in one strace give two opens."""
    b = tmp_path / "b"
    shutil.copytree(TRAINING, b)
    log = tmp_path / "two.log"
    subprocess.run(["strace", "-f", "-qq", "-e", "trace=open,openat", "-o", str(log), "sh", "-c",
                    f"'{onnxparity}' lint '{b}' >/dev/null; "
                    f"'{onnxparity}' check '{b}' >/dev/null"], timeout=300)
    assert len(re.findall(r'parity\.json"', log.read_text())) >= 2
