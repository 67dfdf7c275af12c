"""YAML block sequences: the items the query needs, the rest elided by a comment.

Line based, so kept lines are byte-exact and no YAML library is needed: a sequence item
is a line ``<indent>- ...`` with the more-indented lines under it; consecutive items at
one indentation are a sequence. In a sequence of at least ``min_items`` items, items are
chosen by :func:`~tokenslim._internal.structured._select.select` (plus the first, as an
example of the shape), and each run of dropped items becomes one comment line
``<indent># … 12 items dropped``, so the document is still valid YAML. Outer sequences are
reduced first; a sequence inside a dropped item goes with it. Flow style (``[a, b]``,
``{k: v}``) and mappings are left as they are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tokenslim._internal.structured._select import ELLIPSIS, Query, select

__all__ = ["reduce_yaml", "YAMLOutcome"]

_ITEM = re.compile(r"^(\s*)- ")


@dataclass
class YAMLOutcome:
    text: str
    dropped: list[tuple[str, str, str]]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def reduce_yaml(text: str, query: Query, *, top_k: int, min_score: float, min_items: int) -> YAMLOutcome | None:
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
