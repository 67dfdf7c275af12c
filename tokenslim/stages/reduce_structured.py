"""ReduceStructured: JSON, tables, code and logs reduced to what the query needs, still valid."""

from __future__ import annotations

from typing import Any, Sequence

from tokenslim._chunk import Chunk, Message
from tokenslim._internal.structured import STRUCTURED_KEY, Options, Query, Reduction, reduce_text
from tokenslim._internal.structured.detect import classify
from tokenslim._result import Drop, Result, chunk_piece, message_piece
from tokenslim.stages._base import BaseStage, check, check_str_list

__all__ = ["ReduceStructured"]

_ROLES = ("system", "user", "assistant", "tool", "function", "developer")


class ReduceStructured(BaseStage):
    """Reduce structured chunks and tool results: keep what the query needs, in valid form.

    Each chunk, and each history message whose role is in ``roles``, is cut into parts
    (:mod:`tokenslim._internal.structured.detect`): JSON and JSON Lines, markdown /
    CSV / TSV / HTML tables, code (Python through :mod:`ast`, other languages by braces)
    and logs; prose around them is left for :class:`CompressDocuments`. Each part keeps:

    * JSON: the array items and keys the query needs, one example of each item shape,
      and a ``"… 12 items dropped"`` marker per gap (``"…": "5 keys dropped"`` in a wide
      object). The result parses; keys and scalars are the original tokens, re-serialised
      compactly (whitespace is the only change to what is kept).
    * Tables: the header, the rows the query needs, a marker row per gap; wide tables
      (more than ``max_columns``) also lose the columns the query does not need.
    * Code: the functions and classes the query names or matches whole; the others as
      signature + docstring + ``...  # … 23 lines dropped``; imports the kept code uses.
    * YAML block sequences and long mappings (more than ``max_keys`` keys): the items and keys
      the query needs, a ``# … 12 items dropped`` / ``# … 12 keys dropped: a, b, ...`` comment
      per gap (still valid YAML; kept lines byte-exact).
    * Logs: every error, warning and exception line, the lines the query needs, and the
      first line of each repeated template with ``… 153 more lines like the line above``.

    A unit naming an identifier of the query (``ord_00179f3a``, ``City137``: a token with
    a digit, underscore or inner capital) is always kept; otherwise the best BM25 units
    scoring at least ``min_score`` times the best are kept, at most ``top_k`` (and any unit
    scoring exactly as the last one kept: a tie is not broken by position). A table question
    naming no row keeps every row and drops the columns it does not need. Whether a table (or
    JSON array of records) question is over every row, and which column answers it, are learned
    from WikiTableQuestions training questions (:mod:`tokenslim._internal.structured.learned`,
    ``scripts/train_table_model.py``). Every kept byte is original apart from the markers, which
    all contain ``…``.

    A chunk that is structured from end to end gets ``metadata["tokenslim_structured"]`` (its
    kind, e.g. ``"json"``), also when it is under ``min_tokens`` and so not reduced, and
    :class:`CompressDocuments` leaves it alone (its sentence and title cuts would break the
    structure: ``{"Results": [...]}`` read as the title "Results"); the prose of
    a mixed chunk goes on to CompressDocuments as before. Malformed JSON and parts with
    nothing to drop pass through unchanged (``metadata["structured_passed"]``).

    Recorded: each shortened chunk with its original (reason ``"structured_reduced"``,
    ``kind="text"``); each shortened message with its original (same reason,
    ``kind="text"``); and the dropped units (``kind="sentence"``) with reasons
    ``"irrelevant_items"``, ``"irrelevant_keys"``, ``"irrelevant_rows"``,
    ``"irrelevant_columns"``, ``"irrelevant_code"``, ``"unused_import"``,
    ``"repeated_log_template"`` or ``"blank_lines"``, adjacent units of one reason in one drop
    (its ``tokens``: the shortened text's exact saving shared out by characters).

    Example:
        >>> import json, tokenslim
        >>> from tokenslim.stages import ReduceStructured
        >>> rows = [{"id": f"ord_{i:04d}", "status": "paid", "total": i * 10} for i in range(40)]
        >>> r = tokenslim.Pipeline([ReduceStructured(min_tokens=0)]).run("Total of ord_0017?", [json.dumps(rows)])
        >>> r.chunks[0].text
        '["… 17 items dropped", {"id": "ord_0017", "status": "paid", "total": 170}, "… 22 items dropped"]'

    Args:
        top_k: Most units (rows, items, lines, functions) kept on BM25 relevance alone, per
            collection; identifier matches and units tied with the last one kept come on top. Default 5.
        min_score: Relative BM25 floor: a unit is kept on relevance when it scores at least
            this share of the best unit. Default 0.5.
        min_items: Collections (arrays, tables, logs) with fewer units are kept whole. Default 8.
        max_keys: Objects with more keys drop the long values the query does not need. Default 24.
        max_columns: Tables with more columns drop the columns the query does not need. Default 8.
        min_tokens: Chunks and messages of fewer tokens are left alone. Default 200.
        roles: History roles whose messages are reduced. Default ``("tool", "function", "assistant")``;
            the latest assistant message is never reduced (the user is most likely replying to it).
    """

    def __init__(
        self,
        *,
        top_k: int = 5,
        min_score: float = 0.5,
        min_items: int = 8,
        max_keys: int = 24,
        max_columns: int = 8,
        min_tokens: int = 200,
        roles: Sequence[str] = ("tool", "function", "assistant"),
    ) -> None:
        self.top_k = top_k
        self.min_score = min_score
        self.min_items = min_items
        self.max_keys = max_keys
        self.max_columns = max_columns
        self.min_tokens = min_tokens
        self.roles = roles

    def validate(self) -> None:
        for name in ("top_k", "min_items", "max_keys", "max_columns"):
            v = getattr(self, name)
            check(isinstance(v, int) and not isinstance(v, bool) and v >= 1, self, f"{name} must be an int >= 1, got {v!r}")
        v = self.min_tokens
        check(isinstance(v, int) and not isinstance(v, bool) and v >= 0, self, f"min_tokens must be an int >= 0, got {v!r}")
        s = self.min_score
        check(isinstance(s, (int, float)) and not isinstance(s, bool) and 0 <= s <= 1, self, f"min_score must be in [0, 1], got {s!r}")
        check_str_list(self.roles, self, "roles")
        bad = [r for r in self.roles if r not in _ROLES]
        check(not bad, self, f"roles {bad!r} are not chat roles; use some of {list(_ROLES)}")

    def _options(self) -> Options:
        return Options(
            top_k=self.top_k, min_score=self.min_score, min_items=self.min_items, max_keys=self.max_keys, max_columns=self.max_columns
        )

    def _small(self, result: Result, text: str) -> bool:
        # fewer characters than min_tokens cannot hold min_tokens tokens, and no text holds more
        # than ~one token per character... nor fewer than one per 16: count only in between
        if len(text) < self.min_tokens:
            return True
        return len(text) < 16 * self.min_tokens and result.count(text) < self.min_tokens

    def apply(self, result: Result) -> Result:
        """Reduce structured chunks and messages, recording the original and every dropped unit."""
        query = Query.of(result.query)
        options = self._options()
        if result.chunks:
            result.chunks = [self._chunk(result, n, c, query, options) for n, c in enumerate(result.chunks, 1)]
        if result.history and self.roles:
            roles = set(self.roles)
            # the latest assistant answer is what the user is replying to ("now fix that function"): kept whole
            last = max((i for i, m in enumerate(result.history) if m.get("role") == "assistant"), default=-1)
            result.history = [
                self._message(result, i, m, query, options) if m.get("role") in roles and i != last else m
                for i, m in enumerate(result.history)
            ]
        return result

    def _chunk(self, result: Result, number: int, chunk: Chunk, query: Query, options: Options) -> Chunk:
        if self._small(result, chunk.text):
            kind = classify(chunk.text)  # too small to reduce, but still structure that must stay whole
            if kind in ("prose", "malformed_json") or chunk.metadata.get(STRUCTURED_KEY) == kind:
                return chunk
            return chunk.with_text(chunk.text, **{STRUCTURED_KEY: kind})
        red = reduce_text(chunk.text, query, options)
        if not red.kinds:
            return chunk
        meta: dict[str, Any] = {}
        if red.whole and red.whole != "malformed_json":
            meta[STRUCTURED_KEY] = red.whole
        if red.passed:
            meta["structured_passed"] = [f"{k}: {why}" for k, why in red.passed]
        if not red.changed:
            return chunk.with_text(chunk.text, **meta) if meta else chunk
        # counted as the prompt shows the chunk: the pipeline counts those pieces anyway (one tokenization
        # of each text, not two), and the difference is what the prompt saves
        saved = result.count(chunk_piece(number, chunk.text)) - result.count(chunk_piece(number, red.text))
        if saved <= 0:
            return chunk.with_text(chunk.text, **meta) if meta else chunk
        new = result.shorten(chunk, red.text, saved, reason="structured_reduced", detail=_summary(red), **meta)
        _record_units(result, red, chunk.id, "", saved)
        return new

    def _message(self, result: Result, index: int, msg: Message, query: Query, options: Options) -> Message:
        content = msg.get("content")
        if not isinstance(content, str) or self._small(result, content):
            return msg
        red = reduce_text(content, query, options)
        if not red.changed:
            return msg
        role = str(msg.get("role"))
        saved = result.count(message_piece(role, content)) - result.count(message_piece(role, red.text))
        if saved <= 0:
            return msg
        new = dict(msg)
        new["content"] = red.text
        where = f"history[{index}] ({msg.get('role')}): "
        result.drops.append(
            Drop(stage=result.current_stage or "?", kind="text", item=msg, reason="structured_reduced", detail=where + _summary(red), tokens=saved)
        )
        _record_units(result, red, None, where, saved)
        return new


def _summary(red: Reduction) -> str:
    counts: dict[str, int] = {}
    for reason, _, _ in red.dropped:
        counts[reason] = counts.get(reason, 0) + 1
    kinds = ", ".join(dict.fromkeys(red.kinds))
    return f"{kinds}: " + ", ".join(f"{n} {r}" for r, n in counts.items())


def _record_units(result: Result, red: Reduction, chunk_id: str | None, where: str, saved: int) -> None:
    """One drop per run of adjacent units dropped for one reason (a gap behind one marker).

    Its ``tokens`` is the text drop's exact saving shared out by characters (counting every
    run again would tokenize the input a second time: half the stage's time on 10k tokens).
    """
    run: list[tuple[str, str, str]] = []
    chars = sum(len(t) for _, _, t in red.dropped) or 1

    def flush() -> None:
        if not run:
            return
        reason = run[0][0]
        detail = run[0][1] if len(run) == 1 else f"{len(run)} units: {run[0][1]} .. {run[-1][1]}"
        text = "".join(t for _, _, t in run)
        result.drops.append(
            Drop(
                stage=result.current_stage or "?", kind="sentence", item=text, reason=reason, detail=where + detail,
                chunk_id=chunk_id, tokens=round(saved * len(text) / chars),
            )
        )
        run.clear()

    for item in red.dropped:
        if run and (item[0] != run[0][0] or not _adjacent(run[-1][1], item[1])):
            flush()
        run.append(item)
    flush()


def _adjacent(a: str, b: str) -> bool:
    """Whether two unit details ("row 3/200", "array item 4/40") name consecutive units."""
    pa, pb = a.rsplit(" ", 1), b.rsplit(" ", 1)
    if len(pa) != 2 or len(pb) != 2 or pa[0] != pb[0]:
        return False
    try:
        return int(pb[1].split("/")[0]) == int(pa[1].split("/")[0]) + 1
    except ValueError:
        return False
