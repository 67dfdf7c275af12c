"""HTML extraction time of this checkout against an earlier commit, interleaved.

    flock /tmp/tokenslim-bench.lock python benchmarks/bench_html_versions.py --base ed54063 --rounds 6

The earlier commit is checked out in a temporary git worktree. Each round runs both versions,
one process each, in alternating order (drift on a shared machine hits both alike); a process
times ``extract_main_text`` on the 421 shared HTML pages (121 article-benchmark pages, 300
trafilatura-eval pages), each page's best of 3. Per page, the median over rounds is kept.
Reports the p50 and mean of those per-page times and the median per-page ratio (this checkout
over the base). Needs ``../shared/data``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_TIMER = r"""
import gzip, json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import tokenslim
assert tokenslim.__file__.startswith(sys.argv[1]), tokenslim.__file__
from tokenslim.html import extract_main_text
root = Path(sys.argv[2])
aeb, tes = root / "article_extraction_benchmark", root / "trafilatura_eval_subset"
pages = [gzip.open(aeb / "html" / f"{pid}.html.gz").read()
         for pid in sorted(json.loads((aeb / "ground-truth.json").read_text(encoding="utf-8")))]
pages += [gzip.open(tes / e["html"]).read()
          for e in sorted(json.loads((tes / "annotations.json").read_text(encoding="utf-8")).values(), key=lambda e: e["html"])]
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
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(base), args.base], check=True)
        try:
            trees = {"base": base, "head": ROOT}
            runs: dict[str, list[list[float]]] = {k: [] for k in trees}
            for r in range(args.rounds):
                for name in (["base", "head"] if r % 2 == 0 else ["head", "base"]):
                    out = subprocess.run([sys.executable, "-c", _TIMER, str(trees[name]), args.data], capture_output=True,
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
