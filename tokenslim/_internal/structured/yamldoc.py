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


def _entries(lines: list[str]) -> list[tuple[int, int, int, str]]:
    """Every mapping entry: (indent, first line, end line exclusive, key)."""
    n = len(lines)
    out: list[tuple[int, int, int, str]] = []
    for i, ln in enumerate(lines):
        m = _ENTRY.match(ln)
        if not m:
            continue
        d = len(m.group(1))
        j = i + 1
        while j < n and (
            not lines[j].strip() or _indent(lines[j]) > d or (_indent(lines[j]) == d and _ITEM.match(lines[j]) is not None)
        ):
            j += 1
        while j > i + 1 and not lines[j - 1].strip():  # blank lines after an entry belong to the next one
            j -= 1
        out.append((d, i, j, m.group(2).strip("\"'")))
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


def _mappings(lines: list[str]) -> list[list[tuple[int, int, int, str]]]:
    """Mappings: consecutive entries at one indentation, each starting where the last ended
    (blank and comment lines between them allowed)."""
    groups: list[list[tuple[int, int, int, str]]] = []
    for e in _entries(lines):
        for g in groups:
            d, _, end, _ = g[-1]
            if d == e[0] and all(not ln.strip() or ln.lstrip().startswith("#") for ln in lines[end : e[1]]):
                g.append(e)
                break
        else:
            groups.append([e])
    return groups


def reduce_yaml(
    text: str, query: Query, *, top_k: int, min_score: float, min_items: int, max_keys: int = 24
) -> YAMLOutcome | None:
    lines = text.splitlines(keepends=True)
    n = len(lines)
    # every item: (indent, first line, end line exclusive)
    items: list[tuple[int, int, int]] = []
    for i, ln in enumerate(lines):
        m = _ITEM.match(ln)
        if not m:
            continue
        d = len(m.group(1))
        j = i + 1
        while j < n and (not lines[j].strip() or _indent(lines[j]) > d) and not (_ITEM.match(lines[j]) and _indent(lines[j]) == d):
            j += 1
        items.append((d, i, j))
    # sequences: consecutive items at one indentation, each starting where the last ended
    groups: list[list[tuple[int, int, int]]] = []
    for it in items:
        for g in groups:
            if g[-1][0] == it[0] and g[-1][2] == it[1]:
                g.append(it)
                break
        else:
            groups.append([it])
    gone = [False] * n
    markers: dict[int, str] = {}
    dropped: list[tuple[str, str, str]] = []
    for g in sorted(groups, key=lambda g: g[0][0]):
        if len(g) < min_items or any(gone[a] for _, a, _ in g):
            continue
        texts = ["".join(lines[a:b]) for _, a, b in g]
        keep = set(select(query, texts, top_k=top_k, min_score=min_score).keep) | {0}
        run: list[int] = []
        for k in range(len(g) + 1):
            if k < len(g) and k not in keep:
                run.append(k)
                continue
            if run:
                d, a, _ = g[run[0]]
                b = g[run[-1]][2]
                for i in range(a, b):
                    gone[i] = True
                markers[a] = " " * d + f"# {ELLIPSIS} {len(run)} item{'s' if len(run) > 1 else ''} dropped\n"
                dropped.append(("irrelevant_items", f"items {run[0] + 1}-{run[-1] + 1}/{len(g)} at line {a + 1}", "".join(lines[a:b])))
                run = []
    for mg in sorted(_mappings(lines), key=lambda g: g[0][0]):
        if len(mg) <= max_keys or any(gone[a] for _, a, _, _ in mg):
            continue
        texts = ["".join(lines[a:b]) for _, a, b, _ in mg]
        keep = set(select(query, texts, top_k=top_k, min_score=min_score).keep)
        if not keep:
            continue  # nothing in it matches the query: no basis for choosing keys
        for run in _runs(keep, len(mg)):
            d, a, _, _ = mg[run[0]]
            b = mg[run[-1]][2]
            for i in range(a, b):
                gone[i] = True
            names = ", ".join(mg[k][3] for k in run[:_NAMED]) + (f" and {len(run) - _NAMED} more" if len(run) > _NAMED else "")
            markers[a] = " " * d + f"# {ELLIPSIS} {len(run)} key{'s' if len(run) > 1 else ''} dropped: {names}\n"
            dropped.append(("irrelevant_keys", f"{len(run)} keys at line {a + 1}", "".join(lines[a:b])))
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
