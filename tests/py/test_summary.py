"""--summary FILE (check, gate): the Markdown job summary is appended without
ever waiting, and a failed append says so (issue 36).

- a FIFO that no process reads is refused at once (exit 3, one line); the
  open blocked forever before.  With a reader there, the summary arrives.
- a write that fails part-way (a size limit here; a full disk alike) is one
  line naming the file, exit 3, and the regular file is cut back to what it
  held: nothing half-appended (it exited 3 without a word, the file cut off
  mid-table).
The special files /dev/full and a FIFO under gate are bad-input cases
(tests/bad_inputs/make_cases.py, c_summary_special_files)."""
import os
import pathlib
import resource
import subprocess
import threading

import pytest

from conftest import ROOT

HEALTHY = ROOT / "examples" / "healthy"


@pytest.fixture(autouse=True)
def _needs_ort():
    if not (ROOT / "third_party" / "onnxruntime" / "lib").is_dir() and not os.environ.get("ONNXPARITY_ORT_LIB"):
        pytest.skip("ONNX Runtime is not installed (make setup)")


def _run(argv, timeout=60, **kw):
    try:
        return subprocess.run([str(a) for a in argv], capture_output=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired:
        pytest.fail(f"no answer within {timeout} s: {argv[1:]} (waiting on the summary?)")


def _one_line(r):
    lines = r.stderr.decode("utf-8", "replace").splitlines()
    assert len(lines) == 1, r.stderr
    return lines[0]


def test_fifo_is_written_only_when_read(onnxparity, tmp_path):
    fifo = tmp_path / "summary.fifo"
    os.mkfifo(fifo)
    r = _run([onnxparity, "check", HEALTHY, "--summary", fifo], timeout=30)
    assert r.returncode == 3, r.stderr
    assert "summary.fifo: cannot open for appending: a FIFO that no process reads" in _one_line(r)

    got = []
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader, there before the tool opens it
    try:
        def drain():
            os.set_blocking(fd, True)
            while True:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                got.append(chunk)
        w = os.open(fifo, os.O_WRONLY)  # keeps the pipe open until the tool has written
        t = threading.Thread(target=drain)
        t.start()
        r = _run([onnxparity, "check", HEALTHY, "--summary", fifo], timeout=60)
        os.close(w)
        t.join(30)
    finally:
        os.close(fd)
    assert r.returncode == 0, r.stderr
    assert not r.stderr
    assert b"".join(got).startswith(b"### onnxparity check: pass")


def test_failed_append_leaves_the_file_as_it_was(onnxparity, tmp_path):
    """Past `ulimit -f` the append stops part-way (EFBIG): one line, exit 3,
    the earlier steps' summary kept byte for byte, nothing of this one."""
    md = tmp_path / "summary.md"
    before = b"earlier step\n" + b"x" * 1000 + b"\n"
    md.write_bytes(before)

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (len(before) + 40, len(before) + 40))
    r = _run([onnxparity, "check", HEALTHY, "--summary", md], preexec_fn=limit)
    assert r.returncode == 3, r.stderr
    line = _one_line(r)
    assert "summary.md: cannot append the summary: File too large (nothing appended)" in line, line
    assert md.read_bytes() == before

