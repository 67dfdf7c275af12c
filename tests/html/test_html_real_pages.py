"""Extraction quality on real pages from the shared benchmarks."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

from tokenslim.html import extract, extract_main_text

_WORD = re.compile(r"\w+")


def shingle_f1(extracted: str, gold: str, n: int = 4) -> float:
    """F1 of 4-word shingle sets (the benchmark's per-page metric)."""

    def sh(text: str) -> set[tuple[str, ...]]:
        w = _WORD.findall(text.lower())
        return {tuple(w[i : i + n]) for i in range(len(w) - n + 1)}

    e, g = sh(extracted), sh(gold)
    if not e or not g:
        return 0.0
    inter = len(e & g)
    p, r = inter / len(e), inter / len(g)
    return 2 * p * r / (p + r) if inter else 0.0


def test_article_pages_reach_shingle_f1_floor(article_pages):
    scores = {pid[:12]: shingle_f1(extract_main_text(html), gold) for pid, html, gold in article_pages}
    assert min(scores.values()) >= 0.9, scores
    assert sum(scores.values()) / len(scores) >= 0.95, scores


def test_boilerplate_is_recorded_and_scripts_removed(article_pages):
    _pid, html, _gold = article_pages[0]
    ex = extract(html)
    assert ex.removed["script"].count > 0 and ex.removed["script"].chars > 1000
    assert ex.removed["boilerplate"].count > 10
    assert "function(" not in ex.text and "{" not in ex.text
    assert ex.title  # the <title> is reported, not mixed into the text


def _traf_page(data_dir: Path, annotations: dict, url: str) -> tuple[str, dict]:
    entry = annotations[url]
    return extract_main_text(gzip.open(data_dir / "trafilatura_eval_subset" / entry["html"]).read()), entry


def test_german_page_keeps_content_and_drops_boilerplate(data_dir, traf_annotations):
    text, entry = _traf_page(data_dir, traf_annotations, "http://lexikon.huettenhilfe.de/obst/banane.html")
    flat = " ".join(text.split())
    for snippet in entry["with"]:
        assert " ".join(snippet.split()) in flat
    for snippet in entry["without"]:
        assert " ".join(snippet.split()) not in flat
    assert "ä" in text or "ü" in text or "ö" in text or "ß" in text  # decoded, not mojibake
    assert "Ã" not in text


def test_links_reduced_to_text_and_lists_rendered(gold_paragraphs):
    a, b, c = gold_paragraphs[:3]
    html = (
        "<html><body><nav><ul><li><a href='/'>Home</a></li><li><a href='/x'>World</a></li></ul></nav>"
        f"<article><h2>Section title</h2><p>{a} <a href='https://example.org/x'>linked words</a> end.</p>"
        f"<ul><li>{b}</li><li>{c}</li></ul>"
        "<table><tr><th>Year</th><th>Value</th></tr><tr><td>2019</td><td>42</td></tr></table></article>"
        "<footer>Copyright 2019 Example Corp</footer></body></html>"
    )
    text = extract_main_text(html)
    assert "## Section title" in text
    assert "linked words end." in text and "https://" not in text and "href" not in text
    assert f"- {b}" in text and f"- {c}" in text
    assert "Year | Value" in text and "2019 | 42" in text
    assert "Copyright" not in text and "Home" not in text
    assert "Year" not in extract(html, keep_tables=False).text


def test_page_hidden_until_a_script_runs_is_read_as_a_reader_without_scripts_sees_it(data_dir, traf_annotations):
    # body.fadein{opacity:0} in the page's stylesheet, <noscript><style>body.fadein{opacity:1}</style></noscript>
    url = "https://blog.teufel.de/musik-und-sport-so-steigern-songs-deine-leistung/"
    text, entry = _traf_page(data_dir, traf_annotations, url)
    flat = " ".join(text.split())
    found = [s for s in entry["with"] if " ".join(s.split()) in flat]
    assert len(found) >= len(entry["with"]) - 1 and len(flat) > 2000
