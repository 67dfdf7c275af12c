"""The OpenAI-compatible backend against a real `vllm serve`, and its error mapping."""

from __future__ import annotations

import socket
import threading

import pytest

from tokenslim.backends import Backend, OpenAIBackend
from tokenslim.errors import BackendTimeout, BackendUnavailable

FRANCE = [{"role": "user", "content": "What is the capital of France?"}]


@pytest.mark.slow
def test_streams_answer_usage_and_cached_tokens(vllm_server, rag_prompts, smollm2_path) -> None:
    backend = OpenAIBackend(vllm_server, model_config=smollm2_path)
    assert isinstance(backend, Backend) and backend.model == "smollm2"
    (m,) = backend.generate([FRANCE], max_tokens=12)
    assert m.text.strip() and m.extra["token_source"] == "streamed usage"  # greedy text depends on bf16 numerics
    assert m.prompt_tokens == backend.count_tokens(FRANCE)
    assert 0 < m.ttft_ms <= m.e2e_ms and m.tpot_ms > 0
    assert m.kv_bytes == (m.prompt_tokens + m.output_tokens - 1) * 30 * 2 * 3 * 64 * 2
    first, second = backend.generate([rag_prompts["long"], rag_prompts["long"]], max_tokens=4)
    assert first.prompt_tokens >= 1500
    assert second.cached_tokens is not None and second.cached_tokens > first.prompt_tokens // 2
    results, seconds = backend.generate_concurrent([FRANCE, rag_prompts["short"]], max_tokens=4)
    assert len(results) == 2 and seconds > 0 and results[1].prompt_tokens == backend.count_tokens(rag_prompts["short"])
    # A fresh cache per pass: this server has no reset endpoint (no VLLM_SERVER_DEV_MODE), so a new cache_salt.
    backend.reset_prefix_cache()
    assert backend.cache_reset_method == "cache_salt per pass"
    third, fourth = backend.generate([rag_prompts["long"], rag_prompts["long"]], max_tokens=4)
    assert third.cached_tokens == 0 and third.prompt_tokens == first.prompt_tokens  # the salt adds no tokens
    assert fourth.cached_tokens > first.prompt_tokens // 2  # within a pass the cache works
    # Without streamed usage the prompt is counted by the server's /tokenize.
    assert backend._prompt_tokens_without_usage(FRANCE) == (m.prompt_tokens, "server /tokenize (no streamed usage)")


@pytest.mark.slow
def test_prompt_logprobs_over_http_match_transformers(vllm_server, smollm2_path) -> None:
    from tokenslim.backends import HFBackend

    backend = OpenAIBackend(vllm_server, tokenizer=smollm2_path)
    paris, london = backend.score_continuations([FRANCE, FRANCE], ["Paris", "London"])
    assert backend._score_style == "prompt_logprobs" and len(paris) == 1 and sum(paris) > sum(london) + 2
    hf = HFBackend(smollm2_path, dtype="float32")
    try:
        (ref,) = hf.score_continuations([FRANCE], ["Paris"])
    finally:
        hf.close()
    assert paris[0] == pytest.approx(ref[0], abs=0.25)  # server bf16 vs float32


def test_unreachable_server_is_backend_unavailable() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(BackendUnavailable, match="cannot reach") as info:
        OpenAIBackend(f"http://127.0.0.1:{port}/v1", timeout=2)
    assert info.value.__cause__ is not None


def test_silent_server_is_backend_timeout() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    accepted: list[socket.socket] = []
    thread = threading.Thread(target=lambda: accepted.append(server.accept()[0]), daemon=True)
    thread.start()
    try:
        backend = OpenAIBackend(f"http://127.0.0.1:{port}/v1", model="m", timeout=0.5)
        with pytest.raises(BackendTimeout):
            backend.generate([FRANCE], max_tokens=2)
    finally:
        thread.join(timeout=2)
        for conn in accepted:
            conn.close()
        server.close()
