"""--save-repro under the output rule for folders (issue 36).

bisect (and diagnose, through the same library call) wrote its reproducer
into an existing folder (replacing the user's model.onnx there), through a
symlink into another folder, and inside the fixture folder it had scanned.
Now the folder must be new (onp_out_check_new_dir, outpath.h): anything at
the path — a folder, empty or not, a file, a symlink, dangling or not — or a
path inside the bundle, a --data folder or a fixture folder is refused
before anything runs: exit 2, one line naming the path, nothing written.
A new folder still receives the whole reproducer.  The one-line cases per
class are in tests/bad_inputs/make_cases.py (c_save_repro); these tests
show what used to be destroyed, byte for byte.

Run: PYTHONPATH=python ONNXPARITY_BIN=$PWD/build/onnxparity \
     /usr/bin/python3 -m pytest -q tests/py/test_save_repro.py
"""
import json
import os
import pathlib
import shutil

import pytest

from conftest import run

ROOT = pathlib.Path(__file__).resolve().parents[2]
TRAINING = ROOT / "examples" / "training"  # bisect finds a local divergence here
REPRO_FILES = {"README.md", "model.onnx", "test_data_set_0", "test_data_set_0/input_0.pb",
               "test_data_set_0/output_0.pb"}


def tree(d):
    """{relative path: bytes or None for a folder} of everything under d."""
    out = {}
    for p in sorted(pathlib.Path(d).rglob("*")):
        out[str(p.relative_to(d))] = None if p.is_dir() else p.read_bytes()
    return out


@pytest.fixture
def bundle(tmp_path):
    b = tmp_path / "bundle"
    shutil.copytree(TRAINING, b)
    return b


def refused(r, path):
    assert r.returncode == 2, (r.returncode, r.stderr, r.stdout[-1000:])
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and str(path) in lines[0], r.stderr
    return lines[0]


def test_new_folder_receives_the_reproducer(onnxparity, bundle, tmp_path):
    repro = tmp_path / "repro"
    r = run([onnxparity, "bisect", bundle, "--save-repro", str(repro) + "/", "--format", "json"])
    assert r.returncode == 1, r.stderr
    assert json.loads(r.stdout)["first_divergent"]["repro"] == str(repro) + "/"
    assert set(tree(repro)) == REPRO_FILES
    chk = run([onnxparity, "check", repro, "--strict-tol"])
    assert chk.returncode == 1 and "verdict: FAIL" in chk.stdout


def test_existing_folder_keeps_the_users_files(onnxparity, bundle, tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "model.onnx").write_bytes(b"the user's own model")
    (mine / "notes.txt").write_text("keep me")
    before = tree(mine)
    html = tmp_path / "report.html"
    r = run([onnxparity, "bisect", bundle, "--save-repro", mine, "--html", html])
    assert tree(mine) == before  # model.onnx was replaced, README.md and fixtures added
    assert "exists (a folder)" in refused(r, mine)
    assert not html.exists()  # refused before anything runs: no report either


def test_empty_folder_is_refused(onnxparity, bundle, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    r = run([onnxparity, "bisect", bundle, "--save-repro", empty])
    assert tree(empty) == {}
    refused(r, empty)


def test_symlink_is_never_followed(onnxparity, bundle, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "model.onnx").write_bytes(b"another project's model")
    before = tree(other)
    os.symlink(other, tmp_path / "link")
    os.symlink(tmp_path / "not-yet", tmp_path / "dangling")
    r = run([onnxparity, "bisect", bundle, "--save-repro", tmp_path / "link"])
    assert tree(other) == before
    assert "exists (a symbolic link)" in refused(r, tmp_path / "link")
    r = run([onnxparity, "bisect", bundle, "--save-repro", tmp_path / "dangling"])
    assert not os.path.lexists(tmp_path / "not-yet")
    refused(r, tmp_path / "dangling")


@pytest.mark.parametrize("where", ["test_data_set_0/repro", "repro", "test_data_set_0/intermediates/repro"])
def test_nothing_inside_what_the_command_reads(onnxparity, bundle, where):
    """Inside a fixture folder the reproducer's own test_data_set_0 would be
    read as part of the bundle's fixtures next time; inside the bundle it is
    among the files the command reads."""
    before = tree(bundle)
    r = run([onnxparity, "bisect", bundle, "--save-repro", bundle / where])
    assert tree(bundle) == before
    assert "which this command reads" in refused(r, bundle / where)


def test_data_folder_given_by_flag(onnxparity, bundle, tmp_path):
    fx = bundle / "test_data_set_0"
    before = tree(bundle)
    r = run([onnxparity, "bisect", "--model", bundle / "model.onnx", "--data", fx,
             "--save-repro", fx / "repro"])
    assert tree(bundle) == before
    refused(r, fx / "repro")
    # the same run with a new folder outside writes it
    r = run([onnxparity, "bisect", "--model", bundle / "model.onnx", "--data", fx,
             "--save-repro", tmp_path / "out"])
    assert r.returncode == 1 and set(tree(tmp_path / "out")) == REPRO_FILES, r.stderr


def test_missing_parent_is_an_io_error(onnxparity, bundle, tmp_path):
    r = run([onnxparity, "bisect", bundle, "--save-repro", tmp_path / "no" / "repro"])
    assert r.returncode == 3 and "does not exist" in r.stderr and len(r.stderr.splitlines()) == 1
    assert not (tmp_path / "no").exists()


def test_diagnose_writes_a_new_folder(onnxparity, bundle, tmp_path):
    repro = tmp_path / "repro-diagnose"
    r = run([onnxparity, "diagnose", bundle, "--no-sweep", "--format", "json", "--save-repro", repro],
            timeout=600)
    assert r.returncode == 1, r.stderr
    assert json.loads(r.stdout)["repro"] == str(repro) and set(tree(repro)) == REPRO_FILES


def test_diagnose_refuses_an_existing_folder(onnxparity, bundle, tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "model.onnx").write_bytes(b"the user's own model")
    before = tree(mine)
    r = run([onnxparity, "diagnose", bundle, "--no-sweep", "--save-repro", mine], timeout=600)
    assert tree(mine) == before
    refused(r, mine)
