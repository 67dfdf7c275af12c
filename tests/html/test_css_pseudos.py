"""A selector list is invalid whole when Chromium refuses one of its selectors: tokenslim/html/css_pseudos.txt
(written by scripts/build_css_pseudos.py) against the browser, and extraction against both."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import tinycss2

from tokenslim.html import extract_main_text
from tokenslim.html._css import _chromium_pseudos, _rejected_plain, rejected_selector_list

ROOT = Path(__file__).resolve().parents[2]
LEAD = "The council met on Tuesday to discuss the repair schedule for the northern bridges."
TAIL = "Residents may comment on the plan at the town hall until the end of the month."


def _script():  # scripts/ is not a package: load the builder for its candidate list
    spec = importlib.util.spec_from_file_location("build_css_pseudos", ROOT / "scripts" / "build_css_pseudos.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _forms() -> tuple[list[str], list[str]]:
    """The file's accepted forms (as written there), and the builder's candidates the file leaves out."""
    lines = (ROOT / "tokenslim" / "html" / "css_pseudos.txt").read_text(encoding="utf-8").splitlines()
    accepted = [line for line in lines if line and not line.startswith("#") and line != "::-webkit-*"]
    names = {line.split("(")[0] for line in accepted}
    refused = [c for c in _script().candidates() if "(" not in c and c not in names
               and not c.startswith("::-webkit-")]
    return accepted, refused + [":frobnicate", ":-webkit-frobnicate", "::-internal-frobnicate"]


def _page(forms: list[str]) -> str:
    """One paragraph per form, hidden by one rule and shown again by a list that holds the form."""
    css = "".join(f".w{i}{{display:none}} .p{form}, .w{i}{{display:block}}\n" for i, form in enumerate(forms))
    paras = "".join(f'<p class="w{i}">Paragraph token zq{i}x says the line is here for a reader.</p>'
                    for i in range(len(forms)))
    return f"<!DOCTYPE html><html><head><style>{css}</style></head><body><article><p>{LEAD}</p>{paras}<p>{TAIL}</p></article></body></html>"


def _shown_in_chromium(browser, html: str, n: int) -> list[bool]:
    nodes = browser.text_nodes(html)
    return [any(f"zq{i}x" in node.text and node.visible for node in nodes) for i in range(n)]


def test_chromium_accepts_every_form_of_the_file_and_extraction_reads_them_so(browser):
    accepted, _ = _forms()
    assert len(accepted) > 100
    html = _page(accepted)
    out = extract_main_text(html)
    shown = _shown_in_chromium(browser, html, len(accepted))
    assert [form for form, s in zip(accepted, shown) if not s] == [], "forms Chromium refuses now: rebuild the file"
    assert [form for i, form in enumerate(accepted) if f"zq{i}x" not in out] == []


def test_chromium_refuses_the_other_candidates_and_extraction_reads_them_so(browser):
    _, refused = _forms()
    assert ":frobnicate" in refused and ":-moz-focusring" in refused and "::-moz-selection" in refused
    html = _page(refused)
    out = extract_main_text(html)
    shown = _shown_in_chromium(browser, html, len(refused))
    assert [form for form, s in zip(refused, shown) if s] == [], "forms Chromium accepts now: rebuild the file"
    assert [form for i, form in enumerate(refused) if f"zq{i}x" in out] == []


@pytest.mark.parametrize(("prelude", "rejected"), [
    (".a, .b", False), (".a:hover, .b", False), (".a::before, .b", False), (".a:-moz-focusring, .b", True),
    (".a::-webkit-anything, .b", False), (".a::-webkit-any(.c), .b", True), (":is(.a:frobnicate), .b", False),
    (":where(:frobnicate), .b", False), (".a:not(:frobnicate), .b", True), (".a, , .b", True), (".a,", True),
    (".a >> .b, .c", True), (".a:nth-child(foo), .c", True), (".a:nth-child(2n+1 of .b), .c", False),
    (".a:, .b", True), (".a: hover, .b", True), (".a:not(.b, .c), .d", False), ("& .a, .b", False),
    ("[hidden], .b", False), ("[a=b i], .b", False), ("[a=b s], .b", True), (".a:not([a=b s]), .b", True),
    ("#1a, .b", True), ("#-1, .b", True), ("#-a, .b", False), ("#a1", False), ("#1a", True),
])
def test_the_text_reading_agrees_with_the_token_reading(prelude, rejected):
    assert rejected_selector_list(tinycss2.parse_component_value_list(prelude)) is rejected
    if not any(c in prelude for c in "&"):
        assert _rejected_plain(prelude, nested=False) is rejected


def test_a_nested_relative_selector_is_valid():
    assert rejected_selector_list(tinycss2.parse_component_value_list("> .a, .b"), nested=True) is False
    assert _rejected_plain("> .a, .b", nested=True) is False
    assert _chromium_pseudos()[1], "Chromium takes any ::-webkit- pseudo-element"
