"""Held-out check of the learned relevance model: MuSiQue by two folds, and the shared HotpotQA / 2Wiki samples.

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

``--shared`` instead judges ``../shared/data``'s HotpotQA (300) and 2WikiMultihopQA (100) samples,
which the shipped model trains on (so ``bench_compression.py``'s figures on them are in-sample): each
sample by a model trained the same way without it (``train_relevance.py --exclude hotpotqa`` /
``--exclude twowiki``; the HotpotQA and 2Wiki train files stay in), in every input format of
``tokenslim.bench.datasets.FORMATS`` (title in metadata, in the text, none, ``document_title``, raw HTML) and
open retrieval (BM25 top-20 over both samples' pooled paragraphs, as in ``bench_compression.py``).
Writes ``results/relevance_heldout_shared.json``.
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
    return judge(model, _examples(rows, setting), recall)


def judge(model: Path, examples: list[D.Example], recall: float) -> dict[str, Any]:
    """``default_pipeline()`` with ``model`` at ``recall`` over the examples: tokens, answer kept per question, p50."""
    pipe = default_pipeline()
    pipe.set_params(compress_documents__model=str(model), compress_documents__recall=recall)
    kept: list[float | None] = []
    before = after = 0
    times = []
    for ex in examples:
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


def _row(setting: str, recall: float, parts: list[dict[str, Any]]) -> dict[str, Any]:
    kept = [k for p in parts for k in p["kept"]]
    ci = wilson_ci(kept)
    row = {
        "setting": setting,
        "recall": recall,
        "ratio": sum(p["before"] for p in parts) / max(1, sum(p["after"] for p in parts)),
        "quality": ci.as_dict(),
        "kept": int(sum(k for k in kept if k is not None)),
        "p50_ms": max(p["p50_ms"] for p in parts),
    }
    print(f"{setting:<24} recall {recall:<5g} ratio {row['ratio']:.2f}x  answer kept {ci.mean:.1%} [{ci.low:.1%}, {ci.high:.1%}] "
          f"({row['kept']}/{ci.n})  p50 {row['p50_ms']:.1f} ms", flush=True)
    return row


def _train(out: Path, args: argparse.Namespace, extra: list[str]) -> None:
    """``scripts/train_relevance.py`` with the shipped model's sources and settings, plus ``extra``."""
    cmd = [sys.executable, str(ROOT / "scripts" / "train_relevance.py"), "--shared", "--nq", str(args.nq), "--folds", "3", "--out", str(out), *extra]
    for f in args.twowiki:
        cmd += ["--twowiki", str(f)]
    for f in args.hotpot:
        cmd += ["--hotpot", str(f)]
    print("training:", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


SHARED = {"hotpotqa": ("HotpotQA", D.hotpotqa, D.hotpotqa_open), "twowiki": ("2WikiMultihopQA", D.twowiki, D.twowiki_open)}


def shared_heldout(args: argparse.Namespace, recalls: list[float]) -> dict[str, Any]:
    """Each shared sample judged by a model trained without it (see the module docstring)."""
    tmp = Path(tempfile.mkdtemp())
    models = dict(zip(SHARED, args.models)) if args.models else {}
    table: dict[str, Any] = {}
    for name, (label, load, load_open) in SHARED.items():
        if name not in models:
            models[name] = tmp / f"model_without_{name}.json"
            _train(models[name], args, ["--musique", str(args.musique), "--exclude", name])
        examples = load()
        settings = {**{fmt: D.as_format(examples, fmt) for fmt in D.FORMATS}, "open": load_open()}
        for setting, exs in settings.items():
            for recall in recalls:
                table[f"{name} {setting} recall={recall:g}"] = _row(f"{label} {setting}", recall, [judge(models[name], exs, recall)])
    return table


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--musique", type=Path, required=True)
    ap.add_argument("--twowiki", type=Path, action="append", default=[])
    ap.add_argument("--hotpot", type=Path, action="append", default=[])
    ap.add_argument("--nq", type=int, default=300, help="NQ questions in training, as for the shipped model (default 300)")
    ap.add_argument("--recall", type=float, action="append", default=[])
    ap.add_argument("--models", type=Path, nargs=2, default=None,
                    help="models already trained without half A / half B (with --shared: without HotpotQA / 2Wiki)")
    ap.add_argument("--shared", action="store_true", help="judge the shared HotpotQA and 2Wiki samples instead (see above)")
    args = ap.parse_args()
    recalls = args.recall or [0.9]
    named = ["--musique", args.musique.name, *[a for f in args.twowiki for a in ("--twowiki", f.name)],
             *[a for f in args.hotpot for a in ("--hotpot", f.name)], "--nq", str(args.nq), *[a for r in recalls for a in ("--recall", f"{r:g}")]]
    # data files by name only (they live wherever the user keeps them); reused models are noted, not named by path
    command = "python benchmarks/bench_relevance_heldout.py " + " ".join(named + (["--shared"] if args.shared else []))
    if args.models:
        command += "  (models reused via --models, trained by this script's own training command)"
    if args.shared:
        note = "each shared sample judged by a model trained without it (the other sources, its dataset's train file included, stay in)"
        shared: dict[str, Any] = {"command": command, "questions": "HotpotQA 300, 2WikiMultihopQA 100", "note": note,
                                  "rows": shared_heldout(args, recalls)}
        (ROOT / "results" / "relevance_heldout_shared.json").write_text(json.dumps(shared, indent=2) + "\n")
        return 0
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
        _train(out, args, ["--musique", str(train_half)])
        models.append(out)
    # models[0] saw half 0 (A) and is judged on half 1 (B); models[1] saw half 1 and is judged on half 0
    table: dict[str, Any] = {}
    for setting in ("metadata_title", "no_title", "open"):
        for recall in recalls:
            parts = [evaluate(models[0], [json.loads(x) for x in halves[1]], setting, recall),
                     evaluate(models[1], [json.loads(x) for x in halves[0]], setting, recall)]
            table[f"{setting} recall={recall:g}"] = _row(setting, recall, parts)
    payload: dict[str, Any] = {"command": command, "questions": len(lines), "note": "each half judged by a model trained without it", "rows": table}
    (ROOT / "results" / "relevance_heldout_musique.json").write_text(json.dumps(payload, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
