"""Benchmark: what the first request of a fresh process pays, with and without ``Pipeline.warm_up()``.

Each trial is a new Python process that imports tokenslim, builds the default pipeline
and times its first request on a HotpotQA question (10 paragraphs); a "warm" trial calls
``warm_up()`` first (its time is reported too). Cold and warm trials alternate; medians
are reported.

Run::

    flock /tmp/tokenslim-bench.lock python benchmarks/bench_warmup.py
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

TRIAL = """
import json, sys, time
import tokenslim
from tokenslim.bench.datasets import hotpotqa
ex = hotpotqa(1)[0]
pipe = tokenslim.default_pipeline(token_budget=1000)
warm = pipe.warm_up() if sys.argv[1] == "warm" else None
t0 = time.perf_counter()
pipe.run(ex.query, ex.chunks)
first = time.perf_counter() - t0
t0 = time.perf_counter()
pipe.run(ex.query, ex.chunks)
print(json.dumps({"warm_up_s": warm, "first_s": first, "second_s": time.perf_counter() - t0}))
"""


def trial(kind: str) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", TRIAL, kind], capture_output=True, text=True, check=True, env=env, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=5)
    args = ap.parse_args()
    runs: dict[str, list[dict[str, float]]] = {"cold": [], "warm": []}
    for _ in range(args.trials):
        for kind in runs:
            runs[kind].append(trial(kind))
    med = lambda kind, key: statistics.median(r[key] for r in runs[kind])  # noqa: E731
    print(f"{args.trials} fresh processes each, medians (python benchmarks/bench_warmup.py --trials {args.trials}):")
    print(f"  no warm-up:   first request {med('cold', 'first_s') * 1000:.0f} ms, second {med('cold', 'second_s') * 1000:.0f} ms")
    print(f"  warm_up():    warm_up {med('warm', 'warm_up_s') * 1000:.0f} ms, then first request "
          f"{med('warm', 'first_s') * 1000:.0f} ms, second {med('warm', 'second_s') * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
