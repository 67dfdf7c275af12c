"""SummarizeConversation on real dialogues (SGD, MultiWOZ 2.2, ShareGPT) plus property tests."""

from __future__ import annotations

import json
import re

import pytest
from _conversations import (
    assert_pairs_on_one_side,
    assert_tool_pairs_intact,
    multiwoz,
    sgd_tool_dialogue_indices,
    sgd_with_tools,
    sharegpt,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokenslim import Pipeline, Result
from tokenslim._internal.state import HEADER, is_chit_chat
from tokenslim._internal.turns import group_spans
from tokenslim.bench import datasets
from tokenslim.errors import ConfigError, StageError
from tokenslim.stages import SummarizeConversation


@pytest.fixture(scope="module")
def sgd():
    return datasets.sgd()


def run(stage: SummarizeConversation, history, query: str = "What next?") -> Result:
    return Pipeline([stage]).run(query, history=history)


def state_lines(result: Result) -> list[str]:
    summaries = [m for m in result.history if m.get("tokenslim") == "state_summary"]
    assert len(summaries) == 1
    lines = summaries[0]["content"].split("\n")
    assert lines[0] == HEADER
    return lines[1:]


def test_folds_sgd_dialogue_into_one_state_message(sgd):
    ex = next(e for e in sgd if len(e.history) >= 14)
    r = run(SummarizeConversation(keep_last=4, fold_every=None), ex.history, ex.query)
    summary = r.history[0]
    assert summary["role"] == "system" and summary["tokenslim"] == "state_summary"
    assert r.history[1:] == ex.history[-4:]  # the tail is verbatim
    folded = ex.history[:-4]
    assert [d.item for d in r.drops] == folded and all(d.kind == "turn" for d in r.drops)
    assert {d.reason for d in r.drops} <= {"folded_into_summary", "chit_chat"}
    assert r.tokens_after < r.tokens_before
    assert r.report[0].turns_in == len(ex.history) and r.report[0].turns_out == 5


def test_state_lines_are_verbatim_fragments_of_folded_turns(sgd):
    for ex in sgd[:40]:
        r = run(SummarizeConversation(keep_last=2), ex.history, ex.query)
        folded = {m["role"]: [] for m in ex.history}
        for d in r.drops:
            folded[d.item["role"]].append(d.item["content"])
        if not any(m.get("tokenslim") for m in r.history):
            continue
        for line in state_lines(r):
            speaker, _, body = line[2:].partition(": ")
            assert line.startswith("- ") and speaker in folded, line
            # each line is one or more whole sentences of one folded turn of that speaker
            assert any(all(part in turn for part in re.split(r"(?<=[.?!]) ", body)) for turn in folded[speaker]), line


def test_chit_chat_turns_are_dropped_as_chit_chat(sgd):
    r = run(SummarizeConversation(keep_last=1, fold_every=None), sgd[0].history, sgd[0].query)
    reasons = {d.item["content"]: d.reason for d in r.drops}
    assert reasons["Thanks very much."] == "chit_chat"
    assert reasons["Is there anything else I can help you with?"] == "chit_chat"
    assert reasons["I want to make a restaurant reservation for 2 people at half past 11 in the morning."] == (
        "folded_into_summary"
    )
    assert "Thanks very much" not in r.history[0]["content"]


@pytest.mark.parametrize(
    ("sentence", "chatty"),
    [
        ("No, that's all. Thanks.", True),
        ("Thank you for your help, doctor.", True),
        ("Have a great day!", True),
        ("Hello, how are you doing today?", True),
        ("No, I haven ' t had a cold.", False),
        ("That sounds good. Today we work on Legs and forearm.", False),
        ("I need a table for 4 at 15:00 on wednesday please.", False),
    ],
)
def test_chit_chat_rules_on_real_sentences(sentence, chatty):
    # sentences from SGD, DialogSum and MultiWOZ 2.2
    assert is_chit_chat(sentence) is chatty


def test_slot_retention_beats_truncation_on_all_sgd(sgd):
    """Gold final slot values kept: state + last 2 turns vs only the last 2 turns (same tail)."""
    stage = SummarizeConversation(keep_last=2, fold_every=None)
    present = kept_ts = kept_trunc = 0
    before = after = 0
    for ex in sgd:
        r = run(stage, ex.history, ex.query)
        full = "\n".join(m["content"] for m in ex.history).lower()
        ours = "\n".join(m["content"] for m in r.history).lower()
        trunc = "\n".join(m["content"] for m in ex.history[-2:]).lower()
        before, after = before + r.tokens_before, after + r.tokens_after
        for values in ex.gold["slot_values"].values():
            vals = [v.lower() for v in values]
            if any(v in full for v in vals):
                present += 1
                kept_ts += any(v in ours for v in vals)
                kept_trunc += any(v in trunc for v in vals)
    assert kept_ts / present >= 0.6 and kept_trunc / present < 0.2
    assert before / after >= 1.8  # and the history still shrinks by almost half or more


def test_multiwoz_state_keeps_the_booking_constraints(data_dir):
    taxi = multiwoz(data_dir)[1]  # "i want to book a taxi ... leave after 02:30 ... Norwich train station"
    r = run(SummarizeConversation(keep_last=2, max_summary_ratio=0.8, fold_every=None), taxi)
    state = r.history[0]["content"].lower()
    for value in ("02:30", "norwich train station", "jesus college"):
        assert value in state
    assert "thanks and have a nice day" not in state


def test_sharegpt_state_respects_max_summary_tokens(data_dir):
    for conv in sharegpt(data_dir):
        if len(conv) < 6:
            continue
        r = run(SummarizeConversation(keep_last=2, max_summary_tokens=120, fold_every=None), conv)
        summary = r.history[0]
        assert summary["tokenslim"] == "state_summary"
        assert r.tokenizer.count(summary["content"]) <= 120
        assert r.history[1:] == conv[-2:]
        assert len(r.drops) == len(conv) - 2


def test_system_messages_in_the_history_stay_verbatim_before_the_state(sgd):
    ex = sgd[5]
    instruction = {"role": "system", "content": "You are a restaurant booking assistant."}
    r = run(SummarizeConversation(keep_last=2, fold_every=None), [instruction, *ex.history])
    assert r.history[0] == instruction and r.history[1]["tokenslim"] == "state_summary"
    assert instruction not in [d.item for d in r.drops]
    assert len(r.drops) == len(ex.history) - 2


def test_short_conversations_are_left_alone(data_dir):
    conv = multiwoz(data_dir)[3]  # 6 turns
    r = run(SummarizeConversation(keep_last=4, min_turns_to_fold=3), conv)
    assert r.history == conv and not r.drops


def test_tool_call_stays_with_its_result_at_the_cut(data_dir):
    idx = sgd_tool_dialogue_indices(data_dir)
    checked = 0
    for i in idx[:30]:
        conv = sgd_with_tools(data_dir, i)
        for keep in range(1, 6):
            r = run(SummarizeConversation(keep_last=keep), conv)
            assert_tool_pairs_intact(r.history)
            assert_pairs_on_one_side(conv, [m for m in r.history if not m.get("tokenslim")])
            checked += 1
            tool_at_cut = conv[len(conv) - keep]["role"] == "tool"
            if tool_at_cut and r.drops:
                assert len(r.history) - 1 > keep  # the tail grew to take the call along
    assert checked >= 100


def test_folded_tool_call_appears_with_its_arguments(data_dir):
    i = sgd_tool_dialogue_indices(data_dir)[0]
    conv = sgd_with_tools(data_dir, i)
    r = run(SummarizeConversation(keep_last=1, max_summary_ratio=1.0, max_summary_tokens=2000), conv)
    call = next(m for m in conv if m.get("tool_calls"))["tool_calls"][0]["function"]
    assert f"called {call['name']}({call['arguments']})" in r.history[0]["content"]


def test_refolding_carries_the_previous_state_over(sgd):
    ex = max(sgd, key=lambda e: len(e.history))
    stage = SummarizeConversation(keep_last=4)
    first = run(stage, ex.history[:14])
    second = run(stage, [*first.history, *ex.history[14:]])
    summaries = [m for m in second.history if m.get("tokenslim")]
    assert len(summaries) == 1
    old_lines = first.history[0]["content"].split("\n")[1:]
    assert any(line in summaries[0]["content"] for line in old_lines)
    assert second.drops[0].item["tokenslim"] == "state_summary"


def test_custom_summarizer_gets_the_folded_turns(sgd):
    ex = sgd[0]
    seen = []

    def summarizer(turns):
        seen.append(turns)
        return " ".join(t["content"] for t in turns if t["role"] == "user")[:200]

    r = run(SummarizeConversation(keep_last=4, summarizer=summarizer, max_summary_ratio=1.0, fold_every=None), ex.history)
    assert seen == [ex.history[:-4]]
    assert r.history[0]["content"].startswith("I want to make a restaurant reservation")
    assert all(d.reason == "folded_into_summary" for d in r.drops)


def test_summarizer_must_return_text(sgd):
    with pytest.raises(StageError, match="summarizer returned"):
        run(SummarizeConversation(summarizer=lambda turns: None, fold_every=None), sgd[0].history)


@pytest.mark.parametrize(
    "params",
    [
        {"keep_last": -1},
        {"keep_last": 2.5},
        {"max_summary_tokens": 0},
        {"min_turns_to_fold": 0},
        {"max_summary_ratio": 0},
        {"max_summary_ratio": 1.5},
        {"summarizer": "gpt"},
        {"fold_every": 0},
        {"fold_every": True},
        {"fold_every": 2.0},
    ],
)
def test_validate_rejects_bad_params(params):
    with pytest.raises(ConfigError, match="SummarizeConversation"):
        SummarizeConversation(**params).validate()


# -- properties over real utterances ----------------------------------------------------


@pytest.fixture(scope="module")
def tool_convs(data_dir):
    return [sgd_with_tools(data_dir, i) for i in sgd_tool_dialogue_indices(data_dir)[:40]]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_properties(tool_convs, data):
    conv = tool_convs[data.draw(st.integers(0, len(tool_convs) - 1))]
    starts = [a for a, _ in group_spans(conv) if a <= len(conv) // 2]
    conv = conv[data.draw(st.sampled_from(starts)) :]  # start at a group boundary: no orphan tool result
    stage = SummarizeConversation(
        keep_last=data.draw(st.integers(0, 8)),
        max_summary_tokens=data.draw(st.integers(16, 300)),
        max_summary_ratio=data.draw(st.sampled_from([0.2, 0.5, 1.0])),
        min_turns_to_fold=data.draw(st.integers(1, 4)),
        fold_every=data.draw(st.sampled_from([None, 1, 2, 5, 8])),
    )
    r = run(stage, conv)
    state = [m for m in r.history if m.get("tokenslim")]
    assert all(r.count(m["content"]) <= stage.max_summary_tokens for m in state)
    # output never larger than input
    assert r.tokens_after <= r.tokens_before
    # every removed turn recorded: kept (non-summary) + dropped == input, in order
    kept = [m for m in r.history if not m.get("tokenslim")]
    assert [d.item for d in r.drops] + kept == conv
    # tool pairs never split
    assert_tool_pairs_intact(kept)
    assert_pairs_on_one_side(conv, kept)
    # deterministic
    again = run(stage, conv)
    assert json.dumps(again.history) == json.dumps(r.history)
    assert [(d.reason, d.detail) for d in again.drops] == [(d.reason, d.detail) for d in r.drops]


def test_one_instance_serves_many_threads(sgd):
    from concurrent.futures import ThreadPoolExecutor

    stage = SummarizeConversation(keep_last=2)
    convs = [e.history for e in sgd[:32]]
    expected = [run(stage, c).history for c in convs]
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda c: run(stage, c).history, convs))
    assert got == expected
    assert stage.get_params()["keep_last"] == 2


# -- folding in blocks (the prefix-cache-friendly default) ------------------------------


def requests(stage: SummarizeConversation, history, system: str = "You are a booking assistant."):
    """One request per user turn, each with the whole history before it (as an application sends it)."""
    out = []
    for i, m in enumerate(history):
        if m["role"] == "user" and i:
            out.append((i, Pipeline([stage]).run(m["content"], history=history[:i], system_prompt=system)))
    return out


def test_block_folding_only_appends_to_the_state_on_all_sgd(sgd):
    """Across the requests of a dialogue, each prompt extends the previous one's prefix up to its
    last history message; the state only grows by appended lines, and the cut moves once per block."""
    stage = SummarizeConversation(keep_last=4, fold_every=8)
    per_request = SummarizeConversation(keep_last=4, fold_every=None)
    checked = folds = broken = 0
    for ex in sgd:
        history = [*ex.history, {"role": "user", "content": ex.query}]
        runs = requests(stage, history)
        for (_, prev), (_, cur) in zip(runs, runs[1:]):
            a = prev.history[0]["content"] if prev.drops else ""
            b = cur.history[0]["content"] if cur.drops else ""
            assert b.startswith(a), (a, b)  # appended, never rewritten (the cap is not reached on SGD)
            if len(cur.drops) == len(prev.drops):  # between folds, everything sent before the question is sent again
                assert cur.to_prompt().startswith("\n".join(prev.prompt_pieces()[:-1]))
            else:
                folds += 1
            checked += 1
        cuts = {len(r.drops) for _, r in runs}
        assert all(c % 8 == 0 for c in cuts)
        # folding on every request breaks that prefix whenever it folds
        flat = requests(per_request, history)
        broken += sum(
            not cur.to_prompt().startswith("\n".join(prev.prompt_pieces()[:-1])) for (_, prev), (_, cur) in zip(flat, flat[1:])
        )
    assert checked > 600 and 0 < folds < checked / 4 and broken > checked / 2


def test_block_folding_keeps_at_least_the_slots_of_per_request_folding(sgd):
    """Gold slot values in the history sent, last request of every SGD dialogue: block folding keeps
    more turns verbatim, so it may not keep fewer slots than folding on every request."""
    def kept(stage):
        n = 0
        for ex in sgd:
            text = "\n".join(m["content"] for m in run(stage, ex.history, ex.query).history).lower()
            n += sum(any(v.lower() in text for v in vals) for vals in ex.gold["slot_values"].values())
        return n

    assert kept(SummarizeConversation(keep_last=4)) >= kept(SummarizeConversation(keep_last=4, fold_every=None))


def test_state_is_rewritten_once_the_cap_is_passed(data_dir):
    conv = max(sharegpt(data_dir), key=len)
    stage = SummarizeConversation(keep_last=2, fold_every=2, max_summary_tokens=60, max_summary_ratio=1.0)
    runs = [r for _, r in requests(stage, conv) if r.drops]
    states = [r.history[0]["content"] for r in runs]
    assert all(runs[0].count(s) <= 60 for s in states)
    rewrites = [i for i in range(1, len(states)) if not states[i].startswith(states[i - 1])]
    assert rewrites, "a 60-token cap over a long conversation must force a rewrite"
    r = runs[rewrites[0]]
    assert any("state rewritten" in d.detail for d in r.drops)
    assert len(rewrites) < len(states) - 1  # and appending resumes after it


def test_block_cut_keeps_tool_calls_with_their_results(data_dir):
    for i in sgd_tool_dialogue_indices(data_dir)[:20]:
        conv = sgd_with_tools(data_dir, i)
        for every in (2, 3, 8):
            r = run(SummarizeConversation(keep_last=2, fold_every=every), conv)
            assert_tool_pairs_intact(r.history)
            assert_pairs_on_one_side(conv, [m for m in r.history if not m.get("tokenslim")])
