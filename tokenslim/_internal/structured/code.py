"""Source code: the functions and classes the query needs whole, the rest as their
signatures and docstrings, and the imports that the kept code uses.

Python is read with :mod:`ast`: every ``def``/``class`` (methods inside classes too)
is a unit; a dropped body becomes one line ``...  # … 23 lines dropped`` at the body's
indentation, so the result still parses as Python. Other languages use an indentation
and brace heuristic: a top-level line ending in ``{`` opens a unit that runs to the
matching line that closes it at the same indentation; a dropped body becomes
``  // … 23 lines dropped`` (``#`` for shell-like languages).

A unit is relevant when its name is a query identifier (``parse_header``,
``getUserById``) or word, or by BM25 over the units' text
(:func:`~tokenslim._internal.structured._select.select`). A relevant method keeps
its class's header and docstring. An import is kept when a name it binds is used
by kept code; other top-level statements are kept.
"""

from __future__ import annotations

import ast
import functools
import re
from collections import Counter
from dataclasses import dataclass

from tokenslim._internal.structured._select import ELLIPSIS, Query, select

__all__ = ["reduce_python", "reduce_braced", "CodeOutcome", "is_python", "looks_like_code"]

_NAME = re.compile(r"(?<![\w.])\w+")  # whole names, not attributes ("x.os" does not use os)
_BRACE_OPEN = re.compile(r"^(\s*)\S.*\{\s*(?://.*)?$")
_CODE_LINE = re.compile(r"[;{}]\s*$|^\s*(?:#include|import |from \S+ import|def |class |function |func |fn |package |public |private |return\b|const |let |var )")


@dataclass
class CodeOutcome:
    text: str
    dropped: list[tuple[str, str, str]]


@functools.lru_cache(maxsize=4)
def _tree(text: str) -> ast.Module | None:
    """The module's syntax tree, or None; detection and reduction parse a text once
    (the tree is only read, never changed, so sharing it between threads is safe)."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None


def is_python(text: str) -> bool:
    """Whether ``text`` parses as Python and defines a function or class (not a bare expression)."""
    tree = _tree(text)
    if tree is None:
        return False
    return any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for n in tree.body)


def looks_like_code(lines: list[str]) -> bool:
    """Brace-language heuristic: most non-empty lines end in ``;{}`` or open with a keyword."""
    body = [ln for ln in lines if ln.strip()]
    if len(body) < 5:
        return False
    hits = sum(1 for ln in body[:300] if _CODE_LINE.search(ln))
    return hits >= 0.5 * min(len(body), 300) and any(ln.rstrip().endswith("{") for ln in body)


@dataclass
class _Unit:
    name: str
    start: int  # first line (0-based, decorators included)
    body: int  # first body line, after signature and docstring
    end: int  # exclusive
    parent: int | None
    indent: str


def _python_units(tree: ast.Module, lines: list[str]) -> list[_Unit]:
    units: list[_Unit] = []

    def visit(nodes: list[ast.stmt], parent: int | None, depth: int) -> None:
        if depth > 8:
            return
        for n in nodes:
            if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            start = min([n.lineno] + [d.lineno for d in n.decorator_list]) - 1
            end = n.end_lineno or n.lineno
            first = n.body[0]
            body = first.lineno - 1
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                body = first.end_lineno or first.lineno  # keep the docstring
            if body <= n.lineno - 1:  # a one-line definition
                body = end
            line = lines[first.lineno - 1] if first.lineno - 1 < len(lines) else ""
            indent = line[: len(line) - len(line.lstrip())]
            units.append(_Unit(n.name, start, body, end, parent, indent))
            if isinstance(n, ast.ClassDef):
                visit(n.body, len(units) - 1, depth + 1)

    visit(tree.body, None, 0)
    return units


def _relevant(query: Query, units: list[_Unit], lines: list[str], top_k: int, min_score: float) -> set[int]:
    texts = ["".join(lines[u.start : u.end]) for u in units]
    sel = select(query, texts, top_k=top_k, min_score=min_score)
    keep = set(sel.by_identifier) if sel.by_identifier else set(sel.keep)
    qt = set(query.terms)
    ids = {i.lower() for i in query.identifiers}
    words = set(re.findall(r"\w+", query.text.lower()))  # unstemmed: "getcaps" is a name, not a plural
    named = {k for k, u in enumerate(units) if u.name.lower() in ids or u.name.lower() in qt or u.name.lower() in words}
    if named:
        # a function named by the question wins over units that merely mention the name
        keep = named | {k for k in sel.keep if k not in sel.by_identifier and sel.scores[k] >= max(sel.scores[j] for j in named)}
    elif not keep and sel.keep:
        keep = set(sel.keep)
    # a method named `name` in a kept class is kept through its class; a kept class keeps all its methods
    return keep


def _reduce_units(
    lines: list[str], units: list[_Unit], keep: set[int], comment: str, python: bool, skip: frozenset[int] = frozenset()
) -> tuple[list[str], list[tuple[str, str, str]], list[bool]]:
    """Lines out (with markers) and the dropped bodies; ``shown[i]`` says line i is kept."""
    whole: set[int] = set(keep)
    for k in sorted(keep):  # a kept class keeps its methods
        for j, u in enumerate(units):
            if u.parent is not None and u.parent in whole:
                whole.add(j)
    # a unit that holds a kept unit shows its header, not its whole body
    holders = {units[k].parent for k in whole if units[k].parent is not None}
    state = [i not in skip for i in range(len(lines))]
    markers: dict[int, str] = {}
    dropped: list[tuple[str, str, str]] = []
    for j, u in enumerate(units):
        if j in whole or j in holders:
            continue
        if u.parent is not None and u.parent not in whole and u.parent not in holders:
            continue  # inside a stub already
        if u.body >= u.end:
            continue
        n = u.end - u.body
        for i in range(u.body, u.end):
            state[i] = False
        stub = "..." + f"  {comment} {ELLIPSIS} {n} line{'s' if n > 1 else ''} dropped" if python else f"{comment} {ELLIPSIS} {n} line{'s' if n > 1 else ''} dropped"
        if not python and u.end - 1 >= u.body and lines[u.end - 1].strip().startswith("}"):
            state[u.end - 1] = True  # the closing brace stays
            n -= 1
            stub = f"{comment} {ELLIPSIS} {n} line{'s' if n > 1 else ''} dropped"
        markers[u.body] = u.indent + stub + "\n"
        dropped.append(("irrelevant_code", f"body of {u.name} (lines {u.body + 1}-{u.end})", "".join(lines[u.body : u.end])))
    out: list[str] = []
    for i, ln in enumerate(lines):
        if i in markers:
            out.append(markers[i])
        if state[i]:
            out.append(ln if ln.endswith("\n") else ln + "\n")
    return out, dropped, state


def _imports_used(text_out: str, lines: list[str], tree: ast.Module, dropped: list[tuple[str, str, str]]) -> set[int]:
    """Line indices of top-level imports none of whose names the kept code uses."""
    used = Counter(_NAME.findall(text_out))  # one pass over the kept code: each name's uses
    gone: set[int] = set()
    for n in tree.body:
        if not isinstance(n, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(n, ast.ImportFrom) and n.module == "__future__":
            continue
        names = [(a.asname or a.name).split(".")[0] for a in n.names]
        a, b = n.lineno - 1, (n.end_lineno or n.lineno)
        # a name counts as used when it appears outside the import itself (not as an attribute: ".os")
        if any(nm == "*" or used[nm] > _NAME.findall("".join(lines[a:b])).count(nm) for nm in names):
            continue
        gone.update(range(a, b))
        dropped.append(("unused_import", f"line {a + 1}", "".join(lines[a:b])))
    return gone


def reduce_python(text: str, query: Query, *, top_k: int, min_score: float, min_items: int) -> CodeOutcome | None:
    tree = _tree(text)
    if tree is None:
        return None
    lines = text.splitlines(keepends=True)
    units = _python_units(tree, lines)
    if len(units) < min_items:
        return None
    keep = _relevant(query, units, lines, top_k, min_score)
    out, dropped, state = _reduce_units(lines, units, keep, "#", True)
    if not dropped:
        return None
    gone = _imports_used("".join(out), lines, tree, dropped)
    if gone:
        out, _, _ = _reduce_units(lines, units, keep, "#", True, frozenset(gone))
    joined = "".join(out)
    new = joined if text.endswith("\n") else joined.rstrip("\n")
    return CodeOutcome(new, dropped)


def _braced_units(lines: list[str]) -> list[_Unit]:
    units: list[_Unit] = []
    i = 0
    n = len(lines)
    while i < n:
        m = _BRACE_OPEN.match(lines[i])
        if not m or len(m.group(1)) > 4:
            i += 1
            continue
        indent = m.group(1)
        # the unit ends at the first later line that starts with `}` at this indentation
        j = i + 1
        while j < n and not (lines[j].startswith(indent + "}") and not lines[j].startswith(indent + " ")):
            j += 1
        if j >= n:
            i += 1
            continue
        name_m = re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:\(|<|\{|$)", lines[i].split("(")[0] + "(")
        name = name_m[-1] if name_m else lines[i].strip()[:40]
        body_indent = lines[i + 1][: len(lines[i + 1]) - len(lines[i + 1].lstrip())] if i + 1 < n else indent + "  "
        units.append(_Unit(name, i, i + 1, j + 1, None, body_indent or indent + "  "))
        i = j + 1
    return units


def reduce_braced(text: str, query: Query, *, top_k: int, min_score: float, min_items: int, comment: str = "//") -> CodeOutcome | None:
    lines = text.splitlines(keepends=True)
    units = _braced_units(lines)
    if len(units) < min_items:
        return None
    keep = _relevant(query, units, lines, top_k, min_score)
    out, dropped, _ = _reduce_units(lines, units, keep, comment, False)
    if not dropped:
        return None
    joined = "".join(out)
    return CodeOutcome(joined if text.endswith("\n") else joined.rstrip("\n"), dropped)
