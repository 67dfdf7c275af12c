"""Conversation: one chat session over a pipeline, compressed so that a prefix cache stays warm.

Serving engines (vLLM automatic prefix caching, SGLang RadixAttention, provider prompt
caches) reuse the KV of the longest prefix a request shares, byte for byte, with what was
sent before. Compression that rewrites the start of the prompt on every turn makes each
request miss from there on, so it can cost more prefill than it saves. A
:class:`Conversation` runs each turn's request through a pipeline and:

* measures the reuse: :attr:`Result.prefix_tokens` is how many leading tokens of this
  prompt the previous request of the conversation sent identically;
* with ``documents="stable"``, keeps documents that come back across turns byte-identical:
  each document is compressed for the turn that first brings it, later turns only *add*
  the sentences they need (in the document's own order), and the documents go first, in
  the system message, in order of first appearance (see :data:`ContextPosition`), so
  follow-up questions over the same documents reuse their KV.

The history folding that keeps the prefix stable is :class:`SummarizeConversation`'s
``fold_every`` (on in :func:`default_pipeline`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Literal, Sequence

from tokenslim._chunk import Chunk, Message
from tokenslim._internal.sentences import join_spans
from tokenslim._result import Result
from tokenslim.errors import ConfigError

__all__ = ["Conversation", "DocumentMode"]

DocumentMode = Literal["per_request", "stable"]


@dataclass
class _Document:
    """One document of the stable block: its text before compression and the sentence spans kept so far."""

    chunk: Chunk
    kept: set[tuple[int, int]] = field(default_factory=set)

    def add(self, spans: list[tuple[int, int]] | None) -> None:
        """Keep ``spans`` too (``None``: the whole text)."""
        self.kept |= set(spans) if spans is not None else {(0, len(self.chunk.text))}

    def text(self) -> str:
        merged: list[tuple[int, int]] = []
        for a, b in sorted(self.kept):  # a whole-text span from one turn covers sentence spans of another
            if merged and a < merged[-1][1]:
                merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
            else:
                merged.append((a, b))
        return join_spans(self.chunk.text, merged)


def _pre_compression(result: Result) -> list[tuple[Chunk, list[tuple[int, int]] | None]]:
    """Per surviving chunk: the chunk as CompressDocuments received it, and the spans of it
    that were kept (None: all). The drops are indexed once, not searched per chunk."""
    before = {
        d.chunk_id: d.item
        for d in result.drops
        if d.kind == "text" and d.reason == "compressed" and isinstance(d.item, Chunk)
    }
    out: list[tuple[Chunk, list[tuple[int, int]] | None]] = []
    for chunk in result.chunks:
        spans = chunk.metadata.get("kept_spans")
        pre = before.get(chunk.id)
        if pre is not None and isinstance(spans, list):
            out.append((pre, [(int(a), int(b)) for a, b in spans]))
        else:
            out.append((chunk, None))
    return out


class Conversation:
    """One chat session: each turn's request compressed by ``pipeline``, cache-friendly across turns.

    Args:
        pipeline: What compresses each request (default: :func:`default_pipeline`, whose
            SummarizeConversation folds the history in blocks, appending to its state).
        documents: ``"per_request"`` (default): each turn's chunks are compressed for that
            turn's question and sent last, with it (fresh retrieval every turn).
            ``"stable"``: for documents that come back across turns (follow-up questions
            over the same sources); see the module docstring.
        max_document_tokens: In ``"stable"`` mode, when the kept documents pass this many
            tokens the block is rebuilt from the current turn's documents alone (one cache
            miss; counted in :attr:`rebuilds`). The block replaces the turn's chunks after the
            pipeline ran, so this cap, not a Budget stage's, bounds the documents sent.

    Attributes:
        rebuilds: How often the stable document block was rebuilt.

    Example::

        conv = Conversation(documents="stable")
        history = []
        for question in questions:
            result = conv.run(question, retrieve(question), history=history)
            answer = llm(result.to_messages())
            print(result.prefix_tokens, "of", result.tokens_after, "tokens reusable")
            history += [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
    """

    def __init__(
        self,
        pipeline: Any = None,
        *,
        documents: DocumentMode = "per_request",
        max_document_tokens: int = 4000,
    ) -> None:
        if documents not in ("per_request", "stable"):
            raise ConfigError(f"documents must be 'per_request' or 'stable', got {documents!r}")
        if not isinstance(max_document_tokens, int) or isinstance(max_document_tokens, bool) or max_document_tokens < 1:
            raise ConfigError(f"max_document_tokens must be an int >= 1, got {max_document_tokens!r}")
        if pipeline is None:
            from tokenslim._pipeline import default_pipeline

            pipeline = default_pipeline()
        if not callable(getattr(pipeline, "run", None)):
            raise ConfigError(f"pipeline must have a run() method, got {type(pipeline).__name__}")
        self.pipeline = pipeline
        self.documents = documents
        self.max_document_tokens = max_document_tokens
        self.rebuilds = 0
        self._turns = 0
        self._docs: dict[str, _Document] = {}
        self._previous: list[int] | None = None

    def __repr__(self) -> str:
        return f"Conversation(documents={self.documents!r}, max_document_tokens={self.max_document_tokens}, turns_seen={self.turns})"

    @property
    def turns(self) -> int:
        """Requests run so far."""
        return self._turns

    def reset(self) -> None:
        """Forget the previous request and the stable documents (a new conversation)."""
        self._docs.clear()
        self._previous = None
        self._turns = 0
        self.rebuilds = 0

    def run(
        self,
        query: str,
        chunks: Iterable[Chunk | str] | None = None,
        *,
        history: Sequence[Message] | None = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> Result:
        """Compress one turn's request; set :attr:`Result.prefix_tokens` against the previous one.

        ``history`` is the whole conversation so far as the application keeps it (folding
        is stable only over a history that grows at its end). Further keyword arguments
        go to ``pipeline.run``.
        """
        result: Result = self.pipeline.run(query, chunks, history=history, system_prompt=system_prompt, **kwargs)
        if self.documents == "stable":
            self._stabilise(result)
        ids = result.tokenizer.encode(result.to_prompt())
        if self._previous is not None:
            from tokenslim._result import common_prefix

            result.prefix_tokens = common_prefix(self._previous, ids)
        self._previous = ids
        self._turns += 1
        return result

    def _stabilise(self, result: Result) -> None:
        """Replace the turn's chunks by the stable block, grown by what this turn kept."""
        found = _pre_compression(result)
        fresh: dict[str, _Document] = {}
        for pre, kept in found:
            doc = self._docs.get(pre.text) or fresh.get(pre.text)
            if doc is None:
                doc = fresh[pre.text] = _Document(pre)
            doc.add(kept)
        block = {**self._docs, **fresh}
        if sum(result.count(d.text()) for d in block.values()) > self.max_document_tokens and self._docs:
            self.rebuilds += 1
            block = {}
            for pre, kept in found:
                block.setdefault(pre.text, _Document(pre)).add(kept)
        self._docs = block
        result.chunks = [d.chunk.with_text(d.text(), stable=True) for d in block.values()]
        result.context_position = "first"
