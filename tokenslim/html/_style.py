"""Computed visibility of each element: the cascade's winning values, inheritance, and the rules
that decide whether a reader can see an element's text.

Why: a reader sees text only when every ancestor lets it through (display, opacity, clipping,
size, position, transforms) and the text itself is drawn (visibility, font size, colour against
the background it sits on). Values are tinycss2 tokens (escapes decoded); ``var()`` is resolved
against the element's inherited custom properties, with fallbacks.

Rules (the names key :attr:`tokenslim.html.Extraction.removed`), each with its threshold:

* subtree hidden: ``display_none`` (also ``table-column``/``table-column-group``, boxes that draw no content);
  ``replaced_content`` (``content: url()`` or another image on the element itself, which replaces its children);
  ``content_visibility_hidden``; ``opacity_0`` (opacity times
  every ancestor's opacity and ``filter: opacity()`` at most :data:`MAX_HIDDEN_OPACITY`);
  ``zero_size_box`` (width/height/max-* at most 1px with ``overflow`` hidden or clip);
  ``clip_zero`` (``clip: rect()`` or ``clip-path`` leaving at most 1px, or 99% inset);
  ``transform_offscreen`` (``scale(0)``, ``scaleX/Y(0)``, ``rotateX/Y(90deg)``, a singular ``matrix()``, the ``scale``
  property, a translation of :data:`OFFSCREEN_PX` or more, ``zoom`` at most 0.05);
  ``offscreen_position`` (absolute/fixed/relative with ``left``/``top`` at most
  -:data:`OFFSCREEN_PX`, or ``right``/``bottom`` at least that, or such a negative margin; a fixed box
  also with ``top``/``left`` at least :data:`FAR_PX` or ``right``/``bottom`` at most -:data:`OFFSCREEN_PX`,
  since no scrolling reaches it; never sticky, whose offsets only bound where it sticks);
  ``text_indent_offscreen`` (text-indent at most -:data:`OFFSCREEN_PX`).
* text hidden (a descendant may show its own text again): ``visibility_hidden`` (hidden or
  collapse; ``visibility: visible`` below shows again); ``font_size_0`` (computed size under
  :data:`MIN_FONT_PX`, relative sizes multiply a 0 parent); ``transparent_text`` (alpha at most
  0.05, of ``-webkit-text-fill-color`` when set, which paints the text instead of ``color``);
  ``same_color_text`` (WCAG contrast ratio of the text colour, blended over its effective
  background, below :data:`MIN_CONTRAST`; the background is the nearest ancestor's colours
  blended down to the white default canvas; both recoloured by ``filter`` colour functions and
  ``mix-blend-mode``, see :attr:`State.tint`; text over a background image is kept);
  ``letter_spacing_collapsed`` (``letter-spacing`` at most -:data:`MAX_COLLAPSED_SPACING` em of the
  text's font size: every glyph drawn over the last one, a line of no width); ``scaled_text`` (a line scaled by
  the ``transform``, ``scale`` or ``zoom`` of the element and its ancestors to under :data:`MIN_LINE_PX` tall).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from dataclasses import dataclass, field
from typing import Any

import tinycss2
from tinycss2 import color4

from tokenslim.html._css import (FIRST_LINE, HINT_KEY, VIEWPORT, Cascade, _split_commas, media_applies, parse_inline,
                                 quirky, supports_applies, to_px)

__all__ = ["State", "Styler", "ROOT_STATE", "MIN_FONT_PX", "MIN_CONTRAST", "MAX_HIDDEN_OPACITY", "OFFSCREEN_PX"]

MIN_FONT_PX = 3.0
_X_HEIGHT = 0.5
"""The x-height of a page's font as a share of its size (about 0.45-0.55 for common fonts): ``font-size-adjust: n``
draws text at n / this of its size."""
"""Text rendered smaller than this (CSS px) is unreadable, so treated as hidden."""
MIN_LOGICAL_FONT_PX = 6.0
"""Chromium's minimum logical font size: a size relative to the parent's (em, ex, ch, %, ``smaller``)
that computes above 0 is drawn at least this large (absolute sizes such as ``1px`` or ``0.1rem`` are not)."""
MIN_CONTRAST = 1.25
"""WCAG contrast ratio below which text is taken as invisible on its background (#eee on white is 1.16)."""
MAX_HIDDEN_OPACITY = 0.05
"""Effective opacity at or below which an element is invisible."""
LINE_HEIGHT = 1.15
"""A line's height over its font size (``line-height: normal`` in common fonts)."""
MIN_LINE_PX = 2.0
"""Text whose line, scaled by ``transform``/``scale``/``zoom``, is shorter than this (CSS px) is a smear, not
text (the size the oracle requires of a line rect)."""
MAX_COLLAPSED_SPACING = 0.45
"""``letter-spacing`` (em of the text's font size, negated) at which the glyphs of a line fall onto one
another: Chromium lays such a line out with no width (-0.4em is still drawn, squeezed)."""
OFFSCREEN_PX = 1000.0
"""Offsets (px) that move an element out of any screen."""
FAR_PX = 5000.0
"""A ``top``/``left`` (px) that puts a fixed box below or right of any screen."""

_VAR_DEPTH = 16
_MAX_VAR_TOKENS = 5_000
_FONT_KEYWORDS = {
    "xx-small": 9.0, "x-small": 10.0, "small": 13.0, "medium": 16.0, "large": 18.0, "x-large": 24.0,
    "xx-large": 32.0, "xxx-large": 48.0,
}
_WHITE = (1.0, 1.0, 1.0)
_BLACK = (0.0, 0.0, 0.0, 1.0)
DARK_ROOT = (18 / 255, 18 / 255, 18 / 255)
"""The canvas of a page whose root uses the dark colour scheme (Chromium's dark ``Canvas``, #121212); its text
starts white (``CanvasText``)."""


@dataclass(frozen=True, slots=True)
class State:
    """Inherited rendering state of an element.

    Attributes:
        font_px: Computed font size.
        color: Text colour, sRGB with alpha (0..1).
        visible: ``visibility`` is ``visible``.
        bg: Effective opaque background colour behind the element.
        bg_image: A background image or gradient sits behind the text (contrast unknown).
        opacity: Product of the element's and its ancestors' opacity.
        custom: Inherited custom properties (``--name`` -> tokens).
        text_rule: Why the element's own text is hidden, or ``None``.
        fill: ``-webkit-text-fill-color`` (paints the text instead of ``color``), or ``None``.
        font_abs: An ancestor (or the element) set an absolute font size (px, pt, rem...), which
            Chromium's smart minimum then respects.
        in_fixed: Inside a ``position:fixed`` box, which no scrolling moves.
        edge: The element's own box is a ``position:fixed`` box pinned to the viewport's right
            edge (bit 1: ``right`` at most 1px, ``left``, width and padding unset) or bottom edge
            (bit 2), so with no in-flow content it has no size and its content starts on that edge.
        pinned: The element's own box is placed from its parent's content edge on that axis (bit 1:
            x, bit 2: y): a fixed box whose offsets on the axis are both unset (its static position),
            or an absolute box with no right (bottom) offset and a left (top) one unset or >= 0.
            Inside an empty box of :attr:`edge` it starts past the viewport (see ``walk``).
        contained: An ancestor (or the element) has a ``transform``, ``filter``, ``perspective``,
            ``backdrop-filter``, ``contain`` or ``will-change`` that makes it the containing block
            of fixed descendants, which are then placed against it, not the viewport.
        block_rule: Why the block-level boxes inside this inline box are hidden, though its own
            text is not: an offscreen ``text-indent`` (inherited, but it indents block containers
            only). ``None`` if none.
        blockifies: The element is a flex or grid container, so its children are blocks whatever
            their tag or ``display`` (CSS blockification of flex and grid items). Only its children:
            an element that does not compute a state of its own passes a copy without it.
        clip_abs: An ancestor (or the element) clips its painting with ``clip-path``, and no box from it to
            here is a containing block for absolute boxes (positioned, or ``transform``...): an absolute box
            placed by a vertical offset lands against a containing block outside the clipped box, so its text is
            not painted (Chromium clips every descendant to the ``clip-path``).
        clip_fixed: The same for fixed boxes, which only ``transform`` and its kin contain.
        spacing: The inherited ``letter-spacing`` in CSS px (computed where it is declared, as CSS does).
        stroke: The colour of the inherited ``-webkit-text-stroke`` when its width is over 0, else ``None``:
            outlined text is drawn even with a transparent fill.
        yscale: The product of the vertical scale factors of the element's and its ancestors' ``transform``,
            ``scale`` and ``zoom``: text drawn shorter than :data:`MIN_LINE_PX` is a smear (``scaled_text``).
        shadow: The colour of the inherited ``text-shadow`` that draws the glyphs' shapes (blur at most a quarter
            of the font size), else ``None``: text with a transparent fill and such a shadow is seen.
        clip_text: The background colour an ancestor (or the element) with ``background-clip: text`` paints
            through the glyphs, else ``None`` (gradient text: ``color: transparent`` over a clipped background).
        clip_image: The same with a background image or gradient (its contrast is unknown: the text is seen).
        secured: The inherited ``-webkit-text-security`` draws every character as a disc (or circle, square), as in
            a password field: a reader sees the shapes, never the words.
        size_adjust: The inherited ``font-size-adjust`` number, which scales the used font size (by the number
            over the font's x-height ratio, taken as 0.5), else ``None``.
        tint: The colour functions of the element's and its ancestors' ``filter`` (``invert()``, ``brightness()``,
            ``contrast()``, ``grayscale()``, ``sepia()``, ``saturate()``, ``hue-rotate()``), innermost first: they
            recolour everything painted inside, text and backgrounds, before it reaches the screen. A
            ``mix-blend-mode`` adds its mode with the backdrop colour it blends with (``("multiply", (r, g, b))``).
        paint_clip: An ancestor has paint containment (``contain: paint``, ``strict`` or ``content``), which clips
            every descendant to its box, out-of-flow ones included: a box moved :data:`OFFSCREEN_PX` away is cut off.
        backdrop: The opaque colour that ancestors' backgrounds paint below the element's children within their
            stacking context, which a child's ``mix-blend-mode`` blends with; ``None`` when nothing opaque is
            painted there (the browser's default white canvas is not; a group starts empty at every stacking
            context: ``isolation``, ``opacity``, transforms, fixed boxes...).
        ctx3d: For the children of a ``transform-style: preserve-3d`` element, the 3x3 linear part of the transforms
            of the 3D rendering context they join (the element's, times its own preserve-3d ancestors'), which turns
            their planes too; ``None`` elsewhere (each element then starts a context of its own).
        perspective: For the children of an element with a ``perspective`` length, that distance (px): a child
            moved by ``translateZ()`` to it or past it is behind the viewer and not drawn (``scaled_text``).
        lid: An ancestor inside the element's stacking context, not the context's own root, paints an opaque
            background. A stacking context paints its descendants with a negative ``z-index`` right after its own
            background and before every other box's background (CSS 2.1, appendix E), so such an ancestor's
            background covers them (``covered_text``). The root's background paints the canvas and never counts;
            nor does the body's when the root has none (it then paints the canvas too).
        anchored: An ancestor (or the element) is the containing block of absolute descendants: positioned, or with a
            ``transform``, ``filter``, ``contain``... (as :attr:`contained`). Without one, an absolute box is placed
            against the page's initial containing block, whose left and top edges are the page's own.
        restyles: Derived, not compared: the children of an element in this state are styled even when they
            declare nothing (:attr:`block_rule`, :attr:`blockifies`, :attr:`perspective` or :attr:`ctx3d` is
            set), read once per element by the walk.
    """

    font_px: float = 16.0
    color: tuple[float, float, float, float] = _BLACK
    visible: bool = True
    bg: tuple[float, float, float] = _WHITE
    bg_image: bool = False
    opacity: float = 1.0
    custom: Any = None
    text_rule: str | None = None
    fill: tuple[float, float, float, float] | None = None
    font_abs: bool = False
    in_fixed: bool = False
    edge: int = 0
    pinned: int = 0
    contained: bool = False
    block_rule: str | None = None
    blockifies: bool = False
    clip_abs: bool = False
    clip_fixed: bool = False
    spacing: float = 0.0
    stroke: tuple[float, float, float, float] | None = None
    yscale: float = 1.0
    shadow: tuple[float, float, float, float] | None = None
    clip_text: tuple[float, float, float, float] | None = None
    clip_image: bool = False
    secured: bool = False
    size_adjust: float | None = None
    tint: tuple[tuple[str, Any], ...] = ()
    paint_clip: bool = False
    backdrop: tuple[float, float, float] | None = None
    ctx3d: tuple[float, ...] | None = None
    perspective: float | None = None
    lid: bool = False
    anchored: bool = False
    restyles: bool = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        restyles = self.block_rule is not None or self.blockifies or self.perspective is not None or self.ctx3d is not None
        object.__setattr__(self, "restyles", restyles)


ROOT_STATE = State(custom={})


def _strip(tokens: list[Any]) -> list[Any]:
    return [t for t in tokens if t.type not in ("whitespace", "comment")]


def resolve(tokens: list[Any], custom: dict[Any, Any]) -> list[Any] | None:
    """``tokens`` with every ``var(--x, fallback)`` replaced; ``None`` when one cannot be resolved,
    when references nest deeper than 16 or expand past :data:`_MAX_VAR_TOKENS` tokens (a
    "billion laughs" chain of custom properties; browsers also give up on those)."""
    if not any(t.type == "function" for t in tokens):
        return tokens
    budget = [_MAX_VAR_TOKENS]
    return _resolve(tokens, custom, 0, budget)


def _resolve(tokens: list[Any], custom: dict[Any, Any], depth: int, budget: list[int]) -> list[Any] | None:
    if depth > _VAR_DEPTH:
        return None
    budget[0] -= len(tokens)
    if budget[0] < 0:
        return None
    out: list[Any] = []
    for t in tokens:
        if t.type == "function" and t.lower_name == "var":
            args = t.arguments
            head = _strip(args)
            if not head or head[0].type != "ident":
                return None
            value = custom.get(head[0].value)
            if value is None:
                comma = next((i for i, a in enumerate(args) if a.type == "literal" and a.value == ","), None)
                if comma is None:
                    return None
                value = args[comma + 1 :]
            sub = _resolve(value, custom, depth + 1, budget)
            if sub is None:
                return None
            out.extend(sub)
        elif t.type == "function" and t.lower_name == "if":
            branch = _if_branch(t.arguments, custom)
            sub = None if branch is None else _resolve(branch, custom, depth + 1, budget)
            if sub is None:
                return None
            out.extend(sub)
        elif t.type == "function" and any(a.type == "function" for a in t.arguments):
            args = _resolve(t.arguments, custom, depth + 1, budget)
            if args is None:
                return None
            out.append(tinycss2.ast.FunctionBlock(t.source_line, t.source_column, t.name, args))
        else:
            out.append(t)
    return out


def _calls(tokens: list[Any], name: str, depth: int) -> bool:
    """Whether a function ``name`` appears in ``tokens``, at any depth up to 16."""
    return depth <= 16 and any(
        (t.type == "function" and (t.lower_name == name or _calls(t.arguments, name, depth + 1)))
        or (t.type in ("() block", "[] block") and _calls(t.content, name, depth + 1)) for t in tokens)


def _with_attrs(tokens: list[Any], attrs: dict[Any, Any], depth: int) -> list[Any] | None:
    """``tokens`` with each typed ``attr()`` replaced by the element's attribute (CSS Values 5:
    ``attr(data-c type(<color>))``, ``attr(data-size px)``, with a fallback after a comma); ``None`` when
    one cannot be, as a browser then drops the declaration (an untyped ``attr()`` is a string, which no
    property read here takes)."""
    if depth > 16:
        return None
    out: list[Any] = []
    for t in tokens:
        if t.type == "function" and t.lower_name == "attr":
            args = t.arguments
            comma = next((i for i, a in enumerate(args) if a.type == "literal" and a.value == ","), None)
            head = _strip(args[:comma] if comma is not None else args)
            raw = attrs.get(head[0].value) if head and head[0].type == "ident" else None
            typed = None
            if raw is not None and len(head) == 2:
                kind = head[1]
                if kind.type == "function" and kind.lower_name == "type":
                    typed = _strip(tinycss2.parse_component_value_list(str(raw)))
                elif kind.type == "ident" or (kind.type == "literal" and kind.value == "%"):
                    num = _strip(tinycss2.parse_component_value_list(str(raw)))
                    if len(num) == 1 and num[0].type == "number":
                        n = num[0]
                        unit = kind.value
                        typed = [tinycss2.ast.PercentageToken(n.source_line, n.source_column, n.value, n.int_value,
                                                              n.representation) if unit == "%" else
                                 n if unit.lower() == "number" else
                                 tinycss2.ast.DimensionToken(n.source_line, n.source_column, n.value, n.int_value,
                                                             n.representation, unit)]
            if typed is None:
                if comma is None:
                    return None
                typed = _with_attrs(args[comma + 1:], attrs, depth + 1)
                if typed is None:
                    return None
            out.extend(typed)
        elif t.type == "function" and _calls(t.arguments, "attr", 0):
            args2 = _with_attrs(t.arguments, attrs, depth + 1)
            if args2 is None:
                return None
            out.append(tinycss2.ast.FunctionBlock(t.source_line, t.source_column, t.name, args2))
        else:
            out.append(t)
    return out


def _if_branch(args: list[Any], custom: dict[Any, Any]) -> list[Any] | None:
    """The value ``if()`` takes (CSS Values 5: ``if(media(width > 600px): a; supports(display: grid): b;
    else: c)``): the first branch whose condition holds, read as a 1280x800 screen; ``None`` when none does (the
    declaration is then invalid, as in a browser)."""
    branch: list[Any] = []
    for t in [*args, tinycss2.ast.LiteralToken(0, 0, ";")]:
        if not (t.type == "literal" and t.value == ";"):
            branch.append(t)
            continue
        if not _strip(branch):
            continue  # a trailing ';'
        colon = next((i for i, a in enumerate(branch) if a.type == "literal" and a.value == ":"), None)
        if colon is None:
            return None
        holds = _if_condition(_strip(branch[:colon]), custom, 0)
        if holds is None:
            return None  # a branch that does not parse makes the whole if() invalid
        if holds:
            return branch[colon + 1:]
        branch = []
    return None


def _if_condition(toks: list[Any], custom: dict[Any, Any], depth: int) -> bool | None:
    """One ``if()`` condition: ``else``, ``media()``, ``supports()`` or ``style(--x: v)``, with ``not``,
    ``and`` and ``or`` read left to right; ``None`` where it does not parse (``media()`` takes features,
    not a media type such as ``print``: Chromium drops the declaration) or nests parentheses deeper than 16."""
    if depth > 16:
        return None
    result: bool | None = None
    op = "and"
    negate = False
    for t in toks:
        if t.type == "ident" and t.lower_value in ("and", "or"):
            op = t.lower_value
            continue
        if t.type == "ident" and t.lower_value == "not":
            negate = not negate
            continue
        if t.type == "ident" and t.lower_value == "else":
            value = True
        elif t.type == "function" and t.lower_name == "media":
            inner = _strip(t.arguments)
            if any(a.type == "ident" and a.lower_value in _MEDIA_TYPES for a in inner):
                return None
            value = media_applies(inner if any(a.type == "() block" for a in inner) else
                                  [tinycss2.ast.ParenthesesBlock(t.source_line, t.source_column, t.arguments)])
        elif t.type == "function" and t.lower_name == "supports":
            value = supports_applies([tinycss2.ast.ParenthesesBlock(t.source_line, t.source_column, t.arguments)])
        elif t.type == "function" and t.lower_name == "style":
            inner = _strip(t.arguments)
            colon = next((i for i, a in enumerate(inner) if a.type == "literal" and a.value == ":"), None)
            got = custom.get(inner[0].value) if inner and inner[0].type == "ident" else None
            value = (colon is not None and got is not None
                     and tinycss2.serialize(_strip(got)) == tinycss2.serialize(inner[colon + 1:]))
        elif t.type == "() block":
            inner_value = _if_condition(_strip(t.content), custom, depth + 1)
            if inner_value is None:
                return None
            value = inner_value
        else:
            return None
        value = value != negate
        negate = False
        result = value if result is None else (result and value if op == "and" else result or value)
    return result


_MEDIA_TYPES = frozenset("all screen print speech only tty tv projection handheld braille embossed aural".split())


def _length(t: Any, font_px: float, viewport: tuple[float, float] = VIEWPORT) -> float | None:
    """A length token in px; ``None`` when unknown (a percentage other than 0%: the box size is unknown).
    ``calc()``, ``min()``, ``max()`` and ``clamp()`` over lengths are evaluated (``calc(100vw + 10px)``), with
    viewport units against ``viewport`` (the oracle's window by default)."""
    if t.type == "number":
        return 0.0 if t.value == 0 else None
    if t.type == "percentage":
        return 0.0 if t.value == 0 else None
    if t.type == "dimension":
        return to_px(t.value, t.lower_unit, font_px, viewport=viewport)
    if t.type == "function" and t.lower_name in _MATH:
        got = _math(t, 0, font_px, viewport)
        return got[0] if got is not None and got[1] else None
    return None


def _number(t: Any) -> float | None:
    if t.type == "number":
        return float(t.value)
    if t.type == "percentage":
        return float(t.value) / 100
    if t.type == "function" and t.lower_name in _MATH:
        got = _math(t, 0, None)
        return got[0] if got is not None and not got[1] else None
    return None


_MATH = frozenset(("calc", "min", "max", "clamp"))
_Quantity = tuple[float, bool]  # (value, is a length in px); a plain number otherwise


def _math(t: Any, depth: int, font_px: float | None, viewport: tuple[float, float] = VIEWPORT) -> _Quantity | None:
    """A ``calc()``/``min()``/``max()``/``clamp()`` of numbers (``opacity: calc(0)``) or, when ``font_px`` is
    given, of lengths in px (``top: calc(-100vh - 10px)``); ``None`` if it mixes what CSS does not allow
    (a browser drops such a declaration) or holds what is unknown here (a percentage of the box)."""
    if depth > 8:
        return None
    args = _strip(t.arguments)
    if t.lower_name != "calc":
        got = [_operand(a, depth, font_px, viewport) for a in args if not (a.type == "literal" and a.value == ",")]
        vals = [v for v in got if v is not None]
        if not vals or len(vals) < len(got) or any(v[1] != vals[0][1] for v in vals):
            return None
        nums = [v[0] for v in vals]
        unit = vals[0][1]
        if t.lower_name == "min":
            return min(nums), unit
        if t.lower_name == "max":
            return max(nums), unit
        return (max(nums[0], min(nums[1], nums[2])), unit) if len(nums) == 3 else None
    return _sum(args, depth, font_px, viewport)


def _operand(a: Any, depth: int, font_px: float | None, viewport: tuple[float, float]) -> _Quantity | None:
    if a.type == "number":
        return float(a.value), False
    if font_px is not None and a.type in ("dimension", "percentage"):
        px = _length(a, font_px, viewport)
        return None if px is None else (px, True)
    if a.type == "() block":
        return _sum(_strip(a.content), depth + 1, font_px, viewport)
    if a.type == "function" and a.lower_name in _MATH:
        return _math(a, depth + 1, font_px, viewport)
    return None


def _sum(args: list[Any], depth: int, font_px: float | None, viewport: tuple[float, float]) -> _Quantity | None:
    """``a * b / c + d - e`` over numbers and lengths, with the usual precedence: terms added must be of one
    kind, a product holds at most one length, and a divisor is a number."""
    total: _Quantity | None = None
    term: _Quantity | None = None
    op = "+"
    sign = 1.0

    def add(acc: _Quantity | None, t: _Quantity, sign: float) -> _Quantity | None:
        if acc is None:
            return sign * t[0], t[1]
        return (acc[0] + sign * t[0], acc[1]) if acc[1] == t[1] else None

    for a in args:
        if a.type == "literal" and a.value in "*/":
            op = a.value
            continue
        if a.type == "literal" and a.value in "+-":
            if term is None:
                return None
            total = add(total, term, sign)
            if total is None:
                return None
            term, sign, op = None, (1.0 if a.value == "+" else -1.0), "+"
            continue
        v = _operand(a, depth, font_px, viewport)
        if v is None:
            return None
        if term is None:
            term = v
        elif op == "*":
            if term[1] and v[1]:
                return None
            term = (term[0] * v[0], term[1] or v[1])
        elif op == "/":
            if v[1] or v[0] == 0:
                return None
            term = (term[0] / v[0], term[1])
        else:
            return None
    return None if term is None else add(total, term, sign)


def _ident(tokens: list[Any]) -> str | None:
    return tokens[0].lower_value if tokens and tokens[0].type == "ident" else None


def _system_colors() -> dict[str, tuple[float, float, float, float]]:
    light = {  # Chromium's computed values in the light colour scheme, 0-255 (alpha 0-1)
        "accentcolor": (0, 117, 255), "accentcolortext": (255, 255, 255), "activetext": (255, 0, 0),
        "buttonborder": (0, 0, 0), "buttonface": (239, 239, 239), "buttontext": (0, 0, 0), "canvas": (255, 255, 255),
        "canvastext": (0, 0, 0), "field": (255, 255, 255), "fieldtext": (0, 0, 0), "graytext": (128, 128, 128),
        "highlight": (0, 65, 198, 0.8), "highlighttext": (255, 255, 255), "linktext": (0, 0, 238),
        "mark": (255, 255, 0), "marktext": (0, 0, 0), "selecteditem": (25, 103, 210),
        "selecteditemtext": (255, 255, 255), "visitedtext": (85, 26, 139),
        # deprecated system colours (CSS Color 4, 6.2) and Chromium's own
        "activeborder": (0, 0, 0), "activecaption": (255, 255, 255), "appworkspace": (255, 255, 255),
        "background": (255, 255, 255), "buttonhighlight": (239, 239, 239), "buttonshadow": (239, 239, 239),
        "captiontext": (0, 0, 0), "inactiveborder": (0, 0, 0), "inactivecaption": (255, 255, 255),
        "inactivecaptiontext": (128, 128, 128), "infobackground": (255, 255, 255), "infotext": (0, 0, 0),
        "menu": (255, 255, 255), "menutext": (0, 0, 0), "scrollbar": (255, 255, 255), "threeddarkshadow": (0, 0, 0),
        "threedface": (239, 239, 239), "threedhighlight": (0, 0, 0), "threedlightshadow": (0, 0, 0),
        "threedshadow": (0, 0, 0), "window": (255, 255, 255), "windowframe": (0, 0, 0), "windowtext": (0, 0, 0),
        "-webkit-link": (0, 0, 238), "-webkit-activelink": (255, 0, 0), "-webkit-focus-ring-color": (16, 16, 16),
    }
    return {k: (v[0] / 255, v[1] / 255, v[2] / 255, float(v[3]) if len(v) > 3 else 1.0) for k, v in light.items()}


_SYSTEM_COLORS = _system_colors()
"""System colour keywords as Chromium resolves them for a light page (the oracle's and a reader's default)."""


def _rgba(tokens: list[Any], current: tuple[float, float, float, float]) -> tuple[float, float, float, float] | None:
    if len(tokens) != 1:
        return None
    t = tokens[0]
    if t.type == "ident":
        if t.lower_value == "currentcolor":
            return current
        system = _SYSTEM_COLORS.get(t.lower_value)
        if system is not None:
            return system
    if t.type == "function" and t.lower_name == "color-mix":
        return _color_mix(t, current)
    if t.type == "function" and t.lower_name == "light-dark":
        # the page's colour scheme is light (a reader's default, and the oracle's): the first colour
        parts = _split_commas(t.arguments)
        return _rgba(_strip(parts[0]), current) if len(parts) == 2 else None
    if t.type == "function" and (args := _strip(t.arguments)) and args[0].type == "ident" and args[0].lower_value == "from":
        return _relative_color(t.lower_name, args[1:], current)
    if t.type == "hash":  # the commonest colour, and a page repeats a few: parsed once per text
        return _hash_rgba(t.value)
    return _parsed_rgba(t, current)


def _parsed_rgba(t: Any, current: tuple[float, float, float, float]) -> tuple[float, float, float, float] | None:
    """A colour token (or CSS text) parsed by tinycss2 and converted to clamped sRGB with alpha."""
    try:
        c = color4.parse_color(t)
    except Exception:  # noqa: BLE001 - an unparsable colour is ignored, as browsers do
        return None
    if c is None or c == "currentcolor":
        return current if c == "currentcolor" else None
    try:
        rgb = _srgb(c)
    except Exception:  # noqa: BLE001 - a colour tinycss2 parses but cannot convert is ignored
        return None
    if rgb is None:
        return None
    r, g, b = (min(1.0, max(0.0, x)) for x in rgb)
    return (r, g, b, float(c.alpha))


@functools.lru_cache(maxsize=4096)
def _hash_rgba(digits: str) -> tuple[float, float, float, float] | None:
    """``#digits`` as :func:`_parsed_rgba` reads it (a hash never means ``currentcolor``)."""
    return _parsed_rgba("#" + digits, _BLACK)


# CSS Color 4's conversion matrices (its sample code): Bradford D50 -> D65, XYZ (D65) -> linear sRGB,
# linear Display P3 -> XYZ (D65).
_D50_TO_D65 = ((0.955473421488075, -0.02309845494876471, 0.06325924320057072),
               (-0.0283697093338637, 1.0099953980813041, 0.021041441191917323),
               (0.012314014864481998, -0.020507649298898964, 1.330365926242124))
_XYZ_TO_LINEAR_SRGB = ((3.2409699419045226, -1.537383177570094, -0.4986107602930034),
                       (-0.9692436362808796, 1.8759675015077202, 0.04155505740717559),
                       (0.05563007969699366, -0.20397695888897652, 1.0569715142428786))
_LINEAR_P3_TO_XYZ = ((0.4865709486482162, 0.26566769316909306, 0.1982172852343625),
                     (0.2289745640697488, 0.6917385218365064, 0.079286914093745),
                     (0.0, 0.04511338185890264, 1.043944368900976))


def _mul(m: tuple[tuple[float, ...], ...], v: tuple[float, ...]) -> tuple[float, ...]:
    return tuple(sum(a * b for a, b in zip(row, v)) for row in m)


def _linear(v: float) -> float:
    """The sRGB transfer function, inverted (also Display P3's)."""
    a = abs(v)
    return math.copysign(a / 12.92 if a <= 0.04045 else ((a + 0.055) / 1.055) ** 2.4, v)


def _gamma(v: float) -> float:
    """The sRGB transfer function: linear light to an sRGB channel."""
    a = abs(v)
    return math.copysign(12.92 * a if a <= 0.0031308 else 1.055 * a ** (1 / 2.4) - 0.055, v)


def _srgb(c: Any) -> tuple[float, ...] | None:
    """A tinycss2 colour's sRGB channels (unclipped), for every space CSS Color 4 names but
    a98-rgb, prophoto-rgb and rec2020: ``lab()``, ``oklch()``, ``color(display-p3 ...)``... are
    as good as ``#fff`` for painting white text on white."""
    space = c.space
    coords = tuple(float(x or 0) for x in c.coordinates)
    if space in ("srgb", "hsl", "hwb"):
        return tuple(float(x) for x in c.to("srgb").coordinates)
    if space in ("lab", "lch", "xyz-d50"):
        xyz = _mul(_D50_TO_D65, tuple(c.to("xyz-d50").coordinates))
    elif space in ("oklab", "oklch", "xyz-d65", "xyz"):
        xyz = tuple(c.to("xyz-d65").coordinates)
    elif space == "srgb-linear":
        return tuple(_gamma(x) for x in coords)
    elif space == "display-p3":
        xyz = _mul(_LINEAR_P3_TO_XYZ, tuple(_linear(x) for x in coords))
    else:
        return None
    return tuple(_gamma(x) for x in _mul(_XYZ_TO_LINEAR_SRGB, xyz))


_CHANNELS = {"rgb": ("r", "g", "b"), "rgba": ("r", "g", "b"), "hsl": ("h", "s", "l"), "hsla": ("h", "s", "l"),
             "hwb": ("h", "w", "b"), "lab": ("l", "a", "b"), "lch": ("l", "c", "h"), "oklab": ("l", "a", "b"),
             "oklch": ("l", "c", "h")}


def _relative_color(name: str, args: list[Any], current: tuple[float, float, float, float]) -> tuple[float, float, float, float] | None:
    """Relative colour syntax, ``rgb(from white r g b)``: the origin colour when the channels are kept
    as they are (the keywords, in order), with an alpha after ``/`` when it is a number or percentage.
    Anything computed from the channels (``calc(r * 0.5)``) is left undecided (``None``)."""
    keep = _CHANNELS.get(name)
    if keep is None or not args:
        return None
    origin = _rgba(args[:1], current)
    rest = args[1:]
    if origin is None or len(rest) < 3 or tuple(t.lower_value if t.type == "ident" else None for t in rest[:3]) != keep:
        return None
    alpha = origin[3]
    tail = rest[3:]
    if tail:
        if len(tail) != 2 or not (tail[0].type == "literal" and tail[0].value == "/"):
            return None
        a = tail[1]
        if a.type == "number":
            alpha = float(a.value)
        elif a.type == "percentage":
            alpha = float(a.value) / 100
        elif not (a.type == "ident" and a.lower_value == "alpha"):
            return None
    return (origin[0], origin[1], origin[2], min(1.0, max(0.0, alpha)))


def _color_mix(t: Any, current: tuple[float, float, float, float]) -> tuple[float, float, float, float] | None:
    """``color-mix(in <space>, c1 [p1], c2 [p2])``, mixed in sRGB (exact for ``in srgb``; close enough for
    deciding contrast in the other spaces). Percentages follow CSS Color 5: a missing one is 100% minus
    the other; a sum under 100% scales the alpha."""
    parts: list[list[Any]] = [[]]
    for a in _strip(t.arguments):
        if a.type == "literal" and a.value == ",":
            parts.append([])
        else:
            parts[-1].append(a)
    if len(parts) != 3 or not parts[0] or _ident(parts[0]) != "in":
        return None
    colours: list[tuple[float, float, float, float]] = []
    pcts: list[float | None] = []
    for part in parts[1:]:
        pct = [a for a in part if a.type == "percentage"]
        col = [a for a in part if a.type != "percentage"]
        c = _rgba(col, current)
        if c is None or len(pct) > 1:
            return None
        colours.append(c)
        pcts.append(float(pct[0].value) / 100 if pct else None)
    p1, p2 = pcts
    if p1 is None and p2 is None:
        p1 = p2 = 0.5
    elif p1 is None:
        p1 = 1 - (p2 or 0.0)
    elif p2 is None:
        p2 = 1 - p1
    assert p1 is not None and p2 is not None
    total = p1 + p2
    if total <= 0:
        return None
    (r1, g1, b1, a1), (r2, g2, b2, a2) = colours
    w1, w2 = p1 / total, p2 / total
    alpha = a1 * w1 + a2 * w2
    if alpha <= 0:
        return (0.0, 0.0, 0.0, 0.0)
    mix = tuple((x * a1 * w1 + y * a2 * w2) / alpha for x, y in ((r1, r2), (g1, g2), (b1, b2)))
    return (mix[0], mix[1], mix[2], alpha * min(1.0, total))


_TINTS = frozenset(("invert", "brightness", "contrast", "grayscale", "sepia", "saturate", "hue-rotate"))
_BLEND_MODES = frozenset((
    "multiply", "screen", "overlay", "darken", "lighten", "color-dodge", "color-burn", "hard-light", "soft-light",
    "difference", "exclusion", "hue", "saturation", "color", "luminosity"))
"""``mix-blend-mode`` values other than ``normal`` (and ``plus-*``, not read)."""
_MASKS = ("mask", "mask-image", "-webkit-mask", "-webkit-mask-image")


def _tinted(c: tuple[float, float, float, float], tint: tuple[tuple[str, Any], ...]) -> tuple[float, float, float, float]:
    """``c`` as the ``filter`` colour functions ``tint`` (innermost first) paint it, in sRGB as Chromium applies
    them (the Filter Effects formulas; each step clamped to 0..1; alpha unchanged)."""
    if not tint:
        return c
    r, g, b, a = c
    for name, n in tint:
        if name == "invert":
            n = min(1.0, max(0.0, n))
            r, g, b = (n + x * (1 - 2 * n) for x in (r, g, b))
        elif name == "brightness":
            r, g, b = (x * max(0.0, n) for x in (r, g, b))
        elif name == "contrast":
            r, g, b = ((x - 0.5) * max(0.0, n) + 0.5 for x in (r, g, b))
        elif name in _BLEND_MODES:
            r, g, b = _blend_mode(name, n, (r, g, b))
        else:
            m = _tint_matrix(name, n)
            r, g, b = (m[i][0] * r + m[i][1] * g + m[i][2] * b for i in range(3))
        r, g, b = (min(1.0, max(0.0, x)) for x in (r, g, b))
    return (r, g, b, a)


def _separable(mode: str, cb: float, cs: float) -> float:
    """One channel of a separable blend mode (Compositing and Blending Level 1, section 10.1)."""
    if mode == "multiply":
        return cb * cs
    if mode == "screen":
        return cb + cs - cb * cs
    if mode == "overlay":
        return _separable("hard-light", cs, cb)
    if mode == "darken":
        return min(cb, cs)
    if mode == "lighten":
        return max(cb, cs)
    if mode == "color-dodge":
        return 0.0 if cb == 0 else 1.0 if cs >= 1 else min(1.0, cb / (1 - cs))
    if mode == "color-burn":
        return 1.0 if cb >= 1 else 0.0 if cs <= 0 else 1 - min(1.0, (1 - cb) / cs)
    if mode == "hard-light":
        return cb * 2 * cs if cs <= 0.5 else _separable("screen", cb, 2 * cs - 1)
    if mode == "soft-light":
        if cs <= 0.5:
            return cb - (1 - 2 * cs) * cb * (1 - cb)
        d = ((16 * cb - 12) * cb + 4) * cb if cb <= 0.25 else math.sqrt(cb)
        return cb + (2 * cs - 1) * (d - cb)
    if mode == "difference":
        return abs(cb - cs)
    return cb + cs - 2 * cb * cs  # exclusion


def _lum(c: tuple[float, float, float]) -> float:
    return 0.3 * c[0] + 0.59 * c[1] + 0.11 * c[2]


def _set_lum(c: tuple[float, float, float], lum: float) -> tuple[float, float, float]:
    d = lum - _lum(c)
    r, g, b = (x + d for x in c)
    n, x, lo = min(r, g, b), max(r, g, b), _lum((r, g, b))
    if n < 0:
        r, g, b = (lo + (v - lo) * lo / (lo - n) for v in (r, g, b))
    if x > 1:
        r, g, b = (lo + (v - lo) * (1 - lo) / (x - lo) for v in (r, g, b))
    return (r, g, b)


def _set_sat(c: tuple[float, float, float], sat: float) -> tuple[float, float, float]:
    lo, hi = min(c), max(c)
    if hi == lo:
        return (0.0, 0.0, 0.0)
    return tuple((v - lo) * sat / (hi - lo) for v in c)  # type: ignore[return-value]


def _blend_mode(mode: str, cb: tuple[float, float, float], cs: tuple[float, float, float]) -> tuple[float, float, float]:
    """``mix-blend-mode`` ``mode`` of source colour ``cs`` over an opaque backdrop ``cb`` (the spec's
    formulas, separable and non-separable)."""
    if mode == "hue":
        return _set_lum(_set_sat(cs, max(cb) - min(cb)), _lum(cb))
    if mode == "saturation":
        return _set_lum(_set_sat(cb, max(cs) - min(cs)), _lum(cb))
    if mode == "color":
        return _set_lum(cs, _lum(cb))
    if mode == "luminosity":
        return _set_lum(cb, _lum(cs))
    return (_separable(mode, cb[0], cs[0]), _separable(mode, cb[1], cs[1]), _separable(mode, cb[2], cs[2]))


def _tint_matrix(name: str, n: float) -> tuple[tuple[float, float, float], ...]:
    """The Filter Effects colour matrix of ``grayscale``, ``sepia``, ``saturate`` (amount) or ``hue-rotate`` (degrees)."""
    if name == "hue-rotate":
        c, s = math.cos(math.radians(n)), math.sin(math.radians(n))
        return ((0.213 + c * 0.787 - s * 0.213, 0.715 - c * 0.715 - s * 0.715, 0.072 - c * 0.072 + s * 0.928),
                (0.213 - c * 0.213 + s * 0.143, 0.715 + c * 0.285 + s * 0.140, 0.072 - c * 0.072 - s * 0.283),
                (0.213 - c * 0.213 - s * 0.787, 0.715 - c * 0.715 + s * 0.715, 0.072 + c * 0.928 + s * 0.072))
    if name == "saturate":
        v = max(0.0, n)
        return ((0.213 + 0.787 * v, 0.715 - 0.715 * v, 0.072 - 0.072 * v),
                (0.213 - 0.213 * v, 0.715 + 0.285 * v, 0.072 - 0.072 * v),
                (0.213 - 0.213 * v, 0.715 - 0.715 * v, 0.072 + 0.928 * v))
    k = 1 - min(1.0, max(0.0, n))
    if name == "grayscale":
        return ((0.2126 + 0.7874 * k, 0.7152 - 0.7152 * k, 0.0722 - 0.0722 * k),
                (0.2126 - 0.2126 * k, 0.7152 + 0.2848 * k, 0.0722 - 0.0722 * k),
                (0.2126 - 0.2126 * k, 0.7152 - 0.7152 * k, 0.0722 + 0.9278 * k))
    return ((0.393 + 0.607 * k, 0.769 - 0.769 * k, 0.189 - 0.189 * k),  # sepia
            (0.349 - 0.349 * k, 0.686 + 0.314 * k, 0.168 - 0.168 * k),
            (0.272 - 0.272 * k, 0.534 - 0.534 * k, 0.131 + 0.869 * k))


def _blend(fg: tuple[float, float, float, float], bg: tuple[float, float, float]) -> tuple[float, float, float]:
    a = fg[3]
    return (fg[0] * a + bg[0] * (1 - a), fg[1] * a + bg[1] * (1 - a), fg[2] * a + bg[2] * (1 - a))


def _luminance(c: tuple[float, float, float]) -> float:
    def lin(x: float) -> float:
        return x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4

    return 0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2])


def contrast(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    """WCAG 2 contrast ratio of two opaque sRGB colours (1 = identical, 21 = black on white)."""
    la, lb = _luminance(a), _luminance(b)
    hi, lo = (la, lb) if la > lb else (lb, la)
    return (hi + 0.05) / (lo + 0.05)


def _font_size(tokens: list[Any], parent_px: float, logical: bool = False) -> float | None:
    """The computed size; ``logical``: no ancestor set an absolute size (then Chromium's "smart minimum"
    lifts a relative size above 0 to :data:`MIN_LOGICAL_FONT_PX`)."""
    size = _specified_font_size(tokens, parent_px)
    if logical and size is not None and 0 < size < MIN_LOGICAL_FONT_PX and _relative_size(tokens):
        return MIN_LOGICAL_FONT_PX
    return size


def _relative_size(tokens: list[Any]) -> bool:
    """A font size relative to the parent's (em, ex, ch, %, ``smaller``/``larger``)."""
    t = tokens[0] if tokens else None
    return t is not None and (t.type == "percentage" or (t.type == "dimension" and t.lower_unit in ("em", "ex", "ch"))
                              or (t.type == "ident" and t.lower_value in ("smaller", "larger")))


def _specified_font_size(tokens: list[Any], parent_px: float) -> float | None:
    if not tokens:
        return None
    t = tokens[0]
    if t.type == "ident":
        v = t.lower_value
        if v in _FONT_KEYWORDS:
            return _FONT_KEYWORDS[v]
        if v == "smaller":
            return parent_px / 1.2
        if v == "larger":
            return parent_px * 1.2
        if v in ("inherit", "unset"):
            return parent_px
        if v == "initial":
            return 16.0
        return None
    if t.type == "percentage":
        return parent_px * float(t.value) / 100
    if t.type == "function" and t.lower_name in _MATH:
        # percentages of the parent's size read as em; a negative size is clamped to 0
        got = _math(_percent_as(t, "em", 0.01), 0, parent_px)
        if got is not None and got[1]:
            return max(0.0, got[0])
        vals = [_font_size([a], parent_px) for a in _strip(t.arguments) if a.type != "literal"]
        sizes = [v for v in vals if v is not None]
        if not sizes:
            return None
        return min(sizes) if t.lower_name == "min" else max(sizes) if t.lower_name == "max" else sizes[0]
    return _length(t, parent_px)


def _font_shorthand_size(tokens: list[Any], parent_px: float) -> float | None:
    if len(tokens) == 1 and tokens[0].type == "ident" and tokens[0].lower_value in _SYSTEM_FONTS:
        return _SYSTEM_FONT_PX  # a system font: its own size, whatever the parent's
    for i, t in enumerate(tokens):
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if nxt is not None and nxt.type == "literal" and nxt.value == "/":
            return _font_size([t], parent_px)
        if t.type in ("dimension", "percentage") or (t.type == "number" and t.value == 0):
            return _font_size([t], parent_px)
        if t.type == "ident" and t.lower_value in _FONT_KEYWORDS:
            return _FONT_KEYWORDS[t.lower_value]
    return None


_SYSTEM_FONTS = frozenset(("caption", "icon", "menu", "message-box", "small-caption", "status-bar"))
_SYSTEM_FONT_PX = 16.0
"""``font: menu`` and the other system fonts set the platform's UI size (16px in headless Chromium on Linux)."""


def _transform_hides(tokens: list[Any], font_px: float) -> bool:
    for t in tokens:
        if t.type != "function":
            continue
        name = t.lower_name
        args = [a for a in _strip(t.arguments) if not (a.type == "literal" and a.value == ",")]
        nums = [_number(a) for a in args]
        if name in ("scale", "scale3d") and nums:
            xs = nums[:2] if name == "scale3d" or len(nums) > 1 else nums[:1]
            if any(n is not None and abs(n) < 0.01 for n in xs):
                return True
        elif name in ("scalex", "scaley") and nums and nums[0] is not None and abs(nums[0]) < 0.01:
            return True
        elif name == "matrix" and len(nums) == 6 and None not in nums:
            a, b, c, d, e, f = [x for x in nums if x is not None]
            if abs(a * d - b * c) < 1e-4:
                return True
            if max(abs(a), abs(b), abs(c), abs(d)) <= 1 and max(abs(e), abs(f)) >= OFFSCREEN_PX:
                return True  # its translation, on a box it does not enlarge: translate(e, f) in px
        elif name == "matrix3d" and len(nums) == 16 and None not in nums:
            m = [x for x in nums if x is not None]
            if (max(abs(m[0]), abs(m[1]), abs(m[4]), abs(m[5])) <= 1 and m[3] == m[7] == 0 and m[15] == 1
                    and max(abs(m[12]), abs(m[13])) >= OFFSCREEN_PX):
                return True  # the same translation in 3D (x, y at indices 12, 13; no perspective row)
        elif name in ("skew", "skewx", "skewy") and args:
            # a 90-degree skew has an infinite shear: Chromium draws nothing (89.99 degrees is still drawn)
            if any((deg := _angle(a)) is not None and abs(deg % 180 - 90) < 1e-6 for a in args[:2]):
                return True
        elif name in ("rotatex", "rotatey") and args:
            deg = _angle(args[0])
            if deg is not None and _edge_on((1.0, 0.0, 0.0), deg):
                return True
        elif name == "rotate3d" and len(args) == 4 and None not in nums[:3]:
            deg = _angle(args[3])
            if deg is not None and _edge_on(tuple(n for n in nums[:3] if n is not None), deg):
                return True
        elif name in ("translate", "translatex", "translatey", "translate3d"):
            for a in args[:2]:
                px = _length(a, font_px)
                if px is not None and abs(px) >= OFFSCREEN_PX:
                    return True
    return False


ANIMATION_KEY = (0, 1 << 31, (0, 0, 0), 1 << 62)
"""Cascade key of declarations an animation holds: above every normal declaration, below ``!important``."""

_ANIMATION_WORDS = frozenset("""none forwards backwards both normal reverse alternate alternate-reverse infinite running
    paused ease linear ease-in ease-out ease-in-out step-start step-end initial inherit unset""".split())


def _animate(merged: dict[str, tuple[tuple[Any, ...], list[Any]]],
             keyframes: dict[str, dict[float, list[tuple[str, list[Any], bool]]]]) -> None:
    """Add to ``merged`` the declarations the element's animations leave it with once the page settles: the
    last keyframe of a finite animation that fills ``forwards`` (or ``both``; the first keyframe when the
    direction ends there), and the keyframes of any animation whose every keyframe, 0% and 100% included,
    declares the same. Animations that end where they started, or that cycle, leave nothing."""
    def per_animation(prop: str) -> list[list[Any]]:
        """The comma-separated values of an animation property, one per animation (``[]`` if unset)."""
        return [_strip(p) for p in _split_commas(merged[prop][1])] if prop in merged else []

    layers, names, counts = per_animation("animation"), per_animation("animation-name"), per_animation(
        "animation-iteration-count")
    fills = [_ident(p) for p in per_animation("animation-fill-mode")]
    dirs = [_ident(p) for p in per_animation("animation-direction")]
    for i in range(max(len(layers), len(names))):
        toks = layers[i] if i < len(layers) else []
        name = next((t.value for t in (names[i] if i < len(names) else toks)
                     if t.type == "string" or (t.type == "ident" and t.lower_value not in _ANIMATION_WORDS)), None)
        frames = keyframes.get(name) if name is not None else None
        if not frames:
            continue
        words = _idents(toks)
        fill = fills[i % len(fills)] if fills else next((w for w in ("forwards", "backwards", "both") if w in words), None)
        count_toks = counts[i % len(counts)] if counts else [t for t in toks if t.type == "number" or (
            t.type == "ident" and t.lower_value == "infinite")]
        count = (float("inf") if _ident(count_toks) == "infinite" else float(count_toks[0].value)
                 if count_toks and count_toks[0].type == "number" else 1.0)
        direction = dirs[i % len(dirs)] if dirs else next(
            (w for w in ("alternate-reverse", "alternate", "reverse") if w in words), "normal")
        held: list[tuple[str, list[Any], bool]] | None = None
        if 0.0 in frames and 1.0 in frames and all(_same(f, frames[0.0]) for f in frames.values()):
            held = frames[0.0]
        elif fill in ("forwards", "both") and count != float("inf"):
            odd = int(count) % 2 == 1 if count == int(count) else True
            ends_at_start = direction == "reverse" or (direction == "alternate" and not odd) or (
                direction == "alternate-reverse" and odd)
            held = frames.get(0.0 if ends_at_start else 1.0)
        for prop, value, important in held or []:
            old = merged.get(prop)
            if not important and (old is None or ANIMATION_KEY >= old[0]):
                merged[prop] = (ANIMATION_KEY, value)


def _same(a: list[tuple[str, list[Any], bool]], b: list[tuple[str, list[Any], bool]]) -> bool:
    return [(n, tinycss2.serialize(v)) for n, v, _ in a] == [(n, tinycss2.serialize(v)) for n, v, _ in b]


def _y_scale(transform: list[Any] | None, scale: list[Any] | None, perspective: float | None = None) -> float:
    """The vertical scale factor of a ``transform`` (``scale()``, ``scaleY()``, ``scale3d()``, a ``matrix()``'s
    second column, ``perspective(d)`` then ``translateZ(z)``: d / (d - z)) times that of the ``scale`` property;
    1 for what does not scale (rotations, other translations, unknown functions). ``perspective`` is the parent's
    ``perspective`` property, the distance a ``translateZ()`` is seen from before any ``perspective()``."""
    out = 1.0
    depth = perspective  # the distance of a perspective() before a translateZ(): a far box is drawn small
    for t in transform or []:
        if t.type != "function":
            continue
        name = t.lower_name
        args = [a for a in _strip(t.arguments) if not (a.type == "literal" and a.value == ",")]
        if name == "perspective" and args:
            depth = _length(args[0], 16.0)
            continue
        if name in ("translatez", "translate3d") and depth and depth > 0 and args:
            z = _length(args[0] if name == "translatez" else args[2] if len(args) == 3 else args[0], 16.0)
            if z is not None and name == "translate3d" and len(args) != 3:
                z = None
            if z is not None:
                out *= depth / (depth - z) if z < depth else 0.0  # at or behind the viewer: not drawn
            continue
        nums = [_number(a) for a in args]
        y: float | None = None
        if name == "scale" and nums:
            y = nums[1] if len(nums) > 1 else nums[0]
        elif name == "scaley" and nums:
            y = nums[0]
        elif name == "scale3d" and len(nums) == 3:
            y = nums[1]
        elif name == "matrix" and len(nums) == 6 and nums[2] is not None and nums[3] is not None:
            y = math.hypot(nums[2], nums[3])
        if y is not None:
            out *= abs(y)
    if scale:
        factors = [_number(t) for t in scale]
        y = factors[1] if len(factors) > 1 else factors[0] if factors else None
        if y is not None:
            out *= abs(y)
    return out


def _edge_on(axis: tuple[float, ...], deg: float) -> bool:
    """Whether rotating by ``deg`` about ``axis`` turns the element's plane edge-on to the viewer: the
    rotated normal's z component, ``cos a + z^2 (1 - cos a)`` for the unit axis, is zero (no area left)."""
    norm = math.sqrt(sum(x * x for x in axis))
    if norm == 0:
        return False
    z = axis[2] / norm
    cos = math.cos(math.radians(deg))
    return abs(cos + z * z * (1 - cos)) < 0.01


_AXES = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}


def _rotation(tokens: list[Any]) -> tuple[tuple[float, float, float], float] | None:
    """The axis and angle (degrees) of a ``rotate`` property value (``x 90deg``, ``0 1 0 90deg``, ``90deg``
    about z), or ``None`` (``none``, or not read here)."""
    angles = [t for t in tokens if t.type == "dimension" or (t.type == "number" and t.value == 0 and len(tokens) == 1)]
    if len(angles) != 1:
        return None
    deg = _angle(angles[0])
    rest = [t for t in tokens if t is not angles[0]]
    axis: tuple[float, float, float] | None
    if not rest:
        axis = _AXES["z"]
    elif len(rest) == 1 and rest[0].type == "ident":
        axis = _AXES.get(rest[0].lower_value)
    elif len(rest) == 3 and all(t.type == "number" for t in rest):
        axis = (float(rest[0].value), float(rest[1].value), float(rest[2].value))
    else:
        axis = None
    return None if deg is None or axis is None else (axis, deg)


def _rotate_hides(tokens: list[Any]) -> bool:
    """The ``rotate`` property turning the element edge-on."""
    got = _rotation(tokens)
    return got is not None and _edge_on(*got)


_Matrix3 = tuple[float, float, float, float, float, float, float, float, float]
_IDENTITY3: _Matrix3 = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)


def _matmul(a: tuple[float, ...], b: tuple[float, ...]) -> _Matrix3:
    """The 3x3 product ``a @ b`` (row-major)."""
    return tuple(sum(a[3 * i + k] * b[3 * k + j] for k in range(3)) for i in range(3) for j in range(3))  # type: ignore[return-value]


def _axis_angle(x: float, y: float, z: float, deg: float) -> _Matrix3 | None:
    """The rotation by ``deg`` about the axis (x, y, z) (CSS ``rotate3d()``)."""
    n = math.sqrt(x * x + y * y + z * z)
    if n == 0:
        return None
    x, y, z = x / n, y / n, z / n
    c, s = math.cos(math.radians(deg)), math.sin(math.radians(deg))
    t = 1 - c
    return (t * x * x + c, t * x * y - s * z, t * x * z + s * y,
            t * x * y + s * z, t * y * y + c, t * y * z - s * x,
            t * x * z - s * y, t * y * z + s * x, t * z * z + c)


def _linear3d(transform: list[Any] | None, rotate: list[Any] | None, scale: list[Any] | None) -> _Matrix3 | None:
    """The 3x3 linear part of an element's transforms (the ``rotate`` and ``scale`` properties, then
    ``transform``'s functions in order; translations and perspective move the plane, they do not turn it), or
    ``None`` when a function is not known here."""
    m: _Matrix3 = _IDENTITY3
    if rotate and not (len(rotate) == 1 and _ident(rotate) == "none"):
        got = _rotation(rotate)
        r = _axis_angle(*got[0], got[1]) if got is not None else None
        if r is None:
            return None
        m = _matmul(m, r)
    if scale and not (len(scale) == 1 and _ident(scale) == "none"):
        f = [n for n in (_number(t) for t in scale[:3]) if n is not None]
        if len(f) != len(scale[:3]):
            return None
        sx, sy, sz = f[0], f[1] if len(f) > 1 else f[0], f[2] if len(f) > 2 else 1.0  # scale: 2 is x and y, not z
        m = _matmul(m, (sx, 0.0, 0.0, 0.0, sy, 0.0, 0.0, 0.0, sz))
    for t in transform or []:
        if t.type == "ident" and t.lower_value == "none":
            continue
        if t.type != "function":
            return None
        name = t.lower_name
        args = [a for a in _strip(t.arguments) if not (a.type == "literal" and a.value == ",")]
        nums = [_number(a) for a in args]
        step: _Matrix3 | None
        if name.startswith("translate") or name == "perspective":
            continue
        if name in ("rotate", "rotatez", "rotatex", "rotatey") and len(args) == 1 and (deg := _angle(args[0])) is not None:
            step = _axis_angle(*_AXES.get(name[-1] if name in ("rotatex", "rotatey") else "z", _AXES["z"]), deg)
        elif name == "rotate3d" and len(args) == 4 and None not in nums[:3] and (deg := _angle(args[3])) is not None:
            step = _axis_angle(nums[0], nums[1], nums[2], deg)  # type: ignore[arg-type]
        elif name in ("scale", "scale3d", "scalex", "scaley", "scalez") and nums and None not in nums:
            v = [float(n) for n in nums if n is not None]
            sx, sy, sz = {"scalex": (v[0], 1.0, 1.0), "scaley": (1.0, v[0], 1.0), "scalez": (1.0, 1.0, v[0]),
                          "scale3d": tuple((v + [1.0, 1.0])[:3])}.get(name, (v[0], v[1] if len(v) > 1 else v[0], 1.0))
            step = (sx, 0.0, 0.0, 0.0, sy, 0.0, 0.0, 0.0, sz)
        elif name == "matrix" and len(nums) == 6 and None not in nums:
            a, b, c, d = (float(n) for n in nums[:4])  # type: ignore[arg-type]
            step = (a, c, 0.0, b, d, 0.0, 0.0, 0.0, 1.0)
        elif name == "matrix3d" and len(nums) == 16 and None not in nums:
            v = [float(n) for n in nums]  # type: ignore[arg-type]
            step = (v[0], v[4], v[8], v[1], v[5], v[9], v[2], v[6], v[10])  # column-major
        elif name in ("skew", "skewx", "skewy") and args:
            skews = [d for d in (_angle(a) for a in args[:2]) if d is not None]
            if len(skews) != len(args[:2]):
                return None
            ax = skews[0] if name != "skewy" else 0.0
            ay = skews[1] if name == "skew" and len(skews) > 1 else skews[0] if name == "skewy" else 0.0
            step = (1.0, math.tan(math.radians(ax)), 0.0, math.tan(math.radians(ay)), 1.0, 0.0, 0.0, 0.0, 1.0)
        else:
            return None
        if step is None:
            return None
        m = _matmul(m, step)
    return m


def _det3(m: tuple[float, ...]) -> float:
    """The determinant of a row-major 3x3 matrix."""
    return m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) + m[2] * (m[3] * m[7] - m[4] * m[6])


def _faces_away(m: tuple[float, ...]) -> bool:
    """Whether the plane turned by ``m`` shows its back: the normal (0, 0, 1) carried by the inverse transpose
    points away from the viewer, i.e. the (3, 3) entry of ``m``'s inverse, ``(m11 m22 - m12 m21) / det``, is
    negative (``rotateY(180deg)``, ``scaleZ(-1)``; a mirror such as ``scaleX(-1)`` still faces the viewer)."""
    det = _det3(m)
    if abs(det) < 1e-9:
        return False
    return (m[0] * m[4] - m[1] * m[3]) / det < -1e-9


def _angle(t: Any) -> float | None:
    """An angle token in degrees (``0`` without a unit counts)."""
    if t.type == "number" and t.value == 0:
        return 0.0
    if t.type != "dimension":
        return None
    factor = {"deg": 1.0, "rad": 180 / math.pi, "grad": 0.9, "turn": 360.0}.get(t.lower_unit)
    return None if factor is None else float(t.value) * factor


def _clip_hides(tokens: list[Any], font_px: float) -> bool:
    for t in tokens:
        if t.type != "function":
            continue
        name = t.lower_name
        args = [a for a in _strip(t.arguments) if not (a.type == "literal" and a.value == ",")]
        if name == "rect" and len(args) == 4:
            top, right, bottom, left = (_length(a, font_px) for a in args)
            if (right is not None and left is not None and right - left <= 1) or (
                bottom is not None and top is not None and bottom - top <= 1
            ):
                return True
        elif name == "inset":
            vals = []
            for a in args:
                if a.type == "ident":
                    break
                vals.append(a)
            if not vals:
                continue
            while len(vals) < 4:
                vals.append(vals[len(vals) - 2] if len(vals) >= 2 else vals[0])
            pct = [v.value if v.type == "percentage" else 0 if _length(v, font_px) == 0 else None for v in vals]
            px = [_length(v, font_px) for v in vals]
            if (pct[0] is not None and pct[2] is not None and pct[0] + pct[2] >= 99) or (
                pct[1] is not None and pct[3] is not None and pct[1] + pct[3] >= 99
            ):
                return True
            if any(p is not None and p >= OFFSCREEN_PX for p in px):
                return True
        elif name == "xywh" and len(args) >= 4:
            w, h = (_length(a, font_px) for a in args[2:4])
            if (w is not None and w <= 1) or (h is not None and h <= 1):
                return True
        elif name in ("circle", "ellipse") and args and args[0].type != "ident":
            radii = [_length(a, font_px) for a in args[:2] if a.type != "ident"]
            if any(r is not None and r <= 1 for r in radii):
                return True
        elif name == "polygon":
            pts = _split(args)
            if len(pts) >= 3 and len({tuple(tinycss2.serialize([p]) for p in pt) for pt in pts}) == 1:
                return True
        elif name == "path" and args and args[-1].type == "string" and _empty_path(args[-1].value):
            return True
    return False


_PATH_TOKEN = re.compile(r"[A-Za-z]|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def _empty_path(d: str) -> bool:
    """An SVG path that encloses nothing: no segment after its move-tos (``"M0 0"``, ``"M 10 10 Z"``), or
    every coordinate 0 (all its points at one place)."""
    toks = _PATH_TOKEN.findall(d)
    commands = [t for t in toks if t.isalpha()]
    return bool(commands) and (all(c in "MmZz" for c in commands) or all(float(t) == 0 for t in toks if not t.isalpha()))


def _split(args: list[Any]) -> list[list[Any]]:
    pts: list[list[Any]] = []
    cur: list[Any] = []
    for a in args:
        cur.append(a)
        if len(cur) == 2:
            pts.append(cur)
            cur = []
    return pts


def _side(value: Any, name: str, inset: Any, font_px: float) -> tuple[bool, float | None]:
    """Whether offset ``name`` is set (not ``auto``), and its length in px when known."""
    toks = value(name)
    t = toks[0] if toks else inset
    if t is None or (t.type == "ident" and t.lower_value == "auto"):
        return False, None
    return True, _length(t, font_px)


_X_SIZE = ("width", "inline-size", "min-width", "padding", "padding-left", "padding-right", "padding-inline")
_Y_SIZE = ("height", "block-size", "min-height", "padding", "padding-top", "padding-bottom", "padding-block")
_SIZES = ("width", "height", "max-width", "max-height", "inline-size", "block-size", "max-inline-size", "max-block-size")
"""Sizes that leave no room for text when at most 1px with ``overflow`` hidden or clip: the logical ones
(``block-size``...) are ``height`` and ``width`` in any writing mode, whichever way round."""
_MOVES = ("transform", "translate", "margin")


_CONTAINING = frozenset(("transform", "filter", "perspective", "backdrop-filter", "contain", "will-change"))
_CONTAINING_INLINE = frozenset(("filter", "backdrop-filter"))


def _edges(value: Any, pos: str | None, font_px: float, contained: bool) -> tuple[int, int]:
    """``(edge, pinned)`` bits of a fixed or absolute box (see :class:`State`); a fixed box in a
    containing ancestor (``contained``) is placed against that ancestor, so it pins no viewport edge."""
    inset = _box(value("inset"))
    top, right, bottom, left = (_side(value, n, inset[i], font_px) for i, n in enumerate(("top", "right", "bottom", "left")))
    edge = 0
    if pos == "fixed" and not contained:
        if right[0] and right[1] is not None and right[1] <= 1 and not left[0] and not any(value(n) for n in _X_SIZE):
            edge |= 1
        if bottom[0] and bottom[1] is not None and bottom[1] <= 1 and not top[0] and not any(value(n) for n in _Y_SIZE):
            edge |= 2
    if any(value(n) for n in _MOVES):
        return edge, 0

    def from_start(start: tuple[bool, float | None], end: tuple[bool, float | None]) -> bool:
        # fixed: at its static position (no offset on the axis); absolute: placed from the start edge
        if pos == "fixed":
            return not start[0] and not end[0]
        return not end[0] and (not start[0] or (start[1] is not None and start[1] >= 0))

    pinned = 0
    if from_start(left, right) and not value("margin-left"):
        pinned |= 1
    if from_start(top, bottom) and not value("margin-top"):
        pinned |= 2
    return edge, pinned


def _box(values: list[Any] | None) -> list[Any]:
    """Expand a 1-4 value shorthand (margin, inset) to ``[top, right, bottom, left]``."""
    if not values:
        return [None] * 4
    v = values[:4]
    if len(v) == 1:
        return v * 4
    if len(v) == 2:
        return [v[0], v[1], v[0], v[1]]
    if len(v) == 3:
        return [v[0], v[1], v[2], v[1]]
    return v


class Styler:
    """Computes each element's :class:`State` from the cascade and its attributes (one per page)."""

    def __init__(self, cascade: Cascade | None, quirks: bool = False) -> None:
        self.quirks = quirks  # the page renders in quirks mode: unitless lengths in style attributes count
        self.by_elem = cascade.by_elem if cascade is not None else {}
        self.keyframes = cascade.keyframes if cascade is not None else {}
        self.inline: dict[str, dict[Any, Any]] = {}
        self.hints: dict[tuple[Any, ...], dict[Any, Any]] = {}
        self.memo: dict[tuple[Any, ...], tuple[str | None, State]] = {}
        self.states: dict[tuple[Any, ...], State] = {}
        self.keep: list[State] = []
        self.overlays: dict[tuple[Any, ...], bool] = {}
        self.keep_decls: list[Any] = []
        self.first_lines: dict[int, dict[Any, Any]] = {}
        self.attr_readers: dict[int, bool] = {}

    def element(self, node: Any, tag: str, attrs: dict[Any, Any], parent: State) -> tuple[str | None, State]:
        """``(rule hiding the element's whole subtree or None, the element's state)``."""
        return self.state(self.by_elem.get(node.mem_id) if self.by_elem else None, tag, attrs, parent)

    def state(self, decls: dict[Any, Any] | None, tag: str, attrs: dict[Any, Any], parent: State) -> tuple[str | None, State]:
        """:meth:`element` for an element whose stylesheet declarations (``by_elem`` entry) are known."""
        style = attrs.get("style") if attrs else None
        hints = None
        hint_key = None
        if tag in UA_COLORED or (attrs and ("bgcolor" in attrs or tag in HINT_COLOR_TAGS)):
            hint_key = (attrs.get(HINT_COLOR_TAGS[tag]) if attrs and tag in HINT_COLOR_TAGS else None,
                        attrs.get("bgcolor") if attrs else None, tag if tag in UA_COLORED else None)
            hints = self.hints.get(hint_key)
            if hints is None:
                hints = self.hints[hint_key] = _hints(tag, attrs or {})
        inline = self._inline(style) if style else None
        if not decls and not inline and not hints:
            is_block = tag not in INLINE_TAGS or parent.blockifies
            return (parent.block_rule if is_block else None), self._child_state(parent)
        # Elements with the same declarations (the cascade shares one dict between elements matched
        # alike; parsed inline styles and hints are cached per page) under the same parent state
        # compute the same result. Everything keyed by id() is kept alive by this Styler.
        inline_tag = tag in INLINE_TAGS and not parent.blockifies
        # attr() reads the element's attributes: then they are part of what decides the result
        reads_attrs = (decls is not None and self._reads_attrs(decls)) or (inline is not None and self._reads_attrs(inline))
        ua_margin = _ua_margin(tag)
        # the root's background paints the canvas, and so does the body's when the root paints none
        canvas = tag == "html" or (tag == "body" and parent.backdrop is None)
        key = (id(parent), id(decls), style, hint_key, inline_tag, ua_margin, canvas,
               tuple(sorted((str(k), str(v)) for k, v in attrs.items())) if reads_attrs and attrs else None)
        got = self.memo.get(key)
        if got is None:
            merged: dict[str, tuple[tuple[Any, ...], list[Any]]] = dict(hints) if hints else {}
            for src in (decls, inline):
                if src:
                    for name, kv in src.items():
                        old = merged.get(name)
                        if old is None or kv[0] >= old[0]:
                            merged[name] = kv
            if reads_attrs:
                merged = {name: (kv[0], sub) for name, kv in merged.items()
                          if (sub := _with_attrs(kv[1], attrs or {}, 0)) is not None}
            if self.keyframes and ("animation" in merged or "animation-name" in merged):
                _animate(merged, self.keyframes)
            got = self.memo[key] = self._compute(merged, parent, inline_tag, ua_margin, canvas)
            self.keep.append(parent)  # keeps id(parent) unique while the memo lives
        return got

    def _reads_attrs(self, decls: dict[Any, Any]) -> bool:
        """Whether a declaration of ``decls`` (a cascade entry or a parsed style attribute) calls ``attr()``."""
        got = self.attr_readers.get(id(decls))
        if got is None:
            got = self.attr_readers[id(decls)] = any(_calls(kv[1], "attr", 0) for kv in decls.values())
            self.keep_decls.append(decls)
        return got

    def first_line(self, decls: dict[Any, Any], state: State) -> str | None:
        """Why the first formatted line of a block with ``::first-line`` declarations (``decls``, its
        cascade entry, holds them under :data:`FIRST_LINE`) and computed ``state`` is hidden, else
        ``None``. The pseudo-element is an inline box between the block and the line's text, so it is
        styled as an anonymous ``<span>`` child."""
        own = self.first_lines.get(id(decls))
        if own is None:
            n = len(FIRST_LINE)
            own = self.first_lines[id(decls)] = {k[n:]: v for k, v in decls.items() if k.startswith(FIRST_LINE) and k[n:]}
            self.keep_decls.append(decls)  # keeps id(decls) unique while the cache lives
        if not own:
            return None
        rule, inner = self.state(own, "span", {}, state)
        return rule or inner.text_rule

    def shows(self, decls: dict[Any, Any] | None, attrs: dict[Any, Any], tag: str = "") -> bool:
        """Whether author CSS sets ``display`` to a value other than ``none`` on an element that the
        user-agent style sheet hides (``[hidden]``, a ``popover`` not opened): author rules beat it,
        so ``[hidden]{display:block}`` shows the element again, and so do ``initial``, ``unset``,
        ``inherit``, and ``revert`` but on a popover (as Chromium decides). ``hidden="until-found"`` is
        hidden by ``content-visibility`` instead, which ``display`` does not undo, and which a non-replaced
        inline box (``<span>``, ``<a>``...) does not take: there it hides nothing while ``display`` keeps the
        box inline."""
        until_found = (attrs.get("hidden") or "").strip().lower() == "until-found"
        if until_found and (tag not in INLINE_TAGS or "popover" in attrs):
            return False
        style = attrs.get("style")
        best = None
        for src in (decls, self._inline(style) if style else None):
            kv = src.get("display") if src else None
            if kv is not None and (best is None or kv[0] >= best[0]):
                best = kv
        toks = _strip(best[1]) if best is not None else []
        value = _ident(toks) if len(toks) == 1 else None
        if until_found:
            # an inline box takes no content-visibility: it hides nothing while display keeps the box inline
            return best is None or value in ("inline", "contents", "initial", "unset", "revert", "revert-layer")
        if not toks or value in ("none", "revert-layer"):
            return False
        # revert goes back to the user-agent sheet, which hides a popover; Chromium gives [hidden] as a
        # presentational hint, which revert skips; initial, unset and inherit are author values that show it
        return value != "revert" or "popover" not in attrs

    def covers(self, decls: dict[Any, Any] | None, attrs: dict[Any, Any] | None) -> bool:
        """Whether the element is an opaque overlay: ``position:absolute`` with every inset 0 (or
        top/left 0 and width/height 100%), an opaque background colour or image, and no negative
        ``z-index``. Positioned boxes paint above in-flow content, so the text of the block it sits
        in is covered (rule ``covered_text``, applied by the walk)."""
        style = attrs.get("style") if attrs else None
        inline = self._inline(style) if style else None
        if not (decls and "position" in decls) and not (inline and "position" in inline):
            return False
        key = (id(decls), style)
        got = self.overlays.get(key)
        if got is None:
            got = self.overlays[key] = self._covers(decls, inline)
            self.keep_decls.append(decls)
        return got

    def _covers(self, decls: dict[Any, Any] | None, inline: dict[Any, Any] | None) -> bool:
        merged: dict[str, tuple[tuple[Any, ...], list[Any]]] = {}
        for src in (decls, inline):
            for name, kv in (src or {}).items():
                old = merged.get(name)
                if old is None or kv[0] >= old[0]:
                    merged[name] = kv

        def value(name: str) -> list[Any]:
            kv = merged.get(name)
            return _strip(kv[1]) if kv is not None else []

        if _ident(value("position")) != "absolute":
            return False
        z = value("z-index")
        if z and z[0].type == "number" and z[0].value < 0:
            return False
        inset = _box(value("inset") or None)
        sides = [value(n)[:1] or ([inset[i]] if inset[i] is not None else []) for i, n in
                 enumerate(("top", "right", "bottom", "left"))]
        zero = [bool(t) and _length(t[0], 16.0) == 0.0 for t in sides]
        full = [bool(t) and t[0].type == "percentage" and t[0].value >= 100 for t in (value("width"), value("height"))]
        if not (all(zero) or (zero[0] and zero[3] and all(full))):
            return False
        for name in ("background", "background-color", "background-image"):
            toks = value(name)
            if any(t.type == "url" or (t.type == "function" and t.lower_name == "url") for t in toks):
                return True
            for t in toks:
                c = _rgba([t], _BLACK) if t.type in ("ident", "hash", "function") else None
                if c is not None and c[3] >= 0.9:
                    return True
        return False

    def _inline(self, style: str) -> dict[Any, Any]:
        got = self.inline.get(style)
        if got is None:
            got = self.inline[style] = parse_inline(style, self.quirks)
        return got

    def _child_state(self, parent: State) -> State:
        """The state an element without styles of its own hands its children: its parent's, less
        :attr:`State.blockifies`, :attr:`State.perspective` and :attr:`State.ctx3d` (which apply to the parent's
        children only: this element is flat, so its children are drawn into its plane)."""
        if not parent.blockifies and parent.perspective is None and parent.ctx3d is None:
            return parent
        key = ("child", id(parent))
        got = self.memo.get(key)
        if got is None:
            got = self.memo[key] = (None, self._intern(dataclasses.replace(parent, blockifies=False, perspective=None,
                                                                           ctx3d=None)))
            self.keep.append(parent)  # keeps id(parent) unique while the memo lives
        return got[1]

    def _intern(self, state: State) -> State:
        """One object per distinct state, so that equal parent states share memo entries."""
        key = (state.font_px, state.color, state.visible, state.bg, state.bg_image, state.opacity,
               id(state.custom), state.text_rule, state.fill, state.font_abs, state.in_fixed, state.edge, state.pinned,
               state.contained, state.block_rule, state.blockifies, state.clip_abs, state.clip_fixed, state.spacing,
               state.stroke, state.yscale, state.shadow, state.clip_text, state.clip_image, state.secured,
               state.size_adjust, state.tint, state.paint_clip, state.backdrop, state.ctx3d, state.perspective, state.lid,
               state.anchored)
        got = self.states.get(key)
        if got is None:
            got = self.states[key] = state
        return got

    def _compute(
        self, merged: dict[str, tuple[tuple[Any, ...], list[Any]]], parent: State, inline_tag: bool = False,
        ua_margin: int = 0, canvas: bool = False,
    ) -> tuple[str | None, State]:
        custom = parent.custom
        own_custom = [(n, kv[1]) for n, kv in merged.items() if n.startswith("--")]
        if own_custom:
            custom = dict(custom)
            custom.update(own_custom)

        quirks = self.quirks

        def value(name: str) -> list[Any] | None:
            kv = merged.get(name)
            if kv is None:
                return None
            toks = resolve(kv[1], custom)
            if toks is None:
                return None
            toks = _strip(toks)
            if _ident(toks) in ("inherit", "unset", "revert", "revert-layer") and len(toks) == 1:
                return None
            if quirks:
                toks = quirky(name, toks)  # a number or hex digits that var() put there read the same way
            return toks or None

        font_px = parent.font_px
        font_abs = parent.font_abs
        fs = value("font-size")
        size = _font_size(fs, parent.font_px, not parent.font_abs) if fs else None
        if size is not None and fs:
            font_abs = parent.font_abs if _relative_size(fs) else fs[0].type != "ident"
        if size is None:
            font = value("font")
            size = _font_shorthand_size(font, parent.font_px) if font else None
        if size is not None:
            font_px = max(0.0, size)
        zoom = value("zoom")
        yscale = parent.yscale
        if zoom:
            z = _number(zoom[0])
            if z is not None and 0 < z <= MAX_HIDDEN_OPACITY:
                return "transform_offscreen", parent
            if z is not None and z > 0:
                yscale *= z

        if _SUBTREE_PROPERTIES.isdisjoint(merged):
            rule, inline, block_rule = None, inline_tag, None
        else:
            rule, inline, block_rule = self._subtree_rule(value, font_px, inline_tag, parent.in_fixed, parent.blockifies,
                                                          parent.contained, parent.paint_clip, ua_margin, parent.anchored)
        if rule is None and not inline:
            rule = parent.block_rule  # a block inside an inline box that indents or clips its blocks away
        block_rule = (block_rule or parent.block_rule) if inline else None
        if not inline and ("transform" in merged or "scale" in merged):
            yscale *= _y_scale(value("transform"), value("scale"), parent.perspective)
        perspective = None
        if "perspective" in merged and (pv := value("perspective")) and pv[0].type == "dimension":
            perspective = _length(pv[0], font_px)  # the distance its children's translateZ() is seen from
        ctx3d = None
        if not inline and ("backface-visibility" in merged or "transform-style" in merged):
            # a 3D rendering context: the element's plane turned by its transform, and by those of the
            # preserve-3d ancestors it shares the context with
            turn = _linear3d(value("transform"), value("rotate"), value("scale"))
            total = turn if turn is None or parent.ctx3d is None else _matmul(parent.ctx3d, turn)
            preserve = _ident(value("transform-style") or []) == "preserve-3d"
            if preserve and total is not None:
                ctx3d = total
            if (rule is None and not preserve and total is not None and _ident(value("backface-visibility") or []) == "hidden"
                    and _faces_away(total)):
                rule = "backface_hidden"  # its back faces the viewer, and the back is not drawn
        opacity = parent.opacity
        op = value("opacity")
        if op:
            n = _number(op[0])
            if n is not None:
                opacity *= max(0.0, n)
        flt = value("filter")
        tint = parent.tint
        if flt:
            own: list[tuple[str, float]] = []
            for t in flt:
                if t.type == "function" and t.lower_name == "opacity":
                    args = _strip(t.arguments)
                    n = _number(args[0]) if args else None
                    if n is not None:
                        opacity *= max(0.0, n)
                elif t.type == "function" and t.lower_name in _TINTS:
                    args = _strip(t.arguments)
                    n = (_angle(args[0]) if t.lower_name == "hue-rotate" else _number(args[0])) if args else (
                        0.0 if t.lower_name == "hue-rotate" else 1.0)
                    if n is not None:
                        own.append((t.lower_name, n))
            if own:
                tint = tuple(own) + parent.tint
        blend = value("mix-blend-mode") if "mix-blend-mode" in merged else None
        mode = _ident(blend) if blend else None
        if mode in _BLEND_MODES and not parent.tint and parent.backdrop is not None and not parent.bg_image and (
                _ident(value("position") or []) not in ("absolute", "fixed")):
            # the element's painting (text and backgrounds) is blended with what its stacking context painted below
            # it (an absolute or fixed box is drawn elsewhere, over a backdrop not known here)
            tint = (*tint, (mode, parent.backdrop))
        if rule is None and opacity <= MAX_HIDDEN_OPACITY:
            rule = "opacity_0"
        if rule is not None:
            return rule, parent

        visible = parent.visible
        vis = _ident(value("visibility") or [])
        if vis in ("hidden", "collapse"):
            visible = False
        elif vis in ("visible", "initial"):
            visible = True

        color = parent.color
        c = value("color")
        if c:
            if _ident(c) == "initial":
                color = _BLACK
            else:
                color = _rgba(c, parent.color) or color

        bg, bg_image = parent.bg, parent.bg_image
        own_bg: tuple[float, float, float, float] | None = None
        image = False
        for name in ("background", "background-color", "background-image"):
            toks = value(name)
            if not toks:
                continue
            gradient = False
            for t in toks:
                if t.type == "url" or (t.type == "function" and (t.lower_name == "url" or "gradient" in t.lower_name
                                                                  or t.lower_name == "image-set")):
                    image = True
                    gradient = gradient or t.type == "function" and "gradient" in t.lower_name
            if name != "background-image":
                col = _rgba(toks[-1:], color) if toks else None
                if col is None:
                    col = next((x for x in (_rgba([t], color) for t in toks if t.type in ("ident", "hash", "function"))
                                if x is not None), None)
                if col is not None:
                    own_bg = col
            if gradient and name != "background-color" and (
                    top := _opaque_top_layer(toks, color, value("background-size"))) is not None:
                own_bg, image = top, False  # a gradient of one opaque colour on top paints that colour over the rest
        clip_text, clip_image = parent.clip_text, parent.clip_image
        clipped = _clips_to_text(value)
        if clipped:
            # the background is painted through the glyphs (of the element and its descendants), not behind them
            clip_text = own_bg if own_bg is not None and own_bg[3] > MAX_HIDDEN_OPACITY else None
            clip_image = image
        else:
            if own_bg is not None and own_bg[3] > 0:
                bg = _blend(_tinted(own_bg, tint), parent.bg)
                bg_image = False
            if image:
                bg_image = True

        fill = parent.fill
        f = value("-webkit-text-fill-color")
        if f:
            fill = None if _ident(f) == "currentcolor" else _rgba(f, color) or fill
        paint = fill or color
        stroke = _stroke(value, parent.stroke, color, font_px)
        shadow = _shadow(value, parent.shadow, color, font_px)
        spacing = parent.spacing
        ls = value("letter-spacing")
        if ls:
            spacing = 0.0 if _ident(ls) == "normal" else _length(ls[0], font_px) or 0.0  # inherited in px
        secured = parent.secured
        sec = value("-webkit-text-security")
        if sec:
            secured = _ident(sec) not in (None, "none")
        size_adjust = parent.size_adjust
        fsa = value("font-size-adjust")
        if "font" in merged and not fsa:
            size_adjust = None  # the font shorthand resets font-size-adjust
        if fsa:  # a number against the x-height (the default metric); none, from-font or another metric: not read
            nums = [float(t.value) for t in fsa if t.type == "number"]
            metric = [t.lower_value for t in fsa if t.type == "ident"]
            size_adjust = nums[0] if len(nums) == 1 and metric in ([], ["ex-height"]) else None
        used_px = font_px * size_adjust / _X_HEIGHT if size_adjust is not None else font_px
        if not visible:
            text_rule: str | None = "visibility_hidden"
        elif font_px < MIN_FONT_PX or used_px < MIN_FONT_PX:
            text_rule = "font_size_0"
        elif secured:
            text_rule = "text_security"
        elif font_px * yscale * LINE_HEIGHT < MIN_LINE_PX:
            text_rule = "scaled_text"
        elif spacing <= -MAX_COLLAPSED_SPACING * font_px:
            text_rule = "letter_spacing_collapsed"
        elif clip_image or any(p is not None and p[3] > MAX_HIDDEN_OPACITY and (
                bg_image or contrast(_blend(_tinted(p, tint), bg), bg) >= MIN_CONTRAST) for p in (stroke, shadow, clip_text)):
            text_rule = None  # a stroke, a sharp shadow or a clipped background draws the glyphs whatever the fill
        elif paint[3] <= MAX_HIDDEN_OPACITY:
            text_rule = "transparent_text"
        elif not bg_image and contrast(_blend(_tinted(paint, tint), bg), bg) < MIN_CONTRAST:
            text_rule = "same_color_text"
        else:
            text_rule = None
        pos = _ident(value("position") or []) if "position" in merged else None
        if (parent.clip_abs if pos == "absolute" else parent.clip_fixed if pos == "fixed" else False) and any(
                (v := value(n)) and _ident(v) != "auto" for n in _OFFSETS):
            # placed by a vertical offset against a containing block outside the clip-path ancestor: painted outside it
            return "clip_zero", parent
        in_fixed = parent.in_fixed or (pos == "fixed" and not parent.contained)
        edge, pinned = _edges(value, pos, font_px, parent.contained) if pos in ("fixed", "absolute") else (0, 0)
        containing = _CONTAINING_INLINE if inline else _CONTAINING  # transforms skip a non-replaced inline box
        own_contain = not containing.isdisjoint(merged) and any(
            (v := value(n)) and (_containment(v) if n == "contain" else _ident(v) not in ("none", "normal", "auto"))
            for n in containing)
        contained = parent.contained or own_contain
        paint_clip = parent.paint_clip or (not inline and "contain" in merged and bool(
            _idents(value("contain")) & _PAINT_CONTAINMENT))
        blockifies = _ident(value("display") or []) in _ITEM_CONTAINERS if "display" in merged else False
        clips = "clip-path" in merged and (cp := value("clip-path")) is not None and _ident(cp) != "none"
        clip_abs = (parent.clip_abs or clips) and pos in (None, "static") and not own_contain
        clip_fixed = (parent.clip_fixed or clips) and not own_contain
        if parent.lid and pos in ("relative", "sticky") and (
                (zi := value("z-index")) is not None and zi[0].type == "number" and zi[0].value < 0):
            # painted before (under) the opaque background of an ancestor whose box holds it (it stays in flow;
            # an absolute or fixed box may lie where the ancestor paints nothing)
            return "covered_text", parent
        backdrop = parent.backdrop
        own_opaque = own_bg is not None and own_bg[3] >= 1 and not clipped and not canvas
        group = (backdrop is not None or parent.lid or own_opaque) and (
                own_contain or clips or mode not in (None, "normal") or opacity < parent.opacity
                or pos in ("fixed", "sticky") or ("isolation" in merged and _ident(value("isolation") or []) == "isolate")
                or (pos in ("absolute", "relative") and (zi := value("z-index")) is not None and _ident(zi) != "auto")
                or any(_ident(value(n) or []) != "none" for n in _MASKS if n in merged))
        if backdrop is not None and group:
            backdrop = None  # a stacking context is a group of its own, which starts empty
        lid = (parent.lid or own_opaque) and not group
        anchored = parent.anchored or own_contain or pos in ("relative", "absolute", "fixed", "sticky")
        if own_bg is not None and own_bg[3] > 0 and not clipped:
            painted = _tinted(own_bg, tint)
            backdrop = (painted[:3] if painted[3] >= 1
                        else _blend(painted, backdrop) if backdrop is not None else None)
        state = State(font_px, color, visible, bg, bg_image, opacity, custom, text_rule, fill, font_abs, in_fixed,
                      edge, pinned, contained, block_rule, blockifies, clip_abs, clip_fixed, spacing, stroke, yscale,
                      shadow, clip_text, clip_image, secured, size_adjust, tint, paint_clip, backdrop, ctx3d,
                      perspective, lid, anchored)
        return None, parent if state == parent else self._intern(state)

    def _subtree_rule(
        self, value: Any, font_px: float, inline_tag: bool = False, in_fixed: bool = False, item: bool = False,
        contained: bool = False, paint_clip: bool = False, ua_margin: int = 0, anchored: bool = False,
    ) -> tuple[str | None, bool, str | None]:
        """Why the element and everything in it is hidden (or ``None``), whether its box is inline, and
        for an inline box why the blocks inside it are (:attr:`State.block_rule`). ``item``: the element
        is a flex or grid item, a block whatever its ``display`` says (but ``contents``). ``ua_margin``: where the
        user-agent style sheet gives the element a margin (:data:`UA_MARGIN_Y`, :data:`UA_MARGIN_X` bits);
        ``anchored``: :attr:`State.anchored` of the parent."""
        display = _ident(value("display") or [])
        if display in _NOT_DRAWN_DISPLAYS:
            return "display_none", False, None
        if _replaced_by_image(value("content")):
            return "replaced_content", False, None
        if _mask_hides(value, font_px):
            return "masked", False, None
        pos = _ident(value("position") or [])
        # A non-replaced inline box (<span>, <em>... unless display, position, float or a flex or grid
        # parent makes it a block) ignores width/height, transforms and containment, so those hide
        # nothing on it (as in Chromium).
        inline = (display in ("inline", "contents") if display else inline_tag) and pos not in ("absolute", "fixed") and (
            _ident(value("float") or []) in (None, "none")) and (not item or display == "contents")
        if inline:
            rule, block_rule = self._inline_rule(value, font_px, pos, in_fixed, paint_clip)
            return rule, True, block_rule
        return self._box_rule(value, font_px, pos, in_fixed, contained, paint_clip, ua_margin, anchored), False, None

    def _box_rule(self, value: Any, font_px: float, pos: str | None, in_fixed: bool, contained: bool = False,
                  paint_clip: bool = False, ua_margin: int = 0, anchored: bool = False) -> str | None:
        """:meth:`_subtree_rule` for a box that is not inline."""
        if _ident(value("content-visibility") or []) == "hidden":
            return "content_visibility_hidden"
        overflow = _idents(value("overflow")) | _idents(value("overflow-x")) | _idents(value("overflow-y"))
        contain = _idents(value("contain"))
        if contain & {"size", "strict"} and (overflow & {"hidden", "clip"} or contain & _PAINT_CONTAINMENT) and (
                not any(value(n) for n in _BLOCK_EXTENT)):
            # size containment lays the box out as if empty (no height), and the clip cuts all its content away
            return "zero_size_box"
        if overflow & {"hidden", "clip"}:
            for name in _SIZES:
                toks = value(name)
                if toks:
                    px = _length(toks[0], font_px)
                    if px is not None and px <= 1:
                        return "zero_size_box"
            if _indent_past_end(value, font_px):
                return "text_indent_offscreen"
        if any(value(n) and _clip_hides(value(n), font_px) for n in ("clip", "clip-path")):
            return "clip_zero"
        tr = value("transform")
        if tr and _transform_hides(tr, font_px):
            return "transform_offscreen"
        rot = value("rotate")
        if rot and _rotate_hides(rot):
            return "transform_offscreen"
        sc = value("scale")
        if sc and any(n is not None and abs(n) < 0.01 for n in (_number(t) for t in sc[:2])):
            return "transform_offscreen"
        tl = value("translate")
        if tl and any(p is not None and abs(p) >= OFFSCREEN_PX for p in (_length(t, font_px) for t in tl[:2])):
            return "transform_offscreen"
        if (tr or rot or sc) and (m := _linear3d(tr, rot, sc)) is not None and abs(_det3(m)) < 1e-9:
            return "transform_offscreen"  # singular (scaleZ(0), a matrix3d with no depth): Chromium draws nothing
        return self._position_rule(value, font_px, pos, in_fixed=in_fixed, contained=contained, paint_clip=paint_clip,
                                   ua_margin=ua_margin, anchored=anchored)

    def _inline_rule(self, value: Any, font_px: float, pos: str | None, in_fixed: bool,
                     paint_clip: bool = False) -> tuple[str | None, str | None]:
        """:meth:`_subtree_rule` for an inline box: offsets still apply, and any ``clip-path`` hides it
        (Chromium clips the blocks inside an inline box away, and the text after them: its reference box
        is the line fragments before them). An offscreen ``text-indent`` is inherited but indents block
        containers only, so it hides the blocks inside the box, not its own text (the block rule)."""
        cp = value("clip-path")
        if cp and _ident(cp) != "none":
            return "clip_zero", None
        rule = self._position_rule(value, font_px, pos, inline=True, in_fixed=in_fixed, paint_clip=paint_clip)
        if rule is not None:
            return rule, None
        return None, ("text_indent_offscreen" if _indent_offscreen(value, font_px) else None)

    def _position_rule(
        self, value: Any, font_px: float, pos: str | None, *, inline: bool = False, in_fixed: bool = False,
        contained: bool = False, paint_clip: bool = False, ua_margin: int = 0, anchored: bool = False,
    ) -> str | None:
        inset = _box(value("inset"))
        sides: dict[str, float | None] = {}
        past_viewport = False
        on_viewport = pos == "fixed" and not contained
        for i, name in enumerate(("top", "right", "bottom", "left")):
            toks = value(name)
            t = toks[0] if toks else inset[i]
            if on_viewport and t is not None:
                t = _percent_as(t, "vh" if name in ("top", "bottom") else "vw", 1.0)
            sides[name] = _length(t, font_px) if t is not None else None
            if t is not None and pos == "fixed" and (
                    _past_far_edge(t, font_px, name == "top") if name in ("top", "left")
                    else _past_far_edge(t, font_px, name == "bottom", -1.0)):
                past_viewport = True
            if t is not None and t.type == "dimension" and t.lower_unit in _VIEWPORT_UNITS[name]:
                # a whole viewport toward the start (right:100vw, bottom:100vh): before the page on any screen
                if name in ("right", "bottom") and t.value >= 100 and pos in ("absolute", "fixed"):
                    return "offscreen_position"
        if pos in ("absolute", "fixed") and (v := sides["top"]) is not None and v <= -VIEWPORT[1]:
            return "offscreen_position"  # a viewport's height (top:-100vh, calc(-100vh - 10px)) above its containing block
        if pos == "absolute" and sides["right"] is None and _container_widths_left(value, inset[3]):
            return "offscreen_position"
        if paint_clip and pos in ("absolute", "fixed", "relative") and any(
                (v := sides[s]) is not None and abs(v) >= OFFSCREEN_PX for s in sides):
            return "offscreen_position"  # moved out of an ancestor whose paint containment clips it
        if pos in ("absolute", "fixed", "relative"):
            if any((v := sides[s]) is not None and v <= -OFFSCREEN_PX for s in ("top", "left")) or any(
                (v := sides[s]) is not None and v >= OFFSCREEN_PX for s in ("right", "bottom")
            ):
                return "offscreen_position"
        if on_viewport and not in_fixed and _slid_out(value, font_px, sides, ua_margin):
            return "offscreen_position"
        if pos == "absolute" and not anchored and _slid_out(value, font_px, {**sides, "right": None, "bottom": None},
                                                            ua_margin):
            # placed against the page's initial containing block: slid past its left (top) edge, no scrolling
            # reaches it (past the right or bottom edge, scrolling does)
            return "offscreen_position"
        if pos == "fixed" and past_viewport and not contained:
            # top: 100vh, left: calc(100vw + 10px), max(100vw, 2000px) on the viewport: past its far edge at any size
            return "offscreen_position"
        if (pos == "fixed" and not contained) or (in_fixed and pos in ("absolute", "relative", "fixed")):
            # Fixed to the viewport (or inside a fixed box), so no scrolling reaches it beyond the far edges either;
            # a fixed box inside a transformed (contained) one is placed against it, and scrolls like an absolute one.
            if any((v := sides[s]) is not None and v >= FAR_PX for s in ("top", "left")) or any(
                (v := sides[s]) is not None and v <= -OFFSCREEN_PX for s in ("right", "bottom")
            ):
                return "offscreen_position"
        margin = _box(value("margin"))
        for i, name in ((3, "margin-left"),) if inline else ((0, "margin-top"), (3, "margin-left")):
            toks = value(name)
            t = toks[0] if toks else margin[i]
            px = _length(t, font_px) if t is not None else None
            if px is not None and px <= -OFFSCREEN_PX:
                return "offscreen_position"
        if not inline and _indent_offscreen(value, font_px):  # on an inline box: the block rule (_inline_rule)
            return "text_indent_offscreen"
        return None


def _container_widths_left(value: Any, inset_left: Any) -> bool:
    """Whether an absolute box with no ``right`` is moved left by its containing block's whole width or more
    (``left: -100%``) and is no wider than that block (``width`` unset, or a percentage up to 100%): it then ends
    at or before the block's left edge, off the page (the block itself starts at most a body margin in). A
    shrink-to-fit box wider than its block (a paragraph longer than one line of it) would reach back in; such
    text is taken to be one line or less, as an off-canvas panel or a hidden note is."""
    toks = value("left")
    t = toks[0] if toks else inset_left
    if t is None or t.type != "percentage" or t.value > -100:
        return False
    width = value("width")
    return not width or (len(width) == 1 and width[0].type == "percentage" and width[0].value <= 100)


_UA_MARGIN_TAGS = frozenset("""body p blockquote figure h1 h2 h3 h4 h5 h6 ul ol menu dir dl dd pre xmp listing plaintext
    hr fieldset dialog""".split())
"""Elements Chromium's user-agent style sheet gives a margin (``p``: 1em above and below): a box fixed against an
edge sits that far inside it, so a translation by its own size does not take it out."""
_UA_SIDE_MARGIN_TAGS = frozenset("body blockquote figure dd hr fieldset dialog".split())
"""Those of :data:`_UA_MARGIN_TAGS` whose user-agent margin is also (``dd``, ``fieldset``: only) on the left or right."""
UA_MARGIN_Y, UA_MARGIN_X = 1, 2
"""Bits of the ``ua_margin`` mask: the user-agent style sheet gives the element a margin above and below / left or right."""


def _ua_margin(tag: str) -> int:
    """The :data:`UA_MARGIN_Y` / :data:`UA_MARGIN_X` bits of ``tag``."""
    if tag not in _UA_MARGIN_TAGS:
        return 0
    return (UA_MARGIN_X if tag in _UA_SIDE_MARGIN_TAGS else 0) | (0 if tag in ("dd", "fieldset") else UA_MARGIN_Y)


_MARGINS = ("margin", "margin-top", "margin-right", "margin-bottom", "margin-left", "margin-inline", "margin-block",
            "margin-inline-start", "margin-inline-end", "margin-block-start", "margin-block-end")
_SHIFT_WIDTH = 1e6
"""An own-box size no real box reaches: a translation's percentages are read at 0 and at this size."""


def _shift(value: Any, font_px: float) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """How far ``transform`` and ``translate`` move a box, per axis, as ``(share of its own size, px)``
    (``translateX(-100%)`` is ``(-1.0, 0.0)`` on x); ``None`` when anything else is in the transform (a
    scale or rotation moves the box in ways its size decides) or a value is not a length or percentage."""
    x = [0.0, 0.0]
    y = [0.0, 0.0]
    moves: list[tuple[list[float], Any]] = []
    for t in value("transform") or []:
        if t.type == "whitespace" or (t.type == "ident" and t.lower_value == "none"):
            continue
        if t.type == "function" and _identity_function(t):
            continue  # rotate(0), scale(1)...: a framework's composite transform with its other parts at rest
        if t.type != "function" or t.lower_name not in ("translate", "translatex", "translatey", "translate3d"):
            return None
        args = [a for a in _strip(t.arguments) if not (a.type == "literal" and a.value == ",")]
        if not args:
            return None
        if t.lower_name == "translatey":
            moves.append((y, args[0]))
        else:
            moves.append((x, args[0]))
            if t.lower_name != "translatex" and len(args) > 1:
                moves.append((y, args[1]))
    tl = [a for a in value("translate") or [] if a.type != "whitespace"]
    if tl and not (tl[0].type == "ident" and tl[0].lower_value == "none"):
        moves.append((x, tl[0]))
        if len(tl) > 1:
            moves.append((y, tl[1]))
    for axis, t in moves:
        at0 = _length(_percent_as(t, "px", 0.0), font_px)
        at_w = _length(_percent_as(t, "px", _SHIFT_WIDTH / 100), font_px)
        if at0 is None or at_w is None:
            return None
        axis[0] += (at_w - at0) / _SHIFT_WIDTH
        axis[1] += at0
    return (x[0], x[1]), (y[0], y[1])


_TURNS = frozenset(("rotate", "rotatex", "rotatey", "rotatez", "skew", "skewx", "skewy"))
_SCALES = frozenset(("scale", "scalex", "scaley", "scalez", "scale3d"))


def _identity_function(t: Any) -> bool:
    """Whether a transform function leaves the box where it is: a rotation or skew by zero, a scale by one (or
    100%), ``translateZ(0)``, ``rotate3d(x, y, z, 0)``. Tailwind writes every transform as ``translate(...)
    rotate(...) skewX(...) skewY(...) scaleX(...) scaleY(...)`` with the parts it does not use at rest."""
    args = [a for a in _strip(t.arguments) if not (a.type == "literal" and a.value == ",")]
    name = t.lower_name
    if not args:
        return False
    if name == "rotate3d":
        args = args[3:] if len(args) == 4 else []
    if name in _TURNS or name in ("rotate3d", "translatez"):
        return bool(args) and all(a.type in ("number", "dimension") and a.value == 0 for a in args)
    if name in _SCALES:
        return all((a.type == "number" and a.value == 1) or (a.type == "percentage" and a.value == 100) for a in args)
    return False


def _slid_out(value: Any, font_px: float, sides: dict[str, float | None], ua_margin: int = 0) -> bool:
    """Whether a box fixed to the viewport, set against one of its edges, is translated past that edge by
    at least its own size (an off-canvas drawer: ``left: 0; transform: translateX(-100%)``). Percentages of a
    translation are of the box's own size, so the box is wholly out whatever that size; a fixed box makes no
    scrollable overflow, so no scrolling brings it back on any side. A margin on the box leaves it alone (it
    may hold the box in): an author's on any side, the user-agent style sheet's (``ua_margin`` bits) on its axis."""
    if not any(value(n) for n in ("transform", "translate")) or any(value(n) for n in _MARGINS):
        return False
    shift = _shift(value, font_px)
    if shift is None:
        return False
    (xs, xp), (ys, yp) = shift
    left, right, top, bottom = sides["left"], sides["right"], sides["top"], sides["bottom"]
    x_free = not ua_margin & UA_MARGIN_X
    y_free = not ua_margin & UA_MARGIN_Y
    return ((x_free and left is not None and left <= 0 and xs <= -1 and xp <= 0)
            or (x_free and left is None and right is not None and right <= 0 and xs >= 1 and xp >= 0)
            or (y_free and top is not None and top <= 0 and ys <= -1 and yp <= 0)
            or (y_free and top is None and bottom is not None and bottom <= 0 and ys >= 1 and yp >= 0))


def _stroke(value: Any, parent: tuple[float, float, float, float] | None, color: tuple[float, float, float, float],
            font_px: float) -> tuple[float, float, float, float] | None:
    """The text stroke colour (``-webkit-text-stroke`` and its longhands; inherited) when the stroke has a
    width, else ``None``. The stroke colour defaults to ``currentcolor``."""
    short = value("-webkit-text-stroke")
    width_t = value("-webkit-text-stroke-width")
    color_t = value("-webkit-text-stroke-color")
    if short is None and width_t is None and color_t is None:
        return parent
    width = None
    col = None
    for t in short or []:
        px = _length(t, font_px)
        if px is not None:
            width = px
        else:
            col = _rgba([t], color) or col
    if width_t:
        width = _length(width_t[0], font_px)
    if color_t:
        col = _rgba(color_t, color)
    if width is None:
        return parent if short is None and width_t is None else None
    return (col or color) if width > 0 else None


def _containment(tokens: list[Any]) -> bool:
    """A ``contain`` value that makes the box the containing block of fixed descendants (layout or paint
    containment: ``layout``, ``paint``, ``strict``, ``content``; not ``size`` or ``style`` alone)."""
    return bool(_idents(tokens) & (_PAINT_CONTAINMENT | {"layout"}))


_PAINT_CONTAINMENT = frozenset(("paint", "strict", "content"))
"""``contain`` keywords that clip the box's descendants to it."""


def _idents(tokens: list[Any] | None) -> set[str]:
    """The lower-cased keywords among ``tokens``."""
    return {t.lower_value for t in tokens or [] if t.type == "ident"}


def _shadow(value: Any, parent: tuple[float, float, float, float] | None, color: tuple[float, float, float, float],
            font_px: float) -> tuple[float, float, float, float] | None:
    """The colour of the first ``text-shadow`` layer (inherited) sharp enough to draw the glyphs' shapes: a blur
    radius of at most a quarter of the font size (a wider blur is a smudge no one reads). The colour defaults to
    ``currentcolor``. ``None`` when no layer qualifies."""
    toks = value("text-shadow")
    if toks is None:
        return parent
    for layer in _split_commas(toks):
        layer = _strip(layer)
        lengths = [t for t in layer if t.type in ("dimension", "number")]
        colours = [c for c in (_rgba([t], color) for t in layer if t.type in ("ident", "hash", "function")) if c]
        if len(lengths) < 2 or len(lengths) > 3:
            continue
        blur = _length(lengths[2], font_px) if len(lengths) == 3 else 0.0
        if blur is not None and blur <= font_px / 4:
            return colours[0] if colours else color
    return None


def _clips_to_text(value: Any) -> bool:
    """``background-clip: text`` (or ``-webkit-background-clip``, or ``text`` in the ``background`` shorthand)."""
    for name in ("background-clip", "-webkit-background-clip", "background"):
        toks = value(name)
        if toks and any(t.type == "ident" and t.lower_value == "text" for t in toks):
            return True
    return False


def _indent_past_end(value: Any, font_px: float) -> bool:
    """``text-indent`` of 100% or :data:`OFFSCREEN_PX` and more, in a box whose ``overflow-x`` clips: the
    first line starts past the box's right edge and is cut off (image replacement, "text-indent:100%;
    white-space:nowrap; overflow:hidden"). ``white-space`` is not read: without ``nowrap`` only the
    first word would go, a layout no page uses on purpose."""
    ti = value("text-indent")
    if not ti:
        return False
    first = value("overflow") or []
    x = value("overflow-x") or first[:1]
    if _ident(x) not in ("hidden", "clip"):
        return False
    t = ti[0]
    if t.type == "percentage":
        return float(t.value) >= 100
    px = _length(t, font_px)
    return px is not None and px >= OFFSCREEN_PX


def _indent_offscreen(value: Any, font_px: float) -> bool:
    """``text-indent`` at most -:data:`OFFSCREEN_PX`: the first line of a block container starts off screen."""
    ti = value("text-indent")
    px = _length(ti[0], font_px) if ti else None
    return px is not None and px <= -OFFSCREEN_PX


_VH = ("vh", "svh", "lvh", "dvh", "vb")
_VW = ("vw", "svw", "lvw", "dvw", "vi")
_VIEWPORT_UNITS = {"top": _VH, "bottom": _VH, "left": _VW, "right": _VW}
_SCREENS = ((320.0, 480.0), (7680.0, 4320.0))
"""The smallest and largest windows (CSS px) a fixed box is placed against when asking whether it is past the
viewport's far edge on any screen: a ``calc()`` of lengths is linear in the window's size, so holding at both
ends it holds on every window between."""


_NOT_DRAWN_DISPLAYS = frozenset(("none", "table-column", "table-column-group"))
"""``display`` values whose box draws none of the element's content (a table column box holds no text)."""
_IMAGE_FUNCTIONS = frozenset(("url", "image-set", "-webkit-image-set", "cross-fade", "image", "element", *(
    f"{p}{r}{k}-gradient" for p in ("", "-webkit-") for r in ("", "repeating-") for k in ("linear", "radial", "conic"))))


def _replaced_by_image(tokens: list[Any] | None) -> bool:
    """``content: url(...)`` (or a gradient, ``image-set()``...) on an element itself, not a pseudo-element:
    the element becomes that image and none of its children is drawn (an ``/ "alt"`` text is not shown)."""
    if not tokens:
        return False
    t = tokens[0]
    return t.type == "url" or (t.type == "function" and t.lower_name in _IMAGE_FUNCTIONS)


def _percent_as(t: Any, unit: str, per_percent: float, depth: int = 0) -> Any:
    """``t`` with each percentage written as ``per_percent`` times its number in ``unit``, also inside
    ``calc()``, ``min()``, ``max()`` and ``clamp()``: a fixed box's offsets are percentages of the viewport,
    its containing block (``left: 100%`` is ``100vw``: ``unit="vw", per_percent=1``), a font size's of the
    parent's size (``calc(50% - 8px)`` is ``calc(0.5em - 8px)``: ``unit="em", per_percent=0.01``)."""
    if t.type == "percentage":
        v = t.value * per_percent
        return tinycss2.ast.DimensionToken(t.source_line, t.source_column, v, None, f"{v}", unit)
    if depth > 8:
        return t
    if t.type == "function" and t.lower_name in _MATH:
        return tinycss2.ast.FunctionBlock(t.source_line, t.source_column, t.name,
                                          [_percent_as(a, unit, per_percent, depth + 1) for a in t.arguments])
    if t.type == "() block":
        return tinycss2.ast.ParenthesesBlock(t.source_line, t.source_column,
                                             [_percent_as(a, unit, per_percent, depth + 1) for a in t.content])
    return t


def _past_far_edge(t: Any, font_px: float, vertical: bool, sign: float = 1.0) -> bool:
    """Whether a ``top`` (``vertical``) or ``left`` offset of a fixed box puts its start edge at or past the
    viewport's far edge on the smallest and the largest screen (``100vh``, ``calc(100vw + 10px)``); with
    ``sign=-1``, whether a ``bottom`` or ``right`` offset pulls its end edge a whole viewport or more past it
    (``bottom: -100vh``), which puts a box no taller (wider) than the viewport wholly past it."""
    if t.type not in ("dimension", "function"):
        return False
    axis = 1 if vertical else 0
    return all((v := _length(t, font_px, vp)) is not None and sign * v >= vp[axis] for vp in _SCREENS)
"""Viewport units per offset: ``top``/``left`` at 100 or more put a fixed box past the viewport's far edge; at
-100 or less (``right``/``bottom`` at 100 or more) they put a box a whole viewport before the page's start."""
_BLOCK_EXTENT = ("height", "block-size", "min-height", "min-block-size", "contain-intrinsic-size",
                 "contain-intrinsic-height", "contain-intrinsic-block-size")
"""Declarations that give a size-contained box a height of its own (any value: it may be enough for the text)."""
_GRADIENTS = frozenset(("linear-gradient", "radial-gradient", "conic-gradient", "repeating-linear-gradient",
                        "repeating-radial-gradient", "repeating-conic-gradient", "-webkit-linear-gradient",
                        "-webkit-radial-gradient"))


def _mask_hides(value: Any, font_px: float) -> bool:
    """A mask that lets nothing through: every layer a gradient whose colour stops are all transparent, or
    an image whose tile has no width or height (``mask-size: 0``). A ``url()`` mask is not read."""
    for prefix in ("", "-webkit-"):
        short = value(prefix + "mask") or []
        image = value(prefix + "mask-image") or [t for t in short if t.type in ("function", "url")]
        if not image or _ident(image) == "none":
            continue
        layers = [t for t in image if not (t.type == "literal" and t.value == ",")]
        if all(t.type == "function" and t.lower_name in _GRADIENTS and _transparent_stops(t) for t in layers):
            return True
        if len(layers) > 1:  # another layer may let the text through
            continue
        size = value(prefix + "mask-size")
        slash = next((i for i, t in enumerate(short) if t.type == "literal" and t.value == "/"), None)
        if size is None and slash is not None:  # the shorthand's position / size
            size = short[slash + 1 : slash + 3]
        if size and any(_length(t, font_px) == 0.0 for t in size[:2] if t.type != "literal"):
            return True
    return False


def _opaque_top_layer(tokens: list[Any], current: tuple[float, float, float, float],
                      size: list[Any] | None) -> tuple[float, float, float, float] | None:
    """The colour of a ``background`` (or ``background-image``) whose top layer (the first) is a gradient of one
    opaque colour (``linear-gradient(#fff, #fff)``) over the whole box, which hides every layer below it; else
    ``None``. A size (``/ 10px 10px`` in the shorthand, or a ``background-size`` other than ``auto``, ``cover`` or
    ``100%``) may leave part of the box to the layers below."""
    top = _strip(_split_commas(tokens)[0]) if tokens else []
    grads = [t for t in top if t.type == "function" and "gradient" in t.lower_name]
    if len(grads) != 1 or any(t.type == "url" or (t.type == "function" and t.lower_name in ("url", "image-set"))
                              or (t.type == "literal" and t.value == "/") for t in top):
        return None
    if size and not all((t.type == "ident" and t.lower_value in ("auto", "cover")) or
                        (t.type == "percentage" and t.value >= 100) for t in _strip(_split_commas(size)[0])):
        return None
    colours = []
    for k, group in enumerate(_split_commas(_strip(grads[0].arguments))):
        group = _strip(group)
        c = _rgba(group[:1], current) if group else None
        if c is None:
            if group and (k == 0 or (len(group) == 1 and group[0].type in ("percentage", "dimension", "number"))):
                continue  # the direction, shape or position (first), or a colour hint (a length alone)
            return None
        colours.append(c)
    if not colours or any(c != colours[0] for c in colours) or colours[0][3] < 1:
        return None
    return colours[0]


def _transparent_stops(gradient: Any) -> bool:
    """Every colour stop of ``gradient`` is (almost) fully transparent; ``False`` when it names no colour."""
    found = (_rgba([t], _BLACK) for t in _strip(gradient.arguments) if t.type in ("ident", "hash", "function"))
    colours = [c for c in found if c is not None]
    return bool(colours) and all(c[3] <= MAX_HIDDEN_OPACITY for c in colours)


_ITEM_CONTAINERS = frozenset(("flex", "inline-flex", "grid", "inline-grid"))
_OFFSETS = ("top", "bottom", "inset")  # vertical: a horizontal offset may stay inside a full-width clipped box

INLINE_TAGS = frozenset(
    "a abbr b bdi bdo big cite code data dfn em font i kbd mark q s samp small span strike strong sub sup time tt u "
    "var label".split()
)
"""Elements whose default box is a non-replaced inline box (width, height, transforms do not apply)."""

_SUBTREE_PROPERTIES = frozenset(
    """display float content-visibility overflow overflow-x overflow-y width height max-width max-height inline-size
    block-size max-inline-size max-block-size clip clip-path transform scale translate rotate position inset top right
    bottom left margin margin-top margin-left text-indent contain mask mask-image mask-size -webkit-mask
    -webkit-mask-image -webkit-mask-size content""".split()
)
"""Every property :meth:`Styler._subtree_rule` reads: an element declaring none of them is not hidden by it."""


HINT_COLOR_TAGS = {"font": "color", "body": "text"}
"""Elements whose attribute sets the text colour as a presentational hint (``<font color>``, ``<body text>``)."""
UA_COLORED = frozenset(("button", "mark"))
"""Elements the user-agent style sheet gives colours of their own, which they do not inherit."""


def _hints(tag: str, attrs: dict[Any, Any]) -> dict[str, tuple[tuple[Any, ...], list[Any]]]:
    """Presentational hints: ``<font color>``, ``<body text>`` and ``bgcolor`` attributes, below every author
    rule; and the user-agent colours of ``<button>`` (and its font size, which does not inherit the page's)
    and ``<mark>`` (black on yellow, whatever colour the text around it has)."""
    out: dict[str, tuple[tuple[Any, ...], list[Any]]] = {}
    if tag == "button":
        out["color"] = (HINT_KEY, tinycss2.parse_component_value_list("buttontext"))
        out["background-color"] = (HINT_KEY, tinycss2.parse_component_value_list("buttonface"))
        out["font-size"] = (HINT_KEY, tinycss2.parse_component_value_list("13.333px"))
        # its font shorthand (font: -webkit-small-control) resets font-size-adjust as well
        out["font-size-adjust"] = (HINT_KEY, tinycss2.parse_component_value_list("none"))
    elif tag == "mark":
        out["color"] = (HINT_KEY, tinycss2.parse_component_value_list("marktext"))
        out["background-color"] = (HINT_KEY, tinycss2.parse_component_value_list("mark"))
    for attr, prop in ((HINT_COLOR_TAGS.get(tag), "color"), ("bgcolor", "background-color")):
        if attr is None:
            continue
        raw = attrs.get(attr)
        if raw:
            raw = raw.strip()
            if raw and raw[0] not in "#" and all(ch in "0123456789abcdefABCDEF" for ch in raw) and len(raw) in (3, 6):
                raw = "#" + raw  # legacy colour parsing accepts hex without '#'
            out[prop] = (HINT_KEY, tinycss2.parse_component_value_list(raw))
    return out
