"""The ONNX Runtime a user deploys: the shared library inside an onnxruntime
Python package of this interpreter, for the tool's ``--ort-lib``.

The onnxruntime wheel ships ONNX Runtime's C library beside its Python
binding (``onnxruntime/capi/libonnxruntime.so.<version>``, the C API the tool
loads with dlopen), so parity can be checked on exactly the ORT version the
user's environment runs:

    onnxparity check bundle/ --ort-lib "$(python -m onnxparity.ortlib)"

or ``ONNXPARITY_ORT_LIB=$(python -m onnxparity.ortlib)`` for every command.
Other builds of ONNX Runtime are packages of their own that install the same
``onnxruntime/`` folder (``onnxruntime-openvino``, ``onnxruntime-gpu``):
``--package NAME`` finds that distribution's library by its metadata (the
files its RECORD lists), wherever it is on sys.path, even when ``import
onnxruntime`` gives another package (the test environment keeps such
targets in folders of their own after site-packages; scripts/setup.sh):

    onnxparity check bundle/ --provider openvino \\
        --ort-lib "$(python -m onnxparity.ortlib --package onnxruntime-openvino)"

Nothing is imported (no ORT is loaded here).  ``python -m onnxparity.ortlib
[--package NAME] [--version]`` prints the path (or the version) and exits
0, or prints why there is none on stderr and exits 1; a bad argument is
exit 2.
"""
import importlib.metadata
import importlib.util
import pathlib
import sys
from typing import List, Optional, Tuple


def _from_distribution(package: str) -> Tuple[pathlib.Path, Optional[str]]:
    """(path, version) of distribution `package`'s libonnxruntime.so."""
    try:
        dist = importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError:
        raise LookupError(f"no {package} package for {sys.executable} (pip install {package})") from None
    version = dist.version
    libs: List[pathlib.Path] = []
    for f in dist.files or []:
        p = pathlib.PurePosixPath(str(f))
        if p.parent.name == "capi" and p.name.startswith("libonnxruntime.so"):
            libs.append(pathlib.Path(str(dist.locate_file(f))))
    exact = [p for p in libs if p.name == f"libonnxruntime.so.{version}" and p.is_file()]
    found = exact or sorted(p for p in libs if p.is_file())
    if not found:
        raise LookupError(f"the {package} {version} package at {dist.locate_file('')} "
                          "ships no libonnxruntime.so (a build without the C library)")
    return found[-1], version


def find(package: Optional[str] = None) -> Tuple[pathlib.Path, Optional[str]]:
    """(path, version) of an onnxruntime package's libonnxruntime.so, or
    raises LookupError saying why there is none.  package None: the one
    ``import onnxruntime`` finds; else the distribution of that name
    (``onnxruntime-openvino``)."""
    if package is not None:
        return _from_distribution(package)
    spec = importlib.util.find_spec("onnxruntime")
    if spec is None or not spec.submodule_search_locations:
        raise LookupError(f"no onnxruntime package for {sys.executable} (pip install onnxruntime)")
    try:
        version: Optional[str] = importlib.metadata.version("onnxruntime")
    except importlib.metadata.PackageNotFoundError:
        version = None
    for base in spec.submodule_search_locations:
        capi = pathlib.Path(base) / "capi"
        exact = capi / f"libonnxruntime.so.{version}" if version else None
        if exact is not None and exact.is_file():
            return exact, version
        libs = sorted(capi.glob("libonnxruntime.so*"))
        if libs:
            return libs[-1], version
    raise LookupError(f"the onnxruntime package at {', '.join(spec.submodule_search_locations)} "
                      "ships no libonnxruntime.so (a build without the C library)")


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    package: Optional[str] = None
    want_version = False
    i = 0
    while i < len(args):
        if args[i] == "--package" and i + 1 < len(args):
            package = args[i + 1]
            i += 2
        elif args[i] == "--version":
            want_version = True
            i += 1
        else:
            print(f"onnxparity.ortlib: unknown argument {args[i]!r}; "
                  "usage: python -m onnxparity.ortlib [--package NAME] [--version]", file=sys.stderr)
            return 2
    try:
        path, version = find(package)
    except LookupError as e:
        print(f"onnxparity.ortlib: {e}", file=sys.stderr)
        return 1
    print(version if want_version else path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
