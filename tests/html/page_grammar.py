"""A grammar of pages for differential fuzzing against Chromium (tests/html/test_browser_fuzz.py,
benchmarks/bench_browser_fuzz.py).

A page is a lead paragraph of plain prose, then marked text nodes (``qz000102``...) each inside
1-3 nested elements; each element gets, at random, a CSS declaration (a property with one of its
values, hiding ones and harmless ones) written inline or as a stylesheet rule under one of
several selector forms, a hiding attribute, or is an element a browser never renders. Everything
is drawn from one ``random.Random(seed)``, so a seed names a page.
"""

from __future__ import annotations

import random
from typing import Any

LEAD = ("The committee met on Tuesday to review the budget for the coming year, and after a long "
        "discussion it agreed to fund the new library, the repairs to the bridge and the school meals.")
TAGS = ["div", "p", "span", "section", "em", "b", "a", "li", "blockquote", "label", "small", "button"]
NEVER = ["noembed", "noframes", "rp", "progress", "dialog", "template", "noscript", "datalist"]
DECLS = {
    "display": ["none", "block", "inline", "contents", "flex"],
    "visibility": ["hidden", "collapse", "visible"],
    "opacity": ["0", "0.01", "0.5", "1", "calc(0)", "calc(1 - 1)", "calc(0.5 + 0.4)"],
    "filter": ["opacity(0)", "opacity(1)", "blur(1px)"],
    "font-size": ["0", "0px", "1px", "2px", "12px", "0.1em", "16px"],
    "color": ["#fff", "white", "transparent", "rgba(0,0,0,0)", "#333", "red", "color-mix(in srgb, white 100%, black)",
              "color-mix(in srgb, white 20%, black)"],
    "-webkit-text-fill-color": ["transparent", "#222", "currentcolor"],
    "position:absolute;left": ["-9999px", "10px", "9999px"],
    "position:absolute;top": ["-9999px", "20px"],
    "position:relative;left": ["-9999px", "-6px"],
    "position:fixed;bottom": ["-9999px", "0"],
    "position:fixed;right": ["-9999px", "0"],
    "position:fixed;top": ["9999px", "-9999px"],
    "position:sticky;top": ["-9999px", "0"],
    "transform": ["scale(0)", "scaleY(0)", "rotateX(90deg)", "rotateY(90deg)", "rotateX(20deg)", "translateX(-10000px)",
                  "scale(1)", "matrix(1,0,0,0,0,0)"],
    "clip-path": ["inset(50%)", "circle(0)", "inset(0)"],
    "text-indent": ["-9999px", "2em"],
    "content-visibility": ["hidden", "visible"],
    "height:0;overflow": ["hidden", "visible"],
    "max-height:0;overflow": ["clip"],
    "zoom": ["0.01", "1"],
}
# Grammar 2: grammar 1 with the classes closed later (masks, size and paint containment, text shadows, gradient
# text, text security, font-size-adjust, colour filters, skews, viewport-unit and calc() offsets, xywh()), each with
# harmless values too. A separate grammar, so grammar 1's seeds keep naming the same pages.
DECLS_2 = {
    **DECLS,
    "filter": DECLS["filter"] + ["invert(1)", "brightness(100)", "brightness(0)", "invert(1) hue-rotate(180deg)",
                                 "grayscale(1)", "contrast(0)"],
    "transform": DECLS["transform"] + ["skewX(90deg)", "skew(10deg)"],
    "position:absolute;top": DECLS["position:absolute;top"] + ["-100vh", "calc(-100vh - 10px)"],
    "clip-path": DECLS["clip-path"] + ["xywh(0 0 0 0)", "xywh(0 0 100% 100%)"],
    "mask-image": ["linear-gradient(transparent,transparent)", "linear-gradient(#000,#000)",
                   "linear-gradient(#000,transparent)"],
    "mask-image:linear-gradient(#000,#000);mask-size": ["0 0", "100% 100%"],
    "contain": ["strict", "size", "paint", "content", "layout"],
    "contain:size;overflow": ["hidden", "visible"],
    "text-shadow": ["0 0 0 #000", "0 0 12px #000", "1px 1px 0 #fff"],
    "background-clip:text;background-color": ["#b00", "#fff"],
    "background-clip:text;background-image": ["linear-gradient(#c00,#00c)"],
    "-webkit-text-security": ["disc", "none"],
    "font-size-adjust": ["0", "0.05", "0.5"],
    "max-height:calc(0px);overflow": ["hidden"],
}
GRAMMARS = {1: DECLS, 2: DECLS_2}
SELECTORS = ["class", "id", "attribute", "descendant", "is", "inline", "inline", "inline"]
ATTRIBUTES = [" hidden", ' aria-hidden="true"', " popover", ' hidden="until-found"']


def _decl(rng: random.Random, decls: dict[str, list[str]]) -> str:
    prop = rng.choice(list(decls))
    return f"{prop}:{rng.choice(decls[prop])}"


def page(seed: int, *, nodes: int = 8, grammar: int = 1) -> tuple[str, list[str]]:
    """``(html, markers)``: the page for ``seed`` (of grammar 1 or 2) and the marker word of each text node, in order."""
    decls = GRAMMARS[grammar]
    rng = random.Random(seed)
    rules: list[str] = []
    parts = [f"<p>{LEAD}</p>"]
    markers = []
    for n in range(nodes):
        marker = f"qz{seed:06d}{n:02d}"
        markers.append(marker)
        inner = f"Marker {marker} is a short sentence of text."
        for depth in range(rng.randint(1, 3)):
            if rng.random() < 0.08:
                tag = rng.choice(NEVER)
                inner = f"<{tag}>{inner}</{tag}>"
                continue
            tag = rng.choice(TAGS)
            attrs = ""
            if rng.random() < 0.7:
                form = rng.choice(SELECTORS)
                decl = _decl(rng, decls)
                name = f"k{n}x{depth}"
                if form == "inline":
                    attrs = f' style="{decl}"'
                else:
                    attrs, sel = {
                        "class": (f' class="{name}"', f".{name}"),
                        "id": (f' id="{name}"', f"#{name}"),
                        "attribute": (f' data-k="{name}"', f'[data-k="{name}"]'),
                        "descendant": (f' class="{name}"', f"body .{name}"),
                        "is": (f' class="{name}"', f":is(.zz, .{name})"),
                    }[form]
                    rules.append(f"{sel}{{{decl}}}")
            elif rng.random() < 0.1:
                attrs = rng.choice(ATTRIBUTES)
            inner = f"<{tag}{attrs}>{inner}</{tag}>"
        parts.append(f"<div>{inner}</div>")
    parts.append(f"<p>{LEAD}</p>")
    style = f"<style>{' '.join(rules)}</style>" if rules else ""
    return (f"<!DOCTYPE html><html><head><title>Fuzz {seed}</title>{style}</head><body><article>"
            + "\n".join(parts) + "</article></body></html>"), markers


def compare(browser: Any, seed: int, grammar: int = 1) -> list[tuple[str, bool, bool]]:
    """``(marker, Chromium shows it, tokenslim's walk keeps it)`` per text node of page ``seed``."""
    from tokenslim.html._extract import run

    html, markers = page(seed, grammar=grammar)
    shown = dict.fromkeys(markers, False)
    for node in browser.text_nodes(html):
        if node.visible:
            for m in markers:
                if m in node.text:
                    shown[m] = True
    kept = run(html, select=False).text  # visibility alone: boilerplate selection would drop link-only blocks
    return [(m, shown[m], m in kept) for m in markers]
