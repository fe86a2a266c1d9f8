"""Installing the project as a user would (docs: README "Install").

- The pip wheel: tests/py/test_wheel.py.
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
