"""The default pipeline's time on 8k-12k-token structured samples (tables, JSON, code, logs) of this checkout against an earlier commit, interleaved.

    flock /tmp/tokenslim-bench.lock python benchmarks/bench_structured_versions.py --base cabc07d \\
        --data ~/.cache/tokenslim/structured_heldout --data ~/.cache/tokenslim/structured_fresh --rounds 4

Each ``--data`` folder is one ``benchmarks/data_structured.py`` output; the samples of ``--types``
(default: tables and JSON) of 8,000-12,000 cl100k tokens (the size the issue's 20 ms target names) are timed through
``default_pipeline().run``, each sample's best of 3, both versions in alternating order
(``_versions.interleaved``). Reports, per type, the p50 of the per-sample medians over rounds and the
median per-sample ratio (this checkout over the base). ``--cold`` clears the cache of parsed Python
before each run: the best of 3 then never reuses a parse, as a module sent for the first time does not.
"""

from __future__ import annotations

import argparse
import gzip
import json
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
from tokenslim import default_pipeline
with open(sys.argv[2], encoding="utf-8") as f:
    samples = json.load(f)
pipe = default_pipeline()
for s in samples[:5]:
    pipe.run(s["query"], [s["text"]])
cold = sys.argv[3] == "cold"
from tokenslim._internal.structured import code
out = []
for s in samples:
    best = float("inf")
    for _ in range(3):
        if cold:
            code._tree.cache_clear()  # a module parsed for the first time, as a new tool output is
        t = time.perf_counter(); pipe.run(s["query"], [s["text"]]); best = min(best, time.perf_counter() - t)
    out.append(best * 1000)
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", required=True, help="the earlier commit")
    ap.add_argument("--data", action="append", required=True, help="a data_structured.py output folder (repeatable)")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--types", nargs="+", default=["table", "json"], choices=["table", "json", "code", "log"], help="sample types timed")
    ap.add_argument("--cold", action="store_true", help="clear the Python parse cache before each run (each of the best of 3 parses anew)")
    args = ap.parse_args()
    from tokenslim import get_tokenizer

    count = get_tokenizer("cl100k_base").count
    samples = []
    for folder in args.data:
        with gzip.open(Path(folder).expanduser() / "samples.jsonl.gz", "rt", encoding="utf-8") as f:
            rows = [json.loads(line) for line in f]
        samples += [r for r in rows if r["type"] in args.types and 8000 <= count(r["text"]) <= 12000]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "samples.json"
        path.write_text(json.dumps(samples), encoding="utf-8")
        per = interleaved(args.base, _TIMER, [str(path), "cold" if args.cold else "warm"], args.rounds, Path(tmp))
    for kind in args.types:
        idx = [k for k, s in enumerate(samples) if s["type"] == kind]
        print(f"-- {kind}")
        report({name: [v[k] for k in idx] for name, v in per.items()}, args.base, "samples")


if __name__ == "__main__":
    main()
