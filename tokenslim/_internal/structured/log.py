"""Logs: repeated line templates collapsed with counts; errors, warnings and the lines
the query needs kept, in order, byte-exact.

A *record* is a line plus its continuation lines (indented lines, ``Caused by:``,
``Traceback``'s frames), so a stack trace is kept or dropped whole. A record's template
is its first line with every number, hex string and id masked. Kept records:

* every record whose first line names a severity (``ERROR``, ``FATAL``, ``CRITICAL``,
  ``SEVERE``, ``WARN``/``WARNING``, ``panic``, an ``Exception``/``Error`` class,
  ``Traceback``), always;
* records naming a query identifier, and the best BM25 records
  (:func:`~tokenslim._internal.structured._select.select`);
* the first record of each template, followed (when that template has other dropped
  records) by one marker line: ``… 153 more lines like the line above``.

Linear in the input: one pass for records and templates, one BM25 scoring pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tokenslim._internal.structured._select import ELLIPSIS, Query, select

__all__ = ["reduce_log", "LogOutcome", "SEVERE", "looks_like_log"]

SEVERE = re.compile(
    r"\b(?:ERROR|ERR|FATAL|CRITICAL|CRIT|SEVERE|ALERT|EMERG|WARN|WARNING|PANIC|panic|Traceback|"
    r"[A-Z][A-Za-z]*(?:Exception|Error))\b|\b(?:E|W|F)/[A-Za-z]|^\s*(?:E|W|F)\s+\d"
)
_MASK = re.compile(r"0x[0-9a-fA-F]+|[0-9a-fA-F]*\d[0-9a-fA-F]*(?:[-:.][0-9a-fA-F]+)*|[A-Za-z_]+\d\w*")
_CONTINUATION = re.compile(r"^(?:\s+\S|Caused by:|\s*at\s|\.\.\. \d+ more)")
_STAMP = re.compile(
    r"^\s*(?:\[?\d{2,4}[-/.]\d{1,2}[-/.]\d{1,4}|\[?\d{2}:\d{2}:\d{2}|\[?[A-Z][a-z]{2}\s+[A-Z]?[a-z]{0,2}\s*\d{1,2}|\d{6}\s+\d{6}|\d{10}|"
    r"\[?(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|FATAL|CRITICAL)\b|[- ]\s*\d+\s+\d{4}\.\d{2}\.\d{2}|\d+\s+\d+\s+\w+|[A-Z]\s+\d{2}:\d{2})"
)


def looks_like_log(lines: list[str]) -> bool:
    """Whether most non-empty lines open like log records (a timestamp or a level)."""
    body = [ln for ln in lines if ln.strip()]
    if len(body) < 5:
        return False
    head = body[:200]
    hits = sum(1 for ln in head if _STAMP.match(ln))
    return hits >= 0.6 * len(head)


@dataclass
class LogOutcome:
    text: str
    dropped: list[tuple[str, str, str]]  # (reason, detail, dropped original text)


def _template(line: str) -> str:
    return _MASK.sub("#", line.strip())


def reduce_log(text: str, query: Query, *, top_k: int, min_score: float, min_items: int) -> LogOutcome | None:
    lines = text.splitlines(keepends=True)
    # records: (first line index, end line index exclusive)
    starts: list[int] = []
    for i, ln in enumerate(lines):
        if i and _CONTINUATION.match(ln) and ln.strip():
            continue
        starts.append(i)
    if len(starts) < min_items:
        return None
    ends = starts[1:] + [len(lines)]
    recs = ["".join(lines[a:b]) for a, b in zip(starts, ends)]
    severe = [bool(SEVERE.search(lines[a])) or b - a > 1 and bool(SEVERE.search(r)) for a, b, r in zip(starts, ends, recs)]
    sel = select(query, recs, top_k=top_k, min_score=min_score)
    keep = set(sel.keep)
    keep.update(k for k, s in enumerate(severe) if s)
    temps = [_template(lines[a]) for a in starts]
    counts: dict[str, int] = {}
    for t in temps:
        counts[t] = counts.get(t, 0) + 1
    seen: dict[str, int] = {}
    example: set[int] = set()
    for k, t in enumerate(temps):
        if t not in seen:
            seen[t] = k
            if not recs[k].strip():
                continue
            example.add(k)
    keep |= example
    if len(keep) >= len(recs):
        return None
    kept_per_template: dict[str, int] = {}
    for k in keep:
        kept_per_template[temps[k]] = kept_per_template.get(temps[k], 0) + 1
    out: list[str] = []
    gone: dict[str, list[str]] = {}  # template -> its dropped records, in order
    nl = "\n"
    for k, rec in enumerate(recs):
        t = temps[k]
        if k in keep:
            out.append(rec if rec.endswith("\n") else rec + nl)
            if k in example:
                more = counts[t] - kept_per_template[t]
                if more > 0:
                    out.append(f"{ELLIPSIS} {more} more line{'s' if more > 1 else ''} like the line above{nl}")
        else:
            gone.setdefault(t, []).append(rec)
    dropped: list[tuple[str, str, str]] = []
    for t, recs_t in gone.items():
        if not t:
            dropped.append(("blank_lines", f"{len(recs_t)} blank lines", "".join(recs_t)))
        else:
            dropped.append(("repeated_log_template", f"{len(recs_t)} of {counts[t]} lines of template {t[:80]!r}", "".join(recs_t)))
    new = "".join(out)
    if not text.endswith("\n"):
        new = new.rstrip("\n")
    return LogOutcome(new, dropped)
