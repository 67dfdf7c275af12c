"""A deterministic backend without a model, for fast tests of code built on backends.

It answers with the first words of the last user message and derives every
figure from token counts (whitespace tokens of the rendered prompt), so tests
of runners, metrics and plots are exact and take milliseconds.
"""

from __future__ import annotations

from typing import Any, Sequence

from tokenslim._chunk import Message
from tokenslim.backends._base import Measurement
from tokenslim.backends._common import check_prompts, render_plain
from tokenslim.capacity import kv_bytes
from tokenslim.errors import ConfigError

__all__ = ["FakeBackend", "SMOLLM2_KV_CONFIG"]

#: The KV-relevant part of SmolLM2-135M's config (30 layers, 3 KV heads of 64).
SMOLLM2_KV_CONFIG: dict[str, Any] = {
    "num_hidden_layers": 30,
    "num_attention_heads": 9,
    "num_key_value_heads": 3,
    "head_dim": 64,
    "hidden_size": 576,
}


class FakeBackend:
    """Deterministic stand-in for a real LLM.

    Args:
        prefill_ms_per_token: Simulated prefill cost of one uncached prompt token.
        tpot_ms: Simulated time per output token.
        enable_prefix_caching: Simulate a prefix cache: prompt tokens shared with an
            earlier prompt (whole blocks) count as cached and cost no prefill.
        block_size: Cache block size for allocation and prefix caching.
        config: Model config for the KV figures (default: SmolLM2-135M).
    """

    name = "fake"

    def __init__(
        self,
        *,
        prefill_ms_per_token: float = 0.05,
        tpot_ms: float = 1.0,
        enable_prefix_caching: bool = True,
        block_size: int = 16,
        config: dict[str, Any] | None = None,
    ) -> None:
        if prefill_ms_per_token < 0 or tpot_ms < 0 or block_size <= 0:
            raise ConfigError("FakeBackend needs prefill_ms_per_token >= 0, tpot_ms >= 0 and block_size > 0")
        self.prefill_ms_per_token = prefill_ms_per_token
        self.tpot_ms = tpot_ms
        self.enable_prefix_caching = enable_prefix_caching
        self.block_size = block_size
        self.config = dict(config or SMOLLM2_KV_CONFIG)
        self._seen: list[list[str]] = []

    @staticmethod
    def _tokens(messages: list[Message]) -> list[str]:
        return render_plain(messages).split()

    def count_tokens(self, messages: list[Message]) -> int:
        """Whitespace tokens of the plainly rendered chat."""
        return len(self._tokens(messages))

    def _cached(self, tokens: list[str]) -> int:
        if not self.enable_prefix_caching:
            return 0
        best = 0
        for old in self._seen:
            n = 0
            for a, b in zip(old, tokens):
                if a != b:
                    break
                n += 1
            best = max(best, n)
        # Like vLLM: whole blocks only, and the last prompt token is always computed.
        return min(best, len(tokens) - 1) // self.block_size * self.block_size

    def _one(self, chat: list[Message], max_tokens: int) -> Measurement:
        tokens = self._tokens(chat)
        cached = self._cached(tokens)
        self._seen.append(tokens)
        user = [m["content"] for m in chat if m["role"] == "user"]
        words = (user[-1] if user else chat[-1]["content"]).split()[:max_tokens]
        generated = max(len(words), 1)
        prefill = (len(tokens) - cached) * self.prefill_ms_per_token
        held = len(tokens) + generated - 1
        return Measurement(
            text=" ".join(words),
            prompt_tokens=len(tokens),
            output_tokens=generated,
            prefill_ms=prefill,
            ttft_ms=prefill,
            tpot_ms=self.tpot_ms if generated > 1 else None,
            e2e_ms=prefill + self.tpot_ms * (generated - 1),
            cached_tokens=cached,
            kv_bytes=kv_bytes(self.config, held),
            kv_bytes_allocated=kv_bytes(self.config, held, block_size=self.block_size),
            extra={"block_size": self.block_size},
        )

    def generate(self, prompts: Sequence[list[Message]], *, max_tokens: int = 32) -> list[Measurement]:
        """Answer each prompt in turn (no sleeping: figures are simulated)."""
        if max_tokens <= 0:
            raise ConfigError(f"max_tokens must be > 0, got {max_tokens}")
        return [self._one(chat, max_tokens) for chat in check_prompts(prompts)]

    def score_continuations(self, prompts: Sequence[list[Message]], continuations: Sequence[str]) -> list[list[float]]:
        """Simulated answer log-probabilities: -0.5 per continuation token when the
        continuation occurs in the prompt, -3.0 when it does not (an oracle reader)."""
        chats = check_prompts(prompts)
        if len(chats) != len(continuations):
            raise ConfigError(f"{len(chats)} prompts but {len(continuations)} continuations")
        out = []
        for chat, text in zip(chats, continuations):
            found = text.lower() in render_plain(chat).lower()
            out.append([-0.5 if found else -3.0] * max(len(text.split()), 1))
        return out

    def generate_concurrent(
        self, prompts: Sequence[list[Message]], *, max_tokens: int = 32
    ) -> tuple[list[Measurement], float]:
        """Answer all prompts; simulated batch seconds = all prefills + the longest decode."""
        results = self.generate(prompts, max_tokens=max_tokens)
        prefill = sum(r.prefill_ms or 0.0 for r in results)
        decode = max(((r.e2e_ms or 0.0) - (r.prefill_ms or 0.0) for r in results), default=0.0)
        return results, (prefill + decode) / 1000

    def close(self) -> None:
        """Forget the simulated prefix cache."""
        self._seen.clear()
