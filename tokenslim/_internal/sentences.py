"""Sentence segmentation that never breaks numbers, code, JSON, tables or quoted strings.

``split_spans(text)`` returns ``(start, end)`` offsets into ``text``; callers keep
``text[start:end]`` verbatim, so compression can never alter what it keeps.

Atomic blocks (never split inside): fenced code (```), indented code, table rows
(lines with ``|``), JSON-looking blocks (a line starting with ``{``/``[`` up to the
matching close), and text inside quotes or brackets. Prose is split at ``.!?``
followed by whitespace and an upper-case letter, digit, quote or bracket, except
after common abbreviations and initials; line breaks also end a unit.

Linear time on any input: the boundary pattern starts only at the first mark of a run
(a 40 KB run of dots is tried once, not 40,000 times), brackets are matched with one
stack per kind, protected ranges are looked up by bisection, and the scans for the
end of JSON blocks share a budget of ``JSON_SCAN_FACTOR`` times the text length, so
thousands of lines opening an unclosed ``[`` cannot make the splitter quadratic.
"""

from __future__ import annotations

import bisect
import re

__all__ = ["split_spans", "split_sentences", "join_spans", "JSON_SCAN_FACTOR"]

JSON_SCAN_FACTOR = 2
"""All scans for JSON block ends together read at most this many times the text length;
past that, lines starting with ``[``/``{`` are split as prose (brackets still protected)."""
_JSON_MAX = 200_000  # one JSON block's longest scan

_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof sr jr st vs etc inc ltd co corp no nos vol fig figs al gen col lt sgt capt cmdr gov rep sen "
    "adm maj brig cpl pvt rev hon bros ave blvd univ assn intl "
    "jan feb mar apr jun jul aug sep sept oct nov dec e.g i.e approx dept est mt ft u.s u.k a.m p.m".split()
)
_ACRONYM = re.compile(r"[a-z](?:\.[a-z])+")
# (?<!...): a match starts only at the first mark of a run, so a run of k marks is tried once, not k times
_BOUNDARY = re.compile(r"(?<![.!?…])[.!?…]+[\"'”’)\]]*(?=\s+[\"'“‘(\[]?[A-Z0-9À-ÖØ-Þ])")
_FENCE = re.compile(r"^(```|~~~)")
_TABLE = re.compile(r"^\s*\|.*\|\s*$|^[^|\n]*\|[^|\n]*\|")
_JSON_START = re.compile(r"^\s*[\[{]")
_OPEN, _CLOSE = "([{", ")]}"
_QUOTE_PAIRS = {'"': '"', "“": "”"}
_QUOTE_CLOSERS = frozenset("”")
_MARK = re.compile('[()\\[\\]{}"“”]')
_JSON_MARK = re.compile(r'[\[\]{}"\\]')


def _line_spans(text: str) -> list[tuple[int, int]]:
    spans, pos = [], 0
    for line in text.splitlines(keepends=True):
        spans.append((pos, pos + len(line)))
        pos += len(line)
    return spans


def _balanced_json_end(text: str, start: int, stop: int) -> int | None:
    """End offset of a bracketed block starting at ``start`` (strings respected), or None
    when it does not close before ``stop``. Steps from mark to mark (brackets, quotes, backslashes)."""
    depth, in_str, escaped_at = 0, False, -1
    for m in _JSON_MARK.finditer(text, start, stop):
        i, ch = m.start(), m.group()
        if in_str:
            if escaped_at == i:
                continue
            if ch == "\\":
                escaped_at = i + 1
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def _blocks(text: str) -> list[tuple[int, int, bool]]:
    """Split into ``(start, end, atomic)`` blocks by line structure."""
    lines = _line_spans(text)
    out: list[tuple[int, int, bool]] = []
    budget = JSON_SCAN_FACTOR * len(text)  # characters left for JSON end scans
    i = 0
    while i < len(lines):
        s, e = lines[i]
        line = text[s:e]
        if _FENCE.match(line.lstrip()):
            fence = line.lstrip()[:3]
            j = i + 1
            while j < len(lines) and not text[lines[j][0] : lines[j][1]].lstrip().startswith(fence):
                j += 1
            out.append((s, lines[min(j, len(lines) - 1)][1], True))
            i = j + 1
            continue
        if budget > 0 and _JSON_START.match(line):
            first = s + len(line) - len(line.lstrip())
            stop = min(len(text), first + _JSON_MAX, first + budget)
            json_end = _balanced_json_end(text, first, stop)
            budget -= (json_end or stop) - first
            if json_end is not None and json_end > s:
                # extend to the end of the line holding the close bracket
                while i < len(lines) and lines[i][1] < json_end:
                    i += 1
                out.append((s, lines[i][1] if i < len(lines) else json_end, True))
                i += 1
                continue
        if _TABLE.match(line) or line.startswith(("    ", "\t")) and line.strip():
            j = i
            kind_table = bool(_TABLE.match(line))
            while j + 1 < len(lines):
                nxt = text[lines[j + 1][0] : lines[j + 1][1]]
                if (kind_table and _TABLE.match(nxt)) or (not kind_table and nxt.startswith(("    ", "\t")) and nxt.strip()):
                    j += 1
                else:
                    break
            out.append((s, lines[j][1], True))
            i = j + 1
            continue
        out.append((s, e, False))
        i += 1
    return out


def _is_abbreviation(text: str, dot: int) -> bool:
    m = re.search(r"([A-Za-z][A-Za-z.]*)$", text[max(0, dot - 12) : dot])
    if not m:
        return False
    word = m.group(1).lower().rstrip(".")
    # initials ("J. R. R. Tolkien") and dotted acronyms ("L.A. Confidential", "D.C.")
    return word in _ABBREVIATIONS or len(word) == 1 or _ACRONYM.fullmatch(word) is not None


def _protected(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Sorted disjoint open ranges ``(a, b)`` inside matched brackets or quotes (within one
    block); unmatched marks are ignored.

    A closing bracket matches the latest open bracket of its kind and closes every bracket
    opened after it. Each kind keeps the indices of its entries in the shared stack, so a
    close with no open bracket of its kind costs O(1) instead of a scan of the stack.
    """
    ranges: list[tuple[int, int]] = []
    stack: list[tuple[str, int]] = []  # (open char, position) of each open bracket
    by_kind: dict[str, list[int]] = {ch: [] for ch in _OPEN}  # indices into ``stack``
    quote_at: dict[str, int] = {}
    for m in _MARK.finditer(text, start, end):
        i, ch = m.start(), m.group()
        if ch in _OPEN:
            by_kind[ch].append(len(stack))
            stack.append((ch, i))
        elif ch in _CLOSE:
            mine = by_kind[_OPEN[_CLOSE.index(ch)]]
            if mine:
                k = mine[-1]
                ranges.append((stack[k][1], i))
                for kind, _ in stack[k:]:
                    by_kind[kind].pop()
                del stack[k:]
        elif ch in _QUOTE_PAIRS:
            closing = _QUOTE_PAIRS[ch]
            if ch == closing or ch not in quote_at:
                if closing in quote_at and ch == closing:
                    ranges.append((quote_at.pop(closing), i))
                else:
                    quote_at[closing] = i
        elif ch in _QUOTE_CLOSERS and ch in quote_at:
            ranges.append((quote_at.pop(ch), i))
    ranges.sort()
    merged: list[tuple[int, int]] = []
    for a, b in ranges:
        if merged and a < merged[-1][1]:  # starts inside the previous range
            if b > merged[-1][1]:
                merged[-1] = (merged[-1][0], b)
        else:
            merged.append((a, b))
    return merged


def _split_prose(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    seg_start = start
    ranges = _protected(text, start, end)
    starts = [a for a, _ in ranges]
    for m in _BOUNDARY.finditer(text, start, end):
        p = m.start()
        k = bisect.bisect_left(starts, p) - 1  # the last range opening before p
        if k >= 0 and p < ranges[k][1]:
            continue
        if text[p] == "." and _is_abbreviation(text, p):
            continue
        spans.append((seg_start, m.end()))
        seg_start = m.end()
    spans.append((seg_start, end))
    return spans


def split_spans(text: str) -> list[tuple[int, int]]:
    """Sentence-like units of ``text`` as ``(start, end)`` offsets, whitespace trimmed, in order."""
    out: list[tuple[int, int]] = []
    for s, e, atomic in _blocks(text):
        parts = [(s, e)] if atomic else _split_prose(text, s, e)
        for a, b in parts:
            while a < b and text[a].isspace():
                a += 1
            while b > a and text[b - 1].isspace():
                b -= 1
            if b > a:
                out.append((a, b))
    return out


def split_sentences(text: str) -> list[str]:
    """The units of :func:`split_spans` as strings."""
    return [text[a:b] for a, b in split_spans(text)]


def join_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """Join kept spans (sorted) with the original gap where adjacent, else one space or newline."""
    parts: list[str] = []
    prev_end: int | None = None
    for a, b in spans:
        if prev_end is not None:
            gap = text[prev_end:a]
            if gap.isspace() or gap == "":
                parts.append(gap)
            else:
                parts.append("\n" if "\n" in gap else " ")
        parts.append(text[a:b])
        prev_end = b
    return "".join(parts)
