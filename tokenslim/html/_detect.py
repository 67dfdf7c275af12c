"""Cheap test: does a chunk of text look like an HTML document or fragment?

Why: the StripHTML stage runs first on every request, so plain text must be
rejected in well under a microsecond per chunk, and prose such as ``a < b`` must
never be mistaken for markup.
"""

from __future__ import annotations

import re

__all__ = ["looks_like_html"]

_STRUCTURAL = re.compile(
    r"<(?:!doctype\s+html|html|head|body|div|p|article|section|main|span|table|ul|ol|li|h[1-6]|a\s|br|"
    r"header|footer|nav|meta|title|script|style|!--)[\s>/]",
    re.I,
)


def looks_like_html(text: str) -> bool:
    """True when ``text`` starts with a tag and contains a structural HTML tag.

    Args:
        text: A chunk's text.

    Returns:
        Whether to run HTML extraction on it.
    """
    head = text[:64].lstrip()
    if not head.startswith("<") or len(head) < 2:
        return False
    c = head[1]
    if not (c.isalpha() or c == "!"):
        return False
    return _STRUCTURAL.search(text, 0, 4096) is not None
