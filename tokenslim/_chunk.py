"""Chunk (one retrieved passage) and coercion of user input into chunks and messages."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Sequence

from tokenslim.errors import InputError

__all__ = ["Chunk", "Message", "coerce_chunks", "coerce_history", "api_content", "PARTS_KEY"]

Message = dict[str, Any]
"""An OpenAI-style chat message: ``{"role": ..., "content": ...}`` plus optional tool fields."""

_ROLES = frozenset({"system", "user", "assistant", "tool", "function", "developer"})
_TEXT_PARTS = frozenset({"text", "input_text", "output_text"})  # Chat Completions and Responses APIs

PARTS_KEY = "tokenslim_parts"
"""Message key holding the original content parts of a message that has non-text parts
(images, audio, files, tool parts); :meth:`Result.to_messages` sends them on unchanged."""


@dataclass(frozen=True)
class Chunk:
    """One retrieved passage.

    Args:
        text: The passage text (plain text or raw HTML).
        score: The retriever's relevance score; higher is better. ``None`` when unknown.
        id: A stable identifier. Filled with ``"c<position>"`` when missing, so every
            drop in a report can name the chunk it refers to.
        metadata: Free-form metadata (source, title, url, offsets...). Carried through
            every stage; merged when duplicates are folded together.
    """

    text: str
    score: float | None = None
    id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def with_text(self, text: str, **metadata: Any) -> "Chunk":
        """Return a copy with new text and extra metadata (the original is unchanged)."""
        meta = dict(self.metadata)
        meta.update(metadata)
        return replace(self, text=text, metadata=meta)

    def __repr__(self) -> str:
        preview = self.text[:40] + ("…" if len(self.text) > 40 else "")
        return f"Chunk(id={self.id!r}, score={self.score!r}, text={preview!r})"


def _coerce_score(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise InputError(f"{where}: score must be a number or None, got {value!r}") from None
    try:
        number = float(value)
    except OverflowError:
        raise InputError(f"{where}: score {value!r:.40} is too large for a float; pass a finite number or None") from None
    if math.isnan(number):
        return None  # documented: NaN means "no score"
    if math.isinf(number):
        raise InputError(f"{where}: score must be finite, got {value!r}; pass None for an unknown score")
    return number


def coerce_chunks(chunks: Iterable[Chunk | str | Mapping[str, Any]] | None) -> list[Chunk]:
    """Turn user input into a list of :class:`Chunk` with unique ids.

    Accepts ``Chunk`` objects, plain strings and mappings with a ``text`` (or
    ``page_content``) key. Raises :class:`InputError` for anything else, including
    a single chunk (str, bytes, Chunk or mapping) where a list was expected, and a
    score that is infinite or too large for a float (NaN means "no score").
    """
    if chunks is None:
        return []
    if isinstance(chunks, (str, bytes, Chunk, Mapping)):
        raise InputError(
            "chunks must be a list of Chunk/str/dict, got a single "
            f"{type(chunks).__name__}; wrap it in a list: [chunk]"
        )
    out: list[Chunk] = []
    seen: set[str] = set()
    try:
        items = list(chunks)
    except TypeError:
        raise InputError(f"chunks must be a list of Chunk or str, got {type(chunks).__name__}") from None
    for i, item in enumerate(items):
        where = f"chunks[{i}]"
        if isinstance(item, Chunk):
            chunk = item
        elif isinstance(item, str):
            chunk = Chunk(text=item)
        elif isinstance(item, bytes):
            raise InputError(
                f"{where} is bytes; decode it first, or for HTML pages use "
                "tokenslim.extract_main_text(html_bytes), which detects the encoding"
            )
        elif isinstance(item, Mapping):
            text = item.get("text", item.get("page_content"))
            if text is None:
                raise InputError(f"{where} is a mapping without a 'text' key: keys {sorted(map(str, item))!r}")
            chunk = Chunk(
                text=text,
                score=item.get("score"),
                id=item.get("id"),
                metadata=item.get("metadata") or {},
            )
        else:
            raise InputError(f"{where} must be a Chunk, str or mapping, got {type(item).__name__}: {item!r:.80}")
        if not isinstance(chunk.text, str):
            raise InputError(f"{where}.text must be str, got {type(chunk.text).__name__}")
        if type(chunk.metadata) is not dict and (chunk.metadata is None or not isinstance(chunk.metadata, Mapping)):
            if chunk.metadata is not None:
                raise InputError(f"{where}.metadata must be a dict, got {type(chunk.metadata).__name__}")
        score = _coerce_score(chunk.score, where)
        cid = chunk.id if chunk.id is not None else f"c{i}"
        if not isinstance(cid, str):
            cid = str(cid)
        if cid in seen:
            cid = f"{cid}#{i}"
        seen.add(cid)
        meta = dict(chunk.metadata or {})
        meta.setdefault("position", i)
        out.append(Chunk(text=chunk.text, score=score, id=cid, metadata=meta))
    return out


def coerce_history(history: Sequence[Mapping[str, Any]] | None) -> list[Message]:
    """Validate chat history: a list of ``{"role", "content"}`` mappings (copied).

    ``content`` may be a str, ``None`` (empty) or a list of content parts. Text parts
    (``text``, ``input_text``, ``output_text``) and plain strings become the message
    text, joined by newlines. A message with any other part (``image_url``,
    ``input_image``, ``input_audio``, ``file``, tool parts...) keeps its parts list under
    :data:`PARTS_KEY`, sent on unchanged by ``Result.to_messages()``, and its text shows
    each such part as a marker (``[image_url]``), so it is counted and a stage that drops
    the turn records it with its parts. Nothing is dropped silently.
    """
    if history is None:
        return []
    if isinstance(history, (str, bytes, Mapping)) or not isinstance(history, Iterable):
        raise InputError(f"history must be a list of messages, got {type(history).__name__}")
    out: list[Message] = []
    for i, msg in enumerate(history):
        if not isinstance(msg, Mapping):
            raise InputError(f"history[{i}] must be a dict with 'role' and 'content', got {type(msg).__name__}")
        role = msg.get("role")
        if not isinstance(role, str) or role not in _ROLES:
            raise InputError(f"history[{i}] has role {role!r:.80}; expected one of {sorted(_ROLES)}")
        content = msg.get("content")
        m = dict(msg)
        if content is None:
            content = ""
        if isinstance(content, (list, tuple)):
            parts = list(content)
            content = _parts_text(parts, f"history[{i}].content")
            if any(not _is_text_part(p) for p in parts):
                m[PARTS_KEY] = parts
        elif not isinstance(content, str):
            raise InputError(
                f"history[{i}].content must be a str or a list of content parts, got {type(content).__name__}"
            )
        m["content"] = content
        out.append(m)
    return out


def _is_text_part(part: Any) -> bool:
    return isinstance(part, str) or (isinstance(part, Mapping) and part.get("type") in _TEXT_PARTS)


def _marker(part: Mapping[str, Any]) -> str:
    kind = part.get("type")
    return f"[{kind}]" if isinstance(kind, str) and kind else "[part]"


def _parts_text(parts: list[Any], where: str) -> str:
    """The text of a content-parts list: text parts as they are, other parts as markers."""
    out: list[str] = []
    for k, part in enumerate(parts):
        if isinstance(part, str):
            out.append(part)
        elif not isinstance(part, Mapping):
            raise InputError(f"{where}[{k}] must be a content part (dict) or str, got {type(part).__name__}")
        elif part.get("type") in _TEXT_PARTS:
            text = part.get("text")
            if not isinstance(text, str):
                raise InputError(f"{where}[{k}] is a {part.get('type')!r} part whose 'text' is not a str: {text!r:.80}")
            out.append(text)
        else:
            out.append(_marker(part))
    return "\n".join(out)


def api_content(msg: Message) -> Any:
    """The content to send for ``msg``: its original parts when it had non-text parts.

    When a stage rewrote the text, the new text goes first as one text part, followed by
    every non-text part (markers taken out of the text), so an image is never lost.
    """
    parts = msg.get(PARTS_KEY)
    if parts is None:
        return msg.get("content")
    text = msg.get("content", "")
    if text == _parts_text(parts, "content"):
        return list(parts)
    others = [p for p in parts if not _is_text_part(p)]
    for p in others:
        text = text.replace(_marker(p), "", 1)
    return ([{"type": "text", "text": text.strip()}] if text.strip() else []) + others
