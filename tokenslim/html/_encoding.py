"""Decode raw HTML bytes to text: BOM, a declared WHATWG encoding, UTF-8, then detection.

Why: pages fetched by a retriever arrive as bytes in many encodings; guessing wrong
produces mojibake that wastes tokens and confuses the model. A page also must not pick a
Python codec by name: ``<meta charset="utf-7">`` would turn ``+ADw-!-- ...`` comments into
visible text, and ``unicode_escape``, ``base64``, ``rot13``, ``zlib``... are not text
encodings at all. Only labels of the WHATWG Encoding Standard (the list browsers honour,
via ``webencodings``) are obeyed; any other label is ignored, never passed to ``codecs``.
"""

from __future__ import annotations

import codecs
import re

import webencodings

__all__ = ["decode_html", "whatwg_codec"]

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# <meta charset="x"> or <meta http-equiv="Content-Type" content="text/html; charset=x">,
# and the XML declaration; searched in the first bytes only, as browsers do (prescan).
_META_CHARSET = re.compile(rb"""<meta[^<>]{0,512}?charset\s*=\s*["']?\s*([A-Za-z0-9_:.\-]{1,40})""", re.I)
_XML_ENCODING = re.compile(rb"""^<\?xml[^<>]{0,256}?encoding\s*=\s*["']([A-Za-z0-9_.\-]{1,40})""", re.I)
_PRESCAN_BYTES = 4096
_DETECT_BYTES = 200_000  # charset detection looks at this much of an undeclared page (cost bound)


def whatwg_codec(label: str) -> str | None:
    """The Python codec for a WHATWG Encoding Standard label, or ``None`` for any other label.

    ``utf-16``/``utf-32`` labels declared in ASCII bytes mean UTF-8 (browsers do the same),
    and the "replacement" encodings (``iso-2022-kr``, ``hz-gb-2312``...) are not obeyed.

    Args:
        label: A charset label as written in a page (``"Shift_JIS"``, ``"latin1"``, ``"utf-7"``...).

    Returns:
        A codec name accepted by :func:`codecs.lookup` (``"cp1252"``, ``"shift_jis"``...), or ``None``.
    """
    enc = webencodings.lookup(label)
    if enc is None or enc.name == "replacement":
        return None
    name: str = enc.codec_info.name
    return "utf-8" if name.startswith(("utf-16", "utf-32")) else name


def _declared(head: bytes) -> str | None:
    m = _META_CHARSET.search(head) or _XML_ENCODING.search(head)
    if not m:
        return None
    return whatwg_codec(m.group(1).decode("ascii", "ignore"))


def _whatwg_codecs() -> frozenset[str]:
    names = set()
    for label in webencodings.LABELS:
        codec = whatwg_codec(label)
        if codec is not None:
            try:
                names.add(codecs.lookup(codec).name)
            except LookupError:  # x-user-defined: a webencodings codec, never a detection result
                continue
    return frozenset(names)


_WHATWG_CODECS = _whatwg_codecs()
# Python codecs that charset-normalizer may name, and the WHATWG encoding a browser would use for them.
_EQUIVALENT = {
    "euc_jis_2004": "euc_jp", "euc_jisx0213": "euc_jp", "shift_jis": "cp932", "shift_jis_2004": "cp932",
    "shift_jisx0213": "cp932", "big5": "big5hkscs", "cp950": "big5hkscs", "gb2312": "gbk", "hz": None,
    "euc_kr": "cp949", "johab": None, "latin-1": "cp1252", "iso8859-1": "cp1252", "ascii": "cp1252",
    "iso8859-9": "cp1254", "iso8859-11": "cp874", "tis-620": "cp874",
}


def _detected(data: bytes) -> str | None:
    """charset-normalizer's guess for an undeclared, non-UTF-8 page, if it is a WHATWG encoding."""
    from charset_normalizer import from_bytes

    try:
        best = from_bytes(data[:_DETECT_BYTES]).best()
    except Exception:  # noqa: BLE001 - detection is a hint; any failure falls back to windows-1252
        return None
    if best is None or not best.encoding:
        return None
    try:
        name = codecs.lookup(best.encoding).name
    except LookupError:
        return None
    name = _EQUIVALENT.get(name, name) or ""
    return name if name in _WHATWG_CODECS else None


def decode_html(data: bytes) -> tuple[str, str]:
    """Decode HTML bytes.

    Order: byte-order mark; a WHATWG label in ``<meta charset>`` / the XML declaration in
    the first 4 KiB; strict UTF-8; charset-normalizer's detection (WHATWG encodings only,
    used when it reads differently from windows-1252); windows-1252 (never fails). A declared charset that does
    not decode cleanly falls through to the next rule, since pages often lie about it.

    Args:
        data: The raw page.

    Returns:
        ``(text, codec name)``.
    """
    for bom, name in _BOMS:
        if data.startswith(bom):
            return data[len(bom):].decode(name, errors="replace"), name
    declared = _declared(data[:_PRESCAN_BYTES])
    if declared is not None and declared != "utf-8":
        try:
            return data.decode(declared), declared
        except (UnicodeDecodeError, LookupError):
            pass
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    if declared == "utf-8":  # declared UTF-8 with a few broken bytes: keep UTF-8, replace the bad bytes
        text = data.decode("utf-8", errors="replace")
        if text.count("\ufffd") * 100 < len(text):
            return text, "utf-8"
    fallback = data.decode("cp1252", errors="replace")
    guess = _detected(data)
    if guess is not None and guess not in ("utf-8", "cp1252"):
        try:
            text = data.decode(guess)
        except (UnicodeDecodeError, LookupError):
            text = fallback
        if text != fallback:  # windows-1252 stays the name when the guess reads the same
            return text, guess
    return fallback, "cp1252"
