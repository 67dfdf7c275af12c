"""The transformers backend on the real SmolLM2 model."""

from __future__ import annotations

import pytest

from tokenslim.backends import Backend, HFBackend
from tokenslim.capacity import dtype_bytes

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def hf(smollm2_path):
    backend = HFBackend(smollm2_path, device="cpu")
    yield backend
    backend.close()


def test_answers_and_reads_kv_off_the_cache(hf) -> None:
    assert isinstance(hf, Backend)
    chat = [{"role": "user", "content": "What is the capital of France?"}]
    (m,) = hf.generate([chat], max_tokens=10)
    assert "Paris" in m.text
    assert m.prompt_tokens == hf.count_tokens(chat)
    # Cache tensors hold exactly what the config says: prompt + all outputs but the last.
    assert m.extra["kv_tokens"] == m.prompt_tokens + m.output_tokens - 1
    assert m.kv_bytes_allocated == m.kv_bytes == m.extra["kv_tokens"] * 30 * 2 * 3 * 64 * dtype_bytes(hf.dtype)


def test_prefill_grows_with_prompt_length(hf, rag_prompts) -> None:
    hf.generate([rag_prompts["short"]], max_tokens=1)  # warm-up
    short, long = hf.generate([rag_prompts["short"], rag_prompts["long"]], max_tokens=2)
    assert long.prompt_tokens > 20 * short.prompt_tokens
    assert long.prefill_ms > 3 * short.prefill_ms


def test_batch_generation_matches_prompt_counts(hf, rag_prompts) -> None:
    chats = [rag_prompts["short"], [{"role": "user", "content": "What is the capital of France?"}]]
    results, seconds = hf.generate_concurrent(chats, max_tokens=8)
    assert seconds > 0
    assert [r.prompt_tokens for r in results] == [hf.count_tokens(c) for c in chats]
    assert "Paris" in results[1].text


def test_unknown_dtype_is_a_config_error(smollm2_path) -> None:
    from tokenslim.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown torch dtype 'float33'"):
        HFBackend(smollm2_path, device="cpu", dtype="float33")
    with pytest.raises(ConfigError, match="unknown torch dtype 'nn'"):  # a torch attribute that is no dtype
        HFBackend(smollm2_path, device="cpu", dtype="nn")
