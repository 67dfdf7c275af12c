"""Pipeline contract: naming, params, per-stage report, fail-open/closed, drops recorded."""

from __future__ import annotations

import threading

import pytest

import tokenslim
from tokenslim import Pipeline, Result
from tokenslim.errors import BudgetExceeded, ConfigError, InputError, StageError
from tokenslim.stages import BaseStage


class DropShort(BaseStage):
    """Test stage: drops chunks shorter than min_chars (records each drop)."""

    def __init__(self, *, min_chars: int = 200) -> None:
        self.min_chars = min_chars

    def validate(self) -> None:
        if self.min_chars < 0:
            raise ConfigError("min_chars must be >= 0")

    def apply(self, result: Result) -> Result:
        kept = []
        for c in result.chunks:
            if len(c.text) < self.min_chars:
                result.drop(c, reason="too_short", detail=f"{len(c.text)} chars")
            else:
                kept.append(c)
        result.chunks = kept
        return result


class Boom(BaseStage):
    def __init__(self, *, exc: type[Exception] = RuntimeError) -> None:
        self.exc = exc

    def apply(self, result: Result) -> Result:
        result.chunks = []  # partial mutation before failing: must not leak when failing open
        raise self.exc("boom")


class ReturnsNone(BaseStage):
    def apply(self, result: Result):  # type: ignore[override]
        return None


@pytest.fixture
def example(hotpot):
    row = hotpot[0]
    return row["question_text"], [c["paragraph_text"] for c in row["contexts"]]


def test_report_counts_tokens_and_drops(example):
    query, paras = example
    r = Pipeline([DropShort(min_chars=300)]).run(query, paras, system_prompt="Be brief.")
    rep = r.report[0]
    assert rep.name == "drop_short" and rep.tokenizer == "cl100k_base"
    assert rep.chunks_in == len(paras) and rep.chunks_out == len(r.chunks) < len(paras)
    assert rep.tokens_in == r.tokens_before > rep.tokens_out == r.tokens_after
    # every removed chunk is recorded, with its original text, and recoverable
    assert len(r.drops) == len(paras) - len(r.chunks)
    assert {d.item.text for d in r.drops} | {c.text for c in r.chunks} == set(paras)
    assert all(d.stage == "drop_short" and d.reason == "too_short" and d.tokens > 0 for d in r.drops)
    assert r.original(r.drops[0].chunk_id).text == r.drops[0].item.text


def test_prompt_and_messages_contain_what_survives(example):
    query, paras = example
    r = Pipeline([DropShort(min_chars=0)]).run(query, paras[:2], history=[{"role": "user", "content": "hi"}], system_prompt="S")
    msgs = r.to_messages()
    assert [m["role"] for m in msgs] == ["system", "user", "user"]
    assert paras[0] in msgs[-1]["content"] and msgs[-1]["content"].endswith(query)
    prompt = r.to_prompt()
    assert prompt.startswith("S\n") and paras[1] in prompt
    assert r.tokens_after == r.prompt_tokens()
    assert abs(r.tokens_after - r.tokenizer.count(prompt)) <= 5  # per-piece counting matches the whole prompt closely


def test_names_params_and_slicing():
    p = Pipeline([DropShort(), ("second", DropShort(min_chars=5))])
    assert list(p.named_steps) == ["drop_short", "second"]
    p.set_params(second__min_chars=9)
    assert p["second"].min_chars == 9 and p.get_params()["second__min_chars"] == 9
    assert len(p[:1]) == 1 and isinstance(p[:1], Pipeline)
    assert "DropShort(min_chars=9)" in repr(p) and "DropShort()" in repr(p)
    with pytest.raises(ConfigError, match="unknown parameter"):
        p.set_params(nope__x=1)
    with pytest.raises(ConfigError, match="no parameter"):
        p.set_params(second__nope=1)
    with pytest.raises(ConfigError, match="duplicate step name"):
        Pipeline([DropShort(), DropShort()]).run("q", ["a"])
    with pytest.raises(ConfigError, match="snake_case"):
        Pipeline([("Bad__name", DropShort())]).run("q", ["a"])
    with pytest.raises(ConfigError, match="min_chars"):
        Pipeline([DropShort(min_chars=-1)]).run("q", ["a"])
    with pytest.raises(ConfigError, match="unknown steps"):
        p.run("q", ["a"], disable=["nope"])


def test_disable_skips_a_step(example):
    query, paras = example
    p = Pipeline([DropShort(min_chars=10_000)])
    assert len(p.run(query, paras, disable=["drop_short"]).chunks) == len(paras)
    assert len(p.run(query, paras).chunks) == 0


def test_fail_closed_wraps_unexpected_errors(example):
    query, paras = example
    with pytest.raises(StageError) as info:
        Pipeline([Boom()]).run(query, paras)
    assert info.value.stage == "boom" and isinstance(info.value.__cause__, RuntimeError)
    with pytest.raises(StageError, match="instead of a Result"):
        Pipeline([ReturnsNone()]).run(query, paras)


def test_fail_open_passes_input_through_and_records_error(example):
    query, paras = example
    r = Pipeline([Boom(), DropShort(min_chars=300)], on_error="skip").run(query, paras)
    assert r.report[0].error and "boom" in r.report[0].error
    assert r.report[0].chunks_out == len(paras)  # the failed stage's partial changes were discarded
    assert r.report[1].chunks_in == len(paras)


def test_request_errors_always_raise(example):
    query, paras = example
    for exc in (InputError, BudgetExceeded):
        stage = Boom(exc=(lambda m: BudgetExceeded(m, required_tokens=2, max_tokens=1)) if exc is BudgetExceeded else exc)
        with pytest.raises(exc):
            Pipeline([stage], on_error="skip").run(query, paras)
    with pytest.raises(InputError, match="query must be str"):
        Pipeline([]).run(123, paras)  # type: ignore[arg-type]


def test_stage_used_alone(example):
    query, paras = example
    r = DropShort(min_chars=300)(Result.create(query, paras))
    assert r.drops and all(d.stage == "drop_short" for d in r.drops)


def test_one_pipeline_many_threads(hotpot):
    p = Pipeline([DropShort(min_chars=400)])
    rows = hotpot[:40]
    expected = [[c.text for c in p.run(r["question_text"], [c["paragraph_text"] for c in r["contexts"]]).chunks] for r in rows]
    got: dict[int, list[str]] = {}

    def work(i: int) -> None:
        r = rows[i]
        got[i] = [c.text for c in p.run(r["question_text"], [c["paragraph_text"] for c in r["contexts"]]).chunks]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(rows))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [got[i] for i in range(len(rows))] == expected


def test_import_is_light():
    import subprocess
    import sys

    code = "import sys, tokenslim; tokenslim.default_pipeline(); print(sorted(m for m in ('torch','transformers','sentence_transformers','bs4') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
    assert tokenslim.Pipeline.__module__ == "tokenslim"


BAD = [
    ("TrimTopK", {"k": -1}),
    ("Dedupe", {"threshold": 2.0}),
    ("CompressDocuments", {"ratio": 3}),
    ("SummarizeConversation", {"keep_last": -1}),
    ("Budget", {"max_tokens": 0}),
    ("Reorder", {"order": "random"}),
    ("StripHTML", {"min_chars": 0}),
]


@pytest.mark.parametrize(("cls_name", "bad"), BAD, ids=[c for c, _ in BAD])
def test_bad_parameters_are_refused_at_construction_set_params_and_call(cls_name, bad, example):
    cls = getattr(tokenslim.stages, cls_name)
    (param, value), = bad.items()
    with pytest.raises(ConfigError, match=f"{cls_name}: {param}"):
        cls(**({"max_tokens": 100} if cls_name == "Budget" else {}) | bad)
    stage = cls(max_tokens=100) if cls_name == "Budget" else cls()
    before = stage.get_params()
    with pytest.raises(ConfigError, match=param):
        stage.set_params(**bad)
    assert stage.get_params() == before  # a refused set_params changes nothing
    with pytest.raises(ConfigError, match=param):
        Pipeline([stage]).set_params(**{f"{stage.name}__{param}": value})
    assert stage.get_params() == before
    setattr(stage, param, value)  # assigned directly: still refused before it runs, also used alone
    query, chunks = example
    r = Result.create(query, chunks)
    with pytest.raises(ConfigError, match=cls_name):
        stage(r)
    assert [c.id for c in r.chunks] == [c.id for c in Result.create(query, chunks).chunks] and not r.drops


class Clock:
    """A fake clock for the pipeline's deadline: only Slow stages move it."""

    def __init__(self) -> None:
        self.now = 100.0

    def perf_counter(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    import tokenslim._pipeline

    fake = Clock()
    monkeypatch.setattr(tokenslim._pipeline, "time", fake)
    return fake


class Slow(BaseStage):
    """Test stage: takes ``seconds`` on the fake clock and drops the last chunk."""

    def __init__(self, *, clock: Clock, seconds: float = 0.05) -> None:
        self.clock = clock
        self.seconds = seconds

    def apply(self, result: Result) -> Result:
        self.clock.now += self.seconds
        if result.chunks:
            result.drop(result.chunks[-1], reason="slow_drop")
            result.chunks = result.chunks[:-1]
        return result


def test_deadline_fail_closed_raises_deadline_exceeded(example, clock):
    from tokenslim.errors import DeadlineExceeded, TokenSlimError

    query, chunks = example
    pipe = Pipeline([("first", Slow(clock=clock)), ("second", DropShort())], max_seconds=0.01)
    with pytest.raises(DeadlineExceeded, match="before stage 'second'") as info:
        pipe.run(query, chunks)
    assert isinstance(info.value, TokenSlimError)
    assert info.value.stage == "second" and info.value.max_seconds == 0.01 and info.value.elapsed_s == pytest.approx(0.05)
    in_time = pipe.run(query, chunks, max_seconds=30)  # per-call override: both stages run
    assert [s.name for s in in_time.report] == ["first", "second"] and pipe.max_seconds == 0.01


def test_deadline_fail_open_passes_the_rest_through_and_reports_it(example, clock):
    query, chunks = example
    steps = [("first", Slow(clock=clock)), ("second", DropShort(min_chars=10_000))]
    r = Pipeline(steps, on_error="skip", max_seconds=0.01).run(query, chunks)
    assert [c.text for c in r.chunks] == chunks[:-1]  # first ran; second skipped, input passed through
    assert [d.reason for d in r.drops] == ["slow_drop"]
    first, second = r.report
    assert first.error is None and second.error.startswith("DeadlineExceeded: deadline of 0.01 s passed")
    assert second.tokens_in == second.tokens_out and "DeadlineExceeded" in r.report_table()
    full = Pipeline(steps, on_error="skip").run(query, chunks)  # no deadline: both run
    assert full.chunks == [] and all(s.error is None for s in full.report)


@pytest.mark.parametrize("bad", [0, -1, float("inf"), float("nan"), "5", True])
def test_deadline_must_be_a_positive_number(bad, example):
    with pytest.raises(ConfigError, match="max_seconds"):
        Pipeline([DropShort()], max_seconds=bad).run(*example)
    with pytest.raises(ConfigError, match="max_seconds"):
        Pipeline([DropShort()]).run(*example, max_seconds=bad)


def test_deadline_is_saved_in_the_config():
    p = tokenslim.default_pipeline()
    p.max_seconds = 0.5
    q = Pipeline.from_config(p.to_config())
    assert q.max_seconds == 0.5 and q[:2].max_seconds == 0.5 and "max_seconds=0.5" in repr(q)
    assert "max_seconds" not in tokenslim.default_pipeline().to_config()
