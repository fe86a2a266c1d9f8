"""make bench: the Python API's check in-process (onnxparity.api over
libonnxparity.so) against the same check as a subprocess of the tool, from
one warm Python, best of N each.  Prints "IN_PROCESS SUBPROCESS
IN_PROCESS_NO_ISOLATE" seconds (the last: ONNX Runtime in this process, no
worker, its environment kept from one call to the next).

    python3 bench/api_inproc.py BUNDLE TOOL N
"""
import subprocess
import sys
import time

from onnxparity import api


def best(n, f):
    t = []
    for _ in range(n):
        t0 = time.perf_counter()
        f()
        t.append(time.perf_counter() - t0)
    return min(t)


def main():
    bundle, tool, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    api.check(bundle)  # the library loaded once, as a test session would
    t_in = best(n, lambda: api.check(bundle))
    t_sub = best(n, lambda: subprocess.run([tool, "check", bundle, "--format", "json"],
                                           capture_output=True, check=False))
    t_ni = best(n, lambda: api.check(bundle, isolate=False))
    print(f"{t_in:.4f} {t_sub:.4f} {t_ni:.4f}")


if __name__ == "__main__":
    main()
