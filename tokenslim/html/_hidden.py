"""Attribute rules for text a human reader never sees, and invisible characters.

Style-based rules (inline styles and stylesheets, through the cascade) live in
:mod:`tokenslim.html._style`; these are the ones an attribute decides on its own.
"""

from __future__ import annotations

import re

__all__ = ["hidden_rule", "INVISIBLE_CHARS"]

# Zero-width characters, bidi controls (embeddings, overrides, isolates, marks), BOM, soft hyphen, word joiners,
# and Unicode tag characters (U+E0000-E007F: invisible, yet read by LLM tokenizers - "ASCII smuggling").
INVISIBLE_CHARS = re.compile("[\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u180e\U000e0000-\U000e007f]")


def hidden_rule(attrs: dict[str, str | None]) -> str | None:
    """``"hidden_attribute"``, ``"aria_hidden"`` or ``None`` for an element with these attributes.

    The ``hidden`` attribute (any value, ``until-found`` included) and ``aria-hidden="true"``
    hide the element and its subtree. A stylesheet can show a ``hidden`` element again
    (``[hidden]{display:block}``); such text is still treated as hidden, erring towards removal.
    """
    if "hidden" in attrs:
        return "hidden_attribute"
    aria = attrs.get("aria-hidden")
    if aria is not None and aria.strip().lower() == "true":
        return "aria_hidden"
    return None
