"""Structure-aware, extractive reduction of JSON, tables, code and logs (issue 26).

:func:`reduce_text` is pure: it reads a text and a query and returns what to keep.
Every kept byte is original apart from the elision markers, which all contain
:data:`ELLIPSIS` (``…``); JSON is the one kind re-serialised (compact whitespace, the
original tokens for every key and scalar). The stage
:class:`tokenslim.stages.ReduceStructured` applies it to chunks and history messages.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from tokenslim._internal.structured._select import ELLIPSIS, Query
from tokenslim._internal.structured.code import reduce_braced, reduce_python
from tokenslim._internal.structured.detect import Segment, segments
from tokenslim._internal.structured.jsondata import reduce_json, reduce_json_lines
from tokenslim._internal.structured.log import reduce_log
from tokenslim._internal.structured.table import reduce_delimited, reduce_html_table, reduce_markdown_table
from tokenslim._internal.structured.yamldoc import reduce_yaml

if TYPE_CHECKING:
    from tokenslim._result import Result

__all__ = ["hold_structured", "Options", "Reduction", "reduce_text", "Query", "ELLIPSIS", "STRUCTURED_KEY", "segments"]

STRUCTURED_KEY = "tokenslim_structured"
"""Chunk metadata key ReduceStructured sets on a chunk that is structured from end to end
(its value is the kind, e.g. ``"json"``); CompressDocuments leaves such chunks alone."""

_SHELL = {"sh", "bash", "shell", "zsh", "ruby", "rb", "perl", "r", "yaml", "yml", "toml", "dockerfile", "makefile"}


@dataclass(frozen=True)
class Options:
    """Reduction knobs (see :class:`tokenslim.stages.ReduceStructured` for their meaning)."""

    top_k: int = 5
    min_score: float = 0.5
    min_items: int = 8
    max_keys: int = 24
    max_columns: int = 8
    min_code_units: int = 3


@dataclass
class Reduction:
    """The result of :func:`reduce_text`.

    Attributes:
        text: The new text (the input itself when nothing was dropped).
        kinds: The kind of each structured part found, in order (``"json"``, ``"log"``...).
        dropped: ``(reason, detail, original text)`` for every dropped unit.
        passed: ``(kind, why)`` for each structured part left untouched.
        whole: The kind, when the text is one structured part end to end, else ``None``.
    """

    text: str
    kinds: list[str] = field(default_factory=list)
    dropped: list[tuple[str, str, str]] = field(default_factory=list)
    passed: list[tuple[str, str]] = field(default_factory=list)
    whole: str | None = None

    @property
    def changed(self) -> bool:
        return bool(self.dropped)


def _reduce_part(kind: str, lang: str, text: str, q: Query, o: Options) -> tuple[str, list[tuple[str, str, str]]] | None:
    r: Any = None  # each reducer's outcome type has .text and .dropped
    if kind == "json":
        r = reduce_json(text, q, top_k=o.top_k, min_score=o.min_score, min_items=o.min_items, max_keys=o.max_keys)
    elif kind == "jsonl":
        r = reduce_json_lines(text, q, top_k=o.top_k, min_score=o.min_score, min_items=o.min_items)
    elif kind == "markdown_table":
        r = reduce_markdown_table(text, q, top_k=o.top_k, min_score=o.min_score, min_items=o.min_items, max_columns=o.max_columns)
    elif kind == "csv":
        r = reduce_delimited(text, q, top_k=o.top_k, min_score=o.min_score, min_items=o.min_items, max_columns=o.max_columns)
    elif kind == "html_table":
        r = reduce_html_table(text, q, top_k=o.top_k, min_score=o.min_score, min_items=o.min_items)
    elif kind == "log":
        r = reduce_log(text, q, top_k=o.top_k, min_score=o.min_score, min_items=o.min_items)
    elif kind == "yaml":
        r = reduce_yaml(text, q, top_k=o.top_k, min_score=o.min_score, min_items=o.min_items, max_keys=o.max_keys)
    elif kind == "python":
        r = reduce_python(text, q, top_k=2, min_score=o.min_score, min_items=o.min_code_units)
    elif kind == "code":
        comment = "#" if lang.lower() in _SHELL else "//"
        r = reduce_braced(text, q, top_k=2, min_score=o.min_score, min_items=o.min_code_units, comment=comment)
    if r is None:
        return None
    return r.text, r.dropped


def reduce_text(text: str, query: str | Query, options: Options | None = None) -> Reduction:
    """Reduce every structured part of ``text`` for ``query`` (pure; prose is left as it is)."""
    q = query if isinstance(query, Query) else Query.of(query)
    o = options or Options()
    segs: list[Segment] = segments(text)
    out: list[str] = []
    red = Reduction(text)
    if len(segs) == 1 and segs[0].kind != "prose":
        red.whole = segs[0].kind
    for s in segs:
        part = text[s.start : s.end]
        if s.kind == "prose":
            out.append(part)
            continue
        red.kinds.append(s.kind)
        if s.kind == "malformed_json":
            red.passed.append((s.kind, "not reduced: does not parse as JSON"))
            out.append(part)
            continue
        try:
            done = _reduce_part(s.kind, s.lang, part, q, o)
        except (csv.Error, RecursionError, ValueError) as exc:
            # a part the detector took for structure but a reader refuses (a CSV field past
            # csv's size limit, nesting past the recursion limit): passed through, not a crash
            red.passed.append((s.kind, f"not reduced: {type(exc).__name__}: {exc}"[:200]))
            out.append(part)
            continue
        if done is not None and len(done[0]) >= len(part):
            done = None  # markers for tiny gaps can outweigh what they replace
        if done is None:
            red.passed.append((s.kind, "nothing to drop"))
            out.append(part)
            continue
        out.append(done[0])
        red.dropped.extend(done[1])
    if red.dropped:
        red.text = "".join(out)
    return red


def hold_structured(result: "Result", apply: "Callable[[Result], Result]") -> "Result":
    """Run ``apply`` (a stage's apply) on ``result`` with the chunks marked
    :data:`STRUCTURED_KEY` held back, then put them back in their places.

    For :class:`~tokenslim.stages.CompressDocuments`: a chunk ReduceStructured already
    reduced is kept whole, never split into "sentences" or dropped by a prose budget.
    """
    chunks = result.chunks
    held = [STRUCTURED_KEY in c.metadata for c in chunks]
    if not any(held):
        return apply(result)
    result.chunks = [c for c, h in zip(chunks, held) if not h]
    out = apply(result)
    after = {c.id: c for c in out.chunks}
    out.chunks = [c if h else after[c.id] for c, h in zip(chunks, held) if h or c.id in after]
    return out
