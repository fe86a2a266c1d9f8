"""The ``onnxparity`` console command of the pip wheel: replaces this Python
process with the C tool the wheel carries (``_native/bin/onnxparity``), so
arguments, stdin/stdout, signals and the exit code are the tool's own.

The wheel also carries ONNX Runtime's library as
``_native/lib/onnxparity/libonnxruntime.so.1``, which the tool finds beside
itself (``--ort-lib`` and ``$ONNXPARITY_ORT_LIB`` still come first).
"""
import os
import pathlib
import sys

NATIVE = pathlib.Path(__file__).resolve().parent / "_native"
BINARY = NATIVE / "bin" / "onnxparity"


def main():
    """Exec the bundled tool with this command's arguments (never returns on
    success); exit 3 with one line when the wheel carries no tool."""
    if not os.access(BINARY, os.X_OK):
        sys.stderr.write(f"onnxparity: the C tool is missing from this install ({BINARY}); "
                         "reinstall the wheel, or build it with `make`\n")
        sys.exit(3)
    os.execv(BINARY, [str(BINARY)] + sys.argv[1:])


if __name__ == "__main__":
    main()
