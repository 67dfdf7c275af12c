"""Conversation: prefix accounting across turns, stable documents, cache-friendly layout (real dialogues)."""

from __future__ import annotations

import pytest

from tokenslim import Chunk, Conversation, Pipeline, Result, default_pipeline
from tokenslim.bench import datasets
from tokenslim.errors import ConfigError, InputError
from tokenslim.stages import Dedupe, StripHTML

SYSTEM = "You are a helpful assistant."


@pytest.fixture(scope="module")
def sgd_dialogues(data_dir):
    from tokenslim.bench.conversations import sgd_dialogues

    return sgd_dialogues(limit=40)


@pytest.fixture(scope="module")
def coqa(data_dir):
    from tokenslim.bench.conversations import coqa_chats

    return coqa_chats()


def play(conv: Conversation, dialogue) -> list[Result]:
    return [
        conv.run(t.query, t.chunks, history=dialogue.history(i), system_prompt=SYSTEM) for i, t in enumerate(dialogue.turns)
    ]


def gold_in_context(result: Result, gold: list[str]) -> bool:
    ctx = " ".join(" ".join(c.text.split()) for c in result.chunks).lower()
    return any(" ".join(g.split()).lower() in ctx for g in gold)


def test_prefix_tokens_is_the_shared_prefix_with_the_previous_request(sgd_dialogues):
    conv = Conversation()
    results = play(conv, sgd_dialogues[0])
    assert results[0].prefix_tokens is None and conv.turns == len(results)
    for prev, cur in zip(results, results[1:]):
        assert cur.prefix_tokens == cur.shared_prefix(prev) == cur.shared_prefix(prev.to_prompt())
        assert 0 < cur.prefix_tokens < cur.tokens_after
    assert results[1].to_dict()["prefix_tokens"] == results[1].prefix_tokens
    conv.reset()
    assert conv.run("Hello", history=[]).prefix_tokens is None and conv.turns == 1


def test_block_folding_reuses_more_of_each_prompt_than_folding_every_turn(sgd_dialogues):
    """Same stages, same fresh schema context per turn: only the history handling differs."""
    def reused(pipeline_factory) -> tuple[int, int]:
        shared = sent = 0
        for d in sgd_dialogues:
            for r in play(Conversation(pipeline_factory()), d)[1:]:
                shared += r.prefix_tokens or 0
                sent += r.tokens_after
        return shared, sent

    blocks, sent_blocks = reused(default_pipeline)
    every, sent_every = reused(lambda: default_pipeline().set_params(summarize_conversation__fold_every=None))
    assert blocks > 1.3 * every
    assert sent_blocks < 1.1 * sent_every  # at a small cost in tokens sent


def test_stable_documents_stay_byte_identical_and_only_grow(coqa):
    grew = same = 0
    for d in coqa:
        results = play(Conversation(documents="stable"), d)
        for prev, cur in zip(results, results[1:]):
            assert cur.context_position == "first" and all(c.metadata.get("stable") for c in cur.chunks)
            before = [c.text for c in prev.chunks]
            after = [c.text for c in cur.chunks]
            assert len(after) >= len(before)
            if after[: len(before)] == before:
                same += 1
                # the context block ends the system message, before the history: its prefix is reused
                assert cur.prefix_tokens >= prev.count(prev.to_messages()[0]["content"])
            else:
                grew += 1
                for a, b in zip(before, after):  # a document only gains sentences, in its own order
                    for sentence in a.split(". "):
                        assert sentence in b
        msgs = results[-1].to_messages()
        assert msgs[0]["role"] == "system" and "Context:\n[1] " in msgs[0]["content"]
        assert "Context:" not in msgs[-1]["content"] and msgs[-1]["content"].startswith("Question: ")
    assert same > grew > 0


def test_stable_documents_keep_more_answers_than_per_request_compression(coqa):
    """CoQA follow-ups ("and?", "how many?") name little of what they ask about: per request,
    compression for the bare question loses answers that the conversation's earlier questions kept."""
    def kept(mode: str) -> float:
        hits = n = 0
        for d in coqa:
            for r, t in zip(play(Conversation(documents=mode), d), d.turns):
                if t.gold:
                    hits += gold_in_context(r, t.gold)
                    n += 1
        return hits / n

    assert kept("stable") > kept("per_request") + 0.05


def test_stable_block_is_rebuilt_past_its_token_cap(coqa):
    conv = Conversation(Pipeline([]), documents="stable", max_document_tokens=200)
    d = coqa[0]
    first = conv.run(d.turns[0].query, d.turns[0].chunks[:1], history=[])
    assert conv.rebuilds == 0 and first.prefix_tokens is None
    big = conv.run(d.turns[1].query, d.turns[1].chunks, history=d.history(1))
    assert conv.rebuilds >= 1
    assert [c.text for c in big.chunks] == [c.text for c in d.turns[1].chunks]  # this turn's documents only


def test_query_independent_stages_give_identical_output_for_identical_input(multihop_rag):
    """StripHTML and Dedupe do not read the query or the history: a document that comes back on a
    later turn is sent byte for byte as before."""
    pipe = Pipeline([StripHTML(), Dedupe()])
    for row in multihop_rag[:30]:
        chunks = [Chunk(text=c["text"], score=c["score"], id=f"r{j}") for j, c in enumerate(row["retrieval_list"])]
        a = pipe.run(row["query"], chunks)
        b = pipe.run("a different follow-up question?", chunks, history=[{"role": "user", "content": row["query"]}])
        assert [c.text for c in a.chunks] == [c.text for c in b.chunks]
        assert [(d.reason, d.chunk_id) for d in a.drops] == [(d.reason, d.chunk_id) for d in b.drops]


def test_context_first_layout_counts_what_it_sends(coqa):
    d = coqa[0]
    r = Result.create(d.turns[1].query, d.turns[1].chunks, d.history(1), SYSTEM)
    last = r.prompt_tokens()
    r.context_position = "first"
    pieces = r.prompt_pieces()
    assert pieces[0] == SYSTEM and pieces[1] == "Context:" and pieces[-1].startswith("Question: ")
    assert r.prompt_tokens() == last  # the same pieces, in another order
    assert r.to_messages()[0]["content"].startswith(SYSTEM + "\n\nContext:\n[1] ")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"documents": "cached"}, "documents"),
        ({"max_document_tokens": 0}, "max_document_tokens"),
        ({"pipeline": "default"}, "pipeline"),
    ],
)
def test_bad_arguments_raise_config_error(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        Conversation(**kwargs)


def test_shared_prefix_rejects_what_is_not_a_prompt():
    r = Result.create("q", ["some text"])
    with pytest.raises(InputError, match="previous"):
        r.shared_prefix(42)  # type: ignore[arg-type]
    assert r.shared_prefix(r) == len(r.tokenizer.encode(r.to_prompt()))
    assert repr(Conversation()).startswith("Conversation(documents='per_request'")


def test_twowiki_chat_ends_with_the_dataset_question(data_dir):
    from tokenslim.bench.conversations import twowiki_chats

    chats = twowiki_chats(limit=5)
    first = datasets.twowiki(limit=1)[0]
    assert chats[0].turns[-1].query == first.query and chats[0].turns[-1].gold == list(first.answers)
