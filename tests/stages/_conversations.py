"""Real conversations from ../shared/data as OpenAI-style messages, for the conversation-stage tests.

SGD dialogues carry the real service calls the system made (``service_call`` and
``service_results`` on system turns); :func:`sgd_with_tools` turns them into
``tool_calls`` + ``role="tool"`` messages, so tool-pair handling is tested on real calls.
"""

from __future__ import annotations

import gzip
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from tokenslim._internal.turns import group_spans

@lru_cache(maxsize=None)
def _sgd_raw(data: str) -> list[dict[str, Any]]:
    with gzip.open(Path(data) / "sgd_dialogues" / "dev_dialogues_001.json.gz", "rt", encoding="utf-8") as f:
        return json.load(f)


def sgd_with_tools(data_dir: Path, index: int) -> list[dict[str, Any]]:
    """SGD dialogue ``index`` with each real service call as an assistant tool call + tool result."""
    msgs: list[dict[str, Any]] = []
    for t, turn in enumerate(_sgd_raw(str(data_dir))[index]["turns"]):
        if turn["speaker"] == "USER":
            msgs.append({"role": "user", "content": turn["utterance"]})
            continue
        for f, frame in enumerate(turn["frames"]):
            call = frame.get("service_call")
            if call:
                call_id = f"call_{index}_{t}_{f}"
                msgs.append(
                    {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [
                            {
                                "id": call_id,
                                "type": "function",
                                "function": {"name": call["method"], "arguments": json.dumps(call["parameters"])},
                            }
                        ],
                    }
                )
                results = frame.get("service_results", [])[:2]
                msgs.append({"role": "tool", "tool_call_id": call_id, "content": json.dumps(results)})
        msgs.append({"role": "assistant", "content": turn["utterance"]})
    return msgs


def sgd_tool_dialogue_indices(data_dir: Path) -> list[int]:
    """Indices of SGD dialogues with at least one service call."""
    return [
        i
        for i, d in enumerate(_sgd_raw(str(data_dir)))
        if any(fr.get("service_call") for t in d["turns"] for fr in t["frames"])
    ]


def multiwoz(data_dir: Path) -> list[list[dict[str, str]]]:
    rows = json.loads((data_dir / "dialogstudio_samples" / "multiwoz2_2" / "original_examples.json").read_text())
    return [
        [{"role": "user" if t["speaker"] == "USER" else "assistant", "content": t["utterance"]} for t in d["turns"]]
        for d in rows
    ]


def sharegpt(data_dir: Path) -> list[list[dict[str, str]]]:
    rows = json.loads((data_dir / "dialogstudio_samples" / "sharegpt" / "original_example.json").read_text())
    return [
        [{"role": "user" if m["from"] == "human" else "assistant", "content": m["value"]} for m in d["conversations"]]
        for d in rows
    ]


def assert_tool_pairs_intact(history: list[dict[str, Any]]) -> None:
    """Every tool result directly follows (within its group) the assistant call that issued it."""
    for start, end in group_spans(history):
        head = history[start]
        if head.get("role") == "tool":
            raise AssertionError(f"tool result without its call at {start}: {head!r:.120}")
        if head.get("tool_calls"):
            ids = {c["id"] for c in head["tool_calls"]}
            answered = {m["tool_call_id"] for m in history[start + 1 : end]}
            assert answered == ids, f"call {ids} separated from its results {answered}"


def assert_pairs_on_one_side(original: list[dict[str, Any]], kept: list[dict[str, Any]]) -> None:
    """A tool call and its results are either all kept or all removed (messages compared by value)."""
    kept_keys = {json.dumps(m, sort_keys=True) for m in kept}
    for start, end in group_spans(original):
        if end - start > 1:
            flags = {json.dumps(m, sort_keys=True) in kept_keys for m in original[start:end]}
            assert len(flags) == 1, f"group {start}:{end} split by the cut"
