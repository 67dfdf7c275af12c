"""Does a chunk of text hold HTML markup that a browser would render (and so could hide text)?

Why: StripHTML is the hidden-text defence, so a page must not dodge it with a prefix (a
UTF-8 BOM, an ``<?xml ...?>`` declaration, a line of plain text, blank lines, an inline
``<svg>`` sprite) or by arriving as a fragment. Prose such as ``a < b`` or ``<3`` must
still never be taken for markup. Text without ``<`` is rejected by one ``str.find``.
"""

from __future__ import annotations

import re

__all__ = ["looks_like_html"]

# Markup that only a document or a hiding vector has: document structure, elements whose
# content is never shown as such, comments, an XML declaration.
_MARKUP = re.compile(
    r"<(?:!doctype\s+html|\?xml|!--|(?:html|head|body|style|script|template|noscript|svg|math|iframe|object|"
    r"title|meta|link|article|main|section|nav|header|footer|aside|table|font|center)[\s>/])",
    re.I,
)
# A closed start tag with something after its name (``<span style=...>``, ``<p hidden>``); the
# attribute part never spans another "<", so the scan stays linear.
_START_TAG = re.compile(r"<[a-z][a-z0-9-]{0,31}\s[^<>]*>", re.I)
# Tags that prose rarely writes; two of them (or one at the very start) make a fragment.
_TAG = re.compile(r"</?(?:div|p|span|a|b|i|u|em|strong|small|br|ul|ol|li|h[1-6]|tr|td|th|img|blockquote|pre|code)[\s>/]",
                  re.I)


def looks_like_html(text: str) -> bool:
    """True when ``text`` holds HTML markup anywhere, not only at its start.

    A chunk counts as HTML when it contains a document or hiding marker (doctype, ``<html>``,
    ``<head>``, ``<body>``, ``<style>``, ``<script>``, ``<template>``, ``<noscript>``, ``<svg>``,
    a comment, an XML declaration, a closed start tag with attributes...), when it starts with an HTML
    tag after any BOM and whitespace, or when it has at least two ordinary tags. The scan is one
    linear regular-expression search (a start tag's attribute part never spans another ``<``).

    Args:
        text: A chunk's (or message's) text.

    Returns:
        Whether to run HTML extraction on it.
    """
    first = text.find("<")
    if first < 0:
        return False
    if _MARKUP.search(text, first) is not None:
        return True
    for m in _START_TAG.finditer(text, first):
        tag = m.group()
        if "=" in tag or "hidden" in tag.lower():
            return True
    head = text.lstrip("\ufeff \t\r\n\f\v")
    if head.startswith("<") and _TAG.match(head) is not None:
        return True
    found = _TAG.search(text, first)
    return found is not None and _TAG.search(text, found.end()) is not None
