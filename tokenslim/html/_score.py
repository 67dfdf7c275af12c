"""Choose the main-content blocks of a page (readability-style container scoring).

Why this approach: text-bearing paragraphs credit their parent and grandparent
containers (more for longer, comma-rich text); the container with the best score,
discounted by its link density, is the article. Near-equal candidates outside it
(an article split by ads) lift it to their common ancestor; siblings scoring close to
it, sibling paragraphs and the lead container right before it join it. Inside,
containers that look like link lists or carry boilerplate class/id/tag hints are
cleaned out, unless the hinted element holds most of the text (then the hint names the
layout, e.g. ``sidebar-wrapper`` around everything). No site-specific rules.
"""

from __future__ import annotations

from tokenslim.html._blocks import Block, PageModel

__all__ = ["select_blocks"]

MIN_PARAGRAPH_CHARS = 25
_INSIDE_BOILERPLATE = 0.25
_HINT_MAX_SHARE = 0.5
_SPLIT_ARTICLE_SHARE = 0.75
_TAG_PRIOR = {
    "div": 5, "article": 10, "main": 5, "section": 3, "pre": 3, "td": 3, "blockquote": 3,
    "address": -3, "ol": -3, "ul": -3, "dl": -3, "dd": -3, "dt": -3, "li": -3, "form": -3,
    "h1": -5, "h2": -5, "h3": -5, "h4": -5, "h5": -5, "h6": -5, "th": -5,
}
_PARAGRAPH_TAGS = frozenset(("p", "li", "dd", "dt", "pre", "blockquote", "td", "th", "figcaption", "caption"))
_CLEANABLE = frozenset(
    ("div", "section", "ul", "ol", "dl", "table", "form", "aside", "header", "footer", "nav", "figure")
)


def _density(m: PageModel, i: int) -> float:
    return m.link_len[i] / m.text_len[i] if m.text_len[i] else 0.0


def _candidate_scores(m: PageModel) -> dict[int, float]:
    scores: dict[int, float] = {}
    parent = m.parent
    for b in m.blocks:
        n = len(b.text)
        if n < MIN_PARAGRAPH_CHARS or b.kind[0] == "h":
            continue
        text = b.text
        s = 1.0 + (text.count(",") if text.isascii() else text.count(",") + text.count("，")) + min(n // 100, 3)
        s *= 1.0 - b.link_chars / n
        e = b.elem
        # Text directly inside a container that also holds blocks makes the container its own
        # paragraph's parent; a leaf container (a <div> used as a <p>) credits its parent.
        anc = e if m.has_block_child[e] and m.tag[e] not in _PARAGRAPH_TAGS else parent[e]
        level = 0
        while anc >= 0 and level < 3 and m.tag[anc] not in ("body", "html"):
            if anc not in scores:
                scores[anc] = _TAG_PRIOR.get(m.tag[anc], 0) + m.weight[anc]
            scores[anc] += s / (1 if level == 0 else 2 if level == 1 else 3 * level)
            anc = parent[anc]
            level += 1
    page = m.text_len[0] if m.tag else 0
    for i in scores:
        scores[i] *= 1.0 - _density(m, i)
        if _is_boilerplate(m, m.neg_anc[i], page):  # inside comments, navigation, a sidebar...
            scores[i] *= _INSIDE_BOILERPLATE
    return scores


def _is_boilerplate(m: PageModel, neg: int, within_chars: int) -> bool:
    """Whether the boilerplate-hinted element ``neg`` really is boilerplate: a hint on an element
    that holds most of the text around it (``sidebar-wrapper`` around the whole article, an
    unclosed ``<header>``) names the layout, not the content."""
    return neg >= 0 and m.text_len[neg] <= _HINT_MAX_SHARE * within_chars


def _ancestors(m: PageModel, i: int) -> set[int]:
    out = set()
    i = m.parent[i]
    while i >= 0:
        out.add(i)
        i = m.parent[i]
    return out


def _top_candidate(m: PageModel, scores: dict[int, float]) -> int:
    """The best container, moved up when near-equal candidates share an ancestor (split articles)."""
    parent, tag = m.parent, m.tag
    ranked = sorted(scores, key=scores.__getitem__, reverse=True)
    top = ranked[0]
    top_score = scores[top]
    # An article split into several containers (by ads, pull quotes...): strong candidates that are
    # neither inside nor around the top one pull it up to their nearest common ancestor.
    top_anc = _ancestors(m, top)
    alts = [
        c for c in ranked[1:8]
        if scores[c] >= _SPLIT_ARTICLE_SHARE * top_score and c not in top_anc and not top <= c < m.end[top]
    ]
    for c in alts[:3]:
        p = parent[top]
        while p >= 0 and not p <= c < m.end[p]:
            p = parent[p]
        if p >= 0 and tag[p] not in ("body", "html"):
            top = p
            top_anc = _ancestors(m, top)
    last = scores.get(top, top_score)
    threshold = last / 3
    p = parent[top]
    while p >= 0 and tag[p] not in ("body", "html"):
        if p in scores:
            if scores[p] < threshold:
                break
            if scores[p] > last:
                top = p
                break
            last = scores[p]
        p = parent[p]
    while True:  # a container that is its parent's only child: take the parent
        p = parent[top]
        if p < 0 or tag[p] in ("body", "html") or top != p + 1 or m.end[top] != m.end[p]:
            return top
        top = p


def _selected_roots(m: PageModel, scores: dict[int, float]) -> list[int]:
    if not scores:
        return [0] if m.tag else []
    top = _top_candidate(m, scores)
    top_score = scores.get(top, max(scores.values()))
    parent = m.parent[top]
    if parent < 0:
        return [top]
    threshold = max(10.0, top_score * 0.2)
    roots: list[int] = []
    i = parent + 1
    while i < m.end[parent]:
        if i == top:
            roots.append(i)
        elif scores.get(i, -1e9) >= threshold:
            roots.append(i)
        elif m.text_len[i] > 0 and m.neg_anc[i] != i:
            # readability's rule for sibling paragraphs, also applied to the sibling right before
            # the article (a standfirst or lead paragraph in its own container).
            n, ld = m.text_len[i], _density(m, i)
            if m.tag[i] == "p" or m.end[i] == top:
                if (n > 80 and ld < 0.25) or (0 < n <= 80 and ld == 0 and m.tag[i] == "p"):
                    roots.append(i)
        i = m.end[i]
    return roots


def _is_junk_container(m: PageModel, i: int) -> bool:
    if m.tag[i] not in _CLEANABLE or m.commas[i] >= 10:
        return False
    ld = _density(m, i)
    if m.weight[i] < 0:
        return True
    return ld > 0.5 or (ld > 0.2 and m.weight[i] < 25 and m.tag[i] in ("ul", "ol", "dl", "nav"))


def select_blocks(m: PageModel) -> tuple[list[Block], list[Block]]:
    """Split the page's blocks into main content and boilerplate.

    Args:
        m: The walked page.

    Returns:
        ``(kept, dropped)`` blocks, each in document order.
    """
    roots = _selected_roots(m, _candidate_scores(m))
    kept: list[Block] = []
    dropped: list[Block] = []
    junk: dict[int, bool] = {}
    clean: dict[tuple[int, int], bool] = {}  # (element, root): no junk container from it up to the root
    parent = m.parent
    spans = [(root, m.end[root]) for root in roots]
    for b in m.blocks:
        e = b.elem
        root = -1
        for s, t in spans:
            if s <= e < t:
                root = s
                break
        ok = root >= 0 and (m.neg_anc[e] <= root or not _is_boilerplate(m, m.neg_anc[e], m.text_len[root]))
        if ok:
            # each element's path is walked once per root: deep nesting with a block per level stays linear
            a = e
            path: list[int] = []
            while a > root:
                known = clean.get((a, root))
                if known is not None:
                    ok = known
                    break
                path.append(a)
                bad = junk.get(a)
                if bad is None:
                    bad = junk[a] = _is_junk_container(m, a)
                if bad:
                    ok = False
                    break
                a = parent[a]
            for x in path:
                clean[(x, root)] = ok
        if ok and b.link_chars > 0.6 * len(b.text):
            ok = False
        (kept if ok else dropped).append(b)
    return kept, dropped
