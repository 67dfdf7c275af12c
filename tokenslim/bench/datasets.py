"""Loaders for the public evaluation sets in ``../shared/data`` as uniform :class:`Example` s.

The data directory is found from ``$TOKENSLIM_DATA``, else ``../shared/data``
relative to the current directory or to this checkout. Nothing is downloaded.
"""

from __future__ import annotations

import functools
import gzip
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from tokenslim._chunk import Chunk, Message
from tokenslim.errors import InputError

__all__ = ["Example", "data_dir", "load", "DATASETS", "FORMATS", "as_format"]


@dataclass
class Example:
    """One evaluation item: a query, its context and the gold answers.

    Attributes:
        id: Stable id from the source set.
        query: The question.
        chunks: Context chunks in retrieval order (with ``title`` metadata where known).
        answers: Gold answer strings (any one counts).
        history: Chat turns (conversation sets only).
        gold: Extra gold fields (supporting titles, slot values, spans...).
    """

    id: str
    query: str
    chunks: list[Chunk]
    answers: list[str]
    history: list[Message] = field(default_factory=list)
    gold: dict[str, Any] = field(default_factory=dict)


def data_dir() -> Path:
    """Where the shared evaluation data lives (raises InputError if nowhere)."""
    candidates = []
    if os.environ.get("TOKENSLIM_DATA"):
        candidates.append(Path(os.environ["TOKENSLIM_DATA"]))
    candidates.append(Path.cwd() / ".." / "shared" / "data")
    candidates.append(Path(__file__).resolve().parents[3] / "shared" / "data")
    for c in candidates:
        if c.is_dir():
            return c.resolve()
    raise InputError(
        "shared evaluation data not found; set TOKENSLIM_DATA to the folder holding "
        f"hotpotqa_distractor/ etc. (looked in {[str(c) for c in candidates]})"
    )


def _jsonl_gz(path: Path) -> Iterator[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def hotpotqa(limit: int | None = None) -> list[Example]:
    """HotpotQA distractor: 10 Wikipedia paragraphs per question (2 supporting)."""
    out = []
    for row in _jsonl_gz(data_dir() / "hotpotqa_distractor" / "hotpotqa_dev_distractor.jsonl.gz"):
        answers = [s for a in row["answers_objects"] for s in a.get("spans", [])]
        chunks = [
            Chunk(text=c["paragraph_text"], id=f"p{i}", metadata={"title": c["title"]})
            for i, c in enumerate(row["contexts"])
        ]
        supporting = [c["title"] for c in row["contexts"] if c["is_supporting"]]
        out.append(Example(row["question_id"], row["question_text"], chunks, answers, gold={"supporting": supporting}))
        if limit and len(out) >= limit:
            break
    return out


def twowiki(limit: int | None = None) -> list[Example]:
    """2WikiMultihopQA dev sample: 10 Wikipedia paragraphs per question (2-4 supporting).

    ``gold["supporting"]``: the supporting titles; ``gold["facts"]``: the supporting
    sentences' texts (sentence-level supporting facts); ``gold["type"]``: the question type.
    """
    out = []
    for row in _jsonl_gz(data_dir() / "twowikimultihopqa_dev_sample" / "2wiki_dev_first100.jsonl.gz"):
        meta = row["metadata"]
        ctx = meta["context"]
        chunks = [
            Chunk(text=" ".join(s.strip() for s in sents), id=f"p{i}", metadata={"title": title})
            for i, (title, sents) in enumerate(zip(ctx["title"], ctx["content"]))
        ]
        sents_of = dict(zip(ctx["title"], ctx["content"]))
        facts = [
            sents_of[t][k].strip()
            for t, k in zip(meta["supporting_facts"]["title"], meta["supporting_facts"]["sent_id"])
            if t in sents_of and 0 <= k < len(sents_of[t])
        ]
        gold = {"supporting": list(dict.fromkeys(meta["supporting_facts"]["title"])), "facts": facts, "type": meta.get("type", "")}
        out.append(Example(row["id"], row["question"], chunks, list(row["golden_answers"]), gold=gold))
        if limit and len(out) >= limit:
            break
    return out


OPEN_TOP_K = 20
"""Passages each open-retrieval question gets (:func:`hotpotqa_open`, :func:`twowiki_open`)."""


@functools.lru_cache(maxsize=1)
def open_corpus() -> tuple[tuple[tuple[str, str], ...], Any]:
    """The pooled open-retrieval corpus and its BM25 index, built once per process.

    Every paragraph of the shared HotpotQA sample (all questions) and the 2Wiki sample,
    HotpotQA first, each in file order, deduplicated by title + whitespace-normalised text
    (the first copy is kept). The index is rank-bm25's ``BM25Okapi`` (k1=1.5, b=0.75) over
    :func:`tokenslim._internal.relevance.terms` of ``"title paragraph"``.

    Returns:
        ``(passages, bm25)``: ``passages[i] = (title, text)``, the index's doc ``i``.
    """
    from rank_bm25 import BM25Okapi

    from tokenslim._internal.relevance import terms

    seen: dict[tuple[str, str], tuple[str, str]] = {}
    for examples in (hotpotqa(), twowiki()):
        for e in examples:
            for c in e.chunks:
                title = str(c.metadata.get("title") or "")
                seen.setdefault((title, " ".join(c.text.split())), (title, c.text))
    passages = tuple(seen.values())
    return passages, BM25Okapi([terms(f"{t} {x}") or [""] for t, x in passages])


def open_retrieve(query: str, k: int = OPEN_TOP_K) -> list[Chunk]:
    """BM25 top-``k`` of :func:`open_corpus` for ``query``, best first (ties: corpus order).

    Each chunk carries the BM25 score in ``score``, the title in ``metadata["title"]``
    and the corpus position as id (``"w<i>"``): nothing of which question it came from.
    """
    from tokenslim._internal.relevance import terms

    passages, bm25 = open_corpus()
    scores = bm25.get_scores(list(dict.fromkeys(terms(query))))
    best = sorted(range(len(passages)), key=lambda i: (-scores[i], i))[:k]
    return [Chunk(text=passages[i][1], id=f"w{i}", score=float(scores[i]), metadata={"title": passages[i][0]}) for i in best]


def _open(examples: list[Example]) -> list[Example]:
    out = []
    for e in examples:
        chunks = open_retrieve(e.query)
        found = {str(c.metadata["title"]) for c in chunks}
        gold = {**e.gold, "retrieved_supporting": [t for t in e.gold.get("supporting", []) if t in found]}
        out.append(Example(e.id, e.query, chunks, e.answers, history=e.history, gold=gold))
    return out


def hotpotqa_open(limit: int | None = None) -> list[Example]:
    """HotpotQA open retrieval: each question's BM25 top-20 over the pooled corpus (:func:`open_corpus`).

    Same questions and answers as :func:`hotpotqa`; the chunks come from the whole pool
    (both shared sets), best first, with BM25 scores and titles. ``gold["retrieved_supporting"]``:
    the supporting titles that made the top 20.
    """
    return _open(hotpotqa(limit))


def twowiki_open(limit: int | None = None) -> list[Example]:
    """2WikiMultihopQA open retrieval: as :func:`hotpotqa_open`, for the questions of :func:`twowiki`."""
    return _open(twowiki(limit))


def nq(limit: int | None = None, *, passage: str = "long_answer") -> list[Example]:
    """NQ-open with its gold Wikipedia passage.

    Args:
        passage: ``"long_answer"`` (the annotated long answer, often several paragraphs)
            or ``"oracle"`` (the ~100-word gold passage).
    """
    out = []
    for i, row in enumerate(_jsonl_gz(data_dir() / "nq_open_oracle" / "nq-open-oracle.jsonl.gz")):
        gold = row.get("nq_annotated_gold") or {}
        if passage == "long_answer" and gold.get("long_answer"):
            chunks = [Chunk(text=gold["long_answer"], id="gold", metadata={"title": gold.get("title", "")})]
        else:
            chunks = [Chunk(text=c["text"], id=f"p{j}", metadata={"title": c["title"]}) for j, c in enumerate(row["ctxs"])]
        out.append(Example(f"nq{i}", row["question"], chunks, list(row["answers"])))
        if limit and len(out) >= limit:
            break
    return out


def qmsum(limit: int | None = None, *, turns_per_chunk: int = 20) -> list[Example]:
    """QMSum specific queries over meeting transcripts, chunked every ``turns_per_chunk`` turns.

    Gold: the answer text (abstractive, so scored by overlap, not containment) and
    the relevant turn spans.
    """
    out = []
    for m, row in enumerate(_jsonl_gz(data_dir() / "qmsum" / "qmsum_val.jsonl.gz")):
        turns = row["meeting_transcripts"]
        chunks = []
        for start in range(0, len(turns), turns_per_chunk):
            block = turns[start : start + turns_per_chunk]
            text = "\n".join(f"{t['speaker']}: {t['content']}" for t in block)
            chunks.append(Chunk(text=text, id=f"m{m}t{start}", metadata={"turns": [start, start + len(block) - 1]}))
        for q, item in enumerate(row["specific_query_list"]):
            spans = [[int(a), int(b)] for a, b in item.get("relevant_text_span", [])]
            out.append(Example(f"qmsum{m}q{q}", item["query"], chunks, [item["answer"]], gold={"spans": spans}))
            if limit and len(out) >= limit:
                return out
    return out


def sgd(limit: int | None = None) -> list[Example]:
    """SGD dialogues: all turns but the last user turn become history; gold = final slot values."""
    path = data_dir() / "sgd_dialogues" / "dev_dialogues_001.json.gz"
    with gzip.open(path, "rt", encoding="utf-8") as f:
        dialogues = json.load(f)
    out = []
    for d in dialogues:
        turns = d["turns"]
        history = [
            {"role": "user" if t["speaker"] == "USER" else "assistant", "content": t["utterance"]} for t in turns[:-1]
        ]
        slots: dict[str, list[str]] = {}
        intents: list[str] = []
        for t in turns:
            for fr in t.get("frames", []):
                st = fr.get("state")
                if st:
                    for k, v in st.get("slot_values", {}).items():
                        slots[f"{fr['service']}.{k}"] = v
                    if st.get("active_intent") and st["active_intent"] != "NONE":
                        intents.append(st["active_intent"])
        out.append(
            Example(
                d["dialogue_id"],
                turns[-1]["utterance"],
                [],
                [],
                history=history,
                gold={"slot_values": slots, "intents": sorted(set(intents))},
            )
        )
        if limit and len(out) >= limit:
            break
    return out


def multihop_rag(limit: int | None = None) -> list[Example]:
    """MultiHop-RAG: real top-10 overlapping retriever chunks with scores."""
    rows = json.loads((data_dir() / "multihop_rag_retrieval_sample" / "llm-embedder_retrieval_test.json").read_text())
    out = []
    for i, row in enumerate(rows):
        chunks = [Chunk(text=c["text"], score=c["score"], id=f"r{j}") for j, c in enumerate(row["retrieval_list"])]
        out.append(
            Example(f"mhr{i}", row["query"], chunks, [row["answer"]], gold={"facts": [g["fact"] for g in row["gold_list"]]})
        )
        if limit and len(out) >= limit:
            break
    return out


DATASETS = {"hotpotqa": hotpotqa, "twowiki": twowiki, "hotpotqa_open": hotpotqa_open, "twowiki_open": twowiki_open, "nq": nq, "qmsum": qmsum, "sgd": sgd, "multihop_rag": multihop_rag}


def _html_page(title: str, text: str) -> str:
    """A minimal HTML page holding ``text`` as paragraphs, titled ``title`` (escaped)."""
    import html

    paras = "".join(f"<p>{html.escape(p)}</p>" for p in text.split("\n") if p.strip())
    return f"<html><head><title>{html.escape(title)}</title></head><body><article>{paras}</article></body></html>"


def _reshape(chunk: Chunk, fmt: str) -> Chunk:
    meta = {k: v for k, v in chunk.metadata.items() if k != "title"}
    title = str(chunk.metadata.get("title") or "")
    if fmt == "metadata_title" or not title and fmt != "html":
        return chunk
    if fmt == "title_in_text":
        return Chunk(text=f"{title}: {chunk.text}", id=chunk.id, score=chunk.score, metadata=meta)
    if fmt == "no_title":
        return Chunk(text=chunk.text, id=chunk.id, score=chunk.score, metadata=meta)
    if fmt == "document_title":
        return Chunk(text=chunk.text, id=chunk.id, score=chunk.score, metadata={**meta, "document_title": title})
    return Chunk(text=_html_page(title, chunk.text), id=chunk.id, score=chunk.score, metadata=meta)


FORMATS: dict[str, str] = {
    "metadata_title": 'Chunk(paragraph, metadata={"title": t}) (what the loaders build)',
    "title_in_text": 'Chunk(f"{t}: {paragraph}"), no metadata',
    "no_title": "paragraph only, no title anywhere",
    "document_title": "title under LlamaIndex's document_title key",
    "html": "a raw HTML page per chunk: <title>t</title> and the paragraph in <p>",
}
"""The input shapes real loaders and retrievers produce, for :func:`as_format`."""


def as_format(examples: list[Example], fmt: str) -> list[Example]:
    """The same examples with every chunk given in another input shape (see :data:`FORMATS`).

    The loaders put a chunk's title in ``metadata["title"]``; real loaders put it
    elsewhere or nowhere. Chunks without a title are left as they are, except in
    ``"html"`` where every chunk becomes a page.

    Raises:
        InputError: ``fmt`` is not one of :data:`FORMATS`.
    """
    if fmt not in FORMATS:
        raise InputError(f"unknown input format {fmt!r}: use one of {list(FORMATS)}")
    return [
        Example(e.id, e.query, [_reshape(c, fmt) for c in e.chunks], e.answers, history=e.history, gold=e.gold)
        for e in examples
    ]


def load(name: str, limit: int | None = None) -> list[Example]:
    """Load a dataset by name (one of :data:`DATASETS`) or from a JSONL file path.

    A JSONL file has one object per line: ``{"query", "chunks": [str | {"text", "score"}], "answers": [str]}``.
    """
    if name in DATASETS:
        return DATASETS[name](limit)
    path = Path(name)
    if not path.is_file():
        if path.suffix in (".jsonl", ".json", ".gz") or len(path.parts) > 1:
            what = "is a folder, not a .jsonl file" if path.is_dir() else "does not exist"
            raise InputError(f"dataset file {name!r} {what} (current folder: {Path.cwd()})")
        raise InputError(f"unknown dataset {name!r}: use one of {sorted(DATASETS)} or a path to a .jsonl file")
    from tokenslim._chunk import coerce_chunks

    out = []
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        for i, line in enumerate(f):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                out.append(
                    Example(
                        str(row.get("id", i)),
                        row["query"],
                        coerce_chunks(row.get("chunks", [])),
                        list(row.get("answers", [])),
                        history=list(row.get("history", [])),
                    )
                )
            except (KeyError, ValueError, TypeError) as exc:
                raise InputError(f"{path}:{i + 1}: expected {{'query', 'chunks', 'answers'}}: {exc}") from exc
            if limit and len(out) >= limit:
                break
    return out
