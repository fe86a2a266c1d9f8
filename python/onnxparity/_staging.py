"""A bundle is written into a temporary folder beside its final path and
renamed into place when complete; on failure the temporary folder goes."""
import os
import pathlib
import shutil
import tempfile

from .errors import CaptureError

_MARKERS = ("parity.json", "submodules.json")


class Staging:
    def __init__(self, out_dir):
        self.out = pathlib.Path(os.path.abspath(os.fspath(out_dir)))
        if self.out.exists():
            if not self.out.is_dir():
                raise CaptureError(f"{self.out}: exists and is not a folder")
            if any(self.out.iterdir()) and not any((self.out / m).exists() for m in _MARKERS):
                raise CaptureError(f"{self.out}: a non-empty folder that is not an onnxparity bundle; "
                                   "refusing to replace it")
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix=f".{self.out.name}.tmp-", dir=self.out.parent))

    def commit(self):
        old = None
        if self.out.exists():
            old = pathlib.Path(tempfile.mkdtemp(prefix=f".{self.out.name}.old-", dir=self.out.parent))
            os.rename(self.out, old / "bundle")
        os.rename(self.tmp, self.out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)

    def abort(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            self.abort()
        return False
