#!/usr/bin/python3
"""npzbench.py BIN OUTDIR N — `onnxparity compare` of two .npz archives of N
one-element float32 members (a state dict's shape: many small arrays)
against numpy, for bench/run.sh; prints a Markdown section on stdout.

numpy is timed two ways, both loading and comparing every pair
(np.allclose): through the zip directory once (zipfile.ZipFile +
np.lib.format.read_array, linear in the members: the fastest way numpy
offers), and the way scripts usually do it, `z = np.load(p); z[name]` for
each name, at N/10 members (its name lookup walks a list, so its cost
grows with the square of N; at N it takes minutes).
The target (issue 15): onnxparity under 2 s at 70,000 members.
"""
import os
import subprocess
import sys
import time
import zipfile

import numpy as np


def make(path, n, seed):
    if os.path.exists(path):
        with zipfile.ZipFile(path) as z:
            if len(z.namelist()) == n:
                return
    rng = np.random.default_rng(seed)
    vals = rng.standard_normal(n).astype(np.float32)
    np.savez(path, **{f"p{i}": vals[i:i + 1] for i in range(n)})


def best(fn, reps):
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    return min(t)


def ours(bin_, a, b):
    r = subprocess.run([bin_, "compare", a, b], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if r.returncode != 0:
        raise SystemExit(f"npzbench: compare exited {r.returncode}: {r.stderr.decode()}")


def numpy_zip(a, b):
    with zipfile.ZipFile(a) as za, zipfile.ZipFile(b) as zb:
        names = set(zb.namelist())
        for name in za.namelist():
            if name not in names:
                continue
            with za.open(name) as fa, zb.open(name) as fb:
                x, y = np.lib.format.read_array(fa), np.lib.format.read_array(fb)
            np.allclose(y, x, rtol=1e-4, atol=1e-5)


def numpy_npzfile(a, b):
    za, zb = np.load(a), np.load(b)
    for name in za.files:
        if name in zb.files:
            np.allclose(zb[name], za[name], rtol=1e-4, atol=1e-5)


def main():
    bin_, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    os.makedirs(out, exist_ok=True)
    a, b = os.path.join(out, f"npz{n}_a.npz"), os.path.join(out, f"npz{n}_b.npz")
    a10, b10 = os.path.join(out, f"npz{n // 10}_a.npz"), os.path.join(out, f"npz{n // 10}_b.npz")
    make(a, n, 1)
    make(b, n, 1)
    make(a10, n // 10, 1)
    make(b10, n // 10, 1)
    t_ours = best(lambda: ours(bin_, a, b), 3)
    t_ours10 = best(lambda: ours(bin_, a10, b10), 3)
    t_zip = best(lambda: numpy_zip(a, b), 1)
    t_npz10 = best(lambda: numpy_npzfile(a10, b10), 1)
    size = os.path.getsize(a) / 1e6
    print(f"## compare: two .npz archives of {n:,} one-element members")
    print()
    print(f"Each archive {size:.1f} MB (np.savez, stored). `onnxparity compare A.npz B.npz` pairs the")
    print("members by name, reads and compares each (best of 3), against numpy loading and comparing")
    print("every pair with np.allclose (one run each).")
    print()
    print("| reader | members | time | onnxparity is |")
    print("|---|---|---|---|")
    print(f"| onnxparity compare | {n:,} | {t_ours:.2f} s | |")
    print(f"| numpy: zipfile + np.lib.format.read_array | {n:,} | {t_zip:.2f} s | "
          f"**{t_zip / t_ours:.1f}×** faster |")
    print(f"| onnxparity compare | {n // 10:,} | {t_ours10:.2f} s | |")
    print(f"| numpy: np.load(...)[name] per member | {n // 10:,} | {t_npz10:.2f} s | "
          f"{t_npz10 / t_ours10:.1f}× faster |")
    print()
    print(f"Ten times the members cost onnxparity {t_ours / t_ours10:.1f}× the time (linear: the archive's")
    print("directory is read and indexed once); `np.load(...)[name]` looks each name up in a list.")
    print()
    if n >= 70000:
        met = "met" if t_ours < 2 else "**not met**"
        print(f"Target: compare at 70,000 members under 2 s; measured {t_ours:.2f} s at {n:,} ({met}).")
    else:
        print(f"Target: compare at 70,000 members under 2 s (make bench-full runs that size; here "
              f"{n:,}).")


if __name__ == "__main__":
    main()
