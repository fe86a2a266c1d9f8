"""The wheel's native half (pyproject.toml holds the metadata).

build_py first runs `make all` (the library and the tool, as for C users)
in the build folder $ONNXPARITY_BUILD (default build/; `make wheel` passes
its own BUILD), then copies into the package:
  onnxparity/_native/bin/onnxparity                     the tool
  onnxparity/_native/lib/libonnxparity.so.MAJOR         the shared library,
      under its SONAME (a wheel holds no symbolic links), for a program or a
      ctypes binding that loads it by path
  onnxparity/_native/lib/onnxparity/libonnxruntime.so.1  ONNX Runtime, which
      the tool finds as ../lib/onnxparity/ beside itself (the layout of
      `make install`); ONNXPARITY_WHEEL_ORT=0 leaves it out, and then the tool
      needs --ort-lib, $ONNXPARITY_ORT_LIB or a system libonnxruntime.so.1
      (`onnxparity check B --ort-lib "$(python -m onnxparity.ortlib)"` takes
      the environment's onnxruntime package's).
The `onnxparity` command is python/bin/onnxparity, a script pip installs
with its shebang pointing at the environment's Python (see its comment).
The wheel this makes links the build machine's libzip, cJSON, jansson,
libcrypto, bz2 and zlib and is tagged py3-none-linux_x86_64: right for
`pip install .` on the machine that builds it.  `make wheel` then runs
auditwheel's repair over it, which copies those libraries into the wheel and
tags it manylinux (docs/install.md).

Building from the sdist or a clone (`pip install .`) runs `make all` without
the project's full set-up (scripts/setup.sh, which also installs the test
suite's packages): the build packages must be there (checked first with
pkg-config, one line naming the apt-get command when they are not), and
ONNX Runtime's headers are fetched by `scripts/setup.sh ort` unless ORT_HOME
names a release.
"""
import os
import pathlib
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:  # setuptools >= 70.1 has its own; older ones use wheel's
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    from wheel.bdist_wheel import bdist_wheel  # type: ignore[no-redef]

ROOT = pathlib.Path(__file__).resolve().parent
BUILD = ROOT / os.environ.get("ONNXPARITY_BUILD", "build")
ORT_SONAME = "libonnxruntime.so.1"
# pkg-config module -> the Debian package that ships it
BUILD_PACKAGES = {"libzip": "libzip-dev", "libcjson": "libcjson-dev", "jansson": "libjansson-dev",
                  "libcrypto": "libssl-dev", "zlib": "zlib1g-dev"}


def check_build_packages():
    """Exit with one line naming what is missing when a library the tool
    links has no development files here."""
    if not shutil.which("pkg-config"):
        return  # the compiler will say it
    missing = [deb for mod, deb in BUILD_PACKAGES.items()
               if subprocess.run(["pkg-config", "--exists", mod]).returncode != 0]
    if missing:
        raise SystemExit("setup.py: the build packages are missing: apt-get install gcc make pkg-config "
                         + " ".join(missing) + " (docs/install.md)")


def ort_home():
    """ONNX Runtime's release folder: $ORT_HOME, else third_party/onnxruntime
    (downloaded by scripts/setup.sh ort when it is not there)."""
    if os.environ.get("ORT_HOME"):
        return pathlib.Path(os.environ["ORT_HOME"])
    home = ROOT / "third_party" / "onnxruntime"
    if not (home / "include" / "onnxruntime_c_api.h").is_file():
        subprocess.run(["bash", str(ROOT / "scripts" / "setup.sh"), "ort"], check=True)
    return home


class BuildWithTool(build_py):
    def run(self):
        super().run()
        ort = ort_home()
        built = all((BUILD / f).exists() for f in ("onnxparity", "libonnxparity.so"))
        if not built:
            check_build_packages()
        # SETUP= : no full set-up here (see the module's doc); a build folder
        # `make all` already made is left as it is
        subprocess.run([os.environ.get("MAKE", "make"), "-C", str(ROOT), "all", "SETUP=",
                        f"BUILD={os.path.relpath(BUILD, ROOT)}"], check=True)
        native = pathlib.Path(self.build_lib) / "onnxparity" / "_native"
        (native / "bin").mkdir(parents=True, exist_ok=True)
        shutil.copy2(BUILD / "onnxparity", native / "bin" / "onnxparity")
        # BUILD/libonnxparity.so -> libonnxparity.so.MAJOR (the SONAME) -> the
        # file: the Makefile's link names the SONAME, copy2 follows it
        soname = os.readlink(BUILD / "libonnxparity.so")
        (native / "lib").mkdir(parents=True, exist_ok=True)
        shutil.copy2(BUILD / soname, native / "lib" / soname)
        ort_lib = ort / "lib" / ORT_SONAME
        if os.environ.get("ONNXPARITY_WHEEL_ORT", "1") != "0":
            if not ort_lib.is_file():
                raise SystemExit(f"setup.py: {ort_lib} is missing (run `make setup`, set ORT_HOME, "
                                 "or ONNXPARITY_WHEEL_ORT=0 for a wheel without ONNX Runtime)")
            (native / "lib" / "onnxparity").mkdir(parents=True, exist_ok=True)
            shutil.copy2(ort_lib, native / "lib" / "onnxparity" / ORT_SONAME)


class NativeDistribution(Distribution):
    """Holds an executable: a platform wheel, installed to platlib."""

    def has_ext_modules(self):
        return True


class PlatformWheel(bdist_wheel):
    def get_tag(self):
        _, _, plat = super().get_tag()
        return "py3", "none", plat


# setuptools' scratch goes under the build folder, never beside the sources
SCRATCH = BUILD / "setuptools"
SCRATCH.mkdir(parents=True, exist_ok=True)
setup(distclass=NativeDistribution, scripts=["python/bin/onnxparity"],
      cmdclass={"build_py": BuildWithTool, "bdist_wheel": PlatformWheel},
      options={"build": {"build_base": str(SCRATCH)}, "egg_info": {"egg_base": str(SCRATCH)}})
