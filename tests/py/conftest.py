"""Shared fixtures for the python tests: where the onnxparity binary, the
test tools and Debian's ONNX test data are.  Tests needing something absent
skip and say why; `make test` installs everything, so in CI nothing skips.

Two torches: `make test` runs tests/py under Debian's torch 1.13 (legacy
exporter only) and the capture, zoo and diagnosis tests again under the
venv's torch 2.x with ONNXPARITY_EXPECT_EXPORTER=dynamo.  With that variable
set, every capture made in a test (capture, export_submodules) must come out
of that exporter: a capture under exporter="auto" that fell back to legacy
fails the test that made it, unless the test is marked
``@pytest.mark.exporter_fallback`` (it is about the fallback)."""
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


def expected_exporter():
    """The exporter capture(exporter="auto") must use here: the one named by
    ONNXPARITY_EXPECT_EXPORTER, else what the installed torch offers."""
    want = os.environ.get("ONNXPARITY_EXPECT_EXPORTER")
    if want:
        return want
    from onnxparity import _export
    return "dynamo" if _export.has_dynamo_exporter() else "legacy"


def pytest_configure(config):
    config.addinivalue_line("markers", "exporter_fallback: the test expects capture(exporter='auto') "
                                       "to fall back from dynamo to legacy")


@pytest.fixture(autouse=True)
def _no_silent_fallback(request, monkeypatch):
    """Under ONNXPARITY_EXPECT_EXPORTER, a capture that used another exporter
    than the one asked for (or than the expected one, under "auto") fails."""
    want = os.environ.get("ONNXPARITY_EXPECT_EXPORTER")
    if not want or request.node.get_closest_marker("exporter_fallback") or "torch" not in sys.modules:
        yield
        return
    import importlib
    cap = importlib.import_module("onnxparity.capture")
    inner = cap._capture

    def checked(model, fixtures, out_dir, o, source):
        doc = inner(model, fixtures, out_dir, o, source)
        asked = o.exporter if o.exporter != "auto" else want
        if doc["exporter"] != asked or doc["exporter_fallback"] is not None:
            pytest.fail(f"capture of {type(model).__name__} used the {doc['exporter']} exporter, "
                        f"expected {asked} (ONNXPARITY_EXPECT_EXPORTER={want}); exporter_fallback: "
                        f"{doc['exporter_fallback']}", pytrace=False)
        return doc

    monkeypatch.setattr(cap, "_capture", checked)
    yield


@pytest.fixture(autouse=True)
def _captures_match_their_schema(monkeypatch):
    """Every bundle a test captures: its parity.json and each fixture's
    intermediates index validate against the published schemas
    (tests/py/consumers.py).  Only where the test already imported torch."""
    if "torch" not in sys.modules:
        yield
        return
    import importlib
    import json
    import consumers
    cap = importlib.import_module("onnxparity.capture")
    inner = cap._capture

    def checked(model, fixtures, out_dir, o, source):
        doc = inner(model, fixtures, out_dir, o, source)
        consumers.validate_doc(doc, f"{out_dir}/parity.json")
        for idx in pathlib.Path(out_dir).glob("test_data_set_*/intermediates/index.json"):
            consumers.validate_doc(json.loads(idx.read_text()), str(idx))
        return doc

    monkeypatch.setattr(cap, "_capture", checked)
    yield


def _bin():
    return os.environ.get("ONNXPARITY_BIN", str(ROOT / "build" / "onnxparity"))


@pytest.fixture(scope="session")
def onnxparity():
    b = _bin()
    if not os.path.exists(b):
        pytest.skip(f"{b} is not built (run make)")
    return b


@pytest.fixture(scope="session")
def lib():
    """The libonnxparity.so the in-process API loads (onnxparity.api), or a
    skip saying why there is none."""
    api = pytest.importorskip("onnxparity.api")
    try:
        return api.library_path()
    except FileNotFoundError as e:
        pytest.skip(str(e))


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
    """Run a command, capture text output, never raise on exit status.  What
    the command wrote goes through its real consumer (tests/py/consumers.py:
    junitparser, sarif-multitool, the published JSON Schemas): a file or
    document they refuse fails the test that ran it."""
    import tempfile
    import consumers
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kw)
    with tempfile.TemporaryDirectory() as tmp:
        consumers.consume(args, r, tmp)
    return r


def plant_weight(ok, bad, m, node, factor=1.5):
    """A copy of bundle `ok` at `bad` whose model is m (ok's, loaded) with
    node's weight (input 1) times `factor`: the planted fault."""
    import shutil
    import numpy as np
    import onnx
    from onnx import numpy_helper
    for t in m.graph.initializer:
        if t.name == node.input[1]:
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t) * np.float32(factor), t.name))
    shutil.copytree(ok, bad)
    onnx.save(m, str(bad / "model.onnx"))


def cpu_flags():
    """The CPU's feature flags (/proc/cpuinfo), empty where it cannot be read:
    for the tests whose numbers depend on what the CPU computes natively."""
    try:
        with open("/proc/cpuinfo") as f:
            return set(f.read().split())
    except OSError:
        return set()
