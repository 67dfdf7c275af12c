"""Held-out check of the learned relevance model on MuSiQue: two folds, each half judged by a model that never saw it.

The shipped model is trained on every MuSiQue train question we have (100, 20 paragraphs each),
so MuSiQue figures measured with it would be in-sample. This script splits that file in two
halves by line order, trains (``scripts/train_relevance.py``, same sources and settings as the
shipped model) one model per half on everything else, and runs ``default_pipeline()`` with
each model on the half it did not see: the 20 given paragraphs (distractor setting, titles in
metadata and no title), and open retrieval (BM25 top-20 over the pooled paragraphs of the
half, scores in ``Chunk.score``). Answer kept = gold answer (or alias) still in the context
among questions whose input has it (SQuAD-normalised, word boundaries), with a Wilson 95%
interval; ratio = tokens before / after (cl100k, whole prompt).

Usage::

    python benchmarks/bench_relevance_heldout.py --musique MUSIQUE_TRAIN.jsonl \\
        --twowiki 2WIKI_TRAIN.jsonl --hotpot HOTPOT_TRAIN.jsonl [--recall 0.9 --recall 0.95] \\
        [--models fold_a.json fold_b.json]   # reuse models trained on each half

Writes ``results/relevance_heldout_musique.json``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tokenslim import Chunk, default_pipeline  # noqa: E402
from tokenslim._internal.relevance import terms  # noqa: E402
from tokenslim.bench import datasets as D  # noqa: E402
from tokenslim.bench.metrics import contains_answer, span_answers, wilson_ci  # noqa: E402


def _examples(rows: list[dict[str, Any]], setting: str) -> list[D.Example]:
    out = []
    for r in rows:
        chunks = [Chunk(p["paragraph_text"], id=f"p{k}", metadata={"title": p["title"]}) for k, p in enumerate(r["paragraphs"])]
        out.append(D.Example(str(r["id"]), r["question"], chunks, [r["answer"], *r.get("answer_aliases", [])]))
    if setting == "no_title":
        return D.as_format(out, "no_title")
    if setting == "open":
        from rank_bm25 import BM25Okapi

        pool: dict[tuple[str, str], int] = {}
        for e in out:
            for c in e.chunks:
                pool.setdefault((str(c.metadata["title"]), c.text), len(pool))
        paras = list(pool)
        bm = BM25Okapi([terms(t + " " + x) or [""] for t, x in paras])
        opened = []
        for e in out:
            scores = bm.get_scores(terms(e.query))
            best = sorted(range(len(paras)), key=lambda i: (-scores[i], i))[:20]
            chunks = [Chunk(paras[i][1], id=f"w{i}", score=float(scores[i]), metadata={"title": paras[i][0]}) for i in best]
            opened.append(D.Example(e.id, e.query, chunks, e.answers))
        return opened
    return out


def evaluate(model: Path, rows: list[dict[str, Any]], setting: str, recall: float) -> dict[str, Any]:
    pipe = default_pipeline()
    pipe.set_params(compress_documents__model=str(model), compress_documents__recall=recall)
    kept: list[float | None] = []
    before = after = 0
    times = []
    for ex in _examples(rows, setting):
        golds = span_answers(ex.answers)
        t0 = time.perf_counter()
        r = pipe.run(ex.query, ex.chunks)
        times.append(time.perf_counter() - t0)
        before += r.tokens_before
        after += r.tokens_after
        full = " ".join(c.text for c in ex.chunks)
        kept.append(float(contains_answer(r.context_text(), golds)) if golds and contains_answer(full, golds) else None)
    times.sort()
    return {"before": before, "after": after, "kept": [k for k in kept], "p50_ms": 1000 * times[len(times) // 2]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--musique", type=Path, required=True)
    ap.add_argument("--twowiki", type=Path, action="append", default=[])
    ap.add_argument("--hotpot", type=Path, action="append", default=[])
    ap.add_argument("--nq", type=int, default=300, help="NQ questions in training, as for the shipped model (default 300)")
    ap.add_argument("--recall", type=float, action="append", default=[])
    ap.add_argument("--models", type=Path, nargs=2, default=None, help="models already trained without half A / half B")
    args = ap.parse_args()
    recalls = args.recall or [0.9]
    lines = [line for line in args.musique.read_text(encoding="utf-8").splitlines() if line.strip()]
    halves = [lines[: len(lines) // 2], lines[len(lines) // 2 :]]
    tmp = Path(tempfile.mkdtemp())
    models = list(args.models) if args.models else []
    for k, half in enumerate(halves):
        if args.models:
            continue
        train_half = tmp / f"musique_train_half{k}.jsonl"
        train_half.write_text("\n".join(half) + "\n", encoding="utf-8")
        out = tmp / f"model_without_half{1 - k}.json"
        cmd = [sys.executable, str(ROOT / "scripts" / "train_relevance.py"), "--shared", "--nq", str(args.nq), "--musique", str(train_half), "--folds", "3", "--out", str(out)]
        for f in args.twowiki:
            cmd += ["--twowiki", str(f)]
        for f in args.hotpot:
            cmd += ["--hotpot", str(f)]
        print("training:", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)
        models.append(out)
    # models[0] saw half 0 (A) and is judged on half 1 (B); models[1] saw half 1 and is judged on half 0
    table: dict[str, Any] = {}
    for setting in ("metadata_title", "no_title", "open"):
        for recall in recalls:
            parts = [evaluate(models[0], [json.loads(x) for x in halves[1]], setting, recall),
                     evaluate(models[1], [json.loads(x) for x in halves[0]], setting, recall)]
            kept = parts[0]["kept"] + parts[1]["kept"]
            ci = wilson_ci(kept)
            row = {
                "setting": setting,
                "recall": recall,
                "ratio": sum(p["before"] for p in parts) / max(1, sum(p["after"] for p in parts)),
                "quality": ci.as_dict(),
                "kept": int(sum(k for k in kept if k is not None)),
                "p50_ms": max(p["p50_ms"] for p in parts),
            }
            table[f"{setting} recall={recall:g}"] = row
            print(f"{setting:<16} recall {recall:<5g} ratio {row['ratio']:.2f}x  answer kept {ci.mean:.1%} [{ci.low:.1%}, {ci.high:.1%}] ({row['kept']}/{ci.n})  p50 {row['p50_ms']:.1f} ms", flush=True)
    # data files by name only (they live wherever the user keeps them); reused models are noted, not named by path
    named = ["--musique", args.musique.name, *[a for f in args.twowiki for a in ("--twowiki", f.name)],
             *[a for f in args.hotpot for a in ("--hotpot", f.name)], "--nq", str(args.nq), *[a for r in recalls for a in ("--recall", f"{r:g}")]]
    command = "python benchmarks/bench_relevance_heldout.py " + " ".join(named)
    if args.models:
        command += "  (fold models reused via --models, trained by this script's own training command)"
    payload = {"command": command, "questions": len(lines), "note": "each half judged by a model trained without it", "rows": table}
    (ROOT / "results" / "relevance_heldout_musique.json").write_text(json.dumps(payload, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
