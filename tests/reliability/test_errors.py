"""Typed errors and fail-open / fail-closed behaviour with every real stage.

A failure inside a stage is injected in two places: in the stage's pure decision
helper (before the stage touches the result) and halfway through applying it
(after it has recorded some drops). ``on_error="skip"`` must hand the stage's
input on unchanged with the error in the report; ``on_error="raise"`` must raise
:class:`StageError` naming the stage, with the original exception as ``__cause__``.
"""

from __future__ import annotations

import pytest

import tokenslim
from tokenslim import Pipeline, Result
from tokenslim.bench import datasets
from tokenslim.errors import BudgetExceeded, ConfigError, InputError, StageError, TokenSlimError
from tokenslim.stages import (
    Budget,
    CompressDocuments,
    Dedupe,
    Reorder,
    StripHTML,
    SummarizeConversation,
    TrimTopK,
)
from tokenslim.stages import budget as budget_mod
from tokenslim.stages import compress_documents, dedupe, reorder, strip_html, summarize_conversation, trim_top_k


class Injected(RuntimeError):
    """The failure the tests inject (not a tokenslim error: an unexpected bug)."""


def _boom(*_args, **_kwargs):
    raise Injected("injected failure")


@pytest.fixture(scope="module")
def example():
    ex = datasets.hotpotqa(limit=3)[2]
    sgd = datasets.sgd(limit=1)[0]
    pages = [
        "<html><body><nav>Home | About</nav><article>"
        + "".join(f"<p>{c.text}</p>" for c in ex.chunks[i : i + 2])
        + "</article></body></html>"
        for i in (0, 2)
    ]
    # duplicates so Dedupe has something to do; two HTML pages so StripHTML has
    chunks = [*ex.chunks, ex.chunks[0].with_text(ex.chunks[0].text), ex.chunks[5].with_text(ex.chunks[5].text), *pages]
    chunks = [c if isinstance(c, str) else tokenslim.Chunk(text=c.text, metadata=c.metadata) for c in chunks]
    return ex.query, chunks, sgd.history


# (stage, module attribute that decides, ...) - the decision helper each stage calls first
HELPERS = [
    (StripHTML(), strip_html, "plan_strip"),
    (Dedupe(), dedupe, "plan_dedupe"),
    (TrimTopK(k=3), trim_top_k, "select_top_k"),
    (CompressDocuments(), compress_documents, "plan_compression"),
    (SummarizeConversation(keep_last=2), summarize_conversation.SummarizeConversation, "plan"),
    (Budget(max_tokens=300), budget_mod.Budget, "plan"),
    (Reorder(order="lost_in_the_middle"), reorder, "reorder_indices"),
]


def _snapshot(r: Result):
    return [(c.id, c.text, c.score) for c in r.chunks], [dict(m) for m in r.history]


@pytest.mark.parametrize(("stage", "owner", "attr"), HELPERS, ids=[s.name for s, _, _ in HELPERS])
def test_fail_open_passes_input_through(example, monkeypatch, stage, owner, attr):
    query, chunks, history = example
    reference = Pipeline([stage]).run(query, chunks, history)
    assert reference.report[0].error is None
    monkeypatch.setattr(owner, attr, _boom)
    r = Pipeline([stage], on_error="skip").run(query, chunks, history)
    fresh = Result.create(query, chunks, history)
    assert _snapshot(r) == _snapshot(fresh)
    assert r.drops == []
    err = r.report[0].error
    assert err is not None and "Injected: injected failure" in err and stage.name in err
    assert r.report[0].tokens_in == r.report[0].tokens_out
    assert f"ERROR {err}" in r.report_table()


@pytest.mark.parametrize(("stage", "owner", "attr"), HELPERS, ids=[s.name for s, _, _ in HELPERS])
def test_fail_closed_raises_stage_error(example, monkeypatch, stage, owner, attr):
    query, chunks, history = example
    monkeypatch.setattr(owner, attr, _boom)
    with pytest.raises(StageError, match=f"stage '{stage.name}' failed: Injected") as info:
        Pipeline([stage], on_error="raise").run(query, chunks, history)
    assert info.value.stage == stage.name
    assert isinstance(info.value.__cause__, Injected)


# Stages that record drops/shortenings: fail after the first record, mid-apply.
MID_APPLY = [StripHTML(), Dedupe(), TrimTopK(k=3), CompressDocuments(), SummarizeConversation(keep_last=2), Budget(max_tokens=300)]


@pytest.mark.parametrize("stage", MID_APPLY, ids=[s.name for s in MID_APPLY])
def test_failure_after_partial_work_leaves_no_trace(example, monkeypatch, stage):
    query, chunks, history = example
    calls = {"n": 0}
    real_drop, real_shorten = Result.drop, Result.shorten

    def flaky(real):
        def wrapper(self, *args, **kwargs):
            calls["n"] += 1
            if calls["n"] == 2:
                raise Injected("failed after recording one change")
            return real(self, *args, **kwargs)

        return wrapper

    monkeypatch.setattr(Result, "drop", flaky(real_drop))
    monkeypatch.setattr(Result, "shorten", flaky(real_shorten))
    pipe = Pipeline([stage, ("order", Reorder(order="original"))], on_error="skip")
    r = pipe.run(query, chunks, history)
    assert calls["n"] >= 2, "the stage recorded fewer than two changes; the injection never fired"
    fresh = Result.create(query, chunks, history)
    assert _snapshot(r) == _snapshot(fresh)
    assert r.drops == []
    assert "failed after recording one change" in r.report[0].error
    assert r.report[1].name == "order" and r.report[1].error is None  # later stages still run


def test_fail_open_keeps_later_stages_working(example, monkeypatch):
    query, chunks, history = example
    monkeypatch.setattr(dedupe, "plan_dedupe", _boom)
    r = Pipeline([Dedupe(), TrimTopK(k=3)], on_error="skip").run(query, chunks)
    assert r.report[0].error and r.report[1].error is None
    assert len(r.chunks) == 3
    assert {d.reason for d in r.drops} == {"beyond_top_k"}


def test_custom_summarizer_failure_is_fail_open_or_closed(example):
    query, _chunks, history = example
    stage = SummarizeConversation(keep_last=2, summarizer=lambda turns: 1 / 0)
    r = Pipeline([stage], on_error="skip").run(query, None, history)
    assert r.history == Result.create(query, None, history).history
    assert "ZeroDivisionError" in r.report[0].error
    with pytest.raises(StageError) as info:
        Pipeline([stage]).run(query, None, history)
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    bad_type = SummarizeConversation(keep_last=2, summarizer=lambda turns: None)
    with pytest.raises(StageError, match="summarizer returned NoneType"):
        Pipeline([bad_type]).run(query, None, history)


def test_request_and_budget_errors_raise_even_when_failing_open(example):
    query, chunks, _history = example
    pipe = tokenslim.default_pipeline(token_budget=5, on_error="skip")
    with pytest.raises(BudgetExceeded, match="raise max_tokens") as info:
        pipe.run(query, chunks, system_prompt="You answer questions about Wikipedia articles.")
    assert info.value.required_tokens > info.value.max_tokens == 5
    with pytest.raises(InputError):
        tokenslim.default_pipeline(on_error="skip").run(query, [chunks[0], 17])


BAD_PARAMS = [
    (StripHTML, {"min_chars": 0}, "min_chars"),
    (Dedupe, {"threshold": 1.5}, "threshold"),
    (TrimTopK, {"k": 0}, "k must be"),
    (CompressDocuments, {"ratio": 0}, "ratio"),
    (SummarizeConversation, {"keep_last": -1}, "keep_last"),
    (Budget, {"max_tokens": 0}, "max_tokens"),
    (Reorder, {"order": "random"}, "order"),
]


@pytest.mark.parametrize(("cls", "params", "param"), BAD_PARAMS, ids=[c.__name__ for c, _, _ in BAD_PARAMS])
def test_bad_parameters_raise_config_error_naming_the_parameter(example, cls, params, param):
    query, chunks, _ = example
    with pytest.raises(ConfigError, match=f"{cls.__name__}: {param}"):
        cls(**params)  # refused when built
    stage = cls(max_tokens=100) if cls is Budget else cls()
    for k, v in params.items():
        setattr(stage, k, v)  # assigned directly: refused before the pipeline runs, even when failing open
    with pytest.raises(ConfigError, match=f"{cls.__name__}: {param}"):
        Pipeline([stage], on_error="skip").run(query, chunks)


MALFORMED = [
    ({"chunks": "one passage"}, "wrap it in a list"),
    ({"chunks": [b"<p>bytes</p>"]}, "decode it first"),
    ({"chunks": [None]}, r"chunks\[0\] must be a Chunk, str or mapping, got NoneType"),
    ({"chunks": [{"score": 1.0}]}, r"chunks\[0\] is a mapping without a 'text' key"),
    ({"chunks": [{"text": 3}]}, r"chunks\[0\]\.text must be str, got int"),
    ({"chunks": [{"text": "ok", "score": "high"}]}, "score must be a number or None, got 'high'"),
    ({"chunks": [{"text": "ok", "metadata": ["source", "wiki"]}]}, r"chunks\[0\]\.metadata must be a dict, got list"),
    ({"chunks": [{"text": "ok", "metadata": 7}]}, r"chunks\[0\]\.metadata must be a dict, got int"),
    ({"chunks": 42}, "chunks must be a list of Chunk or str, got int"),
    ({"history": 3}, "history must be a list of messages, got int"),
    ({"history": "hi"}, "history must be a list of messages, got str"),
    ({"history": [{"role": "bot", "content": "x"}]}, r"history\[0\] has role 'bot'"),
    ({"history": [{"role": "user", "content": 5}]}, r"history\[0\]\.content must be a str or a list of content parts, got int"),
    ({"query": 5}, "query must be str, got int"),
    ({"system_prompt": ["x"]}, "system_prompt must be str or None, got list"),
]


@pytest.mark.parametrize(("kwargs", "message"), MALFORMED, ids=[m for _, m in MALFORMED])
def test_malformed_input_raises_input_error_that_says_what_to_do(example, kwargs, message):
    query, chunks, _ = example
    call = {"query": query, "chunks": chunks[:3], **kwargs}
    with pytest.raises(InputError, match=message):
        tokenslim.default_pipeline(on_error="skip").run(**call)


def test_every_expected_error_is_a_tokenslim_error():
    from tokenslim.html import extract_main_text

    for call in (
        lambda: extract_main_text(None),  # type: ignore[arg-type]
        lambda: extract_main_text("<p>" + "x" * 100, url=None) and tokenslim.html.extract("<p>xx</p>", max_bytes=3),
        lambda: Result.create("q", [object()]),
    ):
        with pytest.raises(TokenSlimError):
            call()
