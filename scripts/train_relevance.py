"""Fit CompressDocuments' relevance model on public training data (reproducible, seeded).

Every training question becomes a request in several input shapes (title in metadata,
``"Title: text"``, no title at all), the stage's own feature code
(:func:`tokenslim.stages.compress_documents.candidates`) turns each sentence into a row,
and the label says whether the sentence is needed: a supporting fact where the data set
marks sentences (2WikiMultihopQA, MuSiQue), else a sentence of a supporting paragraph that
holds the answer or opens the paragraph (HotpotQA marks paragraphs only).

Sources (each optional; every dataset gets the same total weight):

* ``--shared``: ``../shared/data``'s HotpotQA (300) and 2WikiMultihopQA (100) samples;
* ``--musique FILE``: MuSiQue train questions, either the original JSONL
  (``paragraphs[].is_supporting`` + ``question_decomposition``) or citeprobe's JSON
  (``examples[].sources[].gold_sentence_indices``);
* ``--hotpot FILE`` / ``--twowiki FILE``: HotpotQA / 2WikiMultihopQA TRAIN files in their
  original layout (``context`` + ``supporting_facts``), JSON or JSONL, gzipped or not.

Never pass dev or test questions of HotpotQA, 2WikiMultihopQA or MuSiQue beyond what
``../shared/data`` holds: those are the held-out yardstick.

The model (standardisation + an MLP with one hidden layer, scikit-learn, seed 0) is written
to ``tokenslim/_internal/relevance_model.json`` with a recall table: out-of-fold
probabilities (5 folds grouped by question) give, for each target share of needed
sentences, the threshold that kept it. ``--report`` also prints leave-one-dataset-out
sentence recall and kept share at the default recall, the honest figure for data the
model never saw.

Usage::

    pip install scikit-learn
    python scripts/train_relevance.py --shared [--musique F] [--hotpot F] [--twowiki F] [--report]
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterator

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tokenslim import Chunk  # noqa: E402
from tokenslim._internal.features import FEATURES  # noqa: E402
from tokenslim._internal.scorer import MODEL_PATH, model_from_dict  # noqa: E402
from tokenslim.bench import datasets as D  # noqa: E402
from tokenslim.bench.metrics import contains_answer, span_answers  # noqa: E402
from tokenslim.stages.compress_documents import candidates  # noqa: E402

SHAPES = ("metadata_title", "title_in_text", "no_title")
RECALLS = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.925, 0.95, 0.965, 0.975, 0.985, 0.99, 0.995)


class Question:
    """One training question: its paragraphs as sentences, and which sentences are needed."""

    def __init__(self, qid: str, dataset: str, question: str, answers: list[str], paragraphs: list[dict[str, Any]]):
        self.qid = qid
        self.dataset = dataset
        self.question = question
        self.answers = answers
        # paragraphs: {"title", "sentences": [str], "gold": set[int] | None, "supporting": bool}
        self.paragraphs = paragraphs


def _open(path: Path) -> Iterator[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        yield from f


def _read_any(path: Path) -> list[dict[str, Any]]:
    text = "".join(_open(path))
    stripped = text.lstrip()
    if stripped.startswith("["):
        return list(json.loads(text))
    if stripped.startswith("{") and "\n{" not in stripped[:2000] and '"examples"' in stripped[:2000]:
        return list(json.loads(text)["examples"])
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def shared_questions() -> list[Question]:
    """HotpotQA (paragraph labels) and 2WikiMultihopQA (sentence labels) from ../shared/data."""
    out = []
    from tokenslim._internal.sentences import split_sentences

    for ex in D.hotpotqa():
        support = set(ex.gold.get("supporting", []))
        paras = []
        for c in ex.chunks:
            title = str(c.metadata.get("title", ""))
            paras.append({"title": title, "sentences": split_sentences(c.text), "gold": None, "supporting": title in support})
        out.append(Question(ex.id, "hotpotqa", ex.query, ex.answers, paras))
    for row in D._jsonl_gz(D.data_dir() / "twowikimultihopqa_dev_sample" / "2wiki_dev_first100.jsonl.gz"):
        meta = row["metadata"]
        gold: dict[str, set[int]] = defaultdict(set)
        for t, k in zip(meta["supporting_facts"]["title"], meta["supporting_facts"]["sent_id"]):
            gold[t].add(int(k))
        paras = [
            {"title": t, "sentences": [s.strip() for s in sents], "gold": gold.get(t, set()), "supporting": t in gold}
            for t, sents in zip(meta["context"]["title"], meta["context"]["content"])
        ]
        out.append(Question(row["id"], "twowiki", row["question"], list(row["golden_answers"]), paras))
    return out


def musique_questions(path: Path) -> list[Question]:
    """MuSiQue train: original JSONL (paragraph labels) or citeprobe's JSON (sentence labels)."""
    from tokenslim._internal.sentences import split_sentences

    out = []
    for i, row in enumerate(_read_any(path)):
        if "sources" in row:  # citeprobe
            paras = [
                {
                    "title": s["title"],
                    "sentences": list(s["text"]),
                    "gold": set(s.get("gold_sentence_indices", [])),
                    "supporting": bool(s.get("is_gold")),
                }
                for s in row["sources"]
            ]
            answers = [row["answer"]] + list(row.get("answer_aliases", []))
            out.append(Question(f"mq{row.get('dataset_index', i)}", "musique", row["question"], answers, paras))
        elif "paragraphs" in row:
            if row.get("answerable") is False:
                continue
            paras = [
                {"title": p["title"], "sentences": split_sentences(p["paragraph_text"]), "gold": None, "supporting": bool(p["is_supporting"])}
                for p in row["paragraphs"]
            ]
            answers = [row["answer"]] + list(row.get("answer_aliases", []))
            out.append(Question(str(row.get("id", i)), "musique", row["question"], answers, paras))
    return out


def wiki_questions(path: Path, dataset: str) -> list[Question]:
    """HotpotQA / 2WikiMultihopQA train in the original layout (context [[title, sentences]], supporting_facts)."""
    out = []
    for i, row in enumerate(_read_any(path)):
        ctx = row["context"]
        if isinstance(ctx, dict):  # the datasets-library layout
            pairs = list(zip(ctx["title"], ctx.get("sentences") or ctx.get("content")))
        else:
            pairs = [(t, s) for t, s in ctx]
        sf = row["supporting_facts"]
        facts = list(zip(sf["title"], sf["sent_id"])) if isinstance(sf, dict) else [(t, k) for t, k in sf]
        gold: dict[str, set[int]] = defaultdict(set)
        for t, k in facts:
            gold[t].add(int(k))
        paras = [{"title": t, "sentences": [s.strip() for s in sents if s.strip()], "gold": gold.get(t, set()), "supporting": t in gold} for t, sents in pairs]
        answer = row.get("answer")
        answers = [answer] if isinstance(answer, str) else list(row.get("golden_answers", []))
        out.append(Question(str(row.get("_id", row.get("id", i))), dataset, row["question"], answers, paras))
    return out


def _chunks(q: Question, shape: str) -> tuple[list[Chunk], list[list[tuple[int, int, bool]]]]:
    """The question's paragraphs as chunks in one input shape, and each chunk's gold character spans."""
    chunks = []
    gold_spans = []
    for k, p in enumerate(q.paragraphs):
        sents = [s for s in p["sentences"] if s.strip()]
        body, spans, pos = [], [], 0
        prefix = f"{p['title']}: " if shape == "title_in_text" and p["title"] else ""
        pos = len(prefix)
        for j, s in enumerate(sents):
            if j:
                pos += 1
            spans.append((pos, pos + len(s), _needed(q, p, j, s)))
            body.append(s)
            pos += len(s)
        text = prefix + " ".join(body)
        meta = {"title": p["title"]} if shape == "metadata_title" and p["title"] else {}
        chunks.append(Chunk(text=text or " ", id=f"p{k}", metadata=meta))
        gold_spans.append(spans)
    return chunks, gold_spans


def _needed(q: Question, p: dict[str, Any], j: int, sentence: str) -> bool:
    if not p["supporting"]:
        return False
    if p["gold"] is not None:
        return j in p["gold"]
    # paragraph labels only: the sentence holding the answer, and the one naming the subject
    return j == 0 or contains_answer(sentence, span_answers(q.answers))


def rows(questions: list[Question], shapes: tuple[str, ...] = SHAPES) -> tuple[np.ndarray, np.ndarray, list[str], list[str]]:
    """Feature rows, labels, and per row its question id and dataset."""
    xs, ys, groups, sets = [], [], [], []
    count = lambda t: max(1, len(t) // 4)  # noqa: E731  features do not read token counts; sizes only gate chunks
    for q in questions:
        for shape in shapes:
            chunks, gold = _chunks(q, shape)
            cand = candidates(q.question, chunks, count)
            if not cand.units:
                continue
            for (i, j), row in zip(cand.units, cand.features):
                a, b = cand.spans[i][j]
                label = any(ga < b and a < gb and need for ga, gb, need in gold[i])
                xs.append(row)
                ys.append(1 if label else 0)
                groups.append(q.qid)
                sets.append(q.dataset)
    return np.asarray(xs), np.asarray(ys), groups, sets


def _weights(sets: list[str], y: np.ndarray) -> np.ndarray:
    """Each dataset the same total weight, whatever its size."""
    n = len(sets)
    per: dict[str, int] = defaultdict(int)
    for s in sets:
        per[s] += 1
    k = len(per)
    return np.asarray([n / (k * per[s]) for s in sets])


def fit(x: np.ndarray, y: np.ndarray, w: np.ndarray, seed: int, hidden: int) -> dict[str, Any]:
    from sklearn.neural_network import MLPClassifier

    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    clf = MLPClassifier(hidden_layer_sizes=(hidden,), alpha=1e-3, max_iter=400, random_state=seed, early_stopping=False)
    clf.fit((x - mean) / scale, y, sample_weight=w)
    layers = [[_round(c), _round(b)] for c, b in zip(clf.coefs_, clf.intercepts_)]
    return {"features": list(FEATURES), "mean": _round(mean), "scale": _round(scale), "layers": layers}


def _round(a: np.ndarray) -> Any:
    """8 significant digits: the file stays small, and BLAS rounding noise (1e-16) does not show in it."""
    return np.vectorize(lambda v: float(f"{v:.8g}"))(a).tolist() if a.size else a.tolist()


def recall_table(prob: np.ndarray, y: np.ndarray, w: np.ndarray) -> list[list[float]]:
    """For each target recall, the highest threshold keeping that (weighted) share of the needed sentences."""
    pos = prob[y == 1]
    pw = w[y == 1]
    order = np.argsort(-pos)
    cum = np.cumsum(pw[order]) / pw.sum()
    out = []
    for r in RECALLS:
        k = int(np.searchsorted(cum, r))
        out.append([r, float(f"{pos[order][min(k, len(order) - 1)]:.6g}")])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", action="store_true", help="train on ../shared/data's HotpotQA and 2Wiki samples")
    ap.add_argument("--musique", type=Path, action="append", default=[])
    ap.add_argument("--hotpot", type=Path, action="append", default=[])
    ap.add_argument("--twowiki", type=Path, action="append", default=[])
    ap.add_argument("--limit", type=int, default=None, help="at most this many questions per source (file or shared set)")
    ap.add_argument("--folds", type=int, default=5, help="folds for the out-of-fold recall table")
    ap.add_argument("--hidden", type=int, default=24)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--exclude", action="append", default=[], help="leave this dataset out (hotpotqa, twowiki, musique, ...)")
    ap.add_argument("--report", action="store_true", help="leave-one-dataset-out figures")
    ap.add_argument("--out", type=Path, default=MODEL_PATH)
    args = ap.parse_args()
    random.seed(args.seed)
    np.random.seed(args.seed)
    questions: list[Question] = []
    sources = []
    if args.shared:
        shared = shared_questions()
        questions += [q for q in shared if q.dataset == "hotpotqa"][: args.limit] + [q for q in shared if q.dataset == "twowiki"][: args.limit]
        sources.append("../shared/data hotpotqa_distractor (300) + twowikimultihopqa_dev_sample (100)")
    for f in args.musique:
        qs = musique_questions(f)[: args.limit]
        questions += qs
        sources.append(f"{f.name}: {len(qs)} MuSiQue train questions")
    for f in args.hotpot:
        qs = wiki_questions(f, "hotpot_train")[: args.limit]
        questions += qs
        sources.append(f"{f.name}: {len(qs)} HotpotQA train questions")
    for f in args.twowiki:
        qs = wiki_questions(f, "twowiki_train")[: args.limit]
        questions += qs
        sources.append(f"{f.name}: {len(qs)} 2WikiMultihopQA train questions")
    questions = [q for q in questions if q.dataset not in args.exclude]
    if args.exclude:
        sources.append(f"excluding {', '.join(args.exclude)}")
    if not questions:
        ap.error("no training data: pass --shared and/or train files")
    t0 = time.perf_counter()
    x, y, groups, sets = rows(questions)
    print(f"{len(questions)} questions -> {len(y)} sentence rows ({y.mean():.1%} needed) in {time.perf_counter() - t0:.0f} s", flush=True)
    w = _weights(sets, y)
    from sklearn.model_selection import GroupKFold

    oof = np.zeros(len(y))
    for train, test in GroupKFold(n_splits=args.folds).split(x, y, groups):
        model = model_from_dict({**fit(x[train], y[train], w[train], args.seed, args.hidden), "recall_table": [[0.5, 0.5]]})
        oof[test] = model.predict(x[test])
    table = recall_table(oof, y, w)
    data = fit(x, y, w, args.seed, args.hidden)
    data["recall_table"] = table
    data["meta"] = {"trained_on": sources, "rows": int(len(y)), "questions": len(questions), "hidden": args.hidden, "seed": args.seed}
    args.out.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    print("recall table (out-of-fold):", ", ".join(f"{r:g}->{t:.3f}" for r, t in table))
    print(f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KiB)")
    if args.report:
        ds = sorted(set(sets))
        arr = np.asarray(sets)
        for d in ds:
            held = arr == d
            m = model_from_dict({**fit(x[~held], y[~held], w[~held], args.seed, args.hidden), "recall_table": table})
            p = m.predict(x[held])
            for r in (0.9, 0.95):
                t = m.threshold(r)
                kept = p >= t
                rec = (kept & (y[held] == 1)).sum() / max(1, (y[held] == 1).sum())
                print(f"held out {d}: target recall {r}: needed sentences kept {rec:.1%}, sentences kept {kept.mean():.1%}")


if __name__ == "__main__":
    main()
