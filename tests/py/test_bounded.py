"""Issue 19, bounded bundles without the digits: the ``intermediates`` policy
(all / none / the first K fixtures of each shape group), the bundle's size
printed on a terminal only, and bisect on a fixture without stored
intermediates (Must-show 3): with --fixture K it falls back to ONNX Runtime
at opt-level disable and says so, naming a fixture that stores them; with
--reference eager it is exit 2 with the same explanation; over every
fixture, when the ones with intermediates pass against eager, every fixture
is bisected at disable too (kept when a value diverges there), and the
result says what was tried.

Run: PYTHONPATH=python ONNXPARITY_BIN=$PWD/build/onnxparity \
     /usr/bin/python3 -m pytest -q tests/py/test_bounded.py
"""
import json
import os
import pty
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, run

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

import onnxparity  # noqa: E402
from onnxparity import _bounded  # noqa: E402
from onnxparity.errors import CaptureError  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning", "ignore::UserWarning")


@pytest.fixture(scope="module")
def binary(onnxparity):  # conftest's fixture: the binary's path (skips when it is not built)
    return onnxparity


def small_net():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU(),
                               torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 5)).eval()


def fixtures():
    g = torch.Generator().manual_seed(3)
    return [torch.rand(b, 3, 6, 6, generator=g) for b in (2, 2, 2, 3, 3, 3)]


def stored(root, doc):
    return [k for k, f in enumerate(doc["fixtures"])
            if (root / f["dir"] / "intermediates" / "index.json").exists()]


@pytest.mark.parametrize("policy, want", [(True, [0, 1, 2, 3, 4, 5]), ("all", [0, 1, 2, 3, 4, 5]),
                                          (1, [0, 3]), ("2", [0, 1, 3, 4]), (0, []), ("none", []),
                                          (False, [])])
def test_intermediates_policy(tmp_path, policy, want):
    doc = onnxparity.capture(small_net(), fixtures(), tmp_path / "b", intermediates=policy)
    assert stored(tmp_path / "b", doc) == want
    assert doc["intermediates"]["fixtures_stored"] == want
    assert doc["intermediates"]["enabled"] == bool(want)


@pytest.mark.parametrize("bad", [-1, "some", 1.5])
def test_intermediates_policy_refused(tmp_path, bad):
    with pytest.raises(CaptureError, match="intermediates"):
        onnxparity.capture(small_net(), fixtures(), tmp_path / "b", intermediates=bad)
    assert not (tmp_path / "b").exists()


def test_size_printed_on_a_terminal_only(tmp_path):
    script = ("import torch, onnxparity\n"
              "torch.manual_seed(0)\n"
              "m = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2)).eval()\n"
              f"onnxparity.capture(m, [torch.rand(2, 4)], {str(tmp_path / 'b')!r})\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    master, slave = pty.openpty()
    p = subprocess.run([sys.executable, "-W", "ignore", "-c", script], stderr=slave, stdout=subprocess.PIPE,
                       env=env, timeout=300)
    os.close(slave)
    said = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        said += chunk
    os.close(master)
    assert p.returncode == 0
    size = _bounded.bundle_bytes(tmp_path / "b")
    assert f"onnxparity: bundle {tmp_path / 'b'}: {_bounded.human(size)}, 1 fixtures, 1 with " \
           "intermediates" in said.decode()
    # not a terminal: quiet
    shutil.rmtree(tmp_path / "b")
    q = subprocess.run([sys.executable, "-W", "ignore", "-c", script], capture_output=True, env=env,
                       timeout=300)
    assert q.returncode == 0 and b"onnxparity: bundle" not in q.stderr


# --------------------------------------------------------------------------- Must-show 3

@pytest.fixture(scope="module")
def bounded(tmp_path_factory):
    """A healthy bundle with intermediates for the first fixture of each
    shape group (0 and 3), and a copy whose fixture 4 expects other logits
    (it fails; it stores no intermediates)."""
    import numpy as np
    import onnx
    from onnx import numpy_helper
    root = tmp_path_factory.mktemp("bounded")
    onnxparity.capture(small_net(), fixtures(), root / "ok", intermediates=1)
    shutil.copytree(root / "ok", root / "bad")
    # eager's output and its float64 twin alike: a float64 reference that
    # disagrees with eager's file would make the file's error float32
    # eager's own (ill-conditioned, within its noise), and check pass it
    for p in (root / "bad" / "test_data_set_4" / "output_0.pb",
              root / "bad" / "test_data_set_4" / "reference64" / "output_0.pb"):
        t = onnx.TensorProto()
        t.ParseFromString(p.read_bytes())
        a = numpy_helper.to_array(t)
        p.write_bytes(numpy_helper.from_array(a + a.dtype.type(3), t.name).SerializeToString())
    return root


def bisect(binary, bundle, *args):
    r = run([binary, "bisect", bundle, "--format", "json", *args])
    return r, (json.loads(r.stdout) if r.stdout.strip() else None)


def test_fixture_without_intermediates_falls_back_to_disable(binary, bounded):
    r, doc = bisect(binary, bounded / "bad", "--fixture", "4")
    assert r.returncode in (0, 1), r.stderr
    assert doc["reference"] == "disable" and doc["fixtures_without_intermediates"] == 1
    assert doc["reference_note"].startswith("fixture 4 has no stored intermediates")
    assert "bisect --fixture 0, which stores them" in doc["reference_note"]
    text = run([binary, "bisect", bounded / "bad", "--fixture", "4"]).stdout
    assert "reference: fixture 4 has no stored intermediates" in text


def test_fixture_without_intermediates_eager_is_exit_2(binary, bounded):
    r = run([binary, "bisect", bounded / "bad", "--fixture", "4", "--reference", "eager"])
    assert r.returncode == 2
    assert "fixture 4 has no stored intermediates" in r.stderr and "--reference disable" in r.stderr


def test_fixture_with_intermediates_uses_eager(binary, bounded):
    r, doc = bisect(binary, bounded / "bad", "--fixture", "3")
    assert doc["reference"] == "eager" and doc["fixtures_without_intermediates"] == 0
    assert doc["reference_note"] is None


def test_every_fixture_failure_outside_the_subset(binary, bounded):
    # fixtures 0 and 3 (with intermediates) pass against eager; fixture 4 fails
    # by a wrong expected file, which no optimization level explains: the
    # result stays eager over the subset and says what was tried
    r, doc = bisect(binary, bounded / "bad")
    assert doc["reference"] == "eager" and doc["fixtures"] == [0, 3]
    assert doc["fixtures_without_intermediates"] == 4
    assert doc["reference_note"] == (
        "4 of 6 fixtures have no stored intermediates (parity.json intermediates.policy) and are not "
        "compared with the eager reference; those pass against eager, and at opt-level disable no value "
        'diverges on any fixture: to bisect the others against eager, capture with intermediates="all"')


def test_healthy_bounded_bundle_bisects_the_subset(binary, bounded):
    r, doc = bisect(binary, bounded / "ok")
    assert r.returncode == 0
    assert doc["reference"] == "eager" and doc["fixtures"] == [0, 3]
    assert doc["reference_note"].startswith("4 of 6 fixtures have no stored intermediates (parity.json "
                                            "intermediates.policy) and are not compared with the eager "
                                            "reference; those pass against eager")


def test_command_line_intermediates(tmp_path):
    import numpy as np
    npz = tmp_path / "fx.npz"
    np.savez(npz, input_0=np.random.default_rng(1).standard_normal((7, 3, 16, 16), dtype=np.float32))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "python"), str(ROOT / "tests" / "py")]),
               PYTHONWARNINGS="ignore")

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "onnxparity", "capture", "test_capture_models:small_net",
                               "--fixtures", str(npz), *map(str, args)], capture_output=True, text=True,
                              env=env, timeout=300)
    p = cli("--out", tmp_path / "b", "--split", "2,2,3", "--intermediates", "1")
    assert p.returncode == 0, p.stderr
    doc = json.loads((tmp_path / "b" / "parity.json").read_text())
    assert stored(tmp_path / "b", doc) == [0, 2] and doc["intermediates"]["policy"] == {"per_shape_group": 1}
    p = cli("--out", tmp_path / "c", "--intermediates", "some")
    assert p.returncode == 2 and "intermediates must be" in p.stderr and not (tmp_path / "c").exists()
