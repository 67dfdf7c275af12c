"""Events on logging.getLogger("tokenslim"), Result.to_dict for request logs, warm_up."""

from __future__ import annotations

import json
import logging

import pytest

import tokenslim
from tokenslim import Pipeline, Result
from tokenslim.errors import InputError, InputTooLarge
from tokenslim.stages import BaseStage, Budget, Dedupe


class Boom(BaseStage):
    def apply(self, result: Result) -> Result:
        raise RuntimeError("kaput")


@pytest.fixture
def example(hotpot):
    row = hotpot[1]
    return row["question_text"], [c["paragraph_text"] for c in row["contexts"]]


def _records(caplog: pytest.LogCaptureFixture, level: int) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "tokenslim" and r.levelno == level]


def test_stage_error_under_skip_is_logged_with_traceback(caplog, example):
    caplog.set_level(logging.WARNING, logger="tokenslim")
    r = Pipeline([Boom(), Dedupe()], on_error="skip").run(*example)
    assert r.report[0].error
    [rec] = _records(caplog, logging.WARNING)
    assert "'boom' failed" in rec.getMessage() and "RuntimeError: kaput" in rec.getMessage()
    assert rec.exc_info is not None and isinstance(rec.exc_info[1], RuntimeError)  # the traceback is logged


def test_budget_cut_is_logged(caplog, example):
    caplog.set_level(logging.INFO, logger="tokenslim")
    r = Pipeline([Budget(max_tokens=200)]).run(*example)
    [rec] = _records(caplog, logging.INFO)
    n_cut = len([d for d in r.drops if d.kind == "chunk"])
    assert n_cut > 0 and f"{n_cut} items removed" in rec.getMessage() and "200" in rec.getMessage()
    caplog.clear()
    Pipeline([Budget(max_tokens=100_000)]).run(*example)
    assert not _records(caplog, logging.INFO)  # nothing cut, nothing logged


def test_refused_input_is_logged(caplog, example):
    caplog.set_level(logging.WARNING, logger="tokenslim")
    with pytest.raises(InputError):
        tokenslim.default_pipeline().run(example[0], [{"text": 3}])
    assert "refused input" in _records(caplog, logging.WARNING)[0].getMessage()
    caplog.clear()
    with pytest.raises(InputTooLarge):
        Pipeline([tokenslim.stages.StripHTML(max_bytes=10)]).run("q", ["<html><body><p>" + "x" * 100 + "</p></body></html>"])
    assert "'strip_html' refused the request" in _records(caplog, logging.WARNING)[0].getMessage()


def test_quiet_when_nothing_happens(caplog, example):
    caplog.set_level(logging.INFO, logger="tokenslim")
    tokenslim.default_pipeline().run(*example)
    assert not [r for r in caplog.records if r.name == "tokenslim"]


def test_result_to_dict_is_json_and_holds_no_text_unless_asked(example):
    query, chunks = example
    r = tokenslim.default_pipeline(token_budget=400).run(query, chunks, system_prompt="Be brief.")
    d = json.loads(json.dumps(r.to_dict()))
    assert d["tokens_before"] == r.tokens_before and d["tokens_after"] == r.tokens_after
    assert [s["stage"] for s in d["stages"]] == [s.name for s in r.report]
    assert len(d["drops"]) == len(r.drops) and {x["reason"] for x in d["drops"]} == {x.reason for x in r.drops}
    assert [c["id"] for c in d["chunks"]] == [c.id for c in r.chunks]
    flat = json.dumps(d)
    assert query not in flat and not any(c[:40] in flat for c in chunks)
    full = json.loads(json.dumps(r.to_dict(text=True)))
    assert full["query"] == query and full["system_prompt"] == "Be brief."
    assert [c["text"] for c in full["chunks"]] == [c.text for c in r.chunks]
    assert all(x["text"] for x in full["drops"] if x["kind"] != "turn")


def test_warm_up_runs_every_stage_and_returns_seconds(caplog):
    caplog.set_level(logging.INFO, logger="tokenslim")
    p = tokenslim.default_pipeline(token_budget=1000)
    seconds = p.warm_up()
    assert seconds > 0 and "warm-up" in _records(caplog, logging.INFO)[-1].getMessage()
