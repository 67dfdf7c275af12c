"""Bench test helpers: toy stages and a deterministic backend with a known truth (imported by tests)."""

from __future__ import annotations

from typing import Sequence

from tokenslim._chunk import Message
from tokenslim._result import Result
from tokenslim.backends._base import Measurement
from tokenslim.backends.fake_backend import FakeBackend
from tokenslim.stages import BaseStage


class KeepFirst(BaseStage):
    """Keep the first ``k`` chunks (records the rest as drops)."""

    def __init__(self, *, k: int = 5) -> None:
        self.k = k

    def apply(self, result: Result) -> Result:
        for c in result.chunks[self.k :]:
            result.drop(c, reason="test_cut")
        result.chunks = result.chunks[: self.k]
        return result


class NoOp(BaseStage):
    """Changes nothing (like StripHTML on plain text)."""

    def apply(self, result: Result) -> Result:
        return result


class OracleBackend(FakeBackend):
    """The real FakeBackend (its prefill, KV and prefix-cache figures), answering like an
    oracle: correctly while the gold answer is still in the prompt, else "I do not know".

    It records what it was sent, and its ``reset_prefix_cache`` clears the simulated
    cache (as vLLM's does), so tests can check what the runner sent and when.
    """

    name = "oracle"
    model = "fake-oracle"

    def __init__(self, answers: dict[str, str]) -> None:
        super().__init__()
        self.answers = answers
        self.sequential: list[list[Message]] = []
        self.concurrent: list[list[Message]] = []
        self.resets = 0
        self._batch = False

    def _one(self, chat: list[Message], max_tokens: int) -> Measurement:
        m = super()._one(chat, max_tokens)
        (self.concurrent if self._batch else self.sequential).append(chat)
        text = chat[-1]["content"]
        gold = self.answers.get(text.rsplit("Question: ", 1)[1], "")
        m.text = (gold if gold and gold in text else "I do not know") + "\nand then some rambling"
        return m

    def generate_concurrent(self, prompts: Sequence[list[Message]], *, max_tokens: int = 32) -> tuple[list[Measurement], float]:
        self._batch = True
        try:
            return super().generate_concurrent(prompts, max_tokens=max_tokens)
        finally:
            self._batch = False

    def reset_prefix_cache(self) -> None:
        self.resets += 1
        self._seen.clear()
