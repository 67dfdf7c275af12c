"""The OpenAI backend and `tokenslim bench --backend openai` against a real llama-cpp-python server.

That server ignores ``stream_options.include_usage`` and has no prefix-cache reset
endpoint, so this checks the fallbacks: token counts from the model's tokenizer or
a non-streamed request, a unique first line per pass, and prompt log-probabilities
via ``echo`` + ``logprobs``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tokenslim.backends import OpenAIBackend
from tokenslim.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.llama_cpp]

FRANCE = [{"role": "user", "content": "What is the capital of France?"}]


def test_counts_tokens_without_streamed_usage(llama_server, smollm2_path) -> None:
    plain = OpenAIBackend(llama_server)
    (m,) = plain.generate([FRANCE], max_tokens=6)
    assert m.extra["token_source"] == "non-streamed request (no streamed usage)"
    local = OpenAIBackend(llama_server, tokenizer=smollm2_path)
    (n,) = local.generate([FRANCE], max_tokens=6)
    assert n.extra["token_source"] == "model tokenizer (no streamed usage)"
    assert m.prompt_tokens == n.prompt_tokens == local.count_tokens(FRANCE)  # server and tokenizer agree
    assert 0 < n.output_tokens <= 6 and n.ttft_ms > 0 and n.cached_tokens is None
    local.reset_prefix_cache()
    assert local.cache_reset_method == "unique first line per pass"
    (salted,) = local.generate([FRANCE], max_tokens=2)
    assert salted.prompt_tokens > n.prompt_tokens  # the salt line is counted, not hidden
    paris, london = local.score_continuations([FRANCE, FRANCE], ["Paris", "London"])
    assert local._score_style == "echo" and sum(paris) > sum(london) + 2


def test_bench_through_openai_backend(llama_server, smollm2_path, tmp_path: Path) -> None:
    out = tmp_path / "bench"
    argv = ["bench", "--dataset", "hotpotqa", "--backend", "openai", "--backend-arg", f"base_url={llama_server}",
            "--backend-arg", f"tokenizer={smollm2_path}", "--limit", "2", "--max-tokens", "4", "--concurrency", "2",
            "--repeats", "1", "--warmup", "0", "--no-plots", "--no-progress", "--out", str(out),
            # llama-cpp-python computes echo log-probabilities in Python (seconds per 1,000 prompt tokens), so the
            # likelihood over llama.cpp is checked on a short prompt above, not on 1,500-token RAG prompts here.
            "--no-likelihood", "--backend-arg", "timeout=600"]
    assert main(argv) == 0
    rep = json.loads((out / "bench.json").read_text())
    assert rep["meta"]["token_source"] == ["model tokenizer (no streamed usage)"]
    assert rep["meta"]["cache_reset"] == "unique first line per pass"
    base, last = rep["stages"][0], rep["stages"][-1]
    assert last["tokens_model"]["mean"] < base["tokens_model"]["mean"]
    assert base["ttft_ms"]["p50"] > 0 and base["prefill_ms"]["p50"] is None
    assert base["n"] == 2 and base["answer_nll"]["n"] == 0 and rep["controls"] == []
