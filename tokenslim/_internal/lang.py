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
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    import numpy as np

__all__ = ["words", "phrases_pattern", "word_vectors", "best_similarity", "vectors_path", "LANGUAGE"]

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


def vectors_path(language: str = LANGUAGE) -> Path:
    """Where ``language``'s word vectors live (``scripts/build_word_vectors.py`` writes them)."""
    return _DIR / f"{language}_vectors.npz"


@functools.lru_cache(maxsize=4)
def word_vectors(language: str = LANGUAGE) -> "tuple[dict[str, int], np.ndarray] | None":
    """``language``'s word vectors: each ``terms()`` form's row, and the unit-length rows (float16, as
    stored: a request converts only the rows it reads), or ``None`` for a language without a vector
    file (soft matching then falls back to exact matches)."""
    import numpy as np

    path = vectors_path(language)
    if not path.exists():
        return None
    with np.load(path, allow_pickle=False) as data:
        keys = [str(k) for k in data["keys"]]
        rows = np.asarray(data["vectors"])
    return {k: i for i, k in enumerate(keys)}, rows


def best_similarity(a: "Sequence[str]", b: "Sequence[str]", language: str = LANGUAGE) -> float:
    """The best word-vector cosine between a term of ``a`` and one of ``b`` (:func:`word_vectors`):
    1 for a shared term, at least 0, and 0 for a language without vectors or terms without one."""
    if not a or not b:
        return 0.0
    if not set(a).isdisjoint(b):
        return 1.0
    table = word_vectors(language)
    if table is None:
        return 0.0
    index, rows = table
    ia = [index[w] for w in a if w in index]
    ib = [index[w] for w in b if w in index]
    if not ia or not ib:
        return 0.0
    cos = rows[ia].astype("float32") @ rows[ib].astype("float32").T
    return max(0.0, float(cos.max()))
