"""Result (the object that flows through a pipeline), Drop and StageReport."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Literal, Sequence

from tokenslim._chunk import PARTS_KEY, Chunk, Message, api_content, coerce_chunks, coerce_history
from tokenslim._internal.embeddings import EmbeddingSource, Embeddings
from tokenslim.errors import InputError
from tokenslim.tokenizers import Tokenizer, get_tokenizer

__all__ = ["Result", "Drop", "StageReport", "DropKind", "ContextPosition"]

ContextPosition = Literal["last", "first"]
"""Where :meth:`Result.to_messages` puts the context: ``"last"``, in the final user message
before the question (the default: retrieved context is volatile); ``"first"``, in the system
message before the history (for documents that stay the same across a conversation, so a
prefix cache reuses them; see :class:`tokenslim.Conversation`)."""

DropKind = Literal["chunk", "sentence", "turn", "text"]
"""What a :class:`Drop` holds: a whole chunk, one sentence of a chunk, a history
turn, or ``"text"``: the original of a chunk whose text a stage shortened."""

CONTEXT_HEADER = "Context:"
QUESTION_PREFIX = "Question: "


def chunk_piece(number: int, text: str) -> str:
    """How the prompt shows the ``number``-th chunk (from 1): ``[1] text``."""
    return f"[{number}] {text}"


def message_piece(role: str, content: str) -> str:
    """How the prompt shows a history message: ``role: content``."""
    return f"{role}: {content}"


@dataclass(frozen=True)
class Drop:
    """One thing a stage removed or shortened, with the original kept for recovery.

    Attributes:
        stage: Step name of the stage that removed it.
        kind: ``"chunk"``, ``"sentence"``, ``"turn"`` or ``"text"`` (see :data:`DropKind`).
        item: The removed object itself: a :class:`Chunk`, a message dict, or a sentence string.
        reason: Snake_case reason code (``"near_duplicate"``, ``"below_min_score"``...).
        detail: Human-readable detail (``"of c3, jaccard 0.91"``).
        chunk_id: Id of the chunk the item belongs to, when it belongs to one.
        tokens: Tokens the removal saved, in the result's tokenizer.
    """

    stage: str
    kind: DropKind
    item: Any
    reason: str
    detail: str = ""
    chunk_id: str | None = None
    tokens: int = 0


@dataclass
class StageReport:
    """What one stage did: sizes before and after, time taken, what it dropped."""

    name: str
    tokenizer: str
    tokens_in: int
    tokens_out: int
    chunks_in: int
    chunks_out: int
    turns_in: int
    turns_out: int
    seconds: float
    drops: list[Drop] = field(default_factory=list)
    error: str | None = None

    @property
    def tokens_saved(self) -> int:
        return self.tokens_in - self.tokens_out

    def as_dict(self) -> dict[str, Any]:
        """A JSON-friendly summary (drops counted by reason)."""
        reasons: dict[str, int] = {}
        for d in self.drops:
            reasons[d.reason] = reasons.get(d.reason, 0) + 1
        return {
            "stage": self.name,
            "tokenizer": self.tokenizer,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "chunks_in": self.chunks_in,
            "chunks_out": self.chunks_out,
            "turns_in": self.turns_in,
            "turns_out": self.turns_out,
            "ms": round(self.seconds * 1000, 3),
            "drops": reasons,
            "error": self.error,
        }


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two token-id sequences."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class Result:
    """The state of one request as it flows through the stages.

    A stage reads and replaces ``chunks`` / ``history`` and records every removal
    with :meth:`drop` or :meth:`shorten`, so nothing disappears silently.
    One Result belongs to one ``run``; stages never share it across requests.

    Attributes:
        query: The user question.
        chunks: Surviving chunks, in prompt order.
        history: Surviving chat turns (OpenAI-style dicts), oldest first.
        system_prompt: The system prompt, or ``None``.
        tokenizer: The :class:`~tokenslim.tokenizers.Tokenizer` all figures are counted in.
        drops: Every removal, in order.
        report: One :class:`StageReport` per stage run by a pipeline.
        tokens_before: Prompt tokens of the input, before any stage.
        context_position: ``"last"`` (default) or ``"first"``, see :data:`ContextPosition`.
        prefix_tokens: Leading tokens of this prompt that the previous request of the same
            conversation sent identically (what a prefix cache can reuse); set by
            :class:`tokenslim.Conversation`, ``None`` outside one or on its first request.
            :meth:`shared_prefix` computes it against any earlier prompt.
        embeddings: Where stages get text embeddings (``embeddings.rows(texts)``): a cache
            for this request, or shared by every request of one :meth:`Pipeline.run_batch`,
            so a text is embedded once (and a batch in one call).
    """

    def __init__(
        self,
        query: str,
        chunks: list[Chunk],
        history: list[Message],
        system_prompt: str | None,
        tokenizer: Tokenizer,
        embeddings: EmbeddingSource | None = None,
    ) -> None:
        self.query = query
        self.chunks = chunks
        self.history = history
        self.system_prompt = system_prompt
        self.tokenizer = tokenizer
        self.drops: list[Drop] = []
        self.report: list[StageReport] = []
        self.current_stage: str | None = None
        self.embeddings: EmbeddingSource = embeddings if embeddings is not None else Embeddings()
        self._counts: dict[str, int] = {}
        self._titles: dict[tuple[Any, ...], str] = {}
        self.context_position: ContextPosition = "last"
        self.prefix_tokens: int | None = None
        self.tokens_before = self.prompt_tokens()

    @classmethod
    def create(
        cls,
        query: str,
        chunks: Iterable[Chunk | str] | None = None,
        history: Sequence[Message] | None = None,
        system_prompt: str | None = None,
        *,
        tokenizer: Any = None,
        embeddings: EmbeddingSource | None = None,
    ) -> "Result":
        """Validate raw input and build a Result (what ``Pipeline.run`` does first).

        Raises:
            InputError: query, chunks, history or system prompt are malformed.
        """
        if query is None:
            query = ""
        if not isinstance(query, str):
            raise InputError(f"query must be str, got {type(query).__name__}: {query!r:.80}")
        if system_prompt is not None and not isinstance(system_prompt, str):
            raise InputError(f"system_prompt must be str or None, got {type(system_prompt).__name__}")
        tok = tokenizer if isinstance(tokenizer, Tokenizer) and hasattr(tokenizer, "count") else get_tokenizer(tokenizer)
        return cls(query, coerce_chunks(chunks), coerce_history(history), system_prompt, tok, embeddings)

    # -- token accounting ---------------------------------------------------------
    def count(self, text: str) -> int:
        """Tokens in ``text`` (memoised for this request)."""
        n = self._counts.get(text)
        if n is None:
            n = self.tokenizer.count(text)
            self._counts[text] = n
        return n

    def title(self, chunk: Chunk, title_keys: Sequence[str] | None = None) -> str:
        """The chunk's title (:func:`tokenslim._internal.titles.chunk_title`), memoised for this request.

        TrimTopK and CompressDocuments both need every chunk's title; the memo is keyed by the
        chunk's text and the values it reads (``title_keys`` and a nested ``meta``), so a stage
        that changes either gets a fresh answer.
        """
        from tokenslim._internal.titles import TITLE_KEYS, chunk_title

        keys = tuple(TITLE_KEYS if title_keys is None else title_keys)
        meta = chunk.metadata
        nested = meta.get("meta")
        key = (chunk.text, keys, tuple(repr(meta.get(k)) for k in keys), repr(nested) if nested is not None else None)
        found = self._titles.get(key)
        if found is None:
            found = self._titles[key] = chunk_title(chunk.text, meta, keys)
        return found

    def prompt_pieces(self) -> list[str]:
        """The prompt as the pieces that :meth:`to_prompt` joins with newlines."""
        pieces: list[str] = []
        if self.system_prompt:
            pieces.append(self.system_prompt)
        context = [CONTEXT_HEADER, *(chunk_piece(i, c.text) for i, c in enumerate(self.chunks, 1))] if self.chunks else []
        if self.context_position == "first":
            pieces.extend(context)
        for m in self.history:
            pieces.append(message_piece(m["role"], m["content"]))
        if self.context_position != "first":
            pieces.extend(context)
        pieces.append(QUESTION_PREFIX + self.query)
        return pieces

    def prompt_tokens(self) -> int:
        """Tokens of the whole prompt (system + history + chunks + query), counted per piece."""
        pieces = self.prompt_pieces()
        return sum(self.count(p) for p in pieces) + len(pieces) - 1

    @property
    def tokens_after(self) -> int:
        """Prompt tokens now."""
        return self.prompt_tokens()

    @property
    def chunk_tokens(self) -> int:
        """Tokens of the surviving chunk texts alone."""
        return sum(self.count(c.text) for c in self.chunks)

    # -- recording removals --------------------------------------------------------
    def drop(
        self,
        item: Any,
        *,
        reason: str,
        kind: DropKind = "chunk",
        detail: str = "",
        chunk_id: str | None = None,
    ) -> Drop:
        """Record that ``item`` was removed (the caller removes it from ``chunks``/``history``)."""
        if isinstance(item, Chunk):
            text, chunk_id = item.text, chunk_id or item.id
        elif isinstance(item, dict):
            text = str(item.get("content", ""))
        else:
            text = str(item)
        d = Drop(
            stage=self.current_stage or "?",
            kind=kind,
            item=item,
            reason=reason,
            detail=detail,
            chunk_id=chunk_id,
            tokens=self.count(text),
        )
        self.drops.append(d)
        return d

    def shorten(self, chunk: Chunk, new_text: str, tokens: int | None = None, /, *, reason: str, detail: str = "", **metadata: Any) -> Chunk:
        """Record that ``chunk``'s text was shortened; return the new chunk (original kept in the Drop).

        ``tokens``: what the shortening saved, when the caller has counted it already (else the
        two texts are counted here). ``metadata`` is set on the new chunk."""
        new = chunk.with_text(new_text, **metadata)
        d = Drop(
            stage=self.current_stage or "?",
            kind="text",
            item=chunk,
            reason=reason,
            detail=detail,
            chunk_id=chunk.id,
            tokens=self.count(chunk.text) - self.count(new_text) if tokens is None else tokens,
        )
        self.drops.append(d)
        return new

    def original(self, chunk_id: str) -> Chunk | None:
        """The chunk with this id as it entered the pipeline (before any shortening)."""
        for d in self.drops:
            if d.chunk_id == chunk_id and isinstance(d.item, Chunk) and d.kind in ("text", "chunk"):
                return d.item
        for c in self.chunks:
            if c.id == chunk_id:
                return c
        return None

    def copy(self) -> "Result":
        """A copy whose lists can be changed without touching this one (items are shared)."""
        new = object.__new__(Result)
        new.__dict__.update(self.__dict__)
        new.chunks = list(self.chunks)
        new.history = [dict(m) for m in self.history]
        new.drops = list(self.drops)
        new.report = list(self.report)
        new._counts = self._counts
        return new

    # -- output ---------------------------------------------------------------------
    def context_text(self) -> str:
        """The surviving chunks as one numbered context block."""
        return "\n".join(f"[{i}] {c.text}" for i, c in enumerate(self.chunks, 1))

    def to_messages(self, *, instruction: str | None = None) -> list[Message]:
        """OpenAI-style chat messages: system prompt, history, then context + question as the user turn
        (with ``context_position="first"`` the context ends the system message instead)."""
        msgs: list[Message] = []
        first = bool(self.chunks) and self.context_position == "first"
        system = [self.system_prompt] if self.system_prompt else []
        if first:
            system.append(f"{CONTEXT_HEADER}\n{self.context_text()}")
        if system:
            msgs.append({"role": "system", "content": "\n\n".join(system)})
        # tokenslim's own keys (the state summary's marker, kept content parts) are not sent to the API;
        # a message with images or other non-text parts is sent with its parts
        for m in self.history:
            out = {k: v for k, v in m.items() if k not in ("tokenslim", PARTS_KEY)}
            if PARTS_KEY in m:
                out["content"] = api_content(m)
            msgs.append(out)
        parts = []
        if self.chunks and not first:
            parts.append(f"{CONTEXT_HEADER}\n{self.context_text()}")
        if instruction:
            parts.append(instruction)
        parts.append(QUESTION_PREFIX + self.query)
        msgs.append({"role": "user", "content": "\n\n".join(parts)})
        return msgs

    def shared_prefix(self, previous: "Result | str") -> int:
        """Leading tokens of :meth:`to_prompt` identical to ``previous``'s (a Result or a prompt string).

        This is what a prefix cache (vLLM automatic prefix caching, SGLang, provider prompt
        caching) can reuse when ``previous`` was the last request sent; engines reuse whole
        blocks only, so they hit up to one block less. Token ids are compared in this
        result's tokenizer.
        """
        before = previous.to_prompt() if isinstance(previous, Result) else previous
        if not isinstance(before, str):
            raise InputError(f"previous must be a Result or a prompt str, got {type(before).__name__}")
        return common_prefix(self.tokenizer.encode(before), self.tokenizer.encode(self.to_prompt()))

    def to_prompt(self) -> str:
        """The whole prompt as one string (what :meth:`prompt_tokens` counts)."""
        return "\n".join(self.prompt_pieces())

    def to_dict(self, *, text: bool = False) -> dict[str, Any]:
        """A JSON-safe record of this request for logs: token counts, the per-stage report,
        surviving chunk ids and every drop (stage, kind, reason, detail, chunk id, tokens).

        Args:
            text: Also include the query, system prompt, surviving chunk texts, history
                and each dropped item's text. Off by default, so request logs carry no
                user content unless asked to.
        """
        out: dict[str, Any] = {
            "tokenizer": self.tokenizer.name,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "chunks": [{"id": c.id, "score": c.score, "tokens": self.count(c.text)} for c in self.chunks],
            "turns": len(self.history),
            "prefix_tokens": self.prefix_tokens,
            "stages": [r.as_dict() for r in self.report],
            "drops": [
                {"stage": d.stage, "kind": d.kind, "reason": d.reason, "detail": d.detail,
                 "chunk_id": d.chunk_id, "tokens": d.tokens}
                for d in self.drops
            ],
            "errors": {r.name: r.error for r in self.report if r.error},
        }
        if text:
            out["query"] = self.query
            out["system_prompt"] = self.system_prompt
            out["history"] = [dict(m) for m in self.history]
            for entry, c in zip(out["chunks"], self.chunks):
                entry["text"] = c.text
            for entry, d in zip(out["drops"], self.drops):
                item = d.item
                entry["text"] = item.text if isinstance(item, Chunk) else item.get("content") if isinstance(item, dict) else str(item)
        return out

    def dropped(self, *, reason: str | None = None, stage: str | None = None) -> list[Drop]:
        """Drops filtered by reason and/or stage."""
        return [d for d in self.drops if (reason is None or d.reason == reason) and (stage is None or d.stage == stage)]

    def report_table(self) -> str:
        """The per-stage report as a fixed-width text table."""
        head = f"{'stage':<24}{'tokens in':>10}{'tokens out':>11}{'saved':>8}{'chunks':>10}{'turns':>8}{'ms':>9}  drops"
        lines = [f"tokens counted with {self.tokenizer.name}", head, "-" * len(head)]
        for r in self.report:
            reasons = ", ".join(f"{k}={v}" for k, v in r.as_dict()["drops"].items())
            if r.error:
                reasons = f"ERROR {r.error}"
            lines.append(
                f"{r.name:<24}{r.tokens_in:>10}{r.tokens_out:>11}{r.tokens_saved:>8}"
                f"{f'{r.chunks_in}->{r.chunks_out}':>10}{f'{r.turns_in}->{r.turns_out}':>8}"
                f"{r.seconds * 1000:>9.2f}  {reasons}"
            )
        ratio = self.tokens_before / max(1, self.tokens_after)
        lines.append(f"total: {self.tokens_before} -> {self.tokens_after} tokens ({ratio:.2f}x)")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"Result(chunks={len(self.chunks)}, turns={len(self.history)}, "
            f"tokens={self.tokens_before}->{self.tokens_after} [{self.tokenizer.name}], drops={len(self.drops)})"
        )
