"""Progress bars (rich) for work that may take long, such as generating many keys at a large N.

A bar appears only once the work has run for more than ``DELAY`` seconds, on a terminal (stderr),
so quick calls and logs stay quiet. ``VEIL_PROGRESS=0`` disables it and ``VEIL_PROGRESS=1``
forces it even when stderr is not a terminal.
"""

from __future__ import annotations

import os
import time

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

DELAY = 1.0  # seconds before a bar is shown
console = Console(stderr=True)


def human_bytes(n: float) -> str:
    """``n`` bytes as '512 B', '3.0 KiB', '1.5 GiB' (binary prefixes)."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"  # pragma: no cover - unreachable


def _enabled() -> bool:
    flag = os.environ.get("VEIL_PROGRESS", "")
    if flag in ("0", "1"):
        return flag == "1"
    return console.is_terminal


class Steps:
    """``with Steps("Galois keys", total) as bar: ... bar.advance()``: a bar for ``total`` steps
    that appears after :data:`DELAY` seconds (see the module docstring)."""

    def __init__(self, description: str, total: int):
        self.description = description
        self.total = total
        self.done = 0
        self.shown = False
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> Steps:
        self._start = time.monotonic()
        return self

    def advance(self) -> None:
        self.done += 1
        if self._progress is None and _enabled() and self.done < self.total and (
                time.monotonic() - self._start > DELAY):
            self._progress = Progress(TextColumn("{task.description}"), BarColumn(),
                                      MofNCompleteColumn(), TimeElapsedColumn(),
                                      console=console, transient=True)
            self._progress.start()
            self._task = self._progress.add_task(self.description, total=self.total,
                                                 completed=self.done)
            self.shown = True
        elif self._progress is not None and self._task is not None:
            self._progress.update(self._task, completed=self.done)

    def __exit__(self, *exc) -> None:
        if self._progress is not None:
            self._progress.stop()
