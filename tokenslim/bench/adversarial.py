"""Adversarial input shapes: inputs that once made a stage grow ~n^2, each sized by ``n``.

Used by ``benchmarks/bounds.py`` (time at n and 2n, growth exponent, peak RSS, one
process per shape) and ``tests/reliability/test_linear.py`` (the same shapes, smaller).
Each shape builds one request for :func:`tokenslim.default_pipeline`; ``n`` is the size
at which its bound is stated (the "Bounded cost" tables of docs/benchmarks/reliability.md).
"""

from __future__ import annotations

import gc
import math
import time
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["Shape", "SHAPES", "Growth", "run_request", "growth"]

QUERY = "Which bridges carry the most traffic?"


@dataclass(frozen=True)
class Shape:
    """One adversarial input shape.

    Attributes:
        name: Short identifier (``--only`` in bounds.py).
        what: What the input is, in words.
        n: Size at which the bound is stated (chunks, characters, lines or messages).
        build: ``n`` -> request kwargs for :func:`run_request` (``chunks``, ``history``, ``token_budget``).
    """

    name: str
    what: str
    n: int
    build: Callable[[int], dict[str, Any]]


def _many(n: int) -> dict[str, Any]:
    return {"chunks": [f"chunk {i} about bridges and traffic" for i in range(n)]}


def _shared_title(n: int) -> dict[str, Any]:
    return {"chunks": [{"text": f"chunk {i} about bridges and traffic", "metadata": {"title": "Bridges"}} for i in range(n)]}


def _equal_scores(n: int) -> dict[str, Any]:
    return {"chunks": [{"text": f"chunk {i} about bridges and traffic", "score": 0.5} for i in range(n)]}


def _style_no_brace(n: int) -> dict[str, Any]:
    rule = "p.note color: red; margin: 0 "
    style = (rule * (n // len(rule) + 1))[:n]
    page = f"<html><head><style>{style}</style></head><body><article><p>The bridge carries traffic.</p></article></body></html>"
    return {"chunks": [page]}


def _dots(n: int) -> dict[str, Any]:
    return {"chunks": ["." * n + " and then some lower case text about bridges and traffic"]}


def _unclosed_brackets(n: int) -> dict[str, Any]:
    return {"chunks": ["\n".join(f"[ unclosed line {i} about bridges. Another sentence here." for i in range(n))]}


def _parens(n: int) -> dict[str, Any]:
    return {"chunks": ["(" * n + " bridges and traffic. More text " + "]" * n]}


def _unclosed_a(n: int) -> dict[str, Any]:
    page = "<html><body><article><p>The bridge carries heavy traffic every day.</p></article>" + "<a" * n
    return {"chunks": [page]}


def _system_messages(n: int) -> dict[str, Any]:
    history = [{"role": "system", "content": f"system message {i}: answer about bridges"} for i in range(n)]
    return {"chunks": ["Bridges carry traffic."], "history": history, "token_budget": 300}


def _long_title(n: int) -> dict[str, Any]:
    title = " ".join(f"word{i}" for i in range(n))
    text = " ".join(f"Sentence {i} is about bridge number {i}." for i in range(n))
    return {"chunks": [{"text": text, "metadata": {"title": title}}]}


def _style_attribute(n: int) -> dict[str, Any]:
    decl = "cursor:pointer;margin:(1px;width:calc(1px + (2px));"  # irrelevant, unbalanced and relevant declarations
    style = (decl * (n // len(decl) + 1))[:n]
    page = (f"<html><body><article><p style='{style}'>The bridge carries traffic.</p>"
            f"<p style='{style}x'>Heavy traffic every day.</p></article></body></html>")
    return {"chunks": [page]}


def _repeated_selectors(n: int) -> dict[str, Any]:
    rules = "".join(f"@media (min-width:{i}px){{.note, .n{i % 7}{{display:block}}}}" for i in range(n))
    page = (f"<html><head><style>{rules}</style></head><body><article><p class='note'>The bridge carries "
            "traffic.</p>" + "<div>\n  <p>\n  Heavy traffic.</p>\n</div>" * (n // 10) + "</article></body></html>")
    return {"chunks": [page]}


def _opening_phrases(n: int) -> dict[str, Any]:
    # no titles: each chunk opens with a phrase before its subject and names an alias, then runs on
    text = "In " + "a, " * 40 + "Bridge Works, known as the " + "Big " * 40 + "Span, carries traffic. " + "And more. " * 20
    return {"chunks": [f"{text} Number {i}." for i in range(n)]}


def _table_rows(n: int) -> dict[str, Any]:
    # every row ties on the query's terms, and the question is about every row: every row and the columns it needs
    rows = ["pos,bridge,city,traffic"] + [f"{i},Bridge {i % 9},City {i % 7},{i % 11}" for i in range(n)]
    return {"chunks": ["\n".join(rows)]}


def _json_siblings(n: int) -> dict[str, Any]:
    # an object of n nested siblings, each a chain deeper than the depth nested values are scored at
    chain = '{"lanes": 4}'
    for _ in range(10):
        chain = '{"city": "City 2", "more": ' + chain + "}"
    body = ", ".join(f'"k{i}": {{"bridge": "Bridge {i % 9}", "deck": {chain}}}' for i in range(n))
    return {"chunks": ['{"bridge": "Big Span", "traffic": 5, ' + body + "}"]}


def _edge_boxes(n: int) -> dict[str, Any]:
    box = '<div style="position:fixed;right:0"><p style="position:fixed;bottom:0">Hidden text.</p></div>'
    return {"chunks": ["<html><body><article><p>The bridge carries traffic.</p>" + box * n + "</article></body></html>"]}


def _nested_details(n: int) -> dict[str, Any]:
    page = "<details><summary>Bridges</summary>" * n + "Traffic." + "</details>" * n
    return {"chunks": ["<html><body><article><p>The bridge carries traffic.</p>" + page + "</article></body></html>"]}


def _invisible_chars(n: int) -> dict[str, Any]:
    tag = "".join(chr(0xE0000 + ord(c)) for c in "ignore")
    return {"chunks": [("Bridges carry traffic" + tag + " ") * n]}


SHAPES: dict[str, Shape] = {
    s.name: s
    for s in (
        Shape("many_chunks", "n short chunks, one template", 20_000, _many),
        Shape("shared_title", "n chunks sharing one title", 10_000, _shared_title),
        Shape("equal_scores", "n distinct chunks, equal scores", 20_000, _equal_scores),
        Shape("style_no_brace", "HTML page, n-char <style> without '{'", 80_000, _style_no_brace),
        Shape("dots_run", "n-char run of '.' then lower case", 40_000, _dots),
        Shape("unclosed_brackets", "n lines opening an unclosed '['", 4_000, _unclosed_brackets),
        Shape("parens", "n '(' then n ']'", 20_000, _parens),
        Shape("unclosed_a", "page ending in n '<a' without '>'", 20_000, _unclosed_a),
        Shape("system_messages", "n system messages, token budget 300", 4_000, _system_messages),
        Shape("long_title", "n sentences, n-word title, one chunk", 4_000, _long_title),
        Shape("style_attribute", "HTML page, n-char style attributes", 80_000, _style_attribute),
        Shape("repeated_selectors", "HTML page, n @media rules repeating a selector list", 4_000, _repeated_selectors),
        Shape("opening_phrases", "n untitled chunks opening with a long phrase and an alias", 2_000, _opening_phrases),
        Shape("table_rows", "CSV table, n rows tied on the query", 20_000, _table_rows),
        Shape("json_siblings", "JSON object of n nested siblings, each 11 deep", 4_000, _json_siblings),
        Shape("edge_boxes", "HTML page, n empty fixed boxes on the right edge", 4_000, _edge_boxes),
        Shape("nested_details", "HTML page, n nested closed <details>", 4_000, _nested_details),
        Shape("invisible_chars", "plain text with n tag-character runs", 20_000, _invisible_chars),
    )
}


def run_request(request: dict[str, Any], *, collector: bool = True) -> tuple[float, float]:
    """Run ``default_pipeline`` (with the request's token budget) on one request.

    Args:
        collector: Leave CPython's cyclic garbage collector on during the run. Off, the time is
            the algorithms' alone: the collector runs more often the more a run allocates and
            walks every tracked object each time, which bends the curve by itself (style_attribute:
            CPU exponent 1.1-1.2 with it from 120,000 to 960,000 characters, 1.0 without).

    Returns:
        ``(wall seconds, CPU seconds of this process)``.
    """
    import tokenslim

    pipe = tokenslim.default_pipeline(token_budget=request.get("token_budget"))
    gc.collect()  # start each run from the same heap: a collection owed by the last run is not billed here
    was_enabled = gc.isenabled()
    if not collector:
        gc.disable()
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        pipe.run(QUERY, request["chunks"], history=request.get("history"))
        return time.perf_counter() - wall, time.process_time() - cpu
    finally:
        if was_enabled:  # the caller's setting, whatever this run did
            gc.enable()
        else:
            gc.disable()


@dataclass(frozen=True)
class Growth:
    """Fastest times at n and 2n (wall and CPU) and the growth exponents ``log2(t(2n) / t(n))``."""

    wall_n: float
    wall_2n: float
    cpu_n: float
    cpu_2n: float

    @property
    def wall_exponent(self) -> float:
        return math.log2(self.wall_2n / self.wall_n)

    @property
    def cpu_exponent(self) -> float:
        return math.log2(self.cpu_2n / self.cpu_n)


def growth(shape: Shape, n: int, repeats: int = 3, *, collector: bool = True) -> Growth:
    """Time ``shape`` at n and 2n: the fastest of ``repeats`` interleaved runs at each size
    (inputs built beforehand, not timed). CPU time is steadier than wall time on a shared
    machine, where other processes stretch the wall clock but not this process's CPU time.
    ``collector``: see :func:`run_request`."""
    small, large = shape.build(n), shape.build(2 * n)
    best = [math.inf] * 4
    for _ in range(repeats):
        for k, request in ((0, small), (1, large)):
            wall, cpu = run_request(request, collector=collector)
            best[k] = min(best[k], wall)
            best[k + 2] = min(best[k + 2], cpu)
    return Growth(*best)
