"""Capture progress on a terminal: the stage under way and, for the stages
that loop over fixtures, the fixture count, rewritten in place on one line
per stage.  Quiet unless stderr is a terminal (as the C tool is), or unless
asked for explicitly (capture's ``progress=True``); never on stdout, never
in the bundle.
"""
import sys
import time
from typing import Optional, TextIO


class Progress:
    """Stages of one capture.  ``stage(name, total)`` starts a stage (and ends
    the previous one), ``step(k)`` says fixture ``k`` (0-based) of it is under
    way, ``done()`` ends the last stage with the capture's time."""

    def __init__(self, enabled: Optional[bool] = None, stream: Optional[TextIO] = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self.enabled = enabled
        self.start = time.perf_counter()
        self.name: Optional[str] = None
        self.total = 0
        self.t_stage = self.start

    def _write(self, text: str, end: str = "") -> None:
        if self.enabled:
            self.stream.write("\r\x1b[K" + text + end)
            self.stream.flush()

    def _close(self) -> None:
        if self.name is not None:
            secs = time.perf_counter() - self.t_stage
            count = f" {self.total}/{self.total}" if self.total else ""
            self._write(f"onnxparity capture: {self.name}{count} ({secs:.1f} s)", "\n")
            self.name = None

    def stage(self, name: str, total: int = 0) -> None:
        self._close()
        self.name, self.total, self.t_stage = name, total, time.perf_counter()
        self._write(f"onnxparity capture: {name}" + (f" 0/{total}" if total else " ..."))

    def step(self, k: int) -> None:
        if self.name is not None and self.total:
            self._write(f"onnxparity capture: {self.name} {k + 1}/{self.total}")

    def done(self, what: str) -> None:
        self._close()
        self._write(f"onnxparity capture: {what} in {time.perf_counter() - self.start:.1f} s", "\n")

    def abort(self) -> None:
        """End the line of an unfinished stage (the capture raised)."""
        if self.name is not None:
            self._write(f"onnxparity capture: {self.name} failed", "\n")
            self.name = None
