"""The default pipeline's time per multi-hop request of this checkout against an earlier commit, interleaved.

    flock /tmp/tokenslim-bench.lock python benchmarks/bench_relevance_versions.py --base 9746eaf --rounds 3 \\
        [--musique musique_train.jsonl]

Times ``default_pipeline().run`` (each version with the relevance model it ships) on the shared HotpotQA
(300) and 2WikiMultihopQA (100) samples, titles in metadata (10 paragraphs), and with ``--musique`` on the
first 50 questions of a MuSiQue JSONL file (20 paragraphs): each request's best of 3, both versions in
alternating order (``_versions.interleaved``). Reports, per set, the p50 of the per-request medians over
rounds and the median per-request ratio (this checkout over the base). A model or feature change moves the
p50 figures of the compression and held-out benchmarks; this measures how much of a move is the change and
how much the machine.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _versions import interleaved, report  # noqa: E402

_TIMER = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import tokenslim
assert tokenslim.__file__.startswith(sys.argv[1]), tokenslim.__file__
from tokenslim import Chunk, default_pipeline
from tokenslim.bench import datasets as D
name = sys.argv[2]
if name == "hotpotqa":
    requests = [(e.query, e.chunks) for e in D.hotpotqa()]
elif name == "twowiki":
    requests = [(e.query, e.chunks) for e in D.twowiki()]
else:
    with open(sys.argv[3], encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()][:50]
    requests = [(r["question"], [Chunk(p["paragraph_text"], metadata={"title": p["title"]}) for p in r["paragraphs"]]) for r in rows]
pipe = default_pipeline()
for q, c in requests[:5]:
    pipe.run(q, c)
out = []
for q, c in requests:
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter(); pipe.run(q, c); best = min(best, time.perf_counter() - t)
    out.append(best * 1000)
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the earlier commit")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--musique", type=Path, default=None, help="a MuSiQue JSONL file (paragraphs, question); its first 50 questions")
    args = ap.parse_args()
    sets = [("hotpotqa", ""), ("twowiki", "")] + ([("musique", str(args.musique.resolve()))] if args.musique else [])
    for name, path in sets:
        print(f"== {name}")
        with tempfile.TemporaryDirectory() as tmp:
            per = interleaved(args.base, _TIMER, [name, path], args.rounds, Path(tmp))
        report(per, args.base, "requests")


if __name__ == "__main__":
    main()
