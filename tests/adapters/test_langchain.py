"""langchain_tokenslim inside LangChain's own retriever and compressor-pipeline objects."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest

from langchain_classic.retrievers import ContextualCompressionRetriever
from langchain_classic.retrievers.document_compressors import DocumentCompressorPipeline
from langchain_community.document_transformers import LongContextReorder
from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.retrievers import BaseRetriever
from langchain_tokenslim import TokenSlimCompressor, slim_messages

import tokenslim
from tests.adapters.conftest import has_answer
from tests.adapters.custom_stages import custom_pipeline
from tokenslim.bench.datasets import Example
from tokenslim.stages import SummarizeConversation

pytestmark = pytest.mark.langchain


class HotpotRetriever(BaseRetriever):
    """Returns the 10 HotpotQA paragraphs of the question asked (a real BaseRetriever)."""

    examples: dict[str, Example]

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        ex = self.examples[query]
        return [
            Document(page_content=c.text, id=f"{ex.id}/{c.id}", metadata={"title": c.metadata["title"], "rank": i})
            for i, c in enumerate(ex.chunks)
        ]


def _docs(ex: Example) -> list[Document]:
    return HotpotRetriever(examples={ex.query: ex}).invoke(ex.query)


def test_contextual_compression_retriever_keeps_ids_metadata_and_answers(hotpot_examples, pipeline):
    base = HotpotRetriever(examples={e.query: e for e in hotpot_examples})
    retriever = ContextualCompressionRetriever(base_compressor=TokenSlimCompressor(pipeline=pipeline), base_retriever=base)
    tok = pipeline.get_tokenizer()
    before = after = full_hits = slim_hits = 0
    for ex in hotpot_examples:
        originals = {d.id: d for d in base.invoke(ex.query)}
        docs = retriever.invoke(ex.query)
        assert 0 < len(docs) <= len(originals)
        for d in docs:
            src = originals[d.id]
            assert d.metadata["title"] == src.metadata["title"] and d.metadata["rank"] == src.metadata["rank"]
            stats = d.metadata["tokenslim"]
            assert stats["original_tokens"] == tok.count(src.page_content)
            assert stats["kept_tokens"] == tok.count(d.page_content) <= stats["original_tokens"]
        before += sum(tok.count(d.page_content) for d in originals.values())
        after += sum(tok.count(d.page_content) for d in docs)
        full = " ".join(d.page_content for d in originals.values())
        if has_answer(full, ex.answers):
            full_hits += 1
            slim_hits += has_answer(" ".join(d.page_content for d in docs), ex.answers)
    assert before / after > 2.5
    assert slim_hits >= 0.7 * full_hits


def test_in_document_compressor_pipeline_after_a_langchain_transformer(hotpot_examples, pipeline):
    ex = hotpot_examples[0]
    compressor = DocumentCompressorPipeline(transformers=[LongContextReorder(), TokenSlimCompressor(pipeline=pipeline)])
    docs = compressor.compress_documents(_docs(ex), ex.query)
    assert docs and all("tokenslim" in d.metadata for d in docs)
    assert sum(d.metadata["tokenslim"]["kept_tokens"] for d in docs) < sum(
        d.metadata["tokenslim"]["original_tokens"] for d in docs
    ) or len(docs) < len(ex.chunks)


def test_on_result_exposes_dropped_documents_and_async_matches_sync(hotpot_examples, pipeline):
    ex = hotpot_examples[1]
    seen: list[tokenslim.Result] = []
    compressor = TokenSlimCompressor(pipeline=pipeline, on_result=seen.append)
    docs = _docs(ex)
    sync = compressor.compress_documents(docs, ex.query)
    asynced = asyncio.run(compressor.acompress_documents(docs, ex.query))
    assert [(d.id, d.page_content) for d in sync] == [(d.id, d.page_content) for d in asynced]
    result = seen[0]
    dropped = {d.chunk_id for d in result.drops if d.kind == "chunk"}
    assert len(dropped) + len(sync) == len(docs)
    by_id = {d.id: d for d in docs}  # drops name the documents by their own ids
    assert dropped <= set(by_id)
    assert all(result.original(cid).text == by_id[cid].page_content for cid in dropped)


def test_one_compressor_serves_many_threads(hotpot_examples, pipeline):
    compressor = TokenSlimCompressor(pipeline=pipeline)
    jobs = [(ex, _docs(ex)) for ex in hotpot_examples[:8]]
    sequential = [[d.page_content for d in compressor.compress_documents(docs, ex.query)] for ex, docs in jobs]
    with ThreadPoolExecutor(8) as pool:
        parallel = list(pool.map(lambda job: [d.page_content for d in compressor.compress_documents(job[1], job[0].query)], jobs))
    assert parallel == sequential


def _conversation(history: list[dict]) -> list:
    msgs: list = [SystemMessage(content="You are a booking assistant.")]
    for i, m in enumerate(history):
        cls = HumanMessage if m["role"] == "user" else AIMessage
        msgs.append(cls(content=m["content"], id=f"m{i}"))
    return msgs


def test_slim_messages_folds_old_turns_and_keeps_tool_pairs(sgd_example):
    msgs = _conversation(sgd_example.history)
    call = AIMessage(content="", tool_calls=[{"name": "find_restaurants", "args": {"city": "San Jose"}, "id": "call_1"}])
    result = ToolMessage(content='{"restaurants": ["Sino"]}', tool_call_id="call_1")
    msgs[-1:-1] = [call, result]  # the tool pair sits just before the last turn
    pipe = tokenslim.Pipeline([SummarizeConversation(keep_last=2)])
    out = slim_messages(msgs, pipeline=pipe, query=sgd_example.query)
    assert len(out) < len(msgs)
    assert out[0] is msgs[0]  # the instruction stays verbatim
    state = [m for m in out if m.response_metadata.get("tokenslim") == "state_summary"]
    assert len(state) == 1 and state[0].content
    i = next(k for k, m in enumerate(out) if m is call)  # keep_last=2 would split the pair: the tail grows
    assert out[i + 1] is result and out[-1] is msgs[-1]
    tok = pipe.get_tokenizer()
    assert sum(tok.count(str(m.content)) for m in out) < sum(tok.count(str(m.content)) for m in msgs)
    # the next turn folds the old state again instead of stacking a second summary
    again = slim_messages([*out, HumanMessage(content=sgd_example.query), AIMessage(content="Done, booked.")], pipeline=pipe)
    assert sum(m.response_metadata.get("tokenslim") == "state_summary" for m in again) == 1


def test_slim_messages_as_runnable_with_default_pipeline(sgd_example):
    msgs = _conversation(sgd_example.history)
    trimmer = slim_messages(pipeline=tokenslim.default_pipeline())
    out = trimmer.invoke(msgs)
    assert len(out) < len(msgs) and out[-1] is msgs[-1]
    assert isinstance(out[1], SystemMessage) and out[1].response_metadata["tokenslim"] == "state_summary"


def test_saved_as_json_and_loaded_gives_identical_output(hotpot_examples):
    comp = TokenSlimCompressor(pipeline=custom_pipeline(), disable=("dedupe",), score_keys=("rank",))
    loaded = TokenSlimCompressor.model_validate_json(comp.model_dump_json())
    assert loaded.pipeline.to_config() == comp.pipeline.to_config() and loaded.score_keys == ("rank",)
    assert TokenSlimCompressor.model_validate(comp.model_dump()).pipeline.to_config() == comp.pipeline.to_config()
    for ex in hotpot_examples:
        a = comp.compress_documents(_docs(ex), ex.query)
        b = loaded.compress_documents(_docs(ex), ex.query)
        assert [(d.id, d.page_content, d.metadata) for d in a] == [(d.id, d.page_content, d.metadata) for d in b]
    data = comp.model_dump()
    data["pipeline"]["steps"][0]["params"]["threshold"] = 7
    with pytest.raises(ValueError, match="threshold"):
        TokenSlimCompressor.model_validate(data)
