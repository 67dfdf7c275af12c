"""Logs: repeated line templates collapsed with counts; errors, warnings and the lines
the query needs kept, in order, byte-exact.

A *record* is a line plus its continuation lines (indented lines, ``Caused by:``,
``Traceback``'s frames), so a stack trace is kept or dropped whole. A record's template
is its token count and first words with every number, hex string and id masked. Kept records:

* every error record (its first line names ``ERROR``, ``FATAL``, ``CRITICAL``, ``SEVERE``,
  ``panic``, an ``Exception``/``Error`` class, ``Traceback``, Apache's ``[error]``,
  logcat's ``E``/``F``), always; warnings (``WARN``, ``[warn]``, logcat's ``W``) whose
  template occurs at most 3 times (a repeated warning is collapsed like any line);
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

__all__ = ["reduce_log", "LogOutcome", "SEVERE", "ERRORS", "looks_like_log", "stamped"]

ERRORS = re.compile(
    r"\b(?:ERROR|ERR|FATAL|CRITICAL|CRIT|SEVERE|ALERT|EMERG|PANIC|panic|Traceback|[A-Z][A-Za-z]*(?:Exception|Error))\b|"
    r"\[(?:error|crit|alert|emerg)\]|\b[EF]/[A-Za-z]|^\S+\s+\S+\s+\d+\s+\d+\s+[EF]\s"
)
"""Error lines: always kept, every one. Warnings (the rest of :data:`SEVERE`) are kept
when their template occurs at most ``WARN_REPEATS`` times, else like any repeated line."""
WARN_REPEATS = 3

SEVERE = re.compile(
    r"\b(?:ERROR|ERR|FATAL|CRITICAL|CRIT|SEVERE|ALERT|EMERG|WARN|WARNING|PANIC|panic|Traceback|"
    r"[A-Z][A-Za-z]*(?:Exception|Error))\b|\[(?:error|warn|warning|crit|alert|emerg)\]|\b[EWF]/[A-Za-z]|"
    r"^\S+\s+\S+\s+\d+\s+\d+\s+[EWF]\s"  # Android threadtime: date time pid tid LEVEL tag
)
_MASK = re.compile(r"0x[0-9a-fA-F]+|[0-9a-fA-F]*\d[0-9a-fA-F]*(?:[-:.][0-9a-fA-F]+)*|[A-Za-z_]+\d\w*")
_CONTINUATION = re.compile(r"^(?:\s+\S|Caused by:|\s*at\s|\.\.\. \d+ more)")
_STAMP = re.compile(
    r"\d{1,2}:\d{2}:\d{2}|\d{4}-\d{2}-\d{2}|\d{6}\s\d{6}|\b1\d{9}\b|"
    r"\b(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|FATAL|CRITICAL)\b"
)
"""A timestamp (time of day, ISO date, yymmdd hhmmss, epoch seconds) or a level word,
looked for in a line's first 80 characters."""


def stamped(line: str) -> bool:
    """Whether ``line`` opens like a log record."""
    return _STAMP.search(line, 0, 80) is not None


def looks_like_log(lines: list[str]) -> bool:
    """Whether most non-empty lines open like log records (a timestamp or a level)."""
    body = [ln for ln in lines if ln.strip()]
    if len(body) < 5:
        return False
    head = body[:200]
    hits = sum(1 for ln in head if stamped(ln))
    return hits >= 0.6 * len(head)


@dataclass
class LogOutcome:
    text: str
    dropped: list[tuple[str, str, str]]  # (reason, detail, dropped original text)


TEMPLATE_WORDS = 6
"""A template is the line's token count and its first words, numbers and ids masked: lines
that open alike and are as long are one event with different values (a simplified Drain)."""


def _template(line: str) -> str:
    words = _MASK.sub("#", line.strip()).split()
    return f"{len(words)} " + " ".join(words[:TEMPLATE_WORDS]) if words else ""


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
    errors = [bool(ERRORS.search(lines[a])) or b - a > 1 and bool(ERRORS.search(r)) for a, b, r in zip(starts, ends, recs)]
    sel = select(query, recs, top_k=top_k, min_score=min_score)
    keep = set(sel.keep)
    keep.update(k for k, e in enumerate(errors) if e)
    temps = [_template(lines[a]) for a in starts]
    counts: dict[str, int] = {}
    for t in temps:
        counts[t] = counts.get(t, 0) + 1
    keep.update(k for k, a in enumerate(starts) if counts[temps[k]] <= WARN_REPEATS and SEVERE.search(lines[a]))
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
