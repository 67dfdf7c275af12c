"""haystack_integrations.components.tokenslim inside a real Haystack pipeline."""

from __future__ import annotations

import pytest
from haystack import Document, Pipeline
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.core.errors import SerializationError
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack_integrations.components.tokenslim import TokenSlimCompressor

from tests.adapters.conftest import has_answer


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


def test_serialises_default_settings_and_refuses_custom_pipeline(pipeline):
    comp = TokenSlimCompressor(token_budget=500, disable=["reorder"])
    back = TokenSlimCompressor.from_dict(comp.to_dict())
    assert back.token_budget == 500 and back.disable == ["reorder"]
    assert [type(s).__name__ for s in back.pipeline.steps][-2:] == ["Budget", "Reorder"]
    with pytest.raises(SerializationError, match="custom pipeline"):
        TokenSlimCompressor(pipeline=pipeline).to_dict()
