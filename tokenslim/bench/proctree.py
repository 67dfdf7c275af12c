"""CPU time and resident memory of a process and everything started under it (Linux ``/proc``).

Benchmarks that start other processes (a model server, Ray's raylet and workers) need the
whole tree's figures, not just their own: :class:`TreeSampler` samples the tree every
``interval`` seconds, so short-lived children are counted too (one that exits loses at most
its last interval of CPU time).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

__all__ = ["ProcStat", "TreeSampler", "proc_table", "tree_pids", "tree_rss_bytes"]


class ProcStat(NamedTuple):
    """One process: its parent, CPU seconds used by itself (user + system), resident bytes."""

    ppid: int
    cpu_s: float
    rss_bytes: int


def proc_table() -> dict[int, ProcStat]:
    """Every visible process, from ``/proc/<pid>/stat`` (one read each)."""
    tick = os.sysconf("SC_CLK_TCK")
    page = os.sysconf("SC_PAGE_SIZE")
    table: dict[int, ProcStat] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:  # exited between listdir and read
                continue
            fields = stat[stat.rfind(")") + 2 :].split()  # fields 3.. of proc(5); the name may hold spaces
            table[int(entry)] = ProcStat(int(fields[1]), (int(fields[11]) + int(fields[12])) / tick, int(fields[21]) * page)
    return table


def tree_pids(root: int, table: dict[int, ProcStat]) -> set[int]:
    """``root`` and all its descendants present in ``table``."""
    tree, frontier = {root}, {root}
    while frontier:
        frontier = {p for p, s in table.items() if s.ppid in frontier and p not in tree}
        tree |= frontier
    return tree & set(table)


def tree_rss_bytes(root: int) -> int:
    """Resident bytes of ``root`` and its descendants right now."""
    table = proc_table()
    return sum(table[p].rss_bytes for p in tree_pids(root, table))


@dataclass
class TreeSampler:
    """Context manager: CPU seconds used by the tree of ``root`` while inside, and its peak RSS.

    >>> with TreeSampler(os.getpid(), interval=0.1) as tree:
    ...     _ = sum(range(10**6))
    >>> tree.cpu_seconds >= 0 and tree.peak_rss_bytes > 0
    True
    """

    root: int
    interval: float = 0.2
    peak_rss_bytes: int = 0
    _first: dict[int, float] = field(default_factory=dict, repr=False)
    _last: dict[int, float] = field(default_factory=dict, repr=False)
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)

    def _sample(self, initial: bool = False) -> None:
        table = proc_table()
        pids = tree_pids(self.root, table)
        for pid in pids:
            self._first.setdefault(pid, table[pid].cpu_s if initial else 0.0)
            self._last[pid] = table[pid].cpu_s
        self.peak_rss_bytes = max(self.peak_rss_bytes, sum(table[p].rss_bytes for p in pids))

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self) -> TreeSampler:
        self._sample(initial=True)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._sample()

    @property
    def cpu_seconds(self) -> float:
        """CPU seconds the tree used between entering and leaving (so far, while inside)."""
        return sum(self._last[p] - self._first[p] for p in self._last)
