"""StripHTML: turn chunks and history messages that hold HTML into their main text.

Runs first in :func:`tokenslim.default_pipeline`. Plain text passes through untouched but
for its invisible code points (:func:`remove_invisible`), after a linear scan for markup
(see :func:`tokenslim.html.looks_like_html`: a prefix such
as a BOM, an XML declaration, a line of text or an ``<svg>`` sprite does not hide a page
from it); HTML is replaced by its main content, with hidden text (prompt-injection
vector) and boilerplate removed and recorded. History messages of any role (a tool
result holding a fetched page, a pasted page in a user turn) get the same treatment, so
hidden text cannot reach the prompt through the conversation either.

JSON is not a page either: a JSON document or JSON Lines whose string values hold HTML (a
CMS or issue-tracker response) keeps every byte but those values, each extracted on its own
(hidden text removed, as on a page), so it still parses: see :func:`is_json_text`.

Source code is not a page: Python that parses and defines a function or class (HTML in
its string literals: ``html/parser.py``, ``pydoc.py``, ``<!--`` and ``<script>`` included),
or markdown whose markup all sits inside ``` fences, passes through untouched. Its reader
is a programmer reading the source, who sees every byte, not a browser rendering it. The
one exception: code whose markup would hide text from a browser *and* which holds
instruction-like phrasing (:func:`tokenslim.stages.flag_instructions.instruction_spans`) is
extracted like a page, so a page built to parse as Python too (a polyglot) cannot hide an
instruction behind the code rule: see :func:`code_not_page`.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict

from tokenslim._chunk import Chunk, Message
from tokenslim._result import Drop, Result
from tokenslim.html import HIDDEN_RULES, MAX_HTML_BYTES, Extraction, Removed, extract, looks_like_html
from tokenslim.html._hidden import INVISIBLE_CHARS
from tokenslim.stages._base import BaseStage, check
from tokenslim.stages.flag_instructions import instruction_spans

__all__ = ["StripHTML", "plan_strip", "is_source_code", "code_not_page", "is_json_text", "remove_invisible"]

_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n.*?^[ \t]*\1[ \t]*$", re.S | re.M)
# what a reader never sees besides HIDDEN_RULES: script and style bodies, <object>, <iframe>...
_UNSEEN = HIDDEN_RULES | {"script", "style", "non_content_tag"}
_NONE = Removed(0, 0)  # the start of a sum of removal records
# a JSON string literal (JSON forbids raw control characters in one, so it never spans lines)
_JSON_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')


def is_source_code(text: str) -> bool:
    """Whether ``text`` is source code rather than a page: Python that parses and defines a
    function or class at its top level, or markdown whose HTML-looking markup all lies
    inside ``` (or ~~~) fences.

    Args:
        text: A chunk's or message's text (already found to look like HTML).

    Returns:
        True for code; False when any markup lies outside code.
    """
    if "```" in text or "~~~" in text:
        outside = _FENCE.sub("", text)
        if outside != text and not looks_like_html(outside):
            return True
    from tokenslim._internal.structured.code import is_python  # its parse is cached: ReduceStructured reads the same tree

    return is_python(text)


def code_not_page(text: str, ex: Extraction) -> bool:
    """Pass ``text`` through unextracted: it is source code (:func:`is_source_code`), and its
    extraction ``ex`` either removed nothing a browser would hide, or the code holds no
    instruction-like sentence (:func:`~tokenslim.stages.flag_instructions.instruction_spans`).

    Why both: real modules hold HTML comments and ``<script>`` strings (an HTML parser, a
    templating library); flattening them as a page loses the code a question is about
    (16 of 240 standard-library files in benchmarks/bench_structured.py). A page crafted to
    parse as Python as well, hiding an instruction in markup, is still extracted when the
    hidden text reads as an instruction. What gets through is an instruction phrased unlike
    those patterns inside code, which the model would read anyway in a docstring or comment.
    """
    if not is_source_code(text):
        return False
    if not any(rule in _UNSEEN for rule in ex.removed):
        return True
    return not instruction_spans(text)


def remove_invisible(text: str) -> tuple[str, int]:
    """``text`` without Unicode's default-ignorable code points, and how many there were.

    Why on plain text too: a browser draws none of them, but a tokenizer reads them all, so
    variation selectors (U+FE00-FE0F, U+E0100-E01EF) or tag characters (U+E0000-E007F) attached
    to visible letters spell an instruction no reader sees, in a tool result or a chunk as much
    as in a page (``tokenslim.html._hidden.INVISIBLE_CHARS``; extraction cleans HTML output alike).
    ASCII text is returned at once.
    """
    if text.isascii():
        return text, 0
    return INVISIBLE_CHARS.subn("", text)


def is_json_text(text: str) -> bool:
    """Whether ``text`` is a JSON document (an object or array) or JSON Lines (every non-empty
    line one), as a tool result or API response is."""
    head = text.lstrip()
    if not head.startswith(("{", "[")):
        return False
    try:
        json.loads(text)
        return True
    except (ValueError, RecursionError):
        pass
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) < 2 or not all(ln.lstrip().startswith(("{", "[")) for ln in lines):
        return False
    try:
        for ln in lines:
            json.loads(ln)
    except (ValueError, RecursionError):
        return False
    return True


def _extract_json(text: str, *, keep_tables: bool, max_bytes: int) -> Extraction | None:
    """JSON whose string values hold HTML (a CMS or issue-tracker response): each such value is
    extracted on its own, hidden text and tags removed as on a page, and every other byte is
    kept, so the document still parses and ReduceStructured can still reduce it."""
    removed: dict[str, Removed] = {}
    changed = False

    def value(m: "re.Match[str]") -> str:
        nonlocal changed
        try:
            decoded = json.loads(m.group())
        except ValueError:
            return m.group()
        if not isinstance(decoded, str) or not looks_like_html(decoded):
            return m.group()
        ex = extract(decoded, keep_tables=keep_tables, max_bytes=max_bytes)
        for rule, r in ex.removed.items():
            removed[rule] = removed.get(rule, _NONE) + r
        changed = True
        return json.dumps(ex.text.strip(), ensure_ascii=False)

    new = _JSON_STRING.sub(value, text)
    if not changed:
        return None
    new, invisible = remove_invisible(new)  # in the values left as they were
    if invisible:
        removed["invisible_chars"] = removed.get("invisible_chars", _NONE) + Removed(invisible, invisible)
    return Extraction(text=new, input_chars=len(text), removed=removed)


def _extract(text: str, *, keep_tables: bool, max_bytes: int, renderer: str = "python") -> Extraction | None:
    if not looks_like_html(text):
        return None
    if is_json_text(text):  # values extracted one by one with the Python rules: no page to render
        return _extract_json(text, keep_tables=keep_tables, max_bytes=max_bytes)
    ex = extract(text, keep_tables=keep_tables, max_bytes=max_bytes, renderer=renderer)
    return None if code_not_page(text, ex) else ex


def _detail(chunk: Chunk, ex: Extraction) -> str:
    hidden = ", ".join(f"{k}={v.count}" for k, v in sorted(ex.hidden.items()))
    boiler = ex.removed.get("boilerplate")
    parts = [f"{len(chunk.text):,} -> {len(ex.text):,} chars"]
    if boiler:
        parts.append(f"boilerplate blocks={boiler.count}")
    if hidden:
        parts.append(f"hidden: {hidden}")
    return "; ".join(parts)


def plan_strip(
    chunks: list[Chunk], *, keep_tables: bool, max_bytes: int, renderer: str = "python"
) -> list[tuple[Chunk, Extraction | None]]:
    """Extract every HTML-looking chunk; ``None`` marks a chunk left as it is.

    Args:
        chunks: The request's chunks.
        keep_tables: Keep table rows in the extracted text.
        max_bytes: Largest page accepted (characters).
        renderer: ``"python"`` or ``"chromium"`` (see :func:`tokenslim.html.extract`).

    Returns:
        One ``(chunk, extraction or None)`` pair per chunk, in order.

    Raises:
        InputTooLarge: an HTML chunk is larger than ``max_bytes``.
    """
    return [(c, _extract(c.text, keep_tables=keep_tables, max_bytes=max_bytes, renderer=renderer)) for c in chunks]


class StripHTML(BaseStage):
    """Replace HTML chunks by their main text; drop pages without any; remove invisible code
    points from every chunk and history message (reason ``invisible_chars``).

    Args:
        min_chars: An HTML chunk whose main text is shorter than this is dropped
            (reason ``"html_empty"``). At least 1: a page with no text is always dropped.
        keep_tables: Keep tables as ``a | b | c`` rows.
        max_bytes: Largest HTML chunk or message accepted, in characters; larger ones raise
            :class:`~tokenslim.errors.InputTooLarge` (default
            :data:`tokenslim.html.MAX_HTML_BYTES`, 50 MB).
        history: Also extract HTML found in history messages (any role). A message is
            kept (its turn structure matters) with the extracted text as content, and its
            original is recorded as a ``kind="turn"`` drop, reason ``"html_boilerplate"``.
        renderer: ``"python"`` (default): tokenslim's visibility rules, a few ms a page. ``"chromium"``:
            exact mode, Chromium renders each page and decides which text a reader sees (hidden text
            recorded as ``"browser_hidden"``); needs ``pip install 'tokenslim[browser]'`` and a Chromium
            executable (else :class:`~tokenslim.errors.MissingDependency`), and costs a page render
            (see benchmarks/bench_browser_exact.py). One browser per thread, started on first use.

    Each shortened chunk gets metadata ``html_removed`` (rule -> ``{"count", "chars"}``,
    hidden-text rules and ``"boilerplate"``) and ``html_title``; the page title also
    becomes ``title`` when the chunk has none (what relevance and adapters read).
    """

    def __init__(
        self,
        *,
        min_chars: int = 1,
        keep_tables: bool = True,
        max_bytes: int = MAX_HTML_BYTES,
        history: bool = True,
        renderer: str = "python",
    ) -> None:
        self.min_chars = min_chars
        self.keep_tables = keep_tables
        self.max_bytes = max_bytes
        self.history = history
        self.renderer = renderer

    def validate(self) -> None:
        """Check the parameters.

        Raises:
            ConfigError: ``min_chars`` < 1 or ``max_bytes`` < 1, ``keep_tables``/``history`` not a bool, or
                ``renderer`` neither ``"python"`` nor ``"chromium"``.
        """
        check(
            isinstance(self.min_chars, int) and self.min_chars >= 1, self,
            f"min_chars must be an int >= 1, got {self.min_chars!r}",
        )
        check(
            isinstance(self.max_bytes, int) and self.max_bytes >= 1, self,
            f"max_bytes must be an int >= 1, got {self.max_bytes!r}",
        )
        check(isinstance(self.keep_tables, bool), self, f"keep_tables must be a bool, got {self.keep_tables!r}")
        check(isinstance(self.history, bool), self, f"history must be a bool, got {self.history!r}")
        check(
            self.renderer in ("python", "chromium"), self,
            f"renderer must be 'python' or 'chromium', got {self.renderer!r}",
        )

    def apply(self, result: Result) -> Result:
        """Extract HTML chunks (recorded with ``result.shorten``), drop empty pages, extract HTML messages."""
        plan = plan_strip(result.chunks, keep_tables=self.keep_tables, max_bytes=self.max_bytes, renderer=self.renderer)
        out: list[Chunk] = []
        for chunk, ex in plan:
            if ex is None:
                out.append(self._without_invisible(result, chunk))
                continue
            if len(ex.text.strip()) < self.min_chars:
                result.drop(
                    chunk,
                    reason="html_empty",
                    detail=f"{len(ex.text.strip())} chars of main text < min_chars={self.min_chars}",
                )
                continue
            out.append(
                result.shorten(
                    chunk,
                    ex.text,
                    reason="html_boilerplate",
                    detail=_detail(chunk, ex),
                    html_removed={k: asdict(v) for k, v in ex.removed.items()},
                    html_title=ex.title,
                    # the page's <title> becomes the chunk's title unless the loader gave one
                    **({"title": ex.title} if ex.title and not chunk.metadata.get("title") else {}),
                )
            )
        result.chunks = out
        if self.history and result.history:
            result.history = self._strip_history(result)
        return result

    @staticmethod
    def _without_invisible(result: Result, chunk: Chunk) -> Chunk:
        """A plain-text chunk without its invisible code points (see :func:`remove_invisible`)."""
        text, n = remove_invisible(chunk.text)
        if not n:
            return chunk
        return result.shorten(chunk, text, reason="invisible_chars",
                              detail=f"{n} invisible code points removed (default-ignorable: never drawn, read by the model)")

    @staticmethod
    def _message_without_invisible(result: Result, i: int, msg: Message) -> Message:
        content = msg.get("content")
        if not isinstance(content, str):
            return msg
        text, n = remove_invisible(content)
        if not n:
            return msg
        result.drops.append(Drop(
            stage=result.current_stage or "?", kind="turn", item=msg, reason="invisible_chars",
            detail=f"history[{i}] ({msg.get('role')}) kept without {n} invisible code points",
            tokens=result.count(content) - result.count(text),
        ))
        return {**msg, "content": text}

    def _strip_history(self, result: Result) -> list[Message]:
        messages = []
        for i, msg in enumerate(result.history):
            content = msg.get("content")
            ex = (
                _extract(content, keep_tables=self.keep_tables, max_bytes=self.max_bytes, renderer=self.renderer)
                if isinstance(content, str) else None
            )
            if ex is None or not isinstance(content, str):
                messages.append(self._message_without_invisible(result, i, msg))
                continue
            new = {**msg, "content": ex.text}
            detail = _detail(Chunk(text=content), ex)
            result.drops.append(
                Drop(
                    stage=result.current_stage or "?",
                    kind="turn",
                    item=msg,
                    reason="html_boilerplate",
                    detail=f"history[{i}] ({msg.get('role')}) kept with its main text; {detail}",
                    tokens=result.count(content) - result.count(ex.text),
                )
            )
            messages.append(new)
        return messages
