"""Two learned decisions about a table (or a JSON array of records): every row or a few, and
which columns may hold the answer.

The rules of :mod:`~tokenslim._internal.structured.table` keep the rows and columns a question
names. Two things they cannot read from its words are learned instead, from WikiTableQuestions
*training* questions (``scripts/train_table_model.py``; never its test questions, which the
benchmark draws from), and shipped in ``table_model.json`` (numpy inference, no scikit-learn):

* **Every row or a few** (:func:`every_row`). "Which film grossed the most prior to 1994?" names
  a year that matches a few rows, but its answer is the best of many; "what is the tallest peak
  in the Alps?" has no word of the aggregate list. :func:`row_features` describes the question
  and how :func:`~tokenslim._internal.structured._select.select` ranked the rows (how many it
  kept, how flat its scores are, how many rows the question's identifiers hit), and the model
  gives the probability that the rows it picked miss the answer. A question asking for a count
  or an amount ("how many...") keeps the rule (every row when it compares or counts): its answer
  is computed, not a cell, so no training label says which rows it needs.
* **Which columns answer** (:func:`answer_columns`). "Who won the most?" needs ``Winner``,
  "which sports network aired the most races?" needs ``TV``: :func:`column_features` describes
  each column against the question (the header's word-vector match with the question and with
  its head noun, what the question asks for, what the column holds), and the likeliest column,
  with every column at or above the shipped threshold, is kept on top of the rule's columns (not
  for a count: its answer is computed from the columns the question names).

Without the model file (a stripped install) both fall back to the rules; a malformed one is a
:class:`~tokenslim.errors.ConfigError`.
"""

from __future__ import annotations

import functools
import json
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from tokenslim._internal.features import YEAR
from tokenslim._internal.lang import best_similarity, phrases_pattern, words
from tokenslim._internal.relevance import terms
from tokenslim.errors import ConfigError

if TYPE_CHECKING:
    import numpy as np

    from tokenslim._internal.scorer import Net, Trees
    from tokenslim._internal.structured._select import Query, Selection

__all__ = ["COLUMN_FEATURES", "ROW_FEATURES", "MODEL_PATH", "column_features", "row_features", "answer_columns", "every_row", "rule_decision", "model_decision"]

MODEL_PATH = Path(__file__).with_name("table_model.json")

COLUMN_FEATURES: tuple[str, ...] = (
    "header_share",  # share of the header's terms the question holds
    "header_prefix",  # a header term shares its first five letters with a question term ("Scorers", "scored")
    "header_soft",  # best word-vector cosine between a header term and a question term
    "head_soft",  # best cosine between a header term and the question's head noun ("which *network*")
    "header_soft_rank",  # 1 / (1 + rank of the column by header_soft)
    "cell_share",  # share of rows whose cell holds a question term (the column the question filters on)
    "cell_any",  # some cell holds a question term or identifier
    "first",  # the first column
    "first_text",  # the first mostly-text column after the first (the row's name)
    "numeric",  # share of numeric (or empty) cells (of the first SAMPLE rows, as the next four)
    "years",  # share of cells holding a year or date
    "names",  # share of cells of two or more capitalised words (people, places, titles)
    "distinct",  # distinct cells / rows
    "length",  # log(1 + mean cell length) / 4
    "position",  # column index / (columns - 1)
    "columns",  # log(columns) / 3
    "asks_person",  # who / whom / whose
    "asks_date",  # when / what year
    "asks_place",  # where / what country ...
    "aggregates",  # the question has a word of the aggregate list and no identifier naming a row
)

ROW_FEATURES: tuple[str, ...] = (
    "aggregate_word",  # a word of the aggregate list ("most", "first", "than", "total")
    "order_word",  # a word of the order list ("after", "next", "previous")
    "identifiers",  # the question's identifiers (tokens with a digit, an underscore or an inner capital)
    "identifier_rows",  # share of rows an identifier of the question names
    "numeric_identifiers",  # every identifier is a number or a year ("1994", "20/1")
    "selected",  # share of rows select() kept
    "selected_log",  # log(1 + rows select() kept)
    "best",  # log(1 + the best row's BM25 score)
    "second",  # the second best score / the best
    "tied",  # share of rows scoring as the best
    "matched",  # share of rows with a score above 0
    "query_terms",  # the question's terms
    "asks_person",
    "asks_date",
    "rows",  # log(rows)
    "key_named",  # best share of a picked row's name cell (first column, or first text column) the question holds
)

SAMPLE = 200
"""Rows a column's make-up (numbers, years, names, variety) is read from."""
_NUMERIC = re.compile(r"^[\s$€£+−–-]*[\d.,]+\s*(?:%|[a-z]{0,3})?$", re.I)
_NAME = re.compile(r"^[A-Z][\w'’.-]*(?:\s+[\w'’.&-]+)*\s+[A-Z][\w'’.-]*")
_WORD = re.compile(r"[a-z]+")
_NUMBER_TOKEN = re.compile(r"[\d.,/'s-]+")


@functools.lru_cache(maxsize=1)
def _lists() -> "tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], frozenset[str], frozenset[str], re.Pattern[str]]":
    heads = "|".join(sorted(re.escape(w) for w in words("head_questions")))
    return (
        phrases_pattern("person_questions"),
        phrases_pattern("date_questions"),
        phrases_pattern("place_questions"),
        words("aggregate_words"),
        words("order_words"),
        re.compile(r"\b(?:" + heads + r")\s+([A-Za-z]+)", re.I),  # "which *network*": the noun asked for
    )


def _numeric_shares(rows: Sequence[Sequence[str]], width: int) -> list[float]:
    """Per column, the share of numeric (or empty) cells in the first :data:`SAMPLE` rows."""
    sample = rows[:SAMPLE]
    s = max(len(sample), 1)
    return [sum(not c or bool(_NUMERIC.match(c)) for c in (r[j].strip() if j < len(r) else "" for r in sample)) / s for j in range(width)]


def _name_column(numeric: Sequence[float]) -> int | None:
    """The row's name column after the first: the first mostly-text one ("Driver" after "Pos")."""
    return next((j for j in range(1, len(numeric)) if numeric[j] < 0.5), None)


def column_features(query: "Query", header: Sequence[str], rows: Sequence[Sequence[str]]) -> "np.ndarray":
    """One row per column, in :data:`COLUMN_FEATURES` order. ``rows``: the table's body cells."""
    import numpy as np

    n = len(header)
    q = list(query.terms)
    qset = set(q)
    who, when, where, _, _, heads = _lists()
    head = heads.search(query.text)
    head_terms = terms(head.group(1)) if head else []
    asks = (
        1.0 if who.search(query.text) else 0.0,
        1.0 if when.search(query.text) else 0.0,
        1.0 if where.search(query.text) else 0.0,
        1.0 if query.aggregates([" ".join(r) for r in rows]) else 0.0,
    )
    m = max(len(rows), 1)
    columns = [[r[j].strip() if j < len(r) else "" for r in rows] for j in range(n)]
    # what a column holds is read from its first SAMPLE rows (a long table's cost stays bounded)
    s = max(min(len(rows), SAMPLE), 1)
    numeric = _numeric_shares(rows, n)
    first_text = _name_column(numeric)
    header_terms = [terms(h) for h in header]
    soft = [best_similarity(ht, q) for ht in header_terms]
    rank = {j: r for r, j in enumerate(sorted(range(n), key=lambda j: (-soft[j], j)))}
    prefixes = {t[:5] for t in qset if len(t) >= 5}
    out = np.zeros((n, len(COLUMN_FEATURES)))
    for j in range(n):
        ht = header_terms[j]
        col = columns[j]
        hits = [query.holds_term(c) or bool(query.patterns and query.identifier_hits(c)) for c in col]
        head_cells = col[:SAMPLE]
        out[j] = (
            sum(t in qset for t in ht) / len(ht) if ht else 0.0,
            1.0 if any(t in qset or (len(t) >= 5 and t[:5] in prefixes) for t in ht) else 0.0,
            soft[j],
            best_similarity(ht, head_terms),
            1.0 / (1.0 + rank[j]),
            sum(hits) / m,
            1.0 if any(hits) else 0.0,
            1.0 if j == 0 else 0.0,
            1.0 if j == first_text else 0.0,
            numeric[j],
            sum(bool(YEAR.search(c)) for c in head_cells) / s,
            sum(bool(_NAME.match(c)) for c in head_cells) / s,
            len(set(head_cells)) / s,
            math.log1p(sum(len(c) for c in head_cells) / s) / 4.0,
            j / max(n - 1, 1),
            math.log(max(n, 1)) / 3.0,
            *asks,
        )
    return out


def _key_named(query: "Query", cells: Sequence[Sequence[str]], picked: Sequence[int]) -> float:
    """The best share of a picked row's name cell (its first cell, or its first mostly-text one) that
    the question holds: "What is the elevation of Mont Blanc?" names the row, "which film grossed the
    most prior to 1994?" only its year."""
    width = min((len(r) for r in cells), default=0)
    if not width:
        return 0.0
    name = _name_column(_numeric_shares(cells, width))
    qset = set(query.terms)
    best = 0.0
    for i in picked:
        for j in {0} if name is None else {0, name}:
            t = set(terms(cells[i][j]))
            if t:
                best = max(best, len(t & qset) / len(t))
    return best


def row_features(
    query: "Query", units: Sequence[str], selection: "Selection", cells: Sequence[Sequence[str]] | None = None
) -> "np.ndarray":
    """One row of :data:`ROW_FEATURES` for a question over ``units`` (rows or items) and what
    :func:`~tokenslim._internal.structured._select.select` made of them; ``cells``: each unit's
    cells (values), when the units are rows of one shape (``key_named`` is 0 without them)."""
    import numpy as np

    n = max(len(units), 1)
    who, when, _, aggregate, order, _ = _lists()
    said = _WORD.findall(query.text.lower())
    named = sum(any(p.search(u) for p in query.patterns) for u in units) if query.patterns else 0
    scores = np.asarray(selection.scores, dtype=float) if selection.scores else np.zeros(1)
    best = float(scores.max())
    ranked = np.sort(scores)[::-1]
    return np.asarray(
        [
            1.0 if any(w in aggregate for w in said) else 0.0,
            1.0 if any(w in order for w in said) else 0.0,
            float(len(query.identifiers)),
            named / n,
            1.0 if query.identifiers and all(_NUMBER_TOKEN.fullmatch(i) for i in query.identifiers) else 0.0,
            len(selection.keep) / n,
            math.log1p(len(selection.keep)),
            math.log1p(max(best, 0.0)),
            float(ranked[1] / best) if best > 0 and len(ranked) > 1 else 0.0,
            float((scores == best).sum()) / n if best > 0 else 0.0,
            float((scores > 0).sum()) / n,
            float(len(query.terms)),
            1.0 if who.search(query.text) else 0.0,
            1.0 if when.search(query.text) else 0.0,
            math.log(n),
            _key_named(query, cells, selection.keep) if cells is not None and len(cells) == len(units) else 0.0,
        ]
    )


class _Part:
    """One shipped model (columns or rows): its trees and threshold."""

    def __init__(self, data: dict[str, Any], features: tuple[str, ...]) -> None:
        from tokenslim._internal.scorer import _predictor

        if tuple(data["model"]["features"]) != features:
            raise ValueError("the table model was trained on other features")
        self.predict: "Net | Trees" = _predictor(data["model"])
        self.threshold = float(data["threshold"])


@functools.lru_cache(maxsize=1)
def _models() -> "tuple[_Part, _Part] | None":
    """The shipped models, or ``None`` without the file (the rules then decide alone).

    Raises:
        ConfigError: the file is there but malformed, or trained on other features.
    """
    if not MODEL_PATH.exists():
        return None
    try:
        data = json.loads(MODEL_PATH.read_text(encoding="utf-8"))
        return _Part(data["columns"], COLUMN_FEATURES), _Part(data["rows"], ROW_FEATURES)
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        raise ConfigError(
            f"table model {MODEL_PATH} is malformed or stale ({type(exc).__name__}: {exc}): retrain it with "
            "scripts/train_table_model.py"
        ) from None


def answer_columns(query: "Query", header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[int]:
    """The columns the model says may hold the answer: the likeliest, and any other at or above the
    shipped threshold (chosen on training questions to keep the answer's column for 95% of them);
    none for a count or an amount ("how many..."), whose answer no column holds."""
    if query.asks_number():
        return []  # a count or an amount is computed from the columns the question names, not read from one
    models = _models()
    if models is None or not header or not rows:
        return []
    part = models[0]
    p = part.predict(column_features(query, header, rows))
    return sorted({int(p.argmax())} | {j for j in range(len(header)) if p[j] >= part.threshold})


def rule_decision(query: "Query", units: Sequence[str], selection: "Selection") -> bool | None:
    """:func:`every_row`'s answer where a rule gives it, ``None`` where the row model decides.

    Every unit when nothing was picked; a count or an amount ("how many...") follows
    :meth:`~tokenslim._internal.structured._select.Query.aggregates` (its answer is computed, not a
    cell, so no training label says which rows it needs); a question whose identifier other than a
    number names a unit ("ord_00179f3a", "City137") is about that unit ("1994" may only filter).
    """
    if not selection.keep:
        return True
    if query.asks_number():
        return query.aggregates(units)
    if any(not _NUMBER_TOKEN.fullmatch(i) and any(p.search(u) for u in units) for i, p in zip(query.identifiers, query.patterns)):
        return False
    return None


def every_row(query: "Query", units: Sequence[str], selection: "Selection", cells: Sequence[Sequence[str]] | None = None) -> bool:
    """Whether a question is over every unit rather than the few ``selection`` picked: the rules of
    :func:`rule_decision`, else the row model: every unit when the probability that the picked ones
    miss the answer reaches the shipped threshold (chosen on training questions to keep the answer's
    row for 97% of them). ``cells``: each unit's cells, when the units are table rows. Without the
    model file, :meth:`~tokenslim._internal.structured._select.Query.aggregates` decides.
    """
    ruled = rule_decision(query, units, selection)
    return ruled if ruled is not None else model_decision(query, units, selection, cells)


def model_decision(query: "Query", units: Sequence[str], selection: "Selection", cells: Sequence[Sequence[str]] | None = None) -> bool:
    """:func:`every_row` where :func:`rule_decision` gives no answer (for a caller that asked it already)."""
    models = _models()
    if models is None:
        return query.aggregates(units)
    part = models[1]
    return bool(part.predict(row_features(query, units, selection, cells)[None, :])[0] >= part.threshold)
