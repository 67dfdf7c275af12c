"""slim_messages: shrink LangChain chat history with tokenslim (state summary, tool pairs kept)."""

from __future__ import annotations

import json
from typing import Any, Optional, Sequence, Union

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import RunnableLambda

import tokenslim

__all__ = ["slim_messages", "to_openai", "STATE_KEY"]

STATE_KEY = "tokenslim"
"""Key (in ``response_metadata``) marking the state message, so later calls fold it again."""
_STATE = "state_summary"
_INDEX = "_tokenslim_index"


def _text(content: Union[str, list[Any]]) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for part in content:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, dict) and part.get("type") == "text":
            parts.append(str(part.get("text", "")))
    return "".join(parts)


def to_openai(message: BaseMessage) -> dict[str, Any]:
    """One LangChain message as an OpenAI-style dict (``tool_calls`` / ``tool_call_id`` kept).

    Args:
        message: Any LangChain chat message.

    Returns:
        ``{"role", "content"}`` plus ``tool_calls`` (assistant), ``tool_call_id``
        (tool), ``name`` (function) and the tokenslim state marker where present.
    """
    msg: dict[str, Any] = {"content": _text(message.content)}
    if isinstance(message, HumanMessage):
        msg["role"] = "user"
    elif isinstance(message, AIMessage):
        msg["role"] = "assistant"
        if message.tool_calls:
            msg["tool_calls"] = [
                {
                    "id": call.get("id") or "",
                    "type": "function",
                    "function": {"name": call["name"], "arguments": json.dumps(call["args"])},
                }
                for call in message.tool_calls
            ]
    elif isinstance(message, SystemMessage):
        msg["role"] = "system"
        if message.response_metadata.get(STATE_KEY) == _STATE:
            msg["tokenslim"] = _STATE
    elif isinstance(message, ToolMessage):
        msg["role"] = "tool"
        msg["tool_call_id"] = message.tool_call_id
    elif isinstance(message, FunctionMessage):
        msg["role"] = "function"
        msg["name"] = message.name
    elif isinstance(message, ChatMessage) and message.role in ("user", "assistant", "system", "developer", "tool"):
        msg["role"] = message.role
    else:
        msg["role"] = "user"
    return msg


def _slim(
    messages: Sequence[BaseMessage],
    pipeline: Optional[tokenslim.Pipeline],
    query: Optional[str],
) -> list[BaseMessage]:
    originals = list(messages)
    history = []
    for i, message in enumerate(originals):
        msg = to_openai(message)
        msg[_INDEX] = i
        history.append(msg)
    if query is None:
        query = next((_text(m.content) for m in reversed(originals) if isinstance(m, HumanMessage)), "")
    result = (pipeline or tokenslim.default_pipeline()).run(query, history=history)
    out: list[BaseMessage] = []
    for msg in result.history:
        index = msg.get(_INDEX)
        if index is not None:
            original = originals[index]
            if msg["content"] != history[index]["content"]:
                # a tool result ReduceStructured cut down (issue 26): the same message, new content
                out.append(original.model_copy(update={"content": msg["content"]}))
            else:
                out.append(original)  # kept verbatim: the original object, ids and all
        else:
            out.append(SystemMessage(content=msg["content"], response_metadata={STATE_KEY: _STATE}))
    return out


def slim_messages(
    messages: Optional[Sequence[BaseMessage]] = None,
    *,
    pipeline: Optional[tokenslim.Pipeline] = None,
    query: Optional[str] = None,
) -> Union[list[BaseMessage], RunnableLambda]:
    """Shrink chat history: keep recent turns verbatim, fold older ones into one state message.

    Like LangChain's ``trim_messages``, but older turns are not just cut: the
    pipeline's SummarizeConversation stage folds them into a ``SystemMessage``
    holding the requests, constraints, names, numbers and decisions they carried
    (marked with ``response_metadata={"tokenslim": "state_summary"}`` so the next
    call folds it again instead of stacking summaries). An ``AIMessage`` with
    ``tool_calls`` is never separated from the ``ToolMessage`` s answering it.
    Kept messages are returned as the very same objects (ids, metadata intact), except
    a tool (or assistant) message whose JSON, table, code or log content the pipeline's
    ReduceStructured stage cut down: a copy of it with the reduced content.

    Args:
        messages: The chat history, oldest first. ``None`` returns a Runnable that
            applies the same settings (for use in a chain, as ``trim_messages`` does).
        pipeline: The tokenslim pipeline (default :func:`tokenslim.default_pipeline`;
            e.g. ``Pipeline([SummarizeConversation(keep_last=6)])`` to tune it).
        query: The current question, used by relevance-aware stages; default the
            content of the last ``HumanMessage``.

    Returns:
        The shrunk message list, or a ``RunnableLambda`` when ``messages`` is None.

    Raises:
        tokenslim.errors.InputError: a message's content is not text.
    """
    if messages is None:
        return RunnableLambda(lambda msgs: _slim(msgs, pipeline, query), name="slim_messages")
    return _slim(messages, pipeline, query)
