"""Pipeline.run_batch: same results as run(), per-request settings that never touch the shared pipeline."""

from __future__ import annotations

import pytest

import tokenslim
from tokenslim.bench import datasets
from tokenslim.errors import ConfigError, InputError


def _same(a: tokenslim.Result, b: tokenslim.Result) -> None:
    assert [(c.id, c.text) for c in a.chunks] == [(c.id, c.text) for c in b.chunks]
    assert [(d.stage, d.kind, d.reason, d.detail) for d in a.drops] == [(d.stage, d.kind, d.reason, d.detail) for d in b.drops]
    assert (a.tokens_before, a.tokens_after, a.history) == (b.tokens_before, b.tokens_after, b.history)


def test_run_batch_equals_run_with_per_request_settings() -> None:
    examples = datasets.hotpotqa(6) + datasets.qmsum(2)
    pipe = tokenslim.default_pipeline()
    before = pipe.get_params()
    settings = [{}, {"compress_documents__ratio": 0.5}, {"trim_top_k__k": 2}, {}, {"compress_documents__max_tokens": 60}, {}, {}, {"trim_top_k__k": 1}]
    requests = [
        {"query": e.query, "chunks": e.chunks, "params": s} if s else {"query": e.query, "chunks": e.chunks}
        for e, s in zip(examples, settings)
    ]
    batch = pipe.run_batch(requests)
    assert pipe.get_params() == before  # the shared pipeline was never changed
    for e, s, got in zip(examples, settings, batch):
        alone = tokenslim.default_pipeline().set_params(**s) if s else tokenslim.default_pipeline()
        _same(got, alone.run(e.query, e.chunks))
    # the settings took effect: a smaller budget keeps fewer tokens than the default on the same request
    assert batch[4].tokens_after < pipe.run(examples[4].query, examples[4].chunks).tokens_after


def test_run_batch_accepts_bare_queries_and_refuses_bad_requests() -> None:
    pipe = tokenslim.default_pipeline()
    assert [r.query for r in pipe.run_batch(["a?", {"query": "b?", "chunks": ["x."]}])] == ["a?", "b?"]
    assert pipe.run_batch([]) == []
    with pytest.raises(InputError, match="request 1"):
        pipe.run_batch(["ok", {"chunks": ["no query"]}])
    with pytest.raises(InputError, match="unknown keys"):
        pipe.run_batch([{"query": "q", "budget": 3}])
    with pytest.raises(ConfigError):
        pipe.run_batch([{"query": "q", "params": {"compress_documents__nope": 1}}])


@pytest.mark.slow  # the MiniLM model on ~500 texts, twice: tens of seconds on 2 busy cores
def test_run_batch_embeds_once_per_step_and_equals_run_on_hotpotqa(monkeypatch) -> None:
    """Embedding relevance: the batch embeds all requests' texts in one model call per
    embedding step, and every output equals run()'s on real HotpotQA questions."""
    from tokenslim._internal.relevance import load_embedding_model

    examples = datasets.hotpotqa(6)

    def pipeline() -> tokenslim.Pipeline:
        return tokenslim.default_pipeline().set_params(
            trim_top_k__relevance="hybrid", compress_documents__relevance="embedding"
        )

    settings = [{"trim_top_k__k": 4} if n % 3 == 1 else {"compress_documents__max_tokens": 150} if n % 3 == 2 else {}
                for n in range(len(examples))]
    requests = [{"query": e.query, "chunks": e.chunks, "params": s} for e, s in zip(examples, settings)]
    alone = [pipeline().set_params(**s).run(e.query, e.chunks) for e, s in zip(examples, settings)]

    model = load_embedding_model()
    calls: list[int] = []
    encode = model.encode

    def counting(texts, *args, **kwargs):
        calls.append(len(texts))
        return encode(texts, *args, **kwargs)

    monkeypatch.setattr(model, "encode", counting)
    pipe = pipeline()
    before = pipe.get_params()
    batch = pipe.run_batch(requests)
    assert pipe.get_params() == before
    # one call for TrimTopK's query + chunks of all 6 requests, one for CompressDocuments' sentences
    assert len(calls) == 2 and calls[0] >= 50 and calls[1] >= 100
    for got, ref in zip(batch, alone):
        _same(got, ref)
        assert got.chunks[0].metadata["relevance_source"] == "hybrid"
    assert any(d.reason == "low_relevance" for r in batch for d in r.drops)


def test_run_batch_deadline_charges_each_request_its_own_time(monkeypatch) -> None:
    """max_seconds in a batch counts the time spent on each request, not on the whole batch."""
    import tokenslim._pipeline
    from tokenslim.stages._base import BaseStage

    class Clock:
        now = 100.0

        def perf_counter(self) -> float:
            return self.now

    clock = Clock()
    monkeypatch.setattr(tokenslim._pipeline, "time", clock)

    class Tick(BaseStage):
        """Takes ``seconds`` on the fake clock and drops the last chunk."""

        def __init__(self, *, seconds: float = 0.05) -> None:
            self.seconds = seconds

        def apply(self, result: tokenslim.Result) -> tokenslim.Result:
            clock.now += self.seconds
            result.drop(result.chunks[-1], reason="tick")
            result.chunks = result.chunks[:-1]
            return result

    requests = [{"query": f"q{n}?", "chunks": ["a.", "b.", "c."]} for n in range(4)]
    pipe = tokenslim.Pipeline([("first", Tick()), ("second", Tick())], max_seconds=0.08, on_error="skip")
    # 4 x 0.05 s of first steps = 0.2 s of batch time, but each request has spent 0.05 s < 0.08 s
    assert all(len(r.chunks) == 1 and r.report[1].error is None for r in pipe.run_batch(requests))
    slow = tokenslim.Pipeline([("first", Tick(seconds=0.1)), ("second", Tick())], max_seconds=0.08, on_error="skip")
    for r in slow.run_batch(requests):  # each request is past its own deadline after its first step
        assert len(r.chunks) == 2 and r.report[1].error.startswith("DeadlineExceeded")
