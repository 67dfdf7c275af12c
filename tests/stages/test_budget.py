"""Budget on real chunks (MultiHop-RAG, HotpotQA) and real dialogues (SGD with its service calls)."""

from __future__ import annotations

import pytest
from _conversations import assert_pairs_on_one_side, assert_tool_pairs_intact, sgd_tool_dialogue_indices, sgd_with_tools
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokenslim import Chunk, Pipeline, Result
from tokenslim._internal.sentences import split_spans
from tokenslim._internal.turns import group_spans
from tokenslim.bench import datasets
from tokenslim.errors import BudgetExceeded, ConfigError
from tokenslim.stages import Budget, SummarizeConversation

SYSTEM = "Answer the question from the context. Say 'unknown' if the context does not contain the answer."


@pytest.fixture(scope="module")
def mhr():
    return datasets.multihop_rag()


@pytest.fixture(scope="module")
def conv(data_dir):
    return sgd_with_tools(data_dir, sgd_tool_dialogue_indices(data_dir)[3])


def run(max_tokens: int, ex, history=(), **kw) -> Result:
    return Pipeline([Budget(max_tokens=max_tokens, **kw)]).run(ex.query, ex.chunks, list(history), system_prompt=SYSTEM)


def test_under_budget_changes_nothing(mhr, conv):
    ex = mhr[0]
    r = run(100_000, ex, conv)
    assert [c.text for c in r.chunks] == [c.text for c in ex.chunks] and r.history == conv and not r.drops


def test_drops_least_relevant_chunks_first(mhr):
    ex = mhr[0]
    full = Result.create(ex.query, ex.chunks, system_prompt=SYSTEM).prompt_tokens()
    r = run(full - 300, ex)
    assert r.tokens_after <= full - 300
    dropped = [d.item for d in r.drops]
    assert dropped and all(d.reason == "over_budget" and d.kind == "chunk" for d in r.drops)
    assert max(c.score for c in dropped) <= min(c.score for c in r.chunks)
    assert [d.item.score for d in r.drops] == sorted(d.item.score for d in r.drops)


def test_unscored_chunks_go_from_the_end(hotpot):
    row = hotpot[1]
    paras = [c["paragraph_text"] for c in row["contexts"]]
    full = Result.create(row["question_text"], paras).prompt_tokens()
    r = Pipeline([Budget(max_tokens=full // 2)]).run(row["question_text"], paras)
    assert [c.text for c in r.chunks] == paras[: len(r.chunks)]
    assert [d.item.id for d in r.drops] == [f"c{i}" for i in range(len(paras) - 1, len(r.chunks) - 1, -1)]


def test_then_oldest_history_with_tool_pairs_and_state_summary_kept(mhr, conv):
    ex = mhr[0]
    folded = Pipeline([SummarizeConversation(keep_last=8, fold_every=None)]).run(ex.query, history=conv).history
    assert folded[0]["tokenslim"] == "state_summary"
    base = Result.create(ex.query, ex.chunks[:1], folded, system_prompt=SYSTEM).prompt_tokens()
    r = run(base - 120, ex, folded)
    assert len(r.chunks) == 1 and r.chunks[0].text == max(ex.chunks, key=lambda c: c.score).text
    assert r.history[0]["tokenslim"] == "state_summary"  # kept while older turns go
    turn_drops = [d.item for d in r.drops if d.kind == "turn"]
    assert turn_drops == folded[1 : 1 + len(turn_drops)]  # oldest first, after the state message
    assert_tool_pairs_intact(r.history)
    assert_pairs_on_one_side(folded, r.history)


def test_last_chunk_truncated_at_sentence_boundary(mhr):
    ex = mhr[2]
    best = max(ex.chunks, key=lambda c: c.score)
    floor = Result.create(ex.query, system_prompt=SYSTEM).prompt_tokens()
    r = run(floor + 60, ex)
    assert r.tokens_after <= floor + 60
    (chunk,) = r.chunks
    assert best.text.startswith(chunk.text) and len(chunk.text) < len(best.text)
    assert chunk.text in {best.text[:end] for _, end in split_spans(best.text)}
    shortened = [d for d in r.drops if d.kind == "text"]
    assert len(shortened) == 1 and shortened[0].item.text == best.text and shortened[0].reason == "over_budget"
    assert r.original(chunk.id).text == best.text


def test_everything_but_system_and_query_can_go(mhr, conv):
    ex = mhr[0]
    floor = Result.create(ex.query, system_prompt=SYSTEM).prompt_tokens()
    r = run(floor, ex, conv)
    assert r.chunks == [] and r.history == [] and r.tokens_after == floor
    assert len([d for d in r.drops if d.kind == "turn"]) == len(conv)


def test_system_and_query_over_budget_raise(mhr):
    ex = mhr[0]
    floor = Result.create(ex.query, system_prompt=SYSTEM).prompt_tokens()
    with pytest.raises(BudgetExceeded, match="system prompt and query alone need") as err:
        run(floor - 1, ex)
    assert err.value.required_tokens == floor and err.value.max_tokens == floor - 1
    with pytest.raises(BudgetExceeded) as err:
        run(floor + 10, ex, reserve_output_tokens=20)
    assert err.value.required_tokens == floor + 20


def test_reserve_output_tokens_lowers_the_cap(mhr):
    ex = mhr[1]
    r = run(1200, ex, reserve_output_tokens=400)
    assert r.tokens_after <= 800 < r.tokens_before


@pytest.mark.parametrize(
    "params",
    [
        {"max_tokens": 0},
        {"max_tokens": -5},
        {"max_tokens": 10.5},
        {"max_tokens": "4096"},
        {"max_tokens": True},
        {"max_tokens": None},
        {"max_tokens": 100, "reserve_output_tokens": 100},
        {"max_tokens": 100, "reserve_output_tokens": -1},
    ],
)
def test_validate_rejects_bad_params(params):
    with pytest.raises(ConfigError, match="Budget"):
        Budget(**params).validate()


def test_max_tokens_is_required():
    with pytest.raises(TypeError):
        Budget()  # type: ignore[call-arg]


# -- properties ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pool(data_dir, mhr):
    convs = [sgd_with_tools(data_dir, i) for i in sgd_tool_dialogue_indices(data_dir)[:20]]
    chunks = [c for ex in mhr for c in ex.chunks]
    return convs, chunks, [ex.query for ex in mhr]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_properties(pool, data):
    convs, chunks, queries = pool
    conv = convs[data.draw(st.integers(0, len(convs) - 1))]
    starts = [a for a, _ in group_spans(conv)]
    conv = conv[data.draw(st.sampled_from(starts)) :]
    picked = data.draw(st.lists(st.integers(0, len(chunks) - 1), max_size=8, unique=True))
    use_scores = data.draw(st.booleans())
    ch = [Chunk(chunks[i].text, chunks[i].score if use_scores else None, f"k{i}") for i in picked]
    query = queries[data.draw(st.integers(0, len(queries) - 1))]
    before = Result.create(query, ch, conv, SYSTEM).prompt_tokens()
    max_tokens = data.draw(st.integers(1, before + 50))
    reserve = data.draw(st.integers(0, max_tokens - 1))
    stage = Budget(max_tokens=max_tokens, reserve_output_tokens=reserve)
    floor = Result.create(query, system_prompt=SYSTEM).prompt_tokens()
    if floor > max_tokens - reserve:
        with pytest.raises(BudgetExceeded):
            Pipeline([stage]).run(query, ch, conv, SYSTEM)
        return
    r = Pipeline([stage]).run(query, ch, conv, SYSTEM)
    assert r.tokens_after <= max_tokens - reserve and r.tokens_after <= before
    # every removed chunk / turn recorded; a truncated chunk recorded with its original
    dropped_ids = {d.item.id for d in r.drops if d.kind == "chunk"}
    assert dropped_ids | {c.id for c in r.chunks} == {c.id for c in ch} and not dropped_ids & {c.id for c in r.chunks}
    for c in r.chunks:
        orig = r.original(c.id)
        assert orig is not None and orig.text.startswith(c.text)
    turns = [d.item for d in r.drops if d.kind == "turn"]
    assert len(turns) + len(r.history) == len(conv)
    assert all(d.reason == "over_budget" for d in r.drops)
    assert_tool_pairs_intact(r.history)
    assert_pairs_on_one_side(conv, r.history)
    # deterministic
    again = Pipeline([stage]).run(query, ch, conv, SYSTEM)
    assert [c.text for c in again.chunks] == [c.text for c in r.chunks] and again.history == r.history
