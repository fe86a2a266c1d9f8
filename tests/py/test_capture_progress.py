"""Capture progress (issue #16): on a terminal the capture reports its
stages and a per-fixture count on stderr; on a pipe it says nothing.  The
terminal is a real pseudo-terminal (the pty module): the capture runs in a
child process whose stderr is the pty's slave end.

Run: PYTHONPATH=python /usr/bin/python3 -m pytest -q tests/py/test_capture_progress.py
"""
import os
import pathlib
import pty
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torch")

ROOT = pathlib.Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent("""
    import sys, warnings
    import torch
    import onnxparity
    warnings.simplefilter("ignore")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2)).eval()
    fixtures = [torch.randn(b, 4) for b in (2, 3, 3, 5)]
    kw = {} if sys.argv[2] == "auto" else {"progress": sys.argv[2] == "on"}
    doc = onnxparity.capture(model, fixtures, sys.argv[1], **kw)
    print("exporter", doc["exporter"])
""")


def env():
    e = dict(os.environ)
    e["PYTHONPATH"] = str(ROOT / "python") + os.pathsep + e.get("PYTHONPATH", "")
    return e


def run_on_pty(out, mode):
    """The child's (stdout, stderr as the terminal showed it)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([sys.executable, "-c", CHILD, str(out), mode], stdout=subprocess.PIPE,
                         stderr=slave, env=env())
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO: the child closed its end
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    stdout = p.stdout.read().decode()
    p.stdout.close()
    assert p.wait(timeout=600) == 0, b"".join(chunks).decode(errors="replace")
    return stdout, b"".join(chunks).decode(errors="replace")


def lines(shown):
    """What stays on the screen: each line's text after its last carriage return."""
    return [ln.split("\r")[-1].replace("\x1b[K", "") for ln in shown.replace("\r\n", "\n").split("\n")]


def test_progress_on_a_terminal(tmp_path):
    stdout, shown = run_on_pty(tmp_path / "b", "auto")
    assert stdout.splitlines()[-1].startswith("exporter ")  # torch 2.x prints its own stages to stdout
    kept = [ln for ln in lines(shown) if ln.startswith("onnxparity capture:")]
    text = "\n".join(kept)
    assert any(ln.startswith("onnxparity capture: eager forwards 4/4 (") for ln in kept), text
    assert any("torch.onnx.export (" in ln and "of fixture 0" in ln for ln in kept), text
    assert any(ln.startswith("onnxparity capture: writing fixtures") and " 4/4 (" in ln for ln in kept), text
    assert kept[-1].startswith(f"onnxparity capture: wrote {tmp_path / 'b'}: 4 fixture(s)"), text
    # the per-fixture count was shown as it went, rewritten in place
    for k in (1, 2, 3):
        assert f"eager forwards {k}/4" in shown
    assert (tmp_path / "b/parity.json").is_file()


def test_quiet_on_a_pipe(tmp_path):
    p = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "b"), "auto"], capture_output=True,
                       text=True, env=env(), timeout=600)
    assert p.returncode == 0, p.stderr
    assert "onnxparity capture:" not in p.stderr and "onnxparity capture:" not in p.stdout


def test_forced_either_way(tmp_path):
    _, shown = run_on_pty(tmp_path / "off", "off")
    assert "onnxparity capture:" not in shown
    p = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "on"), "on"], capture_output=True,
                       text=True, env=env(), timeout=600)
    assert p.returncode == 0 and "onnxparity capture: eager forwards 4/4" in p.stderr
