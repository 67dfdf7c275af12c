"""The extraction pipeline behind :func:`tokenslim.html.extract` (decode, parse, walk, select, render)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from tokenslim.errors import InputError
from tokenslim.html import Extraction, Removed
from tokenslim.html._blocks import walk
from tokenslim.html._encoding import decode_html
from tokenslim.html._flatten import cap_depth
from tokenslim.html._css import Cascade, build_cascade, collect_sheets, parse_inline
from tokenslim.html._doctype import quirks_mode
from tokenslim.html._hidden import INVISIBLE_CHARS, hidden_rule
from tokenslim.html._render import render
from tokenslim.html._score import select_blocks
from tokenslim.html._style import DARK_ROOT, ROOT_STATE, Styler

__all__ = ["run", "run_chromium"]


_STYLE = re.compile(r"<style[^>]*>(.*?)</style", re.I | re.S)


def _cut_noscript(text: str) -> tuple[str, int, int, str]:
    """Remove ``<noscript>...</noscript>`` (either case) before parsing.

    Browsers run scripts, so they never show <noscript> content; an HTML parser without
    scripting would let a ``<p>`` inside it escape into the page. A plain ``find`` loop:
    this runs on most pages, and is much cheaper than a regular expression.

    Returns:
        ``(text, elements removed, characters removed, CSS of the removed <style>s)``.
        The CSS matters: a page that hides its body until a script runs
        (``body.fadein{opacity:0}``) shows it again in a ``<noscript><style>``.
    """
    count = chars = 0
    removed: list[str] = []
    for open_tag, close_tag in (("<noscript", "</noscript"), ("<NOSCRIPT", "</NOSCRIPT")):
        start = text.find(open_tag)
        if start < 0:
            continue
        parts: list[str] = []
        pos = 0
        while start >= 0:
            close = text.find(close_tag, start)
            end = len(text) if close < 0 else text.find(">", close) + 1 or len(text)
            parts.append(text[pos:start])
            removed.append(text[start:end])
            count += 1
            chars += end - start
            pos = end
            start = text.find(open_tag, pos)
        parts.append(text[pos:])
        text = "".join(parts)
    css = "\n".join(m for seg in removed if "<style" in seg.lower() for m in _STYLE.findall(seg))
    return text, count, chars, css


def _title(tree: object) -> str:
    head = getattr(tree, "head", None)
    if head is None:
        return ""
    for node in head.iter():
        if node.tag == "title":
            return " ".join(node.text().split())
    return ""


def _dark_scheme(tree: Any, html_node: Any, cascade: Cascade | None, quirks: bool) -> bool:
    """Whether the page's root uses the dark colour scheme, which paints the canvas dark and the text white:
    its ``color-scheme`` (style sheets and its style attribute; else the first ``<meta name="color-scheme">``)
    names ``dark`` and not ``light`` (a reader's browser prefers light when both are offered)."""
    words: list[str] = []
    if html_node is not None and html_node.tag == "html":
        found = []
        if cascade is not None and (decl := cascade.by_elem.get(html_node.mem_id, {}).get("color-scheme")):
            found.append(decl)
        style = html_node.attributes.get("style")
        if style and (decl := parse_inline(style, quirks).get("color-scheme")):
            found.append(decl)
        if found:
            words = [t.lower_value for t in max(found, key=lambda kv: kv[0])[1] if t.type == "ident"]
    if not words or words == ["normal"]:
        for meta in tree.css("meta[name]"):
            if (meta.attributes.get("name") or "").strip().lower() == "color-scheme":
                words = (meta.attributes.get("content") or "").lower().split()
                break
    return "dark" in words and "light" not in words


def run(html: str | bytes, *, keep_tables: bool = True, select: bool = True) -> Extraction:
    """Extract main text from a page already checked for type and size.

    ``select=False`` keeps every block the walk found visible (no boilerplate selection): the
    differential fuzzer compares visibility decisions alone with it.

    Raises:
        InputError: the HTML parser rejected the page.
    """
    from selectolax.lexbor import LexborHTMLParser

    if isinstance(html, bytes):
        text, encoding = decode_html(html)
    else:
        text, encoding = html, "str"
    if not text or text.isspace():  # (not text.strip(), without copying the page)
        return Extraction("", encoding=encoding, input_chars=len(text))
    if "\x00" in text:
        text = text.replace("\x00", "")
    noscript = None
    noscript_css = ""
    if "<noscript" in text or "<NOSCRIPT" in text:
        text, n, chars, noscript_css = _cut_noscript(text)
        noscript = Removed(n, chars)
    n_tags = text.count("<")  # bounds the elements: for the depth cap and the matching budget
    try:
        tree = LexborHTMLParser(cap_depth(text, tags=n_tags))
    except Exception as exc:  # noqa: BLE001 - parser failures become one clear error type
        raise InputError(f"could not parse HTML ({len(text):,} chars): {exc}") from exc
    title = _title(tree)
    root = tree.body or tree.root
    if root is None:
        return Extraction("", title=title, encoding=encoding, input_chars=len(text))
    quirks = quirks_mode(text)
    sheets = collect_sheets(tree, quirks)
    if noscript_css:
        sheets.append(noscript_css)
    try:
        cascade = build_cascade(tree, sheets, page=text, tags=n_tags, quirks=quirks) if any(sheets) else None
    except RecursionError:  # CSS nested deeper than Python's stack: undecidable, treated like over budget
        cascade = Cascade(over_budget=True)
    if cascade is not None and cascade.over_budget:
        # Visibility cannot be decided within the matching budget: nothing of the page is passed on.
        return Extraction("", title=title, encoding=encoding, input_chars=len(text),
                          removed={"css_over_budget": Removed(1, len(text))})
    styler = Styler(cascade, quirks)
    state = ROOT_STATE if cascade is None or not cascade.initial else replace(ROOT_STATE, custom=dict(cascade.initial))
    html_node = tree.root
    if _dark_scheme(tree, html_node, cascade, quirks):
        state = replace(state, bg=DARK_ROOT, color=(1.0, 1.0, 1.0, 1.0))
    if html_node is not None and html_node is not root and html_node.tag == "html":
        attrs = html_node.attributes
        rule = hidden_rule(attrs) if attrs else None
        if rule is None:
            rule, state = styler.element(html_node, "html", attrs, state)
        if rule is not None:
            return Extraction("", title=title, encoding=encoding, input_chars=len(text),
                              removed={rule: Removed(1, len(text))})
    model = walk(root, styler, state, dsd="shadowrootmode" in text, quirks=quirks)
    kept, dropped = select_blocks(model) if select else (model.blocks, [])
    removed = {k: Removed(v[0], v[1]) for k, v in model.removed.items()}
    if noscript is not None:
        removed["noscript"] = removed.get("noscript", Removed(0, 0)) + noscript
    if dropped:
        removed["boilerplate"] = Removed(len(dropped), sum(len(b.text) for b in dropped))
    out = render(kept, keep_tables=keep_tables)
    if not out.isascii() and INVISIBLE_CHARS.search(out):  # never shown, can hide instructions (all non-ASCII)
        out, invisible = INVISIBLE_CHARS.subn("", out)
        removed["invisible_chars"] = Removed(invisible, invisible)
    return Extraction(out, title=title, encoding=encoding, input_chars=len(text), removed=removed)


def run_chromium(html: str | bytes, *, keep_tables: bool = True) -> Extraction:
    """:func:`run` on the page as Chromium shows it (:meth:`tokenslim.html._browser.Browser.visible_html`).

    The encoding is decided as in :func:`run`; the browser's verdict replaces the style rules, and the
    rules that read markup only (comments, scripts, invisible code points, boilerplate) still apply.
    """
    from tokenslim.html._browser import thread_browser

    if isinstance(html, bytes):
        text, encoding = decode_html(html)
    else:
        text, encoding = html, "str"
    if not text or text.isspace():
        return Extraction("", encoding=encoding, input_chars=len(text))
    shown, nodes, chars = thread_browser().visible_html(text.replace("\x00", ""))
    ex = run(shown, keep_tables=keep_tables)
    removed = dict(ex.removed)
    if nodes:
        removed["browser_hidden"] = Removed(nodes, chars)
    return Extraction(ex.text, title=ex.title, encoding=encoding, input_chars=len(text), removed=removed)
