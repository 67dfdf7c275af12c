"""TrimTopK on real HotpotQA paragraphs (no scores) and real MultiHop-RAG retriever output (scores)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenslim import Pipeline, Result
from tokenslim.bench import datasets
from tokenslim.errors import ConfigError
from tokenslim.stages import TrimTopK

HOTPOT = datasets.hotpotqa(limit=40)
MHR = datasets.multihop_rag()


def _run(stage: TrimTopK, query: str, chunks: list) -> Result:
    return Pipeline([stage]).run(query, chunks)


def _accounted(result: Result, n_in: int) -> None:
    dropped = {d.chunk_id for d in result.drops if d.kind == "chunk"}
    kept = {c.id for c in result.chunks}
    assert not dropped & kept
    assert len(dropped) + len(kept) == n_in


def test_unscored_chunks_ranked_by_bm25_keep_the_named_entity_and_input_order() -> None:
    ex = HOTPOT[0]  # "...the woman who portrayed Corliss Archer in the film Kiss and Tell?"
    r = _run(TrimTopK(k=3), ex.query, ex.chunks)
    assert len(r.chunks) == 3
    titles = [c.metadata["title"] for c in r.chunks]
    assert "Kiss and Tell (1945 film)" in titles
    positions = [c.metadata["position"] for c in r.chunks]
    assert positions == sorted(positions)
    assert sorted(c.metadata["rank"] for c in r.chunks) == [1, 2, 3]
    assert {d.reason for d in r.drops} == {"beyond_top_k"} and len(r.drops) == 7
    assert r.chunks[0].metadata["relevance_source"] == "bm25"
    _accounted(r, 10)


def test_retriever_scores_are_used_when_present_with_min_score() -> None:
    ex = MHR[0]
    floor = sorted(c.score for c in ex.chunks)[5]
    r = _run(TrimTopK(k=None, min_score=floor), ex.query, ex.chunks)
    assert all(c.score >= floor for c in r.chunks)
    assert all(d.reason == "below_min_score" for d in r.drops)
    assert len(r.chunks) == sum(c.score >= floor for c in ex.chunks)
    assert r.chunks[0].metadata["relevance_source"] == "retriever"


def test_score_cliff_cuts_after_a_large_relative_drop() -> None:
    ex = HOTPOT[1]
    scores = [0.9, 0.88, 0.3, 0.29, 0.28, 0.1, 0.05, 0.04, 0.03, 0.02][: len(ex.chunks)]
    chunks = [c.__class__(c.text, s, c.id, c.metadata) for c, s in zip(ex.chunks, scores)]
    r = _run(TrimTopK(k=None, cliff=0.5), ex.query, chunks)
    assert [c.score for c in r.chunks] == [0.9, 0.88]
    assert {d.reason for d in r.drops} == {"score_cliff"}


def test_token_budget_skips_what_does_not_fit() -> None:
    ex = HOTPOT[2]
    r = _run(TrimTopK(k=None, max_tokens=300), ex.query, ex.chunks)
    assert r.chunk_tokens <= 300
    assert r.chunks and {d.reason for d in r.drops} == {"over_token_budget"}
    _accounted(r, len(ex.chunks))


def test_mmr_prefers_diverse_chunks_on_overlapping_retrieval() -> None:
    ex = MHR[0]  # sliding-window chunks of the same few articles
    plain = _run(TrimTopK(k=4), ex.query, ex.chunks)
    mmr = _run(TrimTopK(k=4, mmr_lambda=0.3), ex.query, ex.chunks)
    assert len(mmr.chunks) == 4
    assert {c.id for c in mmr.chunks} != {c.id for c in plain.chunks}
    assert "mmr_redundant" in {d.reason for d in mmr.drops}
    _accounted(mmr, len(ex.chunks))


def test_embedding_and_hybrid_relevance_offline_model_loaded_once_across_threads() -> None:
    from concurrent.futures import ThreadPoolExecutor

    from tokenslim._internal import relevance

    ex = HOTPOT[0]
    stage = TrimTopK(k=3, relevance="hybrid")
    pipe = Pipeline([stage])
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: pipe.run(ex.query, ex.chunks), range(4)))
    model = relevance.load_embedding_model()
    assert relevance.load_embedding_model() is model
    titles = [[c.metadata["title"] for c in r.chunks] for r in results]
    assert all(t == titles[0] for t in titles) and "Kiss and Tell (1945 film)" in titles[0]
    assert results[0].chunks[0].metadata["relevance_source"] == "hybrid"
    emb = relevance.embedding_scores(ex.query, [c.text for c in ex.chunks])
    best = max(range(len(emb)), key=emb.__getitem__)
    assert "Corliss" in ex.chunks[best].text


@pytest.mark.parametrize(
    "params",
    [{"k": 0}, {"k": 2.5}, {"cliff": 1.5}, {"min_keep": -1}, {"max_tokens": 0}, {"mmr_lambda": 2}, {"relevance": "tfidf"}],
)
def test_bad_parameters_raise_config_error(params: dict) -> None:
    with pytest.raises(ConfigError):
        Pipeline([TrimTopK(**params)]).run("q", ["a"])


@settings(max_examples=40, deadline=None)
@given(
    ex=st.sampled_from(HOTPOT),
    k=st.one_of(st.none(), st.integers(1, 12)),
    cliff=st.one_of(st.none(), st.floats(0.05, 0.95)),
    min_score=st.one_of(st.none(), st.floats(0, 1)),
    max_tokens=st.one_of(st.none(), st.integers(1, 2000)),
    mmr=st.one_of(st.none(), st.floats(0, 1)),
)
def test_property_every_removed_chunk_is_recorded_and_tokens_never_grow(ex, k, cliff, min_score, max_tokens, mmr) -> None:
    stage = TrimTopK(k=k, cliff=cliff, min_score=min_score, max_tokens=max_tokens, mmr_lambda=mmr, min_keep=0)
    r = _run(stage, ex.query, ex.chunks)
    assert r.tokens_after <= r.tokens_before
    _accounted(r, len(ex.chunks))
    if k is not None:
        assert len(r.chunks) <= k
    if max_tokens is not None:
        assert r.chunk_tokens <= max_tokens
    originals = {c.id: c.text for c in ex.chunks if c.id}
    assert all(originals[c.id] == c.text for c in r.chunks)
