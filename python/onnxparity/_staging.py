"""A bundle is written into a temporary folder beside its final path and
renamed into place when complete; on failure the temporary folder goes.
The process keeps the set of its live temporaries, so that a signal
handler (the CLI's, for SIGTERM and SIGHUP) can remove what an unwinding
stack did not reach; the renames of a commit run with those signals
blocked, so no signal leaves the old bundle moved aside and the new one
not in place."""
import os
import pathlib
import shutil
import signal
import tempfile
from typing import Set

from .errors import CaptureError

_MARKERS = ("parity.json", "submodules.json")
_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}

# the staging folders of this process not yet renamed into place or removed
_live: Set[pathlib.Path] = set()


def abort_all() -> None:
    """Remove every staging folder of this process still live."""
    for p in list(_live):
        shutil.rmtree(p, ignore_errors=True)
        _live.discard(p)


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
        _live.add(self.tmp)

    def commit(self):
        old = None
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
        try:
            if self.out.exists():
                old = pathlib.Path(tempfile.mkdtemp(prefix=f".{self.out.name}.old-", dir=self.out.parent))
                os.rename(self.out, old / "bundle")
            os.rename(self.tmp, self.out)
            _live.discard(self.tmp)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)

    def abort(self):
        shutil.rmtree(self.tmp, ignore_errors=True)
        _live.discard(self.tmp)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            self.abort()
        return False
