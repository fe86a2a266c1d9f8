"""The pip wheel as a user gets it (docs/install.md, issue 33).

`make wheel` builds it from the build folder the other tests use (pip's
builder, auditwheel's repair, scripts/wheel_graft.py); then:
- the wheel: a manylinux tag this pip accepts, whose glibc is the newest
  symbol version its ELF files ask for (read here with objdump, not taken
  from auditwheel); the tool, the shared library, ONNX Runtime and the
  libraries the tool links (onnxparity.libs/) inside; no install
  dependency, the capture's packages in the `capture` extra, whose ranges
  hold the versions the tests run.
- a fresh venv with the wheel and nothing else (no system site packages):
  `onnxparity --version`, `onnxparity check` (a pass, a failure's exit 1),
  `python -m onnxparity.ortlib` (exit 1, one line: there is no onnxruntime
  package), onnxparity.check in-process from the wheel's shared library; the
  capture says which extra it needs.
- `python -m onnxparity.ortlib` where an onnxruntime package is importable
  (the torch 2.x venv's, through PYTHONPATH): the path of its library, found
  without importing it, and `check --ort-lib` runs on that version.
- `ldd` of the installed tool and shared library: everything but glibc
  resolves inside the venv.
- the system's copies hidden: a mount namespace (unshare -m) binds an empty
  file over each of libzip, libcjson, libjansson, libcrypto, libssl, libbz2
  and libz under the loader's paths; there the repository's build of the
  tool fails to start (the hiding is real) while the wheel's tool checks a
  bundle, and the console entry does too (Python itself needs libz: the
  console entry's namespace keeps it).
- with torch present (a venv over /usr/bin/python3's site packages, Debian's
  torch 1.13): `import onnxparity` imports no torch, onnx or numpy; the first
  use of onnxparity.capture does, and a capture made there checks `pass`
  through the command; the same with the torch 2.x venv's packages on
  PYTHONPATH beside the bare venv (dynamo exporter).
- `make sdist`'s tarball, built by pip's builder alone, gives a working tool.

Each child runs with the ONNXPARITY_* variables and PYTHONPATH removed, from
a folder outside the repository."""
import email.parser
import json
import os
import pathlib
import re
import shutil
import subprocess
import zipfile

import pytest

from conftest import ROOT, run
from test_install import SONAME, SYSTEM_PY, VERSION, clean_env

HEALTHY = ROOT / "examples" / "healthy"
TRAINING = ROOT / "examples" / "training"
# what the tool may take from the system: glibc's own libraries
GLIBC = {"linux-vdso.so.1", "libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1",
         "ld-linux-x86-64.so.2", "/lib64/ld-linux-x86-64.so.2"}
# the system copies the test hides: what the tool links, and libssl beside libcrypto
HIDDEN = ("libzip.so.4", "libcjson.so.1", "libjansson.so.4", "libcrypto.so.3", "libssl.so.3",
          "libbz2.so.1.0", "libz.so.1")
HEAVY = ("torch", "onnx", "onnxscript", "onnxruntime", "numpy")
TORCH2_SITE = next((ROOT / ".venv-torch2" / "lib").glob("python3*/site-packages"),
                   ROOT / ".venv-torch2" / "lib" / "python3" / "site-packages")


def build_dir():
    """The build folder of the tool under test (make test-py passes
    ONNXPARITY_BIN=<repo>/BUILD/onnxparity): the wheel packs what the other
    tests ran; build/ otherwise."""
    b = os.environ.get("ONNXPARITY_BIN")
    if b and pathlib.Path(b).resolve().parent.parent == ROOT:
        return pathlib.Path(b).resolve().parent.name
    return "build"


def make_env():
    env = clean_env()
    for k in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL"):
        env.pop(k, None)
    return env


@pytest.fixture(scope="module")
def wheel():
    build = build_dir()
    r = run(["make", "-C", ROOT, f"BUILD={build}", "wheel"], env=make_env(), timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    wheels = sorted((ROOT / build / "wheel").glob("onnxparity-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def make_venv(wheel, where, system_site):
    d = where / "env"
    r = run([SYSTEM_PY, "-m", "venv", *(["--system-site-packages"] if system_site else []), d])
    assert r.returncode == 0, r.stderr
    r = run([d / "bin" / "python", "-m", "pip", "install", "--no-index", "--no-cache-dir", wheel],
            env=clean_env(), cwd=d, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return d


@pytest.fixture(scope="module")
def bare(wheel, tmp_path_factory):
    """A fresh venv with the wheel and nothing else."""
    return make_venv(wheel, tmp_path_factory.mktemp("bare"), system_site=False)


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory):
    """A fresh venv over /usr/bin/python3's site packages (Debian's torch
    1.13, onnx, numpy) with the wheel installed."""
    return make_venv(wheel, tmp_path_factory.mktemp("venv"), system_site=True)


def package_dir(env):
    (site,) = (env / "lib").glob("python3*/site-packages")
    return site / "onnxparity"


def tool(env):
    return package_dir(env) / "_native" / "bin" / "onnxparity"


def inside(path, env):
    return os.path.realpath(path).startswith(os.path.realpath(env) + os.sep)


# --- the wheel ------------------------------------------------------------------------


def elf_glibc_needs(root):
    """{file: (major, minor)} the newest GLIBC_x.y symbol version each ELF
    file under root asks for (objdump -T)."""
    out = {}
    for p in root.rglob("*"):
        if p.is_file() and p.read_bytes()[:4] == b"\x7fELF":
            r = run(["objdump", "-T", p])
            assert r.returncode == 0, r.stderr
            vs = {tuple(map(int, v)) for v in re.findall(r"\bGLIBC_(\d+)\.(\d+)", r.stdout)}
            out[p.relative_to(root).as_posix()] = max(vs)
    return out


def test_wheel_is_manylinux_with_its_libraries(wheel, tmp_path):
    if not shutil.which("objdump"):
        pytest.skip("no objdump (apt-get install binutils)")
    m = re.fullmatch(rf"onnxparity-{re.escape(VERSION)}-py3-none-manylinux_(\d+)_(\d+)_x86_64\.whl",
                     wheel.name)
    assert m, wheel.name
    tag = (int(m.group(1)), int(m.group(2)))
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        z.extractall(tmp_path / "w")
        meta = email.parser.Parser().parsestr(z.read(f"onnxparity-{VERSION}.dist-info/METADATA").decode())
    for n in ("onnxparity/_native/bin/onnxparity", f"onnxparity/_native/lib/{SONAME}",
              "onnxparity/_native/lib/onnxparity/libonnxruntime.so.1", "onnxparity/_tool.py",
              "onnxparity/capture.py", "onnxparity/ortlib.py"):
        assert n in names, n
    libs = sorted(n.split("/")[1] for n in names if n.startswith("onnxparity.libs/"))
    for stem in ("libzip", "libcjson", "libjansson", "libcrypto", "libbz2", "libz"):
        assert [n for n in libs if re.fullmatch(rf"{stem}-[0-9a-f]{{8}}\.so[.0-9]*", n)], (stem, libs)
    # the tag names the glibc the newest symbol version asks for: not older
    # (the wheel would install where it cannot run), not newer
    needs = elf_glibc_needs(tmp_path / "w")
    assert max(needs.values()) == tag, (tag, needs)
    # a tag this pip accepts (pip's own reading of the platform)
    r = run([SYSTEM_PY, "-c", "import sys\nfrom pip._vendor.packaging import tags\n"
             "print('\\n'.join(str(t) for t in tags.sys_tags()))"])
    assert f"py3-none-manylinux_{tag[0]}_{tag[1]}_x86_64" in r.stdout.split(), r.stderr
    # no install dependency; the capture's packages in its extra
    reqs = meta.get_all("Requires-Dist") or []
    assert all("extra ==" in r for r in reqs), reqs
    assert {re.match(r"[\w-]+", r).group(0) for r in reqs} == {"torch", "onnx", "onnxscript", "numpy"}, reqs


CHECK_EXTRA = r"""
import importlib.metadata as md, json, sys
from pip._vendor.packaging.requirements import Requirement
reqs = [Requirement(r) for r in json.loads(sys.argv[1])]
out = {}
for r in reqs:
    try:
        v = md.version(r.name)
    except md.PackageNotFoundError:
        continue
    out[r.name] = [v, r.specifier.contains(v, prereleases=True)]
print(json.dumps(out))
"""


def test_capture_extra_holds_the_versions_the_tests_run(wheel):
    """Debian's torch 1.13 / onnx 1.12 and the torch 2.x venv's torch,
    onnx, onnxscript, numpy satisfy the `capture` extra's ranges."""
    with zipfile.ZipFile(wheel) as z:
        meta = email.parser.Parser().parsestr(z.read(f"onnxparity-{VERSION}.dist-info/METADATA").decode())
    reqs = [r.split(";")[0].strip() for r in meta.get_all("Requires-Dist") or [] if "capture" in r]
    pythons = {"debian": SYSTEM_PY, "torch2": str(ROOT / ".venv-torch2" / "bin" / "python")}
    if not os.access(pythons["torch2"], os.X_OK):
        pytest.skip("no .venv-torch2 (make venv)")
    for name, py in pythons.items():
        r = run([py, "-c", CHECK_EXTRA, json.dumps(reqs)], env=clean_env())
        assert r.returncode == 0, r.stderr
        got = json.loads(r.stdout)
        want = {"torch", "onnx", "numpy"} | ({"onnxscript"} if name == "torch2" else set())
        assert want <= set(got), (name, got)
        assert all(ok for _, ok in got.values()), (name, got)


# --- a fresh venv with the wheel alone -----------------------------------------------------


def test_bare_venv_holds_the_wheel_alone(bare):
    r = subprocess.run([bare / "bin" / "python", "-m", "pip", "list", "--format", "freeze"], env=clean_env(),
                       capture_output=True, text=True)
    names = {line.split("==")[0].lower() for line in r.stdout.split()}
    assert names - {"pip", "setuptools"} == {"onnxparity"}, names


def test_bare_venv_runs_the_tool(bare, tmp_path):
    exe = bare / "bin" / "onnxparity"
    r = run([exe, "--version"], env=clean_env(), cwd=tmp_path)
    assert r.returncode == 0 and r.stdout == f"onnxparity {VERSION}\n", r.stdout + r.stderr
    r = run([exe, "check", HEALTHY, "--format", "json"], env=clean_env(), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["verdict"] == "pass"
    # the ONNX Runtime the wheel carries, inside the venv
    assert inside(doc["environment"]["ort_library"], bare), doc["environment"]
    # a failing bundle: the tool's own exit code through the console entry
    r = run([exe, "check", TRAINING, "--no-bisect"], env=clean_env(), cwd=tmp_path)
    assert r.returncode == 1, r.stderr


def imported(python, args, cwd):
    """The modules `python -X importtime ARGS` imports (its stderr: every
    import is written as it happens, so an exec'ing command's too)."""
    r = subprocess.run([python, "-X", "importtime", *map(str, args)], env=clean_env(), cwd=cwd,
                       capture_output=True, text=True)
    return {ln.split("|")[-1].strip() for ln in r.stderr.splitlines()
            if ln.startswith("import time:") and not ln.endswith("imported package")}


def test_the_command_imports_the_launcher_alone(bare, tmp_path):
    """Beyond Python's own start-up, `onnxparity --version` imports the
    package and its launcher, nothing else (no re: not pip's console_scripts
    wrapper; no torch, no ctypes)."""
    py = bare / "bin" / "python"
    startup = imported(py, ["-c", "pass"], tmp_path)
    extra = imported(py, [bare / "bin" / "onnxparity", "--version"], tmp_path) - startup
    assert extra == {"onnxparity", "onnxparity._tool"}, extra


def test_bare_venv_ortlib_says_there_is_no_onnxruntime(bare, tmp_path):
    r = run([bare / "bin" / "python", "-m", "onnxparity.ortlib"], env=clean_env(), cwd=tmp_path)
    assert r.returncode == 1 and r.stdout == "", r.stdout
    assert re.fullmatch(r"onnxparity\.ortlib: no onnxruntime package for \S+ \(pip install onnxruntime\)\n",
                        r.stderr), r.stderr


IN_PROCESS = r"""
import json, sys
import onnxparity
r = onnxparity.check(sys.argv[1])
from onnxparity import api
try:
    onnxparity.capture
    capture = "loaded"
except ModuleNotFoundError as e:
    capture = str(e)
print(json.dumps({"verdict": r.verdict, "exit": r.exit_code, "lib": api.library_path(), "capture": capture}))
"""


def test_bare_venv_checks_in_process_and_names_the_capture_extra(bare, tmp_path):
    r = run([bare / "bin" / "python", "-c", IN_PROCESS, HEALTHY], env=clean_env(), cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout)
    assert res["verdict"] == "pass" and res["exit"] == 0
    assert inside(res["lib"], bare), res["lib"]
    assert "pip install 'onnxparity[capture]'" in res["capture"], res["capture"]
    r = run([bare / "bin" / "python", "-m", "onnxparity", "capture", "m:f", "--fixtures", "x.npz", "--out",
             "o"], env=clean_env(), cwd=tmp_path)
    assert r.returncode == 2 and "pip install 'onnxparity[capture]'" in r.stderr, r.stderr


ORTLIB_IMPORTS = r"""
import json, sys
from onnxparity import ortlib
path, version = ortlib.find()
print(json.dumps({"path": str(path), "version": version, "modules": sorted(sys.modules)}))
"""


def test_ortlib_finds_the_environments_onnxruntime(bare, tmp_path):
    """An onnxruntime package importable (the torch 2.x venv's, by
    PYTHONPATH): ortlib names its library without importing it (nor torch),
    and the wheel's tool checks on that ONNX Runtime."""
    capi = TORCH2_SITE / "onnxruntime" / "capi"
    if not list(capi.glob("libonnxruntime.so*")):
        pytest.skip("no onnxruntime package in .venv-torch2 (make venv)")
    env = clean_env(PYTHONPATH=str(TORCH2_SITE))
    r = run([bare / "bin" / "python", "-m", "onnxparity.ortlib"], env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    path = r.stdout.strip()
    assert os.path.dirname(path) == str(capi) and os.path.isfile(path), path
    r = run([bare / "bin" / "python", "-c", ORTLIB_IMPORTS], env=env, cwd=tmp_path)
    res = json.loads(r.stdout)
    assert res["path"] == path
    assert not [m for m in res["modules"] if m.split(".")[0] in HEAVY], res["modules"]
    r = run([bare / "bin" / "onnxparity", "check", HEALTHY, "--format", "json", "--ort-lib", path],
            env=clean_env(), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    e = json.loads(r.stdout)["environment"]
    assert e["ort_version"] == res["version"] and os.path.realpath(e["ort_library"]) == os.path.realpath(path), e


def ldd(path):
    """[(name, resolved path or None)] of ldd PATH."""
    r = run(["ldd", path])
    assert r.returncode == 0, r.stderr
    out = []
    for line in r.stdout.splitlines():
        m = re.match(r"\s*(\S+) => (.*?)(?: \(0x[0-9a-f]+\))?$", line)
        if m:
            out.append((m.group(1), None if m.group(2) == "not found" else m.group(2)))
        else:
            out.append((line.split()[0], line.split()[0]))
    return out


def test_ldd_resolves_everything_but_glibc_inside_the_venv(bare):
    for f in (tool(bare), package_dir(bare) / "_native" / "lib" / SONAME):
        deps = ldd(f)
        outside = [(n, p) for n, p in deps if n not in GLIBC and (p is None or not inside(p, bare))]
        assert outside == [], (f, outside)
        vendored = {n.split("-")[0] for n, p in deps if p and inside(p, bare)}
        assert {"libzip", "libcjson", "libjansson", "libcrypto", "libbz2", "libz"} <= vendored, (f, deps)


# --- the system's copies hidden ---------------------------------------------------------


HIDE = r'''
empty=$1; n=$2; shift 2
while [ "$n" -gt 0 ]; do mount --bind "$empty" "$1" || exit 99; shift; n=$((n - 1)); done
exec "$@"
'''


def system_copies(sonames):
    """The files the loader maps for these SONAMEs here (ldconfig -p,
    resolved): binding over the file hides every name that points at it."""
    r = run(["ldconfig", "-p"])
    files = set()
    for line in r.stdout.splitlines():
        name, _, rest = line.strip().partition(" ")
        if name in sonames and "=>" in rest:
            files.add(os.path.realpath(rest.split("=>")[1].strip()))
    return sorted(files)


def hidden_run(files, cmd, tmp_path, **kw):
    """cmd in a private mount namespace where each of files reads as empty."""
    empty = tmp_path / "empty.so"
    empty.touch()
    return run(["unshare", "--mount", "--propagation", "private", "sh", "-c", HIDE, "sh", empty,
                str(len(files)), *files, *cmd], **kw)


def test_wheel_runs_with_the_system_libraries_hidden(bare, tmp_path):
    if not shutil.which("unshare") or run(["unshare", "--mount", "true"]).returncode != 0:
        pytest.skip("no mount namespace here (unshare -m needs root or CAP_SYS_ADMIN)")
    files = system_copies(HIDDEN)
    # every library the tool links has a system copy to hide on this machine
    assert {os.path.basename(f).split(".so")[0] for f in files} >= \
        {"libzip", "libcjson", "libjansson", "libcrypto", "libbz2", "libz"}, files
    # the hiding is real: the repository's build, linked against those
    # copies, no longer starts
    native = os.environ.get("ONNXPARITY_BIN") or str(ROOT / "build" / "onnxparity")
    r = hidden_run(files, [native, "--version"], tmp_path, env=clean_env())
    assert r.returncode == 127 and "error while loading shared libraries" in r.stderr, (r.returncode, r.stderr)
    # the wheel's tool: starts, checks, resolves all it needs
    r = hidden_run(files, [tool(bare), "check", HEALTHY, "--format", "json"], tmp_path, env=clean_env(),
                   cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["verdict"] == "pass"
    r = hidden_run(files, ["ldd", tool(bare)], tmp_path, env=clean_env())
    assert r.returncode == 0 and "not found" not in r.stdout, r.stdout
    # the console entry: Python itself links libz, so that one stays
    r = hidden_run(system_copies(set(HIDDEN) - {"libz.so.1"}),
                   [bare / "bin" / "onnxparity", "check", HEALTHY], tmp_path, env=clean_env(), cwd=tmp_path)
    assert r.returncode == 0 and "verdict: pass" in r.stdout, r.stdout[-2000:] + r.stderr


# --- with torch ------------------------------------------------------------------------------


IMPORTS = r"""
import json, sys
heavy = lambda: sorted({m.split(".")[0] for m in sys.modules} & set(sys.argv[1].split(",")))
import onnxparity
before = heavy()
onnxparity.capture
print(json.dumps({"before": before, "after": heavy()}))
"""


def test_import_is_cheap_and_the_capture_loads_on_first_use(venv, tmp_path):
    r = run([SYSTEM_PY, "-c", "import torch, onnx"])
    if r.returncode:
        pytest.skip("no torch/onnx for /usr/bin/python3 (apt-get install python3-torch python3-onnx)")
    r = run([venv / "bin" / "python", "-c", IMPORTS, ",".join(HEAVY)], env=clean_env(), cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout)
    assert res["before"] == [], res
    assert {"torch", "onnx", "numpy"} <= set(res["after"]), res


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
    assert inside(res["path"], venv), res["path"]
    major, minor, patch = map(int, VERSION.split("."))
    assert res["version"] == VERSION
    assert res["number"] == major * 1000000 + minor * 1000 + patch


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
    r = run([venv / "bin" / "python", script, tmp_path / "bundle"], env=env, cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    assert res["rc"] == 0, res["stderr"]
    assert res["doc"]["verdict"] == "pass" and res["doc"]["summary"]["fixtures"] == 2


def test_wheel_capture_runs_under_torch2(bare, tmp_path):
    """The capture extra's newest versions (the torch 2.x venv's torch 2.9,
    onnx, onnxscript, numpy, importable through PYTHONPATH) with the wheel
    alone installed: a dynamo capture that the command checks `pass`."""
    if not (TORCH2_SITE / "torch").is_dir():
        pytest.skip("no .venv-torch2 (make venv)")
    script = tmp_path / "cap.py"
    script.write_text(CAPTURE)
    env = clean_env(PATH=f"{bare / 'bin'}:{os.environ.get('PATH', '')}", PYTHONPATH=str(TORCH2_SITE))
    r = run([bare / "bin" / "python", script, tmp_path / "bundle"], env=env, cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    assert res["rc"] == 0, res["stderr"]
    doc = res["doc"]
    assert doc["verdict"] == "pass" and doc["summary"]["fixtures"] == 2
    assert doc["environment"]["exporter"] == "dynamo", doc["environment"]
    assert doc["environment"]["torch_version"].startswith("2."), doc["environment"]


# --- the sdist ------------------------------------------------------------------------------


def test_sdist_builds_a_working_tool(tmp_path):
    """`make sdist`, then pip's builder over the tarball alone (offline: no
    isolation, ONNX Runtime from ORT_HOME): the wheel it makes carries a tool
    that checks a bundle.  A file the build needs missing from MANIFEST.in
    fails the compile here."""
    build = build_dir()
    r = run(["make", "-C", ROOT, f"BUILD={build}", "sdist"], env=make_env(), timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    sdists = sorted((ROOT / build / "sdist").glob(f"onnxparity-{VERSION}.tar.gz"))
    assert len(sdists) == 1, sdists
    env = make_env()
    env.update(ORT_HOME=str(ROOT / "third_party" / "onnxruntime"), MAKEFLAGS="-j2")
    r = run([SYSTEM_PY, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "--no-cache-dir",
             "-w", tmp_path / "out", sdists[0]], env=env, cwd=tmp_path, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    wheels = sorted((tmp_path / "out").glob("onnxparity-*-py3-none-linux_x86_64.whl"))
    assert len(wheels) == 1, wheels
    with zipfile.ZipFile(wheels[0]) as z:
        z.extractall(tmp_path / "w")
    exe = tmp_path / "w" / "onnxparity" / "_native" / "bin" / "onnxparity"
    exe.chmod(0o755)
    r = run([exe, "check", HEALTHY, "--format", "json"], env=clean_env(), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["verdict"] == "pass"
