"""Fixtures for the bench tests: one small ablation run shared by the runner and report tests."""

from __future__ import annotations

import pytest
from bench_helpers import KeepFirst, NoOp, OracleBackend

from tokenslim import Pipeline
from tokenslim.bench import datasets
from tokenslim.bench.runner import BenchReport, run_ablation


@pytest.fixture(scope="session")
def run(data_dir) -> tuple[BenchReport, OracleBackend, list[datasets.Example]]:
    examples = datasets.hotpotqa(14)
    measured, warm = examples[:12], examples[12:]
    backend = OracleBackend({e.query: e.answers[0] for e in examples})
    pipe = Pipeline([("keep_first_5", KeepFirst(k=5)), ("noop", NoOp()), ("keep_first_2", KeepFirst(k=2))])
    rep = run_ablation(measured, backend, pipe, max_tokens=8, concurrency=4, warmup=warm, progress=False)
    return rep, backend, measured
