"""StripHTML stage: HTML chunks become main text, plain text passes untouched, empty pages dropped."""

from __future__ import annotations

import gzip
import json
import time
from pathlib import Path

import pytest

import tokenslim
from tokenslim import Pipeline, Result
from tokenslim.errors import ConfigError, InputTooLarge
from tokenslim.html import looks_like_html
from tokenslim.stages import StripHTML


@pytest.fixture(scope="module")
def page(data_dir: Path) -> tuple[str, str]:
    root = data_dir / "article_extraction_benchmark"
    gt = json.loads((root / "ground-truth.json").read_text(encoding="utf-8"))
    pid = sorted(gt)[2]
    return gzip.open(root / "html" / f"{pid}.html.gz").read().decode("utf-8"), gt[pid]["articleBody"]


def test_looks_like_html_detection(hotpot):
    assert looks_like_html("  \n<!DOCTYPE html><html><body><p>x</p></body></html>")
    assert looks_like_html("<div class='a'>text</div>")
    assert looks_like_html("<p>para</p>")
    assert not looks_like_html("a < b and b > c, so <b is not a tag")
    assert not looks_like_html("<3 this recipe")
    assert not looks_like_html("< div>")
    assert not looks_like_html("")
    # real plain-text passages are never taken for HTML
    passages = [c["paragraph_text"] for ex in hotpot[:50] for c in ex["contexts"]]
    assert passages and not any(looks_like_html(p) for p in passages)


def test_mixed_chunks(page, hotpot):
    html, gold = page
    plain = hotpot[0]["contexts"][0]["paragraph_text"]
    hidden = f'<html><body><article><p>{gold.split(chr(10))[0]}</p><div style="display:none">SECRET ORDER</div></article></body></html>'
    r = Result.create("q", [plain, html, "<div><span> </span></div>", hidden, "x < y"])
    r = StripHTML()(r)
    texts = [c.text for c in r.chunks]
    assert texts[0] == plain and texts[-1] == "x < y"
    assert r.chunks[0] is not None and r.chunks[0].metadata.get("html_removed") is None
    main = r.chunks[1]
    assert gold.split("\n")[0][:80] in main.text and "<" not in main.text
    assert main.metadata["html_removed"]["script"]["count"] > 0
    assert "SECRET ORDER" not in r.chunks[2].text
    assert r.chunks[2].metadata["html_removed"]["display_none"] == {"count": 1, "chars": len("SECRET ORDER")}
    reasons = [(d.reason, d.chunk_id) for d in r.drops]
    assert reasons == [("html_boilerplate", "c1"), ("html_empty", "c2"), ("html_boilerplate", "c3")]
    assert "hidden: display_none=1" in r.drops[2].detail
    assert r.original("c1").text == html  # nothing lost: the raw page is kept in the drop
    assert r.drops[0].tokens > 1000


def test_in_pipeline_saves_tokens(page):
    html, _gold = page
    r = Pipeline([StripHTML()]).run("What is this page about?", [html])
    assert r.tokens_after * 5 < r.tokens_before
    assert r.report[0].as_dict()["drops"] == {"html_boilerplate": 1}


def test_plain_text_untouched_and_same_objects(hotpot):
    chunks = [c["paragraph_text"] for ex in hotpot[:20] for c in ex["contexts"]]
    r = Result.create("q", chunks)
    before = list(r.chunks)
    t = time.perf_counter()
    r = StripHTML()(r)
    elapsed = time.perf_counter() - t
    assert all(a is b for a, b in zip(before, r.chunks)) and len(r.chunks) == len(before)
    assert r.drops == []
    assert elapsed < 0.05  # ~200 chunks: a cheap prefix check each


def test_min_chars_drops_short_pages():
    html = "<html><body><p>Short text.</p></body></html>"
    r = StripHTML(min_chars=50)(Result.create("q", [html]))
    assert r.chunks == [] and r.drops[0].reason == "html_empty"
    r = StripHTML()(Result.create("q", [html]))
    assert r.chunks[0].text == "Short text."


def test_params_and_validation():
    s = StripHTML(min_chars=5, keep_tables=False)
    assert s.get_params() == {"min_chars": 5, "keep_tables": False, "max_bytes": tokenslim.html.MAX_HTML_BYTES}
    assert repr(s) == "StripHTML(min_chars=5, keep_tables=False)"
    for bad in (StripHTML(min_chars=0), StripHTML(max_bytes=0), StripHTML(keep_tables="yes")):
        with pytest.raises(ConfigError):
            bad.validate()


def test_too_large_page_is_refused():
    with pytest.raises(InputTooLarge):
        StripHTML(max_bytes=100)(Result.create("q", ["<html><body><p>" + "word " * 100 + "</p></body></html>"]))
