"""The ablation runner: baseline, then the pipeline's stages added one at a time, on a real LLM.

For a pipeline ``[s1, s2, ..., sn]`` the runner measures the cumulative prefixes
``[]`` (the baseline: uncompressed prompts), ``[s1]``, ``[s1, s2]``, ... so each row
differs from the one above by exactly one stage. Per row it records prompt tokens
(model tokenizer and cl100k), prefill / TTFT / TPOT / end-to-end latency, KV-cache
bytes, prefix-cache hits, throughput from a separate concurrent pass, and answer
quality (EM, token F1, answer-in-context, state retention) with bootstrap intervals,
plus the paired change against the baseline.

A stage that changes no prompt on the dataset (StripHTML on plain text) is **listed
but not re-measured**: its row repeats the figures of the row above and is marked
``changed: false``. Re-sending identical prompts would only measure the prefix cache.
"""

from __future__ import annotations

import datetime as _dt
import inspect
import math
import platform
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from tokenslim._chunk import Message
from tokenslim._internal.cpu import cpu_summary
from tokenslim._pipeline import Pipeline
from tokenslim._result import Result
from tokenslim.backends._base import Backend, Measurement
from tokenslim.bench import metrics as M
from tokenslim.bench.datasets import Example
from tokenslim.errors import ConfigError, InputError, MissingDependency
from tokenslim.tokenizers import Tokenizer, get_tokenizer

__all__ = ["DEFAULT_INSTRUCTION", "BenchReport", "run_ablation", "stage_labels", "context_text", "first_line"]

DEFAULT_INSTRUCTION = "Answer with a short phrase only."
"""Put before the question so small models answer briefly (EM/F1 need short answers)."""

_MB = 1024 * 1024


@dataclass
class BenchReport:
    """Everything one ablation measured.

    Attributes:
        meta: Run settings (dataset, backend, model, limit, command, machine, date...).
        stages: One dict per row (``"baseline"``, ``"+strip_html"``, ...), in ablation order.
        examples: Per-row, per-example records (tokens, latency, answer, scores).
        checks: Sanity checks such as whether prefill time falls with tokens.
    """

    meta: dict[str, Any]
    stages: list[dict[str, Any]]
    examples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    checks: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly form (what ``report.write_json`` saves)."""
        return {"meta": self.meta, "checks": self.checks, "stages": self.stages, "examples": self.examples}

    def stage(self, label: str) -> dict[str, Any]:
        """The row with this label (``"baseline"`` or ``"+<step>"``).

        Raises:
            KeyError: no such row.
        """
        for s in self.stages:
            if s["stage"] == label:
                return s
        raise KeyError(f"no stage {label!r}; rows are {[s['stage'] for s in self.stages]}")


def stage_labels(pipeline: Pipeline) -> list[str]:
    """Row labels of the ablation: ``["baseline", "+<step1>", "+<step2>", ...]``."""
    return ["baseline", *(f"+{name}" for name in pipeline.named_steps)]


def context_text(result: Result) -> str:
    """Everything in the prompt except the question: system prompt, history, chunks.

    Answer-in-context and state retention look for gold strings here.
    """
    parts = [result.system_prompt or ""]
    parts.extend(str(m.get("content", "")) for m in result.history)
    parts.extend(c.text for c in result.chunks)
    return "\n".join(p for p in parts if p)


def first_line(text: str) -> str:
    """The first non-empty line of a generated answer (what EM/F1 score).

    Small models often continue past a short answer; the first line is the answer.
    """
    for line in text.strip().splitlines():
        if line.strip():
            return line.strip()
    return ""


def _messages_tokens(tok: Tokenizer, messages: list[Message]) -> int:
    return sum(tok.count(str(m.get("content", ""))) for m in messages)


def _pct(values: Sequence[float | None]) -> dict[str, float | None]:
    def r(x: float | None) -> float | None:
        return None if x is None else round(x, 3)

    present = [v for v in values if v is not None]
    return {
        "p50": r(M.percentile(values, 50)),
        "p95": r(M.percentile(values, 95)),
        "p99": r(M.percentile(values, 99)),
        "mean": r(sum(present) / len(present)) if present else None,
    }


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _reset_prefix_cache(backend: Backend) -> None:
    reset = getattr(backend, "reset_prefix_cache", None)
    if callable(reset):
        reset()


def _run_concurrent(
    backend: Backend, prompts: list[list[Message]], max_tokens: int, concurrency: int
) -> tuple[list[Measurement], float]:
    """The throughput pass: all prompts with at most ``concurrency`` in flight.

    A backend whose ``generate_concurrent`` takes ``concurrency`` caps in-flight
    requests itself; otherwise prompts go in waves of ``concurrency``.
    """
    params = inspect.signature(backend.generate_concurrent).parameters
    if "concurrency" in params:
        return backend.generate_concurrent(prompts, max_tokens=max_tokens, concurrency=concurrency)  # type: ignore[call-arg]
    out: list[Measurement] = []
    wall = 0.0
    for start in range(0, len(prompts), concurrency):
        ms, seconds = backend.generate_concurrent(prompts[start : start + concurrency], max_tokens=max_tokens)
        out.extend(ms)
        wall += seconds
    return out, wall


def _stage_row(
    label: str,
    step: str | None,
    records: list[dict[str, Any]],
    baseline: list[dict[str, Any]] | None,
    throughput: dict[str, Any] | None,
    *,
    changed: bool,
    seed: int,
) -> dict[str, Any]:
    """Aggregate one row's per-example records into figures with intervals."""

    def col(key: str) -> list[Any]:
        return [r[key] for r in records]

    row: dict[str, Any] = {"stage": label, "step": step, "changed": changed, "n": len(records)}
    row["tokens_model"] = M.bootstrap_ci(col("tokens_model"), seed=seed).as_dict(2)
    row["tokens_cl100k"] = M.bootstrap_ci(col("tokens_cl100k"), seed=seed).as_dict(2)
    row["tokens_model_p50"] = M.percentile(col("tokens_model"), 50)
    if baseline is not None:
        base = _mean([r["tokens_model"] for r in baseline]) or 0.0
        now = _mean(col("tokens_model")) or 0.0
        row["token_reduction_pct"] = round(100 * (1 - now / base), 2) if base else 0.0
        base_cl = _mean([r["tokens_cl100k"] for r in baseline]) or 0.0
        now_cl = _mean(col("tokens_cl100k")) or 0.0
        row["token_reduction_cl100k_pct"] = round(100 * (1 - now_cl / base_cl), 2) if base_cl else 0.0
    else:
        row["token_reduction_pct"] = 0.0
        row["token_reduction_cl100k_pct"] = 0.0
    row["chunks"] = _mean(col("chunks"))
    row["turns"] = _mean(col("turns"))
    row["stage_ms"] = _pct(col("stage_ms"))
    for key in ("prefill_ms", "ttft_ms", "tpot_ms", "e2e_ms"):
        row[key] = _pct(col(key))
    row["prefill_ms_mean_ci"] = M.bootstrap_ci(col("prefill_ms"), seed=seed).as_dict(3)
    row["ttft_ms_mean_ci"] = M.bootstrap_ci(col("ttft_ms"), seed=seed).as_dict(3)
    kv = _mean(col("kv_bytes"))
    kv_alloc = _mean(col("kv_bytes_allocated"))
    row["kv_mb_per_request"] = None if kv is None else round(kv / _MB, 3)
    row["kv_mb_allocated_per_request"] = None if kv_alloc is None else round(kv_alloc / _MB, 3)
    cached = [r["cached_tokens"] for r in records if r["cached_tokens"] is not None]
    prompt = sum(r["tokens_model"] for r in records if r["cached_tokens"] is not None)
    row["prefix_cache_hit_rate"] = round(sum(cached) / prompt, 4) if cached and prompt else None
    row["throughput"] = throughput
    quality: dict[str, Any] = {}
    delta: dict[str, Any] = {}
    for key in ("em", "f1", "answer_in_context", "state_retention"):
        quality[key] = M.bootstrap_ci(col(key), seed=seed).as_dict()
        if baseline is not None:
            delta[key] = M.paired_bootstrap_ci(col(key), [r[key] for r in baseline], seed=seed).as_dict()
    row["quality"] = quality
    row["delta_vs_baseline"] = delta
    return row


def _throughput(ms: list[Measurement], wall: float, concurrency: int) -> dict[str, Any]:
    out_tok = sum(m.output_tokens for m in ms)
    in_tok = sum(m.prompt_tokens for m in ms)
    wall = max(wall, 1e-9)
    return {
        "concurrency": concurrency,
        "requests": len(ms),
        "wall_s": round(wall, 3),
        "requests_per_s": round(len(ms) / wall, 3),
        "output_tokens_per_s": round(out_tok / wall, 2),
        "total_tokens_per_s": round((in_tok + out_tok) / wall, 2),
    }


def _kv_check(examples: dict[str, list[dict[str, Any]]], skip: Sequence[str] = ()) -> dict[str, Any]:
    """Do the two KV figures agree? The one computed from the model config must equal the
    blocks the engine allocated, up to rounding the held tokens up to whole blocks.
    ``skip``: stages not re-measured (their records are copies)."""
    gaps: list[float] = []
    bad = 0
    for stage, records in examples.items():
        if stage in skip:
            continue
        for r in records:
            kv, alloc, bs = r.get("kv_bytes"), r.get("kv_bytes_allocated"), r.get("kv_block_size")
            if not (kv and alloc and bs):
                continue
            held = r["tokens_model"] + max((r.get("output_tokens") or 0) - 1, 0)
            rounding = math.ceil(held / bs) * bs / held  # the most whole blocks can add
            gaps.append(alloc / kv - 1)
            bad += not (kv <= alloc <= kv * rounding * 1.001)
    if not gaps:
        return {"agree": None, "detail": "backend reports no allocated KV blocks"}
    return {
        "agree": bad == 0,
        "requests": len(gaps),
        "disagreeing": bad,
        "max_gap_pct": round(100 * max(gaps), 2),
        "detail": f"KV from the model config vs blocks allocated by the engine: {len(gaps) - bad}/{len(gaps)} requests "
        f"agree up to block rounding (allocated exceeds config by at most {100 * max(gaps):.1f}%)",
    }


def _prefill_check(stages: list[dict[str, Any]], examples: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Does prefill time fall as prompt tokens fall? Compares the baseline with the last row,
    and correlates tokens with prefill over every measured request.
    Falls back to TTFT where the backend cannot observe prefill (HTTP servers)."""
    key = "prefill_ms" if stages[0]["prefill_ms"]["p50"] is not None else "ttft_ms"
    first, last = stages[0], stages[-1]
    if first[key]["p50"] is None:
        return {"metric": None, "prefill_falls_with_tokens": None, "detail": "backend reports no prefill or TTFT"}
    tokens_fell = (last["tokens_model"]["mean"] or 0) < (first["tokens_model"]["mean"] or 0)
    time_fell = last[key]["p50"] < first[key]["p50"]
    xs: list[float] = []
    ys: list[float] = []
    for s in stages:
        if not s["changed"] and s["stage"] != "baseline":
            continue
        for r in examples[s["stage"]]:
            if r[key] is not None:
                xs.append(float(r["tokens_model"]))
                ys.append(float(r[key]))
    corr = None
    if len(xs) > 2:
        import numpy as np

        if np.std(xs) > 0 and np.std(ys) > 0:
            corr = round(float(np.corrcoef(xs, ys)[0, 1]), 3)
    falls = bool(tokens_fell and time_fell) if tokens_fell else None
    detail = (
        f"{first['stage']}: {first['tokens_model']['mean']:.0f} tok, {key} p50 {first[key]['p50']:.1f} ms -> "
        f"{last['stage']}: {last['tokens_model']['mean']:.0f} tok, {key} p50 {last[key]['p50']:.1f} ms"
    )
    if corr is not None:
        detail += f"; pearson r(tokens, {key}) = {corr:.2f} over {len(xs)} requests"
    hits = (first["prefix_cache_hit_rate"], last["prefix_cache_hit_rate"])
    if any(hits):
        detail += (
            f"; prefix-cache hits {100 * (hits[0] or 0):.0f}% -> {100 * (hits[1] or 0):.0f}% "
            "(questions sharing documents reuse cached prefixes; cached tokens cost no prefill)"
        )
    return {"metric": key, "prefill_falls_with_tokens": falls, "pearson_r": corr, "detail": detail}


def run_ablation(
    examples: Sequence[Example],
    backend: Backend,
    pipeline: Pipeline,
    *,
    max_tokens: int = 32,
    concurrency: int = 8,
    warmup: Sequence[Example] = (),
    instruction: str = DEFAULT_INSTRUCTION,
    system_prompt: str | None = None,
    seed: int = 0,
    progress: bool = True,
    meta: dict[str, Any] | None = None,
    on_stage: Callable[[dict[str, Any]], None] | None = None,
) -> BenchReport:
    """Measure the baseline and each cumulative pipeline prefix on a real model.

    Args:
        examples: What to measure (queries, chunks, history, gold answers).
        backend: A :class:`~tokenslim.backends.Backend` (vLLM, transformers, OpenAI, fake).
        pipeline: The stages to add one at a time, in order.
        max_tokens: Tokens to generate per answer.
        concurrency: Requests in flight in the throughput pass; ``0`` skips the pass.
        warmup: Examples sent once (baseline prompts) before anything is timed; use
            examples outside ``examples`` so they do not warm the prefix cache of measured prompts.
        instruction: Text put before the question in the user turn.
        system_prompt: Optional system prompt (never compressed).
        seed: Bootstrap seed.
        progress: Show a tqdm progress bar on stderr.
        meta: Extra run settings stored in the report (command line, dataset name...).
        on_stage: Called with each finished row (for live printing).

    Returns:
        A :class:`BenchReport` with one row per label of :func:`stage_labels`.

    Raises:
        InputError: ``examples`` is empty.
        ConfigError: ``max_tokens`` < 1 or ``concurrency`` < 0.
    """
    if not examples:
        raise InputError("no examples to benchmark (check --dataset and --limit)")
    if max_tokens < 1:
        raise ConfigError(f"max_tokens must be >= 1, got {max_tokens}")
    if concurrency < 0:
        raise ConfigError(f"concurrency must be >= 0, got {concurrency}")
    pipeline.validate()
    try:
        from tqdm.auto import tqdm  # type: ignore[import-untyped,unused-ignore]
    except ImportError as exc:
        raise MissingDependency("tqdm", extra="bench", feature="tokenslim bench") from exc

    cl100k = get_tokenizer(None)
    labels = stage_labels(pipeline)
    steps = list(pipeline.named_steps)
    tok = pipeline.get_tokenizer()
    started = time.time()

    if warmup:
        warm = [
            Result.create(w.query, w.chunks, w.history, system_prompt, tokenizer=tok).to_messages(instruction=instruction)
            for w in warmup
        ]
        backend.generate(warm, max_tokens=max_tokens)

    results = [Result.create(ex.query, ex.chunks, ex.history, system_prompt, tokenizer=tok) for ex in examples]
    baseline_ctx = [context_text(r) for r in results]
    stages: list[dict[str, Any]] = []
    per_example: dict[str, list[dict[str, Any]]] = {}
    prev_msgs: list[list[Message]] | None = None
    bar = tqdm(total=len(labels) * len(examples), desc="bench", unit="req", disable=not progress, file=sys.stderr)
    try:
        for i, label in enumerate(labels):
            step = steps[i - 1] if i else None
            stage_ms: list[float | None] = [0.0] * len(results)
            if i:
                one = pipeline[i - 1 : i]
                new = []
                for j, r in enumerate(results):
                    out = one(r.copy())
                    stage_ms[j] = out.report[-1].seconds * 1000
                    new.append(out)
                results = new
            msgs = [r.to_messages(instruction=instruction) for r in results]
            bar.set_postfix_str(label)
            if prev_msgs is not None and msgs == prev_msgs:
                prev = stages[-1]
                records = [dict(rec, stage_ms=stage_ms[j]) for j, rec in enumerate(per_example[prev["stage"]])]
                row = _stage_row(
                    label, step, records, per_example.get("baseline"), prev["throughput"], changed=False, seed=seed
                )
                bar.update(len(results))
            else:
                _reset_prefix_cache(backend)
                measured: list[Measurement] = []
                for m in msgs:
                    measured.extend(backend.generate([m], max_tokens=max_tokens))
                    bar.update(1)
                throughput = None
                if concurrency:
                    _reset_prefix_cache(backend)
                    bar.set_postfix_str(f"{label} (throughput pass)")
                    conc_ms, wall = _run_concurrent(backend, msgs, max_tokens, concurrency)
                    throughput = _throughput(conc_ms, wall, concurrency)
                records = []
                for j, (ex, r, m, meas) in enumerate(zip(examples, results, msgs, measured)):
                    ctx = context_text(r)
                    answer = first_line(meas.text)
                    records.append(
                        {
                            "id": ex.id,
                            "tokens_model": meas.prompt_tokens,
                            "tokens_cl100k": _messages_tokens(cl100k, m),
                            "chunks": len(r.chunks),
                            "turns": len(r.history),
                            "stage_ms": stage_ms[j],
                            "prefill_ms": meas.prefill_ms,
                            "ttft_ms": meas.ttft_ms,
                            "tpot_ms": meas.tpot_ms,
                            "e2e_ms": meas.e2e_ms,
                            "output_tokens": meas.output_tokens,
                            "kv_bytes": meas.kv_bytes,
                            "kv_bytes_allocated": meas.kv_bytes_allocated,
                            "kv_block_size": (meas.extra or {}).get("block_size"),
                            "cached_tokens": meas.cached_tokens,
                            "answer": answer,
                            "raw_answer": meas.text,
                            "em": M.exact_match(answer, ex.answers),
                            "f1": M.token_f1(answer, ex.answers),
                            "answer_in_context": M.answer_in_context(ctx, ex.answers, baseline_context=baseline_ctx[j]),
                            "state_retention": M.state_retention(
                                ctx, ex.gold.get("slot_values", {}), baseline_context=baseline_ctx[j]
                            ),
                        }
                    )
                row = _stage_row(
                    label, step, records, per_example.get("baseline"), throughput, changed=True, seed=seed
                )
            per_example[label] = records
            stages.append(row)
            prev_msgs = msgs
            if on_stage is not None:
                on_stage(row)
    finally:
        bar.close()

    info: dict[str, Any] = {
        "backend": getattr(backend, "name", type(backend).__name__),
        "model": getattr(backend, "model", None),
        "dtype": getattr(backend, "dtype", None),
        "n_examples": len(examples),
        "max_tokens": max_tokens,
        "concurrency": concurrency,
        "warmup_requests": len(warmup),
        "instruction": instruction,
        "pipeline": [f"{n}: {s!r}" for n, s in pipeline.named_steps.items()],
        "pipeline_tokenizer": tok.name,
        "unchanged_stages": "listed with the figures of the row above (not re-measured), changed=false",
        "answer_scoring": "first non-empty line of the output; SQuAD-normalized EM and token F1, best over gold answers",
        "intervals": f"95% percentile bootstrap of the mean (2000 resamples, seed {seed}); deltas are paired",
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "wall_s": round(time.time() - started, 1),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu": cpu_summary(),
    }
    if meta:
        info.update(meta)
    checks = _prefill_check(stages, per_example)
    checks["kv"] = _kv_check(per_example, skip=[s["stage"] for s in stages if not s["changed"]])
    return BenchReport(meta=info, stages=stages, examples=per_example, checks=checks)
