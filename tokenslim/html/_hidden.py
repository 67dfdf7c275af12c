"""Attribute rules for text a human reader never sees, and invisible characters.

Style-based rules (inline styles and stylesheets, through the cascade) live in
:mod:`tokenslim.html._style`; these are the ones an attribute decides on its own.
"""

from __future__ import annotations

import re

__all__ = ["hidden_rule", "INVISIBLE_CHARS"]

# Unicode's default-ignorable code points (DerivedCoreProperties.txt, Default_Ignorable_Code_Point), which a
# browser draws as nothing, plus U+180E: zero-width characters, bidi controls, BOM, soft hyphen, word joiners,
# fillers, variation selectors (U+FE00-FE0F, U+E0100-E01EF: 256 of them spell any byte, attached to a visible
# character) and tag characters (U+E0000-E007F, "ASCII smuggling"). All are read by LLM tokenizers.
INVISIBLE_CHARS = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)


def hidden_rule(attrs: dict[str, str | None]) -> str | None:
    """``"hidden_attribute"`` or ``None`` for an element with these attributes.

    The ``hidden`` attribute (any value, ``until-found`` included) and the ``popover`` attribute
    (a popover is shown only when a script or a click opens it) hide the element and its subtree
    through the user-agent style sheet, which an author rule can undo
    (:meth:`tokenslim.html._style.Styler.shows`). ``aria-hidden`` is not a rule: it hides from
    screen readers, not from eyes, and Chromium draws such text.
    """
    if "hidden" in attrs or "popover" in attrs:
        return "hidden_attribute"
    return None
