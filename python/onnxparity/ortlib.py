"""The ONNX Runtime a user deploys: the shared library inside the onnxruntime
Python package of this interpreter, for the tool's ``--ort-lib``.

The onnxruntime wheel ships ONNX Runtime's C library beside its Python
binding (``onnxruntime/capi/libonnxruntime.so.<version>``, the C API the tool
loads with dlopen), so parity can be checked on exactly the ORT version the
user's environment runs:

    onnxparity check bundle/ --ort-lib "$(python -m onnxparity.ortlib)"

or ``ONNXPARITY_ORT_LIB=$(python -m onnxparity.ortlib)`` for every command.
The package is located without importing it (no ORT is loaded here).
``python -m onnxparity.ortlib`` prints the path and exits 0, or prints why
there is none on stderr and exits 1.
"""
import importlib.metadata
import importlib.util
import pathlib
import sys
from typing import Optional, Tuple


def find() -> Tuple[pathlib.Path, Optional[str]]:
    """(path, version) of the onnxruntime package's libonnxruntime.so, or
    raises LookupError saying why there is none."""
    spec = importlib.util.find_spec("onnxruntime")
    if spec is None or not spec.submodule_search_locations:
        raise LookupError(f"no onnxruntime package for {sys.executable} (pip install onnxruntime)")
    try:
        version = importlib.metadata.version("onnxruntime")
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


def main() -> int:
    try:
        path, _ = find()
    except LookupError as e:
        print(f"onnxparity.ortlib: {e}", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
