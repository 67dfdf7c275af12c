"""llama_index.postprocessor.tokenslim with real LlamaIndex nodes and a retriever query engine."""

from __future__ import annotations

from llama_index.core.base.response.schema import Response
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.response_synthesizers.no_text import NoText
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle, TextNode
from llama_index.postprocessor.tokenslim import TokenSlimPostprocessor

import pytest

import tokenslim
from tests.adapters.conftest import has_answer
from tests.adapters.custom_stages import custom_pipeline
from tokenslim.bench.datasets import Example

pytestmark = pytest.mark.llama_index


def _nodes(ex: Example) -> list[NodeWithScore]:
    return [
        NodeWithScore(
            node=TextNode(text=c.text, id_=f"{ex.id}-{c.id}", metadata={"title": c.metadata["title"]}),
            score=1.0 - i / 10,
        )
        for i, c in enumerate(ex.chunks)
    ]


class HotpotRetriever(BaseRetriever):
    """Returns the 10 HotpotQA paragraphs of the question asked (a real LlamaIndex retriever)."""

    def __init__(self, examples: list[Example]) -> None:
        self._examples = {e.query: e for e in examples}
        super().__init__()

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return _nodes(self._examples[query_bundle.query_str])


def test_postprocess_nodes_keeps_node_ids_scores_and_metadata(hotpot_examples, pipeline):
    post = TokenSlimPostprocessor(pipeline=pipeline)
    tok = pipeline.get_tokenizer()
    before = after = 0
    for ex in hotpot_examples[:10]:
        nodes = _nodes(ex)
        by_id = {n.node.node_id: n for n in nodes}
        out = post.postprocess_nodes(nodes, query_str=ex.query)
        assert 0 < len(out) <= len(nodes)
        assert len({n.node.node_id for n in out}) == len(out)  # one output node per kept input node
        for n in out:
            src = by_id[n.node.node_id]
            assert n.score == src.score and n.node.metadata["title"] == src.node.metadata["title"]
            stats = n.node.metadata["tokenslim"]
            assert stats["kept_tokens"] == tok.count(n.node.get_content()) <= stats["original_tokens"]
            assert "tokenslim" not in n.node.get_content(metadata_mode=MetadataMode.LLM)  # never reaches the prompt
            assert "tokenslim" not in src.node.metadata  # inputs untouched
        before += sum(tok.count(n.node.get_content()) for n in nodes)
        after += sum(tok.count(n.node.get_content()) for n in out)
    assert before / after > 2.5


def test_inside_a_retriever_query_engine(hotpot_examples, pipeline):
    engine = RetrieverQueryEngine(
        HotpotRetriever(hotpot_examples),
        # offline: NO_TEXT returns the source nodes without calling the (mock) LLM
        response_synthesizer=NoText(llm=MockLLM()),
        node_postprocessors=[TokenSlimPostprocessor(pipeline=pipeline)],
    )
    hits = full = 0
    for ex in hotpot_examples:
        response = engine.query(ex.query)
        assert isinstance(response, Response) and response.source_nodes
        assert all(n.node.node_id.startswith(ex.id) for n in response.source_nodes)
        if has_answer(" ".join(c.text for c in ex.chunks), ex.answers):
            full += 1
            hits += has_answer(" ".join(n.node.get_content() for n in response.source_nodes), ex.answers)
    assert hits >= 0.7 * full


def test_query_is_required(hotpot_examples, pipeline):
    import pytest

    from tokenslim.errors import InputError

    with pytest.raises(InputError, match="needs the query"):
        TokenSlimPostprocessor(pipeline=pipeline).postprocess_nodes(_nodes(hotpot_examples[0]))


def test_saved_to_json_and_loaded_gives_identical_output(hotpot_examples):
    post = TokenSlimPostprocessor(pipeline=custom_pipeline(), disable=("dedupe",))
    text = post.to_json()
    loaded = TokenSlimPostprocessor.from_json(text)
    assert isinstance(loaded.pipeline, tokenslim.Pipeline) and loaded.disable == ("dedupe",)
    assert loaded.pipeline.to_config() == post.pipeline.to_config()
    assert TokenSlimPostprocessor.from_dict(post.to_dict()).pipeline.to_config() == post.pipeline.to_config()
    for ex in hotpot_examples:
        q = QueryBundle(ex.query)
        a = post.postprocess_nodes(_nodes(ex), query_bundle=q)
        b = loaded.postprocess_nodes(_nodes(ex), query_bundle=q)
        assert [(n.node.node_id, n.node.get_content(), n.score, n.node.metadata) for n in a] == [
            (n.node.node_id, n.node.get_content(), n.score, n.node.metadata) for n in b
        ]


def test_a_bad_saved_pipeline_is_refused_not_turned_into_a_string():
    data = TokenSlimPostprocessor().to_dict()
    data["pipeline"]["steps"][0]["stage"] = "no_such_stage"
    with pytest.raises(ValueError, match="unknown stage 'no_such_stage'"):
        TokenSlimPostprocessor.from_dict(data)
    with pytest.raises(ValueError, match="tokenslim.Pipeline or its config"):
        TokenSlimPostprocessor(pipeline="default")
