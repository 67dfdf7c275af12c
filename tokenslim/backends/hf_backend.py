"""transformers backend (CPU or GPU): prefill timed as one forward pass, decode per token.

Slower than vLLM but needs nothing beyond transformers, and it can read the KV
cache tensors directly, which checks the config-based KV computation of
:mod:`tokenslim.capacity` against real memory.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any, Sequence

from tokenslim._chunk import Message
from tokenslim._internal.cpu import default_dtype
from tokenslim.backends._base import Measurement
from tokenslim.backends._common import check_prompts, continuation_ids, encode_chat
from tokenslim.capacity import kv_bytes, load_config
from tokenslim.errors import BackendError, BackendUnavailable, ConfigError, MissingDependency

__all__ = ["HFBackend", "cache_tensor_bytes"]


def cache_tensor_bytes(cache: Any) -> int:
    """Bytes of the key/value tensors held by a transformers cache (``past_key_values``)."""
    total = 0
    layers = getattr(cache, "layers", None)
    if layers is not None:
        for layer in layers:
            for name in ("keys", "values"):
                tensor = getattr(layer, name, None)
                if tensor is not None and hasattr(tensor, "nbytes"):
                    total += tensor.nbytes
        return total
    for pair in cache:  # legacy tuple of (key, value) per layer
        total += sum(t.nbytes for t in pair)
    return total


class HFBackend:
    """Measure requests with a transformers causal LM and greedy decoding.

    Args:
        model: Anything :func:`tokenslim.models.resolve_model` accepts (None: SmolLM2).
        device: "cpu", "cuda", ... (None: cuda when available).
        dtype: Weights and KV dtype ("bfloat16", "float32", ...; None: bfloat16 on a GPU
            or a CPU with native bf16, else float32, see :func:`tokenslim._internal.cpu.default_dtype`).

    Raises:
        MissingDependency: transformers / torch are not installed.
        BackendUnavailable: The model could not be loaded.
    """

    name = "transformers"

    def __init__(self, model: str | os.PathLike[str] | None = None, *, device: str | None = None, dtype: str | None = None) -> None:
        from tokenslim.models import resolve_model

        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as exc:
            raise MissingDependency("transformers", extra="models", feature="HFBackend") from exc
        self.model_path = resolve_model(model)
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        dtype = dtype or default_dtype(on_gpu=not self.device.startswith("cpu"))
        if not isinstance(getattr(torch, dtype, None), torch.dtype):
            raise ConfigError(f"unknown torch dtype {dtype!r}")
        self.dtype = dtype
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(self.model_path)
            self.model = AutoModelForCausalLM.from_pretrained(self.model_path, dtype=getattr(torch, dtype))
            self.model.to(self.device).eval()
        except Exception as exc:
            raise BackendUnavailable(f"could not load {self.model_path!r} with transformers: {type(exc).__name__}: {exc}") from exc
        self.config = load_config(self.model.config)
        eos = self.model.generation_config.eos_token_id
        self._eos = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        self._lock = threading.Lock()  # one forward pass at a time on the shared model

    def count_tokens(self, messages: list[Message]) -> int:
        """Prompt tokens after the model's chat template."""
        return len(encode_chat(self.tokenizer, messages))

    def _sync(self) -> None:
        import torch

        if self.device.startswith("cuda"):
            torch.cuda.synchronize()

    def _one(self, chat: list[Message], max_tokens: int) -> Measurement:
        import torch

        ids = torch.tensor([encode_chat(self.tokenizer, chat)], device=self.device)
        with self._lock, torch.inference_mode():
            start = time.perf_counter()
            out = self.model(input_ids=ids, use_cache=True)
            token = out.logits[:, -1].argmax(-1, keepdim=True)
            self._sync()
            first = time.perf_counter()
            generated = [int(token)]
            cache = out.past_key_values
            while len(generated) < max_tokens and generated[-1] not in self._eos:
                out = self.model(input_ids=token, past_key_values=cache, use_cache=True)
                cache = out.past_key_values
                token = out.logits[:, -1].argmax(-1, keepdim=True)
                generated.append(int(token))
            self._sync()
            end = time.perf_counter()
        held = ids.shape[1] + len(generated) - 1
        shown = generated[:-1] if generated[-1] in self._eos else generated
        prefill = (first - start) * 1000
        decode = (end - first) * 1000
        return Measurement(
            text=self.tokenizer.decode(shown, skip_special_tokens=True),
            prompt_tokens=int(ids.shape[1]),
            output_tokens=len(generated),
            prefill_ms=prefill,
            ttft_ms=prefill,
            tpot_ms=decode / (len(generated) - 1) if len(generated) > 1 else None,
            e2e_ms=prefill + decode,
            cached_tokens=0,
            kv_bytes=kv_bytes(self.config, held, self.dtype),
            kv_bytes_allocated=cache_tensor_bytes(cache),
            extra={"decode_ms": decode, "kv_tokens": held, "device": self.device},
        )

    def generate(self, prompts: Sequence[list[Message]], *, max_tokens: int = 32) -> list[Measurement]:
        """Greedy-decode each prompt in turn and measure it.

        ``kv_bytes`` is computed from the config for the tokens held in the
        cache; ``kv_bytes_allocated`` is read off the cache tensors.
        """
        if max_tokens <= 0:
            raise ConfigError(f"max_tokens must be > 0, got {max_tokens}")
        chats = check_prompts(prompts)
        try:
            return [self._one(chat, max_tokens) for chat in chats]
        except (RuntimeError, ValueError) as exc:
            raise BackendError(f"transformers generation failed: {type(exc).__name__}: {exc}") from exc

    def score_continuations(self, prompts: Sequence[list[Message]], continuations: Sequence[str]) -> list[list[float]]:
        """Teacher-forced log-probabilities of each continuation's tokens after its chat prompt.

        One forward pass over prompt + continuation; the log-softmax at the
        position before each continuation token gives that token's log-probability.

        Returns:
            Per prompt, the natural-log probability of each continuation token.
        """
        import torch

        ids, spans = continuation_ids(self.tokenizer, check_prompts(prompts), continuations)
        scores = []
        with self._lock, torch.inference_mode():
            for seq, n in zip(ids, spans):
                x = torch.tensor([seq], device=self.device)
                try:
                    logits = self.model(input_ids=x).logits[0, -n - 1 : -1].float()
                except (RuntimeError, ValueError) as exc:
                    raise BackendError(f"transformers scoring failed: {type(exc).__name__}: {exc}") from exc
                lps = torch.log_softmax(logits, dim=-1).gather(1, x[0, -n:].unsqueeze(1)).squeeze(1)
                scores.append([float(v) for v in lps.tolist()])
        return scores

    def generate_concurrent(
        self, prompts: Sequence[list[Message]], *, max_tokens: int = 32
    ) -> tuple[list[Measurement], float]:
        """Generate all prompts as one left-padded batch (``model.generate``) for throughput.

        Per-request timings are not observable inside a batch; each
        measurement carries the text and token counts, ``e2e_ms`` is the batch time.
        """
        import torch

        if max_tokens <= 0:
            raise ConfigError(f"max_tokens must be > 0, got {max_tokens}")
        encoded = [encode_chat(self.tokenizer, chat) for chat in check_prompts(prompts)]
        if not encoded:
            return [], 0.0
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        width = max(len(e) for e in encoded)
        ids = torch.tensor([[pad] * (width - len(e)) + e for e in encoded], device=self.device)
        mask = torch.tensor([[0] * (width - len(e)) + [1] * len(e) for e in encoded], device=self.device)
        with self._lock, torch.inference_mode():
            start = time.perf_counter()
            try:
                out = self.model.generate(
                    input_ids=ids, attention_mask=mask, max_new_tokens=max_tokens, do_sample=False, pad_token_id=pad
                )
            except (RuntimeError, ValueError) as exc:
                raise BackendError(f"transformers batch generation failed: {type(exc).__name__}: {exc}") from exc
            self._sync()
            seconds = time.perf_counter() - start
        results = []
        for prompt, row in zip(encoded, out[:, width:].tolist()):
            new: list[int] = []
            stopped = 0
            for t in row:
                if t in self._eos:
                    stopped = 1  # the end token was generated too
                    break
                new.append(t)
            results.append(
                Measurement(
                    text=self.tokenizer.decode(new, skip_special_tokens=True),
                    prompt_tokens=len(prompt),
                    output_tokens=len(new) + stopped,
                    e2e_ms=seconds * 1000,
                    kv_bytes=kv_bytes(self.config, len(prompt) + len(new), self.dtype),
                    extra={"output_ids": new},
                )
            )
        return results, seconds

    def close(self) -> None:
        """Release the model."""
        self.model = None
