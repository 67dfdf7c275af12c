"""Benchmark: corpus-scale compression on a local Ray cluster, 1 vs 2 workers.

The workload is the shared HotpotQA set (300 questions, 10 paragraphs each) repeated
``--copies`` times as distinct requests, compressed by the default pipeline with a
token budget. Each configuration runs ``--repeats`` times, interleaved
(in-process, 1 worker, 2 workers, in-process, ...), so machine load hits all of
them alike. Reported: requests per second (whole job wall time: actor start-up,
batching and result transfer included), the speed-up of 2 workers over 1 and the
scaling efficiency (speed-up / 2). Every row of every Ray run is checked against
the in-process output.

The machine is shared, so each run also reports the CPU cores the job actually
got (CPU seconds of the driver, Ray and its workers, over wall seconds) and the
1-minute load average after it: on 2 cores, a load above 2 means the workers did
not have the CPUs to themselves.

Run (under the shared benchmark lock; ``nice -n -10`` so the other processes of a
shared machine yield the CPUs to the measured ones, baseline and Ray alike)::

    flock /tmp/tokenslim-bench.lock nice -n -10 python benchmarks/bench_ray.py

Writes results/ray_scaling.json and results/ray_scaling.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in [str(ROOT), os.environ.get("PYTHONPATH", "")] if p)
# Ray starts its workers at niceness +15 (RAY_worker_niceness); on a shared machine they would then yield the CPUs
# to every other process while the in-process baseline does not. Workers run at the driver's priority here.
os.environ.setdefault("RAY_worker_niceness", "0")

import tokenslim  # noqa: E402
from tokenslim._internal.cpu import cpu_summary  # noqa: E402
from tokenslim.bench.datasets import hotpotqa  # noqa: E402
from tokenslim.bench.proctree import TreeSampler  # noqa: E402
from tokenslim.integrations.ray import compress_dataset, compress_rows  # noqa: E402


def requests(copies: int) -> list[dict[str, Any]]:
    """HotpotQA rows as Ray Dataset rows, ``copies`` times (distinct ids)."""
    base = [
        {"query": e.query,
         "chunks": [{"text": c.text, "score": c.score, "id": c.id, "metadata": dict(c.metadata)} for c in e.chunks]}
        for e in hotpotqa()
    ]
    return [{"id": f"{k}-{i}", **row} for k in range(copies) for i, row in enumerate(base)]


def _key(row: dict[str, Any]) -> tuple[Any, ...]:
    return (row["id"], row["tokens_before"], row["tokens_after"], json.dumps(row["messages"]),
            json.dumps(row["chunks_out"]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--copies", type=int, default=10, help="times the 300 HotpotQA questions are repeated (default 10)")
    ap.add_argument("--repeats", type=int, default=2, help="interleaved runs per configuration (default 2)")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--token-budget", type=int, default=1000)
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "ray_scaling")
    args = ap.parse_args(argv)

    import ray

    rows = requests(args.copies)
    pipeline = tokenslim.default_pipeline(token_budget=args.token_budget)
    cpus = os.cpu_count() or 1
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    ds = ray.data.from_items(rows).materialize()  # input in the object store before timing

    pipeline.warm_up()
    reference = None
    times: dict[str, list[float]] = {"in-process": [], "ray, 1 worker": [], "ray, 2 workers": []}
    loads: dict[str, list[float]] = {k: [] for k in times}  # 1-minute load average after each run
    cores: dict[str, list[float]] = {k: [] for k in times}  # CPU seconds the job got / wall seconds
    mismatches = 0
    for rep in range(args.repeats):
        for label in times:
            with TreeSampler(os.getpid()) as cpu:
                t0 = time.perf_counter()
                if label == "in-process":
                    out = compress_rows(pipeline, rows)
                else:
                    workers = 1 if "1 worker" in label else 2
                    result = compress_dataset(ds, pipeline, num_workers=workers, batch_size=args.batch_size).materialize()
                times[label].append(time.perf_counter() - t0)
            loads[label].append(os.getloadavg()[0])
            cores[label].append(cpu.cpu_seconds / times[label][-1])
            if label == "in-process":
                reference = reference or {r["id"]: _key(r) for r in out}
                print(f"repeat {rep + 1}: {label}: {times[label][-1]:.1f} s", file=sys.stderr, flush=True)
                continue
            got = result.take_all()
            mismatches += sum(reference[r["id"]] != _key(r) for r in got) + abs(len(got) - len(rows))
            print(f"repeat {rep + 1}: {label}: {times[label][-1]:.1f} s", file=sys.stderr, flush=True)
    ray.shutdown()

    rate = {k: len(rows) / statistics.median(v) for k, v in times.items()}
    speedup = rate["ray, 2 workers"] / rate["ray, 1 worker"]
    load = os.getloadavg()
    report = {
        "command": "python " + " ".join([Path(sys.argv[0]).as_posix(), *(argv if argv is not None else sys.argv[1:])]),
        "requests": len(rows),
        "batch_size": args.batch_size,
        "token_budget": args.token_budget,
        "repeats": args.repeats,
        "cpu": cpu_summary(),
        "os_cpus": cpus,
        "load_average_after": [round(x, 2) for x in load],
        "seconds": {k: [round(x, 2) for x in v] for k, v in times.items()},
        "load_average_1min_after_each": {k: [round(x, 2) for x in v] for k, v in loads.items()},
        "cpu_cores_obtained_each": {k: [round(x, 2) for x in v] for k, v in cores.items()},
        "requests_per_s": {k: round(v, 1) for k, v in rate.items()},
        "speedup_2_vs_1": round(speedup, 2),
        "scaling_efficiency": round(speedup / 2, 2),
        "rows_differing_from_in_process": mismatches,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(report, indent=1) + "\n")
    lines = [
        f"# Ray Data scaling: {len(rows)} HotpotQA requests, default pipeline (budget {args.token_budget})",
        "",
        f"`{report['command']}` on {cpus} CPUs ({report['cpu']}); median of {args.repeats} interleaved runs; "
        f"load average after the run {report['load_average_after']} (the machine is shared).",
        "",
        "| run | seconds (each repeat) | CPU cores the job got | load avg after | requests/s (median) | vs 1 worker |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for k, v in times.items():
        lines.append(f"| {k} | {', '.join(f'{x:.1f}' for x in v)} | {', '.join(f'{x:.2f}' for x in cores[k])} | "
                     f"{', '.join(f'{x:.1f}' for x in loads[k])} | {rate[k]:.1f} | {rate[k] / rate['ray, 1 worker']:.2f}x |")
    lines += [
        "",
        f"2 workers / 1 worker: **{speedup:.2f}x** (scaling efficiency {speedup / 2:.0%}). "
        f"Rows differing from the in-process output: {mismatches}.",
    ]
    args.out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if mismatches == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
