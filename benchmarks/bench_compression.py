"""Compression benchmark: answer retention per input format, against BM25 peers at the SAME output tokens.

For every question the pipeline runs on the given chunks (in the given order, no
retriever scores) and we measure, in cl100k_base tokens as :class:`tokenslim.Result`
counts them (whole prompt: context + question):

* ratio = tokens of the plain prompt (the chunks' text without titles or markup, as
  ``tokenslim.bench.datasets`` builds it) / tokens after, summed over the dataset.
  The same numerator for every input format, so equal ratios are equal output tokens;
* hotpotqa / twowiki / hotpotqa_open / twowiki_open / nq / multihop_rag: answer kept = share of questions whose uncompressed
  context contains a gold answer that still contain one (SQuAD-normalized, on word
  boundaries; yes/no answers never count), with a Wilson 95% interval;
* qmsum (abstractive answers): answer-term recall = share of the gold answer's content
  words found in the uncompressed context still in the compressed one, averaged over
  questions, with a BCa bootstrap 95% interval;
* the same figure for the first and the second half of the questions (file order),
  so a setting tuned on one half is checked on the other;
* p50 / p95 wall time of ``pipeline.run`` per question (run under
  ``flock /tmp/tokenslim-bench.lock`` when the timings matter).

Datasets: the shared samples of HotpotQA (distractor, 10 passages) and 2WikiMultihopQA
(``twowiki``, 10 passages), NQ, QMSum, MultiHop-RAG; and open retrieval
(``hotpotqa_open``, ``twowiki_open``): the same questions, each given the BM25 top-20 of a
pooled corpus of every passage of both samples (deduplicated by title + text), best first,
with the BM25 score in ``Chunk.score`` and the title in ``metadata["title"]``
(``tokenslim.bench.datasets.open_corpus``). There answer kept counts the questions whose
top 20 holds an answer.

Input formats (``tokenslim.bench.datasets.FORMATS``): title in ``metadata["title"]``,
``"Title: paragraph"`` text, paragraph only, title under ``document_title``, and a raw
HTML page per chunk. Datasets without titles (qmsum, multihop_rag) run in their own
format only.

Peers, per question, filled up to tokenslim's own output tokens for that question
(never more), so every comparison is at equal budget:

* ``BM25 sentences``: the best BM25 sentences (rank-bm25, same sentence splitter),
  in document order; ``BM25 lines`` the same over lines (transcripts: speaker turns);
* ``BM25 chunks``: whole chunks, best BM25 first, while they fit;
* ``retriever top-k`` (chunks that all carry ``Chunk.score``: open retrieval, MultiHop-RAG):
  whole chunks in the retriever's order, while they fit;
* ``MiniLM sentences`` (``--pareto`` only): the sentences closest to the query by
  all-MiniLM-L6-v2 cosine, filled like the BM25 sentences;
* ``TrimTopK(k=3)`` (BM25 top-3 chunks) at its own budget, and tokenslim capped at
  that budget per question (``max_tokens`` lowered until its prompt is no larger),
  with the BM25 peers at that capped output.

Pareto mode (``--pareto``): the pipeline at each ``compress_documents__recall`` of
``--recalls`` (default 0.5, 0.7, 0.8, 0.9, 0.95, 0.975, 0.99) on hotpotqa, twowiki,
hotpotqa_open and twowiki_open (or ``--dataset``), titles in metadata, with BM25
sentences, whole chunks (the retriever's order where chunks have scores, else BM25) and
MiniLM sentences at its output tokens per question: ``results/pareto_<dataset>.json`` and
one plot, ``results/pareto.png`` (answer kept vs ratio, Wilson 95% bars; ``--plot-only``
redraws it from the JSON files).

A ``--limit N`` run writes ``..._limitN.json`` / ``pareto_limitN.png``, never the full run's files.

Usage::

    python benchmarks/bench_compression.py --dataset hotpotqa|twowiki|hotpotqa_open|twowiki_open|nq|qmsum|multihop_rag|all
        [--formats all|metadata_title,no_title,...] [--limit N] [--pipeline default|compress]
        [--ratio R] [--relevance bm25|embedding|hybrid]
    python benchmarks/bench_compression.py --pareto [--dataset NAME] [--recalls 0.5,0.9,...] [--limit N] [--plot-only]
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

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
    "twowiki": (D.twowiki, "answer_kept", True),
    "hotpotqa_open": (D.hotpotqa_open, "answer_kept", True),
    "twowiki_open": (D.twowiki_open, "answer_kept", True),
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


def _pieces(chunks: list[Chunk], units: str) -> list[tuple[int, int, str]]:
    """``(chunk, position, text)`` of every sentence, line or whole chunk, in document order."""
    pieces: list[tuple[int, int, str]] = []
    for i, c in enumerate(chunks):
        if units == "chunks":
            pieces.append((i, 0, c.text))
        elif units == "lines":
            pieces.extend((i, j, line) for j, line in enumerate(c.text.split("\n")) if line.strip())
        else:
            pieces.extend((i, j, c.text[a:b]) for j, (a, b) in enumerate(split_spans(c.text)))
    return pieces


def _fill(
    ex_query: str,
    chunks: list[Chunk],
    target: int,
    units: str,
    tokenizer: Any,
    scores: Sequence[float] | None = None,
) -> Result:
    """Peer: the best sentences (or whole chunks) of ``chunks`` whose prompt fits ``target`` tokens.

    Greedy by score (BM25 of the piece against the query unless ``scores`` gives one per
    :func:`_pieces` entry: the retriever's chunk scores, MiniLM cosines), skipping what
    does not fit; kept sentences stay in document order, joined per chunk. The exact
    prompt is recounted at the end and the weakest pick removed until it fits, so the
    peer never gets more tokens than ``target``.
    """
    pieces = _pieces(chunks, units)
    score = [float(x) for x in (bm25_scores(terms(ex_query), [p[2] for p in pieces]) if scores is None else scores)]
    order = sorted(range(len(pieces)), key=lambda k: (-score[k], k))
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
    peers = _peers(examples)
    rows = {"tokenslim": _Rows(), **{label: _Rows() for label, _, _ in peers}}
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
            for label, units, scorer in peers:
                peer = _peer(ex, units, scorer, target, tok)
                rows[label].add(peer.tokens_before, plain[q], peer.tokens_after, _score(metric, full, peer.context_text(), ex.answers), None)
    finally:
        pipe.set_params(**{k: saved[k] for k in ("compress_documents__ratio", "compress_documents__max_tokens")})
    return {label: r.summary(metric) for label, r in rows.items()}


def _peers(examples: list[Example], *, minilm: bool = False) -> list[tuple[str, str, str]]:
    """``(label, units, scorer)`` of the peers run at tokenslim's output tokens.

    ``scorer``: ``"bm25"`` (query BM25 over the pieces), ``"retriever"`` (``Chunk.score``:
    the retriever's own top-k, given only when every chunk has a score) or ``"minilm"``
    (all-MiniLM-L6-v2 cosine to the query, ``minilm=True`` only: it costs an encode).
    """
    peers = [("BM25 sentences", "sentences", "bm25"), ("BM25 chunks", "chunks", "bm25")]
    if any("\n" in c.text for ex in examples[:5] for c in ex.chunks):
        peers.insert(1, ("BM25 lines", "lines", "bm25"))  # transcripts: one speaker turn a line
    if examples and all(c.score is not None for ex in examples for c in ex.chunks):
        peers.append(("retriever top-k", "chunks", "retriever"))
    if minilm:
        peers.append(("MiniLM sentences", "sentences", "minilm"))
    return peers


def _peer(ex: Example, units: str, scorer: str, target: int, tok: Any, cache: Any = None) -> Result:
    """One peer's prompt for ``ex`` at ``target`` tokens (see :func:`_peers`; ``cache``: MiniLM rows)."""
    chunks = _text_chunks(ex)
    scores: Sequence[float] | None = None
    if scorer == "retriever":
        scores = [float(c.score if c.score is not None else 0.0) for c in chunks]
    elif scorer == "minilm":
        from tokenslim._internal.relevance import embedding_scores

        scores = embedding_scores(ex.query, [p[2] for p in _pieces(chunks, units)], cache)
    return _fill(ex.query, chunks, target, units, tok, scores)


def _text_chunks(ex: Example) -> list[Chunk]:
    """The chunks a text-only peer sees: HTML pages reduced to their text (as StripHTML would give it)."""
    from tokenslim.html import extract, looks_like_html

    return [Chunk(extract(c.text).text, id=c.id, score=c.score) if looks_like_html(c.text) else c for c in ex.chunks]


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


PARETO_DATASETS = ["hotpotqa", "twowiki", "hotpotqa_open", "twowiki_open"]
"""The datasets of ``--pareto`` (and the panels of its plot) when ``--dataset`` is not given."""

RECALLS = (0.5, 0.7, 0.8, 0.9, 0.95, 0.975, 0.99)
"""``CompressDocuments(recall=...)`` settings of ``--pareto``."""


def pareto(pipe: Pipeline, name: str, examples: list[Example], plain: list[int], metric: str, recalls: Sequence[float],
           cache: Any = None) -> list[dict[str, Any]]:
    """tokenslim at each ``compress_documents__recall`` and its peers at the same output tokens.

    Peers per question, filled to tokenslim's prompt tokens at that point: BM25 sentences,
    whole chunks best-first (the retriever's scores when the chunks carry them, else BM25)
    and MiniLM sentences (all-MiniLM-L6-v2 cosine; every query and sentence is encoded once,
    before the timed runs, into ``cache``: an :class:`~tokenslim._internal.embeddings.Embeddings`
    that may be shared across datasets, whose passages overlap).

    Returns:
        One ``{"recall", "systems": {label: summary}}`` per setting (summaries as in the tables).
    """
    from tokenslim._internal.embeddings import Embeddings

    tok = pipe.get_tokenizer()
    peers = [p for p in _peers(examples, minilm=True) if p[1] != "lines"]
    if any(p[2] == "retriever" for p in peers):
        peers = [p for p in peers if p[0] != "BM25 chunks"]  # the retriever's own order is the chunk peer
    cache = cache if cache is not None else Embeddings()
    texts = list(dict.fromkeys(t for ex in examples for t in [ex.query, *(p[2] for p in _pieces(_text_chunks(ex), "sentences"))]))
    for i in tqdm(range(0, len(texts), 1024), desc=f"{name} MiniLM encode ({len(texts)} texts)", unit="batch", file=sys.stderr):
        cache.add(texts[i : i + 1024])  # encodes only the texts not cached yet
    saved = pipe.get_params()["compress_documents__recall"]
    pipe.run("warm-up", ["warm-up chunk."])
    points = []
    try:
        for recall in recalls:
            pipe.set_params(compress_documents__recall=recall)
            rows = {"tokenslim": _Rows(), **{label: _Rows() for label, _, _ in peers}}
            for q, ex in enumerate(tqdm(examples, desc=f"{name} recall={recall:g}", unit="q", file=sys.stderr)):
                t0 = time.perf_counter()
                result = pipe.run(ex.query, ex.chunks, ex.history)
                seconds = time.perf_counter() - t0
                full = _plain_text(ex)
                target = result.tokens_after
                rows["tokenslim"].add(result.tokens_before, plain[q], target, _score(metric, full, result.context_text(), ex.answers), seconds)
                for label, units, scorer in peers:
                    peer = _peer(ex, units, scorer, target, tok, cache)
                    rows[label].add(peer.tokens_before, plain[q], peer.tokens_after, _score(metric, full, peer.context_text(), ex.answers), None)
            points.append({"recall": recall, "systems": {label: r.summary(metric) for label, r in rows.items()}})
    finally:
        pipe.set_params(compress_documents__recall=saved)
    return points


_STYLE = {  # label: (colour, marker)
    "tokenslim": ("#d62728", "o"),
    "BM25 sentences": ("#1f77b4", "s"),
    "MiniLM sentences": ("#2ca02c", "^"),
    "BM25 chunks": ("#7f7f7f", "D"),
    "retriever top-k": ("#9467bd", "D"),
}

_PANEL = {
    "hotpotqa": "HotpotQA distractor (10 passages)",
    "twowiki": "2WikiMultihopQA distractor (10 passages)",
    "hotpotqa_open": "HotpotQA open (BM25 top-20 of the pool)",
    "twowiki_open": "2WikiMultihopQA open (BM25 top-20 of the pool)",
}


_SHOWN = {"BM25 chunks": "BM25 top-k chunks (no retriever scores)", "retriever top-k": "retriever's own top-k chunks"}


def plot_pareto(payloads: list[dict[str, Any]], path: Path) -> None:
    """One panel per dataset: answer kept % (Wilson 95% bars) against ratio, one line per system.

    tokenslim's points are labelled with their recall setting (settings that give the
    same point share one label); one legend for the figure, under the panels.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = min(2, len(payloads))
    rows = (len(payloads) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6.6 * cols, 4.4 * rows + 0.9), squeeze=False)
    handles: dict[str, Any] = {}
    order = ["tokenslim", "BM25 sentences", "MiniLM sentences", "retriever top-k", "BM25 chunks"]
    for ax, pay in zip(axes.flat, payloads):
        systems = list(pay["points"][0]["systems"]) if pay["points"] else []
        for label in [*[x for x in systems if x != "tokenslim"], "tokenslim"]:  # tokenslim drawn last, on top
            ours = label == "tokenslim"
            colour, marker = _STYLE.get(label, (None, "x"))
            xs, ys, lo, hi, recalls = [], [], [], [], []
            for pt in pay["points"]:
                s = pt["systems"][label]
                q = s["quality"]
                if not q["n"]:
                    continue
                xs.append(s["ratio"])
                ys.append(100 * q["mean"])
                lo.append(100 * (q["mean"] - q["low"]))
                hi.append(100 * (q["high"] - q["mean"]))
                recalls.append(pt["recall"])
            bars = ax.errorbar(xs, ys, yerr=[lo, hi], color=colour, marker=marker, markersize=6 if ours else 4.5,
                               linewidth=2.4 if ours else 1.3, elinewidth=1.6 if ours else 0.9,
                               capsize=4 if ours else 2.5, zorder=4 if ours else 2)
            if not ours:
                for part in [*bars.lines[1], *bars.lines[2]]:
                    part.set_alpha(0.45)
            handles.setdefault(_SHOWN.get(label, label), bars)
            if ours:  # recall labels, one per distinct point
                groups: list[tuple[float, float, list[float]]] = []  # (x, top of the bar, recalls)
                near = 0.04 * (max(xs) - min(xs) or 1.0)  # 4% of the x range: labels would overlap
                for x, y, r in zip(xs, [y + h for y, h in zip(ys, hi)], recalls):
                    if groups and abs(groups[-1][0] - x) < near and abs(groups[-1][1] - y) < 3.0:
                        groups[-1][2].append(r)
                    else:
                        groups.append((x, y, [r]))
                for x, y, rs in groups:
                    text = f"{rs[0]:g}" if len(rs) == 1 else f"{rs[0]:g}-{rs[-1]:g}"
                    ax.annotate(text, (x, y), textcoords="offset points", xytext=(0, 4), ha="center",
                                fontsize=8, color=colour, fontweight="bold", zorder=5)
        answerable = pay["points"][0]["systems"]["tokenslim"]["quality"]["n"] if pay["points"] else 0
        ax.set_title(f"{_PANEL.get(pay['dataset'], pay['dataset'])}\n"
                     f"{pay['questions']} questions, {answerable} with the answer in the input", fontsize=10)
        ax.set_xlabel("ratio: prompt tokens before / after  (more compression \u2192)", fontsize=9)
        ax.set_ylabel("answer kept (%)" if pay["metric"] == "answer_kept" else "answer-term recall (%)", fontsize=9)
        ax.set_ylim(top=106)
        ax.grid(True, alpha=0.3)
    for ax in list(axes.flat)[len(payloads):]:
        ax.set_visible(False)
    fig.suptitle("Answer kept vs compression: tokenslim at CompressDocuments(recall=...) (red labels), "
                 "peers at the same output tokens per question; bars: Wilson 95%", fontsize=11)
    shown = sorted(handles, key=lambda h: [_SHOWN.get(o, o) for o in order].index(h) if h in [_SHOWN.get(o, o) for o in order] else 99)
    fig.legend([handles[h] for h in shown], shown, loc="lower center", ncol=len(handles), fontsize=9, frameon=False)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)


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


def print_pareto(name: str, n: int, metric: str, points: list[dict[str, Any]]) -> None:
    """One line per (recall setting, system): tokens after, ratio, quality with interval, halves, p50."""
    label = "answer kept [Wilson 95%]" if metric == "answer_kept" else "term recall [BCa 95%]"
    print(f"\n{name} Pareto: {n} questions; ratio = plain prompt / after; peers at tokenslim's tokens per question")
    head = f"{'recall':<8}{'system':<22}{'tokens after':>13}{'ratio':>8}  {label:<36}{'1st half':>10}{'2nd half':>10}{'p50 ms':>9}"
    print(head)
    print("-" * len(head))
    for pt in points:
        for system, s in pt["systems"].items():
            halves = [f"{h['quality']['mean'] * 100:.1f}%" if h["quality"]["n"] else "-" for h in s["halves"]]
            p50 = f"{s['p50_ms']:.1f}" if s.get("p50_ms") is not None else ""
            print(f"{pt['recall']:<8g}{system:<22}{s['tokens_after']:>13}{s['ratio']:>7.2f}x  {_fmt_quality(s, metric):<36}{halves[0]:>10}{halves[1]:>10}{p50:>9}")


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run the benchmark(s), print tables, write results/compression_<dataset>.json."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", choices=[*_DATASETS, "all"], default=None,
                    help="default: hotpotqa; with --pareto: " + ",".join(PARETO_DATASETS))
    ap.add_argument("--formats", default="all", help=f"comma-separated subset of {list(D.FORMATS)} (titled datasets)")
    ap.add_argument("--limit", type=int, default=None, help="first N questions only (default: the whole folder)")
    ap.add_argument("--pipeline", choices=["default", "compress"], default="default",
                    help="default_pipeline(), or just [TrimTopK, CompressDocuments]")
    ap.add_argument("--ratio", type=float, default=None,
                    help="override CompressDocuments(ratio=...) to trace the ratio / retention trade-off")
    ap.add_argument("--relevance", choices=["bm25", "embedding", "hybrid"], default=None,
                    help="override CompressDocuments(relevance=...): what MiniLM sentence relevance costs and gains")
    ap.add_argument("--pareto", action="store_true",
                    help="answer kept vs ratio at several recall settings, peers at the same tokens: "
                         "results/pareto_<dataset>.json and results/pareto.png (metadata_title format unless --formats names one)")
    ap.add_argument("--recalls", default=",".join(f"{r:g}" for r in RECALLS),
                    help="--pareto: comma-separated compress_documents__recall settings")
    ap.add_argument("--plot-only", action="store_true",
                    help="--pareto: redraw results/pareto.png from the results/pareto_<dataset>.json already there")
    args = ap.parse_args(argv)
    command = "python benchmarks/bench_compression.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    formats = list(D.FORMATS) if args.formats == "all" else args.formats.split(",")
    out_dir = ROOT / "results"
    # a --limit run never overwrites the full run's files
    limit = "" if args.limit is None else f"_limit{args.limit}"
    suffix = ("" if args.ratio is None else f"_ratio{args.ratio:g}") + ("" if args.relevance is None else f"_{args.relevance}") + limit
    out_dir.mkdir(exist_ok=True)
    if args.pareto:
        if args.ratio is not None:
            ap.error("--pareto varies compress_documents__recall; --ratio would fix the budget instead")
        if args.formats != "all" and len(formats) != 1:
            ap.error("--pareto runs one input format: give --formats one name")
        names = PARETO_DATASETS if args.dataset in (None, "all") else [args.dataset]
        fmt = "metadata_title" if args.formats == "all" else formats[0]
        recalls = [float(r) for r in args.recalls.split(",") if r.strip()]
        pipe = _pipeline(args.pipeline, None, args.relevance)
        from tokenslim._internal.embeddings import Embeddings

        cache = Embeddings()  # MiniLM rows, shared: the open sets' passages are those of the distractor sets
        for name in [] if args.plot_only else names:
            loader, metric, titled = _DATASETS[name]
            examples = loader(args.limit)
            tok = pipe.get_tokenizer()
            plain = [Result.create(e.query, D.as_format([e], "no_title")[0].chunks, e.history, tokenizer=tok).tokens_before for e in examples]
            shaped = D.as_format(examples, fmt) if titled else examples
            points = pareto(pipe, name, shaped, plain, metric, recalls, cache)
            print_pareto(name, len(examples), metric, points)
            print(f"command: {command}")
            payload = {"dataset": name, "command": command, "limit": args.limit, "pipeline": args.pipeline,
                       "relevance": args.relevance, "format": fmt if titled else "as_given", "metric": metric,
                       "questions": len(examples), "points": points}
            (out_dir / f"pareto_{name}{suffix}.json").write_text(json.dumps(payload, indent=2))
        shown = [n for n in dict.fromkeys([*PARETO_DATASETS, *names]) if (out_dir / f"pareto_{n}{suffix}.json").is_file()]
        if not shown:
            print(f"no results/pareto_<dataset>{suffix}.json to plot", file=sys.stderr)
            return 1
        png = out_dir / f"pareto{suffix}.png"
        plot_pareto([json.loads((out_dir / f"pareto_{n}{suffix}.json").read_text()) for n in shown], png)
        print(f"plot: {png.relative_to(ROOT)} ({', '.join(shown)})")
        return 0
    names = list(_DATASETS) if args.dataset == "all" else [args.dataset or "hotpotqa"]
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
