"""Per-language word lists (``tokenslim/_internal/lang/<code>.json``), read once.

Relevance reads a handful of closed-class word lists: stop words, the words that open an
adverbial phrase, function words, name joiners, pronouns that point back, and the wording of
questions that ask for a date or a number. They are data, not code: a language is a file
beside this module, and the learned model (:mod:`tokenslim._internal.scorer`) weighs the
features they produce from training data.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

__all__ = ["words", "phrases_pattern", "LANGUAGE"]

LANGUAGE = "en"
_DIR = Path(__file__).with_name("lang")


@functools.lru_cache(maxsize=8)
def _table(language: str) -> dict[str, list[str]]:
    data: dict[str, list[str]] = json.loads((_DIR / f"{language}.json").read_text(encoding="utf-8"))
    return data


def words(name: str, language: str = LANGUAGE) -> frozenset[str]:
    """The word list ``name`` of ``language`` as a set."""
    return frozenset(_table(language)[name])


def phrases_pattern(name: str, language: str = LANGUAGE) -> "re.Pattern[str]":
    """A case-insensitive pattern matching any phrase of list ``name`` on word boundaries."""
    phrases = sorted(_table(language)[name], key=len, reverse=True)
    return re.compile(r"\b(?:" + "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in phrases) + r")\b", re.I)
