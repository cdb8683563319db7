"""Counters that every worker process of one gunicorn adds to, and one scrape sums.

Each process counts in a file of its own in METRICS_DIR: a table of 8-byte floats mapped into
memory, so an increment is a memory write, with no lock between processes and no system call.
Reading sums the files of every process, running or exited, so whichever worker answers a
scrape reports the whole server. gunicorn's master folds an exited worker's file into one file
for all exited workers (`fold_exited`), so recycled workers do not pile up files. Without a
folder (runserver, manage.py) a process counts in memory alone.

Standard library only: gunicorn.conf.py imports this in the master, without Django.
"""

from __future__ import annotations

import contextlib
import fcntl
import mmap
import os
import struct
import threading
from array import array
from pathlib import Path

SLOT = struct.Struct("d")
EXITED = "exited"
LOCK = ".lock"


class Counters:
    """`size` float slots, kept in `folder` (shared with the other processes) or in memory."""

    def __init__(self, folder: str, layout: str, size: int) -> None:
        self.folder = Path(folder) if folder else None
        self.layout = layout
        self.size = size
        self._pid = -1
        self._memory: mmap.mmap | bytearray = bytearray(size * SLOT.size)
        self._lock = threading.Lock()

    def _table(self) -> mmap.mmap | bytearray:
        # Opened on first use in each process: a forked worker must not write its parent's file.
        if self._pid != os.getpid():
            self._pid = os.getpid()
            if self.folder is None:
                self._memory = bytearray(self.size * SLOT.size)
            else:
                path = self.folder / f"{self._pid}-{self.layout}.bin"
                with open(path, "a+b") as file:
                    file.truncate(self.size * SLOT.size)
                    self._memory = mmap.mmap(file.fileno(), self.size * SLOT.size)
        return self._memory

    def add(self, slot: int, amount: float = 1.0) -> None:
        with self._lock:
            table = self._table()
            SLOT.pack_into(
                table, slot * SLOT.size, SLOT.unpack_from(table, slot * SLOT.size)[0] + amount
            )

    def totals(self) -> list[float]:
        """Each slot summed over every process's file (or this process's own table)."""
        if self.folder is None:
            with self._lock:
                return list(array("d", bytes(self._table())))
        self._table()
        sums = [0.0] * self.size
        with _locked(self.folder, fcntl.LOCK_SH):
            for path in self.folder.glob(f"*-{self.layout}.bin"):
                values = _read(path)
                if len(values) == self.size:
                    sums = [a + b for a, b in zip(sums, values, strict=True)]
        return sums


def fold_exited(folder: str, pid: int) -> None:
    """Add an exited process's counts to the exited processes' file and delete its own.

    Under an exclusive lock, so that a scrape never counts them twice or not at all."""
    root = Path(folder)
    with _locked(root, fcntl.LOCK_EX):
        for path in root.glob(f"{pid}-*.bin"):
            layout = path.name.split("-", 1)[1]
            values = _read(path)
            target = root / f"{EXITED}-{layout}"
            if target.exists():
                before = _read(target)
                if len(before) == len(values):
                    values = array("d", [a + b for a, b in zip(before, values, strict=True)])
            partial = target.with_suffix(".partial")
            partial.write_bytes(values.tobytes())
            os.replace(partial, target)
            path.unlink()


def _read(path: Path) -> array:
    values = array("d")
    with contextlib.suppress(FileNotFoundError):
        values.frombytes(path.read_bytes())
    return values


@contextlib.contextmanager
def _locked(folder: Path, how: int):
    with open(folder / LOCK, "a") as lock:
        fcntl.flock(lock, how)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
