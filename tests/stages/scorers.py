"""Relevance scorers for the pluggable-scorer tests, importable as ``tests.stages.scorers:Name``."""

from __future__ import annotations

from typing import Sequence


class Keyword:
    """Scores 1.0 for texts holding the word 'zebra', else 0.0 (a stand-in for a user's cross-encoder)."""

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        return [1.0 if "zebra" in t.lower() else 0.0 for t in texts]


class WrongLength:
    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        return [0.5]


class NotFinite:
    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        return [float("nan")] * len(texts)


NOT_A_SCORER = object()
