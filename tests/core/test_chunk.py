"""Input coercion: chunks and history become validated, uniquely-identified objects."""

from __future__ import annotations

import math

import pytest

from tokenslim import Chunk
from tokenslim._chunk import coerce_chunks, coerce_history
from tokenslim.errors import InputError


def test_strings_mappings_and_chunks_get_unique_ids(hotpot):
    paras = [c["paragraph_text"] for c in hotpot[0]["contexts"][:3]]
    chunks = coerce_chunks([paras[0], {"text": paras[1], "score": "0.5", "id": 7}, Chunk(paras[2], id="x")])
    assert [c.id for c in chunks] == ["c0", "7", "x"]
    assert chunks[1].score == 0.5
    assert [c.metadata["position"] for c in chunks] == [0, 1, 2]
    assert [c.text for c in chunks] == paras


def test_duplicate_ids_are_made_unique():
    chunks = coerce_chunks([Chunk("a", id="d"), Chunk("b", id="d")])
    assert len({c.id for c in chunks}) == 2


def test_nan_score_means_unknown():
    assert coerce_chunks([Chunk("a", score=math.nan)])[0].score is None


@pytest.mark.parametrize(
    "bad, match",
    [
        ("just a string", "wrap it in a list"),
        ([b"bytes"], "decode it first"),
        ([42], "must be a Chunk"),
        ([{"score": 1}], "without a 'text' key"),
        ([Chunk(text=None)], "text must be str"),  # type: ignore[arg-type]
        ([Chunk("a", score="high")], "score must be a number"),  # type: ignore[arg-type]
    ],
)
def test_bad_chunks_raise_input_error(bad, match):
    with pytest.raises(InputError, match=match):
        coerce_chunks(bad)


def test_history_validation():
    hist = coerce_history([{"role": "user", "content": [{"type": "text", "text": "hi"}]}, {"role": "assistant", "content": None}])
    assert hist == [{"role": "user", "content": "hi"}, {"role": "assistant", "content": ""}]
    with pytest.raises(InputError, match="role"):
        coerce_history([{"role": "robot", "content": "x"}])
    with pytest.raises(InputError, match="list of messages"):
        coerce_history("hello")  # type: ignore[arg-type]
