"""Reorder: choose the final order of the chunks in the prompt (drops nothing).

Orders:

* ``"score"`` (default) - best first. After TrimTopK a prompt holds a handful of
  chunks, where the "lost in the middle" effect is small and putting the strongest
  evidence first is what models and readers expect; it also equals retrieval order
  when the retriever already sorted its output.
* ``"original"`` - retrieval position (``metadata["position"]``, set when the input
  was coerced; chunks without it keep their current order).
* ``"lost_in_the_middle"`` - best at both ends, weakest in the middle
  (Liu et al. 2023, "Lost in the Middle"): ranks 1, 3, 5, ... from the front and
  2, 4, ... from the back. Worth it for long contexts (10+ chunks).
* ``"stable_prefix"`` - a content-derived order, independent of the query: by source
  key (document), then text. The same documents then render the same prompt prefix
  across queries, so provider prompt caching can reuse it; the question is always
  last in :meth:`Result.to_prompt` / :meth:`Result.to_messages`.

Scores: the retriever's ``chunk.score`` when every chunk has one; otherwise
``metadata["relevance"]`` (stored by :class:`~tokenslim.stages.TrimTopK`) when every
chunk has one; otherwise the order of arrival is taken as the ranking (first = best;
``"score"`` then keeps it as is). Scores of different kinds are never mixed. Ties keep
arrival order.
"""

from __future__ import annotations

from typing import Literal, Sequence

from tokenslim._chunk import Chunk
from tokenslim._internal.normalize import DEFAULT_SOURCE_KEYS, source_key, split_excerpt
from tokenslim._result import Result
from tokenslim.stages._base import BaseStage, check, check_str_list

__all__ = ["Reorder", "Order", "ORDERS", "reorder_indices", "chunk_scores"]

Order = Literal["score", "original", "lost_in_the_middle", "stable_prefix"]
ORDERS: tuple[str, ...] = ("score", "original", "lost_in_the_middle", "stable_prefix")


def chunk_scores(chunks: Sequence[Chunk]) -> list[float] | None:
    """The scores to rank by: retriever scores, else ``metadata["relevance"]``, else ``None``."""
    if chunks and all(c.score is not None for c in chunks):
        return [float(c.score) for c in chunks]  # type: ignore[arg-type]
    rel = [c.metadata.get("relevance") for c in chunks]
    if chunks and all(isinstance(r, (int, float)) and not isinstance(r, bool) for r in rel):
        return [float(r) for r in rel]  # type: ignore[arg-type]
    return None


def reorder_indices(chunks: Sequence[Chunk], order: Order, source_keys: Sequence[str] = DEFAULT_SOURCE_KEYS) -> list[int]:
    """The new order as indices into ``chunks`` (pure; see the module docstring).

    Raises:
        ValueError: ``order`` is not one of :data:`ORDERS`.
    """
    n = len(chunks)
    if order == "original":
        return sorted(range(n), key=lambda i: (_position(chunks[i], i), i))
    if order == "stable_prefix":
        keys = []
        for c in chunks:
            ex = split_excerpt(c.text)
            src = source_key(c.metadata, ex.fields, source_keys)
            keys.append((src is None, src or "", c.text))
        return sorted(range(n), key=lambda i: (keys[i], i))
    if order not in ("score", "lost_in_the_middle"):
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    scores = chunk_scores(chunks)
    best = list(range(n)) if scores is None else sorted(range(n), key=lambda i: (-scores[i], i))
    if order == "score":
        return best
    return best[0::2] + best[1::2][::-1]


def _position(chunk: Chunk, fallback: int) -> float:
    pos = chunk.metadata.get("position")
    return float(pos) if isinstance(pos, (int, float)) and not isinstance(pos, bool) else float(fallback)


class Reorder(BaseStage):
    """Put the surviving chunks in their final prompt order; nothing is dropped.

    Args:
        order: ``"score"`` (default), ``"original"``, ``"lost_in_the_middle"`` or
            ``"stable_prefix"``; see the module docstring for each and for how
            missing scores are handled.
        source_keys: Metadata keys naming a chunk's document (``"stable_prefix"`` only).

    Raises:
        ConfigError: from :meth:`validate`, for an unknown ``order``.
    """

    def __init__(self, *, order: Order = "score", source_keys: Sequence[str] = DEFAULT_SOURCE_KEYS) -> None:
        self.order = order
        self.source_keys = source_keys

    def validate(self) -> None:
        """Check that ``order`` is known and ``source_keys`` is a sequence of str."""
        check(self.order in ORDERS, self, f"order must be one of {ORDERS}, got {self.order!r}")
        check_str_list(self.source_keys, self, "source_keys")

    def apply(self, result: Result) -> Result:
        """Replace ``result.chunks`` with the same chunks in the chosen order."""
        chunks = result.chunks
        result.chunks = [chunks[i] for i in reorder_indices(chunks, self.order, self.source_keys)]
        return result
