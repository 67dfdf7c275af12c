"""StripHTML: turn chunks that are raw HTML pages into their main text.

Runs first in :func:`tokenslim.default_pipeline`. Plain-text chunks pass through
untouched after a check that costs well under a microsecond (see
:func:`tokenslim.html.looks_like_html`); HTML chunks are replaced by their main
content, with hidden text (prompt-injection vector) and boilerplate removed and
recorded in the chunk's metadata and the drop's detail.
"""

from __future__ import annotations

from dataclasses import asdict

from tokenslim._chunk import Chunk
from tokenslim._result import Result
from tokenslim.html import MAX_HTML_BYTES, Extraction, extract, looks_like_html
from tokenslim.stages._base import BaseStage, check

__all__ = ["StripHTML", "plan_strip"]


def _detail(chunk: Chunk, ex: Extraction) -> str:
    hidden = ", ".join(f"{k}={v.count}" for k, v in sorted(ex.hidden.items()))
    boiler = ex.removed.get("boilerplate")
    parts = [f"{len(chunk.text):,} -> {len(ex.text):,} chars"]
    if boiler:
        parts.append(f"boilerplate blocks={boiler.count}")
    if hidden:
        parts.append(f"hidden: {hidden}")
    return "; ".join(parts)


def plan_strip(chunks: list[Chunk], *, keep_tables: bool, max_bytes: int) -> list[tuple[Chunk, Extraction | None]]:
    """Extract every HTML-looking chunk; ``None`` marks a chunk left as it is.

    Args:
        chunks: The request's chunks.
        keep_tables: Keep table rows in the extracted text.
        max_bytes: Largest page accepted (characters).

    Returns:
        One ``(chunk, extraction or None)`` pair per chunk, in order.

    Raises:
        InputTooLarge: an HTML chunk is larger than ``max_bytes``.
    """
    return [
        (c, extract(c.text, keep_tables=keep_tables, max_bytes=max_bytes) if looks_like_html(c.text) else None)
        for c in chunks
    ]


class StripHTML(BaseStage):
    """Replace HTML chunks by their main text; drop pages without any.

    Args:
        min_chars: An HTML chunk whose main text is shorter than this is dropped
            (reason ``"html_empty"``). At least 1: a page with no text is always dropped.
        keep_tables: Keep tables as ``a | b | c`` rows.
        max_bytes: Largest HTML chunk accepted, in characters; larger ones raise
            :class:`~tokenslim.errors.InputTooLarge` (default
            :data:`tokenslim.html.MAX_HTML_BYTES`, 50 MB).

    Each shortened chunk gets metadata ``html_removed`` (rule -> ``{"count", "chars"}``,
    hidden-text rules and ``"boilerplate"``) and ``html_title``.
    """

    def __init__(self, *, min_chars: int = 1, keep_tables: bool = True, max_bytes: int = MAX_HTML_BYTES) -> None:
        self.min_chars = min_chars
        self.keep_tables = keep_tables
        self.max_bytes = max_bytes

    def validate(self) -> None:
        """Check the parameters.

        Raises:
            ConfigError: ``min_chars`` < 1 or ``max_bytes`` < 1, or ``keep_tables`` not a bool.
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

    def apply(self, result: Result) -> Result:
        """Extract HTML chunks (recorded with ``result.shorten``) and drop empty pages."""
        plan = plan_strip(result.chunks, keep_tables=self.keep_tables, max_bytes=self.max_bytes)
        out: list[Chunk] = []
        for chunk, ex in plan:
            if ex is None:
                out.append(chunk)
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
                )
            )
        result.chunks = out
        return result
