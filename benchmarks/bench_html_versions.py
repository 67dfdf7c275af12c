"""HTML extraction time of this checkout against an earlier commit, interleaved.

    flock /tmp/tokenslim-bench.lock python benchmarks/bench_html_versions.py --base ed54063 --rounds 6

The earlier commit is checked out in a temporary git worktree; each round runs both versions,
one process each, in alternating order (``_versions.interleaved``); a process times
``extract_main_text`` on the 421 shared HTML pages that ``bench_html.py`` scores (its ``load_pages``: 121 article-benchmark pages, 300 trafilatura-eval pages), each page's best of 3.
Per page, the median over rounds is kept.
Reports the p50 and mean of those per-page times and the median per-page ratio (this checkout
over the base). Needs ``../shared/data``.
"""

from __future__ import annotations

import argparse
import pickle
import sys
import tempfile
from pathlib import Path

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", required=True, help="the earlier commit")
    ap.add_argument("--rounds", type=int, default=6)
    args = ap.parse_args()
    articles, snippets = load_pages()
    with tempfile.TemporaryDirectory() as tmp:
        pages = Path(tmp) / "pages.pickle"
        pages.write_bytes(pickle.dumps([html for _, html, *_ in articles + snippets]))
        per = interleaved(args.base, _TIMER, [str(pages)], args.rounds, Path(tmp))
    report(per, args.base, "pages")


if __name__ == "__main__":
    main()
