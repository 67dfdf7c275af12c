"""Encoding detection for bytes input: BOM, meta charset, UTF-8, cp1252 fallback."""

from __future__ import annotations

import codecs

import pytest

from tokenslim.html import extract
from tokenslim.html._encoding import decode_html

GERMAN = "Bananen verderben – wie es bestimmt jeder schon erlebt hat – sehr schnell, größer ist der Ärger über „Flecken“."


def _page(body: str, head: str = "") -> str:
    return f"<html><head>{head}</head><body><article><p>{body}</p><p>{body}</p></article></body></html>"


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        (_page(GERMAN).encode("utf-8"), "utf-8"),
        (codecs.BOM_UTF8 + _page(GERMAN).encode("utf-8"), "utf-8"),
        (codecs.BOM_UTF16_LE + _page(GERMAN).encode("utf-16-le"), "utf-16-le"),
        (_page(GERMAN, '<meta charset="windows-1252">').encode("cp1252"), "cp1252"),
        (_page(GERMAN, '<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">').encode("cp1252"), "cp1252"),
        (_page(GERMAN).encode("cp1252"), "cp1252"),  # no declaration, not UTF-8: cp1252 fallback
    ],
)
def test_bytes_decoded_without_mojibake(data, encoding):
    ex = extract(data)
    assert ex.encoding == encoding
    assert GERMAN in ex.text
    assert "Ã" not in ex.text and "\ufffd" not in ex.text


def test_latin1_declared_page_decodes_umlauts():
    text = "Größe und Übermaß: süß."
    data = _page(text, '<meta charset="iso-8859-1">').encode("latin-1")
    assert text in extract(data).text


def test_lying_declaration_falls_back_to_utf8():
    data = _page(GERMAN, '<meta charset="shift_jis">').encode("utf-8")
    decoded, enc = decode_html(data)
    assert GERMAN in decoded and enc == "utf-8"


def test_unknown_charset_label_is_ignored():
    text, enc = decode_html(_page("plain ascii", '<meta charset="no-such-charset">').encode("ascii"))
    assert enc == "utf-8" and "plain ascii" in text
