"""Benchmark: the cost of exact mode (renderer="chromium") per page against the default Python rules.

    flock /tmp/tokenslim-bench.lock python benchmarks/bench_browser_exact.py

On the 121 pages of ../shared/data/article_extraction_benchmark, each page is extracted with both
renderers in turn (interleaved, so load on the machine hits both alike), after one warm-up page
that starts Chromium. Reports per-page milliseconds (median, mean, p90) and how often the two
outputs are identical. Writes results/browser_exact.json. Needs the browser extra and Chromium.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import time
from pathlib import Path

from tokenslim.bench.datasets import data_dir
from tokenslim.html import extract


def _pages(limit: int | None) -> list[tuple[str, bytes]]:
    root = data_dir() / "article_extraction_benchmark"
    ids = sorted(json.loads((root / "ground-truth.json").read_text(encoding="utf-8")))[:limit]
    return [(pid, gzip.open(root / "html" / f"{pid}.html.gz").read()) for pid in ids]


def _summary(ms: list[float]) -> dict[str, float]:
    ms = sorted(ms)
    return {"ms_p50": statistics.median(ms), "ms_mean": statistics.fmean(ms), "ms_p90": ms[int(0.9 * (len(ms) - 1))]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=None, help="first N pages only")
    ap.add_argument("--out", default="results/browser_exact.json")
    args = ap.parse_args()
    pages = _pages(args.limit)
    extract(pages[0][1], renderer="chromium")  # starts Chromium: not part of the per-page cost
    times: dict[str, list[float]] = {"python": [], "chromium": []}
    same = 0
    for _pid, raw in pages:
        texts = {}
        for renderer in ("python", "chromium"):
            t0 = time.perf_counter()
            texts[renderer] = extract(raw, renderer=renderer).text
            times[renderer].append((time.perf_counter() - t0) * 1000)
        same += texts["python"] == texts["chromium"]
    results = {r: _summary(ms) for r, ms in times.items()}
    results["pages"] = len(pages)
    results["identical_text_share"] = same / len(pages)
    results["chromium_over_python_mean"] = results["chromium"]["ms_mean"] / results["python"]["ms_mean"]
    command = "flock /tmp/tokenslim-bench.lock python benchmarks/bench_browser_exact.py" + (
        f" --limit {args.limit}" if args.limit else "")
    for r in ("python", "chromium"):
        s = results[r]
        print(f"{r:9s} p50 {s['ms_p50']:8.1f} ms  mean {s['ms_mean']:8.1f} ms  p90 {s['ms_p90']:8.1f} ms")
    print(f"identical text on {same}/{len(pages)} pages; command: {command}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"command": command, "python": sys.version.split()[0], "results": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
