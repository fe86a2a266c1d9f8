"""Shared fixtures for the python tests: where the onnxparity binary, the
test tools and Debian's ONNX test data are.  Tests needing something absent
skip and say why; `make test` installs everything, so in CI nothing skips."""
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = pathlib.Path("/usr/share/libonnx-testdata/data")

# the capture package, for the tests that import it (PYTHONPATH=python, as
# `make test` sets it, is the documented way; this covers a bare pytest run)
if str(ROOT / "python") not in sys.path:
    sys.path.insert(0, str(ROOT / "python"))


def _bin():
    return os.environ.get("ONNXPARITY_BIN", str(ROOT / "build" / "onnxparity"))


@pytest.fixture(scope="session")
def onnxparity():
    b = _bin()
    if not os.path.exists(b):
        pytest.skip(f"{b} is not built (run make)")
    return b


@pytest.fixture(scope="session")
def tools():
    d = pathlib.Path(os.environ.get("ONNXPARITY_TOOLS", str(ROOT / "build" / "tests" / "tools")))
    if not (d / "tdump").exists():
        pytest.skip(f"{d}/tdump is not built (run make test)")
    return d


@pytest.fixture(scope="session")
def testdata():
    if not DATA.is_dir():
        pytest.skip(f"{DATA} is missing (apt-get install libonnx-testdata)")
    return DATA


def run(args, **kw):
    """Run a command, capture text output, never raise on exit status."""
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, **kw)
