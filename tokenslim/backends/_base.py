"""The Backend protocol and the per-request Measurement it returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence, runtime_checkable

from tokenslim._chunk import Message

__all__ = ["Backend", "Measurement"]


@dataclass
class Measurement:
    """What one request cost on a real model, and what it answered.

    Times are milliseconds; ``None`` where a backend cannot observe a figure
    (an HTTP server does not expose its prefill time, for example).

    Attributes:
        text: The generated answer.
        prompt_tokens: Prompt tokens in the model's own tokenizer (what prefill paid for).
        output_tokens: Generated tokens.
        prefill_ms: Time to process the prompt (vLLM: first_token_ts - scheduled_ts).
        ttft_ms: Time to first token as the caller sees it (includes queueing).
        tpot_ms: Mean time per output token after the first.
        e2e_ms: Request latency end to end.
        cached_tokens: Prompt tokens served from the prefix cache.
        kv_bytes: KV-cache bytes this request needs, computed from the model config.
        kv_bytes_allocated: KV-cache bytes actually allocated (block granularity), where observable.
        extra: Backend-specific figures (engine metric deltas, ...).
    """

    text: str
    prompt_tokens: int
    output_tokens: int
    prefill_ms: float | None = None
    ttft_ms: float | None = None
    tpot_ms: float | None = None
    e2e_ms: float | None = None
    cached_tokens: int | None = None
    kv_bytes: int | None = None
    kv_bytes_allocated: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Backend(Protocol):
    """A real LLM that answers chat prompts and measures each request.

    ``generate`` runs requests one at a time (clean per-request figures);
    ``generate_concurrent`` submits them together (throughput).
    """

    name: str

    def generate(self, prompts: Sequence[list[Message]], *, max_tokens: int = 32) -> list[Measurement]: ...

    def generate_concurrent(self, prompts: Sequence[list[Message]], *, max_tokens: int = 32) -> tuple[list[Measurement], float]:
        """Returns the measurements and the wall-clock seconds for the whole batch."""
        ...

    def count_tokens(self, messages: list[Message]) -> int:
        """Prompt tokens of these messages after the chat template, in the model's tokenizer."""
        ...

    def close(self) -> None: ...
