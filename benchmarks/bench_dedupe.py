"""Benchmark Dedupe on MultiHop-RAG retriever output (all 8 queries) and its cost on HotpotQA.

Compares, in the same run:

* ``default``     - ``Dedupe()``: exact + overlapping-window merge + MinHash near duplicates;
* ``no-merge``    - ``Dedupe(merge_overlaps=False)``: exact + MinHash near duplicates only;
* ``exact-only``  - ``Dedupe(threshold=None, merge_overlaps=False)``: the baseline.

Gold-fact retention: MultiHop-RAG gives, per query, the evidence sentences ("facts")
that answer it. A fact counts as present in a context when one chunk holds it as a
substring (case and whitespace folded), or holds at least 90% of its distinct words
(case and punctuation folded), since the retriever's windows sometimes render a fact
with different punctuation. Retention = facts present after Dedupe / facts present
before (facts the retriever never returned are not counted).

Text kept: the share of the input's distinct 8-word shingles (passage bodies) still in the output
(100% = nothing lost; overlap merging is lossless, near-duplicate drops are not).

Timing: the stage call alone (``Result`` built beforehand, a fresh one per repeat so
token counts are not cached), median over repeats. Run it under the shared lock:

    flock /tmp/tokenslim-bench.lock python benchmarks/bench_dedupe.py
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Callable

from tokenslim._internal.normalize import dedupe_key, fold_words, shingles, split_excerpt, squash_spaces
from tokenslim._result import Result
from tokenslim.bench.datasets import Example, hotpotqa, multihop_rag
from tokenslim.stages import Dedupe

CONFIGS: dict[str, Callable[[], Dedupe]] = {
    "default": lambda: Dedupe(),
    "no-merge": lambda: Dedupe(merge_overlaps=False),
    "exact-only": lambda: Dedupe(threshold=None, merge_overlaps=False),
}
COMMAND = "flock /tmp/tokenslim-bench.lock python benchmarks/bench_dedupe.py"


def fact_present(fact: str, texts: list[str], min_word_recall: float = 0.9) -> bool:
    """Whether one of ``texts`` holds ``fact`` (substring, or >= ``min_word_recall`` of its words)."""
    f = squash_spaces(fact.casefold())
    words = set(dedupe_key(fact).split())
    for t in texts:
        if f in squash_spaces(t.casefold()):
            return True
        if words and len(words & set(dedupe_key(t).split())) / len(words) >= min_word_recall:
            return True
    return False


def text_kept(before: list[str], after: list[str]) -> float:
    """Share of the distinct 8-word shingles of the passage bodies of ``before`` still found in ``after``.

    Bodies only: a shingle that straddles an ``[Excerpt from document]`` header and the
    first words of a window is not content, and disappears when windows are merged.
    """
    inp = {s for t in before for s in shingles(fold_words(split_excerpt(t).body), 8)}
    out = {s for t in after for s in shingles(fold_words(split_excerpt(t).body), 8)}
    return len(inp & out) / len(inp) if inp else 1.0


def _time(make: Callable[[], Dedupe], ex: Example, repeats: int) -> tuple[Result, float]:
    stage = make()
    out, times = None, []
    for _ in range(repeats):
        r = Result.create(ex.query, ex.chunks)
        t0 = time.perf_counter()
        out = stage(r)
        times.append((time.perf_counter() - t0) * 1000)
    assert out is not None
    return out, statistics.median(times)


def bench_multihop(repeats: int) -> None:
    examples = multihop_rag()
    n_facts = sum(len(ex.gold["facts"]) for ex in examples)
    print(f"MultiHop-RAG retrieval sample: {len(examples)} queries x 10 chunks; tokens = whole prompt, cl100k_base")
    print(f"facts = gold facts present after / before Dedupe ({n_facts} gold facts in all; the rest were never retrieved)")
    head = f"{'config':<11}{'query':<7}{'chunks':>9}{'tokens in':>11}{'tokens out':>11}{'saved':>7}{'facts':>8}{'text kept':>10}{'ms p50':>8}  drops"
    print(head)
    print("-" * len(head))
    for name, make in CONFIGS.items():
        tot_in = tot_out = kept = present = chunks_out = 0
        all_ms, all_text = [], []
        for ex in examples:
            out, ms = _time(make, ex, repeats)
            facts = ex.gold["facts"]
            before = [f for f in facts if fact_present(f, [c.text for c in ex.chunks])]
            after = [f for f in before if fact_present(f, [c.text for c in out.chunks])]
            tk = text_kept([c.text for c in ex.chunks], [c.text for c in out.chunks])
            all_text.append(tk)
            reasons: dict[str, int] = {}
            for d in out.drops:
                if d.kind == "chunk":
                    reasons[d.reason] = reasons.get(d.reason, 0) + 1
            tot_in += out.tokens_before
            tot_out += out.tokens_after
            kept += len(after)
            present += len(before)
            chunks_out += len(out.chunks)
            all_ms.append(ms)
            print(
                f"{name:<11}{ex.id:<7}{f'10->{len(out.chunks)}':>9}{out.tokens_before:>11}{out.tokens_after:>11}"
                f"{1 - out.tokens_after / out.tokens_before:>7.0%}{f'{len(after)}/{len(before)}':>8}{tk:>10.1%}{ms:>8.2f}  "
                + ", ".join(f"{k}={v}" for k, v in sorted(reasons.items()))
            )
        print(
            f"{name:<11}{'ALL':<7}{f'80->{chunks_out}':>9}{tot_in:>11}{tot_out:>11}{1 - tot_out / tot_in:>7.0%}"
            f"{f'{kept}/{present}':>8}{statistics.mean(all_text):>10.1%}{statistics.median(all_ms):>8.2f}"
            f"  (ratio {tot_in / tot_out:.2f}x; text kept = mean)"
        )
        print("-" * len(head))


def bench_hotpot(limit: int, repeats: int) -> None:
    examples = hotpotqa(limit)
    print(f"\nHotpotQA distractor: {len(examples)} questions x 10 paragraphs (ordinary chunks; Dedupe should drop ~nothing)")
    head = f"{'config':<11}{'ms p50':>8}{'ms p95':>8}{'chunks dropped':>16}"
    print(head)
    print("-" * len(head))
    p50 = {}
    for name, make in CONFIGS.items():
        per_q, dropped = [], 0
        for ex in examples:
            out, ms = _time(make, ex, repeats)
            per_q.append(ms)
            dropped += sum(1 for d in out.drops if d.kind == "chunk")
        per_q.sort()
        p50[name] = statistics.median(per_q)
        print(f"{name:<11}{p50[name]:>8.2f}{per_q[int(0.95 * (len(per_q) - 1))]:>8.2f}{dropped:>16}")
    print(f"default adds {p50['default'] - p50['exact-only']:.2f} ms p50 over exact-only (target: Dedupe < 5 ms per 10 chunks)")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5, help="timed repeats per query (median taken)")
    ap.add_argument("--hotpot", type=int, default=300, help="HotpotQA questions for the speed check")
    args = ap.parse_args(argv)
    print(f"command: {COMMAND} {' '.join(sys.argv[1:])}".rstrip())
    warm = multihop_rag(1)[0]  # imports, tokenizer, MinHash permutations
    for make in CONFIGS.values():
        make()(Result.create(warm.query, warm.chunks))
    bench_multihop(args.repeats)
    bench_hotpot(args.hotpot, args.repeats)


if __name__ == "__main__":
    main()
