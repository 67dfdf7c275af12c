"""The tokenslim command line: argument errors, `bench` on the fake backend, `capacity` output."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tokenslim.cli import build_parser, main, parse_size


def _usage_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, message",
    [
        ([], "the following arguments are required: {bench,bench-chat,capacity}"),
        (["bench-chat", "--limit", "sgd=none"], "argument --limit: expected N or SET=N, got 'sgd=none'"),
        (["bench-chat", "--limit", "0"], "argument --limit: a limit must be >= 1, got '0'"),
        (["bench-chat", "--sets", "multiwoz"], "argument --sets: invalid choice: 'multiwoz'"),
        (["bench"], "the following arguments are required: --dataset"),
        (["bench", "--dataset", "hotpotqa", "--limit", "0"], "argument --limit: must be >= 1, got 0"),
        (["bench", "--dataset", "hotpotqa", "--limit", "ten"], "argument --limit: expected a whole number, got 'ten'"),
        (["bench", "--dataset", "hotpotqa", "--backend", "llamacpp"], "argument --backend: invalid choice: 'llamacpp'"),
        (["bench", "--dataset", "hotpotqa", "--concurrency", "-1"], "argument --concurrency: must be >= 0, got -1"),
        (["bench", "--dataset", "hotpotqa", "--backend-arg", "oops"], "expected KEY=VALUE, got 'oops'"),
        (["capacity", "--avg-input", "1500"], "the following arguments are required: --gpu-memory"),
        (["capacity", "--gpu-memory", "80 gigs", "--avg-input", "1"], "invalid size '80 gigs'"),
    ],
)
def test_argument_errors_are_clear(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    err = _usage_error(capsys, argv)
    assert message in err
    assert err.startswith("usage: tokenslim")


def test_parse_size_units() -> None:
    assert parse_size("80GiB") == 80 * 2**30
    assert parse_size("141GB") == 141 * 10**9
    assert parse_size("512 MiB") == 512 * 2**20
    assert parse_size("1.5TiB") == int(1.5 * 2**40)
    assert parse_size("1024B") == 1024
    with pytest.raises(argparse.ArgumentTypeError, match="no unit: write e.g. 80GiB"):
        parse_size("80")  # 80 bytes is never what was meant
    with pytest.raises(argparse.ArgumentTypeError):
        parse_size("-1GiB")
    with pytest.raises(argparse.ArgumentTypeError):
        parse_size("0")


def test_help_lists_subcommands() -> None:
    text = build_parser().format_help()
    assert "bench" in text and "bench-chat" in text and "capacity" in text


def test_bench_chat_on_the_simulated_cache(capsys: pytest.CaptureFixture[str], tmp_path: Path, data_dir: Path) -> None:
    """Two CoQA conversations on the simulated prefix cache: every row, per-turn records, a plot."""
    import json

    out = tmp_path / "chat.json"
    assert main(["bench-chat", "--backend", "sim", "--sets", "coqa", "--limit", "coqa=2", "--out", str(out), "--no-progress"]) == 0
    data = json.loads(out.read_text())
    rows = data["summary"]["coqa"]
    assert list(rows) == ["full", "query-independent", "per-request", "cache-aware", "cache-aware + stable docs"]
    assert {r["dialogue"] for r in data["records"]["coqa"]} and len({r["dialogue"] for r in data["records"]["coqa"]}) == 2
    full, stable = rows["full"], rows["cache-aware + stable docs"]
    assert stable["computed"] < full["computed"] <= full["sent"]
    assert 0 <= full["cache_hit"] < stable["cache_hit"] < 1
    assert out.with_suffix(".png").stat().st_size > 0
    assert data["command"].startswith("tokenslim bench-chat --backend sim")
    assert "cache-aware + stable docs" in capsys.readouterr().out


def test_unknown_dataset_is_a_clear_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = main(["bench", "--dataset", "hotpot", "--backend", "fake", "--no-progress"])
    assert code == 2
    err = capsys.readouterr().err
    assert "tokenslim bench: error: unknown dataset 'hotpot'" in err and "hotpotqa" in err


def test_missing_jsonl_file_says_it_does_not_exist(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = main(["bench", "--dataset", str(tmp_path / "nope.jsonl"), "--backend", "fake", "--no-progress"])
    assert code == 2
    err = capsys.readouterr().err
    assert f"dataset file {str(tmp_path / 'nope.jsonl')!r} does not exist" in err and "unknown dataset" not in err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    import tokenslim

    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0 and capsys.readouterr().out.strip() == f"tokenslim {tokenslim.__version__}"


def test_bench_measures_a_saved_pipeline(capsys: pytest.CaptureFixture[str], tmp_path: Path, data_dir: Path) -> None:
    import tokenslim
    from tokenslim.stages import Budget, Dedupe, TrimTopK

    config = tmp_path / "pipe.json"
    pipe = tokenslim.Pipeline([Dedupe(), TrimTopK(k=3), Budget(max_tokens=400)])
    config.write_text(json.dumps(pipe.to_config()))
    out_dir = tmp_path / "run"
    argv = ["bench", "--dataset", "hotpotqa", "--backend", "fake", "--limit", "3", "--warmup", "0", "--out", str(out_dir),
            "--concurrency", "0", "--no-progress", "--no-plots", "--pipeline", str(config)]
    assert main(argv) == 0
    rep = json.loads((out_dir / "bench.json").read_text())
    assert [s["stage"] for s in rep["stages"]] == ["baseline", "+dedupe", "+trim_top_k", "+budget"]
    assert max(r["tokens_cl100k"] for r in rep["examples"]["+budget"]) <= 400
    capsys.readouterr()
    assert main([*argv[:-1], str(tmp_path / "missing.json")]) == 2
    assert "cannot read pipeline config" in capsys.readouterr().err
    config.write_text(json.dumps({"steps": [{"stage": "compress_documents", "params": {"ratio": 3}}]}))
    assert main(argv) == 2
    assert "ratio must be None or in (0, 1]" in capsys.readouterr().err


def test_python_dash_m_runs_the_cli() -> None:
    proc = subprocess.run([sys.executable, "-m", "tokenslim", "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "usage: tokenslim" in proc.stdout


SMOLLM2_135M_CONFIG = {  # the published SmolLM2-135M config (LLaMA layout, grouped-query attention)
    "architectures": ["LlamaForCausalLM"],
    "hidden_size": 576,
    "intermediate_size": 1536,
    "num_attention_heads": 9,
    "num_hidden_layers": 30,
    "num_key_value_heads": 3,
    "max_position_embeddings": 8192,
    "vocab_size": 49152,
    "tie_word_embeddings": True,
}


@pytest.fixture()
def model_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "smol"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(SMOLLM2_135M_CONFIG))
    return folder


def test_capacity_before_and_after(capsys: pytest.CaptureFixture[str], model_dir: Path) -> None:
    argv = ["capacity", "--model", str(model_dir), "--gpu-memory", "80GiB", "--weight-dtype", "bf16",
            "--kv-dtype", "fp8", "--avg-input", "1500", "--p95-input", "3000", "--output", "64", "--reduction", "0.5"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    # 30 layers x (2 x 3 kv heads x 64 dims) x 1 byte (fp8)
    assert "11520 B/token" in out
    assert "after: avg 750, p95 1500" in out
    assert "token reduction: 50.0% avg" in out
    rows = {line.split("  ")[0].strip(): line.split() for line in out.splitlines() if line.startswith(("max concurrent", "advised"))}
    before, after = int(rows["max concurrent (avg)"][-2]), int(rows["max concurrent (avg)"][-1])
    assert after > 1.8 * before
    assert rows["advised max_model_len"][-2:] == ["3072", "1792"]  # 3000+64 and 1500+64, up to 256s
    assert "advice: serve with --max-model-len 1792 (covers the p95 (about 5% of requests rejected) prompt" in out
    assert "about 1 request in 20 would be rejected" in out
    assert main([*argv, "--max-input", "5000"]) == 0
    out = capsys.readouterr().out
    assert "advice: serve with --max-model-len 2816 (covers the max prompt" in out  # 2500 + 64, up to 256s

    assert main([*argv[:-2], "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["max_concurrent_before"] == plan["max_concurrent_after"]  # no reduction given
    assert "none given" in plan["reduction_source"]


def test_capacity_errors(capsys: pytest.CaptureFixture[str], model_dir: Path, tmp_path: Path) -> None:
    base = ["capacity", "--model", str(model_dir), "--gpu-memory", "24GiB", "--avg-input", "1000"]
    assert main([*base, "--reduction", "1.5"]) == 2
    assert "--reduction is a fraction in [0, 1), got 1.5" in capsys.readouterr().err
    assert main([*base, "--kv-dtype", "fp7"]) == 2
    assert "unknown dtype 'fp7'" in capsys.readouterr().err
    assert main([*base, "--from-bench", str(tmp_path / "missing.json")]) == 2
    assert "cannot read bench report" in capsys.readouterr().err
    assert main(["capacity", "--model", str(tmp_path), "--gpu-memory", "24GiB", "--avg-input", "1000"]) == 2
    assert "no model config" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(["capacity", "--model", str(model_dir), "--gpu-memory", "80", "--avg-input", "1000"])
    assert info.value.code == 2 and "size '80' has no unit" in capsys.readouterr().err


def test_bench_on_fake_backend_then_capacity_from_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, model_dir: Path, data_dir: Path
) -> None:
    import tokenslim

    out_dir = tmp_path / "run"
    argv = ["bench", "--dataset", "hotpotqa", "--backend", "fake", "--limit", "6", "--out", str(out_dir),
            "--concurrency", "3", "--no-progress"]
    assert main(argv) == 0
    stdout = capsys.readouterr().out
    steps = list(tokenslim.default_pipeline().named_steps)
    for step in steps:
        assert f"+{step}" in stdout
    assert "prefill falls with tokens: yes" in stdout
    assert f"Command: tokenslim {' '.join(argv)}" in stdout
    rep = json.loads((out_dir / "bench.json").read_text())
    assert [s["stage"] for s in rep["stages"]] == ["baseline", *(f"+{s}" for s in steps)]
    assert rep["meta"]["dataset"] == "hotpotqa" and rep["meta"]["n_examples"] == 6
    assert rep["stages"][-1]["token_reduction_pct"] > 20
    assert (out_dir / "bench.md").read_text().count("| baseline |") == 2
    assert sorted(p.name for p in out_dir.glob("*.png")) == ["likelihood.png", "prefill.png", "quality.png", "tokens.png"]

    assert main(["capacity", "--model", str(model_dir), "--gpu-memory", "24GiB", "--avg-input", "1500",
                 "--from-bench", str(out_dir / "bench.json")]) == 0
    cap = capsys.readouterr().out
    assert "measured by" in cap and "baseline -> +" in cap
    saved = float(cap.split("token reduction: ")[1].split("%")[0])
    assert saved == pytest.approx(rep["stages"][-1]["token_reduction_pct"], abs=0.1)
    assert "on the bench's 6 prompts (+64 output), reject rate <= 0:" in cap and "(rejects 0.0%)" in cap
