"""The ablation runner: baseline, then the pipeline's stages added one at a time, on a real LLM.

For a pipeline ``[s1, s2, ..., sn]`` the runner measures the cumulative prefixes
``[]`` (the baseline: uncompressed prompts), ``[s1]``, ``[s1, s2]``, ... so each row
differs from the one above by exactly one stage. Per row it records prompt tokens
(model tokenizer and cl100k), prefill / TTFT / TPOT / end-to-end latency, KV-cache
bytes (from the model config and as the engine observed them), throughput from a
separate concurrent pass (fresh cache, hit rate reported), answer quality (EM, token
F1, answer-in-context, state retention) and the gold answer's likelihood (see
:mod:`tokenslim.bench.likelihood`, with its two controls), each with bootstrap
intervals and the paired change against the baseline.

**Interleaved timing.** Rows are not timed as sequential blocks (load on a shared
machine drifts between blocks): for each question, every measured row's prompt is
sent in a random order (seeded), with the prefix cache reset before each request,
and the whole pass is repeated ``repeats`` times. A row's latency per question is
the median over repeats, and its prefill ratio against the baseline is computed per
question (paired) with a bootstrap interval.

A stage that changes no prompt on the dataset (StripHTML on plain text) is **listed
but not re-measured**: its row repeats the figures of the row above and is marked
``changed: false``. Re-sending identical prompts would only measure the prefix cache.
"""

from __future__ import annotations

import datetime as _dt
import inspect
import math
import platform
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from tokenslim._chunk import Message
from tokenslim._internal.cpu import cpu_summary
from tokenslim._pipeline import Pipeline
from tokenslim._result import Result
from tokenslim.backends._base import Backend, Measurement
from tokenslim.bench import likelihood as L
from tokenslim.bench import metrics as M
from tokenslim.bench.datasets import Example
from tokenslim.bench.report import portable_path
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
        controls: The likelihood controls (evidence removed, gold paragraphs only)
            on the same questions, with their change against the baseline.
    """

    meta: dict[str, Any]
    stages: list[dict[str, Any]]
    examples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    checks: dict[str, Any] = field(default_factory=dict)
    controls: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly form (what ``report.write_json`` saves)."""
        return {"meta": self.meta, "checks": self.checks, "stages": self.stages, "controls": self.controls,
                "examples": self.examples}

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
    if baseline is not None:
        row["prefill_ratio"] = M.bootstrap_ci(col("prefill_ratio"), seed=seed).as_dict(3)
        row["tokens_ratio"] = M.bootstrap_ci(
            [r["tokens_model"] / b["tokens_model"] for r, b in zip(records, baseline) if b["tokens_model"]], seed=seed
        ).as_dict(3)
    row["answer_nll"] = M.bootstrap_ci(col("answer_nll"), seed=seed).as_dict(3)
    if baseline is not None:
        row["answer_nll_delta"] = M.paired_bootstrap_ci(
            col("answer_nll"), [r["answer_nll"] for r in baseline], seed=seed
        ).as_dict(3)
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
        quality[key] = M.score_ci(col(key), seed=seed).as_dict()  # Wilson for rates, BCa for means
        if baseline is not None:
            delta[key] = M.paired_bootstrap_ci(col(key), [r[key] for r in baseline], seed=seed).as_dict()
    row["quality"] = quality
    row["delta_vs_baseline"] = delta
    return row


def _hit_rate(ms: Sequence[Measurement]) -> float | None:
    """Share of prompt tokens served from the prefix cache (None: the backend does not say)."""
    known = [m for m in ms if m.cached_tokens is not None]
    prompt = sum(m.prompt_tokens for m in known)
    return round(sum(m.cached_tokens or 0 for m in known) / prompt, 4) if known and prompt else None


def _throughput(ms: list[Measurement], wall: float, concurrency: int) -> dict[str, Any]:
    out_tok = sum(m.output_tokens for m in ms)
    in_tok = sum(m.prompt_tokens for m in ms)
    wall = max(wall, 1e-9)
    return {
        "prefix_cache_hit_rate": _hit_rate(ms),
        "concurrency": concurrency,
        "requests": len(ms),
        "wall_s": round(wall, 3),
        "requests_per_s": round(len(ms) / wall, 3),
        "output_tokens_per_s": round(out_tok / wall, 2),
        "total_tokens_per_s": round((in_tok + out_tok) / wall, 2),
    }


def _kv_check(examples: dict[str, list[dict[str, Any]]], skip: Sequence[str] = ()) -> dict[str, Any]:
    """Do the two KV figures agree? The one computed from the model config against what the
    engine reported holding (vLLM: peak blocks of the scheduler's usage gauge; allowed range:
    whole blocks for the held tokens, or for one token fewer, since the last step reports
    after the request freed its blocks). ``skip``: stages not re-measured (their records are copies)."""
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
            per_token = kv / held
            low = math.ceil((held - 1) / bs) * bs * per_token
            high = math.ceil(held / bs) * bs * per_token
            gaps.append(alloc / kv - 1)
            bad += not (low * 0.999 <= alloc <= high * 1.001)
    if not gaps:
        return {"agree": None, "detail": "backend reports no observed KV memory"}
    return {
        "agree": bad == 0,
        "requests": len(gaps),
        "disagreeing": bad,
        "max_gap_pct": round(100 * max(gaps), 2),
        "min_gap_pct": round(100 * min(gaps), 2),
        "detail": f"KV from the model config vs KV the engine reported holding: {len(gaps) - bad}/{len(gaps)} requests "
        f"agree up to whole blocks (observed - config: {100 * min(gaps):+.1f}% to {100 * max(gaps):+.1f}%)",
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


def _median(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def _timed_rows(
    backend: Backend,
    prompts: dict[str, list[list[Message]]],
    *,
    max_tokens: int,
    repeats: int,
    seed: int,
    bar: Any,
) -> dict[str, list[list[Measurement]]]:
    """The interleaved timing passes: per question, every row's prompt in a random order,
    each after a prefix-cache reset; ``repeats`` passes over all questions."""
    rng = random.Random(seed)
    labels = list(prompts)
    n = len(next(iter(prompts.values())))
    runs: dict[str, list[list[Measurement]]] = {label: [[] for _ in range(n)] for label in labels}
    for rep in range(repeats):
        for j in range(n):
            order = labels[:]
            rng.shuffle(order)
            for label in order:
                _reset_prefix_cache(backend)
                runs[label][j].extend(backend.generate([prompts[label][j]], max_tokens=max_tokens))
                bar.update(1)
        bar.set_postfix_str(f"timing pass {rep + 1}/{repeats} done")
    return runs


def _control_rows(
    examples: Sequence[Example],
    backend: Backend,
    baseline: list[dict[str, Any]],
    control_msgs: dict[str, list[list[Message] | None]],
    answers: list[str | None],
    seed: int,
) -> list[dict[str, Any]]:
    rows = []
    for name, msgs in control_msgs.items():
        nll = L.score_answers(backend, msgs, answers)
        tokens = [backend.count_tokens(m) if m is not None else None for m in msgs]
        rows.append(
            {
                "control": name,
                "what": L.CONTROLS[name],
                "n": sum(v is not None for v in nll),
                "tokens_model": M.bootstrap_ci(tokens, seed=seed).as_dict(2),
                "answer_nll": M.bootstrap_ci(nll, seed=seed).as_dict(3),
                "answer_nll_delta": M.paired_bootstrap_ci(nll, [r["answer_nll"] for r in baseline], seed=seed).as_dict(3),
                "per_example": [{"id": ex.id, "tokens_model": t, "answer_nll": v} for ex, t, v in zip(examples, tokens, nll)],
            }
        )
    return rows


def _likelihood_check(stages: list[dict[str, Any]], controls: list[dict[str, Any]]) -> dict[str, Any]:
    """Does the likelihood metric separate on these questions? Evidence removed must raise the
    NLL (interval above 0), gold paragraphs only must lower it (interval below 0)."""
    by = {c["control"]: c["answer_nll_delta"] for c in controls}
    if not by or any(d.get("mean") is None for d in by.values()):
        return {"separates": None, "detail": "no likelihood scored (backend cannot score, or no span answers)"}
    removed, gold = by["evidence_removed"], by["gold_only"]
    separates = bool(removed["low"] > 0 and gold["high"] < 0)
    last = stages[-1].get("answer_nll_delta") or {}
    detail = (
        f"answer NLL/token vs baseline: evidence removed {removed['mean']:+.3f} [{removed['low']:+.3f}, {removed['high']:+.3f}], "
        f"gold only {gold['mean']:+.3f} [{gold['low']:+.3f}, {gold['high']:+.3f}]"
    )
    if last.get("mean") is not None:
        detail += f"; {stages[-1]['stage']} {last['mean']:+.3f} [{last['low']:+.3f}, {last['high']:+.3f}]"
    return {"separates": separates, "detail": detail}


def run_ablation(
    examples: Sequence[Example],
    backend: Backend,
    pipeline: Pipeline,
    *,
    max_tokens: int = 32,
    concurrency: int = 8,
    repeats: int = 2,
    warmup: Sequence[Example] = (),
    instruction: str = DEFAULT_INSTRUCTION,
    system_prompt: str | None = None,
    likelihood: bool = True,
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
        repeats: Interleaved timing passes over all questions (latency = median of the repeats).
        warmup: Examples sent once (baseline prompts) before anything is timed; use
            examples outside ``examples`` so they do not warm the prefix cache of measured prompts.
        instruction: Text put before the question in the user turn.
        system_prompt: Optional system prompt (never compressed).
        likelihood: Score the gold answer's likelihood per row and for the two controls
            (needs a backend with ``score_continuations``; skipped otherwise).
        seed: Seed of the bootstrap and of the interleaving order.
        progress: Show a tqdm progress bar on stderr.
        meta: Extra run settings stored in the report (command line, dataset name...).
        on_stage: Called with each finished row (for live printing).

    Returns:
        A :class:`BenchReport` with one row per label of :func:`stage_labels`.

    Raises:
        InputError: ``examples`` is empty.
        ConfigError: ``max_tokens`` < 1, ``repeats`` < 1 or ``concurrency`` < 0.
    """
    if not examples:
        raise InputError("no examples to benchmark (check --dataset and --limit)")
    if max_tokens < 1:
        raise ConfigError(f"max_tokens must be >= 1, got {max_tokens}")
    if repeats < 1:
        raise ConfigError(f"repeats must be >= 1, got {repeats}")
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

    def build(ex: Example, chunks: Any = None) -> Result:
        return Result.create(ex.query, ex.chunks if chunks is None else chunks, ex.history, system_prompt, tokenizer=tok)

    # Every row's prompts first (cheap), so the timed passes can interleave them.
    results = [build(ex) for ex in examples]
    baseline_ctx = [context_text(r) for r in results]
    row_results: dict[str, list[Result]] = {}
    row_msgs: dict[str, list[list[Message]]] = {}
    row_stage_ms: dict[str, list[float]] = {}
    changed: dict[str, bool] = {}
    for i, label in enumerate(labels):
        stage_ms = [0.0] * len(results)
        if i:
            one = pipeline[i - 1 : i]
            new = []
            for j, r in enumerate(results):
                out = one(r.copy())
                stage_ms[j] = out.report[-1].seconds * 1000
                new.append(out)
            results = new
        row_results[label], row_stage_ms[label] = results, stage_ms
        row_msgs[label] = [r.to_messages(instruction=instruction) for r in results]
        changed[label] = i == 0 or row_msgs[label] != row_msgs[labels[i - 1]]
    measured = [label for label in labels if changed[label]]

    answers = [L.scored_answer(ex.answers) for ex in examples]
    scoring = likelihood and L.can_score(backend)
    control_msgs: dict[str, list[list[Message] | None]] = {}
    if scoring:
        for name in L.CONTROLS:
            control_msgs[name] = []
            for ex in examples:
                chunks = L.control_chunks(ex)[name]
                control_msgs[name].append(None if chunks is None else build(ex, chunks).to_messages(instruction=instruction))

    if warmup:
        backend.generate([build(w).to_messages(instruction=instruction) for w in warmup], max_tokens=max_tokens)

    bar = tqdm(total=repeats * len(examples) * len(measured), desc="bench", unit="req", disable=not progress, file=sys.stderr)
    try:
        runs = _timed_rows(
            backend, {label: row_msgs[label] for label in measured}, max_tokens=max_tokens, repeats=repeats, seed=seed, bar=bar
        )
        throughput: dict[str, dict[str, Any] | None] = {label: None for label in measured}
        if concurrency:
            for label in measured:
                _reset_prefix_cache(backend)
                bar.set_postfix_str(f"{label} (throughput pass)")
                conc_ms, wall = _run_concurrent(backend, row_msgs[label], max_tokens, concurrency)
                throughput[label] = _throughput(conc_ms, wall, concurrency)
        nll: dict[str, list[float | None]] = {}
        for label in measured:
            bar.set_postfix_str(f"{label} (answer likelihood)")
            nll[label] = L.score_answers(backend, row_msgs[label], answers) if scoring else [None] * len(examples)
    finally:
        bar.close()

    timing_key = "prefill_ms"
    first_runs = runs[labels[0]]
    if all(m.prefill_ms is None for ms in first_runs for m in ms):
        timing_key = "ttft_ms"
    stages: list[dict[str, Any]] = []
    per_example: dict[str, list[dict[str, Any]]] = {}
    base_time: list[float | None] = []
    for i, label in enumerate(labels):
        step = steps[i - 1] if i else None
        if not changed[label]:
            prev = stages[-1]
            records = [dict(rec, stage_ms=row_stage_ms[label][j]) for j, rec in enumerate(per_example[prev["stage"]])]
            row = _stage_row(label, step, records, per_example.get("baseline"), prev["throughput"], changed=False, seed=seed)
        else:
            records = []
            for j, (ex, r, m) in enumerate(zip(examples, row_results[label], row_msgs[label])):
                ms = runs[label][j]
                meas = ms[0]
                ctx = context_text(r)
                answer = first_line(meas.text)
                rec = {
                    "id": ex.id,
                    "tokens_model": meas.prompt_tokens,
                    "tokens_cl100k": _messages_tokens(cl100k, m),
                    "chunks": len(r.chunks),
                    "turns": len(r.history),
                    "stage_ms": row_stage_ms[label][j],
                    "prefill_ms": _median([x.prefill_ms for x in ms]),
                    "ttft_ms": _median([x.ttft_ms for x in ms]),
                    "tpot_ms": _median([x.tpot_ms for x in ms]),
                    "e2e_ms": _median([x.e2e_ms for x in ms]),
                    f"{timing_key}_runs": [getattr(x, timing_key) for x in ms],
                    "output_tokens": meas.output_tokens,
                    "kv_bytes": meas.kv_bytes,
                    "kv_bytes_allocated": meas.kv_bytes_allocated,
                    "kv_block_size": (meas.extra or {}).get("block_size"),
                    "cached_tokens": meas.cached_tokens,
                    "answer": answer,
                    "raw_answer": meas.text,
                    "answer_nll": nll[label][j],
                    "em": M.exact_match(answer, ex.answers),
                    "f1": M.token_f1(answer, ex.answers),
                    "answer_in_context": M.answer_in_context(ctx, ex.answers, baseline_context=baseline_ctx[j]),
                    "state_retention": M.state_retention(ctx, ex.gold.get("slot_values", {}), baseline_context=baseline_ctx[j]),
                }
                t = rec[timing_key]
                t = float(t) if isinstance(t, (int, float)) else None
                if i == 0:
                    base_time.append(t)
                b = base_time[j]
                rec["prefill_ratio"] = t / b if b and t is not None else None
                records.append(rec)
            row = _stage_row(label, step, records, per_example.get("baseline"), throughput[label], changed=True, seed=seed)
        per_example[label] = records
        stages.append(row)
        if on_stage is not None:
            on_stage(row)

    controls = _control_rows(examples, backend, per_example["baseline"], control_msgs, answers, seed) if scoring else []

    info: dict[str, Any] = {
        "backend": getattr(backend, "name", type(backend).__name__),
        "model": portable_path(getattr(backend, "model", None)),
        "dtype": getattr(backend, "dtype", None),
        "n_examples": len(examples),
        "max_tokens": max_tokens,
        "concurrency": concurrency,
        "repeats": repeats,
        "warmup_requests": len(warmup),
        "instruction": instruction,
        "pipeline": [f"{n}: {s!r}" for n, s in pipeline.named_steps.items()],
        "pipeline_tokenizer": tok.name,
        "timing": f"interleaved: per question every measured row's prompt in a random order (seed {seed}), the prefix "
        f"cache reset before each request, {repeats} pass(es); latency = median over passes; "
        f"{timing_key.removesuffix('_ms')} ratio = per-question row / baseline",
        "unchanged_stages": "listed with the figures of the row above (not re-measured), changed=false",
        "answer_scoring": "first non-empty line of the output; SQuAD-normalized EM and token F1, best over gold answers",
        "likelihood": "teacher-forced NLL per token (nats) of the first span gold answer after the prompt; yes/no "
        "answers not scored" if scoring else "not scored (backend has no score_continuations, or --no-likelihood)",
        "intervals": f"95% percentile bootstrap of the mean (2000 resamples, seed {seed}); deltas are paired",
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "wall_s": round(time.time() - started, 1),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu": cpu_summary(),
    }
    for attr, key in (("cache_reset_method", "cache_reset"), ("token_sources", "token_source")):
        value = getattr(backend, attr, None)
        if value:
            info[key] = sorted(value) if isinstance(value, set) else value
    if meta:
        info.update(meta)
    checks = _prefill_check(stages, per_example)
    checks["kv"] = _kv_check(per_example, skip=[s["stage"] for s in stages if not s["changed"]])
    checks["likelihood"] = _likelihood_check(stages, controls)
    return BenchReport(meta=info, stages=stages, examples=per_example, checks=checks, controls=controls)
