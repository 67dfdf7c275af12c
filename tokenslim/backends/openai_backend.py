"""OpenAI-compatible HTTP backend (``vllm serve``, llama.cpp server, a hosted API).

Streams chat completions and times them from the client side: TTFT is the
first content chunk, TPOT the decode time over the remaining tokens. Token
counts come from the final ``usage`` chunk (``stream_options.include_usage``),
cached tokens from ``usage.prompt_tokens_details.cached_tokens`` where the
server reports them (vLLM: ``--enable-prompt-tokens-details``). Prefill time
is not observable over HTTP, so ``prefill_ms`` stays None. Only the standard
library is used.
"""

from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterator, Sequence

from tokenslim._chunk import Message
from tokenslim.backends._base import Measurement
from tokenslim.backends._common import check_prompts
from tokenslim.capacity import kv_bytes
from tokenslim.errors import BackendError, BackendTimeout, BackendUnavailable, ConfigError

__all__ = ["OpenAIBackend"]


class OpenAIBackend:
    """Measure requests against an OpenAI-compatible server.

    Args:
        base_url: Server root, e.g. "http://127.0.0.1:8000/v1".
        model: Served model name (None: the first one ``/models`` lists).
        api_key: Bearer token, if the server wants one.
        timeout: Seconds to wait for the server on each read.
        model_config: Optional model config (anything :func:`tokenslim.capacity.load_config`
            accepts) to fill in ``kv_bytes``.
        max_workers: Parallel requests in :meth:`generate_concurrent`.

    Raises:
        BackendUnavailable: The server cannot be reached (when ``model`` is None).
    """

    name = "openai"

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000/v1",
        *,
        model: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        model_config: Any = None,
        max_workers: int = 64,
    ) -> None:
        if timeout <= 0 or max_workers <= 0:
            raise ConfigError("timeout and max_workers must be > 0")
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.max_workers = max_workers
        self.config = model_config
        self.model = model or self._first_model()

    def _request(self, path: str, body: dict[str, Any] | None = None) -> Any:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base_url + path, data=data, headers=headers, method="GET" if body is None else "POST")
        try:
            return urllib.request.urlopen(req, timeout=self.timeout)
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")[:500]
            raise BackendError(f"{self.base_url}{path} answered HTTP {exc.code}: {detail}") from exc
        except (socket.timeout, TimeoutError) as exc:
            raise BackendTimeout(f"{self.base_url}{path} did not answer within {self.timeout} s") from exc
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, (socket.timeout, TimeoutError)):
                raise BackendTimeout(f"{self.base_url}{path} did not answer within {self.timeout} s") from exc
            raise BackendUnavailable(f"cannot reach {self.base_url}{path}: {exc.reason}") from exc

    def _json(self, path: str, body: dict[str, Any] | None = None) -> Any:
        with self._request(path, body) as resp:
            try:
                return json.loads(resp.read())
            except ValueError as exc:
                raise BackendError(f"{self.base_url}{path} returned invalid JSON") from exc

    def _first_model(self) -> str:
        models = self._json("/models").get("data") or []
        if not models:
            raise BackendUnavailable(f"{self.base_url}/models lists no model; pass model=...")
        return str(models[0]["id"])

    def count_tokens(self, messages: list[Message]) -> int:
        """Prompt tokens via the server's ``/tokenize`` endpoint (vLLM), chat template applied.

        Raises:
            BackendError: The server has no tokenize endpoint.
        """
        root = self.base_url.removesuffix("/v1")
        saved, self.base_url = self.base_url, root
        try:
            reply = self._json("/tokenize", {"model": self.model, "messages": messages, "add_generation_prompt": True})
        finally:
            self.base_url = saved
        return int(reply["count"])

    def _events(self, chat: list[Message], max_tokens: int) -> Iterator[tuple[float, dict[str, Any]]]:
        body = {
            "model": self.model,
            "messages": chat,
            "max_tokens": max_tokens,
            "temperature": 0,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        with self._request("/chat/completions", body) as resp:
            try:
                for raw in resp:
                    line = raw.decode("utf-8").strip()
                    if not line.startswith("data:"):
                        continue
                    payload = line[5:].strip()
                    if payload == "[DONE]":
                        return
                    yield time.perf_counter(), json.loads(payload)
            except (socket.timeout, TimeoutError) as exc:
                raise BackendTimeout(f"stream from {self.base_url} stalled for {self.timeout} s") from exc
            except ValueError as exc:
                raise BackendError(f"malformed stream event from {self.base_url}: {exc}") from exc

    def _one(self, chat: list[Message], max_tokens: int) -> Measurement:
        start = time.perf_counter()
        first = last = None
        parts: list[str] = []
        usage: dict[str, Any] = {}
        gaps: list[float] = []
        for stamp, event in self._events(chat, max_tokens):
            if event.get("usage"):
                usage = event["usage"]
            for choice in event.get("choices") or []:
                piece = (choice.get("delta") or {}).get("content")
                if piece:
                    if first is None:
                        first = stamp
                    elif last is not None:
                        gaps.append((stamp - last) * 1000)
                    last = stamp
                    parts.append(piece)
        end = time.perf_counter()
        if not usage:
            raise BackendError(f"{self.base_url} sent no usage; it must support stream_options.include_usage")
        prompt = int(usage.get("prompt_tokens", 0))
        generated = int(usage.get("completion_tokens", 0))
        details = usage.get("prompt_tokens_details") or {}
        ttft = (first - start) * 1000 if first is not None else None
        tpot = ((last - first) * 1000 / (generated - 1)) if first is not None and last is not None and generated > 1 else None
        return Measurement(
            text="".join(parts),
            prompt_tokens=prompt,
            output_tokens=generated,
            ttft_ms=ttft,
            tpot_ms=tpot,
            e2e_ms=(end - start) * 1000,
            cached_tokens=details.get("cached_tokens"),
            kv_bytes=kv_bytes(self.config, prompt + max(generated - 1, 0)) if self.config is not None else None,
            extra={"inter_chunk_ms": gaps},
        )

    def generate(self, prompts: Sequence[list[Message]], *, max_tokens: int = 32) -> list[Measurement]:
        """Stream each prompt in turn (greedy) and measure it."""
        if max_tokens <= 0:
            raise ConfigError(f"max_tokens must be > 0, got {max_tokens}")
        return [self._one(chat, max_tokens) for chat in check_prompts(prompts)]

    def generate_concurrent(
        self, prompts: Sequence[list[Message]], *, max_tokens: int = 32
    ) -> tuple[list[Measurement], float]:
        """Send all prompts at once from a thread pool; returns measurements and batch seconds."""
        if max_tokens <= 0:
            raise ConfigError(f"max_tokens must be > 0, got {max_tokens}")
        chats = check_prompts(prompts)
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=min(self.max_workers, max(len(chats), 1))) as pool:
            results = list(pool.map(lambda c: self._one(c, max_tokens), chats))
        return results, time.perf_counter() - start

    def close(self) -> None:
        """Nothing to release (one connection per request)."""
