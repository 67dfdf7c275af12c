"""haystack_integrations.components.tokenslim inside a real Haystack pipeline."""

from __future__ import annotations

import pytest
from haystack import Document, Pipeline
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.core.errors import DeserializationError, SerializationError
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack_integrations.components.tokenslim import TokenSlimCompressor

import tokenslim
from tests.adapters.conftest import has_answer
from tests.adapters.custom_stages import custom_pipeline, record_result
from tokenslim.stages import BaseStage

pytestmark = pytest.mark.haystack


@pytest.fixture(scope="module")
def store(hotpot_examples) -> InMemoryDocumentStore:
    store = InMemoryDocumentStore()
    store.write_documents(
        [
            Document(id=f"{ex.id}-{c.id}", content=c.text, meta={"title": c.metadata["title"], "question": ex.id})
            for ex in hotpot_examples
            for c in ex.chunks
        ]
    )
    return store


def test_bm25_retriever_then_tokenslim_in_a_pipeline(store, hotpot_examples, pipeline):
    pipe = Pipeline()
    pipe.add_component("retriever", InMemoryBM25Retriever(document_store=store, top_k=10))
    pipe.add_component("slim", TokenSlimCompressor(pipeline=pipeline))
    pipe.connect("retriever.documents", "slim.documents")
    tok = pipeline.get_tokenizer()
    before = after = hits = full = 0
    for ex in hotpot_examples:
        out = pipe.run({"retriever": {"query": ex.query}, "slim": {"query": ex.query}}, include_outputs_from={"retriever"})
        retrieved = {d.id: d for d in out["retriever"]["documents"]}
        docs = out["slim"]["documents"]
        assert 0 < len(docs) <= len(retrieved)
        for d in docs:
            src = retrieved[d.id]
            assert d.score == src.score and d.meta["title"] == src.meta["title"]
            assert d.meta["tokenslim"]["kept_tokens"] == tok.count(d.content) <= d.meta["tokenslim"]["original_tokens"]
        before += sum(tok.count(d.content) for d in retrieved.values())
        after += sum(tok.count(d.content) for d in docs)
        context = " ".join(d.content for d in retrieved.values())
        if has_answer(context, ex.answers):
            full += 1
            hits += has_answer(" ".join(d.content for d in docs), ex.answers)
    assert before / after > 2.5
    assert hits >= 0.7 * full


def test_serialises_default_settings(pipeline):
    comp = TokenSlimCompressor(token_budget=500, disable=["reorder"])
    back = TokenSlimCompressor.from_dict(comp.to_dict())
    assert back.token_budget == 500 and back.disable == ["reorder"]
    assert [type(s).__name__ for s in back.pipeline.steps][-2:] == ["Budget", "Reorder"]
    assert back.pipeline.to_config() == comp.pipeline.to_config()


def test_custom_pipeline_saved_to_yaml_and_loaded_gives_identical_output(store, hotpot_examples):
    pipe = Pipeline()
    pipe.add_component("retriever", InMemoryBM25Retriever(document_store=store, top_k=10))
    pipe.add_component("slim", TokenSlimCompressor(pipeline=custom_pipeline(), disable=["dedupe"], on_result=record_result))
    pipe.connect("retriever.documents", "slim.documents")
    # Haystack loads callables only from modules the caller trusts
    loaded = Pipeline.loads(pipe.dumps(), allowed_modules=[record_result.__module__])
    slim = loaded.get_component("slim")
    assert slim.pipeline.to_config() == custom_pipeline().to_config() and slim.on_result is record_result
    for ex in hotpot_examples:
        inputs = {"retriever": {"query": ex.query}, "slim": {"query": ex.query}}
        a, b = pipe.run(inputs)["slim"]["documents"], loaded.run(inputs)["slim"]["documents"]
        assert [(d.id, d.content, d.score, d.meta) for d in a] == [(d.id, d.content, d.score, d.meta) for d in b]


def test_what_cannot_be_saved_raises_serialization_error():
    class Local(BaseStage):
        def apply(self, result):
            return result

    with pytest.raises(SerializationError, match="register_stage"):
        TokenSlimCompressor(pipeline=tokenslim.Pipeline([Local()])).to_dict()
    with pytest.raises(SerializationError):
        TokenSlimCompressor(on_result=lambda r: None).to_dict()
    data = TokenSlimCompressor().to_dict()
    data["init_parameters"]["pipeline"]["steps"][0]["stage"] = "no_such_stage"
    with pytest.raises(DeserializationError, match="unknown stage"):
        TokenSlimCompressor.from_dict(data)
