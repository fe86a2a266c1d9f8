"""Bring your own model and outputs (docs/cli.md "Bring your own"): every
command that judges fixtures — check, gate, bisect, sweep, diagnose — takes a
model plus data folders whose fixtures are .pb, .npy or .npz files, and a
test_data_set_K folder itself as --data; a folder with nothing to compare
exits 2 in each, never 1.

The folders are the shipped examples' fixtures rewritten with numpy
(np.save, np.savez), so the numbers judged are the bundles' own: the
healthy model passes on them and the training-mode one fails."""
import json
import shlex
import shutil

import pytest

from conftest import ROOT, run

np = pytest.importorskip("numpy")
onnx = pytest.importorskip("onnx")
from onnx import numpy_helper  # noqa: E402

HEALTHY = ROOT / "examples" / "healthy"
TRAINING = ROOT / "examples" / "training"


def rewrite(bundle, out, kind):
    """bundle's test_data_set_K/*.pb as KIND files under out/ (npy: np.save,
    npz: np.savez of the one array); returns out."""
    for fx in sorted(bundle.glob("test_data_set_*")):
        (out / fx.name).mkdir(parents=True)
        for pb in fx.glob("*.pb"):
            a = numpy_helper.to_array(onnx.load_tensor(str(pb)))
            if kind == "npy":
                np.save(out / fx.name / f"{pb.stem}.npy", a)
            else:
                np.savez(out / fx.name / f"{pb.stem}.npz", a)
    return out


def changed_model(src, dst):
    """The healthy model with its largest floating initializer scaled by 1.5:
    a model that computes the same at every optimization level, and not
    what the healthy fixtures' outputs expect."""
    m = onnx.load(str(src))
    init = max((t for t in m.graph.initializer if t.data_type == onnx.TensorProto.FLOAT),
               key=lambda t: int(np.prod(t.dims)))
    init.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(init) * np.float32(1.5), init.name))
    onnx.save(m, str(dst))
    return dst


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    d = tmp_path_factory.mktemp("byo")
    f = {kind: rewrite(HEALTHY, d / f"healthy {kind}", kind) for kind in ("npy", "npz")}
    f["training-npy"] = rewrite(TRAINING, d / "training-npy", "npy")
    f["model"] = d / "my model.onnx"  # not named model.onnx, a space in the name
    shutil.copy(HEALTHY / "model.onnx", f["model"])
    f["training-model"] = d / "training.onnx"
    shutil.copy(TRAINING / "model.onnx", f["training-model"])
    f["changed-model"] = changed_model(HEALTHY / "model.onnx", d / "changed.onnx")
    # nothing to compare: a file that is no fixture; a fixture without outputs
    (d / "stray" / "test_data_set_0").mkdir(parents=True)
    np.save(d / "stray" / "test_data_set_0" / "x.npy", np.zeros(3, np.float32))
    (d / "inputs-only" / "test_data_set_0").mkdir(parents=True)
    np.save(d / "inputs-only" / "test_data_set_0" / "input_0.npy",
            np.load(f["npy"] / "test_data_set_0" / "input_0.npy"))
    (d / "empty").mkdir()
    f["nothing"] = [d / "stray", d / "inputs-only", d / "empty"]
    return f


def judge(onnxparity, cmd, model, data, *extra, tmp_path=None):
    args = [onnxparity, cmd, "--model", model]
    for dd in (data if isinstance(data, list) else [data]):
        args += ["--data", dd]
    if cmd == "gate":
        args += ["--criteria", tmp_path / "criteria.json"]
    return run(args + list(extra) + ["--format", "json"])


@pytest.mark.parametrize("kind", ["npy", "npz"])
def test_check(onnxparity, folders, kind):
    r = judge(onnxparity, "check", folders["model"], folders[kind])
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["verdict"] == "pass"
    assert doc["summary"]["fixtures"] == 3 and doc["summary"]["outputs_compared"] == 3
    assert [fx["outputs"][0]["shape"][0] for fx in doc["fixtures"]] == [1, 2, 4]
    assert doc["model"] == str(folders["model"])


def test_check_fails_on_a_failing_model(onnxparity, folders):
    """The numbers are really judged: the training-mode export fails on the
    same .npy fixtures its bundle fails on."""
    r = judge(onnxparity, "check", folders["training-model"], folders["training-npy"],
              "--no-lint")
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["summary"]["outputs_failed"] > 0


def test_check_one_fixture_folder_itself(onnxparity, folders):
    r = judge(onnxparity, "check", folders["model"], folders["npy"] / "test_data_set_1")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["summary"]["fixtures"] == 1
    assert doc["fixtures"][0]["outputs"][0]["shape"] == [2, 10]
    # two fixture folders of different formats, in the order given
    r = judge(onnxparity, "check", folders["model"],
              [folders["npz"] / "test_data_set_2", folders["npy"] / "test_data_set_0"])
    assert r.returncode == 0, r.stderr
    fixtures = json.loads(r.stdout)["fixtures"]
    assert [fx["outputs"][0]["shape"][0] for fx in fixtures] == [4, 1]
    assert [fx["index"] for fx in fixtures] == [0, 1]  # numbered by position
    # the same in gate and bisect
    r = judge(onnxparity, "bisect", folders["model"],
              [folders["npz"] / "test_data_set_2", folders["npy"] / "test_data_set_0"])
    assert r.returncode == 0 and json.loads(r.stdout)["fixtures"] == [0, 1], r.stderr


def test_target_with_npy_fixtures(onnxparity, folders, tmp_path):
    """A bundle folder (TARGET) whose fixtures are .npy files."""
    b = tmp_path / "bundle"
    shutil.copytree(folders["npy"], b)
    shutil.copy(folders["model"], b / "model.onnx")
    for cmd in ("check", "bisect", "diagnose"):
        r = run([onnxparity, cmd, b, "--format", "json"])
        assert r.returncode == 0, (cmd, r.stderr)


@pytest.mark.parametrize("kind", ["npy", "npz"])
def test_bisect(onnxparity, folders, kind):
    r = judge(onnxparity, "bisect", folders["model"], folders[kind])
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["verdict"] == "agrees" and doc["fixtures"] == [0, 1, 2]
    assert doc["reference"] == "disable" and doc["summary"]["values_compared"] > 0
    assert doc["reproduce"]["expected"]["pass"] is True  # the fixtures' own outputs, as check
    r = judge(onnxparity, "bisect", folders["model"], folders[kind] / "test_data_set_2")
    assert r.returncode == 0 and json.loads(r.stdout)["fixtures"] == [2], r.stderr


def test_bisect_of_a_model_wrong_at_every_level_is_inconclusive(onnxparity, folders):
    """Without eager intermediates bisect compares against ONNX Runtime at
    opt-level disable.  A model that is not the one the outputs came from
    (the healthy model with one weight scaled, changed_model) computes the
    same at every level: every value agrees with disable, while check fails
    on the same folders.  That is not "agrees" (exit 0): it is inconclusive
    (exit 1), judged against the fixtures' own outputs, naming what can
    bisect it."""
    chk = judge(onnxparity, "check", folders["changed-model"], folders["npy"], "--no-lint")
    assert chk.returncode == 1
    r = judge(onnxparity, "bisect", folders["changed-model"], folders["npy"])
    assert r.returncode == 1, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    assert doc["verdict"] == "inconclusive" and doc["first_divergent"] is None
    assert doc["reference"] == "disable"
    rp = doc["reproduce"]
    assert rp["plain"]["pass"] is True and rp["expected"]["pass"] is False
    worst = max(o["max_abs"] for f in json.loads(chk.stdout)["fixtures"] for o in f["outputs"])
    assert rp["expected"]["max_abs"] == pytest.approx(worst, rel=1e-6)
    text = run([onnxparity, "bisect", "--model", folders["changed-model"], "--data", folders["npy"]])
    assert text.returncode == 1
    first = text.stdout.splitlines()[0]
    assert first.startswith("inconclusive: ") and "fail against the fixtures' expected outputs" in first
    assert "onnxparity.capture" in first, first


def test_inputs_in_another_dtype_are_named_as_such(onnxparity, folders, tmp_path):
    """float64 .npy inputs (numpy's default) for the float32 model: ONNX
    Runtime refuses every fixture.  The cause is the dtype (input-dtype,
    high), with the fix to feed float32, not a size baked at export: the
    shapes fit, so baked-shape and its dynamic-dims fix would send the user
    the wrong way.  check and diagnose say the same."""
    d = tmp_path / "f64"
    shutil.copytree(folders["npy"], d)
    for p in d.glob("*/input_*.npy"):
        np.save(p, np.load(p).astype(np.float64))
    for cmd in ("check", "diagnose"):
        r = judge(onnxparity, cmd, folders["model"], d, *(("--no-sweep",) if cmd == "diagnose" else ()))
        assert r.returncode == 1, (cmd, r.stdout, r.stderr)
        causes = json.loads(r.stdout)["causes"]
        assert causes[0]["id"] == "input-dtype" and causes[0]["confidence"] == "high", (cmd, causes)
        assert not [c for c in causes if c["id"] in ("baked-shape", "unknown")], (cmd, causes)
        assert "in the dtype the graph declares" in causes[0]["fix"]
        assert "given float64" in causes[0]["evidence"][0]


def test_unexplained_failure_names_a_bisect_command_that_pastes(onnxparity, folders):
    """No rule explains the changed weight (cause unknown): check's text
    gives the bisect command for the same --model/--data, shell-quoted (the
    data folder's name has a space), and that command runs as printed."""
    r = run([onnxparity, "check", "--model", folders["changed-model"], "--data", folders["npy"],
             "--no-lint"])
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    at = [i for i, ln in enumerate(lines) if ln.startswith("cause    unknown ")]
    assert at, r.stdout
    runs = [ln.strip() for ln in lines[at[0]:] if ln.strip().startswith("run: ")]
    cmd = shlex.split(runs[0][len("run: "):])
    assert cmd[:2] == ["onnxparity", "bisect"] and cmd[2:] == ["--model", str(folders["changed-model"]),
                                                            "--data", str(folders["npy"])], runs[0]
    again = run([onnxparity, "bisect", *cmd[2:]])
    assert again.returncode == 1 and again.stdout.startswith("inconclusive: "), again.stderr


@pytest.mark.parametrize("kind", ["npy", "npz"])
def test_sweep(onnxparity, folders, kind):
    r = judge(onnxparity, "sweep", folders["model"], folders[kind], "--once")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["model"] == str(folders["model"]) and doc["fixtures"] == 3
    r = judge(onnxparity, "sweep", folders["training-model"], folders["training-npy"], "--once",
              "--no-search")
    assert r.returncode == 1, r.stderr


@pytest.mark.parametrize("kind", ["npy", "npz"])
def test_diagnose(onnxparity, folders, kind):
    r = judge(onnxparity, "diagnose", folders["model"], folders[kind])
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["verdict"] == "pass" and doc["model"] == str(folders["model"])


def test_diagnose_fails_on_a_failing_model(onnxparity, folders):
    r = judge(onnxparity, "diagnose", folders["training-model"], folders["training-npy"],
              "--no-sweep")
    assert r.returncode == 1, r.stderr
    assert json.loads(r.stdout)["causes"][0]["id"] == "training-mode"


@pytest.mark.parametrize("kind", ["npy", "npz"])
def test_gate(onnxparity, folders, kind, tmp_path):
    r = judge(onnxparity, "gate", folders["model"], folders[kind], "--record", tmp_path=tmp_path)
    assert r.returncode == 0, r.stderr
    crit = json.loads((tmp_path / "criteria.json").read_text())
    assert crit["fixtures"] == 3 and crit["outputs"]
    # judged against them, with the other format: the same numbers
    other = folders["npz" if kind == "npy" else "npy"]
    r = judge(onnxparity, "gate", folders["model"], other, tmp_path=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["verdict"] == "pass"
    # a failing model's outputs against the same fixtures: recording refuses
    r = judge(onnxparity, "gate", folders["training-model"], folders["training-npy"], "--record",
              tmp_path=tmp_path / "..")
    assert r.returncode == 1, r.stderr


@pytest.mark.parametrize("cmd", ["check", "gate", "bisect", "sweep", "diagnose"])
def test_nothing_to_compare_is_exit_2(onnxparity, folders, cmd, tmp_path):
    if cmd == "gate":  # criteria to judge against, from the healthy fixtures
        r = judge(onnxparity, cmd, folders["model"], folders["npy"], "--record", tmp_path=tmp_path)
        assert r.returncode == 0, r.stderr
    for d in folders["nothing"]:
        for extra in ([], ["--record"]) if cmd == "gate" else ([],):
            r = judge(onnxparity, cmd, folders["model"], d, *extra, tmp_path=tmp_path)
            assert r.returncode == 2, (cmd, d.name, extra, r.returncode, r.stderr)
        assert "nothing to compare" in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    # the same through a TARGET holding only the model and a stray file
    b = tmp_path / "b"
    shutil.copytree(folders["nothing"][0], b)
    shutil.copy(folders["model"], b / "model.onnx")
    args = [onnxparity, cmd, b] + (["--criteria", tmp_path / "criteria.json"] if cmd == "gate" else [])
    r = run(args)
    assert r.returncode == 2 and "nothing to compare" in r.stderr, (cmd, r.stderr)


@pytest.mark.parametrize("cmd", ["check", "gate", "bisect", "sweep", "diagnose"])
def test_target_and_model_data_are_exclusive(onnxparity, folders, cmd, tmp_path):
    extra = ["--criteria", tmp_path / "c.json"] if cmd == "gate" else []
    r = run([onnxparity, cmd, HEALTHY, "--model", folders["model"], "--data", folders["npy"]] + extra)
    assert r.returncode == 2 and "not both" in r.stderr, r.stderr
    r = run([onnxparity, cmd, "--model", folders["model"]] + extra)
    assert r.returncode == 2 and "--data" in r.stderr, r.stderr
