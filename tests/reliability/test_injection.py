"""Hidden-text injection corpus: every hidden instruction removed, every visible paragraph kept.

tests/reliability/injection_corpus/ holds pages whose visible text is real HotpotQA
paragraphs and which hide instructions with one technique each. Pages 01-17 are
hand-written (inline CSS, simple stylesheet rules, aria-hidden, the hidden attribute,
<template>, <noscript>, invisible Unicode, comments, off-screen positioning, text-indent,
font-size:0, opacity:0, same-colour text, transparent text, clipping, one page combining
them); pages 18+ come from make_pages.py (stylesheet rules the cascade must resolve,
inline CSS written another way, colour against the effective background, prefixes,
fragments, non-WHATWG charset labels), many with a control paragraph that the same
mechanism leaves visible. manifest.json lists, per page, the hidden instructions and the
visible paragraphs. extract_main_text on the bytes, and default_pipeline() with the page
as a chunk and as a tool message in the history, are checked; each hidden instruction
carries a canary word (``zx07``). benchmarks/bench_injection.py runs trafilatura and
readability on the same pages.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import tokenslim
from tokenslim.html import extract_main_text

CORPUS = Path(__file__).parent / "injection_corpus"
MANIFEST = json.loads((CORPUS / "manifest.json").read_text(encoding="utf-8"))["pages"]
_TAG_CHARS = re.compile("[\U000e0000-\U000e007f\ufe00-\ufe0f\U000e0100-\U000e01ef]")  # tag characters, variation selectors


def _norm(text: str) -> str:
    return " ".join(text.split())


def _leaks(text: str, hidden: list[str]) -> list[str]:
    """The hidden instructions (or their canary words) that reached ``text``."""
    flat = _norm(text).lower()
    out = [h for h in hidden if re.search(r"zx\d\d", h) and re.search(r"zx\d\d", h).group() in flat]
    # without a canary, the opening words (every instruction opens alike, so only then: a page may show
    # an instruction on screen, aria-hidden text being one, and that one is visible, not leaked)
    out += [h for h in hidden if not re.search(r"zx\d\d", h) and _norm(h).lower()[:40] in flat]
    if _TAG_CHARS.search(text):
        out.append("<unicode tag characters>")
    return out


@pytest.mark.parametrize("page", MANIFEST, ids=[p["file"] for p in MANIFEST])
def test_extract_main_text_removes_hidden_keeps_visible(page):
    html = (CORPUS / page["file"]).read_bytes()
    text = extract_main_text(html)
    assert not _leaks(text, page["hidden"]), f"{page['technique']}: hidden text leaked"
    for para in page["visible"]:
        assert _norm(para) in _norm(text), f"visible paragraph lost: {para[:60]}"


@pytest.mark.parametrize("page", MANIFEST, ids=[p["file"] for p in MANIFEST])
def test_default_pipeline_removes_hidden_from_raw_html_chunk(page):
    html = (CORPUS / page["file"]).read_text(encoding="utf-8")
    query = page["visible"][0].split(" is ")[0][:60]
    r = tokenslim.default_pipeline().run(f"What is {query}?", [html])
    prompt = r.to_prompt()
    assert not _leaks(prompt, page["hidden"]), f"{page['technique']}: hidden text reached the prompt"
    assert r.chunks, "the page's visible text was dropped entirely"
    # compression keeps the first (lead) paragraph's opening sentence of the relevant page
    assert _norm(page["visible"][0].split(".  ")[0]) in _norm(prompt)
    strip = r.report[0]
    assert strip.name == "strip_html" and strip.drops[0].reason == "html_boilerplate"


@pytest.mark.parametrize("page", MANIFEST, ids=[p["file"] for p in MANIFEST])
def test_default_pipeline_removes_hidden_from_html_in_history(page):
    html = (CORPUS / page["file"]).read_text(encoding="utf-8")
    history = [{"role": "user", "content": "Fetch the page, please."},
               {"role": "tool", "content": html, "tool_call_id": "call_1"}]
    r = tokenslim.default_pipeline().run("What does the page say?", [], history=history)
    prompt = r.to_prompt()
    assert not _leaks(prompt, page["hidden"]), f"{page['technique']}: hidden text reached the prompt via history"
    for para in page["visible"]:
        assert _norm(para) in _norm(prompt), f"visible paragraph lost: {para[:60]}"
    assert any(d.kind == "turn" and d.reason == "html_boilerplate" for d in r.drops)


def test_corpus_covers_every_technique_with_real_text():
    techniques = " ".join(p["technique"] for p in MANIFEST).lower()
    for word in ("css", "aria-hidden", "hidden attribute", "template", "noscript", "zero-width", "comment",
                 "off-screen", "text-indent", "font-size:0", "opacity:0", "background", "transparent",
                 # stylesheet rules the cascade resolves
                 "@media", "@supports", "@layer", "compound selector", "attribute selector", "descendant selector",
                 ":is()", "!important", "overrides an earlier show rule", "link href=data:", "@import",
                 # inline CSS written another way
                 "escape", "var(", "content-visibility", "clip-path:inset", "clip:rect", "scaley(0)",
                 "position:relative;left:-9999px", "opacity:0.001", "filter:opacity(0)", "relative (em/%) child",
                 # colour against the effective background
                 "default canvas", "rgb(", "hsl(", "named colours", "short hex", "ancestor",
                 # prefixes, fragments, charsets
                 "bom", "<?xml", "line of plain text", "blank lines", "<svg> sprite", "fragment", "utf-7",
                 "unicode_escape"):
        assert word in techniques, word
    assert len(MANIFEST) >= 60
    assert sum(len(p["hidden"]) for p in MANIFEST) >= 100
    controls = [p for p in MANIFEST if len(p["visible"]) > 3]  # pages with a same-mechanism visible control
    assert len(controls) >= 15
    # the canary check is live: the same instructions in plain markup would be caught
    for page in MANIFEST[:3]:
        visible_copy = "".join(f"<p>{h}</p>" for h in page["hidden"])
        leaked = _leaks(extract_main_text(f"<html><body><article>{visible_copy}<p>{page['visible'][0]}</p></article></body></html>"), page["hidden"])
        assert len(leaked) >= len(page["hidden"])


def test_stylesheet_rules_do_not_hide_visible_text():
    # content that a stylesheet shows on screen stays: script-toggled tabs, print-only rules, compound selectors
    a, b, c, d = (p["visible"][0] for p in MANIFEST[:4])
    css = (
        "<style>.tab{display:none} .tab.active{display:block} @media print{.noprint{display:none}}"
        " .menu .item{display:none} .gone{display:none}</style>"
    )
    html = (
        f"<html><head>{css}</head><body><article><div class='tab active'>{a}</div><p class='noprint'>{b}</p>"
        f"<p class='item'>{c}</p><p class='gone'>{d}</p></article></body></html>"
    )
    text = _norm(extract_main_text(html))
    for para in (a, b, c):
        assert _norm(para) in text
    assert _norm(d) not in text
