"""The serving levers, one at a time, on the same questions as the ablation.

Cutting tokens is one way to make serving cheaper; an engine offers others. This
pass measures each against the same uncompressed baseline so a reader can see
which saves most:

* **KV-cache dtype** (``kv_cache_dtype="fp8"``): a second engine; the baseline
  prompts alternate between the two engines question by question. Where the
  engine refuses the setting, the row keeps its error. (vLLM keeps its metrics
  in one registry per process and a new engine replaces the first one's, so
  only the new engine's KV is observed here; the default engine's is the
  ablation's baseline row.)
* **Prefix caching with** ``Reorder(order="stable_prefix")``: two questions over the
  same retrieved documents in two retrieval orders (as two users' retrievers
  return them); the second request's cache hit rate and TTFT, with the chunks
  kept in retrieval order vs in ``stable_prefix`` order, uncompressed and after
  ``default_pipeline()`` (whose compression depends on the question).
* **max_model_len**: an engine started with the length advised for the compressed
  prompts (:func:`tokenslim.capacity.advise_max_model_len`); how many
  uncompressed and compressed prompts it accepts.
* **Concurrency** 1, 2, 4, 8 in flight (waves of that size): TTFT / TPOT
  p50/p95/p99 and requests per second, uncompressed vs compressed.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Sequence

from tokenslim._chunk import Message
from tokenslim._pipeline import Pipeline
from tokenslim._result import Result
from tokenslim.backends._base import Backend, Measurement
from tokenslim.bench import likelihood as L
from tokenslim.bench import metrics as M
from tokenslim.bench.datasets import Example
from tokenslim.errors import TokenSlimError

__all__ = ["run_levers"]

_MB = 1024 * 1024


def _pct(values: Sequence[float | None]) -> dict[str, float | None]:
    out = {}
    for q in (50, 95, 99):
        v = M.percentile(values, q)
        out[f"p{q}"] = None if v is None else round(v, 2)
    return out


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _summary(ms: Sequence[Measurement], nll: Sequence[float | None] | None = None) -> dict[str, Any]:
    kv = _mean([m.kv_bytes_allocated for m in ms])
    kv_cfg = _mean([m.kv_bytes for m in ms])
    hits = [m for m in ms if m.cached_tokens is not None]
    prompt = sum(m.prompt_tokens for m in hits)
    return {
        "requests": len(ms),
        "tokens": round(_mean([m.prompt_tokens for m in ms]) or 0, 1),
        "prefill_ms": _pct([m.prefill_ms for m in ms]),
        "ttft_ms": _pct([m.ttft_ms for m in ms]),
        "tpot_ms": _pct([m.tpot_ms for m in ms]),
        "kv_mb_observed": None if kv is None else round(kv / _MB, 3),
        "kv_mb_config": None if kv_cfg is None else round(kv_cfg / _MB, 3),
        "prefix_cache_hit_rate": round(sum(m.cached_tokens or 0 for m in hits) / prompt, 4) if hits and prompt else None,
        "answer_nll": None if nll is None else M.bootstrap_ci(nll).as_dict(3),
    }


def _reset(backend: Backend) -> None:
    reset = getattr(backend, "reset_prefix_cache", None)
    if callable(reset):
        reset()


def _kv_dtype(
    make_backend: Callable[..., Backend], base: Backend, msgs: list[list[Message]], answers: list[str | None],
    max_tokens: int, kv_dtype: str, log: Callable[[str], None],
) -> dict[str, Any]:
    row: dict[str, Any] = {"lever": "kv_cache_dtype", "setting": kv_dtype}
    try:
        other = make_backend(kv_cache_dtype=kv_dtype)
    except TokenSlimError as exc:
        row["error"] = f"{type(exc).__name__}: {exc}"[:600]
        log(f"levers: kv_cache_dtype={kv_dtype} refused: {row['error'][:200]}")
        return row
    try:
        ours: list[Measurement] = []
        theirs: list[Measurement] = []
        for j, m in enumerate(msgs):  # alternate engines per question; who goes first alternates too
            pair = [(base, theirs), (other, ours)] if j % 2 else [(other, ours), (base, theirs)]
            for backend, sink in pair:
                _reset(backend)
                sink.extend(backend.generate([m], max_tokens=max_tokens))
        scoring = L.can_score(other) and L.can_score(base)
        nll_other = L.score_answers(other, msgs, answers) if scoring else None
        nll_base = L.score_answers(base, msgs, answers) if scoring else None
        row["auto"] = _summary(theirs, nll_base)
        row["changed"] = _summary(ours, nll_other)
        if nll_other is not None and nll_base is not None:
            row["answer_nll_delta"] = M.paired_bootstrap_ci(nll_other, nll_base).as_dict(3)
        ratios = [a.prefill_ms / b.prefill_ms for a, b in zip(ours, theirs) if a.prefill_ms and b.prefill_ms]
        row["prefill_ratio"] = M.bootstrap_ci(ratios).as_dict(3)
    finally:
        other.close()
    return row


def _prefix_lever(
    backend: Backend, examples: Sequence[Example], pipeline: Pipeline | None, order: str, instruction: str,
    system_prompt: str | None, max_tokens: int,
) -> dict[str, Any]:
    """Per question: (question j, documents in retrieval order), then (question j+1, the same
    documents reversed) on a fresh cache; the second request's hits show what the order kept."""
    from tokenslim.stages import Reorder

    if pipeline is None:
        pipe = Pipeline([Reorder(order=order)])  # type: ignore[arg-type]
    else:
        if "reorder" not in pipeline.named_steps:
            raise TokenSlimError("the prefix-caching lever needs a pipeline with a 'reorder' step")
        pipe = pipeline._variant({"reorder__order": order})  # a copy: the caller's pipeline never changes
    tok = pipe.get_tokenizer()
    seconds: list[Measurement] = []
    firsts: list[Measurement] = []
    for j, ex in enumerate(examples):
        other_q = examples[(j + 1) % len(examples)].query
        prompts = []
        for query, chunks in ((ex.query, ex.chunks), (other_q, list(reversed(ex.chunks)))):
            r = pipe(Result.create(query, chunks, ex.history, system_prompt, tokenizer=tok))
            prompts.append(r.to_messages(instruction=instruction))
        _reset(backend)
        first, second = backend.generate(prompts, max_tokens=max_tokens)
        firsts.append(first)
        seconds.append(second)
    return {"first": _summary(firsts), "second": _summary(seconds)}


def _max_model_len(
    make_backend: Callable[..., Backend], base_msgs: list[list[Message]], slim_msgs: list[list[Message]],
    slim_tokens: list[int], max_tokens: int, log: Callable[[str], None],
) -> dict[str, Any]:
    from tokenslim.capacity import advise_max_model_len

    length, _ = advise_max_model_len(slim_tokens, max_tokens)
    row: dict[str, Any] = {"lever": "max_model_len", "setting": length}
    try:
        engine = make_backend(max_model_len=length)
    except TokenSlimError as exc:
        row["error"] = f"{type(exc).__name__}: {exc}"[:600]
        return row
    try:
        for name, msgs in (("uncompressed", base_msgs), ("default_pipeline", slim_msgs)):
            accepted = 0
            for m in msgs:
                try:
                    engine.generate([m], max_tokens=1)
                    accepted += 1
                except TokenSlimError:
                    pass
            row[f"accepted_{name}"] = f"{accepted}/{len(msgs)}"
        row["kv_blocks_total"] = getattr(engine, "num_blocks", None)
        log(f"levers: max_model_len={length}: {row}")
    finally:
        engine.close()
    return row


def _concurrency(
    backend: Backend, sets: dict[str, list[list[Message]]], levels: Sequence[int], max_tokens: int
) -> list[dict[str, Any]]:
    rows = []
    for level in levels:
        for name, msgs in sets.items():
            _reset(backend)
            ms: list[Measurement] = []
            start = time.perf_counter()
            for k in range(0, len(msgs), level):
                part, _ = backend.generate_concurrent(msgs[k : k + level], max_tokens=max_tokens)
                ms.extend(part)
            wall = time.perf_counter() - start
            rows.append(
                {
                    "concurrency": level,
                    "prompts": name,
                    "requests": len(ms),
                    "tokens": round(_mean([m.prompt_tokens for m in ms]) or 0, 1),
                    "ttft_ms": _pct([m.ttft_ms for m in ms]),
                    "tpot_ms": _pct([m.tpot_ms for m in ms]),
                    "requests_per_s": round(len(ms) / wall, 3),
                    "wall_s": round(wall, 2),
                }
            )
    return rows


def run_levers(
    examples: Sequence[Example],
    backend: Backend,
    make_backend: Callable[..., Backend],
    pipeline: Pipeline,
    *,
    max_tokens: int = 16,
    kv_dtype: str = "fp8",
    concurrency_levels: Sequence[int] = (1, 2, 4, 8),
    instruction: str,
    system_prompt: str | None = None,
    log: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """Measure the serving levers on ``examples`` (see the module docstring).

    Args:
        examples: The questions (usually the first few of the ablation's).
        backend: The running engine (default settings) used for the baseline.
        make_backend: Builds another engine with keyword overrides
            (``kv_cache_dtype=...``, ``max_model_len=...``).
        pipeline: The pipeline whose output is the "compressed" prompt set (a copy is used).
        max_tokens: Tokens generated per request.
        kv_dtype: The KV-cache dtype to compare with the default.
        concurrency_levels: Requests in flight for the sweep.
        instruction: Text before the question.
        system_prompt: Optional system prompt.
        log: Progress messages.

    Returns:
        ``{"n": ..., "kv_cache_dtype": {...}, "prefix_caching": [...], "max_model_len": {...},
        "concurrency": [...]}``.
    """
    tok = pipeline.get_tokenizer()
    base = [Result.create(e.query, e.chunks, e.history, system_prompt, tokenizer=tok) for e in examples]
    base_msgs = [r.to_messages(instruction=instruction) for r in base]
    slim = [pipeline(r.copy()) for r in base]
    slim_msgs = [r.to_messages(instruction=instruction) for r in slim]
    slim_tokens = [backend.count_tokens(m) for m in slim_msgs]
    answers = [L.scored_answer(e.answers) for e in examples]
    started = time.time()
    out: dict[str, Any] = {"n": len(examples), "max_tokens": max_tokens}
    log("levers: kv cache dtype")
    out["kv_cache_dtype"] = _kv_dtype(make_backend, backend, base_msgs, answers, max_tokens, kv_dtype, log)
    log("levers: prefix caching")
    prefix = []
    for label, pipe in (("uncompressed", None), ("default_pipeline", pipeline)):
        for order in ("original", "stable_prefix"):
            row = _prefix_lever(backend, examples, pipe, order, instruction, system_prompt, max_tokens)
            prefix.append({"prompts": label, "order": order, **row})
    out["prefix_caching"] = prefix
    log("levers: max_model_len")
    out["max_model_len"] = _max_model_len(make_backend, base_msgs, slim_msgs, slim_tokens, max_tokens, log)
    log("levers: concurrency sweep")
    out["concurrency"] = _concurrency(
        backend, {"uncompressed": base_msgs, "default_pipeline": slim_msgs}, concurrency_levels, max_tokens
    )
    out["wall_s"] = round(time.time() - started, 1)
    out["method"] = (
        "kv_cache_dtype: a second engine, requests alternating per question; prefix caching: per question two "
        "requests over the same documents (retrieval order, then reversed, with the next question), fresh cache, "
        "figures of the second; max_model_len: an engine started with the length advised for the compressed "
        "prompts, counting prompts it accepts; concurrency: waves of N requests, fresh cache per level"
    )
    return out
