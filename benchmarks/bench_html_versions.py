"""HTML extraction time of this checkout against an earlier commit, interleaved.

    flock /tmp/tokenslim-bench.lock python benchmarks/bench_html_versions.py --base ed54063 --rounds 6

The earlier commit is checked out in a temporary git worktree; each round runs both versions,
one process each, in alternating order (``_versions.interleaved``); a process times
``extract_main_text`` on the 421 shared HTML pages that ``bench_html.py`` scores (its ``load_pages``: 121 article-benchmark pages, 300 trafilatura-eval pages), each page's best of 3.
Per page, the median over rounds is kept.
Reports the p50 and mean of those per-page times and the median per-page ratio (this checkout
over the base). Needs ``../shared/data``.

    flock /tmp/tokenslim-bench.lock python benchmarks/bench_html_versions.py --base ed54063 --rounds 3 --in-process

``--in-process`` runs both versions in this one process instead (the base's package copied out of git as
``tokenslim_base``), page by page in alternating order, each page's best over the rounds: steadier on a noisy
machine, since both versions see the same moment. Reports the ratio of summed times and the median per-page ratio.
"""

from __future__ import annotations

import argparse
import io
import pickle
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _versions import interleaved, report  # noqa: E402
from bench_html import load_pages  # noqa: E402  (the pages bench_html.py scores, read once here)

_TIMER = r"""
import json, pickle, sys, time
sys.path.insert(0, sys.argv[1])
import tokenslim
assert tokenslim.__file__.startswith(sys.argv[1]), tokenslim.__file__
from tokenslim.html import extract_main_text
with open(sys.argv[2], "rb") as f:
    pages = pickle.load(f)
for p in pages[:20]:
    extract_main_text(p)
out = []
for p in pages:
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter(); extract_main_text(p); best = min(best, time.perf_counter() - t)
    out.append(best * 1000)
print(json.dumps(out))
"""


def _base_package(base: str, into: Path) -> Callable[[Any], Any]:
    """``extract_main_text`` of commit ``base``: its ``tokenslim`` package from ``git archive``, renamed
    ``tokenslim_base`` (imports rewritten) so that both versions load in one process."""
    tar = subprocess.run(["git", "-C", str(ROOT), "archive", base, "tokenslim"], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        archive.extractall(into, filter="data")
    (into / "tokenslim").rename(into / "tokenslim_base")
    for path in (into / "tokenslim_base").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        path.write_text(re.sub(r"\btokenslim(?=[.\s])", "tokenslim_base", text), encoding="utf-8")
    sys.path.insert(0, str(into))
    from tokenslim_base.html import extract_main_text  # type: ignore[import-not-found]

    return extract_main_text


def _in_process(base: str, pages: list[Any], rounds: int, tmp: Path) -> None:
    from tokenslim.html import extract_main_text as head

    old = _base_package(base, tmp)
    best = {old: [float("inf")] * len(pages), head: [float("inf")] * len(pages)}
    for rnd in range(rounds):
        for i, page in enumerate(pages):
            for f in (old, head) if (i + rnd) % 2 == 0 else (head, old):
                t = time.perf_counter()
                f(page)
                best[f][i] = min(best[f][i], time.perf_counter() - t)
    a, b = best[old], best[head]
    print(f"{len(pages)} pages, each page's best of {rounds} rounds, both versions in one process")
    print(f"base {base}: sum {sum(a):.3f} s, p50 {statistics.median(a) * 1e3:.2f} ms")
    print(f"this checkout: sum {sum(b):.3f} s, p50 {statistics.median(b) * 1e3:.2f} ms")
    print(f"ratio of sums {sum(b) / sum(a):.3f}, median per-page ratio {statistics.median(y / x for x, y in zip(a, b)):.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", required=True, help="the earlier commit")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--in-process", action="store_true", help="both versions in this process, pages interleaved")
    args = ap.parse_args()
    articles, snippets = load_pages()
    with tempfile.TemporaryDirectory() as tmp:
        if args.in_process:
            _in_process(args.base, [html for _, html, *_ in articles + snippets], args.rounds, Path(tmp))
            return
        pages = Path(tmp) / "pages.pickle"
        pages.write_bytes(pickle.dumps([html for _, html, *_ in articles + snippets]))
        per = interleaved(args.base, _TIMER, [str(pages)], args.rounds, Path(tmp))
    report(per, args.base, "pages")


if __name__ == "__main__":
    main()
