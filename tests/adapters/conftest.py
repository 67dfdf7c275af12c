"""Fixtures for the framework adapter tests: real HotpotQA questions and one shared pipeline."""

from __future__ import annotations

import pytest

import tokenslim
from tokenslim.bench import datasets


@pytest.fixture(scope="session")
def hotpot_examples(data_dir) -> list[datasets.Example]:
    """The first 20 HotpotQA distractor questions (10 Wikipedia paragraphs each)."""
    return datasets.hotpotqa(limit=20)


@pytest.fixture(scope="session")
def pipeline() -> tokenslim.Pipeline:
    """The default pipeline, shared by every test (as an app would share it across threads)."""
    return tokenslim.default_pipeline()


@pytest.fixture(scope="session")
def sgd_example(data_dir) -> datasets.Example:
    """A real task-oriented dialogue (SGD) with at least 12 turns of history."""
    return next(e for e in datasets.sgd() if len(e.history) >= 12)


def has_answer(text: str, answers: list[str]) -> bool:
    """True when any gold answer string occurs in ``text`` (case-insensitive)."""
    low = text.lower()
    return any(a.lower() in low for a in answers)
