"""Installing the project as a user would (docs: README "Install").

- The pip wheel: built by the project's own build (pyproject.toml + setup.py,
  pip's builder without isolation: nothing downloaded), installed into a
  fresh virtual environment, then `onnxparity check` (the console entry that
  execs the bundled C tool, finding the bundled ONNX Runtime) and
  `onnxparity.capture(...)` run from there, outside the source tree.
  The wheel also carries the shared library, which ctypes loads from the
  installed package.
- `make install PREFIX=...`: the tool, the static and the shared library
  (libonnxparity.so.VERSION, SONAME libonnxparity.so.MAJOR, and its links),
  the headers, onnxparity.pc and onnxparity-static.pc; one C program built
  against that prefix twice: with `pkg-config --cflags --libs onnxparity`
  (the shared library, run with LD_LIBRARY_PATH) and with
  onnxparity-static.pc (the archive: no libonnxparity needed at run time).

Each child runs with the ONNXPARITY_* variables and PYTHONPATH removed, from
a folder outside the repository, so nothing of the source tree can stand in
for what was installed."""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, run

SYSTEM_PY = "/usr/bin/python3"


def source_version():
    """(MAJOR, MINOR, PATCH) from include/onnxparity/version.h, the one place
    the version is written."""
    text = (ROOT / "include" / "onnxparity" / "version.h").read_text()
    return tuple(int(re.search(rf"^#define ONP_VERSION_{p} (\d+)$", text, re.M).group(1))
                 for p in ("MAJOR", "MINOR", "PATCH"))


VERSION = ".".join(map(str, source_version()))
SONAME = f"libonnxparity.so.{source_version()[0]}"


def dynamic_section(path):
    """readelf -d PATH as {tag: [values]}, e.g. {"SONAME": ["libonnxparity.so.0"]}."""
    r = run(["readelf", "-d", path])
    assert r.returncode == 0, r.stderr
    out = {}
    for tag, val in re.findall(r"\((\w+)\)\s+[^\[]*\[([^\]]*)\]", r.stdout):
        out.setdefault(tag, []).append(val)
    return out


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
    assert f"onnxparity/_native/lib/{SONAME}" in names
    # the wheel's version is the library's (python's __version__ is a copy)
    assert wheel.name.startswith(f"onnxparity-{VERSION}-"), wheel.name
    assert "onnxparity/capture.py" in names and "onnxparity/_tool.py" in names


def test_wheel_check_runs_from_the_venv(venv, tmp_path):
    exe = venv / "bin" / "onnxparity"
    assert exe.is_file()
    r = run([exe, "--version"], env=clean_env(), cwd=tmp_path)
    assert r.returncode == 0 and r.stdout == f"onnxparity {VERSION}\n", r.stdout + r.stderr
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


LOAD_SHARED = r"""
import ctypes, json, pathlib, sys
import onnxparity
lib = pathlib.Path(onnxparity.__file__).parent / "_native" / "lib" / sys.argv[1]
so = ctypes.CDLL(str(lib))
so.onp_version.restype = ctypes.c_char_p
print(json.dumps({"path": str(lib), "version": so.onp_version().decode(),
                  "number": so.onp_version_number()}))
"""


def test_wheel_shared_library_loads_from_the_venv(venv, tmp_path):
    script = tmp_path / "load.py"
    script.write_text(LOAD_SHARED)
    r = run([venv / "bin" / "python", script, SONAME], env=clean_env(), cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout)
    assert os.path.realpath(res["path"]).startswith(os.path.realpath(venv)), res["path"]
    major, minor, patch = source_version()
    assert res["version"] == VERSION
    assert res["number"] == major * 1000000 + minor * 1000 + patch


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
#include <string.h>
#include <onnxparity/model.h>
#include <onnxparity/tfile.h>
#include <onnxparity/version.h>

int main(int argc, char **argv)
{
    onp_model *m;
    onp_error e;
    char hex[65];
    if (strcmp(onp_version(), ONP_VERSION)) return 4; /* header and library from one install */
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


def build_with_pkg_config(pc, prefix, tmp_path, name):
    """cc -o NAME prog.c $(pkg-config --cflags --libs PC) against PREFIX.  A
    prefix with a space: pkg-config escapes it with backslashes, which the
    shell reads back when it parses the flags as text (as a Makefile's
    $(shell pkg-config ...) does; here eval)."""
    env = clean_env(PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    r = run(["pkg-config", "--cflags", "--libs", pc], env=env)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(f'eval "cc -std=c11 -o {name} prog.c $(pkg-config --cflags --libs {pc})"',
                       shell=True, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return tmp_path / name


def run_program(prog, **env):
    model = ROOT / "examples" / "healthy" / "model.onnx"
    r = run([prog, model, ROOT / "examples" / "healthy" / "test_data_set_1" / "input_0.pb"],
            env=clean_env(**env))
    assert r.returncode == 0, (r.returncode, r.stderr)
    sha = hashlib.sha256(model.read_bytes()).hexdigest()
    assert r.stdout.splitlines()[0].startswith(f"sha256 {sha} nodes ")
    assert r.stdout.splitlines()[1] == "rank 4 dim0 2"


def test_make_install_and_pkg_config(tmp_path):
    for tool in ("pkg-config", "cc", "readelf"):
        if not shutil.which(tool):
            pytest.skip(f"no {tool} (apt-get install pkg-config build-essential)")
    prefix = tmp_path / "prefix with space"
    r = run(["make", "-C", ROOT, "install", f"PREFIX={prefix}"], env=clean_env(), timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    libdir = prefix / "lib"
    for p in ("bin/onnxparity", "lib/libonnxparity.a", f"lib/libonnxparity.so.{VERSION}",
              "include/onnxparity/model.h", "include/onnxparity/version.h",
              "lib/pkgconfig/onnxparity.pc", "lib/pkgconfig/onnxparity-static.pc",
              "lib/onnxparity/libonnxruntime.so.1"):
        assert (prefix / p).is_file(), p
    # the links: the SONAME (what the loader looks for) and the linker's name
    assert os.readlink(libdir / SONAME) == f"libonnxparity.so.{VERSION}"
    assert os.readlink(libdir / "libonnxparity.so") == SONAME
    dyn = dynamic_section(libdir / f"libonnxparity.so.{VERSION}")
    assert dyn["SONAME"] == [SONAME], dyn
    # it names what it links against itself, and exports the public API only
    assert "libjansson.so.4" in dyn["NEEDED"], dyn
    r = run(["nm", "-D", "--defined-only", libdir / f"libonnxparity.so.{VERSION}"])
    exported = [ln.split()[-1] for ln in r.stdout.splitlines() if ln.strip()]
    assert "onp_model_open" in exported and "onp_version" in exported
    assert [n for n in exported if not n.startswith("onp_")] == []

    env = clean_env(PKG_CONFIG_PATH=str(libdir / "pkgconfig"))
    r = run(["pkg-config", "--modversion", "onnxparity"], env=env)
    assert r.stdout.strip() == VERSION
    assert run([prefix / "bin" / "onnxparity", "--version"]).stdout.split()[1] == VERSION
    # pkg-config --static adds what the archive needs (Libs.private)
    r = run(["pkg-config", "--static", "--libs", "onnxparity"], env=env)
    assert "-ljansson" in r.stdout.split() and "-lonnxparity" in r.stdout.split(), r.stdout
    r = run(["pkg-config", "--libs", "onnxparity"], env=env)
    assert "-ljansson" not in r.stdout.split(), r.stdout

    (tmp_path / "prog.c").write_text(PROGRAM)
    # shared: needs the SONAME at run time; found here through LD_LIBRARY_PATH
    prog = build_with_pkg_config("onnxparity", prefix, tmp_path, "prog_shared")
    assert SONAME in dynamic_section(prog)["NEEDED"]
    run_program(prog, LD_LIBRARY_PATH=str(libdir))
    r = run(["ldd", prog], env=clean_env(LD_LIBRARY_PATH=str(libdir)))
    line = next(ln for ln in r.stdout.splitlines() if SONAME in ln)
    assert os.path.realpath(line.split("=>")[1].split("(")[0].strip()) == \
        os.path.realpath(libdir / f"libonnxparity.so.{VERSION}"), line
    # static: the archive linked in, no libonnxparity at run time
    prog = build_with_pkg_config("onnxparity-static", prefix, tmp_path, "prog_static")
    assert not [n for n in dynamic_section(prog)["NEEDED"] if "onnxparity" in n]
    run_program(prog)

    # the installed tool finds the ONNX Runtime installed beside it
    r = run([prefix / "bin" / "onnxparity", "check", ROOT / "examples" / "healthy", "--format",
             "json"], env=clean_env(), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lib = json.loads(r.stdout)["environment"]["ort_library"]
    assert os.path.realpath(lib) == os.path.realpath(prefix / "lib" / "onnxparity" /
                                                     "libonnxruntime.so.1"), lib
