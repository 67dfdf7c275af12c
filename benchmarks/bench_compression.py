"""Compression benchmark: token reduction vs answer retention on HotpotQA, NQ and QMSum.

For every question the pipeline runs on the given chunks (in the given order, no
retriever scores) and we measure, in cl100k_base tokens as :class:`tokenslim.Result`
counts them (whole prompt: context + question):

* ratio = sum(tokens_before) / sum(tokens_after) over the dataset;
* hotpotqa / nq: answer-in-context = share of questions whose uncompressed context
  contains a gold answer that still contain one after compression (questions whose
  context never contained it are excluded; the denominator is printed). Matching is
  :func:`tokenslim.bench.metrics.contains_answer` (SQuAD-normalized, on word
  boundaries), the same as ``tokenslim bench`` and ``benchmarks/bench_langchain.py``.
  "yes"/"no" gold answers (HotpotQA comparison questions) are not spans of the
  context and never count: they would match any "no" in the text;
* qmsum (abstractive answers): answer-term recall = share of the gold answer's
  content words found in the uncompressed context that are still in the
  compressed context, averaged over questions;
* p50 / p95 wall time of the whole ``pipeline.run`` per question.

Each row is also given for the first and the second half of the questions (in file
order), so a setting tuned on one half can be checked on the other.

A lexical baseline measured in the same run (``TrimTopK(k=3)``: keep the 3 chunks
with the best BM25 relevance) shows what plain top-k trimming gives at a similar ratio.

Usage::

    python benchmarks/bench_compression.py --dataset hotpotqa|nq|qmsum|all [--limit N] [--pipeline default|compress] [--ratio R]
        [--relevance bm25|embedding|hybrid]
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
from tokenslim.bench.metrics import contains_answer, span_answers

ROOT = Path(__file__).resolve().parents[1]


def _pipelines(kind: str, ratio: float | None, relevance: str | None) -> dict[str, Pipeline]:
    from tokenslim.stages import CompressDocuments, TrimTopK

    if kind == "default":
        from tokenslim import default_pipeline

        main = default_pipeline()
    else:
        main = Pipeline([TrimTopK(), CompressDocuments()])
    if ratio is not None:
        main.set_params(compress_documents__ratio=ratio)
        kind = f"{kind}, ratio={ratio:g}"
    if relevance is not None:
        main.set_params(compress_documents__relevance=relevance)
        kind = f"{kind}, {relevance}"
    return {f"tokenslim ({kind})": main, "baseline: TrimTopK(k=3) bm25": Pipeline([TrimTopK(k=3)])}


def _contains(text: str, answers: list[str]) -> bool:
    """A gold answer occurs in ``text`` (normalized, on word boundaries; yes/no never count)."""
    return contains_answer(text, span_answers(answers))


def _term_recall(full: str, kept: str, answers: list[str]) -> float | None:
    gold = {t for a in answers for t in terms(a)} & set(terms(full))
    if not gold:
        return None
    return len(gold & set(terms(kept))) / len(gold)


def _summary(rows: list[tuple[int, int, float | None, float]], metric: str) -> dict[str, Any]:
    """Aggregate per-question ``(tokens_before, tokens_after, score or None, seconds)`` rows."""
    before = sum(r[0] for r in rows)
    after = sum(r[1] for r in rows)
    scores = [r[2] for r in rows if r[2] is not None]
    times = sorted(r[3] for r in rows)
    return {
        "questions": len(rows),
        "tokens_before": before,
        "tokens_after": after,
        "ratio": before / max(1, after),
        "metric": metric,
        "quality": statistics.fmean(scores) if scores else 0.0,
        "denominator": len(scores),
        "p50_ms": 1000 * times[len(times) // 2] if times else 0.0,
        "p95_ms": 1000 * times[min(len(times) - 1, int(len(times) * 0.95))] if times else 0.0,
    }


def evaluate(pipe: Pipeline, examples: list[Example], metric: str, desc: str) -> dict[str, Any]:
    """Run ``pipe`` over ``examples``; return the aggregate figures, also per half of the questions."""
    rows: list[tuple[int, int, float | None, float]] = []
    pipe.run("warm-up", ["warm-up chunk."])
    for ex in tqdm(examples, desc=desc, unit="q", file=sys.stderr):
        t0 = time.perf_counter()
        result = pipe.run(ex.query, ex.chunks, ex.history)
        seconds = time.perf_counter() - t0
        full = "\n".join(c.text for c in ex.chunks)
        kept = result.context_text()
        score: float | None
        if metric == "answer_in_context":
            score = float(_contains(kept, ex.answers)) if _contains(full, ex.answers) else None
        else:
            score = _term_recall(full, kept, ex.answers)
        rows.append((result.tokens_before, result.tokens_after, score, seconds))
    half = len(rows) // 2
    return {**_summary(rows, metric), "halves": [_summary(rows[:half], metric), _summary(rows[half:], metric)]}


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
    ap.add_argument("--relevance", choices=["bm25", "embedding", "hybrid"], default=None,
                    help="override CompressDocuments(relevance=...): what MiniLM sentence relevance costs and gains")
    args = ap.parse_args(argv)
    command = "python benchmarks/bench_compression.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    names = list(_DATASETS) if args.dataset == "all" else [args.dataset]
    out_dir = ROOT / "results"
    suffix = ("" if args.ratio is None else f"_ratio{args.ratio:g}") + ("" if args.relevance is None else f"_{args.relevance}")
    out_dir.mkdir(exist_ok=True)
    for name in names:
        loader, metric = _DATASETS[name]
        examples = loader(args.limit)
        rows = {label: evaluate(p, examples, metric, f"{name}: {label}") for label, p in _pipelines(args.pipeline, args.ratio, args.relevance).items()}
        head = f"{'pipeline':<34}{'tokens before':>14}{'tokens after':>13}{'ratio':>8}{metric:>20}{'n':>6}{'p50 ms':>9}{'p95 ms':>9}"
        print(f"\n{name}: {len(examples)} questions, tokens in cl100k_base (whole prompt)")
        print(head)
        print("-" * len(head))
        for label, r in rows.items():
            first, second = r["halves"]
            parts = [(label, r), (f"  questions 1-{first['questions']}", first), (f"  questions {first['questions'] + 1}-{r['questions']}", second)]
            for row_label, part in parts:
                print(
                    f"{row_label:<34}{part['tokens_before']:>14}{part['tokens_after']:>13}{part['ratio']:>7.2f}x"
                    f"{part['quality']:>20.3f}{part['denominator']:>6}{part['p50_ms']:>9.1f}{part['p95_ms']:>9.1f}"
                )
        print(f"command: {command}")
        payload = {
            "dataset": name,
            "command": command,
            "limit": args.limit,
            "pipeline": args.pipeline,
            "ratio": args.ratio,
            "relevance": args.relevance,
            "rows": rows,
        }
        (out_dir / f"compression_{name}{suffix}.json").write_text(json.dumps(payload, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
