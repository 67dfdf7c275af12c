"""Open retrieval for the compression benchmark: BM25 top-20 over the pooled shared passages.

``tokenslim.bench.datasets.hotpotqa_open`` / ``twowiki_open`` and the peers of
``benchmarks/bench_compression.py`` that read ``Chunk.score``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from tokenslim import Chunk
from tokenslim.bench import datasets as D

ROOT = Path(__file__).resolve().parents[2]


def _key(examples: list[D.Example]) -> list[tuple[str, list[tuple[str | None, float | None, str, str]]]]:
    return [(e.id, [(c.id, c.score, str(c.metadata["title"]), c.text) for c in e.chunks]) for e in examples]


@pytest.fixture(scope="module")
def opened(data_dir: Path) -> dict[str, list[D.Example]]:
    return {"hotpotqa_open": D.hotpotqa_open(6), "twowiki_open": D.twowiki_open(6)}


def test_registered_and_same_questions_as_the_distractor_sets(opened: dict[str, list[D.Example]]) -> None:
    assert D.DATASETS["hotpotqa_open"] is D.hotpotqa_open and D.DATASETS["twowiki_open"] is D.twowiki_open
    for name, base in (("hotpotqa_open", D.hotpotqa(6)), ("twowiki_open", D.twowiki(6))):
        got = opened[name]
        assert [(e.id, e.query, e.answers) for e in got] == [(e.id, e.query, e.answers) for e in base]


def test_twenty_chunks_best_first_with_scores_and_titles(opened: dict[str, list[D.Example]]) -> None:
    passages, _ = D.open_corpus()
    for examples in opened.values():
        for e in examples:
            assert len(e.chunks) == D.OPEN_TOP_K == 20
            scores = [c.score for c in e.chunks]
            assert all(isinstance(s, float) for s in scores) and scores == sorted(scores, reverse=True)  # type: ignore[type-var]
            assert scores[0] > 0
            for c in e.chunks:
                assert set(c.metadata) == {"title"} and c.metadata["title"]
                i = int(str(c.id).removeprefix("w"))  # the id is the corpus position, nothing of the question
                assert passages[i] == (c.metadata["title"], c.text)
            assert len({c.id for c in e.chunks}) == 20
            assert set(e.gold["retrieved_supporting"]) <= set(e.gold["supporting"])


def test_deterministic_and_independent_of_limit(opened: dict[str, list[D.Example]]) -> None:
    D.open_corpus.cache_clear()  # rebuilt from the files: same corpus, same ranking
    assert _key(D.hotpotqa_open(6)) == _key(opened["hotpotqa_open"])
    assert _key(D.hotpotqa_open(2)) == _key(opened["hotpotqa_open"][:2])
    assert _key(D.load("twowiki_open", 3)) == _key(opened["twowiki_open"][:3])


def test_pool_is_both_sets_deduplicated_and_holds_no_question(data_dir: Path) -> None:
    passages, bm25 = D.open_corpus()
    hot, two = D.hotpotqa(), D.twowiki()
    both = [(str(c.metadata["title"]), c.text) for e in [*hot, *two] for c in e.chunks]
    assert len(passages) == len(set(passages)) == len({(t, " ".join(x.split())) for t, x in both}) < len(both)
    assert set(passages) == set(both)
    assert bm25.corpus_size == len(passages)
    ids = {e.id for e in [*hot, *two]}
    questions = {e.query for e in [*hot, *two]}
    assert not any(t in ids or x in ids or x in questions for t, x in passages)
    assert not any(q_id in x for q_id in ids for _, x in passages)


def test_the_gold_passages_are_often_retrieved(opened: dict[str, list[D.Example]]) -> None:
    """BM25 over title + text finds most supporting passages (a broken index finds none)."""
    found = sum(len(e.gold["retrieved_supporting"]) for ex in opened.values() for e in ex)
    total = sum(len(e.gold["supporting"]) for ex in opened.values() for e in ex)
    assert found >= 0.6 * total


@pytest.fixture(scope="module")
def bench() -> object:
    spec = importlib.util.spec_from_file_location("bench_compression", ROOT / "benchmarks" / "bench_compression.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_compression", module)
    spec.loader.exec_module(module)
    return module


def test_bench_runs_the_new_sets_in_every_format(bench: object) -> None:
    table = bench._DATASETS  # type: ignore[attr-defined]
    for name in ("twowiki", "hotpotqa_open", "twowiki_open"):
        assert table[name][1:] == ("answer_kept", True)
    assert set(bench.PARETO_DATASETS) == {"hotpotqa", "twowiki", "hotpotqa_open", "twowiki_open"}  # type: ignore[attr-defined]


def test_retriever_top_k_peer_follows_chunk_scores_within_budget(bench: object, opened: dict[str, list[D.Example]]) -> None:
    from tokenslim import Result

    ex = opened["hotpotqa_open"][0]
    ex = D.Example(ex.id, ex.query, list(reversed(ex.chunks)), ex.answers)  # given worst first
    peers = bench._peers([ex])  # type: ignore[attr-defined]
    assert ("retriever top-k", "chunks", "retriever") in peers
    tok = None  # the default tokenizer (cl100k_base)
    full = bench._peer(ex, "chunks", "retriever", 10**6, tok)  # type: ignore[attr-defined]
    assert len(full.chunks) == 20
    budget = full.tokens_after // 4
    got = bench._peer(ex, "chunks", "retriever", budget, tok)  # type: ignore[attr-defined]
    assert 0 < got.tokens_after <= budget
    kept = {c.id for c in got.chunks}
    best = max(ex.chunks, key=lambda c: c.score or 0.0)
    assert best.id in kept or Result.create(ex.query, [Chunk(best.text)]).tokens_after > budget
    untitled = D.Example(ex.id, ex.query, [Chunk(c.text) for c in ex.chunks], ex.answers)
    assert all(p[2] != "retriever" for p in bench._peers([untitled]))  # type: ignore[attr-defined]
