"""A page's author stylesheets, parsed with tinycss2 and matched with lexbor: the cascade of the
properties that decide whether text is visible.

Why: an instruction hidden by a stylesheet rule (``@media screen{.x{display:none}}``,
``main p:is(.a,.b)``, ``!important``, a later rule overriding a "show" rule, a sheet in a
``<link href="data:...">``) is as invisible to a reader as one hidden by an inline style.

What is modelled: ``<style>`` elements and ``data:`` stylesheet links (their ``media``
attribute), ``@media`` (evaluated for a 1280x800 light-mode screen: ``print`` and other
non-screen types never apply), ``@supports`` (a modern browser: every declaration is
supported; ``not`` negates), ``@layer`` (named, anonymous and statement order, with the
reversed order of ``!important``), ``@container`` (applied), ``@scope`` and CSS nesting
(rewritten with ``:is()``), ``@import`` of ``data:`` URLs, specificity, source order,
``!important`` and the style attribute's precedence. Values stay tinycss2 tokens, so
CSS escapes (``n\\6f ne``) are already decoded; ``var()`` is resolved per element later.

Bounded cost: rules whose declarations cannot affect visibility, and rules whose right-most
compound selector needs a class or id that no element has, are dropped before matching
(large sheets are pruned the same way before tinycss2 parses them). Matching is capped
at :data:`MAX_MATCH_VISITS` selector x element visits (a structural selector such as
``:nth-child()`` is charged the sum over parents of children^2/2, which is what lexbor
spends on it) and :data:`MAX_MATCHES` matched elements; past either cap
:class:`Cascade.over_budget` is set and the page is treated as hidden (see
:func:`tokenslim.html.extract`): a page whose visibility cannot be decided is never passed
on. The cost model is deterministic (no wall clock), so a page never passes on one
machine and fails on a slower one.
"""

from __future__ import annotations

import base64
import functools
import operator
import re
import threading
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import tinycss2

from tokenslim.html._flatten import drop_spans

__all__ = ["Cascade", "build_cascade", "RELEVANT", "MAX_MATCH_VISITS", "MAX_MATCHES", "VIEWPORT"]

MAX_MATCH_VISITS = 20_000_000
"""Most selector x element visits spent matching one page's rules (about 0.5 s in lexbor)."""
MAX_MATCHES = 400_000
"""Most (selector, element) matches applied for one page."""
VIEWPORT = (1280.0, 800.0)
"""Screen size (CSS px) that ``@media`` width/height features are evaluated against."""

# Properties that decide visibility (custom properties are kept when one of these uses them).
RELEVANT = frozenset(
    """display visibility content-visibility opacity filter width height max-width max-height inline-size block-size
    max-inline-size max-block-size overflow overflow-x overflow-y clip clip-path transform scale translate rotate zoom
    position left top right bottom inset margin margin-left margin-top text-indent letter-spacing font font-size color
    -webkit-text-fill-color -webkit-text-stroke -webkit-text-stroke-width -webkit-text-stroke-color background
    background-color background-image z-index float animation animation-name animation-fill-mode
    animation-iteration-count animation-direction contain min-height min-block-size contain-intrinsic-size
    contain-intrinsic-height contain-intrinsic-block-size mask mask-image mask-size -webkit-mask -webkit-mask-image
    -webkit-mask-size text-shadow background-clip -webkit-background-clip -webkit-text-security font-size-adjust mix-blend-mode isolation background-size backface-visibility
    transform-style perspective content color-scheme""".split()
)
FIRST_LINE = "::first-line "
"""Prefix of a ``::first-line`` declaration's property in :attr:`Cascade.by_elem` (on the originating
element); the bare prefix marks an element that has such declarations."""
# What a ``::first-line`` rule can set among the properties that decide visibility (CSS Pseudo-Elements 4,
# 3.1.1: font, colour, background and text properties), as Chromium draws it: it ignores
# -webkit-text-fill-color and -webkit-text-stroke there, and letter-spacing only moves glyphs.
FIRST_LINE_PROPERTIES = frozenset(
    "font font-size font-size-adjust color background background-color background-image background-size text-shadow".split()
)
# A rule (or style attribute) is kept when it names one of these; z-index and float only qualify what
# another declaration does (a covering overlay, an inline box made a block), so they alone keep nothing:
# both are common, and keeping every rule that sets them would slow the cascade for nothing.
_RELEVANT_TEXT = re.compile(
    r"(?:^|[;{\s/])(?:display|visibility|content-visibility|opacity|filter|"
    r"(?:max-)?(?:width|height|(?:inline|block)-size)|overflow(?:-[xy])?|clip(?:-path)?|transform|scale|translate|rotate|"
    r"zoom|position|left|top|right|bottom|inset|margin(?:-left|-top)?|text-indent|letter-spacing|animation(?:-name)?|font(?:-size)?|color(?:-scheme)?|-webkit-text-(?:fill-color|stroke(?:-width|-color)?)|(?:-webkit-)?background(?:-color|-image|-clip)?|text-shadow|-webkit-text-security|font-size-adjust|mix-blend-mode|isolation|backface-visibility|transform-style|perspective|content(?=\s*:\s*(?:url|[\w-]*gradient|[\w-]*image(?:-set)?|cross-fade|element)\()|"
    r"contain(?:-intrinsic-(?:size|height|block-size))?|min-(?:height|block-size)|(?:-webkit-)?mask(?:-image|-size)?|"
    r"--[^:;{}\s]*)\s*:|\\",
    re.I,
)
# Block at-rules whose inner rules can style the page; every other at-rule block (@font-face with
# inline fonts, @keyframes, @page...) is cut whole when a large sheet is pruned.
_STYLING_AT_RULES = ("@media", "@supports", "@layer", "@container", "@scope", "@document", "@-moz-document",
                     "@property", "@keyframes", "@-webkit-keyframes")
_PRUNE_ABOVE_CHARS = 256
_SCAN = re.compile(r"/\*.*?(?:\*/|\Z)|\"(?:[^\"\\\n]|\\.)*[\"\n]?|'(?:[^'\\\n]|\\.)*['\n]?|\\.|[{};]", re.S)
_SKIP = r"/\*.*?(?:\*/|\Z)|\"(?:[^\"\\\n]|\\.)*[\"\n]?|'(?:[^'\\\n]|\\.)*['\n]?|\\."
_BRACES = re.compile(_SKIP + r"|[{}]", re.S)  # _SCAN without ';': the same tokens, the scan stops at braces only
_NOT_PLAIN = re.compile(r"[\"'\\]|/\*")  # a span holding one of these is rescanned with _SCAN
_NAMES = re.compile(
    r"[.#]((?:-?[_a-zA-Z\u00a0-\U0010ffff]|\\[0-9a-fA-F]{1,6}\s?|\\[^\n\r\f0-9a-fA-F])"
    r"(?:[\w\-\u00a0-\U0010ffff]|\\[0-9a-fA-F]{1,6}\s?|\\[^\n\r\f0-9a-fA-F])*)"
)
_ESCAPE = re.compile(r"\\([0-9a-fA-F]{1,6})\s?|\\(.)", re.S)
_RISKY_ESCAPE = re.compile(r"\\[()\[\],\s]")


def _unescape(name: str) -> str:
    """A class or id name with its CSS escapes decoded (``hover\\:bg`` -> ``hover:bg``)."""
    if "\\" not in name:
        return name

    def sub(m: re.Match[str]) -> str:
        if m.group(1):
            code = int(m.group(1), 16)
            return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else "\ufffd"
        return m.group(2)

    return _ESCAPE.sub(sub, name)
# Pseudo-classes that lexbor evaluates by walking the preceding siblings of every candidate,
# so one selector costs the sum over parents of (children^2)/2, not the element count.
_STRUCTURAL = re.compile(r":(?:nth-|first-of-type|last-of-type|only-of-type)", re.I)


@dataclass
class Cascade:
    """Winning author declarations per element.

    Attributes:
        by_elem: lexbor node ``mem_id`` -> property -> ``(cascade key, value tokens)``.
        over_budget: matching hit :data:`MAX_MATCH_VISITS` or :data:`MAX_MATCHES`.
        rules: Rules matched (after pruning), for reports and tests.
        initial: Custom properties registered by ``@property`` with an ``initial-value``: name -> value
            tokens, the value of ``var(--name)`` wherever no rule sets it.
        keyframes: ``@keyframes`` by name: keyframe offset (0 to 1) -> relevant declarations.
    """

    by_elem: dict[int, dict[str, tuple[tuple[Any, ...], list[Any]]]] = field(default_factory=dict[Any, Any])
    over_budget: bool = False
    rules: int = 0
    initial: dict[str, list[Any]] = field(default_factory=dict[str, list[Any]])
    keyframes: dict[str, dict[float, list[tuple[str, list[Any], bool]]]] = field(default_factory=dict[Any, Any])


@dataclass
class _Rule:
    selector: str
    spec: tuple[int, int, int]
    decls: list[tuple[str, list[Any], bool]]
    layer: int  # index in layer order; -1 unlayered
    order: int
    group: int = -1  # the selector list it came from, when that list holds several selectors
    judged: bool = False  # lexbor's refusal of this selector is Chromium's: its whole list is then invalid


# ---------------------------------------------------------------- collecting sheets


def decode_data_url(href: str, css_only: bool = False) -> str | None:
    """The text of a ``data:`` URL (base64 or percent-encoded), or ``None`` for other URLs, and with
    ``css_only`` for a MIME type other than ``text/css`` (a standards-mode page applies no style sheet of
    another type; a quirks-mode page applies it)."""
    href = href.strip()
    if not href[:5].lower() == "data:" or "," not in href:
        return None
    meta, _, payload = href[5:].partition(",")
    if css_only and _mime(meta) != "text/css":
        return None
    try:
        if meta.lower().rstrip().endswith(";base64"):
            raw = base64.b64decode(urllib.parse.unquote_to_bytes(payload) + b"===", validate=False)
        else:
            raw = urllib.parse.unquote_to_bytes(payload)
    except ValueError:
        return None
    return raw.decode("utf-8", errors="replace")


def collect_sheets(tree: Any, quirks: bool = False) -> list[str]:
    """CSS text of every stylesheet that applies on screen, in document order (``quirks``: the page renders
    in quirks mode, see :func:`decode_data_url`).

    As Chromium decides: a ``<style>`` whose ``type`` is neither empty nor ``text/css`` (exactly, in any case)
    and a ``<link>`` whose ``type`` is another MIME type (parameters and spaces aside) hold no CSS; a ``disabled``
    link and a sheet whose ``media`` is false apply nowhere. A sheet with a ``title`` belongs to a style sheet
    set: only the preferred set applies (named by ``<meta http-equiv="default-style">``, else by the first titled
    sheet that is not an alternate), besides every untitled sheet; an alternate sheet applies only in that set.
    """
    sheets: list[str] = []
    preferred = None
    for meta in tree.css("meta[http-equiv]"):
        if (meta.attributes.get("http-equiv") or "").strip().lower() == "default-style":
            preferred = meta.attributes.get("content") or None
            break
    for node in tree.css("style, link"):
        attrs = node.attributes
        title = attrs.get("title") or None
        alternate = node.tag == "link" and "alternate" in (attrs.get("rel") or "").lower().split()
        if title is not None:
            if preferred is None and not alternate:
                preferred = title
            if title != preferred:
                continue
        elif alternate:
            continue
        media = attrs.get("media")
        if media and not media_applies(tinycss2.parse_component_value_list(media)):
            continue
        kind = attrs.get("type")
        if node.tag == "style":
            if not kind or kind.lower() == "text/css":
                sheets.append(node.text(deep=True))
            continue
        if kind and _mime(kind) != "text/css" or "disabled" in attrs:
            continue
        if "stylesheet" in (attrs.get("rel") or "").lower().split():
            text = decode_data_url(attrs.get("href") or "", css_only=not quirks)
            if text:
                sheets.append(text)
    return sheets


# ---------------------------------------------------------------- pruning large sheets


_COMMENT = re.compile(r"/\*.*?(?:\*/|\Z)", re.S)
_INNER = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")


def _selector_may_match(prelude: str, present: frozenset[str]) -> bool:
    """False only when every selector of the list needs a class or id that no element of the page has.

    Each compound of a complex selector must match some element, so any ``.name`` / ``#name``
    outside parentheses and brackets is required (names inside ``:not()``, ``:is()``, ``[...]``
    are not counted, which can only keep more rules). Escapes are decoded (``.hover\\:bg``);
    an escaped bracket, comma or space, an at-rule or a very long prelude always may match.
    """
    if "/*" in prelude:
        prelude = _COMMENT.sub(" ", prelude)
    escaped = "\\" in prelude
    if prelude.lstrip().startswith("@") or len(prelude) > 2_000 or (escaped and _RISKY_ESCAPE.search(prelude)):
        return True
    outside = _blank_brackets(prelude)
    if outside is None:
        return True
    for sel in outside.lower().split(","):
        names = _NAMES.findall(sel)
        if not names or present.issuperset([_unescape(n).lower() for n in names] if escaped else names):
            return True
    return False


def prune(css: str, present: frozenset[str], matches: Callable[[str], bool | None] | None = None) -> str:
    """Drop leaf rules that cannot matter before tinycss2 parses a large sheet (one linear scan).

    A leaf rule (a block without nested blocks) goes when its block declares no visibility-related
    property (see :data:`RELEVANT`; custom properties and escapes count) or when its selector
    cannot match (see :func:`_selector_may_match`, then ``matches``: lexbor run on the selector
    list, ``False`` when it parses and matches no element; a list loses the selectors that cannot,
    see :func:`_unmatchable_selectors`); at-rule blocks that style nothing (``@font-face`` with
    inline fonts, ``@keyframes``, ``@page``...) go whole. Strings, comments and escapes are skipped
    as tokens, so a brace inside them never cuts a rule; anything unclosed is left to tinycss2.
    """
    if len(css) <= _PRUNE_ABOVE_CHARS:
        return css
    if "{" not in css:
        return _leading_statements(css)
    cut: list[tuple[int, int]] = []
    stack: list[list[int]] = []  # [prelude start, block open, nested blocks, nested blocks cut]
    start = 0
    for m in _BRACES.finditer(css):
        ch = m.group()
        if ch == "{":
            if stack:
                stack[-1][2] += 1
            pos = m.start()
            stack.append([start if css.rfind(";", start, pos) < 0 else _after_last_semicolon(css, start, pos), m.end(), 0, 0])
            start = m.end()
        elif ch == "}":
            if stack:
                pre, body, nested, nested_cut = stack.pop()
                prelude = css[pre : body - 1]
                if "/*" in prelude:
                    prelude = _COMMENT.sub(" ", prelude)
                prelude = prelude.strip()
                drop = False
                selector_cuts: list[tuple[int, int]] = []
                if prelude[:1] == "@":
                    # an at-rule that styles nothing, or a conditional/layer block emptied by the pruning
                    drop = not prelude.lower().startswith(_STYLING_AT_RULES) or bool(nested and nested == nested_cut)
                    if drop:
                        while cut and cut[-1][0] >= pre:  # the whole at-rule goes, inner cuts included
                            cut.pop()
                elif not nested:
                    block = css[body : m.start()]
                    frame = bool(stack) and _KEYFRAMES.match(css, stack[-1][0], stack[-1][1])  # from {...}, 50% {...}
                    drop = not _RELEVANT_TEXT.search(block)
                    if not drop and not frame:
                        unmatched = _unmatchable_selectors(css[pre : body - 1], present)
                        if unmatched is None:
                            drop = not _selector_may_match(prelude, present)
                        elif unmatched:
                            if unmatched[0] == (0, body - 1 - pre):
                                drop = True
                            elif _rejected_plain(css[pre : body - 1],
                                                 nested=any(css[a[0] : a[1]].lstrip()[:1] != "@" for a in stack)):
                                drop = True  # applies nowhere; cutting its bad selector would make the rest apply
                            else:
                                selector_cuts = [(pre + a, pre + b) for a, b in unmatched]
                                prelude = drop_spans(css[pre : body - 1], unmatched).strip()
                        drop = drop or (matches is not None and matches(prelude) is False)
                if drop:
                    cut.append((pre, m.end()))
                    if stack:
                        stack[-1][3] += 1
                elif not nested and prelude[:1] != "@":
                    cut.extend(selector_cuts)
                    cut.extend(_irrelevant_declarations(css, body, m.start()))
            start = m.end()
    return drop_spans(css, cut)


_KEYFRAMES = re.compile(r"\s*@(?:-webkit-)?keyframes\b", re.I)
_COMMA = re.compile(",")


def _blank(m: re.Match[str]) -> str:
    return " " * len(m.group())


def _blank_brackets(text: str, keep_length: bool = False) -> str | None:
    """``text`` with what parentheses and brackets hold blanked out (one space each, or as many spaces as
    characters with ``keep_length``, so positions still point into ``text``); ``None`` when they nest
    deeper than 8."""
    for _ in range(8):
        if "(" not in text and "[" not in text:
            return text
        text = _INNER.sub(_blank if keep_length else " ", text)
    return None


def _unmatchable_selectors(prelude: str, present: frozenset[str]) -> list[tuple[int, int]] | None:
    """Spans of ``prelude`` (a leaf rule's selector list, as written) to cut: each selector that needs a class
    or id no element has (the rule of :func:`_selector_may_match`, applied per selector), with its comma, so
    tinycss2 never tokenizes it and the cascade never matches it; ``[(0, len(prelude))]`` when no selector
    may match. ``None`` when the list is not read here: quotes, comments, escapes, non-ASCII characters,
    brackets nested deeper than 8 or over 2,000 characters (the whole list is then judged by
    :func:`_selector_may_match`).

    Cutting a selector from a list changes nothing else: the cascade reads every selector of a list on its
    own (its own specificity and order, an invalid one skipped) and matches each against the page.
    """
    if len(prelude) > 2_000 or not prelude.isascii() or _NOT_PLAIN.search(prelude):
        return None
    masked = _blank_brackets(prelude, keep_length=True)  # so a comma left is one between selectors
    if masked is None:
        return None
    masked = masked.lower()
    if "," not in masked:
        names = _NAMES.findall(masked)
        return [(0, len(prelude))] if names and not present.issuperset(names) else []
    bounds = [-1, *(m.start() for m in _COMMA.finditer(masked)), len(masked)]
    fails = []
    for i in range(len(bounds) - 1):
        names = _NAMES.findall(masked, bounds[i] + 1, bounds[i + 1])
        fails.append(bool(names) and not present.issuperset(names))
    if not any(fails):
        return []
    if all(fails):
        return [(0, len(prelude))]
    last = max(i for i, fail in enumerate(fails) if not fail)
    cuts = [(bounds[i] + 1, bounds[i + 1] + 1) for i in range(last) if fails[i]]
    if last < len(fails) - 1:
        cuts.append((bounds[last + 1], len(prelude)))
    return cuts


def _after_last_semicolon(css: str, start: int, end: int) -> int:
    """Where a rule's prelude starts: just after the last ``;`` token in ``css[start:end]`` (the span
    from the previous brace to this ``{``), or ``start``. A ``;`` inside a string, comment or escape
    is not a token, so a span holding any of those is rescanned with :data:`_SCAN`."""
    semi = css.rfind(";", start, end)
    if semi < 0:
        return start
    if not _NOT_PLAIN.search(css, start, end):
        return semi + 1
    for m in _SCAN.finditer(css, start, end):
        if m.group() == ";":
            start = m.end()
    return start


_PLAIN_BLOCK = re.compile(r"[\"'\\{}]|/\*|url\(", re.I)  # quotes, comments, escapes, braces, url(): split by tinycss2 only
_CSS_WS = " \t\n\r\f"


def _irrelevant_declarations(css: str, start: int, end: int) -> list[tuple[int, int]]:
    """Spans of the declarations in ``css[start:end]`` (a kept rule's block) whose property is not
    in :data:`RELEVANT` (custom properties stay), so tinycss2 never tokenizes them.

    Only plain blocks are split (no quotes, comments, escapes, nested braces or ``url()``), at the
    ``;`` outside parentheses and brackets, which is exactly where tinycss2 ends a declaration;
    a declaration goes only when its name, ASCII-lowercased, is an ASCII word that is not
    relevant, so anything unusual is left to tinycss2 (which drops irrelevant names the same way).
    """
    if _PLAIN_BLOCK.search(css, start, end):
        return []
    out: list[tuple[int, int]] = []
    depth = 0
    seg = start
    pos = start
    while True:
        semi = css.find(";", pos, end)
        stop = end if semi < 0 else semi
        piece = css[pos:stop]
        if "(" in piece or ")" in piece or "[" in piece or "]" in piece:
            for ch in piece:
                if ch in "([":
                    depth += 1
                elif ch in ")]":
                    depth -= 1
                    if depth < 0:
                        return []
        pos = stop + 1
        if depth == 0 or semi < 0:
            if depth != 0:
                return []
            colon = css.find(":", seg, stop)
            if colon >= 0:
                name = css[seg:colon].strip(_CSS_WS)
                if name.isascii() and not name.startswith("--") and name.lower() not in RELEVANT:
                    out.append((seg, min(pos, end)))
            seg = pos
        if semi < 0:
            return out


_LEADING_JUNK = re.compile(r"(?:\s|/\*.*?\*/)*", re.S)


def leading_imports(css: str) -> int:
    """How many ``@import`` rules a sheet's top level starts with: the ones a browser loads. An ``@import``
    after a style rule, a block at-rule or ``@namespace`` is invalid; ``@charset``, ``@layer`` statements and
    at-rule statements the browser drops as invalid may come before. Reads the text before the first
    top-level ``{`` only, so it stays cheap on a large sheet."""
    end = len(css)
    for m in _BRACES.finditer(css):
        if m.group() == "{":
            end = m.start()
            break
    prefix = css[:end]
    if "@" not in prefix:
        return 0
    n = 0
    for node in tinycss2.parse_stylesheet(prefix, skip_comments=True, skip_whitespace=True):
        if node.type != "at-rule":
            break  # a style rule's prelude (its block follows): later imports are invalid
        kw = node.lower_at_keyword
        if kw == "import":
            n += 1
        elif kw == "namespace":
            break
        # other at-rules here have no block: @charset, @layer a, b; an invalid statement (@media print;) the
        # browser drops, or the prelude of the first block, which ends the prefix
    return n


def _foreign_default_namespace(prelude: list[Any]) -> bool:
    """``@namespace url(...)``, with no prefix, naming a namespace other than HTML's."""
    toks = _strip(prelude)
    if len(toks) != 1:
        return False  # a prefixed namespace (``@namespace svg url(...)``) changes only selectors that name it
    url = _url(toks[0])
    return url is not None and url != "http://www.w3.org/1999/xhtml"


def _url(t: Any) -> str | None:
    """The URL a token holds: ``url(x)``, ``url("x")`` or a string."""
    if t.type in ("url", "string"):
        return str(t.value)
    if t.type == "function" and t.lower_name == "url":
        args = _strip(t.arguments)
        return str(args[0].value) if args and args[0].type == "string" else None
    return None


def _mime(text: str) -> str:
    """A MIME type's essence, lower-cased: ``" Text/CSS; charset=utf-8"`` is ``text/css``."""
    return text.split(";")[0].strip(" \t\n\r\f").lower()


_NO_RULES = frozenset(("keyframes", "-webkit-keyframes", "property", "font-face", "page", "counter-style"))
"""At-rules with a block that holds no style rules (their names need no selector)."""


def _leading_statements(css: str) -> str:
    """A sheet without ``{`` holds no rules: only the at-statements (``@import``, ``@layer a, b;``) before
    the first other text count, since that text starts a rule prelude that runs to the end."""
    end = 0
    for m in _SCAN.finditer(css):
        if m.group() != ";":
            continue
        junk = _LEADING_JUNK.match(css, end)
        if not css[junk.end() if junk else end : m.end()].startswith("@"):
            break
        end = m.end()
    return css[:end]


# ---------------------------------------------------------------- conditions: @media, @supports


def _strip(tokens: list[Any]) -> list[Any]:
    return [t for t in tokens if t.type not in ("whitespace", "comment")]


def _split_commas(tokens: list[Any]) -> list[list[Any]]:
    out: list[list[Any]] = [[]]
    for t in tokens:
        if t.type == "literal" and t.value == ",":
            out.append([])
        else:
            out[-1].append(t)
    return out


def _px(token: Any, font_px: float = 16.0) -> float | None:
    if token.type == "number" and token.value == 0:
        return 0.0
    if token.type != "dimension":
        return None
    return to_px(token.value, token.lower_unit, font_px)


_ABS_UNITS = {"px": 1.0, "pt": 4 / 3, "pc": 16.0, "in": 96.0, "cm": 96 / 2.54, "mm": 96 / 25.4, "q": 96 / 101.6}


def to_px(value: float, unit: str, font_px: float, root_px: float = 16.0,
          viewport: tuple[float, float] = VIEWPORT) -> float | None:
    """A length in CSS px (font-relative units against ``font_px`` and ``root_px``, viewport units against
    ``viewport``, by default :data:`VIEWPORT`); ``None`` for a unit that is not a length.

    Font metrics are taken as a typical sans-serif's: x-height and ``ch`` half the size, cap height 0.7, a
    normal line 1.2 (``lh``; the element's own ``line-height`` is not read). Container query units are read
    against the viewport, the largest container they can have (a size from them is never taken smaller
    than it is)."""
    if unit in _ABS_UNITS:
        return value * _ABS_UNITS[unit]
    per_em = _PER_EM.get(unit)
    if per_em is not None:
        return value * font_px * per_em
    per_root = _PER_ROOT_EM.get(unit)
    if per_root is not None:
        return value * root_px * per_root
    axis = _VIEWPORT_AXIS.get(unit)
    if axis is not None:
        side = viewport[0] if axis == "w" else viewport[1] if axis == "h" else min(viewport) if axis == "min" else max(viewport)
        return value * side / 100
    return None


_PER_EM = {"em": 1.0, "ex": 0.5, "ch": 0.5, "cap": 0.7, "ic": 1.0, "lh": 1.2}
_PER_ROOT_EM = {"rem": 1.0, "rex": 0.5, "rch": 0.5, "rcap": 0.7, "ric": 1.0, "rlh": 1.2}
_VIEWPORT_AXIS = {
    **{u: "w" for u in ("vw", "vi", "svw", "lvw", "dvw", "svi", "lvi", "dvi", "cqw", "cqi")},
    **{u: "h" for u in ("vh", "vb", "svh", "lvh", "dvh", "svb", "lvb", "dvb", "cqh", "cqb")},
    **{u: "min" for u in ("vmin", "svmin", "lvmin", "dvmin", "cqmin")},
    **{u: "max" for u in ("vmax", "svmax", "lvmax", "dvmax", "cqmax")},
}


# Media features as headless Chromium reports them on the oracle's 1280x800 screen (``matchMedia`` measured there;
# ``scripting`` as a reader's browser has it, and the oracle's: enabled, though extraction runs no script and
# ``<noscript>`` stays hidden). A feature Chromium does not know (``inverted-colors``,
# ``prefers-reduced-data``, a made-up name) is unknown, and a query that needs it does not match.
_MQ_DISCRETE = {
    "orientation": "landscape", "prefers-color-scheme": "light", "prefers-reduced-motion": "no-preference",
    "hover": "hover", "any-hover": "hover", "pointer": "fine", "any-pointer": "fine", "scripting": "enabled",
    "prefers-contrast": "no-preference", "forced-colors": "none", "display-mode": "browser", "color-gamut": "srgb",
    "dynamic-range": "standard", "update": "fast", "overflow-block": "scroll", "overflow-inline": "scroll",
    "prefers-reduced-transparency": "no-preference", "device-posture": "continuous", "scan": "",
}
"""Discrete features and their value (``""``: known, but no value matches on a screen)."""
_MQ_FALSY = frozenset(("", "none", "no-preference"))
"""Values that make a discrete feature false in a boolean context: ``(hover)`` matches, ``(forced-colors)`` does not."""
_MQ_NUMERIC = {
    "width": float(VIEWPORT[0]), "height": float(VIEWPORT[1]), "device-width": float(VIEWPORT[0]),
    "device-height": float(VIEWPORT[1]), "aspect-ratio": VIEWPORT[0] / VIEWPORT[1],
    "device-aspect-ratio": VIEWPORT[0] / VIEWPORT[1], "resolution": 1.0, "color": 8.0, "color-index": 0.0,
    "monochrome": 0.0, "grid": 0.0, "-webkit-device-pixel-ratio": 1.0, "-webkit-transform-3d": 1.0,
    "horizontal-viewport-segments": 1.0, "vertical-viewport-segments": 1.0,
}
"""Numeric features (px, a width/height ratio, dppx, bits per colour...)."""
_MQ_NO_PREFIX = frozenset(("grid", "-webkit-transform-3d", "-webkit-device-pixel-ratio", "horizontal-viewport-segments",
                           "vertical-viewport-segments"))
"""Numeric features that take no ``min-``/``max-`` prefix (``-webkit-min-device-pixel-ratio`` is written apart)."""
_RESOLUTION_UNITS = {"dppx": 1.0, "x": 1.0, "dpi": 1 / 96, "dpcm": 2.54 / 96}
_UNKNOWN = "unknown"
"""A condition on a feature Chromium does not know: false, and ``not`` of it is false too (Media Queries 4)."""
_CMP: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "=": operator.eq}
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "="}


def _feature_number(name: str, toks: list[Any]) -> float | None:
    """A numeric feature's value written in ``toks`` in the feature's own unit, or ``None``."""
    if name in ("aspect-ratio", "device-aspect-ratio"):
        nums = [t for t in toks if t.type != "literal"]
        if (len(toks) == 3 and toks[1].type == "literal" and toks[1].value == "/"
                and all(t.type == "number" for t in nums)):
            return float(nums[0].value) / float(nums[1].value) if nums[1].value else None
        return float(toks[0].value) if len(toks) == 1 and toks[0].type == "number" else None
    if len(toks) != 1:
        return None
    t = toks[0]
    if name == "resolution":
        if t.type == "dimension" and t.lower_unit in _RESOLUTION_UNITS:
            return float(t.value) * _RESOLUTION_UNITS[t.lower_unit]
        return None
    if name in ("width", "height", "device-width", "device-height"):
        return _px(t)
    return float(t.value) if t.type == "number" else None


def _media_feature(toks: list[Any]) -> bool | str | None:
    """One feature in parentheses: ``True``/``False`` as Chromium decides it, :data:`_UNKNOWN` for a feature it
    does not know, ``None`` when the syntax is not read here (then the rule is applied, as before)."""
    if len(toks) == 1 and toks[0].type == "ident":  # boolean context: (hover), (color), (grid)
        name = toks[0].lower_value
        if name in _MQ_DISCRETE:
            return _MQ_DISCRETE[name] not in _MQ_FALSY
        return _MQ_NUMERIC[name] != 0 if name in _MQ_NUMERIC else _UNKNOWN
    if len(toks) >= 3 and toks[0].type == "ident" and toks[1].type == "literal" and toks[1].value == ":":
        name, value = toks[0].lower_value, toks[2:]
        if name in _MQ_DISCRETE:
            return len(value) == 1 and value[0].type == "ident" and value[0].lower_value == _MQ_DISCRETE[name]
        cmp: Callable[[float, float], bool] = operator.eq
        if name.startswith("-webkit-m") and name.endswith("-device-pixel-ratio"):
            cmp, name = (operator.ge if name.startswith("-webkit-min") else operator.le), "-webkit-device-pixel-ratio"
        elif name[:4] in ("min-", "max-") and name[4:] in _MQ_NUMERIC and name[4:] not in _MQ_NO_PREFIX:
            cmp, name = (operator.ge if name[:4] == "min-" else operator.le), name[4:]
        if name not in _MQ_NUMERIC:
            return _UNKNOWN
        n = _feature_number(name, value)
        return None if n is None else bool(cmp(_MQ_NUMERIC[name], n))
    # range syntax: (width >= 600px), (400px < width <= 1400px), (aspect-ratio > 16/9)
    parts: list[list[Any]] = [[]]
    ops: list[str] = []
    for t in toks:
        if t.type == "literal" and t.value in "<>=":
            if parts[-1]:
                parts.append([])
                ops.append(t.value)
            elif ops and ops[-1] in "<>" and t.value == "=":
                ops[-1] += "="
            else:
                return None
        else:
            parts[-1].append(t)
    if len(parts) not in (2, 3) or any(op not in _CMP for op in ops):
        return None
    names = [i for i, part in enumerate(parts) if len(part) == 1 and part[0].type == "ident"]
    if len(names) != 1 or (len(parts) == 3 and names != [1]):
        return None
    name = parts[names[0]][0].lower_value
    if name not in _MQ_NUMERIC:
        return _UNKNOWN if name not in _MQ_DISCRETE else None
    actual = _MQ_NUMERIC[name]
    result = True
    for i, op in enumerate(ops):
        left, right = parts[i], parts[i + 1]
        if names[0] == i:  # name op value
            n = _feature_number(name, right)
            if n is None:
                return None
            result = result and _CMP[op](actual, n)
        else:  # value op name
            n = _feature_number(name, left)
            if n is None:
                return None
            result = result and _CMP[_FLIP[op]](actual, n)
    return result


def _media_condition(toks: list[Any], depth: int = 0) -> bool | str | None:
    """A media condition (``not``, ``and``, ``or`` over parenthesised features and conditions), three-valued as
    in Media Queries 4 (see :func:`_media_feature`)."""
    toks = [t for t in toks if t.type not in ("whitespace", "comment")]
    if depth > 16 or not toks:
        return None
    if toks[0].type == "ident" and toks[0].lower_value == "not":
        inner = _media_condition(toks[1:], depth + 1)
        return inner if inner is None or inner == _UNKNOWN else not inner
    if all(t.type == "() block" for t in toks[0::2]) and all(
            t.type == "ident" and t.lower_value in ("and", "or") for t in toks[1::2]) and len(toks) % 2 == 1:
        words = {t.lower_value for t in toks[1::2]}
        if len(words) > 1:
            return None  # "and" and "or" mixed without parentheses: invalid, left as before
        values = [_in_parens(t, depth + 1) for t in toks[0::2]]
        if words == {"or"}:
            if True in values:
                return True
            return None if None in values else _UNKNOWN if _UNKNOWN in values else False
        if False in values:
            return False
        return None if None in values else _UNKNOWN if _UNKNOWN in values else True
    return None


def _in_parens(block: Any, depth: int) -> bool | str | None:
    inner = [t for t in block.content if t.type not in ("whitespace", "comment")]
    if inner and (inner[0].type == "() block" or (inner[0].type == "ident" and inner[0].lower_value == "not")):
        return _media_condition(inner, depth)
    return _media_feature(inner)


def media_applies(tokens: list[Any]) -> bool:
    """Whether a media query list matches headless Chromium's 1280x800 screen (``print``, ``speech``... never do).

    Features are read as Chromium reports them (:data:`_MQ_DISCRETE`, :data:`_MQ_NUMERIC`); one it does not
    know makes its query false. A condition whose syntax is not read here still matches, as before."""
    queries = _split_commas(_strip(tokens))
    if queries == [[]]:
        return True
    for q in queries:
        toks = [t for t in q if t.type not in ("whitespace", "comment")]
        negate = False
        if (len(toks) > 1 and toks[0].type == "ident" and toks[0].lower_value in ("not", "only")
                and toks[1].type == "ident"):
            negate = toks[0].lower_value == "not"
            toks = toks[1:]
        if toks and toks[0].type == "ident" and toks[0].lower_value not in ("not",):
            ok: bool | str | None = toks[0].lower_value in ("screen", "all")
            rest = toks[1:]
            if rest:
                if not (rest[0].type == "ident" and rest[0].lower_value == "and"):
                    continue  # not a valid query: it matches nothing
                cond = _media_condition(rest[1:])
                ok = (ok and cond) if cond is not None else ok
        else:
            ok = _media_condition(toks)
            if ok is None:
                ok = True
        if ok == _UNKNOWN:
            ok = False
        if bool(ok) != negate:
            return True
    return False


@functools.cache
def _css_properties() -> frozenset[str]:
    """The property names Chromium supports (``css_properties.txt``, measured by ``scripts/build_css_properties.py``)."""
    text = (Path(__file__).parent / "css_properties.txt").read_text(encoding="utf-8")
    return frozenset(line for line in text.split() if line and not line.startswith("#"))


def _declaration_supported(inner: list[Any]) -> bool:
    """``@supports (name: value)``: false for a property name Chromium does not know (custom properties always
    parse); true otherwise, whatever the value (values are not checked, so ``(display: flux)`` counts as
    supported)."""
    if len(inner) >= 2 and inner[0].type == "ident" and inner[1].type == "literal" and inner[1].value == ":":
        name = inner[0].lower_value
        return name.startswith("--") or name in _css_properties()
    return True


def supports_applies(tokens: list[Any]) -> bool:
    """``@supports``: a modern browser supports every declaration of a property it knows and ``selector()``;
    ``not`` negates, ``or`` needs one branch."""
    toks = _strip(tokens)
    result: bool | None = None
    op = "and"
    negate = False
    for t in toks:
        if t.type == "ident" and t.lower_value in ("not", "and", "or"):
            if t.lower_value == "not":
                negate = not negate
            else:
                op = t.lower_value
            continue
        if t.type == "() block":
            inner = _strip(t.content)
            nested = any(x.type == "ident" and x.lower_value in ("not", "and", "or") for x in inner) or (
                inner and inner[0].type == "() block"
            )
            value = supports_applies(t.content) if nested else _declaration_supported(inner)
        elif t.type == "function":
            value = True
        else:
            continue
        value = value != negate
        negate = False
        result = value if result is None else (result and value if op == "and" else result or value)
    return True if result is None else result


# ---------------------------------------------------------------- rules and specificity


def specificity(tokens: list[Any], depth: int = 0) -> tuple[int, int, int] | None:
    """``(ids, classes, types)`` of one complex selector; ``None`` for a pseudo-element selector
    (it styles generated content, never the element's own text)."""
    a = b = c = 0
    prev = None
    for t in tokens:
        kind = t.type
        if kind == "hash":
            a += 1
        elif kind == "[] block":
            b += 1
        elif kind == "ident":
            if prev is not None and prev.type == "literal" and prev.value in (".", ":"):
                if prev.value == "." or prev.value == ":":
                    if prev.value == ":" and t.lower_value in ("before", "after", "first-line", "first-letter"):
                        return None
                    b += 1
            else:
                c += 1
        elif kind == "function" and prev is not None and prev.type == "literal" and prev.value == ":":
            name = t.lower_name
            if name in ("is", "not", "has", "matches", "-webkit-any", "-moz-any") and depth < 32:
                specs = [
                    s for s in (specificity(_strip(p), depth + 1) for p in _split_commas(t.arguments)) if s is not None
                ]
                if specs:
                    best = max(specs)
                    a, b, c = a + best[0], b + best[1], c + best[2]
            elif name != "where":
                b += 1
        elif kind == "literal" and t.value == ":" and prev is not None and prev.type == "literal" and prev.value == ":":
            return None
        prev = t
    return a, b, c


class _LayerOrder:
    def __init__(self) -> None:
        self.names: dict[str, int] = {}
        self.anonymous = 0

    def index(self, name: str) -> int:
        if name not in self.names:
            self.names[name] = len(self.names)
        return self.names[name]

    def fresh(self) -> str:
        self.anonymous += 1
        return f"\x00{self.anonymous}"


def _layer_names(prelude: list[Any]) -> list[str]:
    names: list[str] = []
    for part in _split_commas(_strip(prelude)):
        name = "".join(t.value for t in part if t.type in ("ident", "literal"))
        if name:
            names.append(name)
    return names


def _first_line_base(part: list[Any]) -> list[Any] | None:
    """The originating element's selector of a ``::first-line`` (or CSS2 ``:first-line``) selector
    ``part`` (tokens, whitespace included), else ``None``; ``*`` where the pseudo-element follows a
    combinator or stands alone (``div ::first-line``)."""
    toks = [t for t in part if t.type != "comment"]
    while toks and toks[-1].type == "whitespace":
        toks.pop()
    if len(toks) < 2 or toks[-1].type != "ident" or toks[-1].lower_value != "first-line":
        return None
    if toks[-2].type != "literal" or toks[-2].value != ":":
        return None
    base = toks[:-3] if len(toks) > 2 and toks[-3].type == "literal" and toks[-3].value == ":" else toks[:-2]
    last = next((t for t in reversed(base) if t.type != "whitespace"), None)
    if not base or base[-1].type == "whitespace" or (last is not None and last.type == "literal" and last.value in (">", "+", "~")):
        base = [*base, tinycss2.ast.LiteralToken(0, 0, "*")]
    return base


def _selector_texts(prelude: list[Any], parent: str | None, host: bool = False,
                    undefined: Callable[[], str] | None = None) -> list[tuple[str, tuple[int, int, int], bool, bool]]:
    """The complex selectors of a rule, nested ones rewritten with ``:is(parent)``: ``(text,
    specificity, first_line, judged)``, where a ``::first-line`` selector is its originating element's, and
    ``judged`` says that lexbor refuses the selector only where Chromium does too (a top-level selector as
    written, without ``&``, whose pseudo-classes lexbor knows: :func:`_chromium_pseudos`)."""
    out: list[tuple[str, tuple[int, int, int], bool, bool]] = []
    parts = _split_commas(prelude)
    for part in parts:
        toks = _strip(part)
        if not toks:
            continue
        spec = specificity(toks)
        first_line = False
        if spec is None:
            base = _first_line_base(part)
            if base is None or (spec := specificity(_strip(base))) is None:
                continue
            part, first_line, spec = base, True, (spec[0], spec[1], spec[2] + 1)
        text = tinycss2.serialize(part)
        judged = len(parts) > 1 and parent is None and not first_line and "&" not in text
        if judged and ":" in text:
            forms: set[str] = set()
            judged = _pseudo_forms(part, forms) and forms <= _chromium_pseudos()[2]
        if _REWRITTEN.search(text):
            text = _serialize_selector(part, parent, host, undefined)
            judged = False
        if "-webkit-any(" in text.lower():
            text = _WEBKIT_ANY.sub(":is(", text)  # Chromium's old name for :is(), which lexbor does not know
            judged = False
        text = _NON_ASCII.sub(_escape_char, text.strip())
        if parent is not None:
            text, spec = _nest(text, spec, parent)
        out.append((lexbor_query(text), spec, first_line, judged))
    return out


_BARE_IS = re.compile(r"(^|[\s>+~(,])(:(?:is|where|has|matches)\()", re.I)


def lexbor_query(selector: str) -> str:
    """``selector`` as lexbor matches it the way a browser does: a compound that is only ``:is()``, ``:where()``
    or ``:has()`` gets a ``*`` before it (the same selector), since lexbor reads ``:is(.a) .x`` as if ``.x``
    had to be a child of ``.a``, not any descendant (and ``*:is(.a) .x`` right)."""
    return _BARE_IS.sub(r"\1*\2", selector) if ":" in selector else selector


def _nest(text: str, spec: tuple[int, int, int], parent: str) -> tuple[str, tuple[int, int, int]]:
    """A nested rule's selector ``text`` under its ``parent`` selector list (``&``, or the start, read as
    ``:is(parent)``), and its specificity: the parent's highest added (CSS Nesting)."""
    parts = _blank_brackets(parent, keep_length=True)
    specs = [s for s in (specificity(_strip(tinycss2.parse_component_value_list(p))) for p in _split_text(parent, parts))
             if s is not None] if parts is not None else []
    if specs:
        best = max(specs)
        spec = (spec[0] + best[0], spec[1] + best[1], spec[2] + best[2])
    return (text.replace("&", f":is({parent})") if "&" in text else f":is({parent}) {text}"), spec


def _split_text(text: str, masked: str) -> list[str]:
    """``text`` cut at the commas of ``masked`` (the same text with brackets blanked: its top-level commas)."""
    out, start = [], 0
    for m in _COMMA.finditer(masked):
        out.append(text[start : m.start()])
        start = m.end()
    out.append(text[start:])
    return out


@functools.cache
def _chromium_pseudos() -> tuple[frozenset[str], bool, frozenset[str]]:
    """What ``css_pseudos.txt`` (measured by ``scripts/build_css_pseudos.py``) says Chromium accepts: the pseudo
    forms (``:hover``, ``::before``, ``:not(`` for a functional one), whether it takes any ``::-webkit-``
    pseudo-element, and the forms lexbor parses alike (probed here on the file's accepted form), whose selectors'
    syntax lexbor can judge for Chromium."""
    text = (Path(__file__).parent / "css_pseudos.txt").read_text(encoding="utf-8")
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]
    webkit = "::-webkit-*" in lines
    known: set[str] = set()
    lexbor_too: set[str] = set()
    for line in lines:
        if line == "::-webkit-*":
            continue
        form = line.split("(")[0] + ("(" if "(" in line else "")
        known.add(form)
        # :is() and :where() forgive (lexbor refuses what Chromium forgives); a form lexbor refuses says nothing
        if form not in (":is(", ":where(") and _lexbor_parses(".a" + line):
            lexbor_too.add(form)
    return frozenset(known), webkit, frozenset(lexbor_too)


def _lenient(token: Any) -> bool:
    """Whether lexbor takes a selector token that Chromium refuses: an ID that is not an identifier (``#1a``,
    ``#-1``) or an attribute selector with the ``s`` flag (``[a=b s]``; Chromium knows ``i`` only)."""
    if token.type == "hash":
        return not token.is_identifier
    if token.type == "[] block":
        toks = [t for t in token.content if t.type not in ("whitespace", "comment")]
        return (len(toks) >= 4 and toks[-1].type == "ident" and toks[-1].lower_value == "s"
                and any(t.type == "literal" and t.value.endswith("=") for t in toks))
    return False


def _pseudo_forms(tokens: list[Any], out: set[str], depth: int = 0) -> bool:
    """Add the pseudo-class and pseudo-element forms of a selector's ``tokens`` (``:hover``, ``::before``,
    ``:not(``) to ``out``, those inside the arguments of an unforgiving function (``:not()``, ``:has()``...) too;
    ``False`` when a colon starts no form (``a:``, ``a: hover``, ``a:::b``), a token is one Chromium refuses and
    lexbor takes (:func:`_lenient`), or nesting passes 16."""
    i, n = 0, len(tokens)
    while i < n:
        t = tokens[i]
        if _lenient(t):
            return False
        if t.type == "literal" and t.value == ":":
            colons = ":"
            if i + 1 < n and tokens[i + 1].type == "literal" and tokens[i + 1].value == ":":
                colons, i = "::", i + 1
            nxt = tokens[i + 1] if i + 1 < n else None
            if nxt is None or nxt.type not in ("ident", "function"):
                return False
            if nxt.type == "ident":
                out.add(colons + nxt.lower_value)
            else:
                out.add(f"{colons}{nxt.lower_name}(")
                if nxt.lower_name not in ("is", "where") and not (
                        depth < 16 and _pseudo_forms(nxt.arguments, out, depth + 1)):
                    return False
            i += 2
            continue
        i += 1
    return True


def _lexbor_parses(selector: str) -> bool:
    """Whether lexbor parses ``selector`` (on a one-element document, so the match costs nothing)."""
    from selectolax.lexbor import LexborHTMLParser

    probe = getattr(_SYNTAX, "probe", None)
    if probe is None:
        probe = _SYNTAX.probe = LexborHTMLParser("<p>")
    try:
        probe.css_first(selector)
    except Exception:  # noqa: BLE001 - any refusal is the answer
        return False
    return True


def _rejected_plain(prelude: str, nested: bool) -> bool:
    """:func:`rejected_selector_list` with ``syntax`` for a selector list as written in a sheet, when it holds no
    quotes, comments, escapes or non-ASCII characters (as the lists pruning cuts selectors from): read on the
    text, without tokenizing it; ``:is()``, ``:where()`` and deep brackets go to the token reading."""
    low = prelude.lower()
    masked = _blank_brackets(prelude, keep_length=True)
    if masked is None or ":is(" in low or ":where(" in low:
        return rejected_selector_list(tinycss2.parse_component_value_list(prelude), nested)
    parts = _split_text(prelude, masked)
    if any(not part.strip() for part in parts) or _LENIENT_TEXT.search(prelude):
        return True
    known, webkit, lexbor_too = _chromium_pseudos()
    forms: set[str] = set()
    colons = 0
    for m in _PSEUDO.finditer(low):
        form = m.group(1) + m.group(2) + ("(" if m.group(3) else "")
        colons += len(m.group(1))
        if form not in known and not (webkit and form.startswith("::-webkit-") and not m.group(3)):
            return True
        forms.add(form)
    if colons != low.count(":"):
        return True  # a colon that starts no pseudo-class (``a:``, ``a: hover``)
    if len(parts) > 1 and not nested and "&" not in prelude and forms <= lexbor_too:
        return not _lexbor_parses(prelude.strip())
    return False


_PSEUDO = re.compile(r"(::?)(-?[a-z_][\w-]*)(\()?")
_LENIENT_TEXT = re.compile(r"#-?\d|\[[^\]]*=[^\]]*\s[sS]\s*\]")  # :func:`_lenient` on plain text
_SYNTAX = threading.local()  # one probe document per thread (a lexbor parser is not thread-safe)


def rejected_selector_list(tokens: list[Any], nested: bool = False, syntax: bool = True) -> bool:
    """Whether Chromium drops a style rule with this selector list (a prelude's tokens) as invalid. One bad
    selector invalidates the whole list (Selectors 4, "invalid selector"), so ``.x:-moz-focusring, .x {display:
    block}`` applies to nothing: an empty selector, a colon that starts no pseudo-class, a token lexbor takes and
    Chromium refuses (``#1a``, ``[a=b s]``: :func:`_lenient`), a pseudo-class or
    pseudo-element Chromium does not know (:func:`_chromium_pseudos`; inside ``:is()`` and ``:where()``, which
    forgive, nothing counts), or, with ``syntax``, in a list of several outside nesting, a selector whose
    pseudo-classes lexbor knows too and which lexbor cannot parse (``.x >> .y``, ``:nth-child(foo)``, ``[1a]``).
    A selector that uses ``&`` or a form lexbor does not know is judged by its names alone, as is a nested rule's
    (``> .y`` is valid there). The cascade passes ``syntax=False``: it learns lexbor's verdict when it matches
    each selector (:attr:`_Rule.judged`), and pruning, which cuts selectors from a list, asks for it here."""
    marks = [t.value for t in tokens if t.type == "literal" and t.value in ",:&"]
    if any(_lenient(t) for t in tokens if t.type in ("hash", "[] block")):
        return True
    if not marks:
        return False  # one selector, no pseudo-class: lexbor judges it when the cascade matches it
    if ":" not in marks and not syntax:  # names are not in question: only an empty selector is
        empty = True
        for t in tokens:
            if t.type == "literal" and t.value == ",":
                if empty:
                    return True
                empty = True
            elif t.type not in ("whitespace", "comment"):
                empty = False
        return empty
    known, webkit, lexbor_too = _chromium_pseudos()
    parts = _split_commas(tokens) if "," in marks else [tokens]
    several = len(parts) > 1 and not nested
    judged: list[list[Any]] = []  # selectors whose refusal by lexbor is Chromium's
    for part in parts:
        toks = [t for t in part if t.type != "comment"]
        if all(t.type == "whitespace" for t in toks):
            return True
        forms: set[str] = set()
        if ":" in marks:
            if not _pseudo_forms(toks, forms):
                return True
            for form in forms:
                if form not in known and not (webkit and form.startswith("::-webkit-") and not form.endswith("(")):
                    return True
        if several and forms <= lexbor_too and not any(t.type == "literal" and t.value == "&" for t in toks):
            judged.append(part)
    if not several or not syntax or not judged:
        return False
    if len(judged) == len(parts):  # one parse of the whole list: lexbor refuses it when it refuses one of its selectors
        return not _lexbor_parses(_NON_ASCII.sub(_escape_char, tinycss2.serialize(tokens).strip()))
    return any(not _lexbor_parses(_NON_ASCII.sub(_escape_char, tinycss2.serialize(p).strip())) for p in judged)


_WEBKIT_ANY = re.compile(r":-webkit-any\(", re.I)
_REWRITTEN = re.compile(r":(?:lang|dir|scope|host|defined)\b", re.I)
"""Pseudo-classes :func:`_serialize_selector` rewrites (a selector without them is serialized as it is)."""


def _serialize_selector(tokens: list[Any], parent: str | None, host: bool = False,
                        undefined: Callable[[], str] | None = None) -> str:
    """A selector's text for lexbor, with the pseudo-classes its parser refuses (a refused selector matches
    nothing, so what it hides would leak) written as ones it reads: ``:lang(fr)`` as an element or
    ancestor with ``lang`` ``fr`` or ``fr-*``, ``:dir(rtl)`` likewise with ``dir``, ``:scope`` as the root
    (or the enclosing rule's selector). The nearest ``lang``/``dir`` is not singled out (an ``en`` box
    inside ``fr`` still matches ``:lang(fr)``): those rules can only hide more. In a shadow root's sheet
    (``host``), ``:host`` is the root of the parsed shadow tree, which stands for the host. ``:defined`` is
    every element but those ``undefined()`` lists (the page's custom elements: with no script run, none is
    defined; asked only when a selector says ``:defined``)."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        colon = t.type == "literal" and t.value == ":" and not (i and tokens[i - 1].type == "literal" and tokens[i - 1].value == ":")
        nxt = tokens[i + 1] if colon and i + 1 < len(tokens) else None
        if nxt is not None and nxt.type == "function" and nxt.lower_name in ("lang", "dir"):
            attr = nxt.lower_name
            values = [a.value for a in _strip(nxt.arguments) if a.type in ("ident", "string")]
            if attr == "dir" and [v.lower() for v in values] == ["ltr"]:
                out.append(':not(:is([dir="rtl" i], [dir="rtl" i] *))')
            elif values:
                alts = ", ".join(f'[{attr}|="{v}" i], [{attr}|="{v}" i] *' for v in values if '"' not in v and "\\" not in v)
                out.append(f":is({alts})" if alts else ":not(*)")
            else:
                out.append(":not(*)")
            i += 2
            continue
        if nxt is not None and nxt.type == "ident" and (nxt.lower_value == "scope" or (host and nxt.lower_value == "host")):
            out.append(f":is({parent})" if parent is not None and nxt.lower_value == "scope" else ":root")
            i += 2
            continue
        if nxt is not None and nxt.type == "ident" and nxt.lower_value == "defined":
            names = undefined() if undefined is not None else ""
            out.append(f":not({names})" if names else ":defined")
            i += 2
            continue
        if t.type == "function":
            out.append(f"{tinycss2.serialize([t])[: -len(tinycss2.serialize(t.arguments)) - 1]}"
                       f"{_serialize_selector(t.arguments, parent, host, undefined)})")
        else:
            out.append(tinycss2.serialize([t]))
        i += 1
    return "".join(out)


_NON_ASCII = re.compile(r"[^\x20-\x7e\t\n\f\r]")  # ASCII whitespace stays: a combinator


def _escape_char(m: re.Match[str]) -> str:
    """A CSS escape for one character: tinycss2 decodes ``\\a0`` into a raw no-break space, which
    lexbor's selector parser refuses (a refused selector matches nothing: its hidden text would
    leak), while the escape is read back as the same character, in identifiers and strings alike."""
    return f"\\{ord(m.group()):x} "


_CONTAINER_DECL = re.compile(r"container(?:-type|-name)?\s*:", re.I)
_MAX_CUSTOM_TAGS = 64
"""Custom element names :func:`_serialize_selector` lists for ``:defined`` (a page with more is read as before)."""
_CUSTOM_TAG = re.compile(r"<([a-zA-Z][a-zA-Z0-9._]*-[-a-zA-Z0-9._]*)")
"""A start tag of a custom element (a name with a hyphen)."""


class _Collector:
    """Flattens parsed sheets into rules with their layer, keeping only relevant declarations."""

    def __init__(self, host: bool = False, page: str = "", sheets: tuple[str, ...] = (), quirks: bool = False) -> None:
        self.host = host
        self.quirks = quirks
        self.page = page
        self.sheets = sheets
        self._undefined: str | None = None
        self._containers: bool | None = None
        self.rules: list[_Rule] = []
        self.layers = _LayerOrder()
        self.order = 0
        self.groups = 0  # selector lists of several selectors seen (their rules' _Rule.group)
        self.initial: dict[str, list[Any]] = {}
        self.keyframes: dict[str, dict[float, list[tuple[str, list[Any], bool]]]] = {}

    def undefined(self) -> str:
        """The page's undefined elements as a selector list, read from its markup once: autonomous custom
        elements (a tag name with a hyphen) and customized built-ins (``is=``), which no script defines here."""
        if self._undefined is None:
            names = sorted({m.lower() for m in _CUSTOM_TAG.findall(self.page)})
            # past _MAX_CUSTOM_TAGS names, every selector with :defined would grow with the page: read as before
            # (lexbor refuses :defined, so such a rule matches nothing)
            self._undefined = ", ".join([*names, "[is]"]) if len(names) <= _MAX_CUSTOM_TAGS else ""
        return self._undefined

    def containers(self) -> bool:
        """Whether the page may have a query container: a ``container``, ``container-type`` or ``container-name``
        declaration anywhere in its markup or style sheets (read once, when an ``@container`` rule is met)."""
        if self._containers is None:
            self._containers = any(_CONTAINER_DECL.search(text) for text in (self.page, *self.sheets))
        return self._containers

    def add_sheet(self, css: str, imports: int | None = None, layer: str = "") -> None:
        """Add a sheet's rules (in ``layer``, for a sheet imported into one). ``imports``: how many ``@import``
        rules its top level starts with (:func:`leading_imports`), when ``css`` is a pruned copy of the sheet;
        a browser loads only those."""
        nodes = tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True)
        allowed = leading_imports(css) if imports is None else imports
        seen = 0
        kept = []
        foreign = False
        for node in nodes:
            if node.type == "at-rule" and node.lower_at_keyword == "import":
                seen += 1
                if seen > allowed:
                    continue
            elif node.type == "at-rule" and node.lower_at_keyword == "namespace" and not foreign:
                foreign = _foreign_default_namespace(node.prelude)
            kept.append(node)
        if foreign:
            # a default namespace other than HTML's: its selectors (no namespace prefix) match no HTML element
            kept = [n for n in kept if n.type == "at-rule" and (n.content is None or n.lower_at_keyword in _NO_RULES)]
        self.add_rules(kept, layer, None, 0)

    def add_rules(self, nodes: list[Any], layer: str, parent: str | None, depth: int) -> None:
        """Add style rules and at-rules; ``layer`` is the enclosing layer's name (``""``: unlayered)."""
        if depth > 32:  # deeper nesting than any real sheet: ignore the rest (never hides anything)
            return
        for node in nodes:
            kind = node.type
            if kind == "qualified-rule":
                self.add_style_rule(node, layer, parent, depth)
            elif kind == "at-rule":
                self.add_at_rule(node, layer, parent, depth)

    def add_style_rule(self, node: Any, layer: str, parent: str | None, depth: int) -> None:
        if rejected_selector_list(node.prelude, nested=parent is not None, syntax=False):
            return  # Chromium drops the rule, its nested rules included
        selectors = _selector_texts(node.prelude, parent, self.host, self.undefined)
        if not selectors or node.content is None:
            return
        items = tinycss2.parse_blocks_contents(node.content, skip_comments=True, skip_whitespace=True)
        decls = relevant_declarations(items, self.quirks)
        layer_index = self.layers.index(layer) if layer else -1
        if decls:
            first_line: list[tuple[str, list[Any], bool]] | None = None
            group = -1
            if len(selectors) > 1 and any(judged for *_, judged in selectors):
                self.groups += 1
                group = self.groups
            for text, spec, on_first_line, judged in selectors:
                self.order += 1
                if on_first_line:
                    if first_line is None:
                        first_line = [(FIRST_LINE + n, v, imp) for n, v, imp in decls if n in FIRST_LINE_PROPERTIES]
                        if first_line:
                            first_line.append((FIRST_LINE, [], False))
                    if first_line:
                        self.rules.append(_Rule(text, spec, first_line, layer_index, self.order, group, judged))
                else:
                    self.rules.append(_Rule(text, spec, decls, layer_index, self.order, group, judged))
        nested = [x for x in items if x.type in ("qualified-rule", "at-rule")]
        if nested:
            joined = ", ".join(t for t, _, on_first_line, _ in selectors if not on_first_line)
            if joined:
                self.add_rules(nested, layer, joined, depth + 1)

    def add_at_rule(self, node: Any, layer: str, parent: str | None, depth: int) -> None:
        kw = node.lower_at_keyword
        if kw == "property":
            self.add_property(node)
            return
        if kw in ("keyframes", "-webkit-keyframes"):
            self.add_keyframes(node)
            return
        if kw == "layer":
            names = _layer_names(node.prelude)
            if node.content is None:
                for n in names:
                    self.layers.index(f"{layer}.{n}" if layer else n)
                return
            name = names[0] if names else self.layers.fresh()
            full = f"{layer}.{name}" if layer else name
            self.layers.index(full)
            content = tinycss2.parse_blocks_contents(node.content, skip_comments=True, skip_whitespace=True)
            self.add_rules(content, full, parent, depth + 1)
            return
        if node.content is None:
            if kw == "import" and depth == 0:  # inside a block an @import is invalid
                self.add_import(node.prelude, layer)
            return
        if kw == "media" and not media_applies(node.prelude):
            return
        if kw == "supports" and not supports_applies(node.prelude):
            return
        if kw == "container" and not self.containers() and "style(" not in tinycss2.serialize(node.prelude).lower():
            return  # a size query with no container on the page is false (a style() query asks any element)
        if kw == "scope":
            parent = self.scope_parent(node.prelude, parent)
        elif kw not in ("media", "supports", "container"):
            # @font-face, @keyframes, @page, unknown at-rules: nothing that hides text; @starting-style only
            # sets where a transition starts, and the page settles on its other rules; Chromium dropped
            # @document and @-moz-document, so their rules apply nowhere
            return
        content = tinycss2.parse_blocks_contents(node.content, skip_comments=True, skip_whitespace=True)
        if parent is not None and kw != "scope":
            # a conditional rule nested in a style rule holds declarations for that rule's elements
            self.add_declarations(parent, content, layer)
        self.add_rules(content, layer, parent, depth + 1)

    def add_declarations(self, selector: str, items: list[Any], layer: str) -> None:
        """The relevant declarations among ``items``, applied to the elements ``selector`` matches."""
        decls = relevant_declarations(items, self.quirks)
        if not decls:
            return
        toks = tinycss2.parse_component_value_list(selector)
        spec = max((sp for part in _split_commas(toks) if (sp := specificity(_strip(part))) is not None), default=None)
        if spec is None:
            return
        self.order += 1
        self.rules.append(_Rule(f":is({selector})", spec, decls, self.layers.index(layer) if layer else -1, self.order))

    def add_keyframes(self, node: Any) -> None:
        """``@keyframes name { from {...} 50% {...} to {...} }``: the relevant declarations per offset (the
        last rule with a name wins, as in CSS)."""
        name = _strip(node.prelude)
        if len(name) != 1 or name[0].type not in ("ident", "string") or node.content is None:
            return
        frames: dict[float, list[tuple[str, list[Any], bool]]] = {}
        for rule in tinycss2.parse_blocks_contents(node.content, skip_comments=True, skip_whitespace=True):
            if rule.type != "qualified-rule" or rule.content is None:
                continue
            decls = relevant_declarations(tinycss2.parse_blocks_contents(rule.content, skip_comments=True,
                                                                         skip_whitespace=True), self.quirks)
            for part in _split_commas(rule.prelude):
                sel = _strip(part)
                if len(sel) != 1:
                    continue
                t = sel[0]
                at = ({"from": 0.0, "to": 1.0}.get(t.lower_value) if t.type == "ident"
                      else float(t.value) / 100 if t.type == "percentage" else None)
                if at is not None:
                    frames[at] = frames.get(at, []) + decls
        self.keyframes[name[0].value] = frames

    def add_property(self, node: Any) -> None:
        """``@property --name { initial-value: ... }``: the value ``var(--name)`` takes where unset (the
        last registration wins, as in CSS; ``inherits: false`` is read as inheriting)."""
        name = _strip(node.prelude)
        if len(name) != 1 or name[0].type != "ident" or not name[0].value.startswith("--") or node.content is None:
            return
        for d in tinycss2.parse_blocks_contents(node.content, skip_comments=True, skip_whitespace=True):
            if d.type == "declaration" and d.lower_name == "initial-value":
                self.initial[name[0].value] = d.value

    def scope_parent(self, prelude: list[Any], parent: str | None) -> str | None:
        toks = _strip(prelude)
        if toks and toks[0].type == "() block":
            start = tinycss2.serialize(toks[0].content).strip()
            return f":is({parent}) :is({start})" if parent else start
        return parent

    def add_import(self, prelude: list[Any], layer: str = "") -> None:
        """``@import url [layer | layer(name)] [supports(...)] [media]``: the sheet of a ``data:`` URL, in its
        layer (inside ``layer``, the importing sheet's), when its ``supports()`` condition and media hold."""
        toks = _strip(prelude)
        if not toks:
            return
        url = _url(toks[0])
        rest = toks[1:]
        into = layer
        if rest and ((rest[0].type == "ident" and rest[0].lower_value == "layer")
                     or (rest[0].type == "function" and rest[0].lower_name == "layer")):
            names = _layer_names(rest[0].arguments) if rest[0].type == "function" else []
            name = names[0] if names else self.layers.fresh()
            into = f"{layer}.{name}" if layer else name
            rest = rest[1:]
        if rest and rest[0].type == "function" and rest[0].lower_name == "supports":
            cond = _strip(rest[0].arguments)
            declaration = len(cond) > 1 and cond[0].type == "ident" and cond[1].type == "literal" and cond[1].value == ":"
            if not (_declaration_supported(cond) if declaration else supports_applies(cond)):
                return
            rest = rest[1:]
        if url is None or not media_applies(rest):
            return
        text = decode_data_url(url, css_only=not self.quirks)
        if text and self.order < 100_000:
            if into:
                self.layers.index(into)
            self.add_sheet(text, layer=into)


# ---------------------------------------------------------------- matching


_VAR_REF = re.compile(r"var\(\s*(--[^\s,)]+)")


def _used_custom(rules: list[_Rule], page: str) -> set[str]:
    """Custom property names that a relevant declaration (or any ``var()`` in the page's markup, e.g.
    a style attribute) uses, directly or through other custom properties; an ``if()`` test's
    ``style(--x: ...)`` uses ``--x``."""
    refs: dict[str, set[str]] = {}
    if not any(name.startswith("--") for r in rules for name, _, _ in r.decls):
        return set()  # no custom property is declared: none to keep (and no need to scan the page)
    used: set[str] = set(_VAR_REF.findall(page)) if "var(" in page else set()

    def names(tokens: list[Any], out: set[str], depth: int = 0) -> None:
        if depth > 32:
            return
        for t in tokens:
            if t.type == "function":
                if t.lower_name in ("var", "style"):  # style(): the custom property an if() test reads
                    args = _strip(t.arguments)
                    if args and args[0].type == "ident":
                        out.add(args[0].value)
                names(t.arguments, out, depth + 1)
            elif t.type in ("() block", "[] block", "{} block"):
                names(t.content, out, depth + 1)

    for r in rules:
        for name, value, _ in r.decls:
            if name.startswith("--"):
                names(value, refs.setdefault(name, set()))
            else:
                names(value, used)
    todo = list(used)
    while todo:
        for n in refs.get(todo.pop(), ()):
            if n not in used:
                used.add(n)
                todo.append(n)
    return used


def build_cascade(
    tree: Any, sheets: list[str], *, page: str, tags: int | None = None, host: bool = False, quirks: bool = False,
) -> Cascade:
    """Parse ``sheets`` and compute, per element, the winning declaration of each relevant property.

    Args:
        tree: The lexbor parser holding the page.
        sheets: CSS texts in document order (later sheets win ties).
        page: The page's markup: its ``<`` count bounds the elements (for the matching budget),
            and its ``var()`` references keep the custom properties they name.
        tags: ``page.count("<")`` when the caller has it already.
        host: ``tree`` is a shadow tree parsed on its own: ``:host`` is its root element.
        quirks: The page renders in quirks mode (:func:`tokenslim.html._doctype.quirks_mode`): unitless
            lengths and style sheets of another MIME type count.

    Returns:
        The :class:`Cascade`; ``over_budget`` when matching was cut short.
    """
    present = _present_names(tree)
    n_elements = page.count("<") if tags is None else tags
    asked = [0]  # pruning's own lexbor visits: capped like matching, never a reason to refuse the page
    answered: dict[str, bool | None] = {}  # sheets repeat selector lists (one rule per media query...)
    # The elements a one-selector list matched while pruning: the cascade below asks lexbor the same
    # selector (as tinycss2 writes it back, most often the same text) and reuses them.
    matched: dict[str, list[Any]] = {}

    def matches(prelude: str) -> bool | None:
        """Whether a selector list matches any element (``None``: unknown or not worth asking)."""
        if prelude in answered:
            return answered[prelude]
        if asked[0] > MAX_MATCH_VISITS or _STRUCTURAL.search(prelude) or "&" in prelude:
            return None
        asked[0] += n_elements
        found: bool | None
        try:
            query = lexbor_query(prelude)
            if "," in prelude:
                found = tree.css_first(query) is not None
            else:
                nodes = tree.css(query)
                found = bool(nodes)
                if found:
                    matched[query] = nodes
        except Exception:  # noqa: BLE001 - a selector lexbor cannot parse: left to the full parse
            found = None
        answered[prelude] = found
        return found

    col = _Collector(host, page, tuple(sheets), quirks)
    for css in sheets:
        col.add_sheet(prune(css, present, matches), leading_imports(css))
    used = _used_custom(col.rules, page)
    out = Cascade(initial=col.initial, keyframes=col.keyframes)
    visits = [0]
    n_matches = 0
    sibling_cost = -1
    n_layers = len(col.layers.names)
    by_elem = out.by_elem
    rules = col.rules
    i = 0
    while i < len(rules) and not out.over_budget:
        # The rules of one selector list of several, consecutive in col.rules, are matched before any applies:
        # a judged selector lexbor refuses makes the whole list invalid (rejected_selector_list).
        j = i + 1
        if rules[i].group >= 0:
            while j < len(rules) and rules[j].group == rules[i].group:
                j += 1
        batch = rules[i:j]
        i = j
        found: list[tuple[_Rule, list[Any], list[Any]]] = []
        for rule in batch:
            decls = [d for d in rule.decls if not d[0].startswith("--") or d[0] in used]
            if not decls or not _selector_may_match(rule.selector, present):
                if rule.group >= 0 and rule.judged and not _lexbor_parses(rule.selector):
                    found = []
                    break
                continue
            if _STRUCTURAL.search(rule.selector):
                if sibling_cost < 0:
                    sibling_cost = _sibling_cost(tree, n_elements)
                visits[0] += max(n_elements, sibling_cost)
            else:
                visits[0] += n_elements
            if visits[0] > MAX_MATCH_VISITS:
                out.over_budget = True
                break
            nodes = matched.get(rule.selector)
            if nodes is None:
                try:
                    nodes = tree.css(rule.selector)
                except Exception:  # noqa: BLE001 - a selector lexbor cannot parse matches nothing (see docs/security.md)
                    if rule.group >= 0 and rule.judged:
                        found = []
                        break
                    continue
            if not nodes:
                continue
            n_matches += len(nodes)
            if n_matches > MAX_MATCHES:
                out.over_budget = True
                break
            found.append((rule, decls, nodes))
        if out.over_budget:
            break
        for rule, decls, nodes in found:
            out.rules += 1
            unlayered = rule.layer < 0
            keys = {
                False: (0, n_layers + 1 if unlayered else rule.layer, rule.spec, rule.order),
                True: (1, 0 if unlayered else n_layers - rule.layer, rule.spec, rule.order),
            }
            for node in nodes:
                slot = by_elem.setdefault(node.mem_id, {})
                for name, value, important in decls:
                    key = keys[important]
                    old = slot.get(name)
                    if old is None or key > old[0]:
                        slot[name] = (key, value)
    # Elements that won the same declarations share one dict, so styles computed for one are reused.
    shared: dict[tuple[Any, ...], dict[Any, Any]] = {}
    for elem, slot in by_elem.items():
        sig = tuple([(name, id(kv[0]), id(kv[1])) for name, kv in slot.items()])
        by_elem[elem] = shared.setdefault(sig, slot)
    return out


def _sibling_cost(tree: Any, n_elements: int) -> int:
    """Sum over parents of (element children^2)/2: what one structural selector costs lexbor."""
    if n_elements < 2_000:  # at most n^2/2 = 2M: never the reason to stop
        return n_elements
    cost = 0
    stack = [tree.root]
    while stack:
        node = stack.pop()
        count = 0
        child = node.child
        while child is not None:
            if child.is_element_node:
                count += 1
                stack.append(child)
            child = child.next
        cost += count * count // 2
    return cost


_ASCII_WS = re.compile(r"[\t\n\f\r ]+")


def _present_names(tree: Any) -> frozenset[str]:
    """Lower-cased class names and ids of the page's elements."""
    # One attribute read per element (not a dict of all of them, ``node.attributes``; ``attrs[...]``
    # costs half of ``attrs.get``); one query per attribute, since ``[class], [id]`` returns an element
    # that has both twice. Pages repeat a few class lists on many elements: each is split once.
    nodes = tree.css("[class]")
    try:
        classes = {node.attrs["class"] for node in nodes}
    except KeyError:  # never seen (lexbor matched [class], so the element has it): never a crash either
        classes = {node.attrs.get("class") for node in nodes}
    classes.discard(None)
    names = set(_ASCII_WS.split(" ".join(classes).lower()))  # HTML splits class lists on ASCII whitespace only
    for node in tree.css("[id]"):
        ident = node.id
        if ident:
            names.add(ident.lower())
    names.discard("")  # from a class list's leading whitespace: no selector names it
    return frozenset(names)


INLINE_KEY = {False: (0, 1 << 30, (0, 0, 0), 1 << 62), True: (1, 1 << 30, (0, 0, 0), 1 << 62)}
"""Cascade keys of style-attribute declarations: above every sheet declaration of the same importance."""
HINT_KEY = (0, -1, (0, 0, 0), -1)
"""Cascade key of presentational hints (``<font color>``, ``bgcolor``): below every author rule."""


def relevant_declarations(items: list[Any], quirks: bool = False) -> list[tuple[str, list[Any], bool]]:
    """``(name, value tokens, important)`` of the declarations among parsed tinycss2 ``items`` whose
    property can hide text (:data:`RELEVANT`; names lower-cased) or is a custom property (kept as written).
    ``quirks``: the page renders in quirks mode, whose readings :func:`quirky` applies."""
    out = []
    for d in items:
        if d.type != "declaration":
            continue
        if d.name.startswith("--"):
            out.append((d.name, d.value, d.important))
        elif d.lower_name in RELEVANT:
            value = quirky(d.lower_name, d.value) if quirks else d.value
            if _valid(d.lower_name, value):
                out.append((d.lower_name, value, d.important))
    return out


_ONE_VALUE = frozenset(
    "visibility content-visibility opacity zoom font-size letter-spacing width height max-width max-height min-height "
    "inline-size block-size max-inline-size max-block-size min-block-size left top right bottom color background-color "
    "-webkit-text-fill-color -webkit-text-stroke-width -webkit-text-stroke-color -webkit-text-security z-index float "
    "position isolation mix-blend-mode backface-visibility transform-style perspective".split()
)
"""Relevant properties whose value is one component (a keyword, a length, a colour, a function such as ``calc()``)."""
_DISPLAY_ONE = frozenset(
    "none contents block inline inline-block flow-root flex inline-flex grid inline-grid table inline-table "
    "table-row-group table-header-group table-footer-group table-row table-cell table-column-group table-column "
    "table-caption list-item ruby ruby-text math -webkit-box -webkit-inline-box -webkit-flex -webkit-inline-flex flow "
    "inherit initial unset revert revert-layer".split()
)
_DISPLAY_OUTSIDE = frozenset(("block", "inline"))
_DISPLAY_INSIDE = frozenset(("flow", "flow-root", "table", "flex", "grid", "ruby", "math"))


def _valid(name: str, tokens: list[Any]) -> bool:
    """Whether a browser keeps the declaration: a value of more than one component for a property of
    :data:`_ONE_VALUE`, or a ``display`` that is not a keyword (or two or three) Chromium knows, is dropped as
    invalid, so it neither hides nor shows anything (``display: block garbage`` leaves an earlier ``none``)."""
    if name not in _ONE_VALUE and name != "display":
        return True
    toks = [t for t in tokens if t.type not in ("whitespace", "comment")]
    if name != "display":
        return len(toks) == 1
    if len(toks) == 1 and toks[0].type == "function":
        return True  # var(), attr()...: known only per element
    if not toks or any(t.type != "ident" for t in toks):
        return False
    words = [t.lower_value for t in toks]
    kinds = set(words)
    if len(kinds) != len(words):
        return False
    if len(words) == 1:
        return words[0] in _DISPLAY_ONE
    outside = kinds & _DISPLAY_OUTSIDE
    inside = kinds & _DISPLAY_INSIDE
    if "list-item" in kinds:
        rest = kinds - {"list-item"}
        return len(outside) <= 1 and inside <= {"flow", "flow-root"} and len(inside) <= 1 and rest == outside | inside
    return len(words) == 2 and len(outside) == 1 and len(inside) == 1


def quirky(name: str, tokens: list[Any]) -> list[Any]:
    """Property ``name``'s value ``tokens`` as quirks mode reads them: for :data:`QUIRKY_LENGTHS`, each non-zero
    number outside functions is a px length (``left:-9999``); for :data:`QUIRKY_COLORS`, a lone hex written
    without ``#`` is a hash colour (``color:fff``; a number or a number with hex letters after it, ``123`` or
    ``0f0``, is zero-padded to 6 digits, as Chromium reads it)."""
    if name in QUIRKY_LENGTHS:
        if not any(t.type == "number" and t.value for t in tokens):
            return tokens
        return [tinycss2.ast.DimensionToken(t.source_line, t.source_column, t.value, t.int_value, t.representation, "px")
                if t.type == "number" and t.value else t for t in tokens]
    if name in QUIRKY_COLORS:
        toks = [t for t in tokens if t.type not in ("whitespace", "comment")]
        if len(toks) != 1:
            return tokens
        t = toks[0]
        digits = None
        if t.type == "ident" and len(t.value) in (3, 6) and _HEX.fullmatch(t.value):
            digits = t.value
        elif t.type in ("number", "dimension") and t.is_integer and t.value >= 0:
            text = t.representation.lstrip("+") + (t.unit if t.type == "dimension" else "")
            digits = text.rjust(6, "0") if len(text) <= 6 and _HEX.fullmatch(text) else None
        if digits is not None:
            return [tinycss2.ast.HashToken(t.source_line, t.source_column, digits, False)]
    return tokens


_HEX = re.compile(r"[0-9a-fA-F]+")
QUIRKY_LENGTHS = frozenset(
    "width height max-width max-height min-height left top right bottom margin margin-left margin-top text-indent "
    "letter-spacing font-size".split()
)
"""The relevant properties where quirks mode reads a unitless number as px (CSS Quirks Mode, "the unitless
length quirk"; ``inset`` and the logical properties are not among them)."""
QUIRKY_COLORS = frozenset(("color", "background-color"))
"""The relevant properties where quirks mode reads a hex colour without ``#`` ("the hashless hex color quirk";
not the ``background`` shorthand)."""


def relevant_style_text(style: str) -> str:
    """A ``style`` attribute without what cannot count, before tinycss2 tokenizes it: ``""`` when it
    names no relevant property, else the style with its irrelevant plain declarations cut (as
    :func:`prune` cuts them in sheets). Parsing the result gives the same relevant declarations."""
    if not _RELEVANT_TEXT.search(style):
        return ""
    return drop_spans(style, _irrelevant_declarations(style, 0, len(style)))


def parse_inline(style: str, quirks: bool = False) -> dict[str, tuple[tuple[Any, ...], list[Any]]]:
    """The relevant declarations of a ``style`` attribute, with their cascade keys (``quirks``: as
    :func:`relevant_declarations` reads them)."""
    out: dict[str, tuple[tuple[Any, ...], list[Any]]] = {}
    items = tinycss2.parse_blocks_contents(relevant_style_text(style), skip_comments=True, skip_whitespace=True)
    for name, value, important in relevant_declarations(items, quirks):
        key = INLINE_KEY[important]
        old = out.get(name)
        if old is None or key >= old[0]:
            out[name] = (key, value)
    return out
