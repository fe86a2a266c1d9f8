"""Installing the project as a user would (docs: README "Install").

- The pip wheel: built by the project's own build (pyproject.toml + setup.py,
  pip's builder without isolation: nothing downloaded), installed into a
  fresh virtual environment, then `onnxparity check` (the console entry that
  execs the bundled C tool, finding the bundled ONNX Runtime) and
  `onnxparity.capture(...)` run from there, outside the source tree.
- `make install PREFIX=...`: the tool, the static library, the headers and
  onnxparity.pc; a C program built with `pkg-config --cflags --libs
  onnxparity` against that prefix, and run.

Each child runs with the ONNXPARITY_* variables and PYTHONPATH removed, from
a folder outside the repository, so nothing of the source tree can stand in
for what was installed."""
import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, run

SYSTEM_PY = "/usr/bin/python3"


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("ONNXPARITY_") and k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    r = run([SYSTEM_PY, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-cache-dir",
             "--no-index", "-w", out, ROOT], env=clean_env(), cwd=out, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    wheels = sorted(out.glob("onnxparity-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory):
    """A fresh venv over /usr/bin/python3 (its site packages visible: numpy,
    and Debian's torch 1.13 for the capture) with the wheel installed."""
    d = tmp_path_factory.mktemp("venv") / "env"
    r = run([SYSTEM_PY, "-m", "venv", "--system-site-packages", d])
    assert r.returncode == 0, r.stderr
    r = run([d / "bin" / "python", "-m", "pip", "install", "--no-index", "--no-cache-dir", wheel],
            env=clean_env(), cwd=d, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return d


def test_wheel_is_a_platform_wheel_with_the_tool(wheel):
    import zipfile
    names = zipfile.ZipFile(wheel).namelist()
    assert wheel.name.endswith("-py3-none-linux_x86_64.whl"), wheel.name
    assert "onnxparity/_native/bin/onnxparity" in names
    assert "onnxparity/_native/lib/onnxparity/libonnxruntime.so.1" in names
    assert "onnxparity/capture.py" in names and "onnxparity/_tool.py" in names


def test_wheel_check_runs_from_the_venv(venv, tmp_path):
    exe = venv / "bin" / "onnxparity"
    assert exe.is_file()
    r = run([exe, "--version"], env=clean_env(), cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("onnxparity "), r.stderr
    r = run([exe, "check", ROOT / "examples" / "healthy", "--format", "json"], env=clean_env(),
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["verdict"] == "pass"
    # the ONNX Runtime found is the one the wheel carries, inside the venv
    lib = os.path.realpath(doc["environment"]["ort_library"])
    assert lib.startswith(os.path.realpath(venv)), lib
    # and a failing bundle exits 1 through the wrapper (the tool's own code)
    r = run([exe, "check", ROOT / "examples" / "training", "--no-bisect"], env=clean_env(),
            cwd=tmp_path)
    assert r.returncode == 1, r.stderr


CAPTURE = r"""
import json, subprocess, sys
import torch, onnxparity
assert onnxparity.__file__.startswith(sys.prefix), onnxparity.__file__
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(6, 4), torch.nn.ReLU(), torch.nn.Linear(4, 3)).eval()
onnxparity.capture(model, [torch.randn(1, 6), torch.randn(3, 6)], sys.argv[1])
r = subprocess.run(["onnxparity", "check", sys.argv[1], "--format", "json"], capture_output=True, text=True)
print(json.dumps({"rc": r.returncode, "stderr": r.stderr, "doc": json.loads(r.stdout or "null")}))
"""


def test_wheel_capture_runs_from_the_venv(venv, tmp_path):
    r = run([SYSTEM_PY, "-c", "import torch"])
    if r.returncode:
        pytest.skip("no torch for /usr/bin/python3 (apt-get install python3-torch)")
    script = tmp_path / "cap.py"
    script.write_text(CAPTURE)
    env = clean_env(PATH=f"{venv / 'bin'}:{os.environ.get('PATH', '')}")
    r = run([venv / "bin" / "python", script, tmp_path / "bundle"], env=env, cwd=tmp_path,
            timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    assert res["rc"] == 0, res["stderr"]
    assert res["doc"]["verdict"] == "pass" and res["doc"]["summary"]["fixtures"] == 2


PROGRAM = r"""
#include <stdio.h>
#include <onnxparity/model.h>
#include <onnxparity/tfile.h>

int main(int argc, char **argv)
{
    onp_model *m;
    onp_error e;
    char hex[65];
    if (argc != 3 || onp_model_open(argv[1], &m, &e)) return 2;
    onp_model_sha256(m, hex);
    printf("sha256 %s nodes %zu\n", hex, onp_model_graph(m)->n_nodes);
    onp_model_close(m);
    onp_tensor t;
    if (onp_tfile_read(argv[2], NULL, &t, &e)) return 3;
    printf("rank %d dim0 %lld\n", (int)t.rank, (long long)t.dims[0]);
    onp_tensor_release(&t);
    return 0;
}
"""


def test_make_install_and_pkg_config(tmp_path):
    for tool in ("pkg-config", "cc"):
        if not shutil.which(tool):
            pytest.skip(f"no {tool} (apt-get install pkg-config build-essential)")
    prefix = tmp_path / "prefix with space"
    r = run(["make", "-C", ROOT, "install", f"PREFIX={prefix}"], env=clean_env(), timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    for p in ("bin/onnxparity", "lib/libonnxparity.a", "include/onnxparity/model.h",
              "lib/pkgconfig/onnxparity.pc", "lib/onnxparity/libonnxruntime.so.1"):
        assert (prefix / p).is_file(), p
    src = tmp_path / "prog.c"
    src.write_text(PROGRAM)
    env = clean_env(PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    r = run(["pkg-config", "--cflags", "--libs", "onnxparity"], env=env)
    assert r.returncode == 0, r.stderr
    flags = r.stdout.split()
    r = run(["pkg-config", "--modversion", "onnxparity"], env=env)
    assert r.stdout.strip() == run([prefix / "bin" / "onnxparity", "--version"]).stdout.split()[1]
    # a prefix with a space: pkg-config escapes it with backslashes, which
    # the shell reads back when it parses the flags as text (as a Makefile's
    # $(shell pkg-config ...) does; here eval)
    r = subprocess.run('eval "cc -std=c11 -o prog prog.c $(pkg-config --cflags --libs onnxparity)"',
                       shell=True, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr + " ".join(flags)
    model = ROOT / "examples" / "healthy" / "model.onnx"
    r = run([tmp_path / "prog", model, ROOT / "examples" / "healthy" / "test_data_set_1" / "input_0.pb"])
    assert r.returncode == 0, r.stderr
    sha = hashlib.sha256(model.read_bytes()).hexdigest()
    assert r.stdout.splitlines()[0].startswith(f"sha256 {sha} nodes ")
    assert r.stdout.splitlines()[1] == "rank 4 dim0 2"
    # the installed tool finds the ONNX Runtime installed beside it
    r = run([prefix / "bin" / "onnxparity", "check", ROOT / "examples" / "healthy", "--format",
             "json"], env=clean_env(), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lib = json.loads(r.stdout)["environment"]["ort_library"]
    assert os.path.realpath(lib) == os.path.realpath(prefix / "lib" / "onnxparity" /
                                                     "libonnxruntime.so.1"), lib
