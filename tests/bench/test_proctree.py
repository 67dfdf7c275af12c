"""tokenslim.bench.proctree: a process tree's CPU time and memory include its children."""

from __future__ import annotations

import os
import subprocess
import sys

from tokenslim.bench.proctree import TreeSampler, proc_table, tree_pids, tree_rss_bytes

BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.6: pass\n"
HOLD = "import sys, time\nb = bytearray(200 * 2**20)\nb[::4096] = b'x' * len(b[::4096])\nprint('ready', flush=True)\nsys.stdin.readline()\n"


def test_cpu_of_a_child_that_exits_is_counted() -> None:
    with TreeSampler(os.getpid(), interval=0.05) as tree:
        subprocess.run([sys.executable, "-c", BURN], check=True)
    # The child burned >= 0.6 s of its own CPU; sampling every 0.05 s loses at most the last interval.
    assert tree.cpu_seconds >= 0.4


def test_rss_of_the_tree_includes_a_child_holding_memory() -> None:
    child = subprocess.Popen([sys.executable, "-c", HOLD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        table = proc_table()
        assert child.pid in tree_pids(os.getpid(), table)
        assert table[child.pid].rss_bytes >= 200 * 2**20
        assert tree_rss_bytes(os.getpid()) >= table[child.pid].rss_bytes
        with TreeSampler(child.pid, interval=0.05) as tree:
            pass
        assert tree.peak_rss_bytes >= 200 * 2**20
    finally:
        assert child.stdin is not None
        child.stdin.write("\n")
        child.stdin.close()
        child.wait(timeout=30)
