"""Time this checkout against an earlier commit, interleaved (shared by the ``bench_*_versions.py`` scripts).

The earlier commit is checked out in a temporary git worktree. Each round runs both versions, one
process each, in alternating order (drift on a shared machine hits both alike); a process runs a
timer script that prints a JSON list of per-item milliseconds. Per item, the median over rounds is kept.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def interleaved(base_rev: str, timer: str, timer_args: list[str], rounds: int, workdir: Path) -> dict[str, list[float]]:
    """Per-item median milliseconds for ``"base"`` (``base_rev``) and ``"head"`` (this checkout).

    ``timer`` is Python source run as ``python -c timer TREE *timer_args``: it must put ``TREE`` first
    on ``sys.path``, import tokenslim from it and print the list of per-item times.
    """
    base = workdir / "base"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(base), base_rev], check=True)
    try:
        trees = {"base": base, "head": ROOT}
        runs: dict[str, list[list[float]]] = {k: [] for k in trees}
        for r in range(rounds):
            for name in (["base", "head"] if r % 2 == 0 else ["head", "base"]):
                out = subprocess.run([sys.executable, "-c", timer, str(trees[name]), *timer_args], capture_output=True,
                                     text=True, check=True, cwd=workdir).stdout
                runs[name].append(json.loads(out))
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False)
    return {k: [statistics.median(x) for x in zip(*v)] for k, v in runs.items()}


def report(per: dict[str, list[float]], base_rev: str, unit: str) -> float:
    """Print p50 / mean per version and the median per-item ratio (head over base); return that ratio."""
    for k, v in per.items():
        print(f"{k}: p50 {statistics.median(v):.3f} ms, mean {statistics.mean(v):.3f} ms over {len(v)} {unit}")
    ratio = statistics.median(h / b for h, b in zip(per["head"], per["base"]))
    print(f"median per-{unit.rstrip('s')} ratio (this checkout / {base_rev}): {ratio:.3f}")
    return ratio
