"""Differential fuzzing against Chromium: tokenslim's keep/drop per text node vs the browser's.

    flock /tmp/tokenslim-bench.lock python benchmarks/bench_browser_fuzz.py --pages 10000
    flock /tmp/tokenslim-bench.lock python benchmarks/bench_browser_fuzz.py --pages 10000 --grammar 2

Pages come from tests/html/page_grammar.py (element types x selector forms x CSS properties x
values x nesting, plus never-rendered elements and hiding attributes), seeds 0..N-1. Reports the
share of text nodes Chromium hides that tokenslim keeps (a hidden instruction reaching the model)
and of those it shows that tokenslim drops, with the first disagreeing seeds for triage. Writes
results/browser_fuzz.json (grammar 2, which adds the classes closed later: results/browser_fuzz_2.json). Needs the
browser extra and Chromium.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "html"))

from page_grammar import compare  # noqa: E402

from tokenslim.html._browser import Browser  # noqa: E402
from tqdm import tqdm  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pages", type=int, default=10_000)
    ap.add_argument("--grammar", type=int, choices=(1, 2), default=1)
    ap.add_argument("--out", default=None, help="default: results/browser_fuzz.json (grammar 2: browser_fuzz_2.json)")
    args = ap.parse_args()
    args.out = args.out or ("results/browser_fuzz.json" if args.grammar == 1 else "results/browser_fuzz_2.json")
    hidden = kept = visible = dropped = 0
    kept_seeds: list[str] = []
    dropped_seeds: list[str] = []
    t0 = time.perf_counter()
    with Browser() as browser:
        for seed in tqdm(range(args.pages), desc="pages", unit="page", file=sys.stderr, mininterval=5):
            for marker, shown, keeps in compare(browser, seed, args.grammar):
                if not shown:
                    hidden += 1
                    if keeps:
                        kept += 1
                        kept_seeds.append(f"{seed}:{marker}")
                else:
                    visible += 1
                    if not keeps:
                        dropped += 1
                        dropped_seeds.append(f"{seed}:{marker}")
    results = {
        "pages": args.pages, "hidden_nodes": hidden, "hidden_kept": kept, "hidden_kept_rate": kept / max(hidden, 1),
        "visible_nodes": visible, "visible_dropped": dropped, "visible_dropped_rate": dropped / max(visible, 1),
        "first_hidden_kept": kept_seeds[:50], "first_visible_dropped": dropped_seeds[:50],
        "seconds": round(time.perf_counter() - t0, 1),
    }
    command = f"flock /tmp/tokenslim-bench.lock python benchmarks/bench_browser_fuzz.py --pages {args.pages}"
    if args.grammar != 1:
        command += f" --grammar {args.grammar}"
    print(f"{args.pages} pages: {kept}/{hidden} hidden text nodes kept ({results['hidden_kept_rate']:.2%}), "
          f"{dropped}/{visible} visible ones dropped ({results['visible_dropped_rate']:.2%}); command: {command}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"command": command, "python": sys.version.split()[0], "results": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
