"""Chat-history structure: tool-call groups and pinned messages.

A *group* is the unit that history trimming may keep or remove: usually one
message, but an assistant message carrying ``tool_calls`` (or a legacy
``function_call``) forms one group with the ``role="tool"`` (or ``"function"``)
messages that follow it and answer it, so a tool call is never separated from
its result (chat APIs reject a tool result whose call is missing).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

__all__ = ["STATE_SUMMARY", "is_state_summary", "is_pinned", "tool_call_ids", "group_spans", "cut_index"]

STATE_SUMMARY = "state_summary"
"""Value of the ``"tokenslim"`` key that marks the state message SummarizeConversation writes."""


def is_state_summary(msg: Mapping[str, Any]) -> bool:
    """True for the state message written by SummarizeConversation."""
    return msg.get("tokenslim") == STATE_SUMMARY


def is_pinned(msg: Mapping[str, Any]) -> bool:
    """System/developer messages that are instructions, not conversation (state summaries excluded)."""
    return msg.get("role") in ("system", "developer") and not is_state_summary(msg)


def tool_call_ids(msg: Mapping[str, Any]) -> set[str]:
    """Ids of the tool calls an assistant message makes (empty for other messages)."""
    calls = msg.get("tool_calls") or []
    ids: set[str] = set()
    if isinstance(calls, Sequence) and not isinstance(calls, (str, bytes)):
        for call in calls:
            if isinstance(call, Mapping) and call.get("id") is not None:
                ids.add(str(call["id"]))
    return ids


def _opens_group(msg: Mapping[str, Any]) -> bool:
    return msg.get("role") == "assistant" and bool(msg.get("tool_calls") or msg.get("function_call"))


def _answers(msg: Mapping[str, Any], ids: set[str], legacy: bool) -> bool:
    role = msg.get("role")
    if role == "tool":
        call_id = msg.get("tool_call_id")
        return call_id is None or str(call_id) in ids
    return legacy and role == "function"


def group_spans(history: Sequence[Mapping[str, Any]]) -> list[tuple[int, int]]:
    """Split history into ``[start, end)`` groups that must stay together, in order.

    An assistant message with tool calls absorbs the directly following tool
    messages whose ``tool_call_id`` it issued (or that carry no id); every other
    message is a group of its own.
    """
    spans: list[tuple[int, int]] = []
    i, n = 0, len(history)
    while i < n:
        j = i + 1
        if _opens_group(history[i]):
            ids = tool_call_ids(history[i])
            legacy = bool(history[i].get("function_call"))
            while j < n and _answers(history[j], ids, legacy):
                j += 1
        spans.append((i, j))
        i = j
    return spans


def cut_index(history: Sequence[Mapping[str, Any]], keep_last: int) -> int:
    """Index where the kept tail starts: the last ``keep_last`` messages, moved
    earlier to a group boundary so no tool call is split from its results."""
    n = len(history)
    if keep_last <= 0:
        return n
    target = max(0, n - keep_last)
    for start, end in group_spans(history):
        if start <= target < end:
            return start
    return target
