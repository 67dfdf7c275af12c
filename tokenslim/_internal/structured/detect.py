"""What a chunk or message holds: JSON, JSON Lines, tables, code, logs, YAML or prose.

:func:`segments` cuts a text into parts, each with a kind. A text that is one structure
from end to end is one segment; otherwise fenced code blocks, markdown tables and HTML
tables are found inside it and the text around them is ``"prose"`` (left alone).

Kinds: ``json``, ``jsonl``, ``malformed_json`` (looks like JSON but does not parse:
passed through), ``markdown_table``, ``html_table``, ``csv`` (CSV/TSV), ``python``,
``code`` (other languages), ``log``, ``yaml`` (block sequences and long mappings reduced) and ``prose``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from tokenslim._internal.structured.code import is_python, looks_like_code
from tokenslim._internal.structured.jsondata import looks_like_json
from tokenslim._internal.structured.log import looks_like_log, stamped
from tokenslim._internal.structured.table import MD_SEPARATOR, _records, _sniff_delimiter

__all__ = ["Segment", "segments", "classify"]

_FENCE = re.compile(r"^(\s{0,3})(```+|~~~+)\s*([\w+#.-]*)[^\n]*$")
_HTML_TABLE = re.compile(r"<table\b.*?</table\s*>", re.I | re.S)
_YAML_LINE = re.compile(r"^\s*(?:- )?[\w.\-\"']+:(?:\s|$)|^\s*- |^\s*#|^---\s*$")
_SPOKEN = re.compile(r"^[^\W\d_][\w.\-]*:\s+(?:\S+\s+){2,}.*[.?!…](?:\W*)$")
"""A top-level ``Name: value`` line whose value is three or more words ending a sentence: said, not configured."""
_PY_LANGS = {"python", "py", "python3", "py3"}
_JSON_LANGS = {"json", "jsonc", "json5"}
_LOG_LANGS = {"log", "logs", "text", "txt", "console", "output", ""}
_CSV_LANGS = {"csv", "tsv"}


PIPE_ROWS = 6
"""Fewest consecutive lines with the same number of ``|`` that make a table inside prose."""


@dataclass(frozen=True)
class Segment:
    """``text[start:end]`` is one part of kind ``kind``; ``lang`` is a fence's language tag."""

    kind: str
    start: int
    end: int
    lang: str = ""


def _is_jsonl(lines: list[str]) -> bool:
    body = [ln for ln in lines if ln.strip()]
    if len(body) < 2 or not all(ln.lstrip().startswith("{") and ln.rstrip().endswith("}") for ln in body):
        return False
    try:
        for ln in body:
            json.loads(ln)
    except (ValueError, RecursionError):
        return False
    return True


def _is_md_table(lines: list[str]) -> bool:
    return len(lines) >= 3 and "|" in lines[0] and bool(MD_SEPARATOR.match(lines[1])) and all("|" in ln for ln in lines[2:] if ln.strip())


def _is_delimited(lines: list[str]) -> bool:
    body = [ln for ln in _records("\n".join(lines)) if ln.strip()]
    if len(body) < 3:
        return False
    head = body[:400]
    delim = _sniff_delimiter(head)
    if delim is None:
        return False
    # prose with commas: long fields and sentence ends
    fields = head[0].split(delim)
    return sum(len(f) for f in fields) / len(fields) < 60 and not any(ln.rstrip().endswith((".", ":")) and ln.count(" ") > 12 for ln in head[:5])


def _is_yaml(lines: list[str]) -> bool:
    body = [ln for ln in lines if ln.strip()]
    if len(body) < 4:
        return False
    shaped = [ln for ln in body if _YAML_LINE.match(ln)]
    if len(shaped) < 0.8 * len(body) or not any(":" in ln for ln in body):
        return False
    # comment lines hold no data: a transcript of "#Person1#: Hello" lines is all comments to YAML
    data = [ln for ln in shaped if not ln.lstrip().startswith("#")]
    if len(data) < max(2, 0.2 * len(body)):
        return False
    # "Alice: Fine, thanks. And you?" is a speaker and a sentence: a transcript, not a mapping
    said = sum(1 for ln in data if _SPOKEN.match(ln))
    return said < 0.5 * len(data)


def classify(text: str, lang: str = "") -> str:
    """The kind of a text that is one part from end to end (``"prose"`` when none fits)."""
    lang = lang.lower()
    s = text.strip()
    if not s:
        return "prose"
    if lang in _JSON_LANGS or looks_like_json(s):
        try:
            json.loads(s)
            return "json"
        except (ValueError, RecursionError):
            lines = s.splitlines()
            return "jsonl" if _is_jsonl(lines) else "malformed_json"
    lines = text.splitlines()
    if _is_jsonl(lines):
        return "jsonl"
    if s[:6].lower() == "<table" and s[-8:].lower() == "</table>":
        return "html_table"
    if _is_md_table([ln for ln in lines if ln.strip()]):
        return "markdown_table"
    if lang in _CSV_LANGS or lang == "|":
        return "csv"
    if _is_delimited(lines):
        # log lines with a comma in their timestamp split evenly too; a CSV file's header has no timestamp
        return "log" if looks_like_log(lines) and stamped(lines[0]) else "csv"
    if lang in ("yaml", "yml"):
        return "yaml"
    if lang in _PY_LANGS:
        return "python" if is_python(text) else "code"
    if lang and lang not in _LOG_LANGS:
        return "code"
    if looks_like_log(lines):
        return "log"
    if is_python(text):
        return "python"
    if looks_like_code(lines):
        return "code"
    if _is_yaml(lines):
        return "yaml"
    return "prose"


def segments(text: str) -> list[Segment]:
    """Cut ``text`` into typed parts, in order, covering it end to end."""
    kind = classify(text)
    if kind != "prose":
        return [Segment(kind, 0, len(text))]
    found: list[Segment] = []
    lines = text.splitlines(keepends=True)
    offs = [0]
    for ln in lines:
        offs.append(offs[-1] + len(ln))
    i = 0
    n = len(lines)
    while i < n:
        m = _FENCE.match(lines[i].rstrip("\r\n"))
        if m:
            fence = m.group(2)
            j = i + 1
            while j < n and not lines[j].strip().startswith(fence[0] * len(fence)):
                j += 1
            if j < n and j > i + 1:
                inner = text[offs[i + 1] : offs[j]]
                k = classify(inner, m.group(3))
                if k != "prose":
                    found.append(Segment(k, offs[i + 1], offs[j], m.group(3)))
                i = j + 1
                continue
        if "|" in lines[i] and i + 1 < n and MD_SEPARATOR.match(lines[i + 1]) and lines[i + 1].count("|") >= 1:
            j = i + 2
            while j < n and "|" in lines[j] and lines[j].strip():
                j += 1
            found.append(Segment("markdown_table", offs[i], offs[j]))
            i = j
            continue
        bars = lines[i].count("|")
        if bars:
            # rows "a | b | c" with as many bars each (a table StripHTML rendered from HTML): CSV on "|"
            j = i + 1
            while j < n and lines[j].count("|") == bars and lines[j].strip():
                j += 1
            if j - i >= PIPE_ROWS:
                found.append(Segment("csv", offs[i], offs[j], "|"))
                i = j
                continue
        i += 1
    for m in _HTML_TABLE.finditer(text):
        if not any(s.start < m.end() and m.start() < s.end for s in found):
            found.append(Segment("html_table", m.start(), m.end()))
    found.sort(key=lambda s: s.start)
    out: list[Segment] = []
    pos = 0
    for s in found:
        if s.start > pos:
            out.append(Segment("prose", pos, s.start))
        out.append(s)
        pos = s.end
    if pos < len(text) or not out:
        out.append(Segment("prose", pos, len(text)))
    return out
