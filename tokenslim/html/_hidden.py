"""Rules for text a human reader never sees (hidden-text / prompt-injection defence).

An element is hidden when its attributes or its inline ``style`` say so. Each rule
has a name, used as the key of :attr:`tokenslim.html.Extraction.removed`.
"""

from __future__ import annotations

import re

__all__ = ["hidden_rule", "INVISIBLE_CHARS", "background_of", "stylesheet_hidden"]

# Zero-width characters, bidi controls (embeddings, overrides, isolates, marks), BOM, soft hyphen, word joiners,
# and Unicode tag characters (U+E0000-E007F: invisible, yet read by LLM tokenizers - "ASCII smuggling").
INVISIBLE_CHARS = re.compile("[\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u180e\U000e0000-\U000e007f]")

_ZERO = r"-?(?:0+(?:\.0*)?|\.0+)(?:px|em|rem|pt|%|vw|vh)?(?![\w.%])"
_STYLE_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("display_none", re.compile(r"(?:^|[;\s])display\s*:\s*none")),
    ("visibility_hidden", re.compile(r"(?:^|[;\s])visibility\s*:\s*(?:hidden|collapse)")),
    ("opacity_0", re.compile(r"(?:^|[;\s])opacity\s*:\s*" + _ZERO)),
    ("font_size_0", re.compile(r"(?:^|[;\s])font-size\s*:\s*" + _ZERO)),
    (
        "transparent_text",
        re.compile(r"(?:^|[;\s])color\s*:\s*(?:transparent|(?:rgba|hsla)\([^)]*[,/]\s*0*\.?0*%?\s*\)|#[0-9a-f]{6}00\b|#[0-9a-f]{3}0\b)"),
    ),
    ("text_indent_offscreen", re.compile(r"text-indent\s*:\s*-\s*\d{3,}")),
    ("clip_zero", re.compile(r"clip\s*:\s*rect\(\s*0|clip-path\s*:\s*(?:inset\(\s*50%|circle\(\s*0)")),
    ("transform_offscreen", re.compile(r"transform\s*:[^;]*(?:scale\(\s*0\s*[,)]|translate[xy]?\(\s*-\d{4,})")),
)
_POSITIONED = re.compile(r"position\s*:\s*(?:absolute|fixed)")
_OFFSCREEN = re.compile(r"(?:^|[;\s])(?:left|top|right|margin-left|margin-top)\s*:\s*-\s*\d{3,}")
_ZERO_BOX = re.compile(r"(?:^|[;\s])(?:width|height|max-width|max-height)\s*:\s*0(?:px)?\s*(?:;|$|!)")
_OVERFLOW_HIDDEN = re.compile(r"overflow\s*:\s*hidden")
_COLOR = re.compile(r"(?:^|[;\s])color\s*:\s*([^;!]+)")
_BACKGROUND = re.compile(r"background(?:-color)?\s*:\s*([^;!]+)")
_NAMED = {"white": "#ffffff", "black": "#000000"}


def _norm_color(value: str) -> str | None:
    v = value.strip().lower().replace(" ", "")
    v = _NAMED.get(v, v)
    if re.fullmatch(r"#[0-9a-f]{3}", v):
        v = "#" + "".join(c * 2 for c in v[1:])
    m = re.fullmatch(r"rgba?\((\d+),(\d+),(\d+)(?:,(?:1|1\.0+))?\)", v)
    if m:
        v = "#" + "".join(f"{int(x):02x}" for x in m.groups())
    return v if re.fullmatch(r"#[0-9a-f]{6}", v) else None


def background_of(style: str) -> str | None:
    """The background colour an inline style sets (normalised ``#rrggbb``), if any."""
    m = _BACKGROUND.search(style.lower())
    return _norm_color(m.group(1).split()[0]) if m else None


def hidden_rule(attrs: dict[str, str | None], inherited_bg: str | None) -> str | None:
    """Name of the rule that hides an element with these attributes, or ``None``.

    Args:
        attrs: The element's attributes.
        inherited_bg: The nearest inline background colour of an ancestor (``#rrggbb``),
            for the same-colour-text rule.

    Returns:
        ``"hidden_attribute"``, ``"aria_hidden"``, a style rule name, or ``None``.
    """
    if "hidden" in attrs:
        return "hidden_attribute"
    aria = attrs.get("aria-hidden")
    if aria is not None and aria.strip().lower() == "true":
        return "aria_hidden"
    style = attrs.get("style")
    if not style:
        return None
    s = style.lower()
    for name, rx in _STYLE_RULES:
        if rx.search(s):
            return name
    if _POSITIONED.search(s) and _OFFSCREEN.search(s):
        return "offscreen_position"
    if _ZERO_BOX.search(s) and _OVERFLOW_HIDDEN.search(s):
        return "zero_size_box"
    m = _COLOR.search(s)
    if m:
        fg = _norm_color(m.group(1))
        bg = background_of(s) or inherited_bg
        if fg is not None and fg == bg:
            return "same_color_text"
    return None


_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_AT_BLOCK = re.compile(r"@[^{};]*\{(?:[^{}]*\{[^{}]*\})*[^{}]*\}")
_CSS_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
_SIMPLE_SELECTOR = re.compile(r"^(?:[a-z][a-z0-9-]*)?([.#])([\w-]+)$", re.I)
_SELECTOR_NAME = re.compile(r"[.#]([\w-]+)")
_SHOWN = re.compile(r"display\s*:\s*(?!none)[a-z]|visibility\s*:\s*visible|opacity\s*:\s*(?:1|0?\.[1-9])")


def stylesheet_hidden(css: str, *, shown_css: str = "") -> tuple[frozenset[str], frozenset[str]]:
    """Classes and ids that a page's own ``<style>`` rules hide (``.x {display: none}``).

    Why: an injected instruction can hide behind a class as easily as behind an inline
    style. Only simple selectors count (``.name``, ``#name``, ``tag.name``, comma lists);
    rules inside ``@media``/``@supports`` blocks are skipped (they hide on some screens
    only), and a name that any other rule shows again (``.tab.active {display: block}``)
    is not treated as hidden, so tabs and menus toggled by script keep their text.

    Args:
        css: The text of the page's ``<style>`` elements.
        shown_css: Rules that only show (the page's ``<noscript><style>``): a name
            they show is visible to a reader without scripts, so it is not hidden.

    Returns:
        ``(hidden class names, hidden ids)``.
    """
    css = _AT_BLOCK.sub("", _CSS_COMMENT.sub("", css.lower()))
    classes: set[str] = set()
    ids: set[str] = set()
    shown: set[str] = set()
    for selectors, decls in _CSS_RULE.findall(css):
        if _SHOWN.search(decls):
            shown.update(_SELECTOR_NAME.findall(selectors))
            continue
        if hidden_rule({"style": decls}, None) is None:
            continue
        for sel in selectors.split(","):
            m = _SIMPLE_SELECTOR.match(sel.strip())
            if m:
                (classes if m.group(1) == "." else ids).add(m.group(2))
    for selectors, decls in _CSS_RULE.findall(_CSS_COMMENT.sub("", shown_css.lower())):
        if _SHOWN.search(decls):
            shown.update(_SELECTOR_NAME.findall(selectors))
    return frozenset(classes - shown), frozenset(ids - shown)
