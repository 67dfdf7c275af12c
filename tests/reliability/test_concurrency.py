"""One Pipeline instance shared by 8 threads gives the sequential results; models load once."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

import tokenslim
from tokenslim import Pipeline
from tokenslim._internal import embeddings
from tokenslim.bench import datasets
from tokenslim.stages import CompressDocuments, Dedupe, Reorder, StripHTML, TrimTopK


def _fingerprint(r: tokenslim.Result) -> tuple:
    return (
        [(c.id, c.text) for c in r.chunks],
        [(d.stage, d.kind, d.reason, d.chunk_id, d.detail) for d in r.drops],
        [(s.name, s.tokens_in, s.tokens_out, s.chunks_out) for s in r.report],
        r.tokens_after,
    )


@pytest.fixture(scope="module")
def requests():
    reqs = [(ex.query, ex.chunks) for ex in datasets.hotpotqa(limit=12)]
    reqs += [(ex.query, ex.chunks) for ex in datasets.multihop_rag()]
    # one raw HTML page per request kind, so StripHTML works too
    ex = datasets.hotpotqa(limit=13)[12]
    page = "<html><body><nav>Home</nav><article>" + "".join(f"<p>{c.text}</p>" for c in ex.chunks) + "</article></body></html>"
    reqs.append((ex.query, [page, *ex.chunks[:3]]))
    return reqs


def _threaded(pipe: Pipeline, reqs, rounds: int = 3) -> list[tuple]:
    work = [req for _ in range(rounds) for req in reqs]
    start = threading.Barrier(8)

    def one(req):
        return _fingerprint(pipe.run(*req))

    def first(req):
        start.wait()  # all 8 threads enter the pipeline together
        return one(req)

    with ThreadPoolExecutor(max_workers=8) as pool:
        head = list(pool.map(first, work[:8]))
        return head + list(pool.map(one, work[8:]))


@pytest.mark.parametrize("budget", [None, 600])
def test_default_pipeline_threads_match_sequential(requests, budget):
    pipe = tokenslim.default_pipeline(token_budget=budget)
    sequential = [_fingerprint(pipe.run(*req)) for req in requests]
    threaded = _threaded(pipe, requests)
    assert threaded == sequential * 3
    assert any(fp[1] for fp in sequential), "the requests must make the stages drop something"


def test_embedding_stages_load_the_model_once_across_threads(requests, monkeypatch):
    from sentence_transformers import SentenceTransformer

    loads = []

    class Counting(SentenceTransformer):
        def __init__(self, *args, **kwargs):
            loads.append(threading.get_ident())
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(embeddings, "_model", None)
    monkeypatch.setattr("sentence_transformers.SentenceTransformer", Counting)
    pipe = Pipeline(
        [StripHTML(), Dedupe(semantic_threshold=0.95), TrimTopK(k=4, relevance="embedding"),
         CompressDocuments(relevance="hybrid"), Reorder()]
    )
    reqs = requests[:8]
    threaded = _threaded(pipe, reqs, rounds=1)
    assert len(loads) == 1, f"model loaded {len(loads)} times"
    sequential = [_fingerprint(pipe.run(*req)) for req in reqs]
    assert threaded == sequential
    assert len(loads) == 1
