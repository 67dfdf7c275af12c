"""Compression benchmark: token reduction vs answer retention on HotpotQA, NQ and QMSum.

For every question the pipeline runs on the given chunks (in the given order, no
retriever scores) and we measure, in cl100k_base tokens as :class:`tokenslim.Result`
counts them (whole prompt: context + question):

* ratio = sum(tokens_before) / sum(tokens_after) over the dataset;
* hotpotqa / nq: answer-in-context = share of questions whose uncompressed context
  contains a gold answer (case-insensitive substring) that still contain one after
  compression (questions whose context never contained it, e.g. yes/no answers,
  are excluded; the denominator is printed);
* qmsum (abstractive answers): answer-term recall = share of the gold answer's
  content words found in the uncompressed context that are still in the
  compressed context, averaged over questions;
* p50 / p95 wall time of the whole ``pipeline.run`` per question.

A lexical baseline measured in the same run (``TrimTopK(k=3)``: keep the 3 chunks
with the best BM25 relevance) shows what plain top-k trimming gives at a similar ratio.

Usage::

    python benchmarks/bench_compression.py --dataset hotpotqa|nq|qmsum|all [--limit N] [--pipeline default|compress] [--ratio R]
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

from tqdm import tqdm

from tokenslim import Pipeline
from tokenslim._internal.relevance import terms
from tokenslim.bench import datasets as D
from tokenslim.bench.datasets import Example

ROOT = Path(__file__).resolve().parents[1]


def _pipelines(kind: str, ratio: float | None) -> dict[str, Pipeline]:
    from tokenslim.stages import CompressDocuments, TrimTopK

    if kind == "default":
        from tokenslim import default_pipeline

        main = default_pipeline()
    else:
        main = Pipeline([TrimTopK(), CompressDocuments()])
    if ratio is not None:
        main.set_params(compress_documents__ratio=ratio)
        kind = f"{kind}, ratio={ratio:g}"
    return {f"tokenslim ({kind})": main, "baseline: TrimTopK(k=3) bm25": Pipeline([TrimTopK(k=3)])}


def _contains(text: str, answers: list[str]) -> bool:
    low = text.lower()
    return any(a.strip().lower() in low for a in answers if a.strip())


def _term_recall(full: str, kept: str, answers: list[str]) -> float | None:
    gold = {t for a in answers for t in terms(a)} & set(terms(full))
    if not gold:
        return None
    return len(gold & set(terms(kept))) / len(gold)


def evaluate(pipe: Pipeline, examples: list[Example], metric: str, desc: str) -> dict[str, Any]:
    """Run ``pipe`` over ``examples``; return the aggregate figures."""
    before = after = 0
    times: list[float] = []
    hits = denom = 0
    recalls: list[float] = []
    pipe.run("warm-up", ["warm-up chunk."])
    for ex in tqdm(examples, desc=desc, unit="q", file=sys.stderr):
        t0 = time.perf_counter()
        result = pipe.run(ex.query, ex.chunks, ex.history)
        times.append(time.perf_counter() - t0)
        before += result.tokens_before
        after += result.tokens_after
        full = "\n".join(c.text for c in ex.chunks)
        kept = result.context_text()
        if metric == "answer_in_context":
            if _contains(full, ex.answers):
                denom += 1
                hits += _contains(kept, ex.answers)
        else:
            r = _term_recall(full, kept, ex.answers)
            if r is not None:
                recalls.append(r)
                denom += 1
    times.sort()
    quality = hits / denom if metric == "answer_in_context" and denom else statistics.fmean(recalls) if recalls else 0.0
    return {
        "questions": len(examples),
        "tokens_before": before,
        "tokens_after": after,
        "ratio": before / max(1, after),
        "metric": metric,
        "quality": quality,
        "denominator": denom,
        "p50_ms": 1000 * times[len(times) // 2],
        "p95_ms": 1000 * times[min(len(times) - 1, int(len(times) * 0.95))],
    }


_DATASETS: dict[str, tuple[Callable[..., list[Example]], str]] = {
    "hotpotqa": (D.hotpotqa, "answer_in_context"),
    "nq": (D.nq, "answer_in_context"),
    "qmsum": (D.qmsum, "answer_term_recall"),
}


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run the benchmark(s), print tables, write results/compression_<dataset>.json."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", choices=[*_DATASETS, "all"], default="hotpotqa")
    ap.add_argument("--limit", type=int, default=None, help="first N questions only (default: the whole folder)")
    ap.add_argument("--pipeline", choices=["default", "compress"], default="default",
                    help="default_pipeline(), or just [TrimTopK, CompressDocuments]")
    ap.add_argument("--ratio", type=float, default=None,
                    help="override CompressDocuments(ratio=...) to trace the ratio / retention trade-off")
    args = ap.parse_args(argv)
    command = "python benchmarks/bench_compression.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    names = list(_DATASETS) if args.dataset == "all" else [args.dataset]
    out_dir = ROOT / "results"
    suffix = "" if args.ratio is None else f"_ratio{args.ratio:g}"
    out_dir.mkdir(exist_ok=True)
    for name in names:
        loader, metric = _DATASETS[name]
        examples = loader(args.limit)
        rows = {label: evaluate(p, examples, metric, f"{name}: {label}") for label, p in _pipelines(args.pipeline, args.ratio).items()}
        head = f"{'pipeline':<34}{'tokens before':>14}{'tokens after':>13}{'ratio':>8}{metric:>20}{'n':>6}{'p50 ms':>9}{'p95 ms':>9}"
        print(f"\n{name}: {len(examples)} questions, tokens in cl100k_base (whole prompt)")
        print(head)
        print("-" * len(head))
        for label, r in rows.items():
            print(
                f"{label:<34}{r['tokens_before']:>14}{r['tokens_after']:>13}{r['ratio']:>7.2f}x"
                f"{r['quality']:>20.3f}{r['denominator']:>6}{r['p50_ms']:>9.1f}{r['p95_ms']:>9.1f}"
            )
        print(f"command: {command}")
        payload = {
            "dataset": name,
            "command": command,
            "limit": args.limit,
            "pipeline": args.pipeline,
            "ratio": args.ratio,
            "rows": rows,
        }
        (out_dir / f"compression_{name}{suffix}.json").write_text(json.dumps(payload, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
