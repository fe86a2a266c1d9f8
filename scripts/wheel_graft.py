#!/usr/bin/env python3
"""wheel_graft.py WHEEL SONAME... — graft into a wheel that auditwheel
repaired the libraries its manylinux policy lets a wheel assume (zlib:
libz.so.1 is on every policy's list), so that the tool depends on glibc
alone (`make wheel` runs it; docs/install.md).

For each SONAME that an ELF file of the wheel needs: the library the loader
finds here (ldconfig's cache) is copied, stripped, into the wheel's
onnxparity.libs/ as NAME-HASH.so.X (HASH: the first 8 hex digits of its
sha256, auditwheel's scheme), given that name as its SONAME, and each file
that needed it names the copy instead (patchelf --replace-needed; the
files auditwheel grafted carry RPATH $ORIGIN, the tool and the shared
library $ORIGIN/../../../onnxparity.libs already).  RECORD is rewritten, the
wheel replaced in place.  Needs patchelf and strip on PATH.

Exit 0 grafted (or nothing needed it), 2 usage, 3 a library not found or a
tool failed: one line on stderr.
"""
import base64
import hashlib
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import zipfile

LIBS = "onnxparity.libs"


def fail(msg: str, code: int = 3) -> None:
    print(f"wheel_graft: {msg}", file=sys.stderr)
    sys.exit(code)


def system_library(soname: str) -> pathlib.Path:
    """The file the loader maps for `soname` here (ldconfig -p's first x86-64 entry)."""
    out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        name, _, rest = line.strip().partition(" ")
        if name == soname and "x86-64" in rest and "=>" in rest:
            return pathlib.Path(rest.split("=>")[1].strip()).resolve()
    fail(f"{soname}: not in the loader's cache (ldconfig -p)")
    raise AssertionError  # not reached


def needed(path: pathlib.Path) -> list:
    r = subprocess.run(["patchelf", "--print-needed", str(path)], capture_output=True, text=True)
    return r.stdout.split() if r.returncode == 0 else []


def is_elf(path: pathlib.Path) -> bool:
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def record_line(root: pathlib.Path, path: pathlib.Path) -> str:
    data = path.read_bytes()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path.relative_to(root).as_posix()},sha256={digest},{len(data)}"


def graft(root: pathlib.Path, soname: str) -> bool:
    elves = [p for p in root.rglob("*") if p.is_file() and not p.is_symlink() and is_elf(p)]
    users = [p for p in elves if soname in needed(p)]
    if not users:
        return False
    src = system_library(soname)
    h = hashlib.sha256(src.read_bytes()).hexdigest()[:8]
    stem, _, ver = src.name.partition(".so")
    new = f"{stem}-{h}.so{ver}"
    dst = root / LIBS / new
    dst.parent.mkdir(exist_ok=True)
    shutil.copyfile(src, dst)
    os.chmod(dst, 0o755)
    for cmd in (["strip", "-s", str(dst)], ["patchelf", "--set-soname", new, str(dst)]):
        subprocess.run(cmd, check=True)
    for p in users:
        subprocess.run(["patchelf", "--replace-needed", soname, new, str(p)], check=True)
    print(f"wheel_graft: {soname} ({src}) as {LIBS}/{new} for "
          f"{', '.join(str(p.relative_to(root)) for p in users)}")
    return True


def main(argv: list) -> int:
    if len(argv) < 2 or not argv[0].endswith(".whl"):
        fail("usage: wheel_graft.py WHEEL SONAME...", 2)
    wheel = pathlib.Path(argv[0])
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        with zipfile.ZipFile(wheel) as z:
            infos = z.infolist()
            z.extractall(root)
            for info in infos:  # zipfile drops the modes: the tool must stay executable
                mode = info.external_attr >> 16
                if mode:
                    os.chmod(root / info.filename, mode & 0o7777)
        if not any([graft(root, s) for s in argv[1:]]):
            return 0
        records = [p for p in root.glob("*.dist-info/RECORD")]
        if len(records) != 1:
            fail(f"{wheel}: {len(records)} RECORD files")
        record = records[0]
        files = sorted(p for p in root.rglob("*") if p.is_file() and p != record)
        rel = record.relative_to(root).as_posix()
        record.write_text("".join(record_line(root, p) + "\n" for p in files) + f"{rel},,\n")
        out = wheel.with_suffix(".tmp")
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
            # the dist-info last, as wheels are written
            for p in sorted(files + [record], key=lambda p: (".dist-info/" in p.as_posix(), p.as_posix())):
                info = zipfile.ZipInfo.from_file(p, p.relative_to(root).as_posix())
                info.compress_type = zipfile.ZIP_DEFLATED
                with open(p, "rb") as f:
                    z.writestr(info, f.read())
        os.replace(out, wheel)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
