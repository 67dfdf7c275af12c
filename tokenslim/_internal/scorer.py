"""The learned sentence-relevance model over :data:`~tokenslim._internal.features.FEATURES`:
gradient-boosted trees (the shipped model) or a small MLP.

The model ships with the package (``relevance_model.json``) and is fitted by
``scripts/train_relevance.py`` on public training data (see that script and the README).
Inference is numpy alone (trees walked level by level for every row at once, or two small
matrix products): about a millisecond per prompt, no torch, no scikit-learn.

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
from typing import TYPE_CHECKING, Any, Sequence

from tokenslim._internal.features import CONTEXT_FEATURES, FEATURES, context_features
from tokenslim.errors import ConfigError

if TYPE_CHECKING:
    import numpy as np

__all__ = ["RelevanceModel", "load_model", "MODEL_PATH"]

MODEL_PATH = Path(__file__).with_name("relevance_model.json")


@dataclass(frozen=True)
class Net:
    """Standardisation + hidden layers (ReLU) + a logistic output."""

    mean: "np.ndarray"
    scale: "np.ndarray"
    layers: tuple[tuple["np.ndarray", "np.ndarray"], ...]

    def __call__(self, x: "np.ndarray") -> "np.ndarray":
        """Probability per row, shape ``(rows,)``."""
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


_BLOCK = 512  # rows walked through the trees at once (see Trees.__call__)


@dataclass(frozen=True)
class Trees:
    """A sum of regression trees + a logistic output (scikit-learn's HistGradientBoostingClassifier, exported).

    Every tree is stored as flat arrays padded to the same node count; a leaf points to itself,
    so walking ``depth`` steps from the root lands every row on its leaf whatever the tree's shape.
    """

    baseline: float
    feature: "np.ndarray"  # (trees, nodes) int: the feature a node splits on
    threshold: "np.ndarray"  # (trees, nodes): go left when the value is <= this
    left: "np.ndarray"  # (trees, nodes) int
    right: "np.ndarray"  # (trees, nodes) int
    value: "np.ndarray"  # (trees, nodes): a leaf's contribution to the log-odds
    depth: int

    def __call__(self, x: "np.ndarray") -> "np.ndarray":
        """Probability per row, shape ``(rows,)``."""
        import numpy as np

        if x.shape[0] == 0:
            return np.zeros(0)
        # rows in blocks: a (rows x trees) walk over 10,000 sentences outgrows the CPU caches, and
        # its time then grew faster than the rows (1,000 -> 2,000 chunks: x3.1)
        raw = np.concatenate([self._raw(x[i : i + _BLOCK]) for i in range(0, x.shape[0], _BLOCK)])
        out: np.ndarray = 1.0 / (1.0 + np.exp(-np.clip(raw, -30.0, 30.0)))
        return out

    def _raw(self, x: "np.ndarray") -> "np.ndarray":
        """The log-odds of each row of ``x``."""
        import numpy as np

        n_trees = self.feature.shape[0]
        tree = np.arange(n_trees)[None, :]
        rows = np.arange(x.shape[0])[:, None]
        node = np.zeros((x.shape[0], n_trees), dtype=np.intp)
        for _ in range(self.depth):
            go_left = x[rows, self.feature[tree, node]] <= self.threshold[tree, node]
            node = np.where(go_left, self.left[tree, node], self.right[tree, node])
        raw: np.ndarray = self.baseline + self.value[tree, node].sum(axis=1)
        return raw


@dataclass(frozen=True)
class RelevanceModel:
    """One or two passes: ``first`` over the sentence features, ``second`` (optional) over those plus the
    first pass's probabilities seen in context (:func:`~tokenslim._internal.features.context_features`);
    and the recall table of the final probabilities."""

    features: tuple[str, ...]
    first: Net | Trees
    second: Net | Trees | None
    recall_table: tuple[tuple[float, float], ...]
    meta: dict[str, Any]

    def predict(
        self,
        x: "np.ndarray",
        owners: Sequence[int] | None = None,
        positions: Sequence[int] | None = None,
        sentences: Sequence[str] | None = None,
        titles: Sequence[str] | None = None,
    ) -> "np.ndarray":
        """Probability that each row's sentence is needed, shape ``(rows,)``.

        With a second pass, the request's layout (each row's chunk, position and text, and the
        chunks' titles) is needed; without it only the first pass runs.
        """
        import numpy as np

        p = self.first(x)
        if self.second is None or owners is None or positions is None or sentences is None or titles is None:
            return p
        ctx = context_features([float(v) for v in p], owners, positions, sentences, titles)
        return self.second(np.hstack([x, ctx]))

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


def _predictor(data: dict[str, Any]) -> Net | Trees:
    """One pass of a model file; raises ``ValueError``/``KeyError``/``TypeError`` on a malformed one
    (:func:`model_from_dict` turns them into a :class:`~tokenslim.errors.ConfigError`)."""
    import numpy as np

    n_features = len(data["features"])
    if data.get("kind") == "trees":
        t = data["trees"]
        trees = Trees(
            float(data["baseline"]),
            np.asarray(t["feature"], dtype=np.intp),
            np.asarray(t["threshold"], dtype=np.float64),
            np.asarray(t["left"], dtype=np.intp),
            np.asarray(t["right"], dtype=np.intp),
            np.asarray(t["value"], dtype=np.float64),
            int(data["depth"]),
        )
        arrays = (trees.feature, trees.threshold, trees.left, trees.right, trees.value)
        shape = trees.feature.shape
        # checked once at load, so a tampered file cannot index out of bounds (or loop) at the first request
        if len(shape) != 2 or any(a.shape != shape for a in arrays) or not 0 <= trees.depth <= 64:
            raise ValueError("tree arrays of different shapes, or a depth outside 0-64")
        if trees.feature.size and (
            trees.feature.min() < 0 or trees.feature.max() >= n_features
            or min(trees.left.min(), trees.right.min()) < 0 or max(trees.left.max(), trees.right.max()) >= shape[1]
        ):
            raise ValueError("a tree node points outside its tree or at a feature the model does not have")
        if not (np.isfinite(trees.threshold).all() and np.isfinite(trees.value).all() and np.isfinite(trees.baseline)):
            raise ValueError("a non-finite threshold or value")
        return trees
    layers = tuple((np.asarray(w, dtype=np.float64), np.asarray(b, dtype=np.float64)) for w, b in data["layers"])
    net = Net(np.asarray(data["mean"], dtype=np.float64), np.asarray(data["scale"], dtype=np.float64), layers)
    width = n_features
    for w, b in layers:
        if w.ndim != 2 or w.shape[0] != width or b.shape != (w.shape[1],):
            raise ValueError("layer shapes do not chain")
        width = w.shape[1]
    if net.mean.shape != (n_features,) or net.scale.shape != (n_features,) or width != 1:
        raise ValueError("standardisation or output shape does not match the features")
    return net


def _malformed(exc: Exception) -> ConfigError:
    return ConfigError(f"relevance model file is malformed ({type(exc).__name__}: {exc}): retrain it with "
                       "scripts/train_relevance.py")


def model_from_dict(data: dict[str, Any]) -> RelevanceModel:
    """Build a :class:`RelevanceModel` from its JSON form (as ``scripts/train_relevance.py`` writes it).

    Raises:
        ConfigError: the model was trained on other features than this tokenslim computes, or the file is
            malformed (missing fields, arrays that do not fit together, nodes pointing outside a tree).
    """
    try:
        features = tuple(data["features"])
        second = data.get("second")
        second_features = tuple(second["features"]) if second is not None else None
    except (KeyError, TypeError, AttributeError) as exc:
        raise _malformed(exc) from None
    if features != FEATURES or (second_features is not None and second_features != FEATURES + CONTEXT_FEATURES):
        missing = [f for f in FEATURES if f not in features]
        unknown = [f for f in features if f not in FEATURES]
        diff = "; ".join(
            part
            for part in (
                f"it lacks {', '.join(missing)}" if missing else "",
                f"it reads {', '.join(unknown)}, which this tokenslim does not compute" if unknown else "",
            )
            if part
        ) or "same features in another order, or a second pass on other context features"
        raise ConfigError(
            f"relevance model was trained on {len(features)} features, this tokenslim computes {len(FEATURES)} ({diff}): "
            "retrain it with scripts/train_relevance.py"
        )
    try:
        table = tuple((float(r), float(t)) for r, t in data["recall_table"])
        first = _predictor(data)
        later = _predictor(second) if second else None
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise _malformed(exc) from None
    return RelevanceModel(features, first, later, table, dict(data.get("meta", {})))


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
