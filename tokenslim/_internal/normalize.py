"""Text normalization, excerpt-header parsing, source keys and shingles for duplicate detection.

Three different notions of "the same text" are used by :mod:`tokenslim.stages.dedupe`:

* :func:`dedupe_key` - case, punctuation and whitespace folded away (exact duplicates);
* :func:`shingles` - word n-grams of :func:`fold_words` (MinHash near-duplicates);
* :func:`squash_spaces` - only whitespace runs folded, with :func:`unsquash_index` to map
  back to the original offsets (overlap detection between sliding windows, where the merged text must keep
  every character of both windows).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

__all__ = [
    "Excerpt",
    "split_excerpt",
    "fold_words",
    "dedupe_key",
    "shingles",
    "squash_spaces",
    "unsquash_index",
    "source_key",
    "names",
    "DEFAULT_SOURCE_KEYS",
]

_NONSPACE = re.compile(r"\S+")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_NAME = re.compile(r"\b(?:[^\W\d_a-z][\w'’-]*|\d+(?:[.,]\d+)*)", re.UNICODE)

# "[Excerpt from document]\ntitle: ...\npublished_at: ...\nsource: ...\nExcerpt:\n-----\n<text>-----"
# (the rendering of MultiHop-RAG's retriever output, and of LlamaIndex's default metadata template).
_EXCERPT = re.compile(
    r"\A(?P<head>\[Excerpt from document\]\n(?P<fields>(?:[^\n:]{1,40}: [^\n]*\n)*)Excerpt:\n-----\n)"
    r"(?P<body>.*?)(?P<tail>\n?-----\s*)\Z",
    re.S,
)

DEFAULT_SOURCE_KEYS: tuple[str, ...] = ("doc_id", "document_id", "source_id", "url", "source", "file_path", "title")
"""Metadata keys that name the document a chunk was cut from, tried in this order."""


@dataclass(frozen=True)
class Excerpt:
    """A chunk text split into a header, the passage body and a footer.

    ``head + body + tail == text`` always holds. Plain chunks have an empty head and
    tail; chunks rendered as ``[Excerpt from document]`` blocks have their header
    fields parsed into ``fields`` (``{"title": ..., "published_at": ..., "source": ...}``).
    """

    head: str
    body: str
    tail: str
    fields: Mapping[str, str]


def split_excerpt(text: str) -> Excerpt:
    """Split ``text`` into header, body and footer (see :class:`Excerpt`)."""
    m = _EXCERPT.match(text)
    if m is None:
        return Excerpt("", text, "", {})
    fields = {}
    for line in m.group("fields").splitlines():
        key, _, value = line.partition(": ")
        fields[key.strip()] = value.strip()
    return Excerpt(m.group("head"), m.group("body"), m.group("tail"), fields)


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def fold_words(text: str) -> list[str]:
    """The words of ``text`` after NFKC and case folding (punctuation and spacing dropped)."""
    return _WORD.findall(_fold(text))


def dedupe_key(text: str) -> str:
    """The text with case, punctuation and whitespace differences removed.

    Two texts with the same key are exact duplicates for
    :class:`~tokenslim.stages.Dedupe` (e.g. ``"Same  text."`` and ``"same text"``).
    """
    return " ".join(fold_words(text))


def shingles(words: Sequence[str], size: int) -> list[bytes]:
    """Distinct ``size``-grams of ``words`` (from :func:`fold_words`), UTF-8 encoded for MinHash.

    A text shorter than ``size`` words yields one shingle (all its words), so short
    chunks are still comparable. No words yield no shingles.
    """
    if not words:
        return []
    if len(words) <= size:
        return [" ".join(words).encode()]
    return list({" ".join(words[i : i + size]).encode() for i in range(len(words) - size + 1)})


def squash_spaces(text: str) -> str:
    """Collapse each whitespace run to one space and strip both ends."""
    return " ".join(_NONSPACE.findall(text))


def unsquash_index(text: str, k: int) -> int:
    """Index in ``text`` of character ``k`` of :func:`squash_spaces` (``text``).

    A folded space maps to the start of its whitespace run; ``k`` at or past the end
    of the squashed text maps to ``len(text)``.
    """
    pos = 0
    prev_end = -1
    for m in _NONSPACE.finditer(text):
        if prev_end >= 0:
            if k == pos:
                return prev_end
            pos += 1
        n = m.end() - m.start()
        if k < pos + n:
            return m.start() + k - pos
        pos += n
        prev_end = m.end()
    return len(text)


def source_key(metadata: Mapping[str, Any], fields: Mapping[str, str], keys: Sequence[str]) -> str | None:
    """Identify the document a chunk comes from, or ``None`` when nothing says.

    Args:
        metadata: The chunk's metadata; the first of ``keys`` with a non-empty value wins.
        fields: Header fields parsed by :func:`split_excerpt`; used when no metadata key
            matched. All fields together form the key (a MultiHop-RAG ``source`` is a
            publisher such as "The Verge", so it cannot name a document alone).
        keys: Metadata keys to try, in order.
    """
    for key in keys:
        value = metadata.get(key)
        if value not in (None, ""):
            return f"{key}={value}"
    if fields:
        return "|".join(f"{k}={v}" for k, v in sorted(fields.items()))
    return None


def names(text: str) -> frozenset[str]:
    """Capitalised words and numbers of ``text`` (case-folded): the names, dates and figures.

    Two template-like passages about different entities ("Fuding Railway Station is a
    railway station located in ..." / "Mount Taimu Railway Station is ...") share most
    shingles but differ here, so near-duplicate detection checks this set too.
    """
    return frozenset(m.casefold() for m in _NAME.findall(text))
