"""Pipelines as data: to_config / from_config, the stage registry, config files."""

from __future__ import annotations

import json

import pytest

import tokenslim
from tokenslim import Pipeline, Result, register_stage
from tokenslim._config import read_config
from tokenslim.bench.datasets import hotpotqa
from tokenslim.errors import ConfigError
from tokenslim.stages import BaseStage, Budget, CompressDocuments, Dedupe, TrimTopK


@register_stage(name="keep_first")
class KeepFirst(BaseStage):
    """Test stage: keeps the first ``n`` chunks (records the rest)."""

    def __init__(self, *, n: int = 2, note: str = "") -> None:
        self.n = n
        self.note = note

    def apply(self, result: Result) -> Result:
        for c in result.chunks[self.n :]:
            result.drop(c, reason="not_first")
        result.chunks = result.chunks[: self.n]
        return result


class Unregistered(BaseStage):
    def apply(self, result: Result) -> Result:
        return result


def _signature(r: Result) -> tuple:
    return (
        r.to_prompt(),
        [(c.id, c.text) for c in r.chunks],
        [(d.stage, d.kind, d.reason, d.detail, d.chunk_id, d.tokens) for d in r.drops],
        r.tokens_before,
        r.tokens_after,
    )


def _no_none(value: object) -> bool:
    if isinstance(value, dict):
        return all(_no_none(v) for v in value.values())
    if isinstance(value, list):
        return all(_no_none(v) for v in value)
    return value is not None


@pytest.fixture(scope="module")
def examples():
    return hotpotqa(8)


def _pipelines() -> list[Pipeline]:
    return [
        tokenslim.default_pipeline(),
        tokenslim.default_pipeline(token_budget=300, on_error="skip"),
        Pipeline(
            [Dedupe(threshold=None, shingle_size=3), TrimTopK(k=4, min_score=0.1), ("first", KeepFirst(n=3, note="x")),
             CompressDocuments(ratio=0.5, max_tokens=120), Budget(max_tokens=250, reserve_output_tokens=10)],
            tokenizer="cl100k_base",
        ),
    ]


@pytest.mark.parametrize("index", range(3))
def test_saved_and_loaded_pipeline_gives_identical_output_on_hotpotqa(index, examples):
    pipe = _pipelines()[index]
    config = json.loads(json.dumps(pipe.to_config()))  # through JSON text, as a saved file is
    loaded = Pipeline.from_config(config)
    assert loaded.to_config() == config
    assert list(loaded.named_steps) == list(pipe.named_steps)
    for ex in examples:
        assert _signature(loaded.run(ex.query, ex.chunks)) == _signature(pipe.run(ex.query, ex.chunks))


def test_pipeline_settings_round_trip():
    p = Pipeline([Dedupe()], tokenizer="cl100k_base", on_error="skip", max_seconds=2.5)
    config = p.to_config()
    assert {k: config[k] for k in ("tokenizer", "on_error", "max_seconds")} == {
        "tokenizer": "cl100k_base", "on_error": "skip", "max_seconds": 2.5}
    q = Pipeline.from_config(config)
    assert (q.tokenizer, q.on_error, q.max_seconds) == ("cl100k_base", "skip", 2.5)
    with pytest.raises(ConfigError, match="max_seconds"):
        Pipeline.from_config({**config, "max_seconds": -1})


def test_config_is_plain_data_with_every_parameter():
    config = tokenslim.default_pipeline(token_budget=500).to_config()
    assert _no_none(config)  # TOML has no null: a None equal to its default is left out
    steps = {s["name"]: s for s in config["steps"]}
    assert steps["budget"]["params"] == {"max_tokens": 500, "reserve_output_tokens": 0}
    assert steps["dedupe"]["params"]["source_keys"] == list(Dedupe().source_keys)  # tuple -> list
    # a None equal to its default is left out (TOML has no null); every other parameter is written
    assert set(steps["compress_documents"]["params"]) == set(CompressDocuments().get_params()) - {"max_tokens", "ratio", "model"}


def test_toml_and_json_files(tmp_path):
    (tmp_path / "p.toml").write_text(
        'on_error = "skip"\n[[steps]]\nstage = "trim_top_k"\nparams = {k = 3}\n'
        '[[steps]]\nname = "first"\nstage = "keep_first"\nparams = {n = 1}\n'
    )
    p = Pipeline.from_config(read_config(tmp_path / "p.toml"))
    assert p.on_error == "skip" and p["trim_top_k"].k == 3 and p["first"].n == 1
    (tmp_path / "p.json").write_text(json.dumps(p.to_config()))
    assert Pipeline.from_config(read_config(tmp_path / "p.json")).to_config() == p.to_config()
    (tmp_path / "bad.json").write_text("{oops")
    with pytest.raises(ConfigError, match="not valid JSON"):
        read_config(tmp_path / "bad.json")
    with pytest.raises(ConfigError, match="cannot read"):
        read_config(tmp_path / "missing.json")


@pytest.mark.parametrize(
    "config, message",
    [
        ({"steps": [{"stage": "no_such_stage"}]}, "unknown stage 'no_such_stage'"),
        ({"steps": [{"stage": "trim_top_k", "params": {"kk": 3}}]}, "unexpected keyword"),
        ({"steps": [{"stage": "compress_documents", "params": {"ratio": 3}}]}, "ratio must be None or in"),
        ({"steps": [{"stage": "dedupe", "typo": 1}]}, r"steps\[0\]"),
        ({"steps": [], "on_eror": "skip"}, "unknown pipeline config keys"),
        ({"steps": "dedupe"}, "must be a list"),
        ([], "is a dict"),
    ],
)
def test_bad_configs_raise_config_error(config, message):
    with pytest.raises(ConfigError, match=message):
        Pipeline.from_config(config)


def test_what_cannot_be_saved_says_so():
    with pytest.raises(ConfigError, match="register_stage"):
        Pipeline([Unregistered()]).to_config()
    with pytest.raises(ConfigError, match="summarizer"):
        Pipeline([tokenslim.stages.SummarizeConversation(summarizer=lambda turns: "x")]).to_config()
    with pytest.raises(ConfigError, match="tokenizer"):
        Pipeline([Dedupe()], tokenizer=tokenslim.get_tokenizer(None)).to_config()


def test_registry_names():
    assert register_stage(KeepFirst, name="keep_first") is KeepFirst  # same class again: fine
    with pytest.raises(ConfigError, match="already registered"):
        register_stage(Unregistered, name="keep_first")
    with pytest.raises(ConfigError, match="built-in"):
        register_stage(Unregistered, name="dedupe")
    with pytest.raises(ConfigError, match="snake_case"):
        register_stage(Unregistered, name="Bad-Name")
    names = tokenslim.registered_stages()
    assert names["dedupe"] == "tokenslim.stages.dedupe:Dedupe" and names["keep_first"].endswith(":KeepFirst")


def test_coerce_takes_a_pipeline_or_its_config_and_refuses_anything_else() -> None:
    import pytest

    import tokenslim
    from tokenslim.errors import ConfigError

    pipe = tokenslim.default_pipeline()
    assert tokenslim.Pipeline.coerce(pipe) is pipe
    assert tokenslim.Pipeline.coerce(pipe.to_config()).to_config() == pipe.to_config()
    with pytest.raises(ConfigError, match="config dict, got str"):
        tokenslim.Pipeline.coerce("default")  # type: ignore[arg-type]
