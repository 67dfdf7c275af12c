"""The deterministic FakeBackend and get_backend."""

from __future__ import annotations

import pytest

from tokenslim.backends import Backend, FakeBackend, get_backend
from tokenslim.capacity import kv_bytes_per_token
from tokenslim.errors import ConfigError, InputError


@pytest.fixture
def chats(hotpot: list[dict]) -> list[list[dict]]:
    return [[{"role": "user", "content": r["question_text"]}] for r in hotpot[:3]]


def test_echoes_and_derives_figures_from_tokens(chats) -> None:
    fake = get_backend("fake")
    assert isinstance(fake, FakeBackend) and isinstance(fake, Backend)
    results = fake.generate(chats, max_tokens=5)
    for chat, m in zip(chats, results):
        assert m.text == " ".join(chat[0]["content"].split()[:5])
        assert m.prompt_tokens == fake.count_tokens(chat)
        assert m.prefill_ms == pytest.approx(m.prompt_tokens * 0.05)
        assert m.kv_bytes == (m.prompt_tokens + m.output_tokens - 1) * kv_bytes_per_token(fake.config)
        assert m.kv_bytes <= m.kv_bytes_allocated
    assert fake.generate(chats, max_tokens=5)[0].text == results[0].text  # deterministic


def test_simulated_prefix_cache(hotpot: list[dict]) -> None:
    fake = FakeBackend(block_size=16)
    long = [{"role": "user", "content": " ".join(c["paragraph_text"] for c in hotpot[0]["contexts"])
             if isinstance(hotpot[0]["contexts"], list) else hotpot[0]["contexts"]}]
    first, second = fake.generate([long, long])
    assert first.cached_tokens == 0 and second.cached_tokens > 0 and second.cached_tokens % 16 == 0
    assert second.prefill_ms < first.prefill_ms
    assert FakeBackend(enable_prefix_caching=False).generate([long, long])[1].cached_tokens == 0
    results, seconds = fake.generate_concurrent([long, long], max_tokens=3)
    assert len(results) == 2 and seconds > 0


def test_bad_names_and_inputs() -> None:
    with pytest.raises(ConfigError, match="unknown backend"):
        get_backend("llamafile")
    with pytest.raises(InputError):
        FakeBackend().generate([[{"role": "user"}]])
    with pytest.raises(ConfigError):
        FakeBackend().generate([[{"role": "user", "content": "x"}]], max_tokens=0)
