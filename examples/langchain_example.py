"""LangChain: tokenslim as the compressor of a ContextualCompressionRetriever.

A BM25 retriever (langchain-community) over real HotpotQA paragraphs returns 10 documents
per question; ``TokenSlimCompressor`` shrinks them, keeping ids and metadata. Then
``slim_messages`` folds an old chat history into one state message.

    pip install -e adapters/langchain-tokenslim langchain-classic langchain-community
    python examples/langchain_example.py
"""

from __future__ import annotations

from langchain_classic.retrievers import ContextualCompressionRetriever
from langchain_community.retrievers import BM25Retriever
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, HumanMessage
from langchain_tokenslim import TokenSlimCompressor, slim_messages

import tokenslim
from _shared import corpus, questions, show
from tokenslim.bench import datasets


def main() -> None:
    examples = questions()
    docs = [Document(page_content=text, id=i, metadata={"title": title}) for i, title, text in corpus(examples)]
    base = BM25Retriever.from_documents(docs, k=10)
    retriever = ContextualCompressionRetriever(base_compressor=TokenSlimCompressor(), base_retriever=base)
    tok = tokenslim.get_tokenizer()
    for ex in examples:
        retrieved = base.invoke(ex.query)
        slim = retriever.invoke(ex.query)
        show(ex, [d.page_content for d in retrieved], [d.page_content for d in slim], tok)
    print("kept document:", slim[0].id, slim[0].metadata)

    dialogue = next(e for e in datasets.sgd() if len(e.history) >= 12)  # a real SGD dialogue
    messages = [(HumanMessage if m["role"] == "user" else AIMessage)(content=m["content"]) for m in dialogue.history]
    slimmed = slim_messages(messages)
    n = lambda ms: sum(tok.count(str(m.content)) for m in ms)  # noqa: E731
    print(f"\nhistory: {len(messages)} messages, {n(messages)} tokens -> {len(slimmed)} messages, {n(slimmed)} tokens")
    print("state message:", str(slimmed[0].content)[:300])


if __name__ == "__main__":
    main()
