"""HTML extraction time of this checkout against an earlier commit, interleaved.

    flock /tmp/tokenslim-bench.lock python benchmarks/bench_html_versions.py --base ed54063 --rounds 6

The earlier commit is checked out in a temporary git worktree. Each round runs both versions,
one process each, in alternating order (drift on a shared machine hits both alike); a process
times ``extract_main_text`` on the 421 shared HTML pages that ``bench_html.py`` scores (its
``load_pages``: 121 article-benchmark pages, 300 trafilatura-eval pages), each page's best of 3.
Per page, the median over rounds is kept.
Reports the p50 and mean of those per-page times and the median per-page ratio (this checkout
over the base). Needs ``../shared/data``.
"""

from __future__ import annotations

import argparse
import json
import pickle
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

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
        base = Path(tmp) / "base"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(base), args.base], check=True)
        try:
            trees = {"base": base, "head": ROOT}
            runs: dict[str, list[list[float]]] = {k: [] for k in trees}
            for r in range(args.rounds):
                for name in (["base", "head"] if r % 2 == 0 else ["head", "base"]):
                    out = subprocess.run([sys.executable, "-c", _TIMER, str(trees[name]), str(pages)], capture_output=True,
                                         text=True, check=True, cwd=tmp).stdout
                    runs[name].append(json.loads(out))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False)
    per = {k: [statistics.median(x) for x in zip(*v)] for k, v in runs.items()}
    for k, v in per.items():
        print(f"{k}: p50 {statistics.median(v):.3f} ms, mean {statistics.mean(v):.3f} ms over {len(v)} pages")
    ratio = statistics.median(h / b for h, b in zip(per["head"], per["base"]))
    print(f"median per-page ratio (this checkout / {args.base}): {ratio:.3f}")


if __name__ == "__main__":
    main()
