"""Decode raw HTML bytes to text: BOM, then a declared charset, then UTF-8, then cp1252.

Why: pages fetched by a retriever arrive as bytes in many encodings; guessing wrong
produces mojibake that wastes tokens and confuses the model.
"""

from __future__ import annotations

import codecs
import re

__all__ = ["decode_html"]

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# <meta charset="x"> or <meta http-equiv="Content-Type" content="text/html; charset=x">,
# and the XML declaration; searched in the first bytes only, as browsers do (prescan).
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_:.\-]+)""", re.I)
_XML_ENCODING = re.compile(rb"""^<\?xml[^>]+encoding\s*=\s*["']([A-Za-z0-9_.\-]+)""", re.I)
_PRESCAN_BYTES = 4096

# WHATWG: these labels mean windows-1252 in browsers, which is a superset of latin-1's printable range.
_ALIASES = {"iso-8859-1": "cp1252", "latin-1": "cp1252", "latin1": "cp1252", "us-ascii": "cp1252", "ascii": "cp1252"}


def _declared(head: bytes) -> str | None:
    m = _META_CHARSET.search(head) or _XML_ENCODING.search(head)
    if not m:
        return None
    label = m.group(1).decode("ascii", "ignore").lower()
    label = _ALIASES.get(label, label)
    try:
        name = codecs.lookup(label).name
    except LookupError:
        return None
    # A page served as UTF-16 cannot declare itself in ASCII bytes; browsers ignore it too.
    return "utf-8" if name.startswith("utf-16") or name.startswith("utf-32") else name


def decode_html(data: bytes) -> tuple[str, str]:
    """Decode HTML bytes.

    Order: byte-order mark; ``<meta charset>`` / XML declaration in the first 4 KiB;
    strict UTF-8; windows-1252 (never fails, every byte maps to a character).
    A declared charset that does not decode cleanly falls through to the next rule,
    since pages often lie about their encoding.

    Args:
        data: The raw page.

    Returns:
        ``(text, encoding_name)``.
    """
    for bom, name in _BOMS:
        if data.startswith(bom):
            return data[len(bom):].decode(name, errors="replace"), name
    declared = _declared(data[:_PRESCAN_BYTES])
    if declared is not None and declared != "utf-8":
        try:
            return data.decode(declared), declared
        except UnicodeDecodeError:
            pass
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    if declared == "utf-8":  # declared UTF-8 with a few broken bytes: keep UTF-8, replace the bad bytes
        text = data.decode("utf-8", errors="replace")
        if text.count("\ufffd") * 100 < len(text):
            return text, "utf-8"
    return data.decode("cp1252", errors="replace"), "cp1252"
