"""A registered custom stage and a non-default pipeline for the adapters' save-and-load tests
(a module of its own, so it is imported, and registered, once)."""

from __future__ import annotations

import tokenslim
from tokenslim import Result
from tokenslim.stages import BaseStage, Budget, CompressDocuments, Dedupe, TrimTopK


@tokenslim.register_stage(name="drop_titled")
class DropTitled(BaseStage):
    """A custom stage (registered, so pipelines holding it can be saved): drops chunks whose
    metadata title contains ``word``."""

    def __init__(self, *, word: str = "") -> None:
        self.word = word

    def apply(self, result: Result) -> Result:
        kept = []
        for c in result.chunks:
            if self.word and self.word in str(c.metadata.get("title", "")):
                result.drop(c, reason="titled", detail=self.word)
            else:
                kept.append(c)
        result.chunks = kept
        return result


def custom_pipeline() -> tokenslim.Pipeline:
    """A non-default pipeline with a custom stage, for the save-and-load tests."""
    return tokenslim.Pipeline(
        [Dedupe(threshold=0.7), DropTitled(word="The"), TrimTopK(k=5), CompressDocuments(ratio=0.4),
         Budget(max_tokens=600)],
        on_error="skip",
    )


def record_result(result: Result) -> None:
    """An importable ``on_result`` callback (Haystack saves callables by import path)."""
