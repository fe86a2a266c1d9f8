"""The ``onnxparity`` command of the pip wheel (``python/bin/onnxparity``
calls ``main``): replaces this Python process with the C tool the wheel
carries (``_native/bin/onnxparity``), so arguments, stdin/stdout, signals
and the exit code are the tool's own.

The wheel also carries ONNX Runtime's library as
``_native/lib/onnxparity/libonnxruntime.so.1``, which the tool finds beside
itself (``--ort-lib`` and ``$ONNXPARITY_ORT_LIB`` still come first); the
libraries the tool links (libzip, cJSON, jansson, libcrypto, bz2, zlib) are
in the wheel's ``onnxparity.libs/``, found through the tool's RPATH
(docs/install.md).

Only ``os`` and ``sys`` are imported: the command's cost over the tool's own
is Python's start-up and one exec (bench/wheel_launch.py measures it).
"""
import os
import sys

BINARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_native", "bin", "onnxparity")


def main() -> None:
    """Exec the bundled tool with this command's arguments (never returns on
    success); exit 3 with one line when the wheel carries no tool."""
    if not os.access(BINARY, os.X_OK):
        sys.stderr.write(f"onnxparity: the C tool is missing from this install ({BINARY}); "
                         "reinstall the wheel, or build it with `make`\n")
        sys.exit(3)
    sys.stdout.flush()
    os.execv(BINARY, [BINARY] + sys.argv[1:])


if __name__ == "__main__":
    main()
