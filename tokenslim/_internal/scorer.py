"""The learned sentence-relevance model: a small MLP over :data:`~tokenslim._internal.features.FEATURES`.

The weights ship with the package (``relevance_model.json``, a few kilobytes) and are fitted
by ``scripts/train_relevance.py`` on public training data (see that script and the README).
Inference is two small matrix products in numpy: microseconds per prompt, no torch.

The model outputs, per sentence, the probability that the sentence is needed to answer the
question (a supporting fact). Its file also holds a recall table measured on questions held
out of each training fold: for a target share of needed sentences to keep (``recall``), the
probability threshold that kept that share. A threshold, not a fixed ratio, decides how much
each request keeps: a question whose evidence the model finds plainly keeps little, one where
it cannot tell keeps more.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tokenslim._internal.features import FEATURES
from tokenslim.errors import ConfigError

if TYPE_CHECKING:
    import numpy as np

__all__ = ["RelevanceModel", "load_model", "MODEL_PATH"]

MODEL_PATH = Path(__file__).with_name("relevance_model.json")


@dataclass(frozen=True)
class RelevanceModel:
    """Standardisation + one hidden layer (ReLU) + a logistic output, and the recall table."""

    features: tuple[str, ...]
    mean: "np.ndarray"
    scale: "np.ndarray"
    layers: tuple[tuple["np.ndarray", "np.ndarray"], ...]
    recall_table: tuple[tuple[float, float], ...]
    meta: dict[str, Any]

    def predict(self, x: "np.ndarray") -> "np.ndarray":
        """Probability that each row's sentence is needed, shape ``(rows,)``."""
        import numpy as np

        if x.shape[0] == 0:
            return np.zeros(0)
        h = (x - self.mean) / self.scale
        for k, (w, b) in enumerate(self.layers):
            h = h @ w + b
            if k < len(self.layers) - 1:
                h = np.maximum(h, 0.0)
        out: np.ndarray = 1.0 / (1.0 + np.exp(-np.clip(h[:, 0], -30.0, 30.0)))
        return out

    def threshold(self, recall: float) -> float:
        """The probability threshold that kept ``recall`` of the needed sentences on held-out questions
        (linear between the table's points; the table spans 0.5-0.995)."""
        table = self.recall_table
        if recall <= table[0][0]:
            return table[0][1]
        for (r0, t0), (r1, t1) in zip(table, table[1:]):
            if recall <= r1:
                return t0 + (t1 - t0) * (recall - r0) / (r1 - r0) if r1 > r0 else t1
        return table[-1][1]


def model_from_dict(data: dict[str, Any]) -> RelevanceModel:
    """Build a :class:`RelevanceModel` from its JSON form (as ``scripts/train_relevance.py`` writes it)."""
    import numpy as np

    features = tuple(data["features"])
    if features != FEATURES:
        raise ConfigError(
            f"relevance model was trained on features {features}, this tokenslim computes {FEATURES}: retrain it "
            "with scripts/train_relevance.py"
        )
    layers = tuple((np.asarray(w, dtype=np.float64), np.asarray(b, dtype=np.float64)) for w, b in data["layers"])
    table = tuple((float(r), float(t)) for r, t in data["recall_table"])
    return RelevanceModel(
        features,
        np.asarray(data["mean"], dtype=np.float64),
        np.asarray(data["scale"], dtype=np.float64),
        layers,
        table,
        dict(data.get("meta", {})),
    )


@functools.lru_cache(maxsize=4)
def load_model(path: str | None = None) -> RelevanceModel:
    """The shipped model (or the one at ``path``), read once per process."""
    p = Path(path) if path else MODEL_PATH
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read the relevance model {p}: {exc}") from None
    except ValueError as exc:
        raise ConfigError(f"relevance model {p} is not valid JSON: {exc}") from None
    return model_from_dict(data)
