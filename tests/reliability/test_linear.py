"""Near-linear cost on adversarial input (issue 15), CI-sized.

benchmarks/bounds.py measures the same shapes at their stated sizes (t(n) <= 2 s,
exponent <= 1.3, RSS <= 1 GiB, wall time). Here each shape is timed at n and 2n in CPU
time of this process (steadier than wall time on a shared 2-core machine), the fastest
of five interleaved runs each, and the growth exponent log2(t(2n)/t(n)) must stay under
1.5: a quadratic path gives about 2 (the shapes were chosen because they did), while
linear work with fixed overheads gives 1 or less. Where the work can be counted (pair
checks in Dedupe), the count is asserted instead of a time.
"""

from __future__ import annotations

import math

import pytest

import tokenslim
from tokenslim import Chunk
from tokenslim.bench.adversarial import SHAPES, QUERY, growth, run_request
from tokenslim.stages import Dedupe

# Timing growth at n and 2n: ~70 s in all, and CPU-time ratios wobble on a loaded 2-core machine.
pytestmark = pytest.mark.slow

# CI sizes: large enough that a quadratic path would dominate the fixed cost of a run, and past the
# sizes where caches bend the curve on some CPUs (on an AMD EPYC, style_attribute measured exponents
# of 1.3-1.6 from 80,000 to 160,000 characters and 1.1-1.25 from 240,000 up, collector on)
CI_N = {
    "many_chunks": 2_000,
    "shared_title": 2_000,
    "equal_scores": 2_000,
    "style_no_brace": 80_000,
    "dots_run": 20_000,
    "unclosed_brackets": 1_000,
    "parens": 10_000,
    "unclosed_a": 40_000,
    "system_messages": 1_000,
    "long_title": 1_000,
    "style_attribute": 240_000,
    "repeated_selectors": 6_000,
    "opening_phrases": 1_000,
    "table_rows": 4_000,
    "json_siblings": 1_000,
    "edge_boxes": 2_000,
    "nested_details": 2_000,
    "invisible_chars": 4_000,
}


@pytest.fixture(scope="module", autouse=True)
def warm() -> None:
    run_request(SHAPES["many_chunks"].build(10))  # imports and tokenizer, outside any timing


@pytest.mark.parametrize("name", sorted(CI_N))
def test_growth_from_n_to_2n_is_near_linear(name: str) -> None:
    assert set(CI_N) == set(SHAPES)
    # the algorithms' growth: the cyclic collector bends the curve by itself (see run_request), and on a
    # CI machine sharing its 2 cores with the model servers it turned 1.2 into 2.4 once
    # once, and a load spike can still double a measurement (long_title measured 1.62 in one clean-clone
    # CI run and 1.0-1.3 here on the same code): measured again, up to three times, the lowest counts; a
    # quadratic path gives about 2 every time
    tries = []
    for _ in range(3):
        tries.append(growth(SHAPES[name], CI_N[name], repeats=5, collector=False))
        if tries[-1].cpu_exponent <= 1.5:
            break
    g = min(tries, key=lambda t: t.cpu_exponent)
    assert g.cpu_exponent <= 1.5, (f"{name}: CPU t({CI_N[name]})={g.cpu_n:.3f} s, t(2n)={g.cpu_2n:.3f} s, "
                                   f"exponent {g.cpu_exponent:.2f} (lowest of {len(tries)})")


@pytest.mark.parametrize("name", sorted(CI_N))
def test_adversarial_shapes_lose_nothing_silently(name: str) -> None:
    request = SHAPES[name].build(CI_N[name] // 4)
    pipe = tokenslim.default_pipeline(token_budget=request.get("token_budget"))
    r = pipe.run(QUERY, request["chunks"], history=request.get("history"))
    assert all(s.error is None for s in r.report)
    dropped = {d.chunk_id for d in r.drops if d.kind == "chunk"}
    kept = {c.id for c in r.chunks}
    assert kept.isdisjoint(dropped) and len(kept | dropped) == len(request["chunks"])
    turns = [d for d in r.drops if d.kind == "turn"]
    assert len(r.history) + len(turns) == len(request.get("history") or [])
    if request.get("token_budget"):
        assert r.tokens_after <= request["token_budget"] < r.tokens_before


def test_overlap_pair_checks_grow_linearly_within_one_source(monkeypatch, hotpot) -> None:
    # n long windows of one source (same title) that do not overlap: before, every pair was
    # tested (n^2/2); now each window is tested against windows holding its rarest opening
    # word, at most MAX_CANDIDATES of them.
    from tokenslim.stages import dedupe

    calls: list[int] = []
    real = dedupe._merge
    monkeypatch.setattr(dedupe, "_merge", lambda *a: calls.append(1) or real(*a))
    paras = [c["paragraph_text"] for row in hotpot[:100] for c in row["contexts"]]

    def checks(n: int) -> int:
        calls.clear()
        chunks = [Chunk(f"Window {i}: {paras[i % len(paras)]}", metadata={"title": "One long book"}) for i in range(n)]
        Dedupe(threshold=None)(tokenslim.Result.create("q", chunks))
        return len(calls)

    small, large = checks(400), checks(800)
    assert large <= 800 * dedupe.MAX_CANDIDATES
    assert math.log2(max(large, 1) / max(small, 1)) <= 1.2, (small, large)


@pytest.mark.parametrize("enabled", [True, False])
def test_run_request_leaves_the_collector_as_the_caller_had_it(enabled: bool) -> None:
    import gc

    before = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        for collector in (True, False):
            run_request(SHAPES["many_chunks"].build(10), collector=collector)
            assert gc.isenabled() is enabled
    finally:
        (gc.enable if before else gc.disable)()
