"""Cap the nesting depth of pathological HTML before parsing.

Why: HTML tree builders check scopes by walking the stack of open elements, so
100,000 nested ``<div>`` cost minutes (quadratic). Real pages are rarely deeper
than a few dozen levels; tags beyond :data:`MAX_DEPTH` are dropped (their text is kept).
The scan runs only on pages with very many tags, so ordinary pages pay nothing.
"""

from __future__ import annotations

import re

__all__ = ["cap_depth", "drop_spans", "MAX_DEPTH", "SCAN_ABOVE_TAGS"]

MAX_DEPTH = 512
SCAN_ABOVE_TAGS = 10_000
_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9:-]*)[^<>]*?(/?)>")  # [^<>]: a tag never spans another "<", so an unclosed "<a" costs one scan to the next "<"
_VOID = frozenset(
    "area base br col embed hr img input link meta param source track wbr "
    "p li td th tr option dt dd".split()  # implicitly closed elements never build depth
)


def cap_depth(html: str, *, tags: int | None = None) -> str:
    """Return ``html`` with tags nested deeper than :data:`MAX_DEPTH` removed.

    Args:
        html: The page source.
        tags: ``html.count("<")`` when the caller has it already (it bounds the tags).

    Returns:
        The same string when it has few tags or no deep nesting, else a flattened copy.
    """
    if (html.count("<") if tags is None else tags) <= SCAN_ABOVE_TAGS:
        return html
    depth = 0
    cut: list[tuple[int, int]] = []
    for m in _TAG.finditer(html):
        closing, name, selfclose = m.group(1), m.group(2).lower(), m.group(3)
        if name in _VOID or selfclose:
            continue
        if closing:
            if depth > MAX_DEPTH:
                cut.append(m.span())
            depth = max(0, depth - 1)
        else:
            depth += 1
            if depth > MAX_DEPTH:
                cut.append(m.span())
    return drop_spans(html, cut)


def drop_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` without the given ``(start, end)`` spans (sorted, not overlapping); ``text`` itself when none."""
    if not spans:
        return text
    parts: list[str] = []
    pos = 0
    for start, end in spans:
        parts.append(text[pos:start])
        pos = end
    parts.append(text[pos:])
    return "".join(parts)
