"""Fit ReduceStructured's table model on WikiTableQuestions TRAINING questions (seeded, reproducible).

Every question of WTQ's ``data/training.tsv`` whose answer is one cell of its table (a table of
more than ``--min-rows`` body rows, every row as wide as the header), and one lookup per such table
("What is the <column> of <row name>?", drawn as ``benchmarks/data_structured.py`` draws its own from
the test tables), is used twice
(:mod:`tokenslim._internal.structured.learned`):

* **columns**: for each question that does not ask for a count or an amount, one row per column,
  :func:`~tokenslim._internal.structured.learned.column_features`, labelled 1 where a cell of the
  column is the answer;
* **rows**: one row per question the rules leave to the model
  (:func:`~tokenslim._internal.structured.learned.rule_decision`: not a count, not a row named by an
  identifier), :func:`~tokenslim._internal.structured.learned.row_features` over the table's CSV lines and
  :func:`~tokenslim._internal.structured._select.select`'s picks (the stage's defaults,
  ``top_k=5``, ``min_score=0.5``), labelled 1 where no picked row holds the answer.

Each model is gradient-boosted trees (``scripts/train_relevance.py``'s exporter, settings in
``SETTINGS``, seed 0). Out-of-fold probabilities (5 folds) choose each shipped threshold: for
columns, the highest at which the likeliest column plus every column at or above it holds the
answer for ``--column-recall`` of the questions; for rows, the highest at which sending every row
when the model reaches it keeps the answer's row for ``--row-recall`` of the questions. The file
is written to ``tokenslim/_internal/structured/table_model.json``.

WTQ's test questions (``pristine-unseen-tables.tsv``, on tables no training question uses) are
what ``benchmarks/data_structured.py`` draws the benchmark from: never pass them here.

Usage::

    pip install scikit-learn
    python scripts/train_table_model.py --wtq PATH_TO_WikiTableQuestions [--skip 400]

``--skip N`` leaves out the first N qualifying questions (with the default ``--min-rows 20``,
those ``data_structured.py``'s rules would draw from training.tsv), to judge a model on
training questions it did not see.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import random
import sys
from pathlib import Path
from typing import Any, Iterator

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "scripts"))

from data_structured import SEED, Source, _norm, lookup_question  # noqa: E402
from train_relevance import fit_trees  # noqa: E402

from tokenslim._internal.scorer import _predictor  # noqa: E402
from tokenslim._internal.structured._select import Query, select  # noqa: E402
from tokenslim._internal.structured.learned import (  # noqa: E402
    COLUMN_FEATURES,
    MODEL_PATH,
    ROW_FEATURES,
    column_features,
    row_features,
    rule_decision,
)

SETTINGS = {
    "columns": {"max_iter": 200, "learning_rate": 0.05, "max_depth": 5, "min_samples_leaf": 20},
    "rows": {"max_iter": 150, "learning_rate": 0.05, "max_depth": 4, "min_samples_leaf": 20},
}


def questions(src: Source, min_rows: int, skip: int) -> Iterator[tuple[str, list[str], list[list[str]], str]]:
    """(question, header, body rows, answer) of each qualifying training question after the first ``skip``,
    and after the first question on each table, a lookup on it (:func:`data_structured.lookup_question`,
    seeded): WTQ's training questions are mostly comparisons ("which ... the most"), and a model that never
    saw "What is the population of City137?" sends every row for it."""
    rows_of: dict[str, list[list[str]] | None] = {}
    rng = random.Random(SEED)
    looked_up: set[str] = set()
    seen = 0
    for _qid, utt, ctx, target in list(csv.reader(io.StringIO(src.read("data/training.tsv")), delimiter="\t"))[1:]:
        if ctx not in rows_of:
            try:
                rows = list(csv.reader(io.StringIO(src.read(ctx))))
            except Exception:  # noqa: BLE001 - a table missing from the checkout is passed over
                rows = []
            ok = len(rows) > min_rows and len({len(r) for r in rows}) == 1 and len(rows[0]) >= 2
            rows_of[ctx] = rows if ok else None
        rows = rows_of[ctx]
        if rows is None or "|" in target or not any(_norm(c) == _norm(target) for r in rows[1:] for c in r):
            continue  # a count, a sum, a comparison: no cell holds it
        seen += 1
        if seen <= skip:
            looked_up.add(ctx)  # its lookup belongs to the questions left out
            continue
        yield utt, rows[0], rows[1:], target
        if ctx not in looked_up:
            looked_up.add(ctx)
            lookup = lookup_question(rows, rng)
            if lookup is not None:
                yield lookup[0], rows[0], rows[1:], lookup[1]


def _oof(x: np.ndarray, y: np.ndarray, groups: np.ndarray, names: tuple[str, ...], settings: dict[str, Any]) -> np.ndarray:
    from sklearn.model_selection import GroupKFold

    out = np.zeros(len(y))
    w = np.ones(len(y))
    for a, b in GroupKFold(n_splits=5).split(x, y, groups):
        out[b] = _predictor(fit_trees(x[a], y[a], w[a], 0, names, settings))(x[b])
    return out


def column_kept(p: np.ndarray, y: np.ndarray, groups: np.ndarray, threshold: float) -> tuple[float, float]:
    """Share of questions whose answer column is the likeliest or at/above ``threshold``; share of columns kept."""
    hit = cols = 0
    qs = np.unique(groups)
    for g in qs:
        s = groups == g
        keep = p[s] >= threshold
        keep[int(p[s].argmax())] = True
        hit += bool(y[s][keep].any())
        cols += int(keep.sum())
    return hit / len(qs), cols / len(groups)


def row_kept(p: np.ndarray, y: np.ndarray, picked: np.ndarray, threshold: float) -> tuple[float, float]:
    """Share of questions whose answer row is kept (every row when ``p >= threshold``, else the picked ones); share of rows kept."""
    every = p >= threshold
    return float(np.where(every, 1.0, 1.0 - y).mean()), float(np.where(every, 1.0, picked).mean())


def highest(grid: np.ndarray, ok: Any) -> float:
    """The highest threshold of ``grid`` for which ``ok(threshold)`` holds (0.0 if none does)."""
    for t in sorted({round(float(v), 4) for v in grid}, reverse=True):
        if ok(t):
            return t
    return 0.0


def main() -> None:
    # one thread: the trees' histogram sums then run in one order, so the same data gives the same file
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        _main()


def _main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wtq", required=True, help="a WikiTableQuestions checkout (or its git directory)")
    ap.add_argument("--min-rows", type=int, default=20, help="tables of more body rows than this (default 20, as the benchmark)")
    ap.add_argument("--skip", type=int, default=0, help="leave out the first N qualifying questions")
    ap.add_argument("--column-recall", type=float, default=0.95)
    ap.add_argument("--row-recall", type=float, default=0.97)
    ap.add_argument("--out", type=Path, default=MODEL_PATH)
    args = ap.parse_args()
    cx, cy, cg = [], [], []
    rx, ry, picked = [], [], []
    n = 0
    for k, (q, header, body, target) in enumerate(questions(Source(args.wtq), args.min_rows, args.skip)):
        query = Query.of(q)
        t = _norm(target)
        n += 1
        if not query.asks_number():  # a count's answer is computed: the column holding it is chance
            cx.append(column_features(query, header, body))
            cy.append(np.asarray([any(_norm(r[j]) == t for r in body) for j in range(len(header))], dtype=float))
            cg.append(np.full(len(header), k))
        units = [",".join(r) for r in body]
        sel = select(query, units, top_k=5, min_score=0.5)
        if rule_decision(query, units, sel) is not None:
            continue  # decided without the model (a count, nothing picked, a unit named by an identifier)
        rx.append(row_features(query, units, sel, body))
        ry.append(0.0 if any(any(_norm(c) == t for c in body[i]) for i in sel.keep) else 1.0)
        picked.append(len(sel.keep) / len(body))
    x, y, groups = np.vstack(cx), np.concatenate(cy), np.concatenate(cg)
    xr, yr, pr = np.vstack(rx), np.asarray(ry), np.asarray(picked)
    print(f"{n} questions: {len(y)} column rows ({y.mean():.1%} hold the answer); {len(yr)} row decisions "
          f"(the picked rows miss the answer for {yr.mean():.1%})", flush=True)
    oof_c = _oof(x, y, groups, COLUMN_FEATURES, SETTINGS["columns"])
    t_col = highest(oof_c, lambda t: column_kept(oof_c, y, groups, t)[0] >= args.column_recall)
    c_share, c_cols = column_kept(oof_c, y, groups, t_col)
    top1 = column_kept(oof_c, y, groups, 2.0)[0]
    print(f"columns, out of fold: the likeliest holds the answer {top1:.1%}; threshold {t_col:.4f} keeps it for "
          f"{c_share:.1%} of questions with {c_cols:.1%} of the columns", flush=True)
    oof_r = _oof(xr, yr, np.arange(len(yr)), ROW_FEATURES, SETTINGS["rows"])
    t_row = highest(oof_r, lambda t: row_kept(oof_r, yr, pr, t)[0] >= args.row_recall)
    r_share, r_rows = row_kept(oof_r, yr, pr, t_row)
    print(f"rows, out of fold: threshold {t_row:.4f} keeps the answer's row for {r_share:.1%} of questions with "
          f"{r_rows:.1%} of the rows (the picked rows alone: {1 - yr.mean():.1%})", flush=True)
    payload = {
        "columns": {"threshold": t_col, "model": fit_trees(x, y, np.ones(len(y)), 0, COLUMN_FEATURES, SETTINGS["columns"])},
        "rows": {"threshold": t_row, "model": fit_trees(xr, yr, np.ones(len(yr)), 0, ROW_FEATURES, SETTINGS["rows"])},
        "meta": {
            "trained_on": f"WikiTableQuestions data/training.tsv: {n} questions whose answer is a cell, tables of more than "
            f"{args.min_rows} rows, the first {args.skip} left out",
            "out_of_fold": {
                "columns": {"top1": round(top1, 4), "kept": round(c_share, 4), "share_kept": round(c_cols, 4), "target": args.column_recall},
                "rows": {"kept": round(r_share, 4), "share_kept": round(r_rows, 4), "target": args.row_recall},
            },
        },
    }
    args.out.write_text(json.dumps(payload, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {args.out} ({args.out.stat().st_size // 1024} KiB)")


if __name__ == "__main__":
    main()
