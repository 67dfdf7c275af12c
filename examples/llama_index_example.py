"""LlamaIndex: tokenslim as a node postprocessor after a retriever.

A small in-memory BM25 retriever (a real ``llama_index`` ``BaseRetriever``) over HotpotQA
paragraphs returns 10 nodes per question; ``TokenSlimPostprocessor`` shrinks them, one
output node per kept input node, ids, scores and metadata unchanged.

    pip install -e adapters/llama-index-postprocessor-tokenslim
    python examples/llama_index_example.py
"""

from __future__ import annotations

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from llama_index.postprocessor.tokenslim import TokenSlimPostprocessor
from rank_bm25 import BM25Okapi

import tokenslim
from _shared import corpus, questions, show


class BM25Retriever(BaseRetriever):
    """Top-``k`` nodes by BM25 (rank-bm25) over an in-memory list of nodes."""

    def __init__(self, nodes: list[TextNode], k: int = 10) -> None:
        self._nodes, self._k = nodes, k
        self._bm25 = BM25Okapi([n.text.lower().split() for n in nodes])
        super().__init__()

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        scores = self._bm25.get_scores(query_bundle.query_str.lower().split())
        top = sorted(range(len(self._nodes)), key=lambda i: -scores[i])[: self._k]
        return [NodeWithScore(node=self._nodes[i], score=float(scores[i])) for i in top]


def main() -> None:
    examples = questions()
    nodes = [TextNode(text=text, id_=i, metadata={"title": title}) for i, title, text in corpus(examples)]
    retriever = BM25Retriever(nodes)
    post = TokenSlimPostprocessor()  # tokenslim.default_pipeline()
    tok = tokenslim.get_tokenizer()
    for ex in examples:
        retrieved = retriever.retrieve(ex.query)
        slim = post.postprocess_nodes(retrieved, query_str=ex.query)
        show(ex, [n.node.get_content() for n in retrieved], [n.node.get_content() for n in slim], tok)
    print("kept node:", slim[0].node.node_id, f"score={slim[0].score:.2f}", slim[0].node.metadata)


if __name__ == "__main__":
    main()
