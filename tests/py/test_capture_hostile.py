"""Hostile input to `python3 -m onnxparity capture` (issue 36).

- Two .npz members naming one input (fixture_1/input_0 beside
  fixture_01/input_0 or fixture_1.input_0, input_0 beside input_00, a
  member stored as NAME and NAME.npy): one was dropped silently.  Refused:
  exit 2, one line naming both.
- An object-dtype member gave a traceback; strings and records too (torch
  has no such tensor).  Refused: exit 2, one line naming the member.
- A FIFO as --fixtures blocked in np.load waiting for a writer; a folder or
  a device is no archive either.  Refused before reading: exit 2, one line.
- SIGTERM (and SIGHUP) mid-capture left the half-built `.OUT.tmp-*` folder
  beside the output, where SIGINT removed it.  Every one of the three now
  removes it, says so in one line, and the process still dies of the
  signal; an older bundle at OUT stays as it was.

Run: PYTHONPATH=python /usr/bin/python3 -m pytest -q tests/py/test_capture_hostile.py
"""
import os
import pathlib
import signal
import subprocess
import sys
import time
import zipfile

import pytest

np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent


class Slow(torch.nn.Module):
    """A small net whose forward sleeps while the exporter traces it: the
    capture then sits inside its staging folder long enough to signal."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)

    def forward(self, x):
        if torch.jit.is_tracing():
            time.sleep(4)
        return self.lin(x)


def slow_net():
    torch.manual_seed(0)
    return Slow().eval()


def env():
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "python"), str(HERE)]),
                PYTHONWARNINGS="ignore")


def capture(fixtures, out, timeout=120):
    return subprocess.run([sys.executable, "-m", "onnxparity", "capture", "test_capture_hostile:slow_net",
                           "--fixtures", str(fixtures), "--out", str(out)],
                          capture_output=True, text=True, env=env(), cwd=ROOT, timeout=timeout)


def one_line(r, code, *words):
    assert r.returncode == code, (r.returncode, r.stderr[-3000:])
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("onnxparity: "), r.stderr[-3000:]
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


def nothing_written(d):
    assert sorted(p.name for p in d.iterdir() if p.name != "fx.npz" and not p.name.startswith("src")) == []


X = np.ones((2, 4), np.float32)


@pytest.mark.parametrize("a,b", [("fixture_1/input_0", "fixture_01/input_0"),
                                 ("fixture_1/input_0", "fixture_1.input_0"),
                                 ("fixture_2/input_0", "fixture_2/input_00"),
                                 ("input_0", "input_00"),
                                 ("input_1", "input_01")])
def test_two_members_for_one_input_are_refused(tmp_path, a, b):
    others = {"fixture_0/input_0": X} if a.startswith("fixture") else {}
    if a == "input_1":
        others = {"input_0": X}
    np.savez(tmp_path / "fx.npz", **others, **{a: X, b: 2 * X})
    r = capture(tmp_path / "fx.npz", tmp_path / "b")
    one_line(r, 2, f"'{a}'", f"'{b}'", "are the same input")
    nothing_written(tmp_path)


def test_a_name_stored_twice_is_refused(tmp_path):
    """NAME and NAME.npy are one member for numpy: the archive's second copy
    was read for both."""
    buf = {}
    for name, v in (("input_0.npy", X), ("input_0", 2 * X)):
        np.save(tmp_path / "m.npy", v)
        buf[name] = (tmp_path / "m.npy").read_bytes()
    with zipfile.ZipFile(tmp_path / "fx.npz", "w") as z:
        for name, data in buf.items():
            z.writestr(name, data)
    (tmp_path / "m.npy").unlink()
    r = capture(tmp_path / "fx.npz", tmp_path / "b")
    one_line(r, 2, "'input_0.npy'", "'input_0'", "same name")
    nothing_written(tmp_path)


@pytest.mark.parametrize("value,words", [
    (np.array([{"a": 1}, None], dtype=object), ["'input_0'", "dtype object"]),
    (np.array(["ab", "cd"]), ["'input_0'", "dtype <U2", "no torch tensor type"]),
    (np.zeros(2, dtype=[("a", "f4"), ("b", "i4")]), ["'input_0'", "no torch tensor type"]),
], ids=["object", "unicode", "record"])
def test_non_numeric_member_is_one_line(tmp_path, value, words):
    np.savez(tmp_path / "fx.npz", input_0=value)  # savez pickles the object array
    r = capture(tmp_path / "fx.npz", tmp_path / "b")
    assert "Traceback" not in r.stderr
    one_line(r, 2, *words)
    nothing_written(tmp_path)


def test_fifo_is_refused_without_waiting(tmp_path):
    fifo = tmp_path / "fx.npz"
    os.mkfifo(fifo)
    r = capture(fifo, tmp_path / "b", timeout=60)  # no writer ever opens it
    one_line(r, 2, str(fifo), "is a FIFO")
    nothing_written(tmp_path)


@pytest.mark.parametrize("what", ["folder", "device", "npy"])
def test_not_an_archive(tmp_path, what):
    path = {"folder": tmp_path / "src", "device": pathlib.Path("/dev/zero"),
            "npy": tmp_path / "src.npy"}[what]
    if what == "folder":
        path.mkdir()
    if what == "npy":
        np.save(path, X)
    r = capture(path, tmp_path / "b", timeout=60)
    one_line(r, 2, str(path), {"folder": "is a folder", "device": "is a character device",
                               "npy": "not a .npz archive"}[what])
    nothing_written(tmp_path)


def test_corrupt_member_is_an_io_error(tmp_path):
    np.savez_compressed(tmp_path / "fx.npz", input_0=np.arange(4096, dtype=np.float32))
    data = bytearray((tmp_path / "fx.npz").read_bytes())
    data[200:260] = b"\xff" * 60  # inside the deflated stream
    (tmp_path / "fx.npz").write_bytes(bytes(data))
    r = capture(tmp_path / "fx.npz", tmp_path / "b")
    assert "Traceback" not in r.stderr
    one_line(r, 3, "fx.npz")
    nothing_written(tmp_path)


def staging(d, out="b"):
    return [p for p in d.iterdir() if p.name.startswith(f".{out}.")]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=lambda s: s.name)
def test_signal_mid_capture_removes_the_staging_folder(tmp_path, sig):
    np.savez(tmp_path / "fx.npz", **{f"fixture_{k}/input_0": X + k for k in range(3)})
    old = tmp_path / "b"  # an older bundle at the output: kept as it was
    old.mkdir()
    (old / "parity.json").write_text('{"old": true}')
    p = subprocess.Popen([sys.executable, "-m", "onnxparity", "capture", "test_capture_hostile:slow_net",
                          "--fixtures", str(tmp_path / "fx.npz"), "--out", str(old)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env(), cwd=ROOT)
    try:
        deadline = time.monotonic() + 120
        while not staging(tmp_path) and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert staging(tmp_path), "the capture never staged its bundle"
        time.sleep(1.0)  # well inside: the exporter is tracing
        assert p.poll() is None, "the capture finished before the signal: make it slower"
        p.send_signal(sig)
        _, err = p.communicate(timeout=120)
    finally:
        p.kill()
    assert p.returncode == -sig, (p.returncode, err[-3000:])
    assert staging(tmp_path) == [], err[-3000:]
    assert sorted(x.name for x in old.iterdir()) == ["parity.json"]
    assert (old / "parity.json").read_text() == '{"old": true}'
    assert err.splitlines()[-1] == (f"onnxparity: interrupted by {sig.name}: the unfinished bundle "
                                    "was removed"), err[-3000:]
    assert "Traceback" not in err
