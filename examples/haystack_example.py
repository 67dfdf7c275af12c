"""Haystack 2: tokenslim as a component between a retriever and the prompt builder.

An ``InMemoryBM25Retriever`` over HotpotQA paragraphs feeds ``TokenSlimCompressor`` inside
a Haystack ``Pipeline``; documents keep their ids, scores and meta.

    pip install -e adapters/tokenslim-haystack
    python examples/haystack_example.py
"""

from __future__ import annotations

from haystack import Document, Pipeline
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack_integrations.components.tokenslim import TokenSlimCompressor

import tokenslim
from _shared import corpus, questions, show


def main() -> None:
    examples = questions()
    store = InMemoryDocumentStore()
    store.write_documents([Document(id=i, content=text, meta={"title": title}) for i, title, text in corpus(examples)])
    pipe = Pipeline()
    pipe.add_component("retriever", InMemoryBM25Retriever(document_store=store, top_k=10))
    pipe.add_component("slim", TokenSlimCompressor())  # tokenslim.default_pipeline()
    pipe.connect("retriever.documents", "slim.documents")
    tok = tokenslim.get_tokenizer()
    for ex in examples:
        out = pipe.run({"retriever": {"query": ex.query}, "slim": {"query": ex.query}}, include_outputs_from={"retriever"})
        retrieved, slim = out["retriever"]["documents"], out["slim"]["documents"]
        show(ex, [d.content for d in retrieved], [d.content for d in slim], tok)
    print("kept document:", slim[0].id, f"score={slim[0].score:.2f}", {k: v for k, v in slim[0].meta.items()})


if __name__ == "__main__":
    main()
