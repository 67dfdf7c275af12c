"""Metrics against SQuAD-style reference examples and real gold answers from ../shared/data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tokenslim.bench import datasets
from tokenslim.bench import metrics as M


@pytest.mark.parametrize(
    "raw, norm",
    [
        ("The Denver Broncos!", "denver broncos"),
        ("  an   Apple,  a day ", "apple day"),
        ("Chief of Protocol.", "chief of protocol"),
        ("Theatre", "theatre"),  # 'the' only as a whole word
        ("Greenwich Village, New York City", "greenwich village new york city"),
    ],
)
def test_normalize_answer_follows_squad(raw: str, norm: str) -> None:
    assert M.normalize_answer(raw) == norm


def test_exact_match_and_f1_on_squad_reference_cases() -> None:
    golds = ["Denver Broncos", "The Denver Broncos"]
    assert M.exact_match("the denver broncos.", golds) == 1.0
    assert M.exact_match("Broncos", golds) == 0.0
    # SQuAD v1.1 script: pred ["broncos"] vs gold ["denver", "broncos"] -> P=1, R=0.5, F1=2/3
    assert M.token_f1("Broncos", golds) == pytest.approx(2 / 3)
    assert M.token_f1("Carolina Panthers", golds) == 0.0
    # best over golds
    assert M.token_f1("Denver", ["Broncos", "Denver"]) == 1.0
    # no gold -> not applicable
    assert M.exact_match("x", []) is None and M.token_f1("x", []) is None


def test_f1_on_real_hotpotqa_golds() -> None:
    ex = {e.id: e for e in datasets.hotpotqa(5)}
    golds = next(e.answers for e in ex.values() if e.answers == ["Greenwich Village, New York City"])
    assert M.exact_match("Greenwich Village, New York City.", golds) == 1.0
    # 2 of 5 gold tokens, 2 of 2 predicted: P=1, R=0.4
    assert M.token_f1("Greenwich Village", golds) == pytest.approx(2 * 0.4 / 1.4)
    assert M.token_f1("Brooklyn", golds) == 0.0


def test_answer_in_context_on_real_paragraphs() -> None:
    ex = datasets.hotpotqa(1)[0]  # gold: Chief of Protocol (Shirley Temple paragraph)
    full = "\n".join(c.text for c in ex.chunks)
    assert M.answer_in_context(full, ex.answers) == 1.0
    without = "\n".join(c.text for c in ex.chunks if "Chief of Protocol" not in c.text)
    assert M.answer_in_context(without, ex.answers, baseline_context=full) == 0.0
    # yes/no or abstractive golds never in the baseline: not applicable
    assert M.answer_in_context(full, ["yes"], baseline_context=full) is None
    # word boundaries: "art" is not found inside "start"
    assert not M.contains_answer("a fresh start", ["art"])


def test_state_retention_on_real_sgd_dialogue() -> None:
    ex = datasets.sgd(1)[0]
    slots = ex.gold["slot_values"]
    full = "\n".join(m["content"] for m in ex.history)
    assert M.state_retention(full, slots, baseline_context=full) == 1.0
    half = "\n".join(m["content"] for m in ex.history[:3])
    kept = M.state_retention(half, slots, baseline_context=full)
    assert kept is not None and 0.0 < kept < 1.0
    assert M.state_retention("", slots, baseline_context=full) == 0.0
    assert M.state_retention(full, {}) is None


def test_bootstrap_ci_contains_mean_and_is_reproducible() -> None:
    values = [1.0, 0.0, 1.0, 1.0, 0.0, None, 1.0, 0.0, 1.0, 1.0]
    ci = M.bootstrap_ci(values, seed=3)
    assert ci.n == 9
    assert ci.mean == pytest.approx(6 / 9)
    assert ci.low <= ci.mean <= ci.high
    assert 0.0 <= ci.low < ci.high <= 1.0
    assert M.bootstrap_ci(values, seed=3) == ci
    empty = M.bootstrap_ci([None, None])
    assert empty.n == 0 and math.isnan(empty.mean) and empty.fmt() == "-"
    assert M.bootstrap_ci([0.5]).low == M.bootstrap_ci([0.5]).high == 0.5


def test_wilson_interval_is_not_degenerate_at_the_edges() -> None:
    ci = M.wilson_ci([1.0] * 20)
    assert ci.mean == 1.0 and ci.high == pytest.approx(1.0)
    assert ci.low == pytest.approx(0.8389, abs=1e-3)  # the textbook Wilson bound for 20/20
    half = M.wilson_ci([1.0, 0.0] * 50 + [None])
    assert half.n == 100 and half.low < 0.5 < half.high
    assert M.wilson_ci([]).n == 0
    with pytest.raises(ValueError):
        M.wilson_ci([0.5])


def test_score_ci_picks_wilson_for_rates_and_bca_for_means() -> None:
    assert M.score_ci([1.0] * 20) == M.wilson_ci([1.0] * 20)
    means = [0.2, 0.5, 0.9, 0.4, 0.7, 0.1]
    assert M.score_ci(means, seed=1) == M.bca_ci(means, seed=1)


def test_bca_interval_of_a_mean() -> None:
    rng = np.random.default_rng(1)
    values = list(rng.uniform(0, 1, 200))
    ci = M.bca_ci(values, seed=2)
    assert ci.low < ci.mean < ci.high and ci.high - ci.low < 0.2
    assert M.bca_ci(values, seed=2) == ci
    assert M.bca_ci([0.7] * 5).low == M.bca_ci([0.7] * 5).high == 0.7
    assert M.bca_ci([None]).n == 0


def test_paired_bootstrap_separates_real_loss_from_noise() -> None:
    base = [1.0] * 30 + [0.0] * 10
    lost = [0.0] * 15 + [1.0] * 15 + [0.0] * 10  # 15 of 30 correct answers lost
    ci = M.paired_bootstrap_ci(lost, base)
    assert ci.high < 0  # a real loss
    same = M.paired_bootstrap_ci(base, base)
    assert same.low == same.high == 0.0
    with pytest.raises(ValueError):
        M.paired_bootstrap_ci([1.0], [1.0, 0.0])


def test_percentile() -> None:
    assert M.percentile([1, 2, 3, 4, None], 50) == 2.5
    assert M.percentile([], 95) is None
