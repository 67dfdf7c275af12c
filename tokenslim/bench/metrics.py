"""Answer-quality and latency metrics for the benchmark, with bootstrap confidence intervals.

Exact match and token F1 follow the official SQuAD v1.1 evaluation script
(lower-case, strip punctuation and the articles a/an/the, collapse whitespace;
the best score over all gold answers counts). Answer-in-context and state
retention say whether compression kept what the model needs: the gold answer
string, or the gold dialogue-state slot values, still in the prompt.

Every per-example score is a float in [0, 1] or ``None`` (not applicable: no
gold answer, or the gold was never in the uncompressed prompt); aggregates skip
``None`` and report how many examples counted.
"""

from __future__ import annotations

import collections
import math
import re
import string
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np

__all__ = [
    "normalize_answer",
    "exact_match",
    "token_f1",
    "contains_answer",
    "span_answers",
    "answer_in_context",
    "state_retention",
    "CI",
    "bootstrap_ci",
    "wilson_ci",
    "bca_ci",
    "score_ci",
    "paired_bootstrap_ci",
    "percentile",
]

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCT = frozenset(string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD normalization: lower-case, drop punctuation and articles, collapse whitespace."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, golds: Sequence[str]) -> float | None:
    """1.0 if the normalized prediction equals any normalized gold answer, else 0.0.

    Returns:
        ``None`` when there is no gold answer (the example does not count).
    """
    if not golds:
        return None
    pred = normalize_answer(prediction)
    return float(any(pred == normalize_answer(g) for g in golds))


def _f1(pred_tokens: list[str], gold_tokens: list[str]) -> float:
    common = collections.Counter(pred_tokens) & collections.Counter(gold_tokens)
    same = sum(common.values())
    if not pred_tokens or not gold_tokens:
        return float(pred_tokens == gold_tokens)
    if same == 0:
        return 0.0
    precision = same / len(pred_tokens)
    recall = same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def token_f1(prediction: str, golds: Sequence[str]) -> float | None:
    """Best bag-of-tokens F1 between the normalized prediction and any gold answer.

    Returns:
        ``None`` when there is no gold answer.
    """
    if not golds:
        return None
    pred = normalize_answer(prediction).split()
    return max(_f1(pred, normalize_answer(g).split()) for g in golds)


def contains_answer(text: str, golds: Iterable[str]) -> bool:
    """Whether any non-empty normalized gold string occurs in the normalized text on word boundaries."""
    hay = f" {normalize_answer(text)} "
    for g in golds:
        needle = normalize_answer(g)
        if needle and f" {needle} " in hay:
            return True
    return False


_NOT_SPANS = frozenset({"yes", "no"})


def span_answers(golds: Iterable[str]) -> list[str]:
    """The gold answers that can be looked for in a context: non-empty after
    normalization and not ``yes``/``no`` (HotpotQA comparison answers, which are
    not text of the passages; as words they occur by chance)."""
    return [g for g in golds if normalize_answer(g) and normalize_answer(g) not in _NOT_SPANS]


def answer_in_context(context: str, golds: Sequence[str], *, baseline_context: str | None = None) -> float | None:
    """Did a gold answer survive compression?

    Args:
        context: The compressed prompt text (chunks, history, system prompt).
        golds: Gold answer strings.
        baseline_context: The uncompressed prompt text. When given, examples whose
            baseline does not contain any gold answer (abstractive answers) return
            ``None``: compression cannot lose what was never there. ``yes``/``no``
            answers are never looked for (see :func:`span_answers`).

    Returns:
        1.0 / 0.0, or ``None`` when not applicable.
    """
    golds = span_answers(golds)
    if not golds:
        return None
    if baseline_context is not None:
        golds = [g for g in golds if contains_answer(baseline_context, [g])]
        if not golds:
            return None
    return float(contains_answer(context, golds))


def state_retention(
    context: str, slot_values: Mapping[str, Sequence[str]], *, baseline_context: str | None = None
) -> float | None:
    """Fraction of gold dialogue-state slots (SGD) whose value is still in the prompt.

    A slot counts as kept when any of its gold values occurs in ``context``
    (SQuAD-normalized, on word boundaries).

    Args:
        context: The compressed conversation text.
        slot_values: ``{"Service.slot": [value, ...]}`` (SGD's final dialogue state).
        baseline_context: The uncompressed text; slots whose value it does not contain
            verbatim are left out (they cannot be lost by compression).

    Returns:
        The kept fraction, or ``None`` when no slot applies.
    """
    slots = [list(v) for v in slot_values.values() if any(normalize_answer(x) for x in v)]
    if baseline_context is not None:
        slots = [[x for x in v if contains_answer(baseline_context, [x])] for v in slots]
        slots = [v for v in slots if v]
    if not slots:
        return None
    kept = sum(contains_answer(context, v) for v in slots)
    return kept / len(slots)


@dataclass(frozen=True)
class CI:
    """A point estimate (the mean) with a bootstrap confidence interval.

    Attributes:
        mean: The sample mean (``nan`` when no value applied).
        low: Lower bound of the interval.
        high: Upper bound of the interval.
        n: How many values counted.
        confidence: The interval's confidence level (0.95).
    """

    mean: float
    low: float
    high: float
    n: int
    confidence: float = 0.95

    def as_dict(self, digits: int = 4) -> dict[str, float | int | None]:
        """JSON-friendly form (``nan`` becomes ``None``)."""

        def r(x: float) -> float | None:
            return None if math.isnan(x) else round(x, digits)

        return {"mean": r(self.mean), "low": r(self.low), "high": r(self.high), "n": self.n}

    def fmt(self, digits: int = 2, scale: float = 1.0) -> str:
        """``"0.41 [0.33, 0.50]"``, or ``"-"`` when nothing counted."""
        if self.n == 0 or math.isnan(self.mean):
            return "-"
        return f"{self.mean * scale:.{digits}f} [{self.low * scale:.{digits}f}, {self.high * scale:.{digits}f}]"


def _clean(values: Iterable[float | None]) -> np.ndarray:
    return np.asarray([v for v in values if v is not None and not math.isnan(v)], dtype=float)


def bootstrap_ci(
    values: Iterable[float | None], *, n_resamples: int = 2000, confidence: float = 0.95, seed: int = 0
) -> CI:
    """Percentile bootstrap interval of the mean, with a fixed seed (same data, same interval).

    Args:
        values: Per-example scores; ``None`` / ``nan`` are skipped.
        n_resamples: Bootstrap resamples.
        confidence: Interval level.
        seed: Seed of the resampling generator.

    Returns:
        A :class:`CI`; ``low <= mean <= high`` always holds.
    """
    x = _clean(values)
    if x.size == 0:
        return CI(math.nan, math.nan, math.nan, 0, confidence)
    mean = float(x.mean())
    if x.size == 1:
        return CI(mean, mean, mean, 1, confidence)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, x.size, size=(n_resamples, x.size))
    means = x[idx].mean(axis=1)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return CI(mean, min(float(low), mean), max(float(high), mean), int(x.size), confidence)


def wilson_ci(values: Iterable[float | None], *, confidence: float = 0.95) -> CI:
    """Wilson score interval of a kept/not-kept rate (scipy.stats.binomtest).

    For 0/1 outcomes the percentile bootstrap collapses at the edges (20/20 gives
    [1.00, 1.00]); Wilson's interval stays honest there (20/20 gives [0.84, 1.00]).

    Args:
        values: Per-example outcomes, each 0.0 or 1.0; ``None`` / ``nan`` are skipped.
        confidence: Interval level.

    Raises:
        ValueError: a value is neither 0 nor 1.
    """
    from scipy.stats import binomtest

    x = _clean(values)
    if x.size == 0:
        return CI(math.nan, math.nan, math.nan, 0, confidence)
    if not np.all((x == 0) | (x == 1)):
        raise ValueError("wilson_ci needs 0/1 outcomes; use bca_ci for means of other scores")
    k = int(x.sum())
    ci = binomtest(k, int(x.size)).proportion_ci(confidence_level=confidence, method="wilson")
    return CI(k / x.size, float(ci.low), float(ci.high), int(x.size), confidence)


def bca_ci(
    values: Iterable[float | None], *, n_resamples: int = 2000, confidence: float = 0.95, seed: int = 0
) -> CI:
    """Bias-corrected and accelerated bootstrap interval of the mean (scipy.stats.bootstrap, method="BCa").

    Use it for means of continuous scores (term recall, F1); for 0/1 rates use
    :func:`wilson_ci`. Fixed seed: same data, same interval. When every value is the
    same the interval is that value (BCa is undefined there).
    """
    from scipy.stats import bootstrap

    x = _clean(values)
    if x.size == 0:
        return CI(math.nan, math.nan, math.nan, 0, confidence)
    mean = float(x.mean())
    if x.size == 1 or np.all(x == x[0]):
        return CI(mean, mean, mean, int(x.size), confidence)
    res = bootstrap(
        (x,), np.mean, n_resamples=n_resamples, confidence_level=confidence, method="BCa", random_state=np.random.default_rng(seed)
    )
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    return CI(mean, min(low, mean), max(high, mean), int(x.size), confidence)


def score_ci(values: Iterable[float | None], *, confidence: float = 0.95, seed: int = 0) -> CI:
    """The right interval for per-example scores: Wilson when every value is 0 or 1 (a rate), else BCa (a mean)."""
    x = _clean(values)
    if x.size and np.all((x == 0) | (x == 1)):
        return wilson_ci(x, confidence=confidence)
    return bca_ci(x, confidence=confidence, seed=seed)


def paired_bootstrap_ci(
    values: Sequence[float | None],
    baseline: Sequence[float | None],
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> CI:
    """Interval of the mean per-example difference ``values - baseline`` (same examples).

    Pairing removes the between-question spread, so an interval that excludes 0 is
    a real change, not noise. Pairs where either side is ``None`` are skipped.

    Raises:
        ValueError: the two sequences differ in length.
    """
    if len(values) != len(baseline):
        raise ValueError(f"paired values differ in length: {len(values)} vs {len(baseline)}")
    diffs = [a - b for a, b in zip(values, baseline) if a is not None and b is not None]
    return bootstrap_ci(diffs, n_resamples=n_resamples, confidence=confidence, seed=seed)


def percentile(values: Iterable[float | None], q: float) -> float | None:
    """The ``q``-th percentile (0-100) of the non-missing values, or ``None`` if there are none."""
    x = _clean(values)
    if x.size == 0:
        return None
    return float(np.percentile(x, q))
