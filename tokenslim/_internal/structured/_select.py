"""Which units (rows, items, lines, functions) of a structured block the query needs.

One decision shared by every structured type, so a table row, a JSON array item and a
log line are kept by the same readable rule (:func:`select`):

* a unit naming an *identifier* of the query (a token with a digit, an underscore or an
  inner capital: ``ord_00179f3a``, ``City137``, ``blk_-1608``) is always kept, matched
  case-insensitively on word boundaries; an identifier found in more than half of the
  units tells nothing apart and counts as an ordinary term;
* otherwise units are ranked by BM25 (:func:`tokenslim._internal.relevance.bm25_scores`)
  and those scoring at least ``min_score`` times the best one are kept, best first, at
  most ``top_k`` of them, and every further unit scoring exactly as the last one kept (a tie
  is not broken by position: "Titanic" in 13 rows keeps the 13);
* when the question asks for a neighbour ("who won *after* the Cowboys in 1975?",
  :data:`ORDER_WORDS`), the units on either side of each kept one are kept too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from tokenslim._internal.lang import phrases_pattern, words
from tokenslim._internal.relevance import bm25_scores, holds_any, term_cues, terms

__all__ = ["Query", "Selection", "select", "ELLIPSIS", "AGGREGATE_WORDS", "ORDER_WORDS"]

ELLIPSIS = "\u2026"
"""The elision mark every structured marker starts with."""

_TOKEN = re.compile(r"[^\s\"'`,;()\[\]{}<>?!]+")
_EDGE = ".:/-"


def _is_identifier(tok: str) -> bool:
    if len(tok) < 3:
        return False
    has_digit = any(ch.isdigit() for ch in tok)
    if has_digit and tok.replace(",", "").replace(".", "").isdigit() and len(tok) < 4:
        return False  # "10", "3.5": too common to single out a row
    return has_digit or "_" in tok.strip("_") or any(ch.isupper() for ch in tok[1:]) and any(ch.islower() for ch in tok)


AGGREGATE_WORDS = words("aggregate_words")
"""Words of a question that compares or counts rows ("which year had the most wins?",
"how many..."): no single row answers it, so tables keep every row and drop columns instead
(``aggregate_words`` of the language file, :mod:`tokenslim._internal.lang`)."""

ORDER_WORDS = words("order_words")
"""Words of a question about a unit's neighbour ("who won *after* the Cowboys in 1975?"): the
units next to each kept one are kept too (``order_words`` of the language file)."""


_NUMBER_QUESTION = phrases_pattern("number_questions")


@dataclass(frozen=True)
class Query:
    """A query prepared once per request: its BM25 terms and its identifiers."""

    text: str
    terms: tuple[str, ...]
    identifiers: tuple[str, ...]
    patterns: tuple["re.Pattern[str]", ...]
    cues: tuple[str, ...]  # what a text holding a term must contain (see holds_term)
    seen: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)  # holds_term's answers so far

    @classmethod
    def of(cls, text: str) -> "Query":
        ids: list[str] = []
        for raw in _TOKEN.findall(text or ""):
            tok = raw.strip(_EDGE)
            if _is_identifier(tok) and tok not in ids:
                ids.append(tok)
        pats = tuple(re.compile(r"(?<![\w])" + re.escape(i) + r"(?![\w])", re.IGNORECASE) for i in ids)
        found = tuple(terms(text or ""))
        return cls(text or "", found, tuple(ids), pats, tuple(sorted(term_cues(found))))

    def without(self, held_terms: "set[str]", held_identifiers: "set[str]") -> "Query":
        """This query less some of its terms and identifiers (those another part of the text
        already answers), for ranking what is left to find."""
        if not held_terms and not held_identifiers:
            return self
        kept = [(i, p) for i, p in zip(self.identifiers, self.patterns) if i not in held_identifiers]
        found = tuple(t for t in self.terms if t not in held_terms)
        return Query(self.text, found, tuple(i for i, _ in kept), tuple(p for _, p in kept), tuple(sorted(term_cues(found))))

    def holds_term(self, text: str) -> bool:
        """Whether ``text`` holds a term of the query (:func:`~tokenslim._internal.relevance.holds_any`:
        ``terms()`` runs only where the folded text contains a cue, so a table's thousands of cells
        are mostly skipped by a substring test), remembered per text."""
        if not self.cues:
            return False
        known = self.seen.get(text)
        if known is None:
            known = self.seen[text] = holds_any(self.terms, text, self.cues)
        return known

    def aggregates(self, units: Sequence[str]) -> bool:
        """Whether the question compares or counts ``units`` (rows): it has a word of
        :data:`AGGREGATE_WORDS` and no identifier of it names one of them."""
        if not any(w in AGGREGATE_WORDS for w in re.findall(r"[a-z]+", self.text.lower())):
            return False
        return not any(p.search(u) for p in self.patterns for u in units)

    def asks_number(self) -> bool:
        """Whether the question asks for a count or an amount ("how many...", ``number_questions``
        of the language file) rather than for an entity ("who...", "which team...")."""
        return bool(_NUMBER_QUESTION.search(self.text))

    def asks_order(self) -> bool:
        """Whether the question asks for a unit's neighbour (a word of :data:`ORDER_WORDS`)."""
        return any(w in ORDER_WORDS for w in re.findall(r"[a-z]+", self.text.lower()))

    def identifier_hits(self, text: str) -> list[str]:
        """The query identifiers found in ``text``."""
        return [i for i, p in zip(self.identifiers, self.patterns) if p.search(text)]


@dataclass(frozen=True)
class Selection:
    """Kept unit indices (sorted) and why: identifier matches and BM25 scores."""

    keep: list[int]
    by_identifier: set[int]
    scores: list[float]


def select(query: Query, units: Sequence[str], *, top_k: int, min_score: float) -> Selection:
    """Decide which units to keep (pure). See the module docstring for the rule."""
    n = len(units)
    must: set[int] = set()
    general_ids = set()
    for ident, pat in zip(query.identifiers, query.patterns):
        hits = [i for i, u in enumerate(units) if pat.search(u)]
        if hits and (len(hits) <= max(1, n // 2)):
            must.update(hits)
        elif hits:
            general_ids.add(ident)
    scores = [float(s) for s in bm25_scores(query.terms, units)] if query.terms else [0.0] * n
    keep = set(must)
    best = max(scores, default=0.0)
    if best > 0:
        ranked = sorted(range(n), key=lambda i: -scores[i])
        extra = 0
        limit = top_k if not must else max(0, top_k - len(must))
        last = None
        for i in ranked:
            if scores[i] < min_score * best or (extra >= limit and scores[i] != last):
                break  # past the cap, a unit scoring as the last one kept is kept too: no tie broken by position
            if i not in keep:
                keep.add(i)
                extra += 1
                last = scores[i]
    if keep and query.asks_order():  # "who won after X?": the answer is the unit next to X's
        keep |= {j for i in keep for j in (i - 1, i + 1) if 0 <= j < n}
    return Selection(sorted(keep), must, scores)
