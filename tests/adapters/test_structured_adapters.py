"""Structured tool results and documents through the framework adapters (issue 26): the
same ReduceStructured path as ``Pipeline.run``."""

from __future__ import annotations

import json
import sys
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "structured"))
from _fixtures import markdown_table, orders_json  # noqa: E402

import tokenslim  # noqa: E402

Q = "What is the status and total of order ord_00179f3a?"


def _ids(text: str) -> list[str]:
    return [x["id"] for x in json.loads(text)["data"] if isinstance(x, dict)]


def test_langchain_tool_message_is_reduced_and_keeps_its_call_id() -> None:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langchain_tokenslim import slim_messages

    call = AIMessage(content="", tool_calls=[{"name": "list_orders", "args": {}, "id": "call_1"}], id="a1")
    tool = ToolMessage(content=orders_json(), tool_call_id="call_1", id="t1")
    msgs = [HumanMessage(content="List my orders.", id="h1"), call, tool, HumanMessage(content=Q, id="h2")]
    out = slim_messages(msgs, pipeline=tokenslim.default_pipeline())
    assert out[0] is msgs[0] and out[1] is call and out[3] is msgs[3]
    reduced = out[2]
    assert isinstance(reduced, ToolMessage) and reduced.tool_call_id == "call_1" and reduced.id == "t1"
    assert _ids(reduced.content) == ["ord_00179f3a"]
    assert tool.content == orders_json()  # the caller's message is not changed


def test_langchain_compressor_reduces_a_json_document() -> None:
    from langchain_core.documents import Document
    from langchain_tokenslim import TokenSlimCompressor

    docs = [Document(page_content=orders_json(), metadata={"source": "orders_api"}, id="d1")]
    out = TokenSlimCompressor().compress_documents(docs, Q)
    assert _ids(out[0].page_content) == ["ord_00179f3a"] and out[0].metadata["source"] == "orders_api"


def test_llama_index_postprocessor_reduces_a_table() -> None:
    from llama_index.core.schema import NodeWithScore, TextNode
    from llama_index.postprocessor.tokenslim import TokenSlimPostprocessor

    nodes = [NodeWithScore(node=TextNode(text=markdown_table(), id_="n1"), score=1.0)]
    out = TokenSlimPostprocessor().postprocess_nodes(nodes, query_str="What is the population of City137?")
    text = out[0].node.get_content()
    assert "| City137 | Land4 | 6069 |" in text and "| City138 |" not in text


def test_haystack_compressor_reduces_a_json_document() -> None:
    from haystack import Document
    from haystack_integrations.components.tokenslim import TokenSlimCompressor

    out = TokenSlimCompressor().run(documents=[Document(content=orders_json(), id="d1")], query=Q)
    assert _ids(out["documents"][0].content) == ["ord_00179f3a"]
