"""The ablation runner on real HotpotQA questions with a deterministic backend."""

from __future__ import annotations

import re

import pytest
from bench_helpers import KeepFirst, NoOp, OracleBackend

from tokenslim import Pipeline
from tokenslim._chunk import Message
from tokenslim.bench import datasets
from tokenslim.capacity import kv_bytes
from tokenslim._internal.cpu import cpu_summary
from tokenslim.bench.runner import _kv_check, run_ablation, stage_labels
from tokenslim.errors import ConfigError, InputError


def _chunks_in(msgs: list[Message]) -> int:
    return len(re.findall(r"^\[\d+\] ", msgs[-1]["content"], flags=re.M))


def test_rows_are_baseline_then_one_stage_at_a_time(run) -> None:
    rep, backend, measured = run
    assert [s["stage"] for s in rep.stages] == ["baseline", "+keep_first_5", "+noop", "+keep_first_2"]
    n = len(measured)
    warm, sent = backend.sequential[:2], backend.sequential[2:]
    assert [_chunks_in(m) for m in warm] == [10, 10]  # warm-up: baseline prompts of other questions
    assert len(sent) == 2 * 3 * n  # 2 interleaved passes; the no-op stage is not re-sent
    # Interleaved: each question's three prompts go together, in an order that varies by question.
    orders = []
    for k in range(2 * n):
        group = sent[3 * k : 3 * k + 3]
        assert len({m[-1]["content"].rsplit("Question: ", 1)[1] for m in group}) == 1
        assert sorted(_chunks_in(m) for m in group) == [2, 5, 10]
        orders.append(tuple(_chunks_in(m) for m in group))
    assert len(set(orders)) > 1
    assert len(backend.concurrent) == 3 * n
    assert backend.resets == 2 * 3 * n + 3  # a fresh prefix cache before every timed request and throughput pass
    assert rep.meta["repeats"] == 2 and "interleaved" in rep.meta["timing"]


def test_prefill_ratios_are_paired_per_question(run) -> None:
    rep, _, _ = run
    for label in ("+keep_first_5", "+keep_first_2"):
        records, base = rep.examples[label], rep.examples["baseline"]
        for r, b in zip(records, base):
            assert r["prefill_ratio"] == pytest.approx(r["prefill_ms"] / b["prefill_ms"])
            assert len(r["prefill_ms_runs"]) == 2
        ratio = rep.stage(label)["prefill_ratio"]
        assert ratio["low"] <= ratio["mean"] <= ratio["high"] < 1
        # the fake prefill is proportional to tokens: the two ratios agree
        assert ratio["mean"] == pytest.approx(rep.stage(label)["tokens_ratio"]["mean"], rel=0.02)
    assert rep.stage("baseline")["throughput"]["prefix_cache_hit_rate"] == 0.0


def test_answer_likelihood_and_controls_separate(run) -> None:
    rep, _, measured = run
    spans = [e for e in measured if e.answers[0].lower() not in ("yes", "no")]
    base = rep.stage("baseline")
    assert base["answer_nll"]["n"] == len(spans)  # yes/no answers are not scored
    # the oracle reader finds answers present in the prompt likely: cutting to 2 chunks loses some
    assert rep.stage("+keep_first_2")["answer_nll_delta"]["mean"] > 0
    controls = {c["control"]: c for c in rep.controls}
    assert set(controls) == {"evidence_removed", "gold_only"}
    assert controls["evidence_removed"]["answer_nll_delta"]["low"] > 0
    assert controls["gold_only"]["tokens_model"]["mean"] < base["tokens_model"]["mean"]
    assert rep.checks["likelihood"]["separates"] is not None
    assert "evidence removed +" in rep.checks["likelihood"]["detail"]


def test_unchanged_stage_is_listed_with_previous_figures(run) -> None:
    rep, _, _ = run
    before, noop = rep.stage("+keep_first_5"), rep.stage("+noop")
    assert noop["changed"] is False and before["changed"] is True
    for key in ("tokens_model", "prefill_ms", "quality", "delta_vs_baseline", "throughput"):
        assert noop[key] == before[key]
    with pytest.raises(KeyError):
        rep.stage("+missing")


def test_figures_per_stage(run) -> None:
    rep, backend, measured = run
    base, last = rep.stage("baseline"), rep.stage("+keep_first_2")
    assert base["n"] == last["n"] == len(measured)
    assert base["token_reduction_pct"] == 0.0
    assert base["tokens_model"]["mean"] > rep.stage("+keep_first_5")["tokens_model"]["mean"] > last["tokens_model"]["mean"]
    assert 50 < last["token_reduction_pct"] < 100
    assert last["tokens_cl100k"]["mean"] < base["tokens_cl100k"]["mean"]
    assert last["prefill_ms"]["p50"] < base["prefill_ms"]["p50"] <= base["prefill_ms"]["p95"] <= base["prefill_ms"]["p99"]
    assert base["tpot_ms"]["p50"] == backend.tpot_ms
    # the prefix cache is reset before each pass, so every prompt pays its whole prefill
    assert base["prefix_cache_hit_rate"] == 0.0
    assert base["prefill_ms_mean_ci"]["mean"] == pytest.approx(base["tokens_model"]["mean"] * backend.prefill_ms_per_token, rel=1e-3)
    ci = base["prefill_ms_mean_ci"]
    assert ci["low"] <= ci["mean"] <= ci["high"]
    first = rep.examples["baseline"][0]
    held = first["tokens_model"] + first["output_tokens"] - 1
    assert first["kv_bytes"] == kv_bytes(backend.config, held)
    assert base["kv_mb_per_request"] > last["kv_mb_per_request"] > 0
    # no `concurrency` parameter on this backend: 12 prompts go in 3 waves of 4
    tp = base["throughput"]
    assert (tp["concurrency"], tp["requests"]) == (4, 12)
    assert tp["requests_per_s"] == pytest.approx(12 / tp["wall_s"], rel=0.01)
    assert last["throughput"]["requests_per_s"] > tp["requests_per_s"]
    assert rep.checks["prefill_falls_with_tokens"] is True
    assert rep.checks["pearson_r"] == pytest.approx(1.0, abs=1e-3)
    kv = rep.checks["kv"]  # config figure vs whole blocks allocated, every sent request
    assert kv["agree"] is True and kv["requests"] == 3 * len(measured) and 0 <= kv["max_gap_pct"] < 100
    records = rep.examples["+keep_first_2"]
    assert all(r["answer"] == r["raw_answer"].splitlines()[0] for r in records)
    assert rep.meta["backend"] == "oracle" and rep.meta["warmup_requests"] == 2
    assert rep.meta["cpu"] == cpu_summary()


def test_quality_with_intervals_and_paired_deltas(run) -> None:
    rep, _, measured = run
    base = rep.stage("baseline")
    assert base["quality"]["answer_in_context"]["mean"] == 1.0  # by definition: relative to the baseline
    # the oracle answers exactly the questions whose answer string is in the full context
    in_ctx = [any(e.answers[0] in c.text for c in e.chunks) for e in measured]
    assert base["quality"]["em"]["mean"] == pytest.approx(sum(in_ctx) / len(in_ctx))
    assert base["quality"]["em"]["n"] == len(measured)
    assert base["quality"]["state_retention"]["n"] == 0  # no dialogue state in HotpotQA
    last = rep.stage("+keep_first_2")
    assert last["quality"]["answer_in_context"]["mean"] < 1.0
    assert last["delta_vs_baseline"]["answer_in_context"]["mean"] < 0
    assert last["delta_vs_baseline"]["em"]["mean"] < 0
    for s in rep.stages:
        for key in ("em", "f1", "answer_in_context"):
            ci = s["quality"][key]
            assert ci["low"] <= ci["mean"] <= ci["high"], (s["stage"], key, ci)
            assert 0.0 <= ci["low"] and ci["high"] <= 1.0


def test_kv_check_flags_allocation_beyond_block_rounding() -> None:
    ok = {"tokens_model": 100, "output_tokens": 1, "kv_bytes": 100 * 64, "kv_bytes_allocated": 112 * 64, "kv_block_size": 16}
    too_much = {**ok, "kv_bytes_allocated": 128 * 64}  # a whole block more than 100 tokens need
    too_little = {**ok, "kv_bytes_allocated": 96 * 64}
    assert _kv_check({"baseline": [ok]})["agree"] is True
    bad = _kv_check({"baseline": [ok, too_much, too_little]})
    assert bad["agree"] is False and bad["disagreeing"] == 2 and bad["max_gap_pct"] == 28.0
    assert _kv_check({"baseline": [{**ok, "kv_block_size": None}]})["agree"] is None


def test_labels_and_errors() -> None:
    pipe = Pipeline([NoOp(), ("cut", KeepFirst(k=1))])
    assert stage_labels(pipe) == ["baseline", "+no_op", "+cut"]
    backend = OracleBackend({})
    with pytest.raises(InputError, match="no examples"):
        run_ablation([], backend, pipe, progress=False)
    ex = datasets.hotpotqa(1)
    with pytest.raises(ConfigError, match="max_tokens"):
        run_ablation(ex, backend, pipe, max_tokens=0, progress=False)
    with pytest.raises(ConfigError, match="concurrency"):
        run_ablation(ex, backend, pipe, concurrency=-1, progress=False)
    with pytest.raises(ConfigError, match="repeats"):
        run_ablation(ex, backend, pipe, repeats=0, progress=False)


def test_concurrency_zero_skips_throughput_pass() -> None:
    ex = datasets.hotpotqa(3)
    backend = OracleBackend({})
    rep = run_ablation(ex, backend, Pipeline([KeepFirst(k=3)]), concurrency=0, progress=False)
    assert backend.concurrent == [] and all(s["throughput"] is None for s in rep.stages)


def test_backend_that_caps_concurrency_itself_gets_one_call() -> None:
    class Capped(OracleBackend):
        def generate_concurrent(self, prompts, *, max_tokens=32, concurrency=None):  # type: ignore[override]
            self.caps = [*getattr(self, "caps", []), (len(prompts), concurrency)]
            return super().generate_concurrent(prompts, max_tokens=max_tokens)

    ex = datasets.hotpotqa(5)
    backend = Capped({})
    rep = run_ablation(ex, backend, Pipeline([KeepFirst(k=3)]), concurrency=2, progress=False)
    assert backend.caps == [(5, 2), (5, 2)]
    assert rep.stages[0]["throughput"]["concurrency"] == 2


def test_likelihood_scores_span_answers_and_builds_controls_from_supporting_titles() -> None:
    from tokenslim.bench import likelihood as L

    assert L.scored_answer(["yes"]) is None and L.scored_answer(["No", "no"]) is None
    assert L.scored_answer(["Chief of Protocol"]) == "Chief of Protocol"
    ex = datasets.hotpotqa(1)[0]
    ids = L.evidence_ids(ex)
    assert sorted((ex.chunks[i].metadata or {})["title"] for i in ids) == sorted(set(ex.gold["supporting"]))
    controls = L.control_chunks(ex)
    assert len(controls["gold_only"]) == len(ids) and len(controls["evidence_removed"]) == len(ex.chunks) - len(ids)
    # Without supporting titles the chunks holding the answer are the evidence.
    bare = datasets.Example("x", ex.query, ex.chunks, ex.answers)
    assert all(L.M.contains_answer(bare.chunks[i].text, ex.answers) for i in L.evidence_ids(bare))
    assert L.nll_per_token([-1.0, -2.0]) == 1.5
