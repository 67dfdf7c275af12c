"""OpenAI-compatible HTTP backend (``vllm serve``, llama.cpp server, a hosted API).

Streams chat completions and times them from the client side: TTFT is the
first content chunk, TPOT the decode time over the remaining tokens. Prefill
time is not observable over HTTP, so ``prefill_ms`` stays None. Only the
standard library is used (plus transformers when ``tokenizer`` is given).

Token counts come from the final ``usage`` chunk (``stream_options.include_usage``).
Servers that ignore that option (llama-cpp-python's) are counted another way,
in this order: the model's own tokenizer (``tokenizer=``, chat template applied;
output tokens = streamed content chunks), the server's ``/tokenize`` endpoint
(vLLM), or a second, non-streamed request for the prompt (it returns ``usage``).
Each measurement names its source in ``extra["token_source"]``. Cached tokens
come from ``usage.prompt_tokens_details.cached_tokens`` where the server reports
them (vLLM: ``--enable-prompt-tokens-details``).

:meth:`OpenAIBackend.reset_prefix_cache` gives the next requests a cold cache:
vLLM's ``POST /reset_prefix_cache`` where the server exposes it
(``VLLM_SERVER_DEV_MODE=1``), else a fresh salt: vLLM's ``cache_salt`` field,
or on other servers a short unique line at the start of the first message
(a few tokens more per prompt, which then count in ``prompt_tokens``).
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import uuid
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
        tokenizer: The served model's Hugging Face folder (or anything
            :func:`tokenslim.models.resolve_model` accepts). Counts tokens when
            the server sends no streamed usage, and renders the chat template for
            :meth:`score_continuations`.
        cache_reset: How :meth:`reset_prefix_cache` works: "auto" (the server's
            reset endpoint, else a salt), "endpoint", "salt" or "none".

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
        tokenizer: str | os.PathLike[str] | None = None,
        cache_reset: str = "auto",
    ) -> None:
        if timeout <= 0 or max_workers <= 0:
            raise ConfigError("timeout and max_workers must be > 0")
        if cache_reset not in ("auto", "endpoint", "salt", "none"):
            raise ConfigError(f"cache_reset must be 'auto', 'endpoint', 'salt' or 'none', got {cache_reset!r}")
        self.base_url = base_url.rstrip("/")
        self.root_url = self.base_url.removesuffix("/v1")
        self.api_key = api_key
        self.timeout = timeout
        self.max_workers = max_workers
        self.config = model_config
        self.cache_reset = cache_reset
        self.model = model or self._first_model()
        self.tokenizer = None
        if tokenizer is not None:
            from tokenslim.models import resolve_model

            try:
                from transformers import AutoTokenizer
            except ImportError as exc:
                from tokenslim.errors import MissingDependency

                raise MissingDependency("transformers", extra="models", feature="OpenAIBackend(tokenizer=...)") from exc
            self.tokenizer = AutoTokenizer.from_pretrained(resolve_model(tokenizer))
        self._salt: str | None = None
        self._salt_field: bool | None = None  # does the server take vLLM's cache_salt?
        self._has_tokenize: bool | None = None
        self._score_style: str | None = None  # "prompt_logprobs" (vLLM) or "echo" (legacy OpenAI, llama.cpp)
        self._lock = threading.Lock()
        #: How the last requests were counted and how the cache was last reset (for the report).
        self.token_sources: set[str] = set()
        self.cache_reset_method: str | None = None

    def _request(self, path: str, body: dict[str, Any] | None = None, *, root: bool = False) -> Any:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        data = None if body is None else json.dumps(body).encode()
        base = self.root_url if root else self.base_url
        req = urllib.request.Request(base + path, data=data, headers=headers, method="GET" if body is None else "POST")
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

    def _json(self, path: str, body: dict[str, Any] | None = None, *, root: bool = False) -> Any:
        with self._request(path, body, root=root) as resp:
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
        """Prompt tokens, chat template applied: the local tokenizer if given, else the server's ``/tokenize`` (vLLM).

        Raises:
            BackendError: No tokenizer given and the server has no tokenize endpoint.
        """
        if self.tokenizer is not None:
            from tokenslim.backends._common import encode_chat

            return len(encode_chat(self.tokenizer, messages))
        reply = self._json("/tokenize", {"model": self.model, "messages": messages, "add_generation_prompt": True}, root=True)
        return int(reply["count"])

    def _probe(self, path: str, body: dict[str, Any] | None = None) -> Any:
        """A request whose failure only means "not supported here" (None)."""
        try:
            return self._json(path, body, root=True)
        except BackendError:
            return None

    def reset_prefix_cache(self) -> None:
        """Make the next requests miss the server's prefix cache (see the module docstring)."""
        if self.cache_reset == "none":
            return
        if self.cache_reset in ("auto", "endpoint"):
            reply = self._probe("/reset_prefix_cache", {})
            if isinstance(reply, dict) and reply.get("success", True):
                self._salt = None
                self.cache_reset_method = "POST /reset_prefix_cache"
                return
            if self.cache_reset == "endpoint":
                raise BackendError(f"{self.root_url}/reset_prefix_cache is not available (vLLM: VLLM_SERVER_DEV_MODE=1)")
        if self._salt_field is None:
            version = self._probe("/version")
            self._salt_field = isinstance(version, dict) and "version" in version  # vLLM answers /version
        self._salt = uuid.uuid4().hex[:12]
        self.cache_reset_method = "cache_salt per pass" if self._salt_field else "unique first line per pass"

    def _salted(self, body: dict[str, Any], chat: list[Message]) -> list[Message]:
        if self._salt is None:
            return chat
        if self._salt_field:
            body["cache_salt"] = self._salt
            return chat
        first = dict(chat[0], content=f"[{self._salt}]\n{chat[0]['content']}")
        return [first, *chat[1:]]

    def _events(self, chat: list[Message], max_tokens: int) -> Iterator[tuple[float, dict[str, Any]]]:
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens,
            "temperature": 0,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        body["messages"] = self._salted(body, chat)
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
        salted = self._salted({}, chat)
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
        if usage:
            source = "streamed usage"
            prompt = int(usage.get("prompt_tokens", 0))
            generated = int(usage.get("completion_tokens", 0))
        else:
            prompt, source = self._prompt_tokens_without_usage(salted)
            generated = len(parts)  # one content chunk per token (llama.cpp, vLLM)
        with self._lock:
            self.token_sources.add(source)
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
            extra={"inter_chunk_ms": gaps, "token_source": source},
        )

    def _prompt_tokens_without_usage(self, chat: list[Message]) -> tuple[int, str]:
        """Prompt tokens when the stream carried no usage, and where they came from."""
        if self.tokenizer is not None:
            return self.count_tokens(chat), "model tokenizer (no streamed usage)"
        if self._has_tokenize is not False:
            reply = self._probe("/tokenize", {"model": self.model, "messages": chat, "add_generation_prompt": True})
            self._has_tokenize = isinstance(reply, dict) and "count" in reply
            if self._has_tokenize:
                return int(reply["count"]), "server /tokenize (no streamed usage)"
        body: dict[str, Any] = {"model": self.model, "max_tokens": 1, "temperature": 0}
        body["messages"] = chat
        usage = self._json("/chat/completions", body).get("usage") or {}
        if "prompt_tokens" not in usage:
            raise BackendError(
                f"{self.base_url} reports no token usage, streamed or not; pass tokenizer=<model folder> to count locally"
            )
        return int(usage["prompt_tokens"]), "non-streamed request (no streamed usage)"

    def score_continuations(self, prompts: Sequence[list[Message]], continuations: Sequence[str]) -> list[list[float]]:
        """Teacher-forced log-probabilities of each continuation's tokens after its chat prompt.

        Uses ``/completions`` with the chat template rendered locally (needs
        ``tokenizer=``): vLLM's ``prompt_logprobs`` on the token ids, else the
        legacy ``echo`` + ``logprobs`` that llama.cpp's server answers (start it
        with ``--logits_all true``).

        Raises:
            ConfigError: No ``tokenizer`` was given.
            BackendError: The server returns no prompt log-probabilities.
        """
        from tokenslim.backends._common import continuation_ids

        if self.tokenizer is None:
            raise ConfigError("score_continuations needs tokenizer=<the served model's folder> to render the chat template")
        chats = check_prompts(prompts)
        ids, spans = continuation_ids(self.tokenizer, chats, continuations)
        return [self._score_one(seq, n) for seq, n in zip(ids, spans)]

    def _score_one(self, ids: list[int], n: int) -> list[float]:
        body: dict[str, Any] = {"model": self.model, "max_tokens": 1, "temperature": 0}
        if self._salt and self._salt_field:
            body["cache_salt"] = self._salt
        if self._score_style in (None, "prompt_logprobs"):
            try:
                reply = self._json("/completions", dict(body, prompt=ids, prompt_logprobs=0))
            except BackendError:
                if self._score_style:
                    raise
                reply = {}
            lps = ((reply.get("choices") or [{}])[0]).get("prompt_logprobs")
            self._score_style = "prompt_logprobs" if lps else "echo"
            if lps:
                out = []
                for pos in range(len(ids) - n, len(ids)):
                    entry = lps[pos] or {}
                    item = entry.get(str(ids[pos])) or (next(iter(entry.values())) if len(entry) == 1 else None)
                    if item is None:
                        raise BackendError(f"{self.base_url} gave no log-probability for prompt token {pos}")
                    out.append(float(item["logprob"] if isinstance(item, dict) else item))
                return out
        assert self.tokenizer is not None  # score_continuations checked it
        text = self.tokenizer.decode(ids, skip_special_tokens=False)
        reply = self._json("/completions", dict(body, prompt=text, logprobs=1, echo=True))
        logprobs = ((reply.get("choices") or [{}])[0]).get("logprobs") or {}
        values, tokens = logprobs.get("token_logprobs") or [], logprobs.get("tokens") or []
        # The echo may leave out special tokens (llama.cpp shows no <|im_start|>) and ends with the one
        # generated token (if it was not an end token), so the answer is found from the end, by its text.
        answer = self.tokenizer.decode(ids[-n:], skip_special_tokens=False).strip()
        end = len(tokens)
        for stop in (end - 1, end):
            if stop - n >= 0 and "".join(tokens[stop - n : stop]).strip() == answer and len(values) == end:
                return [float(v) for v in values[stop - n : stop]]
        raise BackendError(
            f"{self.base_url} returned no prompt log-probabilities for the answer {answer!r}; it needs vLLM's "
            "prompt_logprobs or echo+logprobs (llama.cpp: --logits_all true)"
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
