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


@pytest.mark.parametrize(
    "chunks, match",
    [
        ([Chunk("a", score=10**400)], "too large for a float"),
        ([{"text": "a", "score": float("inf")}], "score must be finite"),
        ([{"text": "a", "score": -float("inf")}], "score must be finite"),
        ([{"text": "a", "score": "1e400"}], "score must be finite"),
        ({"text": "a single chunk", "score": 0.5}, "got a single dict; wrap it in a list"),
    ],
)
def test_scores_out_of_float_range_and_a_lone_dict_are_input_errors(chunks, match):
    with pytest.raises(InputError, match=match):
        coerce_chunks(chunks)


@pytest.mark.parametrize("role", [["user"], {"role": "user"}, 3, None])
def test_unhashable_or_odd_roles_are_input_errors(role):
    with pytest.raises(InputError, match="expected one of"):
        coerce_history([{"role": role, "content": "x"}])


def test_multimodal_parts_are_kept_counted_and_sent_back():
    import tokenslim

    image = {"type": "image_url", "image_url": {"url": "https://example.org/bridge.png"}}
    audio = {"type": "input_audio", "input_audio": {"data": "UklGR...", "format": "wav"}}
    history = [
        {"role": "user", "content": [{"type": "input_text", "text": "What bridge is this?"}, image]},
        {"role": "assistant", "content": [{"type": "output_text", "text": "The Oresund Bridge."}]},
        {"role": "user", "content": [audio]},
    ]
    hist = coerce_history(history)
    assert hist[0]["content"] == "What bridge is this?\n[image_url]"  # the image is counted as a marker
    assert hist[1] == {"role": "assistant", "content": "The Oresund Bridge."}  # text only: a plain string
    assert hist[2]["content"] == "[input_audio]"
    r = tokenslim.Pipeline([]).run("Where is it?", ["The Oresund Bridge links Denmark and Sweden."], history)
    sent = r.to_messages()
    assert sent[0]["content"] == history[0]["content"] and sent[2]["content"] == [audio]
    assert all("tokenslim_parts" not in m for m in sent)
    assert "[image_url]" in r.to_prompt()


def test_multimodal_turn_dropped_by_budget_is_recorded_with_its_parts():
    import tokenslim
    from tokenslim.stages import Budget

    image = {"type": "image_url", "image_url": {"url": "https://example.org/bridge.png"}}
    history = [{"role": "user", "content": [{"type": "text", "text": "word " * 200}, image]},
               {"role": "assistant", "content": "ok"}]
    r = tokenslim.Pipeline([Budget(max_tokens=60)]).run("Where is it?", ["Short."], history)
    (drop,) = [d for d in r.drops if d.kind == "turn"]
    assert drop.reason == "over_budget" and drop.item["tokenslim_parts"][1] == image


def test_rewritten_multimodal_text_keeps_the_image():
    from tokenslim._chunk import api_content

    image = {"type": "input_image", "image_url": "https://example.org/x.png"}
    (msg,) = coerce_history([{"role": "user", "content": [{"type": "input_text", "text": "<b>Hi</b> there"}, image]}])
    msg["content"] = msg["content"].replace("<b>Hi</b>", "Hi")  # as a stage rewriting the text would
    assert api_content(msg) == [{"type": "text", "text": "Hi there"}, image]


def test_content_parts_that_are_not_parts_are_input_errors():
    with pytest.raises(InputError, match=r"history\[0\].content\[1\] must be a content part"):
        coerce_history([{"role": "user", "content": [{"type": "text", "text": "a"}, 42]}])
    with pytest.raises(InputError, match="'text' is not a str"):
        coerce_history([{"role": "user", "content": [{"type": "input_text", "text": None}]}])
