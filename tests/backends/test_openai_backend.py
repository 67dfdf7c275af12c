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
    assert "Paris" in m.text
    assert m.prompt_tokens == backend.count_tokens(FRANCE)
    assert 0 < m.ttft_ms <= m.e2e_ms and m.tpot_ms > 0
    assert m.kv_bytes == (m.prompt_tokens + m.output_tokens - 1) * 30 * 2 * 3 * 64 * 2
    first, second = backend.generate([rag_prompts["long"], rag_prompts["long"]], max_tokens=4)
    assert first.prompt_tokens >= 1500
    assert second.cached_tokens is not None and second.cached_tokens > first.prompt_tokens // 2
    results, seconds = backend.generate_concurrent([FRANCE, rag_prompts["short"]], max_tokens=4)
    assert len(results) == 2 and seconds > 0 and results[1].prompt_tokens == backend.count_tokens(rag_prompts["short"])


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
