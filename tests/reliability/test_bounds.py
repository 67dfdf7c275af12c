"""Bounded cost, CI-sized: deep nesting, a 5 MB page, 20,000 chunks, a 1 MB single-line chunk.

The full-size cases (50 MB page, 100,000-deep nesting, 100,000 chunks) with wall time
and peak RSS are in benchmarks/bounds.py. Here each case proves the mechanism:

* no recursion: the call runs under a recursion limit only ~250 frames above the
  caller, so any walk whose Python stack grows with nesting depth fails;
* memory linear in the input: tracemalloc's peak stays under a fixed multiple of
  the input size;
* oversize input is refused up front with InputTooLarge naming the limit.
"""

from __future__ import annotations

import inspect
import sys
import tracemalloc

import pytest

import tokenslim
from tokenslim import Pipeline
from tokenslim.errors import InputTooLarge
from tokenslim.html import MAX_HTML_BYTES, extract_main_text
from tokenslim.stages import StripHTML

from reliability_strategies import hotpot_paragraphs

PARAS = hotpot_paragraphs(400)


def _shallow_stack(call):
    """Run ``call`` with a recursion limit 250 frames above the current depth."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack(0)) + 250)
    try:
        return call()
    finally:
        sys.setrecursionlimit(old)


def _traced_peak(call) -> tuple[object, int]:
    tracemalloc.start()
    try:
        out = call()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _nested(depth: int) -> str:
    return "<html><body>" + "<div>" * depth + f"<p>{PARAS[0]}</p>" + "</div>" * depth + "</body></html>"


def test_20k_deep_nesting_extract_no_recursion():
    html = _nested(20_000)
    text = _shallow_stack(lambda: extract_main_text(html))
    assert " ".join(PARAS[0].split()) in text


def test_20k_deep_nesting_unclosed_and_pipeline():
    html = "<html><body>" + "<div><span>" * 20_000 + f"<p>{PARAS[1]}</p>"  # never closed
    r = _shallow_stack(lambda: tokenslim.default_pipeline().run("Who is Shirley Temple?", [html, PARAS[2]]))
    assert r.report[0].error is None
    assert any("Shirley Temple" in c.text for c in r.chunks)


def test_5mb_page_memory_linear():
    body = "".join(f"<div class='post'><p>{PARAS[i % len(PARAS)]}</p></div>" for i in range(20_000))
    page = "<html><body><nav>Home</nav><article>" + body + "</article></body></html>"
    page = page[: 5_000_000] if len(page) > 5_000_000 else page
    assert len(page) >= 4_000_000
    text, peak = _traced_peak(lambda: extract_main_text(page))
    assert " ".join(PARAS[5].split()) in text
    assert peak < 12 * len(page), f"peak {peak / 2**20:.0f} MiB for a {len(page) / 2**20:.0f} MiB page"


def test_oversize_page_refused_up_front():
    page = "<html><body>" + "<p>" + "x" * 2_000_000 + "</p></body></html>"
    pipe = Pipeline([StripHTML(max_bytes=1_000_000)], on_error="skip")  # refusals raise even when failing open
    with pytest.raises(InputTooLarge, match="exceeds max_bytes=1,000,000; raise max_bytes or split the page"):
        pipe.run("q", [page])
    assert MAX_HTML_BYTES == 50_000_000  # the documented default limit


def test_20k_chunks_through_default_pipeline():
    chunks = [PARAS[i % len(PARAS)] for i in range(20_000)]
    r, peak = _traced_peak(lambda: tokenslim.default_pipeline().run("Which university is in Kansas City?", chunks))
    dropped = {d.chunk_id for d in r.drops if d.kind == "chunk"}
    assert len(r.chunks) + len(dropped) == 20_000
    # no fixed top-k: Dedupe folds the repeats, CompressDocuments' keep decision drops what is not needed
    assert len(r.chunks) <= len(set(PARAS)) and r.tokens_after < r.tokens_before / 100
    size = sum(len(c) for c in chunks)
    assert peak < 40 * size, f"peak {peak / 2**20:.0f} MiB for {size / 2**20:.0f} MiB of chunks"


def test_1mb_single_line_chunk():
    line = " ".join(PARAS)
    while len(line) < 1_000_000:
        line += " " + line
    line = line[:1_000_000]
    assert "\n" not in line
    r = _shallow_stack(lambda: tokenslim.default_pipeline().run("When did Meet Corliss Archer air?", [line]))
    assert r.chunks and 0 < len(r.chunks[0].text) < len(line)
    assert r.chunks[0].text.split(". ")[0] in line


def test_mmr_cost_is_quadratic_not_cubic(monkeypatch):
    from tokenslim.stages import TrimTopK, trim_top_k

    calls = []
    real = trim_top_k._jaccard
    monkeypatch.setattr(trim_top_k, "_jaccard", lambda a, b: calls.append(1) or real(a, b))
    n = 300
    chunks = [tokenslim.Chunk(text=PARAS[i], score=1.0 - i / n) for i in range(n)]
    r = Pipeline([TrimTopK(k=5, mmr_lambda=0.5)]).run("Which university is in Kansas City?", chunks)
    assert len(r.chunks) == 5
    assert len(calls) <= n * (n - 1) // 2  # each pair compared at most once (the cubic version: ~n^3/6)
