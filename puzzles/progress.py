"""A small progress bar for long commands (stderr, redrawn in place on a terminal)."""

import sys
import time
from typing import TextIO


class Progress:
    def __init__(self, total: int, label: str = "", stream: TextIO | None = None, width: int = 30):
        self.total, self.label, self.width = total, label, width
        self.stream = stream or sys.stderr
        self.done = 0
        self.started = time.monotonic()
        self._last_draw = 0.0
        self._tty = hasattr(self.stream, "isatty") and self.stream.isatty()

    def advance(self, count: int = 1) -> None:
        self.done += count
        now = time.monotonic()
        # Redraw at most 10x a second on a terminal, every 10% in a log.
        if self._tty and (now - self._last_draw > 0.1 or self.done >= self.total):
            self._last_draw = now
            self.stream.write("\r" + self.line())
            self.stream.flush()
        elif (
            not self._tty and self.total and (self.done * 10 // self.total) != ((self.done - count) * 10 // self.total)
        ):
            self.stream.write(self.line() + "\n")

    def line(self) -> str:
        fraction = self.done / self.total if self.total else 1.0
        filled = int(self.width * fraction)
        elapsed = time.monotonic() - self.started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        eta = (self.total - self.done) / rate if rate > 0 else 0.0
        return (
            f"{self.label} [{'#' * filled}{'.' * (self.width - filled)}] {self.done}/{self.total} "
            f"{fraction:4.0%} {rate:6.1f}/s eta {int(eta // 60)}:{int(eta % 60):02d}"
        )

    def close(self) -> None:
        if self._tty:
            self.stream.write("\n")
        self.stream.flush()
