"""Peer extractors the HTML benchmarks compare tokenslim with, loaded one way for all of them.

Each loader imports its library on call (benchmark peers only, never runtime dependencies of
tokenslim) and returns a function from raw page bytes to plain text.
"""

from __future__ import annotations

from typing import Callable


def trafilatura_text() -> Callable[[bytes], str]:
    """trafilatura ``extract`` with its defaults (``""`` when it finds nothing)."""
    import trafilatura

    return lambda page: trafilatura.extract(page) or ""


def readability_text() -> Callable[[bytes], str]:
    """readability-lxml ``Document.summary()``, then the text nodes of that HTML joined by spaces."""
    import lxml.html
    from readability import Document

    def run(page: bytes) -> str:
        summary = Document(page).summary(html_partial=True)
        return " ".join(lxml.html.fromstring(summary).itertext()) if summary.strip() else ""

    return run
