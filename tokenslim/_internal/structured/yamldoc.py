"""YAML block sequences and mappings: the items and keys the query needs, the rest elided by a comment.

Line based, so kept lines are byte-exact and no YAML library is needed:

* a sequence item is a line ``<indent>- ...`` with the more-indented lines under it;
  consecutive items at one indentation are a sequence. In a sequence of at least
  ``min_items`` items, items are chosen by
  :func:`~tokenslim._internal.structured._select.select` (plus the first, as an example of
  the shape), and each run of dropped items becomes one comment line
  ``<indent># … 12 items dropped``;
* a mapping entry is a line ``<indent>key: ...`` with the more-indented lines (or, for a
  block sequence value, the ``- `` lines at the key's own indentation) under it; consecutive
  entries at one indentation are a mapping. A mapping of more than ``max_keys`` entries (a
  ConfigMap's ``data``, a long settings file) keeps the entries chosen the same way, and each
  run of dropped entries becomes ``<indent># … 12 keys dropped: a, b, c, d, e, f and 6 more``.

The document is still valid YAML and means the same for every kept key and item. Outer
blocks are reduced first; a block inside a dropped one goes with it. Flow style
(``[a, b]``, ``{k: v}``) is left as it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from tokenslim._internal.structured._select import ELLIPSIS, Query, select

__all__ = ["reduce_yaml", "YAMLOutcome"]

_ITEM = re.compile(r"^(\s*)- ")
_NAMED = 6
"""Dropped keys a marker names (the rest are counted): enough to show what exists, few enough to stay short."""
_ENTRY = re.compile(r"^( *)((?:\"[^\"\n]*\"|'[^'\n]*'|[^\s#\-\"'][^:#\n]*?)):(?:\s|$)")


@dataclass
class YAMLOutcome:
    text: str
    dropped: list[tuple[str, str, str]]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _entries(lines: list[str], ind: list[int]) -> list[tuple[int, int, int, str]]:
    """Every mapping entry: (indent, first line, end line exclusive, key). An entry ends before
    the first non-blank line indented no deeper than it (a ``- `` item at its own indentation is
    its block-sequence value), trailing blank lines excluded. One pass with a stack of open
    entries, so deep nesting stays linear."""
    ends: dict[int, int] = {}
    stack: list[tuple[int, int]] = []  # (indent, first line) of the entries still open
    last = -1  # the last non-blank line seen
    for j, ln in enumerate(lines):
        if not ln.strip():
            continue
        item = _ITEM.match(ln) is not None
        while stack and (ind[j] < stack[-1][0] or (ind[j] == stack[-1][0] and not item)):
            ends[stack.pop()[1]] = last + 1
        if _ENTRY.match(ln):
            stack.append((ind[j], j))
        last = j
    for _, i in stack:
        ends[i] = last + 1
    out = []
    for i in sorted(ends):
        m = _ENTRY.match(lines[i])
        assert m is not None
        out.append((ind[i], i, ends[i], m.group(2).strip("\"'")))
    return out


def _runs(keep: set[int], total: int) -> list[list[int]]:
    """Consecutive indices below ``total`` that are not in ``keep``."""
    runs: list[list[int]] = []
    for k in range(total):
        if k in keep:
            continue
        if runs and runs[-1][-1] == k - 1:
            runs[-1].append(k)
        else:
            runs.append([k])
    return runs


def _mappings(lines: list[str], ind: list[int]) -> list[list[tuple[int, int, int, str]]]:
    """Mappings: consecutive entries at one indentation, each starting where the last ended
    (blank and comment lines between them allowed). One open group per indentation, so the
    grouping is linear in the entries."""
    groups: list[list[tuple[int, int, int, str]]] = []
    open_at: dict[int, list[tuple[int, int, int, str]]] = {}
    for e in _entries(lines, ind):
        g = open_at.get(e[0])
        if g is not None and all(not ln.strip() or ln.lstrip().startswith("#") for ln in lines[g[-1][2] : e[1]]):
            g.append(e)
            continue
        open_at[e[0]] = [e]
        groups.append(open_at[e[0]])
    return groups


def _elide(
    spans: list[tuple[int, int, int]], keep: set[int], marker: "Callable[[list[int]], str]", reason: str, what: str,
    lines: list[str], gone: list[bool], markers: dict[int, str], dropped: list[tuple[str, str, str]],
) -> None:
    """Drop the ``(indent, first line, end)`` spans not in ``keep``: each run of them becomes one
    comment line ``marker(run)`` at the run's indentation, and one recorded drop."""
    for run in _runs(keep, len(spans)):
        d, a, _ = spans[run[0]]
        b = spans[run[-1]][2]
        for i in range(a, b):
            gone[i] = True
        markers[a] = " " * d + f"# {ELLIPSIS} {marker(run)}\n"
        dropped.append((reason, f"{what} {run[0] + 1}-{run[-1] + 1}/{len(spans)} at line {a + 1}", "".join(lines[a:b])))


def reduce_yaml(
    text: str, query: Query, *, top_k: int, min_score: float, min_items: int, max_keys: int = 24
) -> YAMLOutcome | None:
    lines = text.splitlines(keepends=True)
    n = len(lines)
    # every item: (indent, first line, end line exclusive)
    # an item ends at the first non-blank line indented no deeper than it (one pass, a stack of open items)
    ind = [_indent(ln) for ln in lines]
    ends: dict[int, int] = {}
    stack: list[int] = []
    for j, ln in enumerate(lines):
        if not ln.strip():
            continue
        while stack and ind[j] <= ind[stack[-1]]:
            ends[stack.pop()] = j
        if _ITEM.match(ln):
            stack.append(j)
    for i in stack:
        ends[i] = n
    items = [(ind[i], i, ends[i]) for i in sorted(ends)]
    # sequences: consecutive items at one indentation, each starting where the last ended
    groups: list[list[tuple[int, int, int]]] = []
    open_at: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
    for it in items:
        g = open_at.pop((it[0], it[1]), None)
        if g is None:
            g = [it]
            groups.append(g)
        else:
            g.append(it)
        open_at[(it[0], it[2])] = g
    gone = [False] * n
    markers: dict[int, str] = {}
    dropped: list[tuple[str, str, str]] = []
    for g in sorted(groups, key=lambda g: g[0][0]):
        if len(g) < min_items or any(gone[a] for _, a, _ in g):
            continue
        texts = ["".join(lines[a:b]) for _, a, b in g]
        keep = set(select(query, texts, top_k=top_k, min_score=min_score).keep) | {0}
        _elide(g, keep, lambda run: f"{len(run)} item{'s' if len(run) > 1 else ''} dropped", "irrelevant_items", "items",
               lines, gone, markers, dropped)
    for mg in sorted(_mappings(lines, ind), key=lambda g: g[0][0]):
        if len(mg) <= max_keys or any(gone[a] for _, a, _, _ in mg):
            continue
        texts = ["".join(lines[a:b]) for _, a, b, _ in mg]
        keep = set(select(query, texts, top_k=top_k, min_score=min_score).keep)
        if not keep:
            continue  # nothing in it matches the query: no basis for choosing keys

        def named(run: list[int], mg: list[tuple[int, int, int, str]] = mg) -> str:
            names = ", ".join(mg[k][3] for k in run[:_NAMED]) + (f" and {len(run) - _NAMED} more" if len(run) > _NAMED else "")
            return f"{len(run)} key{'s' if len(run) > 1 else ''} dropped: {names}"

        _elide([(d, a, b) for d, a, b, _ in mg], keep, named, "irrelevant_keys", "keys", lines, gone, markers, dropped)
    if not dropped:
        return None
    out: list[str] = []
    for i, ln in enumerate(lines):
        if i in markers:
            out.append(markers[i])
        if not gone[i]:
            out.append(ln if ln.endswith("\n") else ln + "\n")
    new = "".join(out)
    return YAMLOutcome(new if text.endswith("\n") else new.rstrip("\n"), dropped)
