"""The wheel's native half (pyproject.toml holds the metadata).

build_py first runs `make` (the library and the tool, as for C users), then
copies into the package:
  onnxparity/_native/bin/onnxparity                     the tool
  onnxparity/_native/lib/libonnxparity.so.MAJOR         the shared library,
      under its SONAME (a wheel holds no symbolic links), for a program or a
      ctypes binding that loads it by path
  onnxparity/_native/lib/onnxparity/libonnxruntime.so.1  ONNX Runtime, which
      the tool finds as ../lib/onnxparity/ beside itself (the layout of
      `make install`); ONNXPARITY_WHEEL_ORT=0 leaves it out, and then the tool
      needs --ort-lib, $ONNXPARITY_ORT_LIB or a system libonnxruntime.so.1.
The wheel is tagged for this platform (it holds an executable), not for a
Python version: py3-none-<platform>.
"""
import os
import pathlib
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py
from wheel.bdist_wheel import bdist_wheel

ROOT = pathlib.Path(__file__).resolve().parent
ORT_SONAME = "libonnxruntime.so.1"


class BuildWithTool(build_py):
    def run(self):
        super().run()
        subprocess.run([os.environ.get("MAKE", "make"), "-C", str(ROOT), "all"], check=True)
        native = pathlib.Path(self.build_lib) / "onnxparity" / "_native"
        (native / "bin").mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / "build" / "onnxparity", native / "bin" / "onnxparity")
        # build/libonnxparity.so -> libonnxparity.so.MAJOR (the SONAME) -> the
        # file: the Makefile's link names the SONAME, copy2 follows it
        soname = os.readlink(ROOT / "build" / "libonnxparity.so")
        (native / "lib").mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / "build" / soname, native / "lib" / soname)
        ort = pathlib.Path(os.environ.get("ORT_HOME", ROOT / "third_party" / "onnxruntime"))
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


# setuptools' scratch goes under the project's build/ folder, never beside
# the sources
SCRATCH = ROOT / "build" / "setuptools"
SCRATCH.mkdir(parents=True, exist_ok=True)
setup(distclass=NativeDistribution,
      cmdclass={"build_py": BuildWithTool, "bdist_wheel": PlatformWheel},
      options={"build": {"build_base": str(SCRATCH)}, "egg_info": {"egg_base": str(SCRATCH)}})
