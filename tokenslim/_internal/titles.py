"""A chunk's title, from wherever the loader or retriever put it.

Relevance uses titles twice: the question naming a chunk's subject, and the second
hop of a multi-hop question (a top chunk naming another chunk's subject). Loaders
disagree on where the title lives, so :func:`chunk_title` looks, in order, at:

1. metadata, under the first key of ``title_keys`` holding a non-empty string
   (:data:`TITLE_KEYS`: ``title`` (LangChain, Haystack, tokenslim's loaders),
   ``document_title`` (LlamaIndex's TitleExtractor), ``html_title`` (StripHTML),
   ``doc_title``, ``heading``, ``file_name`` (LlamaIndex's SimpleDirectoryReader),
   ``source`` and ``file_path`` (LangChain / Haystack file loaders); a nested
   ``meta`` dict (Haystack) is searched the same way. A file name or path gives its
   stem with ``_``/``-`` as spaces (``reports/q3_revenue.pdf`` -> ``q3 revenue``);
2. the text's first line: ``Title: ...``, a markdown heading (``# ...``), a short
   name-like line (capitalised, no end punctuation) followed by more text, or a short
   name-like ``Name: text`` prefix (``f"{title}: {text}"``), unless ``Name:`` opens
   several lines (a transcript's speaker labels are not titles);
3. nothing: ``""``. Relevance then links chunks through the subject their text
   opens with (see :func:`lead_subject`: after an opening phrase, the nickname form
   of a name, the first of several spellings) and the other names its first sentence
   gives it (:func:`lead_aliases`: "commonly known as ..."), which need no title at all.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from tokenslim._internal.lang import words
from tokenslim._internal.relevance import fold

__all__ = ["TITLE_KEYS", "chunk_title", "text_title", "title_end", "lead_subject", "lead_aliases", "lowercase_words"]

TITLE_KEYS: tuple[str, ...] = (
    "title",
    "document_title",
    "html_title",
    "doc_title",
    "heading",
    "file_name",
    "source",
    "file_path",
)
"""Metadata keys read for a chunk's title, in order (the ``title_keys=`` default)."""

_PATH_KEYS = frozenset({"file_name", "source", "file_path"})
_MAX_WORDS = 12
_LABEL = re.compile(r"^\s*(?:title|subject|heading)\s*:\s*(\S.*?)\s*$", re.I)
_HEADING = re.compile(r"^\s*#{1,6}\s+(\S.*?)\s*#*\s*$")
_PREFIX = re.compile(r"^\s*([^\n:!?]{1,100}?)\s*:\s+\S")
_LINE_LABEL = re.compile(r"^\s*([^\n:]{1,40}?)\s*:\s", re.M)
_END = re.compile(r"[.!?;,:]\s*$")


def _from_path(value: str) -> str:
    """``q3 revenue`` for ``reports/q3_revenue.pdf`` or ``https://x.org/wiki/Q3_revenue``."""
    stem = re.split(r"[/\\]", value.rstrip("/\\"))[-1]
    stem = re.sub(r"\.[A-Za-z0-9]{1,5}$", "", stem)
    return " ".join(re.sub(r"[_\-+%]+", " ", stem).split())


def _from_metadata(metadata: Mapping[str, Any], keys: Sequence[str]) -> str:
    for key in keys:
        value = metadata.get(key)
        if isinstance(value, str) and value.strip():
            return _from_path(value) if key in _PATH_KEYS else value.strip()
    nested = metadata.get("meta")
    if isinstance(nested, Mapping):
        return _from_metadata(nested, keys)
    return ""


def _short(line: str) -> bool:
    return 0 < len(line.split()) <= _MAX_WORDS and any(ch.isalpha() for ch in line)


def _name_like(line: str) -> bool:
    """Short, starts with a capital or a number ("2003 WNBA season"), and either at least half its
    content words capitalised (or numbers) or no function words at all ("Young adult fiction")."""
    words = [w for w in _CAP_WORD.findall(line) if w.lower() not in _JOINERS]
    if not _short(line) or not words or not (words[0][0].isupper() or words[0][0].isdigit()):
        return False
    if 2 * sum(w[0].isupper() or w[0].isdigit() for w in words) >= len(words):
        return True
    # sentence-case titles ("Young adult fiction") hold no function words; "The answer is" does
    return not any(w.lower() in _FUNCTION_WORDS for w in words)


def text_title(text: str) -> str:
    """The title a chunk's text opens with, or ``""`` (see the module docstring, step 2)."""
    head, newline, rest = text.lstrip().partition("\n")
    for pattern in (_LABEL, _HEADING):
        m = pattern.match(head)
        if m and _short(m.group(1)):
            return m.group(1)
    if newline and rest.strip() and _name_like(head) and not _END.search(head) and ":" not in head:
        return head.strip()
    m = _PREFIX.match(head)
    if m and _name_like(m.group(1)) and _balanced(m.group(1)) and len(_LINE_LABEL.findall(text)) < 2:
        return m.group(1)
    return ""


def _balanced(name: str) -> bool:
    """Brackets and double quotes closed: ``"Strasbourg (Alsatian: ..."`` opens a gloss, not a ``Name: text`` label."""
    return (
        name.count("(") == name.count(")")
        and name.count("[") == name.count("]")
        and name.count('"') % 2 == 0
        and name.count("“") == name.count("”")
    )


def chunk_title(text: str, metadata: Mapping[str, Any], title_keys: Sequence[str] | None = None) -> str:
    """The chunk's title from its metadata (``title_keys``, default :data:`TITLE_KEYS`), else its text, else ``""``."""
    return _from_metadata(metadata, TITLE_KEYS if title_keys is None else title_keys) or text_title(text)


def title_end(text: str, title: str) -> int:
    """Where a title the text opens with ends (after its ``:``), or 0 when the text does not open with it.

    ``"Title: Q3 report\n..."``, ``"# Q3 report\n..."`` and ``"Q3 report: ..."`` all open with
    the title ``"Q3 report"``; relevance then scores it once, as the title. In
    ``"Q3 report is ..."`` the title is the sentence's subject and stays text.
    """
    if not title:
        return 0
    at = text.find(title, 0, len(title) + 16)
    if at < 0 or text[:at].strip(" \t\n#*:").lower() not in ("", "title", "subject", "heading"):
        return 0
    end = at + len(title)
    m = re.match(r"[ \t#*]*(?::[ \t]*\n?|\n)", text[end:])  # a label, not the subject of a sentence
    return end + m.end() if m else 0


_CAP_WORD = re.compile(r"[^\W\d_][\w'’.\-]*|\d[\w'’.\-]*", re.UNICODE)
# "The sousaphone (...) is a brass instrument", "A soft drink is ...": the defined term
_DEFINITION = re.compile(
    r"^\s*(?:(?:the|an?)\s+)?([^\W_][^,;:.()\n]{0,80}?)\s*(?:\([^)]{0,120}\)\s*)?,?\s+(?:is|was|are|were|refers to)\s", re.I
)
# a name's lower-case continuation up to the copula of a definition ("Seminole music is ...",
# "The Falkland Islands official football team is ...")
_NOUN_TAIL = re.compile(r"[ \t]+((?:[a-z][a-z'’\-]*[ \t]+){1,3}?)(?=(?:is|are|was|were)\s)")
# words that open an adverbial or subordinate phrase, never a name ("In 1998, ...", "Although ..., ..."):
# prepositions, subordinating conjunctions and sentence adverbs (with any word ending in -ly)
_OPENERS = words("openers")
_OPENING_PHRASE = re.compile(r"^[^,;:.!?\n]{1,100}?,\s+(?:(?:the|an?)\s+)?")
_FUNCTION_WORDS = words("function_words")
_JOINERS = words("joiners")
_NOT_NOUN = _FUNCTION_WORDS | _OPENERS  # never the first word of a defined term
_NOT_IN_NAME = _NOT_NOUN | _JOINERS  # never between a name and its copula


def _trim_joiners(words: list[str]) -> list[str]:
    """``words`` without the joiners (*of*, *the*, *and*, ...) at its end: a name never ends with one."""
    end = len(words)
    while end and words[end - 1].lower() in _JOINERS:
        end -= 1
    return words[:end]


def lowercase_words(texts: Sequence[str]) -> set[str]:
    """Words written in lower case somewhere in ``texts``: common nouns, not names (for :func:`lead_subject`)."""
    return {w for t in texts for w in _LOWER_WORD.findall(t)}


_LOWER_WORD = re.compile(r"(?<![\w'’])[a-z][a-z'’\-]+")


def lead_subject(text: str, max_words: int = 8, common: set[str] | frozenset[str] = frozenset()) -> str:
    """The capitalised phrase a text opens with: what the chunk is about, when it names it first.

    ``"Shirley Temple Black (April 23, 1928 – ...) was ..."`` -> ``"Shirley Temple Black"``;
    ``"Kiss and Tell is a 1945 film"`` -> ``"Kiss and Tell"``; ``"In 1990, the firm ..."`` -> ``""``
    (lower-case joiners such as *of*, *and*, *de* may sit inside, never at either end).
    Up to three lower-case words between the name and the copula of a definition belong
    to the subject: ``"Seminole music is the music of ..."`` -> ``"Seminole music"``, not
    ``"Seminole"`` (a subject cut short names whatever shares its first word).
    Without a capitalised opening, the term a definition opens with:
    ``"The sousaphone ( ), is a brass instrument"`` -> ``"sousaphone"``.
    Encyclopedic, news and product text usually names its subject in the first words,
    so this stands in for a missing title when linking chunks. A one-word phrase whose
    word is in ``common`` (written in lower case elsewhere, see :func:`lowercase_words`)
    is a common noun opening a sentence, not a name.

    A text that opens with an adverbial or subordinate phrase names its subject after
    it: ``"In addition to comic books, Mutarelli has ..."`` -> ``"Mutarelli"``; a pronoun
    or a lower-case noun there gives ``""`` (``"As an adult, she ..."``), and so does a
    lone pronoun or determiner (``"This ..."``, ``"It was ..."``; ``"Will Smith"`` stays a name).
    A quoted nickname inside a name gives the name it forms with what follows
    (``'Kristopher "Kris" Marshall'`` -> ``"Kris Marshall"``: the name other texts use).
    """
    start = text.lstrip(" \t\n\"'“‘([")
    first = _CAP_WORD.match(start)
    word = first.group(0).lower() if first else ""
    opener = word in _OPENERS or (word.endswith("ly") and start[len(word) : len(word) + 1] == ",")
    phrase = _OPENING_PHRASE.match(start) if opener else None
    if phrase:
        rest = start[phrase.end() :]
        return _lead(rest, max_words, common) if rest[:1].isupper() else ""
    found = _lead(text, max_words, common)
    return "" if found.lower() in _FUNCTION_WORDS else found  # "It was ...", "There have been ..."


def _lead(text: str, max_words: int, common: set[str] | frozenset[str]) -> str:
    """:func:`lead_subject` on a text that opens with its subject (no opening phrase)."""
    words: list[str] = []
    pos = 0
    nickname = 0  # index of a quoted nickname inside the name
    for m in _CAP_WORD.finditer(text, 0, 200):
        # only spaces between words, or quotes around a nickname (Roland "Champ" Bailey); opening
        # quotes or brackets may stand before the first word
        gap = text[pos : m.start()]
        if gap.strip(" \t\"“”/" if words else " \t\n\"'“‘(["):
            break
        if words and gap.strip() in ('"', "“") and not nickname:
            nickname = len(words)
        w = m.group(0).rstrip(".")
        if words and "/" in gap and fold(w) == fold(words[-1]):
            pos = m.end()
            continue  # "Øresund/Öresund/Oresund Bridge": spellings of one word, the first kept ("AC/DC" stays two)
        if not w or not (w[0].isupper() or (words and (w[0].isdigit() or w.lower() in _JOINERS))):
            break
        words.append(w)
        pos = m.end()
        if len(words) >= max_words:
            break
    ends = len(words)
    words = _trim_joiners(words)
    # (not after a dropped joiner: "Paris and the region were ..." names Paris and a region)
    tail = _NOUN_TAIL.match(text, pos) if words and len(words) == ends < max_words else None
    if tail and _NOT_IN_NAME.isdisjoint(tail.group(1).lower().split()):
        # "Seminole music is the music of ...": the lower-case words up to the copula belong to the subject
        words.extend(tail.group(1).split()[: max_words - len(words)])
    if text[pos:].lstrip(" \t").startswith(":"):
        words = []  # "Grad A: ...": a speaker or field label, not a subject
    if len(words) == 1 and words[0].lower() in common:
        words = []  # "Lighthouse keepers ...": a capitalised common noun opening a sentence
    if not any(w[0].isupper() and w.lower() not in _JOINERS for w in words):
        m = _DEFINITION.match(text)  # type: ignore[assignment]
        # a preposition or function word never opens a defined term ("The following is a list ...")
        ok = m and len(m.group(1).split()) <= max_words and m.group(1).split()[0].lower() not in _NOT_NOUN
        # "Young adult fiction or young adult literature (YA) is ...": the first of the names given
        return m.group(1).split(" or ")[0] if ok else ""
    if 0 < nickname < len(words) - 1:
        # 'Kristopher "Kris" Marshall': the name the text goes on to use, and others use, is "Kris Marshall"
        words = words[nickname:]
    return " ".join(words)


# "..., commonly known as the DISCLOSE Act", "known professionally as Nicki Minaj", "also called "Checo""
_ALIAS = re.compile(
    r"\b(?:known|called|named|referred to)\s+(?:in\s+\w+\s+|\w+ly\s+)?as\s+(?:the\s+)?"
    r"(?:[\"“]([^\"”\n]{1,60})[\"”]|((?:[A-Z0-9][\w'’.\-]*)(?:\s+(?:of|the|and|de|von|van|der|[A-Z0-9][\w'’.\-]*))*))"
)


_SENTENCE_END = re.compile(r"[.!?](?:\s|$)(?=[A-Z\"“])")


def lead_aliases(text: str, max_aliases: int = 3) -> list[str]:
    """Other names the text's first sentence gives its subject: ``"... commonly known as the DISCLOSE Act"``
    -> ``["DISCLOSE Act"]``, ``"..., known professionally as Nicki Minaj"`` -> ``["Nicki Minaj"]``.

    Encyclopedic and news text introduces a subject under its full name and then the name
    people use; a question or another chunk may use either.
    """
    head = text[:400]
    end = _SENTENCE_END.search(head)
    head = head[: end.end()] if end else head
    out = []
    for m in _ALIAS.finditer(head):
        name = " ".join(_trim_joiners((m.group(1) or m.group(2) or "").strip(" .,;").split()))
        if name and (name[0].isupper() or name[0].isdigit()) and name not in out:
            out.append(name)
        if len(out) >= max_aliases:
            break
    return out
