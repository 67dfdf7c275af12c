"""Text, Markdown, JSON and PNG output of an ablation report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tokenslim.bench import report
from tokenslim.bench.plots import write_plots
from tokenslim.errors import InputError


def test_text_table_lists_every_stage_and_the_prefill_check(run) -> None:
    rep = run[0].as_dict()
    rep["meta"]["dataset"] = "hotpotqa"
    text = report.text_table(rep)
    lines = text.splitlines()
    assert lines[0] == "=" * 50
    assert any(line.startswith("Dataset:") and line.endswith("hotpotqa") for line in lines)
    assert any(line.startswith("Backend:") and line.endswith("oracle") for line in lines)
    for label in ("baseline", "+keep_first_5", "+noop (=)", "+keep_first_2"):
        assert sum(line.startswith(label + " ") for line in lines) == 2  # cost row + quality row
    assert "prefill falls with tokens: yes" in text
    # the cost header and its rows have the same width (fixed-width table)
    head = next(i for i, line in enumerate(lines) if line.startswith("stage ") and "tok(model)" in line)
    assert len(lines[head]) == len(lines[head + 1]) == len(lines[head + 2])
    # the answer-in-context loss of the last stage is flagged as real (CI excludes 0)
    quality = [line for line in lines if line.startswith("+keep_first_2 ")][1]
    assert "-" in quality and "*" in quality


def test_markdown_and_json_round_trip(run, tmp_path: Path) -> None:
    rep = run[0].as_dict()
    rep["meta"]["command"] = "tokenslim bench --dataset hotpotqa --backend fake --limit 12"
    md_path = report.write_markdown(rep, tmp_path / "out" / "bench.md")
    md = md_path.read_text()
    assert "```\ntokenslim bench --dataset hotpotqa --backend fake --limit 12\n```" in md
    assert md.count("| +keep_first_2 |") == 2
    assert "## Answer quality" in md and "prefill falls with tokens: yes" in md
    assert rep["meta"]["dtype"] is None and "| dtype |" not in md  # the oracle backend has no dtype: no "None" row
    assert f"| cpu | {rep['meta']['cpu']} |" in md
    js = report.write_json(rep, tmp_path / "out" / "bench.json")
    loaded = report.load_json(js)
    assert loaded["stages"] == json.loads(json.dumps(rep["stages"]))
    assert report.text_table(loaded) == report.text_table(rep)


def test_load_json_rejects_other_files(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text('{"hello": 1}')
    with pytest.raises(InputError, match="not a tokenslim bench report"):
        report.load_json(bad)
    with pytest.raises(InputError, match="cannot read"):
        report.load_json(tmp_path / "missing.json")


def test_plots_are_written(run, tmp_path: Path) -> None:
    rep = json.loads(json.dumps(run[0].as_dict()))  # a copy: the session's report stays as it is
    paths = write_plots(rep, tmp_path / "scored")
    assert [p.name for p in paths] == ["tokens.png", "prefill.png", "quality.png", "likelihood.png"]
    for p in paths:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 5000
    for stage in rep["stages"]:
        stage.pop("answer_nll_delta", None)
    rep["controls"] = []
    unscored = write_plots(rep, tmp_path / "unscored")
    assert [p.name for p in unscored] == ["tokens.png", "prefill.png", "quality.png"]  # no likelihood: no plot


def test_likelihood_plot_shows_paired_changes_and_controls(run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import matplotlib.axes

    rep = json.loads(json.dumps(run[0].as_dict()))
    for i, stage in enumerate(rep["stages"][1:]):
        stage["answer_nll_delta"] = {"mean": -0.1 * i, "low": -0.1 * i - 0.05, "high": -0.1 * i + 0.05, "n": 12}
    rep["controls"] = [{"control": "evidence_removed", "answer_nll_delta": {"mean": 1.5, "low": 1.2, "high": 1.8, "n": 12}},
                       {"control": "gold_only", "answer_nll_delta": {"mean": None, "low": None, "high": None, "n": 0}}]
    bars: list[list[float]] = []
    real_bar = matplotlib.axes.Axes.bar
    monkeypatch.setattr(matplotlib.axes.Axes, "bar", lambda self, x, h, *a, **k: bars.append(list(h)) or real_bar(self, x, h, *a, **k))
    paths = write_plots(rep, tmp_path)
    assert [p.name for p in paths] == ["tokens.png", "prefill.png", "quality.png", "likelihood.png"]
    # one bar per stage after the baseline, then each scored control (the unscored one is left out)
    assert bars[-1] == [-0.1 * i for i in range(len(rep["stages"]) - 1)] + [1.5]


def test_levers_pass_on_the_fake_backend(run) -> None:
    from bench_helpers import OracleBackend

    from tokenslim import default_pipeline
    from tokenslim.bench import datasets
    from tokenslim.bench.levers import run_levers
    from tokenslim.errors import ConfigError

    examples = datasets.hotpotqa(4)
    backend = OracleBackend({e.query: e.answers[0] for e in examples})

    def make_backend(**overrides):
        if "kv_cache_dtype" in overrides:
            raise ConfigError("this engine has no fp8 KV cache")
        return OracleBackend({})

    lv = run_levers(examples, backend, make_backend, default_pipeline(), max_tokens=4, instruction="Answer.",
                    concurrency_levels=(1, 2))
    assert lv["kv_cache_dtype"]["error"].startswith("ConfigError: this engine has no fp8")
    prefix = {(p["prompts"], p["order"]): p["second"]["prefix_cache_hit_rate"] for p in lv["prefix_caching"]}
    # Same documents in another retrieval order: only stable_prefix renders the same prefix.
    assert prefix[("uncompressed", "stable_prefix")] > 0.8 > prefix[("uncompressed", "original")]
    assert lv["max_model_len"]["accepted_default_pipeline"] == "4/4"
    assert [(c["concurrency"], c["prompts"]) for c in lv["concurrency"]] == [
        (1, "uncompressed"), (1, "default_pipeline"), (2, "uncompressed"), (2, "default_pipeline")]
    rep = dict(run[0].as_dict(), levers=lv)
    md = report.markdown(rep)
    assert "## Serving levers (4 questions, one at a time)" in md and "refused by the engine" in md
    assert "## Concurrency sweep" in md and "| stable_prefix |" in md


def test_a_report_names_no_home_folder(monkeypatch, tmp_path) -> None:
    """A model under the home folder is recorded from ``~``, so a committed report names no machine's folders;
    other values (a hub id, a path elsewhere, a folder that only starts with the same letters) stay as given."""
    from tokenslim.bench.report import portable_path

    monkeypatch.setattr(Path, "home", classmethod(lambda cls: tmp_path / "me"))
    home = str(tmp_path / "me")
    assert portable_path(home + "/.cache/tokenslim/models/SmolLM2") == "~/.cache/tokenslim/models/SmolLM2"
    assert portable_path(home) == "~"
    assert portable_path(home + "2/model") == home + "2/model"
    assert portable_path("HuggingFaceTB/SmolLM2-135M-Instruct") == "HuggingFaceTB/SmolLM2-135M-Instruct"
    assert portable_path(None) is None
