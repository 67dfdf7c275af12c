"""The document <-> chunk mapping the framework adapters share (no framework needed)."""

from __future__ import annotations

import tokenslim
from tokenslim.integrations.documents import chunk_ids, run_documents
from tokenslim.stages import Dedupe, Reorder, TrimTopK


def test_chunk_ids_keep_own_ids_and_fill_the_rest_uniquely() -> None:
    assert chunk_ids(["a", "b"]) == ["a", "b"]
    assert chunk_ids([None, "", 7]) == ["d0", "d1", "7"]
    ids = chunk_ids(["x", "x", "d1", None])
    assert ids[0] == "x" and len(set(ids)) == 4


def test_survivors_map_back_to_their_documents_and_drops_name_them() -> None:
    docs = [
        {"id": "p", "text": "Paris is the capital of France.", "score": 0.9, "meta": {"title": "Paris"}},
        {"id": "q", "text": "Paris is the capital of France.", "score": 0.5, "meta": {}},
        {"id": "r", "text": "The Loire is a river in France.", "score": 0.7, "meta": {"title": "Loire"}},
        {"id": None, "text": "Cats purr when content.", "score": 0.1, "meta": {}},
    ]
    seen: list[tokenslim.Result] = []
    pipe = tokenslim.Pipeline([Dedupe(), TrimTopK(k=2), Reorder(order="score")])
    kept = run_documents(
        pipe, "What is the capital of France?", docs,
        text=lambda d: d["text"], score=lambda d: d["score"], metadata=lambda d: d["meta"],
        doc_id=lambda d: d["id"], on_result=seen.append,
    )
    assert [k.document["id"] for k in kept] == ["p", "r"]
    assert all(k.chunk.text == k.document["text"] for k in kept)
    assert kept[0].stats["original_tokens"] == kept[0].stats["kept_tokens"] > 0
    assert "rank" in kept[0].stats and "position" not in kept[0].stats  # stage-added metadata, not bookkeeping
    assert docs[0]["meta"] == {"title": "Paris"}  # the caller's metadata is copied, never changed
    result = seen[0]
    assert {d.chunk_id for d in result.drops if d.kind == "chunk"} == {"q", "d3"}
