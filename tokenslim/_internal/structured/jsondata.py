"""JSON and JSON Lines: keep the paths the query needs, elide the rest, still valid JSON.

The text is checked with :func:`json.loads` (C speed), then read once more by a regex
tokenizer into a light tree whose scalars and keys are the *original tokens*, so a kept
number (``1.50e3``), string escape (``"caf\\u00e9"``) or identifier is byte-exact.
The output is re-serialised compactly (``{"k": v, ...}``, one line): whitespace is the
only thing that changes in what is kept. Dropped array items leave one marker string
per gap (``"… 12 items dropped"``); dropped keys of a wide object one
``"…": "5 keys dropped"`` entry. An array's first item of each shape (its sorted keys)
is kept as an example, so the reader still sees what the dropped items looked like.

A question that compares or counts items ("which ... had the most ...?", see
:data:`~tokenslim._internal.structured._select.AGGREGATE_WORDS`) over an array of
objects of one shape (table rows as records) keeps every item and drops the keys it does
not need from each, with one ``"… 4 keys dropped from every item: ..."`` marker.

Nested values: an object's nested objects and arrays that the question does not reach while
it reaches the object (``_Reducer.unreached``: "What is the html_url of Test issue 8?" needs
the issue's fields, not its ``user``) become a marker of their own type, ``["… 3 items
dropped"]`` or ``{"login": "octocat", "…": "17 keys dropped"}`` (an object keeps its
:data:`IDENTITY_KEYS`).

Depth: arrays nested deeper than ``MAX_DEPTH`` are kept as their original text, so
adversarial nesting costs linear time and no recursion error.
"""

from __future__ import annotations

import itertools
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Union

from tokenslim._internal.lang import best_similarity, words
from tokenslim._internal.relevance import terms
from tokenslim._internal.structured._select import ELLIPSIS, Query, Selection, select
from tokenslim._internal.structured.learned import model_decision, rule_decision

__all__ = ["reduce_json", "reduce_json_lines", "looks_like_json", "MAX_DEPTH", "JSONOutcome"]

MAX_DEPTH = 64
"""Containers deeper than this are copied as their original text, never walked."""

IDENTITY_KEYS = frozenset(words("identity_keys"))
"""Keys that say what an object is (``name``, ``login``, ``title``: ``identity_keys`` of the
language file); a nested object the query does not reach keeps them."""

KEY_SIMILARITY = 0.7
"""How alike (cosine of word vectors) a key's word and a query word must be for the query to
name the key: "owns" names ``owner`` (0.76), "created" does not name ``user`` (0.57)."""

NEST_DEPTH = 8
"""Objects deeper than this keep every nested value (see ``_Reducer.unreached``): scoring a
value re-reads its text once per level above it, so the depth it is done at is bounded."""

_TOKEN = re.compile(
    r'"(?:[^"\\]|\\.)*"|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null|-?Infinity|NaN|[{}\[\]:,]|\s+', re.S
)
"""JSON's tokens, and the three constants :func:`json.loads` also reads (``NaN``, ``Infinity``, ``-Infinity``:
Python services write them)."""


@dataclass
class _Obj:
    start: int
    end: int = 0
    pairs: list[tuple[str, "_Node"]] = field(default_factory=list)


@dataclass
class _Arr:
    start: int
    end: int = 0
    items: list["_Node"] = field(default_factory=list)


@dataclass
class _Scalar:
    raw: str
    start: int
    end: int


_Node = Union[_Obj, _Arr, _Scalar]


@dataclass
class JSONOutcome:
    """What a JSON reduction did: the new text and per reason, the dropped texts."""

    text: str
    dropped: list[tuple[str, str, str]]  # (reason, detail, dropped original text)


def looks_like_json(text: str) -> bool:
    """Whether ``text`` opens and closes like a JSON object or array."""
    s = text.strip()
    return len(s) >= 2 and ((s[0] == "{" and s[-1] == "}") or (s[0] == "[" and s[-1] == "]"))


def _parse(text: str) -> _Node:
    """The token tree of ``text``, which :func:`json.loads` already accepted (iterative).

    Raises:
        ValueError: the tokens do not cover ``text`` or do not nest as JSON (a grammar
            :func:`json.loads` accepts beyond these tokens): the caller passes the text on whole.
    """
    stack: list[Any] = []
    key: list[str | None] = []
    root: _Node | None = None
    pos = 0
    for m in _TOKEN.finditer(text):
        if m.start() != pos:
            raise ValueError(f"JSON text not tokenized at offset {pos}")
        pos = m.end()
        tok = m.group()
        c = tok[0]
        if c.isspace() or c == ",":
            continue
        if c == ":":
            continue
        if c in "{[":
            node: _Node = _Obj(m.start()) if c == "{" else _Arr(m.start())
        elif c in "}]":
            if not stack:
                raise ValueError("unbalanced JSON brackets")
            done = stack.pop()
            key.pop()
            done.end = m.end()
            node = done
            if stack:
                _attach(stack, key, node)
            else:
                root = node
            continue
        else:
            node = _Scalar(tok, m.start(), m.end())
            top = stack[-1] if stack else None
            if isinstance(top, _Obj) and key[-1] is None:
                key[-1] = tok  # an object key
                continue
        if c in "{[":
            stack.append(node)
            key.append(None)
            continue
        if stack:
            _attach(stack, key, node)
        else:
            root = node
    if root is None or stack or pos != len(text):
        raise ValueError("JSON text ended inside a value")
    return root


def _attach(stack: list[Any], key: list[str | None], node: _Node) -> None:
    top = stack[-1]
    if isinstance(top, _Obj):
        k = key[-1]
        if k is None:
            raise ValueError("JSON object value without a key")
        top.pairs.append((k, node))
        key[-1] = None
    else:
        top.items.append(node)


def _shape(node: _Node) -> Any:
    if isinstance(node, _Obj):
        return ("o", tuple(sorted(k for k, _ in node.pairs)))
    if isinstance(node, _Arr):
        return ("a",)
    return ("s",)


def _text(raw: str) -> str:
    """A JSON string token's value (the token itself between its quotes when it has no escape)."""
    return raw[1:-1] if "\\" not in raw else str(json.loads(raw))


class _Reducer:
    def __init__(self, text: str, query: Query, *, top_k: int, min_score: float, min_items: int, max_keys: int) -> None:
        self.text = text
        self.query = query
        self.top_k = top_k
        self.min_score = min_score
        self.min_items = min_items
        self.max_keys = max_keys
        self.dropped: list[tuple[str, str, str]] = []
        self.named: dict[str, bool] = {}  # names()' answer per key

    def raw(self, node: _Node) -> str:
        return node.raw if isinstance(node, _Scalar) else self.text[node.start : node.end]

    def plain(self, node: _Node) -> str:
        """A value as a reader reads it: a string's text, anything else as written."""
        return _text(node.raw) if isinstance(node, _Scalar) and node.raw.startswith('"') else self.raw(node)

    def out(self, node: _Node, depth: int, parts: list[str]) -> None:
        if isinstance(node, _Scalar):
            parts.append(node.raw)
            return
        if depth >= MAX_DEPTH:
            parts.append(self.raw(node))
            return
        if isinstance(node, _Arr):
            self.out_array(node, depth, parts)
        else:
            self.out_object(node, depth, parts)

    def project(self, records: "tuple[list[str], list[list[str]]] | None") -> list[int] | None:
        """For a question over many items of one object shape, like the rows of a table (one that
        compares or counts them, or names none of them): the key positions to keep in every item,
        or ``None`` when the items differ in shape."""
        from tokenslim._internal.structured.table import _keep_columns

        if records is None or len(records[0]) <= 2:
            return None
        keys, rows = records
        cols = _keep_columns(self.query, keys, rows, 2)
        return list(range(len(keys))) if cols is None else cols  # every key needed: every item whole

    def records(self, node: _Arr) -> tuple[list[str], list[list[str]]] | None:
        """The keys and each item's values as text, for an array of objects that all have the same
        keys in the same order (rows of one table); ``None`` for any other array."""
        items = node.items
        if not items or not all(isinstance(it, _Obj) for it in items):
            return None
        keys = [k for k, _ in items[0].pairs]  # type: ignore[union-attr]
        if any([k for k, _ in it.pairs] != keys for it in items):  # type: ignore[union-attr]
            return None
        rows = [[self.plain(v) for _, v in it.pairs] for it in items]  # type: ignore[union-attr]
        return [_text(k) for k in keys], rows

    def out_array(self, node: _Arr, depth: int, parts: list[str]) -> None:
        items = node.items
        keep = list(range(len(items)))
        sel: Selection | None = None
        cols = None
        if len(items) >= self.min_items:
            raws = [self.raw(it) for it in items]
            sel = select(self.query, raws, top_k=self.top_k, min_score=self.min_score)
            ruled = rule_decision(self.query, raws, sel)
            # the items as rows, for the row model and for dropping keys (not for an item named by its id)
            records = self.records(node) if ruled is not False else None
            every = ruled if ruled is not None else model_decision(self.query, raws, sel, records[1] if records else None)
            if every:  # a question over many items (or naming none): every item, fewer keys
                cols = self.project(records)
        gone = [k for j, (k, _) in enumerate(items[0].pairs) if j not in cols] if cols is not None else []  # type: ignore[union-attr]
        if cols is not None and not gone:
            cols, sel = None, None  # every item with every key: each item walked as it is
        if cols is not None:
            parts.append("[")
            for n, it in enumerate(items):
                assert isinstance(it, _Obj)
                parts.append(", {" if n else "{")
                for m, j in enumerate(cols):
                    k, v = it.pairs[j]
                    if isinstance(v, _Scalar):
                        parts.append((", " if m else "") + k + ": " + v.raw)
                    else:
                        parts.append((", " if m else "") + k + ": ")
                        self.out(v, depth + 2, parts)
                parts.append("}")
                self.dropped.append(("irrelevant_keys", f"array item {n + 1}/{len(items)}: {len(gone)} keys", ", ".join(k + ": " + self.raw(v) for j, (k, v) in enumerate(it.pairs) if j not in cols)))
            names = ", ".join(json.loads(k) for k in gone)
            parts.append(", " + json.dumps(f"{ELLIPSIS} {len(gone)} key{'s' if len(gone) > 1 else ''} dropped from every item: {names}", ensure_ascii=False) + "]")
            return
        if sel is not None:
            kept = set(sel.keep)
            shapes = {_shape(items[i]) for i in kept}
            for i, it in enumerate(items):  # one example of each shape not yet shown
                s = _shape(it)
                if s not in shapes:
                    shapes.add(s)
                    kept.add(i)
            keep = sorted(kept)
        parts.append("[")
        first = True
        prev = -1
        for i in keep + [len(items)]:
            gap = i - prev - 1
            if gap > 0:
                for j in range(prev + 1, i):
                    self.dropped.append(("irrelevant_items", f"array item {j + 1}/{len(items)}", self.raw(items[j])))
                parts.append(("" if first else ", ") + json.dumps(f"{ELLIPSIS} {gap} item{'s' if gap > 1 else ''} dropped", ensure_ascii=False))
                first = False
            if i < len(items):
                if not first:
                    parts.append(", ")
                self.out(items[i], depth + 1, parts)
                first = False
            prev = i
        parts.append("]")

    def unreached(self, pairs: list[tuple[str, _Node]], keep: list[int]) -> set[int]:
        """The kept nested values (objects, arrays) of an object that the query does not reach:
        "What is the html_url of Test issue 8?" is answered by the issue's own fields, not by
        its ``user`` or ``labels``.

        The object's scalars answer the query words they hold (in a key or a value); a nested
        value is reached when the query names its key (:meth:`names`) or :func:`select` picks it,
        among its nested siblings, on the query words and identifiers no scalar holds (on every
        query word when the question compares or counts, :meth:`Query.aggregates`). When the
        query reaches nothing in the object, nothing is dropped: the object may be there for a
        reason the words do not show (``{"data": {...}}``)."""
        boxes = [i for i in keep if not isinstance(pairs[i][1], _Scalar) and self.size(pairs[i][1]) > 0]
        if not boxes:
            return set()
        reached = {i for i in boxes if self.names(pairs[i][0])}
        scalars = [_text(pairs[i][0]) + " " + self.plain(pairs[i][1]) for i in keep if isinstance(pairs[i][1], _Scalar)]
        held = {t for text in scalars if self.query.holds_term(text) for t in terms(text)} & set(self.query.terms)
        ids = {x for text in scalars for x in self.query.identifier_hits(text)}
        # a question that compares or counts ("which bridges carry the most traffic?") asks about
        # the nested values too, whatever the scalars hold: every query word ranks them
        rest = self.query if self.query.aggregates(()) else self.query.without(held, ids)
        if rest.terms or rest.identifiers:
            sel = select(rest, [_text(pairs[i][0]) + " " + self.raw(pairs[i][1]) for i in boxes], top_k=self.top_k, min_score=self.min_score)
            reached.update(boxes[j] for j in sel.keep)
        if not reached and not held and not ids:
            return set()
        return set(boxes) - reached

    def names(self, key: str) -> bool:
        """Whether the query names ``key`` by one of its words: a common prefix of at least 5
        letters that falls at most 1 letter short of the shorter word ("assigned" and
        ``assignee``, not "created" and ``creator``), or word vectors at least
        :data:`KEY_SIMILARITY` alike ("owns" and ``owner``, "cost" and ``price``;
        :func:`~tokenslim._internal.lang.word_vectors`)."""
        known = self.named.get(key)
        if known is not None:
            return known
        key_terms = terms(_text(key))
        known = any(
            (common := len(os.path.commonprefix([w, t]))) >= 5 and common >= min(len(w), len(t)) - 1
            for w in key_terms
            for t in self.query.terms
        ) or best_similarity(key_terms, self.query.terms) >= KEY_SIMILARITY
        self.named[key] = known
        return known

    @staticmethod
    def size(node: _Node) -> int:
        return len(node.pairs) if isinstance(node, _Obj) else len(node.items) if isinstance(node, _Arr) else 0

    @staticmethod
    def identity(node: _Obj) -> list[int]:
        """The positions of ``node``'s short scalars under a key of :data:`IDENTITY_KEYS`."""
        return [j for j, (k, v) in enumerate(node.pairs) if isinstance(v, _Scalar) and len(v.raw) <= 80 and _text(k).lower() in IDENTITY_KEYS]

    def stub(self, key: str, node: _Node) -> str:
        """An unreached nested value's stand-in, of the same type: an object keeps what names it
        (its scalar keys of :data:`IDENTITY_KEYS`, e.g. ``{"login": "octocat", "…": "17 keys
        dropped"}``), an array shows how many items went (``["… 3 items dropped"]``). What goes
        is recorded as dropped; a value no longer than its stand-in stays whole."""
        n = self.size(node)
        raw = self.raw(node)
        if isinstance(node, _Arr):
            what = f"{n} item{'s' if n > 1 else ''}"
            text = "[" + json.dumps(f"{ELLIPSIS} {what} dropped", ensure_ascii=False) + "]"
            if len(text) >= len(raw):
                return raw
            self.dropped.append(("irrelevant_items", f"key {key}: nested array, {what}", key + ": " + raw))
            return text
        assert isinstance(node, _Obj)
        ident = self.identity(node)
        what = f"{n - len(ident)} key{'s' if n - len(ident) > 1 else ''}"
        kept = "".join(node.pairs[j][0] + ": " + node.pairs[j][1].raw + ", " for j in ident)  # type: ignore[union-attr]
        text = "{" + kept + json.dumps(ELLIPSIS, ensure_ascii=False) + ": " + json.dumps(f"{what} dropped") + "}"
        if len(ident) == n or len(text) >= len(raw):
            return raw
        self.dropped.append(("irrelevant_keys", f"key {key}: nested object, {what}", key + ": " + raw))
        return text

    def out_object(self, node: _Obj, depth: int, parts: list[str]) -> None:
        pairs = node.pairs
        keep: list[int] = list(range(len(pairs)))
        drop: list[int] = []
        if len(pairs) > self.max_keys:
            # a wide object: keep the keys the query names or whose values it matches, and short scalars
            texts = [k + " " + self.raw(v) for k, v in pairs]
            sel = select(self.query, texts, top_k=self.max_keys, min_score=self.min_score)
            kept = set(sel.keep)
            qt = set(self.query.terms)
            kept.update(i for i, (k, _) in enumerate(pairs) if qt & set(terms(k)))  # a key the query names
            # then, up to max_keys keys in all: nested objects that a key of theirs names, as that key
            # alone ("user": {"login": ...}: who or what the object is about), and short scalars (ids,
            # names, counts, flags), each in order
            room = self.max_keys - len(kept)
            named = set(itertools.islice((i for i, (_, v) in enumerate(pairs) if i not in kept and isinstance(v, _Obj) and self.identity(v)), max(0, room)))
            kept |= named
            room -= len(named)
            for i, (_, v) in enumerate(pairs):
                if room <= 0:
                    break
                if i not in kept and isinstance(v, _Scalar) and len(v.raw) <= 40:
                    kept.add(i)
                    room -= 1
            keep = sorted(kept)
            drop = [i for i in range(len(pairs)) if i not in kept]
        else:
            named = set()
        stub = (self.unreached(pairs, keep) if depth < NEST_DEPTH else set()) | named
        parts.append("{")
        for n, i in enumerate(keep):
            if n:
                parts.append(", ")
            k, v = pairs[i]
            parts.append(k + ": ")
            if i in stub:
                parts.append(self.stub(k, v))
            else:
                self.out(v, depth + 1, parts)
        if drop:
            for i in drop:
                k, v = pairs[i]
                self.dropped.append(("irrelevant_keys", f"key {k}", k + ": " + self.raw(v)))
            if keep:
                parts.append(", ")
            marker = json.dumps(ELLIPSIS, ensure_ascii=False) + ": " + json.dumps(f"{len(drop)} key{'s' if len(drop) > 1 else ''} dropped")
            parts.append(marker)
        parts.append("}")


def reduce_json(text: str, query: Query, *, top_k: int, min_score: float, min_items: int, max_keys: int) -> JSONOutcome | None:
    """The reduced JSON text, or ``None`` when ``text`` is not valid JSON or nothing was dropped."""
    try:
        json.loads(text)
        root = _parse(text)
    except (ValueError, RecursionError):
        return None
    if isinstance(root, _Scalar):
        return None
    r = _Reducer(text, query, top_k=top_k, min_score=min_score, min_items=min_items, max_keys=max_keys)
    parts: list[str] = []
    r.out(root, 0, parts)
    if not r.dropped:
        return None
    lead = text[: len(text) - len(text.lstrip())]
    trail = text[len(text.rstrip()) :]
    return JSONOutcome(lead + "".join(parts) + trail, r.dropped)


def reduce_json_lines(text: str, query: Query, *, top_k: int, min_score: float, min_items: int) -> JSONOutcome | None:
    """JSON Lines: whole lines kept or dropped (kept lines byte-exact), one marker line
    (``{"…": "12 lines dropped"}``) per gap; one example line of each shape kept."""
    lines = text.splitlines(keepends=True)
    idx = [i for i, ln in enumerate(lines) if ln.strip()]
    if len(idx) < min_items:
        return None
    try:
        values = [json.loads(lines[i]) for i in idx]
    except (ValueError, RecursionError):
        return None
    sel = select(query, [lines[i] for i in idx], top_k=top_k, min_score=min_score)
    kept = set(sel.keep)
    shapes = {("o", tuple(sorted(values[k]))) if isinstance(values[k], dict) else type(values[k]).__name__ for k in kept}
    for k, v in enumerate(values):
        s = ("o", tuple(sorted(v))) if isinstance(v, dict) else type(v).__name__
        if s not in shapes:
            shapes.add(s)
            kept.add(k)
    if len(kept) == len(idx):
        return None
    out: list[str] = []
    dropped: list[tuple[str, str, str]] = []
    gap = 0
    for k, i in enumerate(idx):
        if k in kept:
            if gap:
                out.append(json.dumps({ELLIPSIS: f"{gap} line{'s' if gap > 1 else ''} dropped"}, ensure_ascii=False) + "\n")
                gap = 0
            out.append(lines[i] if lines[i].endswith("\n") else lines[i] + "\n")
        else:
            gap += 1
            dropped.append(("irrelevant_items", f"line {i + 1}", lines[i]))
    if gap:
        out.append(json.dumps({ELLIPSIS: f"{gap} line{'s' if gap > 1 else ''} dropped"}, ensure_ascii=False) + "\n")
    new = "".join(out)
    if not text.endswith("\n"):
        new = new.rstrip("\n")
    return JSONOutcome(new, dropped)
