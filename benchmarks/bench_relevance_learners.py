"""Which learner for the relevance model: out-of-fold comparison on the training rows.

The evidence behind the shipped model's form (gradient-boosted trees over every feature,
one pass). Every candidate is fitted on the same rows that ``scripts/train_relevance.py``
builds (same sources, same shapes, each dataset the same total weight) and scored out of fold
(3 folds grouped by question, so no question is judged by a model that saw it):

* ``trees``: the shipped learner (``train_relevance.TREES``) over every feature;
* ``trees, no word vectors``: the same without ``sent_soft``, ``sent_soft_norm``, ``chunk_soft``;
* ``trees, two passes``: a second tree model over the first's out-of-fold probabilities in context;
* ``mlp``: the one-hidden-layer MLP (24 units) over every feature;
* ``mean(trees, mlp)``: the average of the two probabilities.

Per dataset: average precision, and the share of sentences kept at the threshold that keeps 90%
(95%) of that dataset's needed sentences (lower is better: fewer tokens for the same recall).
Rows are sentences, not answers: ``bench_relevance_heldout.py`` measures answers kept.

Usage (about 10 minutes on 2 cores)::

    python benchmarks/bench_relevance_learners.py --musique MUSIQUE_TRAIN.jsonl \\
        --hotpot HOTPOT_TRAIN.jsonl --twowiki 2WIKI_TRAIN.jsonl --nq 300

Writes ``results/relevance_learners.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import train_relevance as T  # noqa: E402

from tokenslim._internal.features import CONTEXT_FEATURES, FEATURES  # noqa: E402

SOFT = ("sent_soft", "sent_soft_norm", "chunk_soft")
DATASETS = ("hotpotqa", "twowiki", "nq", "musique", "hotpot_train", "twowiki_train")


def _summary(p: np.ndarray, y: np.ndarray, sets: np.ndarray) -> dict[str, dict[str, float]]:
    from sklearn.metrics import average_precision_score

    out = {}
    for d in DATASETS:
        m = sets == d
        if not m.any() or not y[m].any():
            continue
        pos = np.sort(p[m][y[m] == 1])[::-1]
        kept = {f"kept_at_{r:g}": float(np.mean(p[m] >= pos[int(r * (len(pos) - 1))])) for r in (0.9, 0.95)}
        out[d] = {"ap": float(average_precision_score(y[m], p[m])), **kept}
    return out


def _cell(v: dict[str, float] | None) -> str:
    if v is None:
        return f"{'-':>26}"
    return f"{v['ap']:>10.3f}{100 * v['kept_at_0.9']:>7.1f}%{100 * v['kept_at_0.95']:>8.1f}%"


def main() -> int:
    T.fixed_hash_seed()  # the rows must be train_relevance.py's, to the last digit
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--musique", type=Path, required=True)
    ap.add_argument("--hotpot", type=Path, required=True)
    ap.add_argument("--twowiki", type=Path, required=True)
    ap.add_argument("--nq", type=int, default=300)
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "relevance_learners.json")
    args = ap.parse_args()
    from sklearn.model_selection import GroupKFold
    from threadpoolctl import threadpool_limits

    questions = T.shared_questions() + T.nq_questions(args.nq) + T.musique_questions(args.musique)
    questions += T.wiki_questions(args.hotpot, "hotpot_train") + T.wiki_questions(args.twowiki, "twowiki_train")
    t0 = time.perf_counter()
    x, y, groups, sets_list, layouts = T.rows(questions)
    print(f"{len(questions)} questions -> {len(y)} rows in {time.perf_counter() - t0:.0f} s", flush=True)
    sets = np.asarray(sets_list)
    w = T._weights(sets_list, y)
    folds = list(GroupKFold(n_splits=3).split(x, y, groups))
    no_soft = [k for k, f in enumerate(FEATURES) if f not in SOFT]

    def oof(fit: Callable[[np.ndarray, np.ndarray, np.ndarray], Callable[[np.ndarray], np.ndarray]], xx: np.ndarray) -> np.ndarray:
        out = np.zeros(len(y))
        for train, test in folds:
            out[test] = fit(xx[train], y[train], w[train])(xx[test])
        return out

    def trees(names: tuple[str, ...]) -> Callable[..., Callable[[np.ndarray], np.ndarray]]:
        return lambda xx, yy, ww: T._predictor(T.fit_trees(xx, yy, ww, 0, names))

    def mlp(xx: np.ndarray, yy: np.ndarray, ww: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        return T._predictor(T.fit(xx, yy, ww, 0, 24))

    results: dict[str, Any] = {}
    with threadpool_limits(limits=1):
        p_trees = oof(trees(FEATURES), x)
        results["trees"] = _summary(p_trees, y, sets)
        names = tuple(FEATURES[k] for k in no_soft)
        results["trees, no word vectors"] = _summary(oof(trees(names), x[:, no_soft]), y, sets)
        x2 = T.with_context(x, p_trees, layouts)
        results["trees, two passes"] = _summary(oof(trees(FEATURES + CONTEXT_FEATURES), x2), y, sets)
        p_mlp = oof(mlp, x)
        results["mlp"] = _summary(p_mlp, y, sets)
        results["mean(trees, mlp)"] = _summary((p_trees + p_mlp) / 2, y, sets)
    print(f"{'learner':<24}" + "".join(f"{d:>26}" for d in DATASETS))
    print(f"{'':<24}" + "".join(f"{'AP  kept@.9  kept@.95':>26}" for _ in DATASETS))
    for name, per in results.items():
        cells = "".join(_cell(per.get(d)) for d in DATASETS)
        print(f"{name:<24}{cells}")
    payload = {
        "command": "python benchmarks/bench_relevance_learners.py --musique " + args.musique.name + " --hotpot "
        + args.hotpot.name + " --twowiki " + args.twowiki.name + f" --nq {args.nq}",
        "rows": int(len(y)),
        "questions": len(questions),
        "folds": 3,
        "note": "out of fold, grouped by question; kept_at_R = share of a dataset's sentences at the threshold that keeps R of its needed ones",
        "learners": results,
    }
    args.out.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
