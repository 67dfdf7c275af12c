"""Reorder on real MultiHop-RAG chunks: every order is a permutation, each follows its rule."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenslim._chunk import Chunk
from tokenslim._result import Result
from tokenslim.errors import ConfigError
from tokenslim.stages import Dedupe, Reorder
from tokenslim.stages.reorder import ORDERS, reorder_indices


def _result(row: dict, order: list[int] | None = None, **kw: object) -> Result:
    chunks = [Chunk(text=c["text"], score=c["score"], id=f"r{j}") for j, c in enumerate(row["retrieval_list"])]
    if order is not None:
        chunks = [chunks[i] for i in order]
    return Result.create(row["query"], chunks, **kw)


def _ids(result: Result) -> list[str]:
    return [c.id for c in result.chunks]


def test_score_order_is_best_first(multihop_rag: list[dict]) -> None:
    rng = random.Random(0)
    for row in multihop_rag:
        perm = list(range(10))
        rng.shuffle(perm)
        out = Reorder()(_result(row, perm))
        scores = [c.score for c in out.chunks]
        assert scores == sorted(scores, reverse=True)
        assert out.drops == []


def test_original_restores_retrieval_position(multihop_rag: list[dict]) -> None:
    row = multihop_rag[1]
    r = _result(row)
    r.chunks = list(reversed(r.chunks))
    assert _ids(Reorder(order="original")(r)) == [f"r{j}" for j in range(10)]


def test_lost_in_the_middle_puts_the_best_at_both_ends(multihop_rag: list[dict]) -> None:
    row = multihop_rag[4]
    out = Reorder(order="lost_in_the_middle")(_result(row, [9, 3, 0, 7, 1, 5, 2, 8, 4, 6]))
    by_score = sorted(out.chunks, key=lambda c: -c.score)
    assert out.chunks[0] is by_score[0] and out.chunks[-1] is by_score[1]
    assert out.chunks[1] is by_score[2] and out.chunks[-2] is by_score[3]
    middle = {c.id for c in out.chunks[4:6]}
    assert middle == {by_score[8].id, by_score[9].id}


def test_stable_prefix_ignores_query_and_retrieval_order(multihop_rag: list[dict]) -> None:
    row = multihop_rag[6]
    rng = random.Random(1)
    prompts = set()
    for query in ("first question", "a different question"):
        perm = list(range(10))
        rng.shuffle(perm)
        r = _result(dict(row, query=query), perm)
        r.chunks = [Chunk(c.text, score=rng.random(), id=f"x{k}") for k, c in enumerate(r.chunks)]
        prompts.add(Reorder(order="stable_prefix")(r).context_text())
    assert len(prompts) == 1
    # windows of one article sit together
    out = Reorder(order="stable_prefix")(_result(row))
    titles = [c.text.split("\n")[1] for c in out.chunks]
    assert titles == sorted(titles)


def test_stable_prefix_after_dedupe_keeps_question_last(multihop_rag: list[dict]) -> None:
    r = Reorder(order="stable_prefix")(Dedupe()(_result(multihop_rag[0])))
    assert r.to_prompt().endswith("Question: " + multihop_rag[0]["query"])


def test_missing_scores_fall_back_to_relevance_then_arrival(multihop_rag: list[dict]) -> None:
    row = multihop_rag[2]
    texts = [c["text"] for c in row["retrieval_list"]]
    rel = [0.1, 0.9, 0.5, 0.3, 0.7, 0.2, 0.8, 0.4, 0.6, 0.0]
    with_rel = [Chunk(t, id=f"r{j}", metadata={"relevance": rel[j]}) for j, t in enumerate(texts)]
    out = Reorder()(Result.create(row["query"], with_rel))
    assert [c.metadata["relevance"] for c in out.chunks] == sorted(rel, reverse=True)
    partial = [Chunk(t, id=f"r{j}", score=0.5 if j % 2 else None) for j, t in enumerate(texts)]
    # without a full set of scores the arrival order is the ranking
    assert _ids(Reorder()(Result.create(row["query"], partial))) == [f"r{j}" for j in range(10)]
    litm = _ids(Reorder(order="lost_in_the_middle")(Result.create(row["query"], partial)))
    assert litm == ["r0", "r2", "r4", "r6", "r8", "r9", "r7", "r5", "r3", "r1"]


def test_retriever_scores_win_over_relevance(multihop_rag: list[dict]) -> None:
    row = multihop_rag[3]
    chunks = [Chunk(c["text"], score=c["score"], id=f"r{j}", metadata={"relevance": j}) for j, c in enumerate(row["retrieval_list"])]
    assert reorder_indices(chunks, "score") == sorted(range(10), key=lambda j: -row["retrieval_list"][j]["score"])


def test_bad_order_raises_config_error() -> None:
    with pytest.raises(ConfigError):
        Reorder(order="random").validate()
    with pytest.raises(ConfigError):
        Reorder(source_keys="title").validate()
    assert "order='original'" in repr(Reorder(order="original"))


@settings(max_examples=80, deadline=None)
@given(
    order=st.sampled_from(ORDERS),
    scores=st.lists(st.one_of(st.none(), st.floats(-1, 1)), min_size=0, max_size=10),
    row_index=st.integers(0, 7),
)
def test_every_order_is_a_permutation(multihop_rag: list[dict], order: str, scores: list, row_index: int) -> None:
    texts = [c["text"] for c in multihop_rag[row_index]["retrieval_list"]]
    chunks = [Chunk(texts[i % 10], score=s) for i, s in enumerate(scores)]
    r = Result.create("q", chunks)
    before = list(r.chunks)
    out = Reorder(order=order)(r)
    assert sorted(c.id for c in out.chunks) == sorted(c.id for c in before)
    assert out.drops == [] and out.tokens_after == out.tokens_before
