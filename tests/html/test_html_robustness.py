"""Malformed, truncated, empty, huge and deeply nested input: clear errors or empty output."""

from __future__ import annotations

import pytest

from tokenslim.errors import InputError, InputTooLarge
from tokenslim.html import extract, extract_main_text


@pytest.mark.parametrize("html", ["", "   \n", b"", "<html></html>", "<div><span></span></div>", "<!-- only -->", "<p> </p><br>"])
def test_empty_pages_give_empty_text(html):
    assert extract_main_text(html) == ""


def test_truncated_page_keeps_the_text_it_has(article_pages):
    _pid, html, gold = article_pages[1]
    first_para = gold.split("\n")[0][:60]
    cut = html[: html.find(first_para.encode()[:40]) + 3000]
    text = extract_main_text(cut)
    assert first_para[:40] in text


def test_malformed_markup(gold_paragraphs):
    a, b = gold_paragraphs[:2]
    html = f"<html><body><div><p>{a}<p>{b}</div></span></b><table><td>x</html></div>>>><<"
    text = extract_main_text(html)
    assert a in text and b in text


def test_deep_nesting_no_recursion_error(gold_paragraphs):
    depth = 100_000
    html = "<html><body>" + "<div>" * depth + f"<p>{gold_paragraphs[0]}</p>" + "</div>" * depth + "</body></html>"
    assert gold_paragraphs[0] in extract_main_text(html)


@pytest.mark.parametrize("depth", [17, 2_000])
def test_deeply_nested_css_functions_no_recursion_error(depth):
    # if() conditions, attr() fallbacks and calc() percentages are read recursively: each is bounded
    # (deeper than 16 levels, the declaration is dropped as a browser drops what it cannot parse)
    opened, closed = "(" * depth, ")" * depth
    css = (f".a{{display:if({opened}media(width > 0){closed}: none; else: block)}}"
           f".b{{color:attr(data-c type(<color>), {'attr(data-d type(<color>), ' * depth}#fff{')' * depth})}}"
           f".c{{position:fixed;top:{'calc(' * depth}100%{')' * depth}}}")
    html = (f"<html><head><style>{css}</style></head><body><p>Lead paragraph that stays on the page.</p>"
            "<p class='a'>first</p><p class='b'>second</p><p class='c'>third</p></body></html>")
    r = extract(html)
    assert "Lead paragraph" in r.text


def test_too_large_and_wrong_type():
    with pytest.raises(InputTooLarge, match="max_bytes"):
        extract("<p>" + "x" * 2000 + "</p>", max_bytes=1000)
    with pytest.raises(InputError, match="str or bytes"):
        extract_main_text(12345)  # type: ignore[arg-type]


def test_nul_bytes_and_binary_garbage():
    assert extract_main_text(b"<p>\x00</p>\x00\x01") == "\x01"
    text = extract_main_text(bytes(range(256)) * 10)
    assert isinstance(text, str) and "\x00" not in text
