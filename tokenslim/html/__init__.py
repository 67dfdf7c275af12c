"""Main-content extraction from HTML pages, with hidden-text removal.

    >>> from tokenslim.html import extract_main_text
    >>> extract_main_text("<html><body><nav>Home | About</nav><article><p>Grass is green, "
    ...     "and the sky is blue, as everybody knows.</p></article></body></html>")
    'Grass is green, and the sky is blue, as everybody knows.'

Pipeline: decode bytes (BOM, ``<meta charset>``, UTF-8, cp1252) -> cap pathological
nesting -> parse with selectolax/Lexbor -> one iterative walk that drops hidden
elements (prompt-injection defence), scripts, styles, comments and invisible
characters -> readability-style container scoring -> readable text (headings,
``- `` list items, ``a | b`` table rows, links reduced to their text).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tokenslim.errors import ConfigError, InputError, InputTooLarge
from tokenslim.html._detect import looks_like_html

__all__ = ["extract_main_text", "extract", "Extraction", "Removed", "looks_like_html", "MAX_HTML_BYTES"]

MAX_HTML_BYTES = 50_000_000
"""Default largest page (in bytes, or characters for str input) that :func:`extract` accepts."""

HIDDEN_RULES = frozenset(
    (
        "hidden_attribute", "never_rendered", "display_none", "visibility_hidden", "opacity_0", "font_size_0",
        "text_indent_offscreen", "clip_zero", "transform_offscreen", "offscreen_position", "zero_size_box",
        "same_color_text", "transparent_text", "content_visibility_hidden", "css_over_budget", "template", "noscript",
        "comment", "invisible_chars", "browser_hidden", "covered_text", "closed_details", "letter_spacing_collapsed", "scaled_text",
        "masked", "text_security", "backface_hidden", "replaced_content",
    )
)
"""Rules that remove text a human reader never sees (as opposed to boilerplate)."""


@dataclass(frozen=True)
class Removed:
    """What one rule removed: how many elements (or characters) and how many characters of text."""

    count: int
    chars: int

    def __add__(self, other: "Removed") -> "Removed":
        """Both records as one (the same rule counted in two places)."""
        return Removed(self.count + other.count, self.chars + other.chars)


@dataclass(frozen=True)
class Extraction:
    """The result of :func:`extract`.

    Attributes:
        text: The main content as clean text.
        title: The page ``<title>``, or ``""``.
        encoding: The encoding used to decode bytes input (``"str"`` for str input).
        input_chars: Characters of the decoded page.
        removed: Per rule (``"display_none"``, ``"script"``, ``"comment"``, ``"boilerplate"``...),
            what it removed.
    """

    text: str
    title: str = ""
    encoding: str = "str"
    input_chars: int = 0
    removed: dict[str, Removed] = field(default_factory=dict)

    @property
    def hidden(self) -> dict[str, Removed]:
        """Only the rules that removed text invisible to a human reader."""
        return {k: v for k, v in self.removed.items() if k in HIDDEN_RULES}


def extract(
    html: str | bytes,
    *,
    url: str | None = None,
    keep_tables: bool = True,
    max_bytes: int = MAX_HTML_BYTES,
    renderer: str = "python",
) -> Extraction:
    """Extract the main content of a page and record what was removed.

    Args:
        html: The page, as text or raw bytes (the encoding is detected).
        url: The page address; accepted for API symmetry with other extractors and
            not used to pick site rules (there are none).
        keep_tables: Keep table rows (``a | b | c``); when false, tables are dropped.
        max_bytes: Refuse pages larger than this (bytes for bytes input, characters for str).
        renderer: ``"python"`` (default: tokenslim's own rules, fast) or ``"chromium"`` (exact: Chromium
            renders the page and decides which text a reader sees; the hidden text it removed is recorded
            as rule ``"browser_hidden"``; needs the ``browser`` extra and a Chromium executable).

    Returns:
        An :class:`Extraction`. Empty or text-less pages give ``text == ""``.

    Raises:
        InputError: ``html`` is neither str nor bytes.
        InputTooLarge: the page is larger than ``max_bytes``.
        ConfigError: ``renderer`` is neither ``"python"`` nor ``"chromium"``.
        MissingDependency: ``renderer="chromium"`` without Playwright or Chromium installed.
    """
    from tokenslim.html._extract import run

    if not isinstance(html, (str, bytes, bytearray)):
        raise InputError(f"html must be str or bytes, got {type(html).__name__}: {html!r:.80}")
    if len(html) > max_bytes:
        raise InputTooLarge(
            f"HTML page of {len(html):,} {'bytes' if not isinstance(html, str) else 'characters'} exceeds "
            f"max_bytes={max_bytes:,}; raise max_bytes or split the page"
        )
    if renderer == "chromium":
        from tokenslim.html._extract import run_chromium

        return run_chromium(html if isinstance(html, str) else bytes(html), keep_tables=keep_tables)
    if renderer != "python":
        raise ConfigError(f"renderer must be 'python' or 'chromium', got {renderer!r}")
    return run(html if isinstance(html, str) else bytes(html), keep_tables=keep_tables)


def extract_main_text(html: str | bytes, *, url: str | None = None) -> str:
    """The main content of an HTML page as clean text (see :func:`extract`).

    Args:
        html: The page, as text or raw bytes.
        url: The page address (not used for site rules).

    Returns:
        The main text, ``""`` when the page has none.

    Raises:
        InputError: ``html`` is neither str nor bytes.
        InputTooLarge: the page is larger than :data:`MAX_HTML_BYTES`.
    """
    return extract(html, url=url).text
