"""Walk a parsed page once (iteratively) and cut it into text blocks.

Each block is the inline text between two block-level boundaries, tagged with the
element that holds it, so the scorer can credit text to containers. Hidden
elements, non-content tags and comments are skipped here and counted per rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tokenslim.html._css import FIRST_LINE, build_cascade, collect_sheets
from tokenslim.html._hidden import hidden_rule
from tokenslim.html._style import HINT_COLOR_TAGS, ROOT_STATE, UA_COLORED, State, Styler

__all__ = ["Block", "PageModel", "walk"]

BLOCK_TAGS = frozenset(
    "address article aside blockquote body center dd details dialog dir div dl dt fieldset figcaption figure "
    "footer form h1 h2 h3 h4 h5 h6 header hgroup hr li main menu nav ol p pre section summary table tbody "
    "td tfoot th thead tr ul caption legend html".split()
)
# Elements whose content is never main text a reader sees.
SKIP_TAGS = frozenset(
    "script style noscript template svg math iframe frame frameset object embed canvas select option "
    "textarea input head title link meta video audio map area source track".split()
)
# Elements a browser never renders (the HTML standard's "Hidden elements" and replaced elements
# whose children are only fallback content), so neither does the walk: rule ``never_rendered``.
NEVER_RENDERED = frozenset("noembed noframes rp param datalist progress meter base basefont".split())
_NOT_WALKED = SKIP_TAGS | NEVER_RENDERED | {"dialog"}  # one set lookup per element on the common path
# Block-level tags that hold no lines of their own (a ::first-line rule on them styles nothing).
_NO_LINES = frozenset("table tbody thead tfoot tr hr html".split())
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


_NO_HINT = (False, False)
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}


@dataclass(slots=True)
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
        self.by_elem = styler.by_elem
        self.fragments: list[Any] = []

    def flush(self) -> None:
        parts = self.parts
        if not parts:
            return
        raw = "".join(parts)
        link = self.buf_link
        parts.clear()  # in place: walk() holds this list
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
        m.commas[e] += text.count(",") if text.isascii() else text.count(",") + text.count("，") + text.count("、")


@dataclass
class _Shadow:
    """A host's declarative shadow root, parsed: what a reader sees under the host, the characters of
    light-DOM children left out (no ``<slot>``), and the shadow root's own style sheets: declarations
    per shadow-tree element and those its ``:host`` rules give the host."""

    nodes: list[Any]
    unslotted: int
    by_elem: dict[int, dict[str, Any]]
    host_decls: dict[str, Any] | None


def _shadow_children(host: Any, keep: list[Any], quirks: bool = False) -> _Shadow | None:
    """The children a reader sees under ``host`` when its first element child is a declarative
    shadow root (``<template shadowrootmode="open|closed">``): the shadow tree's children (parsed
    from the template, whose content the parser keeps apart), followed by the host's other
    children only when the shadow tree has a ``<slot>`` to show them in; the characters of
    the light-DOM children left out; and the cascade of the shadow root's ``<style>`` sheets, which
    style the shadow tree (and the host, by ``:host``) only. ``None`` for other hosts."""
    from selectolax.lexbor import LexborHTMLParser

    child = host.child
    while child is not None and child.tag in ("-text", "-comment") and not (child.text_content or "").strip():
        child = child.next
    if child is None or child.tag != "template" or child.attributes.get("shadowrootmode") not in ("open", "closed"):
        return None
    html = child.html or ""
    inner = html[html.find(">") + 1 : html.rfind("</template>")]
    frag = LexborHTMLParser(f"<body>{inner}</body>")
    keep.append(frag)  # its nodes live as long as the parser
    sheets = collect_sheets(frag, quirks)
    by_elem: dict[int, dict[str, Any]] = {}
    host_decls = None
    if any(sheets):
        cascade = build_cascade(frag, sheets, page=inner, host=True, quirks=quirks)
        if not cascade.over_budget:
            by_elem = cascade.by_elem
            root = frag.root
            host_decls = by_elem.pop(root.mem_id, None) if root is not None else None
    body = frag.body
    out = list(body.iter(include_text=True)) if body is not None else []
    unslotted = 0
    light = child.next
    while light is not None:
        if "<slot" in inner:
            out.append(light)
        else:
            unslotted += len(light.text_content or "") if light.tag == "-text" else _subtree_chars(light)
        light = light.next
    return _Shadow(out, unslotted, by_elem, host_decls)


# Boxes the user-agent style sheet gives a size of their own (padding, border, a list marker):
# never empty, so content inside them does not start on the viewport's edge.
_SIZED_BY_UA = frozenset("button li fieldset details summary select textarea input legend".split())


def _only_child(node: Any) -> Any:
    """The one element child of ``node`` when it has no other content (text, other elements), else ``None``."""
    only = None
    child = node.child
    while child is not None:
        tag = child.tag
        if tag == "-text":
            if (child.text_content or "").strip():
                return None
        elif tag != "-comment":
            if only is not None:
                return None
            only = child
        child = child.next
    return only


def _closed_details(node: Any, removed: dict[str, list[int]]) -> list[Any]:
    """The children of a closed ``<details>`` a reader sees: its first ``<summary>``. The text of
    the others is recorded as ``closed_details`` (Chromium does not render it until opened)."""
    shown: list[Any] = []
    hidden = 0
    child = node.child
    while child is not None:
        if child.tag == "summary" and not shown:
            shown.append(child)
        elif child.tag == "-text":
            hidden += len((child.text_content or "").strip())
        elif child.tag != "-comment":
            hidden += _subtree_chars(child)
        child = child.next
    if hidden:
        _count(removed, "closed_details", hidden)
    return shown


def walk(root: Any, styler: Styler, state: State = ROOT_STATE, *, dsd: bool = False, quirks: bool = False) -> PageModel:
    """Walk the tree under ``root`` (a selectolax node) without recursion.

    Args:
        root: The ``<body>`` (or document root) node.
        styler: Computes each element's visibility (see :mod:`tokenslim.html._style`).
        state: The rendering state ``root`` inherits (from ``<html>``).
        dsd: The page may hold declarative shadow roots (``shadowrootmode``): look for them.
        quirks: The page renders in quirks mode (its shadow roots' style sheets are read so too).

    Returns:
        The :class:`PageModel` with blocks, element statistics and removal counts.
    """
    w = _Walker(styler)
    m = w.m
    removed = m.removed
    tags, parents, ends, weights, neg_anc = m.tag, m.parent, m.end, m.weight, m.neg_anc
    text_len, link_len, commas, has_block_child = m.text_len, m.link_len, m.commas, m.has_block_child
    blk, rows, parts, flush = w.blk, w.rows, w.parts, w.flush
    by_elem = styler.by_elem
    styled = styler.state
    overlays: list[tuple[int, int]] = []  # (element whose text an opaque overlay covers, the overlay's index)
    edge_children: dict[int, int] = {}  # the only child of an empty box pinned to a viewport edge -> State.edge bits
    hints: dict[str, tuple[bool, bool]] = {}  # class or id text -> hint_flags (a page repeats a few class strings)
    link_depth = 0
    parent = -1
    # A block's ::first-line rules that hide its first formatted line: the rule, and whether that line
    # holds text yet. The line runs to the first <br> or block boundary (text that wraps past it is
    # taken as on it too: the safe side).
    first_line: str | None = None
    line_seen = False
    # Stack items: a node to enter (in the current context: parent index and inherited state), or
    # a tuple (index to leave or < 0, the context to restore, whether a link ends) that closes an
    # element whose children were pushed after it. One flat loop: this runs for every node of a page.
    stack: list[Any] = [root]
    pop = stack.pop
    push = stack.append
    while stack:
        node = pop()
        if type(node) is tuple:
            idx, parent, state, link = node
            if link:
                link_depth -= 1
            if idx < 0:
                continue
        else:
            tag = node.tag
            if tag == "-text":
                text = node.text_content
                if text:
                    if state.text_rule is not None:
                        if not text.isspace():
                            _count(removed, state.text_rule, len(text))
                        continue
                    if first_line is not None and not text.isspace():
                        _count(removed, first_line, len(text))
                        line_seen = True
                        continue
                    # Whitespace that opens a block is never shown (outside <pre>): not buffered, so
                    # the many blocks holding nothing else cost no flush.
                    if parts or w.pre_depth or not text.isspace():
                        parts.append(text)
                    if link_depth:
                        w.buf_link += len(text.strip())
                continue
            if tag == "-comment":
                _count(removed, "comment", len(node.html or ""))
                continue
            if not tag or tag[0] in "-!#_":  # None: processing instructions and other tag-less nodes
                continue
            # -- enter the element: skipped, hidden, walked through without a record, or recorded
            if tag in _NOT_WALKED:
                if tag in SKIP_TAGS:
                    if tag == "template" and dsd and node.attributes.get("shadowrootmode") in ("open", "closed"):
                        continue  # a declarative shadow root: walked in place of its host's children
                    _count(removed, tag if tag in ("script", "style", "noscript", "template") else "non_content_tag",
                           _subtree_chars(node))
                    continue
                if tag != "dialog" or "open" not in node.attributes:
                    _count(removed, "never_rendered", _subtree_chars(node))
                    continue
            attrs = node.attributes
            inner = state
            shadow = _shadow_children(node, w.fragments, quirks) if dsd and node.child is not None else None
            if shadow is not None:
                # the shadow root's sheets style its tree, and the host through :host (below the page's rules)
                by_elem.update(shadow.by_elem)
                if shadow.host_decls:
                    by_elem[node.mem_id] = {**shadow.host_decls, **by_elem.get(node.mem_id, {})}
            rule = hidden_rule(attrs) if attrs and ("hidden" in attrs or "popover" in attrs) else None
            if rule is not None and styler.shows(by_elem.get(node.mem_id) if by_elem else None, attrs, tag):
                rule = None
            if rule is None:
                decls = by_elem.get(node.mem_id) if by_elem else None
                if decls or state.restyles or tag in UA_COLORED or (
                        attrs and ("style" in attrs or "bgcolor" in attrs or tag in HINT_COLOR_TAGS)):
                    rule, inner = styled(decls, tag, attrs, state)
                    if rule is None and inner is not state:
                        if edge_children and inner.pinned & edge_children.get(node.mem_id, 0):
                            # placed from the content edge of an empty box pinned to the viewport's
                            # right (bottom) edge: it starts past the viewport, where no scrolling reaches
                            rule = "offscreen_position"
                        elif inner.edge and tag not in _SIZED_BY_UA:
                            only = _only_child(node)
                            if only is not None:
                                edge_children[only.mem_id] = inner.edge
                    if rule is None and parent >= 0 and styler.covers(decls, attrs):
                        overlays.append((parent, len(tags)))
            if rule is not None:
                _count(removed, rule, _subtree_chars(node))
                continue
            weight = 0
            neg = tag in NEG_TAGS
            if attrs:
                cls = attrs.get("class")
                ident = attrs.get("id")
                if cls or ident:
                    flags = hints.get(cls) if cls else _NO_HINT
                    if flags is None:
                        flags = hints[cls] = hint_flags(cls)
                    if ident:
                        id_flags = hints.get(ident)
                        if id_flags is None:
                            id_flags = hints[ident] = hint_flags(ident)
                        flags = (flags[0] or id_flags[0], flags[1] or id_flags[1])
                    if flags[1]:
                        weight = 25 if not flags[0] else 0
                    elif flags[0]:
                        weight = -25
                        neg = True
                role = attrs.get("role")
                if role and role.lower() in NEG_ROLES:
                    neg = True
            block = tag in BLOCK_TAGS
            if first_line is not None and (tag == "br" or (block and line_seen)):
                first_line = None  # a forced break: the first line has ended
            if block and decls and FIRST_LINE in decls and tag not in _NO_LINES:
                hides = styler.first_line(decls, inner)
                if hides is not None:
                    first_line, line_seen = hides, False
            if not block and not neg and inner.bg == state.bg:
                idx = -2
                if tag == "br" and (parts or w.pre_depth):
                    parts.append("\n" if w.pre_depth else " \n ")
            else:
                if tag in ("body", "html", "article", "main"):
                    neg = False
                idx = len(tags)
                tags.append(tag)
                parents.append(parent)
                ends.append(idx + 1)
                weights.append(weight)
                neg_anc.append(idx if neg else (neg_anc[parent] if parent >= 0 else -1))
                text_len.append(0)
                link_len.append(0)
                commas.append(0)
                has_block_child.append(False)
                if block:
                    if parent >= 0:
                        has_block_child[parent] = True
                    if parts:
                        flush()
                    blk.append(idx)
                    if tag == "tr":
                        rows.append(idx)
                    elif tag == "pre":
                        w.pre_depth += 1
            child = node.last_child
            if shadow is not None:
                if shadow.unslotted:
                    _count(removed, "never_rendered", shadow.unslotted)
                push((idx, parent, state, tag == "a"))
                if tag == "a":
                    link_depth += 1
                if idx >= 0:
                    parent = idx
                state = inner
                stack.extend(reversed(shadow.nodes))
                continue
            if tag == "details" and child is not None and "open" not in attrs:
                # a closed <details> shows its first <summary> only (the rest waits for a click)
                push((idx, parent, state, False))
                if idx >= 0:
                    parent = idx
                state = inner
                stack.extend(reversed(_closed_details(node, removed)))
                continue
            if child is not None:
                link = tag == "a"
                push((idx, parent, state, link))
                if link:
                    link_depth += 1
                if idx >= 0:
                    parent = idx
                state = inner
                while child is not None:
                    push(child)
                    child = child.prev
                continue
            if idx < 0:
                continue
        # -- leave element idx (its children, if any, are done)
        tag = tags[idx]
        if tag in BLOCK_TAGS:
            first_line = None
            if parts:
                flush()
            blk.pop()
            if tag == "tr":
                rows.pop()
            elif tag == "pre":
                w.pre_depth -= 1
        ends[idx] = len(tags)
        p = parents[idx]
        if p >= 0:
            text_len[p] += text_len[idx]
            link_len[p] += link_len[idx]
            commas[p] += commas[idx]
    w.flush()
    if overlays:
        _cover(m, overlays)
    return w.m


def _cover(m: PageModel, overlays: list[tuple[int, int]]) -> None:
    """Drop the blocks an opaque overlay covers: all text of the block the overlay sits in, but the
    overlay's own (``overlays`` holds the block's index and the index the overlay was given)."""
    keep: list[Block] = []
    chars = n = 0
    for b in m.blocks:
        e = b.elem
        if any(p <= e < m.end[p] and not (o <= e < m.end[o] if o < len(m.end) else False) for p, o in overlays):
            chars += len(b.text)
            n += 1
            m.text_len[e] -= len(b.text)
        else:
            keep.append(b)
    m.blocks[:] = keep
    if n:
        _count(m.removed, "covered_text", chars, n)
