"""Compression benchmark: answer retention per input format, against BM25 peers at the SAME output tokens.

For every question the pipeline runs on the given chunks (in the given order, no
retriever scores) and we measure, in cl100k_base tokens as :class:`tokenslim.Result`
counts them (whole prompt: context + question):

* ratio = tokens of the plain prompt (the chunks' text without titles or markup, as
  ``tokenslim.bench.datasets`` builds it) / tokens after, summed over the dataset.
  The same numerator for every input format, so equal ratios are equal output tokens;
* hotpotqa / nq / multihop_rag: answer kept = share of questions whose uncompressed
  context contains a gold answer that still contain one (SQuAD-normalized, on word
  boundaries; yes/no answers never count), with a Wilson 95% interval;
* qmsum (abstractive answers): answer-term recall = share of the gold answer's content
  words found in the uncompressed context still in the compressed one, averaged over
  questions, with a BCa bootstrap 95% interval;
* the same figure for the first and the second half of the questions (file order),
  so a setting tuned on one half is checked on the other;
* p50 / p95 wall time of ``pipeline.run`` per question (run under
  ``flock /tmp/tokenslim-bench.lock`` when the timings matter).

Input formats (``tokenslim.bench.datasets.FORMATS``): title in ``metadata["title"]``,
``"Title: paragraph"`` text, paragraph only, title under ``document_title``, and a raw
HTML page per chunk. Datasets without titles (qmsum, multihop_rag) run in their own
format only.

Peers, per question, filled up to tokenslim's own output tokens for that question
(never more), so every comparison is at equal budget:

* ``BM25 sentences``: the best BM25 sentences (rank-bm25, same sentence splitter),
  in document order; ``BM25 lines`` the same over lines (transcripts: speaker turns);
* ``BM25 chunks``: whole chunks, best BM25 first, while they fit;
* ``TrimTopK(k=3)`` (BM25 top-3 chunks) at its own budget, and tokenslim capped at
  that budget per question (``max_tokens`` lowered until its prompt is no larger),
  with the BM25 peers at that capped output.

Usage::

    python benchmarks/bench_compression.py --dataset hotpotqa|nq|qmsum|multihop_rag|all
        [--formats all|metadata_title,no_title,...] [--limit N] [--pipeline default|compress]
        [--ratio R] [--relevance bm25|embedding|hybrid]
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any, Callable

from tqdm import tqdm

from tokenslim import Chunk, Pipeline, Result
from tokenslim._internal.relevance import bm25_scores, terms
from tokenslim._internal.sentences import split_spans
from tokenslim._result import CONTEXT_HEADER
from tokenslim.bench import datasets as D
from tokenslim.bench.datasets import Example
from tokenslim.bench.metrics import CI, bca_ci, contains_answer, span_answers, wilson_ci

ROOT = Path(__file__).resolve().parents[1]

_DATASETS: dict[str, tuple[Callable[..., list[Example]], str, bool]] = {
    # name: (loader, metric, has titles -> run every input format)
    "hotpotqa": (D.hotpotqa, "answer_kept", True),
    "nq": (D.nq, "answer_kept", True),
    "qmsum": (D.qmsum, "term_recall", False),
    "multihop_rag": (D.multihop_rag, "answer_kept", False),
}


def _pipeline(kind: str, ratio: float | None, relevance: str | None) -> Pipeline:
    from tokenslim.stages import CompressDocuments, TrimTopK

    if kind == "default":
        from tokenslim import default_pipeline

        pipe = default_pipeline()
    else:
        pipe = Pipeline([TrimTopK(), CompressDocuments()])
    if ratio is not None:
        pipe.set_params(compress_documents__ratio=ratio)
    if relevance is not None:
        pipe.set_params(compress_documents__relevance=relevance)
    return pipe


def _score(metric: str, full: str, kept: str, answers: list[str]) -> float | None:
    """Answer kept (1/0, ``None`` when the full context lacks every answer) or term recall."""
    if metric == "answer_kept":
        golds = span_answers(answers)
        return float(contains_answer(kept, golds)) if contains_answer(full, golds) else None
    gold = {t for a in answers for t in terms(a)} & set(terms(full))
    if not gold:
        return None
    return len(gold & set(terms(kept))) / len(gold)


def _interval(metric: str, scores: list[float | None]) -> CI:
    return wilson_ci(scores) if metric == "answer_kept" else bca_ci(scores)


def _fill(ex_query: str, chunks: list[Chunk], target: int, units: str, tokenizer: Any) -> Result:
    """BM25 peer: the best sentences (or whole chunks) of ``chunks`` whose prompt fits ``target`` tokens.

    Greedy by BM25 score, skipping what does not fit; kept sentences stay in document
    order, joined per chunk. The exact prompt is recounted at the end and the weakest
    pick removed until it fits, so the peer never gets more tokens than ``target``.
    """
    pieces: list[tuple[int, int, str]] = []  # (chunk, position, text)
    for i, c in enumerate(chunks):
        if units == "chunks":
            pieces.append((i, 0, c.text))
        elif units == "lines":
            pieces.extend((i, j, line) for j, line in enumerate(c.text.split("\n")) if line.strip())
        else:
            pieces.extend((i, j, c.text[a:b]) for j, (a, b) in enumerate(split_spans(c.text)))
    scores = bm25_scores(terms(ex_query), [p[2] for p in pieces])
    order = sorted(range(len(pieces)), key=lambda k: (-scores[k], k))
    empty = Result.create(ex_query, [], tokenizer=tokenizer)
    used = empty.prompt_tokens() + empty.count(CONTEXT_HEADER) + 1
    chosen: list[int] = []
    open_chunks: set[int] = set()
    for k in order:
        cost = empty.count(pieces[k][2]) + (0 if pieces[k][0] in open_chunks else 4)
        if used + cost <= target:
            chosen.append(k)
            open_chunks.add(pieces[k][0])
            used += cost

    def build(picks: list[int]) -> Result:
        per: dict[int, list[tuple[int, str]]] = {}
        for k in picks:
            per.setdefault(pieces[k][0], []).append((pieces[k][1], pieces[k][2]))
        sep = "\n" if units == "lines" else " "
        kept = [Chunk(sep.join(t for _, t in sorted(per[i])), id=chunks[i].id) for i in sorted(per)]
        return Result.create(ex_query, kept, tokenizer=tokenizer)

    result = build(chosen)
    while chosen and result.prompt_tokens() > target:
        chosen.pop()  # the weakest pick
        result = build(chosen)
    return result


class _Rows:
    """Per-question rows of one system on one input format."""

    def __init__(self) -> None:
        self.before: list[int] = []
        self.plain: list[int] = []
        self.after: list[int] = []
        self.scores: list[float | None] = []
        self.seconds: list[float] = []

    def add(self, before: int, plain: int, after: int, score: float | None, seconds: float | None) -> None:
        self.before.append(before)
        self.plain.append(plain)
        self.after.append(after)
        self.scores.append(score)
        if seconds is not None:
            self.seconds.append(seconds)

    def summary(self, metric: str) -> dict[str, Any]:
        half = len(self.scores) // 2

        def part(a: int, b: int) -> dict[str, Any]:
            ci = _interval(metric, self.scores[a:b])
            return {
                "questions": b - a,
                "tokens_before": sum(self.before[a:b]),
                "tokens_plain": sum(self.plain[a:b]),
                "tokens_after": sum(self.after[a:b]),
                "ratio": sum(self.plain[a:b]) / max(1, sum(self.after[a:b])),
                "quality": ci.as_dict(),
                "kept": int(sum(s for s in self.scores[a:b] if s is not None)) if metric == "answer_kept" else None,
            }

        times = sorted(self.seconds)
        out = part(0, len(self.scores))
        out["p50_ms"] = 1000 * times[len(times) // 2] if times else None
        out["p95_ms"] = 1000 * times[min(len(times) - 1, int(len(times) * 0.95))] if times else None
        out["halves"] = [part(0, half), part(half, len(self.scores))]
        return out


def evaluate(pipe: Pipeline, examples: list[Example], plain: list[int], metric: str, desc: str, *, capped: list[tuple[int, int]] | None = None) -> dict[str, dict[str, Any]]:
    """Run tokenslim over ``examples`` and the BM25 peers at its per-question output tokens.

    Args:
        plain: Per question, prompt tokens of the plain (untitled, unmarked) input: the ratio's numerator.
        capped: Per question, another system's ``(prompt tokens, chunk tokens)``: tokenslim then runs
            with ``ratio=1`` and ``max_tokens`` set so its prompt is no larger (latency is then
            not comparable and not reported); ``None``: as configured.
    """
    tok = pipe.get_tokenizer()
    peers = [("BM25 sentences", "sentences"), ("BM25 chunks", "chunks")]
    if any("\n" in c.text for ex in examples[:5] for c in ex.chunks):
        peers.insert(1, ("BM25 lines", "lines"))  # transcripts: one speaker turn a line
    rows = {"tokenslim": _Rows(), **{label: _Rows() for label, _ in peers}}
    pipe.run("warm-up", ["warm-up chunk."])
    saved = pipe.get_params()
    try:
        for q, ex in enumerate(tqdm(examples, desc=desc, unit="q", file=sys.stderr)):
            t0 = time.perf_counter()
            result = pipe.run(ex.query, ex.chunks, ex.history)
            seconds = time.perf_counter() - t0
            if capped is not None:
                # the other system's prompt tokens: cap the kept chunk tokens, lowering the cap
                # by any excess (chunk markers differ), until tokenslim's prompt is no larger
                # (plus one more token per try: joined sentences can count a token more than apart)
                limit, cap = capped[q]
                for attempt in range(12):
                    pipe.set_params(compress_documents__ratio=1.0, compress_documents__max_tokens=max(1, cap))
                    result = pipe.run(ex.query, ex.chunks, ex.history)
                    if result.tokens_after <= limit:
                        break
                    cap -= result.tokens_after - limit + attempt
                else:
                    raise RuntimeError(f"{ex.id}: tokenslim's prompt did not fit {limit} tokens in 12 tries")
            full = _plain_text(ex)
            target = result.tokens_after
            rows["tokenslim"].add(result.tokens_before, plain[q], target, _score(metric, full, result.context_text(), ex.answers), seconds)
            for label, units in peers:
                peer = _fill(ex.query, _text_chunks(ex), target, units, tok)
                rows[label].add(peer.tokens_before, plain[q], peer.tokens_after, _score(metric, full, peer.context_text(), ex.answers), None)
    finally:
        pipe.set_params(**{k: saved[k] for k in ("compress_documents__ratio", "compress_documents__max_tokens")})
    return {label: r.summary(metric) for label, r in rows.items()}


def _text_chunks(ex: Example) -> list[Chunk]:
    """The chunks a text-only peer sees: HTML pages reduced to their text (as StripHTML would give it)."""
    from tokenslim.html import extract, looks_like_html

    return [Chunk(extract(c.text).text, id=c.id) if looks_like_html(c.text) else c for c in ex.chunks]


def _plain_text(ex: Example) -> str:
    return "\n".join(c.text for c in _text_chunks(ex))


def top3(examples: list[Example], plain: list[int], metric: str) -> tuple[dict[str, Any], list[tuple[int, int]]]:
    """BM25 top-3 chunks (``TrimTopK(k=3)``): its summary, per-question prompt and chunk tokens."""
    from tokenslim.stages import TrimTopK

    pipe = Pipeline([TrimTopK(k=3)])
    rows = _Rows()
    budgets = []
    for q, ex in enumerate(examples):
        t0 = time.perf_counter()
        r = pipe.run(ex.query, ex.chunks, ex.history)
        rows.add(r.tokens_before, plain[q], r.tokens_after, _score(metric, _plain_text(ex), r.context_text(), ex.answers), time.perf_counter() - t0)
        budgets.append((r.tokens_after, r.chunk_tokens))
    return rows.summary(metric), budgets


def _fmt_quality(part: dict[str, Any], metric: str) -> str:
    q = part["quality"]
    if q["n"] == 0:
        return "-"
    head = f"{q['mean'] * 100:.1f}% [{q['low'] * 100:.1f}, {q['high'] * 100:.1f}]"
    return head + (f" ({part['kept']}/{q['n']})" if metric == "answer_kept" else f" (n={q['n']})")


def print_table(name: str, n: int, metric: str, table: dict[str, dict[str, dict[str, Any]]]) -> None:
    """One line per (input format, system): tokens, ratio, quality with interval, halves, latency."""
    label = "answer kept [Wilson 95%]" if metric == "answer_kept" else "term recall [BCa 95%]"
    print(f"\n{name}: {n} questions, cl100k_base tokens of the whole prompt; ratio = plain prompt / after")
    head = f"{'input format':<22}{'system':<28}{'tokens after':>13}{'ratio':>8}  {label:<36}{'1st half':>10}{'2nd half':>10}{'p50 ms':>9}"
    print(head)
    print("-" * len(head))
    for fmt, systems in table.items():
        for system, s in systems.items():
            halves = [f"{h['quality']['mean'] * 100:.1f}%" if h["quality"]["n"] else "-" for h in s["halves"]]
            p50 = f"{s['p50_ms']:.1f}" if s.get("p50_ms") is not None else ""
            print(f"{fmt:<22}{system:<28}{s['tokens_after']:>13}{s['ratio']:>7.2f}x  {_fmt_quality(s, metric):<36}{halves[0]:>10}{halves[1]:>10}{p50:>9}")


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run the benchmark(s), print tables, write results/compression_<dataset>.json."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", choices=[*_DATASETS, "all"], default="hotpotqa")
    ap.add_argument("--formats", default="all", help=f"comma-separated subset of {list(D.FORMATS)} (titled datasets)")
    ap.add_argument("--limit", type=int, default=None, help="first N questions only (default: the whole folder)")
    ap.add_argument("--pipeline", choices=["default", "compress"], default="default",
                    help="default_pipeline(), or just [TrimTopK, CompressDocuments]")
    ap.add_argument("--ratio", type=float, default=None,
                    help="override CompressDocuments(ratio=...) to trace the ratio / retention trade-off")
    ap.add_argument("--relevance", choices=["bm25", "embedding", "hybrid"], default=None,
                    help="override CompressDocuments(relevance=...): what MiniLM sentence relevance costs and gains")
    args = ap.parse_args(argv)
    command = "python benchmarks/bench_compression.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    formats = list(D.FORMATS) if args.formats == "all" else args.formats.split(",")
    names = list(_DATASETS) if args.dataset == "all" else [args.dataset]
    out_dir = ROOT / "results"
    suffix = ("" if args.ratio is None else f"_ratio{args.ratio:g}") + ("" if args.relevance is None else f"_{args.relevance}")
    out_dir.mkdir(exist_ok=True)
    pipe = _pipeline(args.pipeline, args.ratio, args.relevance)
    for name in names:
        loader, metric, titled = _DATASETS[name]
        examples = loader(args.limit)
        tok = pipe.get_tokenizer()
        plain = [Result.create(e.query, D.as_format([e], "no_title")[0].chunks, e.history, tokenizer=tok).tokens_before for e in examples]
        table: dict[str, dict[str, dict[str, Any]]] = {}
        for fmt in formats if titled else ["as_given"]:
            shaped = D.as_format(examples, fmt) if titled else examples
            table[fmt] = evaluate(pipe, shaped, plain, metric, f"{name} {fmt}")
        # BM25 top-3 at its own budget, and tokenslim + BM25 sentences at that budget (given format)
        first = formats[0] if titled else "as_given"
        shaped = D.as_format(examples, first) if titled else examples
        summary, budgets = top3(shaped, plain, metric)
        at3 = evaluate(pipe, shaped, plain, metric, f"{name} at top-3 budget", capped=budgets)
        at3["tokenslim"]["p50_ms"] = at3["tokenslim"]["p95_ms"] = None
        table[f"{first} @top-3"] = {"BM25 top-3 chunks": summary, **{k: v for k, v in at3.items() if k != "BM25 chunks"}}
        print_table(name, len(examples), metric, table)
        print(f"command: {command}")
        payload = {"dataset": name, "command": command, "limit": args.limit, "pipeline": args.pipeline,
                   "ratio": args.ratio, "relevance": args.relevance, "metric": metric, "formats": table}
        (out_dir / f"compression_{name}{suffix}.json").write_text(json.dumps(payload, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
