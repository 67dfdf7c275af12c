"""Fit CompressDocuments' relevance model on public training data (reproducible, seeded).

Every training question becomes a request in several input shapes (title in metadata,
``"Title: text"``, no title at all, BM25 top-20 open retrieval over its dataset's pooled
paragraphs, and all its paragraphs as one long document), the stage's own feature code
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

The model (gradient-boosted trees, scikit-learn's HistGradientBoostingClassifier with the
settings in ``TREES``, seed 0; ``--learner mlp`` fits a one-hidden-layer MLP instead) is
written to ``tokenslim/_internal/relevance_model.json`` with a recall table: out-of-fold
probabilities (5 folds grouped by question) give, for each target share of needed
sentences, the threshold that kept it. ``--passes 2`` adds a second model that reads the
features plus the first's probabilities in context (the best probability in the sentence's
chunk, its neighbours', the chunks it names), fitted on out-of-fold first-pass
probabilities; on this data it did not help the trees, so the shipped model has one pass.
The features include word-vector matches (``scripts/build_word_vectors.py`` builds them).
``--exclude DATASET`` leaves a dataset out, to measure on data the model never saw.

Usage::

    pip install scikit-learn
    python scripts/train_relevance.py --shared [--musique F] [--hotpot F] [--twowiki F] [--exclude D]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
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
from tokenslim._internal.features import CONTEXT_FEATURES, FEATURES, context_features  # noqa: E402
from tokenslim._internal.scorer import MODEL_PATH, _predictor  # noqa: E402
from tokenslim.bench import datasets as D  # noqa: E402
from tokenslim.bench.metrics import contains_answer, span_answers  # noqa: E402
from tokenslim.stages.compress_documents import candidates  # noqa: E402

SHAPES = ("metadata_title", "title_in_text", "no_title", "open", "one_document")
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


def nq_questions(limit: int | None) -> list[Question]:
    """NQ-open from ../shared/data: one gold passage per question; the needed sentences hold an answer."""
    from tokenslim._internal.sentences import split_sentences

    out = []
    for ex in D.nq(limit):
        golds = span_answers(ex.answers)
        c = ex.chunks[0]
        sents = split_sentences(c.text)
        gold = {j for j, x in enumerate(sents) if contains_answer(x, golds)}
        if not gold:
            continue
        paras = [{"title": str(c.metadata.get("title", "")), "sentences": sents, "gold": gold, "supporting": True}]
        out.append(Question(ex.id, "nq", ex.query, ex.answers, paras))
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
            # paragraph labels: the needed sentences of a supporting paragraph are those holding the answer
            # of the hop it supports (question_decomposition), and its first (it names the subject)
            hop_answers: dict[int, list[str]] = defaultdict(list)
            for step in row.get("question_decomposition", []):
                hop_answers[int(step["paragraph_support_idx"])].append(step["answer"])
            answers = [row["answer"]] + list(row.get("answer_aliases", []))
            paras = []
            for k, p in enumerate(row["paragraphs"]):
                sents = split_sentences(p["paragraph_text"])
                golds = span_answers(hop_answers.get(int(p.get("idx", k)), []) + answers)
                gold = {j for j, x in enumerate(sents) if j == 0 or contains_answer(x, golds)} if p["is_supporting"] else set()
                paras.append({"title": p["title"], "sentences": sents, "gold": gold, "supporting": bool(p["is_supporting"])})
            out.append(Question(str(row.get("id", i)), "musique", row["question"], answers, paras))
    return out


def wiki_questions(path: Path, dataset: str) -> list[Question]:
    """HotpotQA / 2WikiMultihopQA train in the original layout (context [[title, sentences]], supporting_facts)."""
    out = []
    for i, row in enumerate(_read_any(path)):
        ctx = row.get("context") or [[p["title"], p["sentences"]] for p in row["paragraphs"]]
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


def prograph_twowiki(questions_path: Path, docs_path: Path, out: Path) -> None:
    """Rebuild per-question candidate paragraphs for a 2WikiMultihopQA train file stored as questions plus
    one deduplicated paragraph pool in question order (hanzhizhz/prograph's ``train_data.json`` +
    ``full_docs.json``): each question gets the pool's block from its first new gold paragraph (up to 12,
    topped up to 6 non-supporting) plus every gold paragraph; labels are the exact supporting facts.
    Writes JSONL in the layout :func:`wiki_questions` reads."""
    qs = json.loads(questions_path.read_text(encoding="utf-8"))
    docs = json.loads(docs_path.read_text(encoding="utf-8"))
    pos = {d["title"]: i for i, d in enumerate(docs)}
    starts, prev = [], -1
    for ex in qs:
        later = sorted(p for p in (pos[t] for t, _ in ex["supporting_facts"]) if p > prev)
        prev = later[0] if later else prev + 1
        starts.append(prev)
    starts.append(len(docs))
    with out.open("w", encoding="utf-8") as f:
        for n, ex in enumerate(qs):
            gold = {t for t, _ in ex["supporting_facts"]}
            idx = list(range(starts[n], min(starts[n + 1], starts[n] + 12)))
            nxt = starts[n + 1]
            while sum(docs[k]["title"] not in gold for k in idx) < 6 and nxt < len(docs):
                idx.append(nxt)
                nxt += 1
            idx = sorted(set(idx) | {pos[t] for t in gold})
            paras = [{"title": docs[k]["title"], "sentences": docs[k]["content"]} for k in idx]
            row = {"id": ex["id"], "question": ex["question"], "answer": ex["answer"], "supporting_facts": ex["supporting_facts"], "paragraphs": paras}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def _one_document(q: Question) -> tuple[list[Chunk], list[list[tuple[int, int, bool]]]]:
    """All the question's paragraphs as ONE chunk (a long document: one line a paragraph), and its gold spans."""
    spans: list[tuple[int, int, bool]] = []
    lines, pos = [], 0
    for p in q.paragraphs:
        sents = [s for s in p["sentences"] if s.strip()]
        if not sents:
            continue
        if lines:
            pos += 1  # the newline
        for j, x in enumerate(sents):
            if j:
                pos += 1
            spans.append((pos, pos + len(x), _needed(q, p, j, x)))
            pos += len(x)
        lines.append(" ".join(sents))
    return [Chunk(text="\n".join(lines) or " ", id="doc")], [spans]


def _chunks(q: Question, shape: str) -> tuple[list[Chunk], list[list[tuple[int, int, bool]]]]:
    """The question's paragraphs as chunks in one input shape, and each chunk's gold character spans."""
    if shape == "one_document":
        return _one_document(q)
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
    if not p.get("supporting"):
        return False
    if p["gold"] is not None:
        return j in p["gold"]
    # paragraph labels only: the sentence holding the answer, and the one naming the subject
    return j == 0 or contains_answer(sentence, span_answers(q.answers))


def open_retrieval(questions: list[Question], k: int = 20) -> dict[str, tuple[list[Chunk], list[list[tuple[int, int, bool]]]]]:
    """Each question's BM25 top-``k`` over the pooled paragraphs of every question of its dataset, as a
    retriever would return them (scores in ``Chunk.score``, titles in metadata); needed sentences are
    those of the question's own supporting paragraphs that made the top ``k``."""
    from rank_bm25 import BM25Okapi

    from tokenslim._internal.relevance import terms

    out: dict[str, tuple[list[Chunk], list[list[tuple[int, int, bool]]]]] = {}
    by_set: dict[str, list[Question]] = defaultdict(list)
    for q in questions:
        by_set[q.dataset].append(q)
    for qs in by_set.values():
        pool: dict[tuple[str, str], int] = {}
        paras: list[tuple[str, list[str]]] = []
        for q in qs:
            for p in q.paragraphs:
                key = (p["title"], " ".join(p["sentences"]))
                if key not in pool and key[1].strip():
                    pool[key] = len(paras)
                    paras.append((p["title"], [x for x in p["sentences"] if x.strip()]))
        bm = BM25Okapi([terms(t + " " + " ".join(x)) or [""] for t, x in paras])
        for q in qs:
            scores = bm.get_scores(terms(q.question))
            best = sorted(range(len(paras)), key=lambda i: (-scores[i], i))[:k]
            own = {(p["title"], " ".join(p["sentences"])): p for p in q.paragraphs}
            chunks, gold = [], []
            for i in best:
                title, sents = paras[i]
                p = own.get((title, " ".join(sents)))
                spans, pos = [], 0
                for j, x in enumerate(sents):
                    pos += 1 if j else 0
                    spans.append((pos, pos + len(x), bool(p) and _needed(q, p, j, x)))
                    pos += len(x)
                chunks.append(Chunk(text=" ".join(sents), id=f"w{i}", score=float(scores[i]), metadata={"title": title}))
                gold.append(spans)
            out[q.qid] = (chunks, gold)
    return out


Layout = tuple[int, int, list[int], list[int], list[str], list[str]]


def rows(questions: list[Question], shapes: tuple[str, ...] = SHAPES) -> tuple[np.ndarray, np.ndarray, list[str], list[str], list[Layout]]:
    """Feature rows, labels, per row its question id and dataset, and per request its rows' range and
    layout (what the model's second pass reads: :meth:`Candidates.layout`)."""
    xs, ys, groups, sets = [], [], [], []
    layouts: list[Layout] = []
    count = lambda t: max(1, len(t) // 4)  # noqa: E731  features do not read token counts; sizes only gate chunks
    retrieved = open_retrieval(questions) if "open" in shapes else {}
    for q in questions:
        for shape in shapes:
            chunks, gold = retrieved[q.qid] if shape == "open" else _chunks(q, shape)
            cand = candidates(q.question, chunks, count)
            if not cand.units:
                continue
            layouts.append((len(ys), len(ys) + len(cand.units), *cand.layout()))
            for (i, j), row in zip(cand.units, cand.features):
                a, b = cand.spans[i][j]
                label = any(ga < b and a < gb and need for ga, gb, need in gold[i])
                xs.append(row)
                ys.append(1 if label else 0)
                groups.append(q.qid)
                sets.append(q.dataset)
    return np.asarray(xs), np.asarray(ys), groups, sets, layouts


def with_context(x: np.ndarray, p: np.ndarray, layouts: list[Layout]) -> np.ndarray:
    """The second pass's input: the features plus :func:`context_features` of first-pass probabilities ``p``."""
    ctx = np.zeros((len(x), len(CONTEXT_FEATURES)))
    for a, b, owners, positions, sentences, titles in layouts:
        ctx[a:b] = context_features([float(v) for v in p[a:b]], owners, positions, sentences, titles)
    return np.hstack([x, ctx])


def _weights(sets: list[str], y: np.ndarray) -> np.ndarray:
    """Each dataset the same total weight, whatever its size."""
    n = len(sets)
    per: dict[str, int] = defaultdict(int)
    for s in sets:
        per[s] += 1
    k = len(per)
    return np.asarray([n / (k * per[s]) for s in sets])


def fit(x: np.ndarray, y: np.ndarray, w: np.ndarray, seed: int, hidden: int, names: tuple[str, ...] = FEATURES) -> dict[str, Any]:
    from sklearn.neural_network import MLPClassifier

    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    clf = MLPClassifier(hidden_layer_sizes=(hidden,), alpha=1e-3, max_iter=400, random_state=seed, early_stopping=False)
    clf.fit((x - mean) / scale, y, sample_weight=w)
    layers = [[_round(c), _round(b)] for c, b in zip(clf.coefs_, clf.intercepts_)]
    return {"features": list(names), "mean": _round(mean), "scale": _round(scale), "layers": layers}


TREES = {"max_iter": 150, "learning_rate": 0.1, "max_depth": 6, "min_samples_leaf": 100}
"""Gradient-boosting settings, chosen by out-of-fold average precision and sentences kept at recall
0.9 per dataset (a larger minimum leaf generalised better than deeper, finer trees)."""


def fit_trees(
    x: np.ndarray, y: np.ndarray, w: np.ndarray, seed: int, names: tuple[str, ...] = FEATURES, settings: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Gradient-boosted trees (scikit-learn; ``settings``, default :data:`TREES`), exported as flat arrays that
    numpy walks (:class:`Trees`)."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    settings = settings or TREES
    clf = HistGradientBoostingClassifier(random_state=seed, early_stopping=False, **settings)
    clf.fit(x, y, sample_weight=w)
    # scikit-learn's own (private) tree arrays: one tree per iteration for a binary target. A test checks the export
    # against predict_proba, so a scikit-learn release that changes them fails there, not in a shipped model.
    trees = [t[0].nodes for t in clf._predictors]
    width = max(len(t) for t in trees)
    out: dict[str, list[list[Any]]] = {k: [] for k in ("feature", "threshold", "left", "right", "value")}
    for t in trees:
        idx = np.arange(width)
        leaf = np.ones(width, dtype=bool)  # padding nodes are leaves of value 0 that nothing reaches
        leaf[: len(t)] = t["is_leaf"].astype(bool)
        pad = lambda a, fill: np.concatenate([a, np.full(width - len(a), fill)])  # noqa: E731
        out["feature"].append(np.where(leaf, 0, pad(t["feature_idx"], 0)).astype(int).tolist())
        # exact thresholds: a feature value often equals one (0, 1, a share), and rounding would flip its side
        out["threshold"].append([float(v) for v in np.where(leaf, 0.0, pad(t["num_threshold"], 0.0))])
        out["left"].append(np.where(leaf, idx, pad(t["left"], 0)).astype(int).tolist())
        out["right"].append(np.where(leaf, idx, pad(t["right"], 0)).astype(int).tolist())
        out["value"].append([float(f"{v:.8g}") for v in np.where(leaf, pad(t["value"], 0.0), 0.0)])
    return {
        "kind": "trees",
        "features": list(names),
        "baseline": float(np.ravel(clf._baseline_prediction)[0]),
        "depth": int(max(t["depth"].max() for t in trees)),
        "trees": out,
        "settings": settings,
    }


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


def fixed_hash_seed() -> None:
    """Re-run this process with ``PYTHONHASHSEED=0`` unless it has it: feature sums over sets (title words)
    follow set order, which Python's per-process hash seed changes; the last digits of a feature then
    differ, and training amplifies them."""
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable, *sys.argv])


def main() -> None:
    fixed_hash_seed()
    # one BLAS thread: a multi-threaded sum's order varies from run to run, and 400 epochs amplify that noise into
    # different weights; with one thread the same data and seed give the same model
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        _main()


def _main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", action="store_true", help="train on ../shared/data's HotpotQA and 2Wiki samples")
    ap.add_argument("--nq", type=int, default=0, metavar="N", help="also the first N NQ-open questions of ../shared/data (single passages)")
    ap.add_argument("--musique", type=Path, action="append", default=[])
    ap.add_argument("--hotpot", type=Path, action="append", default=[])
    ap.add_argument("--twowiki", type=Path, action="append", default=[])
    ap.add_argument("--prograph-twowiki", nargs=3, type=Path, metavar=("QUESTIONS", "DOCS", "OUT"),
                    help="only convert a pooled 2Wiki train file to JSONL (see prograph_twowiki) and exit")
    ap.add_argument("--limit", type=int, default=None, help="at most this many questions per source (file or shared set)")
    ap.add_argument("--folds", type=int, default=5, help="folds for the out-of-fold recall table")
    ap.add_argument("--learner", choices=("trees", "mlp"), default="trees",
                    help="gradient-boosted trees (the shipped model) or a one-hidden-layer MLP")
    ap.add_argument("--passes", type=int, choices=(1, 2), default=1,
                    help="2: a second model over the first's out-of-fold probabilities in context (context_features)")
    ap.add_argument("--hidden", type=int, default=24, help="the MLP's hidden units")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--exclude", action="append", default=[], help="leave this dataset out (hotpotqa, twowiki, musique, ...)")
    ap.add_argument("--out", type=Path, default=MODEL_PATH)
    args = ap.parse_args()
    if args.prograph_twowiki:
        prograph_twowiki(*args.prograph_twowiki)
        return
    random.seed(args.seed)
    np.random.seed(args.seed)
    questions: list[Question] = []
    sources = []
    if args.shared:
        shared = shared_questions()
        questions += [q for q in shared if q.dataset == "hotpotqa"][: args.limit] + [q for q in shared if q.dataset == "twowiki"][: args.limit]
        sources.append("../shared/data hotpotqa_distractor (300) + twowikimultihopqa_dev_sample (100)")
    if args.nq:
        qs = nq_questions(args.nq)
        questions += qs
        sources.append(f"../shared/data nq_open_oracle: first {args.nq} questions ({len(qs)} with the answer in a sentence)")
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
    x, y, groups, sets, layouts = rows(questions)
    print(f"{len(questions)} questions -> {len(y)} sentence rows ({y.mean():.1%} needed) in {time.perf_counter() - t0:.0f} s", flush=True)
    w = _weights(sets, y)
    from sklearn.model_selection import GroupKFold

    folds = list(GroupKFold(n_splits=args.folds).split(x, y, groups))
    def learn(xx: np.ndarray, yy: np.ndarray, ww: np.ndarray, names: tuple[str, ...]) -> dict[str, Any]:
        if args.learner == "trees":
            return fit_trees(xx, yy, ww, args.seed, names)
        return fit(xx, yy, ww, args.seed, args.hidden, names)

    # out-of-fold probabilities: the recall table (and a second pass) must see numbers like those of unseen questions
    oof1 = np.zeros(len(y))
    for train, test in folds:
        oof1[test] = _predictor(learn(x[train], y[train], w[train], FEATURES))(x[test])
    passes = [("first pass", oof1)]
    data = learn(x, y, w, FEATURES)
    if args.passes == 2:
        x2 = with_context(x, oof1, layouts)
        both = FEATURES + CONTEXT_FEATURES
        oof2 = np.zeros(len(y))
        for train, test in folds:
            oof2[test] = _predictor(learn(x2[train], y[train], w[train], both))(x2[test])
        passes.append(("second pass", oof2))
        data["second"] = learn(x2, y, w, both)
    table = recall_table(passes[-1][1], y, w)
    data["recall_table"] = table
    data["meta"] = {"trained_on": sources, "rows": int(len(y)), "questions": len(questions), "learner": args.learner,
                    "passes": args.passes, "seed": args.seed} | ({"hidden": args.hidden} if args.learner == "mlp" else {})
    args.out.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    for name, oof in passes:
        t = recall_table(oof, y, w)
        kept = {r: float((oof >= th).mean()) for r, th in t}
        print(f"{name} (out-of-fold): sentences kept for recall 0.9 / 0.95: {kept[0.9]:.1%} / {kept[0.95]:.1%}")
    print(f"recall table (out-of-fold, {passes[-1][0]}):", ", ".join(f"{r:g}->{t:.3f}" for r, t in table))
    print(f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KiB)")

if __name__ == "__main__":
    main()
