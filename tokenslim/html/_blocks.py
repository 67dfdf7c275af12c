"""Walk a parsed page once (iteratively) and cut it into text blocks.

Each block is the inline text between two block-level boundaries, tagged with the
element that holds it, so the scorer can credit text to containers. Hidden
elements, non-content tags and comments are skipped here and counted per rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tokenslim.html._hidden import hidden_rule
from tokenslim.html._style import ROOT_STATE, State, Styler

__all__ = ["Block", "PageModel", "walk"]

BLOCK_TAGS = frozenset(
    "address article aside blockquote body center dd details dialog dir div dl dt fieldset figcaption figure "
    "footer form h1 h2 h3 h4 h5 h6 header hgroup hr li main menu nav ol p pre section summary table tbody "
    "td tfoot th thead tr ul caption legend html".split()
)
# Elements whose content is never main text a reader sees.
SKIP_TAGS = frozenset(
    "script style noscript template svg math iframe frame frameset object embed canvas button select option "
    "textarea input head title link meta video audio map area dialog source track".split()
)
# Boilerplate by tag or ARIA role (kept only when the chosen content itself sits inside them).
NEG_TAGS = frozenset(("nav", "aside", "footer", "menu", "header"))
NEG_ROLES = frozenset(
    ("navigation", "banner", "contentinfo", "complementary", "menu", "menubar", "search", "dialog", "alertdialog")
)
# A hint word counts when it is a whole class/id token, or the first or last dash/underscore part
# of one ("sidebar", "sidebar-left", "post-comments"), never buried mid-token ("elementor-widget-wrap").
# Positive words count only as a whole token or a last part ("entry-content", not "post-comments").
_NEG_WORDS = frozenset(
    "nav navbar navigation menu menus footer masthead sidebar side-bar sidenav cookie cookies consent gdpr "
    "share sharing social socials related recommended recommendations comment comments breadcrumb breadcrumbs "
    "ad ads advert adverts advertisement sponsor sponsored promo newsletter subscribe subscription signup popup "
    "modal widget widgets toolbar pagination pager tags tagcloud byline author-bio disqus outbrain taboola "
    "teaser teasers skip login banner meta jump rating rss".split()
)
_POS_WORDS = frozenset(
    "article articlebody article-body body content entry entry-content main page post post-body post-content "
    "text blog story story-body prose markdown rich-text richtext".split()
)


def hint_flags(hint: str) -> tuple[bool, bool]:
    """``(boilerplate_hint, content_hint)`` for an element's class and id text."""
    neg = pos = False
    for token in hint.lower().replace("_", "-").split():
        if token in _NEG_WORDS:
            neg = True
            continue
        if token in _POS_WORDS:
            pos = True
            continue
        dash = token.find("-")
        if dash < 0:
            continue
        last = token[token.rfind("-") + 1 :]
        if token[:dash] in _NEG_WORDS or last in _NEG_WORDS:
            neg = True
        elif last in _POS_WORDS:
            pos = True
    return neg, pos


_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}


@dataclass
class Block:
    """Inline text between block boundaries."""

    elem: int
    kind: str
    text: str
    link_chars: int
    row: int


@dataclass
class PageModel:
    """The flattened page: elements in document (pre)order, and the text blocks."""

    tag: list[str] = field(default_factory=list)
    parent: list[int] = field(default_factory=list)
    end: list[int] = field(default_factory=list)
    weight: list[int] = field(default_factory=list)
    neg_anc: list[int] = field(default_factory=list)
    text_len: list[int] = field(default_factory=list)
    link_len: list[int] = field(default_factory=list)
    commas: list[int] = field(default_factory=list)
    has_block_child: list[bool] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    removed: dict[str, list[int]] = field(default_factory=dict)


def _count(removed: dict[str, list[int]], rule: str, chars: int, n: int = 1) -> None:
    entry = removed.get(rule)
    if entry is None:
        removed[rule] = [n, chars]
    else:
        entry[0] += n
        entry[1] += chars


def _subtree_chars(node: Any) -> int:
    try:
        return len(node.text(deep=True, separator=""))
    except Exception:  # noqa: BLE001 - a count only; never fail extraction over it
        return 0


_KIND = {"td": "cell", "th": "cell", "li": "li", "dt": "dt", "dd": "dd", "pre": "pre", **{h: h for h in _HEADINGS}}


class _Walker:
    """State of one walk (a fresh instance per page; nothing shared between threads).

    Block-level elements and inline elements that carry a signal (a class/id hint, a
    background colour) get a record; plain inline elements (``<span>``, ``<b>``...) only
    pass their text on, which keeps the walk cheap.
    """

    def __init__(self, styler: Styler) -> None:
        self.m = PageModel()
        self.styler = styler
        self.parts: list[str] = []
        self.buf_link = 0
        self.blk: list[int] = []
        self.rows: list[int] = [-1]
        self.link_depth = 0
        self.pre_depth = 0
        self.hints: dict[str, tuple[int, bool]] = {}  # class/id string -> (weight, is boilerplate)

    def flush(self) -> None:
        parts = self.parts
        if not parts:
            return
        raw = "".join(parts)
        link = self.buf_link
        self.parts = []
        self.buf_link = 0
        if self.pre_depth:
            text = raw.strip("\n")
            if not text.strip():
                return
        else:
            text = " ".join(raw.split())
            if not text:
                return
        if not self.blk:
            return
        e = self.blk[-1]
        m = self.m
        n = len(text)
        link = link if link < n else n
        m.blocks.append(Block(e, _KIND.get(m.tag[e], "p"), text, link, self.rows[-1]))
        m.text_len[e] += n
        m.link_len[e] += link
        m.commas[e] += text.count(",") + text.count("，") + text.count("、")

    def enter(self, node: Any, tag: str, parent: int, state: State) -> tuple[int, State]:
        """Look at an element: ``(-1, _)`` skip it, ``(-2, state)`` walk its children without a record,
        else ``(its new index, its state)``."""
        m = self.m
        if tag in SKIP_TAGS:
            _count(m.removed, tag if tag in ("script", "style", "noscript", "template") else "non_content_tag",
                   _subtree_chars(node))
            return -1, state
        attrs = node.attributes
        inherited = state.bg
        weight = 0
        neg = tag in NEG_TAGS
        block = tag in BLOCK_TAGS
        rule = hidden_rule(attrs) if attrs else None
        if rule is None:
            rule, state = self.styler.element(node, tag, attrs, state)
        if rule is not None:
            _count(m.removed, rule, _subtree_chars(node))
            return -1, state
        own_bg = state.bg
        if attrs:
            hint = f"{attrs.get('class') or ''} {attrs.get('id') or ''}"
            if len(hint) > 1:
                cached = self.hints.get(hint)
                if cached is None:
                    is_neg, is_pos = hint_flags(hint)
                    cached = self.hints[hint] = ((25 if is_pos else 0) - (25 if is_neg else 0), is_neg and not is_pos)
                weight = cached[0]
                neg = neg or cached[1]
            role = attrs.get("role")
            if role and role.lower() in NEG_ROLES:
                neg = True
        if not block and not neg and own_bg == inherited and tag not in NEG_TAGS:
            if tag == "br":
                self.parts.append("\n" if self.pre_depth else " \n ")
            return -2, state
        if tag in ("body", "html", "article", "main"):
            neg = False
        idx = len(m.tag)
        m.tag.append(tag)
        m.parent.append(parent)
        m.end.append(idx + 1)
        m.weight.append(weight)
        m.neg_anc.append(idx if neg else (m.neg_anc[parent] if parent >= 0 else -1))
        m.text_len.append(0)
        m.link_len.append(0)
        m.commas.append(0)
        m.has_block_child.append(False)
        if block:
            if parent >= 0:
                m.has_block_child[parent] = True
            self.flush()
            self.blk.append(idx)
            if tag == "tr":
                self.rows.append(idx)
            elif tag == "pre":
                self.pre_depth += 1
        return idx, state

    def leave(self, idx: int) -> None:
        m = self.m
        tag = m.tag[idx]
        if tag in BLOCK_TAGS:
            self.flush()
            self.blk.pop()
            if tag == "tr":
                self.rows.pop()
            elif tag == "pre":
                self.pre_depth -= 1
        m.end[idx] = len(m.tag)
        p = m.parent[idx]
        if p >= 0:
            m.text_len[p] += m.text_len[idx]
            m.link_len[p] += m.link_len[idx]
            m.commas[p] += m.commas[idx]


_LEAVE_LINK = -1  # stack marker: the end of an <a> element


def walk(root: Any, styler: Styler, state: State = ROOT_STATE) -> PageModel:
    """Walk the tree under ``root`` (a selectolax node) without recursion.

    Args:
        root: The ``<body>`` (or document root) node.
        styler: Computes each element's visibility (see :mod:`tokenslim.html._style`).
        state: The rendering state ``root`` inherits (from ``<html>``).

    Returns:
        The :class:`PageModel` with blocks, element statistics and removal counts.
    """
    w = _Walker(styler)
    removed = w.m.removed
    # Stack items: (node, parent_index, inherited state) to enter; an int >= 0: the index of an
    # element to leave; _LEAVE_LINK: the end of a link.
    stack: list[Any] = [(root, -1, state)]
    pop = stack.pop
    push = stack.append
    enter = w.enter
    leave = w.leave
    while stack:
        item = pop()
        if type(item) is int:
            if item == _LEAVE_LINK:
                w.link_depth -= 1
            else:
                leave(item)
            continue
        node, parent, state = item
        tag = node.tag
        if tag == "-text":
            text = node.text_content
            if text:
                if state.text_rule is not None:
                    if not text.isspace():
                        _count(removed, state.text_rule, len(text))
                    continue
                w.parts.append(text)
                if w.link_depth:
                    w.buf_link += len(text.strip())
            continue
        if tag == "-comment":
            _count(removed, "comment", len(node.html or ""))
            continue
        if not tag or tag[0] in "-!#_":  # None: processing instructions and other tag-less nodes
            continue
        idx, state = enter(node, tag, parent, state)
        if idx == -1:
            continue
        if tag == "a":
            w.link_depth += 1
            push(_LEAVE_LINK)
        if idx >= 0:
            push(idx)
            parent = idx
        children = []
        child = node.child
        while child is not None:
            children.append((child, parent, state))
            child = child.next
        if children:
            children.reverse()
            stack.extend(children)
    w.flush()
    return w.m
