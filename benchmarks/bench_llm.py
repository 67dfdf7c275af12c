"""Per-stage ablation on a real LLM: what each tokenslim stage saves, and what it costs in quality.

A thin wrapper over ``tokenslim bench`` (same arguments), so the benchmark can be
run from a checkout without installing the console script::

    python benchmarks/bench_llm.py --dataset hotpotqa --backend vllm --limit 20
    python benchmarks/bench_llm.py --dataset hotpotqa --backend vllm --limit 100 --out results/hotpotqa_vllm_100

It prints the fixed-width table (with the exact command) and writes bench.json,
bench.md and PNG plots into ``--out`` (default ``results/bench-<dataset>-<backend>/``).
Timing runs on a shared machine go through ``flock /tmp/tokenslim-bench.lock``.
"""

from __future__ import annotations

import sys

from tokenslim.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["bench", *sys.argv[1:]]))
