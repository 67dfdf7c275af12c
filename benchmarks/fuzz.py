"""Property-based fuzzing of every stage, extract_main_text and default_pipeline (10,000 inputs each).

The inputs and the outcome classification are those of the CI fuzz tests
(tests/reliability/reliability_strategies.py): arbitrary unicode with lone
surrogates, NUL, bidi controls and emoji; invalid UTF-8 bytes; empty and
whitespace-only chunks; up to 1,000 chunks; None and non-str fields; malformed
and truncated HTML; real HotpotQA paragraphs from ../shared/data. Hypothesis runs
derandomized, so a rerun draws the same inputs.

Per target the table gives the inputs tried, how many ended in an expected typed
error (``tokenslim.errors.TokenSlimError``: malformed input, budget too small, page
too large), how many let anything else escape or broke an output invariant
(unexpected; must be 0), the slowest single input in ms, and the command.

Run (serialised with other timing runs)::

    flock /tmp/tokenslim-bench.lock python benchmarks/fuzz.py
    python benchmarks/fuzz.py --examples 500 --targets dedupe reorder   # quicker look
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "reliability"))

from hypothesis import given, settings  # noqa: E402

from reliability_strategies import TARGETS, Tally, register_profiles, run_target  # noqa: E402

COMMAND = "flock /tmp/tokenslim-bench.lock python benchmarks/fuzz.py"


def fuzz_one(name: str, examples: int) -> dict[str, Any]:
    """Run ``examples`` generated inputs through one target; return its tally as a dict."""
    register_profiles()
    settings.load_profile("bench")
    target = TARGETS[name]
    tally = Tally()

    @settings(max_examples=examples)
    @given(target.cases)
    def fuzz(case: dict[str, Any]) -> None:
        run_target(target, case, tally)

    t0 = time.perf_counter()
    fuzz()
    return {
        "target": name,
        "tried": tally.tried,
        "typed": tally.typed,
        "unexpected": tally.unexpected,
        "max_ms": tally.max_ms,
        "seconds": time.perf_counter() - t0,
        "kinds": tally.kinds,
        "failures": tally.failures,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--examples", type=int, default=10_000, help="generated inputs per target (default 10,000)")
    ap.add_argument("--targets", nargs="*", default=sorted(TARGETS), choices=sorted(TARGETS))
    ap.add_argument("--jobs", type=int, default=1, help="targets fuzzed in parallel processes")
    ap.add_argument("--json", type=Path, help="also write the rows (and any failure tracebacks) here")
    args = ap.parse_args()
    cmd = COMMAND + ("" if args.examples == 10_000 else f" --examples {args.examples}")
    cmd += (f" --jobs {args.jobs}" if args.jobs != 1 else "") + (
        " --targets " + " ".join(args.targets) if args.targets != sorted(TARGETS) else ""
    )
    head = f"{'stage':<24}{'inputs tried':>13}{'typed errors':>14}{'unexpected':>12}{'max ms':>10}{'run s':>8}  typed errors by class"
    print(head + "\n" + "-" * len(head), flush=True)
    rows = []
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(fuzz_one, name, args.examples) for name in args.targets]
        for fut in futures:
            r = fut.result()
            rows.append(r)
            kinds = ", ".join(f"{k}={v}" for k, v in sorted(r["kinds"].items()))
            print(
                f"{r['target']:<24}{r['tried']:>13,}{r['typed']:>14,}{r['unexpected']:>12}{r['max_ms']:>10.1f}"
                f"{r['seconds']:>8.0f}  {kinds}",
                flush=True,
            )
            for f in r["failures"]:
                print(f"  UNEXPECTED in {r['target']}:\n{f}", file=sys.stderr)
    total_unexpected = sum(r["unexpected"] for r in rows)
    print(
        f"\n{sum(r['tried'] for r in rows):,} inputs, {total_unexpected} unexpected; "
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, hypothesis derandomized"
    )
    print(f"command: {cmd}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=str))
    sys.exit(1 if total_unexpected else 0)


if __name__ == "__main__":
    main()
