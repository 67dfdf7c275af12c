"""Tables (markdown, CSV/TSV, HTML): the header plus the rows the query needs.

Rows are kept or dropped whole, byte-exact; each run of dropped rows leaves one marker
row in the table's own syntax (``| … 180 rows dropped | | |``, a CSV row
``… 180 rows dropped,,`` with the table's field count, ``<tr><td colspan=3>…``), so
the result is still a table of the same shape. Row choice is
:func:`~tokenslim._internal.structured._select.select` over the rows' text.

A question that compares or counts rows ("which year had the most wins?", "how many...",
:data:`~tokenslim._internal.structured._select.AGGREGATE_WORDS`), or one that names no row
(nothing to pick rows by: "what engine did the winner use?"), keeps every row of a
markdown or CSV/TSV table and drops the columns it does not need instead. Wide tables
(more than ``max_columns`` columns) also lose the columns the query does not need when more
than ``top_k`` rows are kept, or when they are very wide (over twice ``max_columns``): the
few rows of a lookup are cheap whole, and the column that answers is often one the question
does not name ("who came in first?" names neither "Pos" nor "Rider"). A column is kept when
its header shares a term (or its first five letters: "scored", "Scorers") with the query,
when a kept row's cell in it holds a query identifier or term, or when it is the first
column or the first text column after it (the row's name: "Driver" after "Pos", "Opponent"
after "Date"), unless the question asks for a number ("how many..."); a last marker row
names the dropped columns
(``… 3 columns dropped: losses, coach, stadium``). Cells are cut on the delimiter only
(quoted CSV fields are respected), never inside.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass

from tokenslim._internal.relevance import terms
from tokenslim._internal.structured._select import ELLIPSIS, Query, select
from tokenslim._internal.structured.learned import answer_columns, every_row

__all__ = ["reduce_markdown_table", "reduce_delimited", "reduce_html_table", "TableOutcome", "MD_SEPARATOR"]

MD_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_HTML_ROW = re.compile(r"<tr\b.*?</tr\s*>", re.I | re.S)
_HTML_TAG = re.compile(r"<[^>]+>")
_HTML_CELL = re.compile(r"<t[dh]\b[^<>]*>(.*?)(?=<t[dh]\b|</tr\s*>)", re.I | re.S)  # [^<>]: a run of "<td a" stays linear


@dataclass
class TableOutcome:
    text: str
    dropped: list[tuple[str, str, str]]  # (reason, detail, dropped original text)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def _pick_rows(query: Query, rows: list[str], top_k: int, min_score: float, cells: list[list[str]]) -> list[int]:
    """The rows a question names; ``[]`` for one about every row (it compares or counts them,
    names none of them, or the row model finds the picked rows likely to miss the answer:
    :func:`~tokenslim._internal.structured.learned.every_row`). ``cells``: each row's cells."""
    sel = select(query, rows, top_k=top_k, min_score=min_score)
    return [] if every_row(query, rows, sel, cells) else sel.keep


def _stem_match(header_terms: list[str], query_terms: set[str]) -> bool:
    """A header term equal to a query term, or sharing its first five letters ("Scorers", "scored")."""
    prefixes = {t[:5] for t in query_terms if len(t) >= 5}
    return any(t in query_terms or (len(t) >= 5 and t[:5] in prefixes) for t in header_terms)


def _md_cells(line: str) -> list[tuple[int, int]]:
    """(start, end) of each cell of a markdown row, pipes excluded (escaped ``\\|`` respected)."""
    s = line.rstrip("\r\n")
    bars = [m.start() for m in re.finditer(r"(?<!\\)\|", s)]
    bounds = [-1] + bars + [len(s)]
    cells = [(bounds[k] + 1, bounds[k + 1]) for k in range(len(bounds) - 1)]
    if len(cells) > 1 and not s[: cells[0][1]].strip():
        cells = cells[1:]  # the leading pipe
    if len(cells) > 1 and not s[cells[-1][0] :].strip():
        cells = cells[:-1]  # the trailing pipe
    return cells


def _numeric(cell: str) -> bool:
    c = cell.strip().rstrip(".")
    return bool(c) and c.replace(",", "").replace(".", "").replace("=", "").isdigit() or c in ("", "-", "—", "–")


def _keep_columns(
    query: Query, header: list[str], kept_rows: list[list[str]], max_columns: int, table_rows: list[list[str]] | None = None
) -> list[int] | None:
    """Columns to keep: the first, those whose header shares a query term, those with a
    kept cell naming a query identifier or term, and those the learned model says may hold the
    answer (:func:`~tokenslim._internal.structured.columns.answer_columns`, read over
    ``table_rows``, every body row, default ``kept_rows``). ``None``: keep them all."""
    n = len(header)
    if n <= max_columns:
        return None
    qt = set(query.terms)
    keep = {0, *answer_columns(query, header, kept_rows if table_rows is None else table_rows)}
    if kept_rows and not query.asks_number():
        # the row's name: the first text column after the first ("Driver" after "Pos", "Opponent"
        # after "Date", "Name" after "Year"), what "who" and "which" questions ask for; a count
        # ("how many...") needs only the columns it counts
        for j in range(1, n):
            if sum(not _numeric(r[j]) for r in kept_rows if len(r) > j) >= 0.5 * len(kept_rows):
                keep.add(j)
                break
    for j, h in enumerate(header):
        if _stem_match(terms(h), qt):
            keep.add(j)
    for row in kept_rows:
        for j, cell in enumerate(row[:n]):
            if j not in keep and (query.holds_term(cell) or query.patterns and query.identifier_hits(cell)):
                keep.add(j)
    return sorted(keep) if len(keep) < n else None


def reduce_markdown_table(
    text: str, query: Query, *, top_k: int, min_score: float, min_items: int, max_columns: int
) -> TableOutcome | None:
    """``text``: the table's lines (header, separator, rows), nothing else."""
    lines = text.splitlines(keepends=True)
    if len(lines) < 3 or not MD_SEPARATOR.match(lines[1]):
        return None
    body = lines[2:]
    if len(body) < min_items:
        return None
    dropped: list[tuple[str, str, str]] = []
    head_cells = _md_cells(lines[0])
    cols: list[int] | None = None
    header = [lines[0][a:b].strip() for a, b in head_cells]
    every = [[r[a:b].strip() for a, b in _md_cells(r)] for r in body]
    keep = _pick_rows(query, body, top_k, min_score, every)
    if len(head_cells) > 2 and not keep:
        # a question over many rows, or one naming none: every row, fewer columns
        keep = list(range(len(body)))
        cols = _keep_columns(query, header, every, 2)
    else:
        if len(head_cells) > max_columns and (len(keep) > top_k or len(head_cells) > 2 * max_columns):
            cols = _keep_columns(query, header, [every[i] for i in keep], max_columns, every)

    def cut(line: str) -> str:
        if cols is None:
            return line
        cells = _md_cells(line)
        if len(cells) != len(head_cells):
            return line  # a ragged row is kept whole rather than mis-cut
        nl = "\n" if line.endswith("\n") else ""
        return "|" + "|".join(line[cells[j][0] : cells[j][1]] for j in cols) + "|" + nl

    ncols = len(cols) if cols is not None else len(head_cells)
    if cols is not None:
        gone = [lines[0][a:b].strip() for j, (a, b) in enumerate(head_cells) if j not in cols]
        dropped.append(("irrelevant_columns", f"{_plural(len(gone), 'column')}: {', '.join(gone)}", ", ".join(gone)))

    def marker(gap: int) -> str:
        return "| " + f"{ELLIPSIS} {_plural(gap, 'row')} dropped" + " |" + " |" * (ncols - 1) + "\n"

    if len(keep) == len(body) and cols is None:
        return None
    out = [cut(lines[0]), cut(lines[1])]
    prev = -1
    for i in keep + [len(body)]:
        gap = i - prev - 1
        if gap:
            for j in range(prev + 1, i):
                dropped.append(("irrelevant_rows", f"row {j + 1}/{len(body)}", body[j]))
            out.append(marker(gap))
        if i < len(body):
            out.append(cut(body[i]))
        prev = i
    if cols is not None:
        if not out[-1].endswith("\n"):
            out[-1] += "\n"
        note = f"{ELLIPSIS} {_plural(len(gone), 'column')} dropped: {', '.join(gone)}".replace("|", "\\|")
        out.append("| " + note + " |" + " |" * (ncols - 1) + "\n")
    new = "".join(out)
    if not text.endswith("\n"):
        new = new.rstrip("\n")
    return TableOutcome(new, dropped)


def _sniff_delimiter(lines: list[str]) -> str | None:
    """``","`` or ``"\\t"`` when every line parses to the same number (>= 2) of fields."""
    for delim in ("\t", ",", ";", "|"):
        if delim not in lines[0]:
            continue
        try:
            rows = list(csv.reader(lines, delimiter=delim))
        except csv.Error:
            continue
        widths = [len(r) for r in rows if r]
        if len(widths) >= 3 and widths[0] >= 2 and sum(w == widths[0] for w in widths) >= 0.9 * len(widths):
            return delim
    return None


def _records(text: str) -> list[str]:
    """The text's CSV records: lines, joined while a quoted field spans a line break."""
    out: list[str] = []
    pending = ""
    for ln in text.splitlines(keepends=True):
        pending += ln
        if pending.count('"') % 2 == 0:
            out.append(pending)
            pending = ""
    if pending:
        out.append(pending)
    return out


def reduce_delimited(
    text: str, query: Query, *, top_k: int, min_score: float, min_items: int, max_columns: int
) -> TableOutcome | None:
    """CSV/TSV with a header line; a record whose quoted field spans lines is one row."""
    lines = _records(text)
    while lines and not lines[-1].strip():
        lines.pop()
    if len(lines) < 3:
        return None
    delim = _sniff_delimiter(lines)
    if delim is None:
        return None
    rows = [next(csv.reader([rec], delimiter=delim), []) for rec in lines]
    body = lines[1:]
    if len(body) < min_items:
        return None
    width = len(rows[0])
    cols = None
    keep = _pick_rows(query, body, top_k, min_score, rows[1:])
    if width > 2 and not keep:
        keep = list(range(len(body)))  # a question over many rows, or one naming none: every row, fewer columns
        cols = _keep_columns(query, rows[0], rows[1:], 2)
    else:
        if width > max_columns and (len(keep) > top_k or width > 2 * max_columns):
            cols = _keep_columns(query, rows[0], [rows[i + 1] for i in keep], max_columns, rows[1:])
    dropped: list[tuple[str, str, str]] = []

    def field_spans(line: str) -> list[tuple[int, int]] | None:
        # cut on delimiters outside quotes; None when the line's fields do not match the header
        spans, start, quoted = [], 0, False
        s = line.rstrip("\r\n")
        for k, ch in enumerate(s):
            if ch == '"':
                quoted = not quoted
            elif ch == delim and not quoted:
                spans.append((start, k))
                start = k + 1
        spans.append((start, len(s)))
        return spans if len(spans) == width else None

    def cut(line: str) -> str:
        if cols is None:
            return line
        spans = field_spans(line)
        if spans is None:
            return line
        nl = line[len(line.rstrip("\r\n")) :]
        return delim.join(line[spans[j][0] : spans[j][1]] for j in cols) + nl

    if cols is not None:
        gone = [rows[0][j] for j in range(width) if j not in cols]
        dropped.append(("irrelevant_columns", f"{_plural(len(gone), 'column')}: {', '.join(gone)}", ", ".join(gone)))
    if len(keep) == len(body) and cols is None:
        return None
    ncols = len(cols) if cols is not None else width
    nl = "\r\n" if lines[0].endswith("\r\n") else "\n"
    sep = " | " if delim == "|" and " | " in lines[0] else delim  # the marker row spaced like the rows
    out = [cut(lines[0])]
    prev = -1
    for i in keep + [len(body)]:
        gap = i - prev - 1
        if gap:
            for j in range(prev + 1, i):
                dropped.append(("irrelevant_rows", f"row {j + 1}/{len(body)}", body[j]))
            if not out[-1].endswith("\n"):
                out[-1] += nl
            out.append(f"{ELLIPSIS} {_plural(gap, 'row')} dropped" + sep * (ncols - 1) + nl)
        if i < len(body):
            if not out[-1].endswith("\n"):
                out[-1] += nl
            out.append(cut(body[i]))
        prev = i
    if cols is not None:
        if not out[-1].endswith("\n"):
            out[-1] += nl
        note = f"{ELLIPSIS} {_plural(len(gone), 'column')} dropped: {', '.join(gone)}"
        if delim in note or '"' in note or "\n" in note:
            note = '"' + note.replace('"', '""') + '"'
        out.append(note + sep * (ncols - 1) + nl)
    new = "".join(out)
    tail = text[len(text.rstrip()) :]
    return TableOutcome(new.rstrip("\r\n") + tail, dropped)


def reduce_html_table(text: str, query: Query, *, top_k: int, min_score: float, min_items: int) -> TableOutcome | None:
    """``text``: one ``<table>...</table>``. Rows with ``<th>`` cells (the header) are
    always kept; the other ``<tr>`` elements are chosen on their visible text."""
    rows = list(_HTML_ROW.finditer(text))
    body = [m for m in rows if not re.search(r"<th\b", m.group(), re.I)]
    if len(body) < min_items:
        return None
    texts = [_HTML_TAG.sub(" ", m.group()) for m in body]
    cells = [[_HTML_TAG.sub(" ", c).strip() for c in _HTML_CELL.findall(m.group())] for m in body]
    keep = set(_pick_rows(query, texts, top_k, min_score, cells))
    if not keep or len(keep) == len(body):  # a question naming no row is about every row
        return None
    ncols = max((len(re.findall(r"<t[dh]\b", m.group(), re.I)) for m in rows), default=1)
    out: list[str] = []
    pos = 0
    gap = 0
    dropped: list[tuple[str, str, str]] = []
    body_ids = {id(m): k for k, m in enumerate(body)}
    for m in rows:
        k = body_ids.get(id(m))
        if k is not None and k not in keep:
            between = text[pos : m.start()]
            if between.strip():
                out.append(between)  # whitespace before a dropped row goes with it
            pos = m.end()
            gap += 1
            dropped.append(("irrelevant_rows", f"row {k + 1}/{len(body)}", m.group()))
            continue
        if gap:
            out.append(f'<tr><td colspan="{ncols}">{ELLIPSIS} {_plural(gap, "row")} dropped</td></tr>')
            gap = 0
        out.append(text[pos : m.end()])
        pos = m.end()
    if gap:
        out.append(f'<tr><td colspan="{ncols}">{ELLIPSIS} {_plural(gap, "row")} dropped</td></tr>')
    out.append(text[pos:])
    return TableOutcome("".join(out), dropped)
