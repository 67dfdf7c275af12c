"""Run a pipeline over a framework's documents and map what survives back to them.

The LangChain, LlamaIndex and Haystack adapters (``adapters/``) share this one mapping
instead of each building chunks with made-up ids and parsing the ids back. It imports no
framework: the adapter says how to read a document's text, score, metadata and id.

    >>> import tokenslim
    >>> from tokenslim.integrations.documents import run_documents
    >>> docs = [{"id": "a", "text": "Paris is the capital of France."}, {"id": "b", "text": "Cats purr."},
    ...         {"id": "c", "text": "Paris is the capital of France."}]
    >>> kept = run_documents(tokenslim.Pipeline([tokenslim.stages.Dedupe()]), "capital of France?", docs,
    ...                      text=lambda d: d["text"], doc_id=lambda d: d["id"])
    >>> [(k.document["id"], k.stats["kept_tokens"]) for k in kept]
    [('a', 7), ('b', 5)]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Generic, Iterable, Mapping, Sequence, TypeVar

from tokenslim._chunk import Chunk
from tokenslim._pipeline import Pipeline
from tokenslim._result import Result

__all__ = ["Kept", "run_documents", "chunk_ids"]

D = TypeVar("D")

#: Chunk metadata keys that describe the chunk's place in one request, not the document.
_NOT_STATS = frozenset({"position"})


@dataclass(frozen=True)
class Kept(Generic[D]):
    """One input document that survived the pipeline.

    Attributes:
        document: The input document itself (unchanged).
        chunk: What the pipeline kept of it (its ``text`` is the new content).
        stats: The ``metadata["tokenslim"]`` entry adapters attach:
            ``{"original_tokens": ..., "kept_tokens": ...}`` plus any metadata a stage
            added to the chunk (``rank``, ``relevance``, ``merged_ids``...).
    """

    document: D
    chunk: Chunk
    stats: dict[str, Any]


def chunk_ids(ids: Iterable[Any]) -> list[str]:
    """One unique chunk id per document: the document's own id (as ``str``) where it has one
    not used by an earlier document, else ``"d<position>"`` (made unique if a document
    already uses that name).

        >>> chunk_ids(["d1", None, "x", "x"])
        ['d1', 'd1_', 'x', 'd3']
    """
    raw = list(ids)
    out: list[str] = []
    used: set[str] = set()
    for i, own in enumerate(raw):
        cid = str(own) if own is not None and str(own) != "" else ""
        if not cid or cid in used:
            cid = f"d{i}"
        while cid in used:
            cid += "_"
        used.add(cid)
        out.append(cid)
    return out


def run_documents(
    pipeline: Pipeline,
    query: str,
    documents: Sequence[D],
    *,
    text: Callable[[D], str],
    score: Callable[[D], float | None] = lambda d: None,
    metadata: Callable[[D], Mapping[str, Any]] = lambda d: {},
    doc_id: Callable[[D], Any] = lambda d: None,
    disable: Iterable[str] = (),
    on_result: Callable[[Result], None] | None = None,
) -> list[Kept[D]]:
    """Run ``pipeline`` over ``documents`` for ``query``; return the survivors in the
    pipeline's output order, each with its input document.

    Each document becomes a :class:`~tokenslim.Chunk` whose id is the document's own id
    (:func:`chunk_ids`), so every :class:`~tokenslim.Drop` in the result names the
    document it came from, and whose metadata is a copy of the document's.

    Args:
        pipeline: The tokenslim pipeline.
        query: The user question.
        documents: The framework's documents, best first.
        text: A document's text (what the pipeline compresses).
        score: A document's retriever score (``None``: unknown).
        metadata: A document's metadata (copied; titles are read from it).
        doc_id: A document's own id (``None``: it has none).
        disable: Step names to skip for this call.
        on_result: Called with the full :class:`~tokenslim.Result` (every drop with its reason).

    Raises:
        tokenslim.errors.InputError: a document's text is not a string.
        tokenslim.errors.StageError: a stage failed and the pipeline fails closed.
    """
    docs = list(documents)
    texts = [text(d) for d in docs]
    ids = chunk_ids(doc_id(d) for d in docs)
    chunks = [
        Chunk(text=t, score=score(d), id=cid, metadata=dict(metadata(d))) for d, t, cid in zip(docs, texts, ids)
    ]
    result = pipeline.run(query, chunks, disable=list(disable))
    if on_result is not None:
        on_result(result)
    index = {cid: i for i, cid in enumerate(ids)}
    out: list[Kept[D]] = []
    for chunk in result.chunks:
        i = index[str(chunk.id)]
        original = chunks[i].metadata
        extra = {k: v for k, v in chunk.metadata.items() if k not in original and k not in _NOT_STATS}
        stats = {"original_tokens": result.count(texts[i]), "kept_tokens": result.count(chunk.text), **extra}
        out.append(Kept(docs[i], chunk, stats))
    return out
