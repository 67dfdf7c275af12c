"""CompressDocuments: query-aware extractive compression, sentence by sentence, to a global token budget."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

from tokenslim._chunk import Chunk
from tokenslim._internal.embeddings import EmbeddingSource
from tokenslim._internal.features import ANAPHOR as _ANAPHOR
from tokenslim._internal.features import FEATURES, YEAR, sentence_features
from tokenslim._internal.lang import phrases_pattern, words
from tokenslim._internal.relevance import (
    Relevance,
    RelevanceScorer,
    any_relevance_scores,
    bridge_scores,
    chunk_relevance,
    is_relevance,
    names_title,
    relevance_scores,
    terms,
)
from tokenslim._internal.scorer import RelevanceModel, load_model
from tokenslim._internal.sentences import join_spans, split_spans
from tokenslim._internal.structured import STRUCTURED_KEY, hold_structured
from tokenslim._internal.titles import TITLE_KEYS, chunk_title, lead_aliases, lead_subject, lowercase_words, title_end
from tokenslim._result import Result
from tokenslim.stages._base import BaseStage, check, check_str_list

if TYPE_CHECKING:
    import numpy as np

__all__ = ["CompressDocuments", "plan_compression", "candidates", "Candidates", "Plan", "MAX_TITLE_TERMS"]

_RELEVANCE = ("bm25", "embedding", "hybrid")
MAX_TITLE_TERMS = 32
"""Title terms indexed with each sentence for sentence relevance (the first 32); longer
titles are cut so a huge title costs linear, not sentences x title, time and memory."""


@dataclass(frozen=True)
class Plan:
    """Which sentences of each chunk to keep.

    Attributes:
        spans: ``(start, end)`` offsets of each chunk's sentences (atomic units).
        keep: Per chunk, the kept sentence indices in original order, or ``None`` for
            "keep the chunk untouched" (chunks of at most ``min_chunk_tokens``).
        chunk_scores: Per chunk, its relevance in [0, 1] after the multi-hop link step.
        budget: The token budget the plan filled.
        labels: Per chunk, the ``(start, end)`` of the title it opens with (``"Title: ..."``,
            ``"# ..."``, ``f"{title}: {text}"``; not part of ``spans``), or ``None``.
        keep_labels: Per chunk, whether that title is kept: only when the chunk keeps a
            sentence and its kept sentences do not already name the title.
        probs: Per chunk, the model's probability for each candidate sentence (empty for
            chunks kept whole).
    """

    spans: list[list[tuple[int, int]]]
    keep: list[list[int] | None]
    chunk_scores: list[float]
    budget: float
    labels: list[tuple[int, int] | None]
    keep_labels: list[bool]
    probs: list[list[float]]


@dataclass(frozen=True)
class Candidates:
    """A request's sentences as the planner sees them (see :func:`candidates`).

    Attributes:
        spans, labels: As in :class:`Plan`.
        cut: Per chunk, where its title label ends (0 without one).
        sizes: Per chunk, its tokens without the label.
        titles: Per chunk, its title, or the subject its text opens with when it has none.
        units: ``(chunk, sentence)`` of every candidate sentence (chunks kept whole are not candidates).
        texts: Each unit's text; ``scored``: the same without a title label.
        chunk_scores: Per chunk, its relevance after the title-link hop step.
        features: One row per unit (:data:`~tokenslim._internal.features.FEATURES`).
    """

    spans: list[list[tuple[int, int]]]
    labels: list[tuple[int, int] | None]
    cut: list[int]
    sizes: list[int]
    titles: list[str]
    units: list[tuple[int, int]]
    texts: list[str]
    scored: list[str]
    chunk_scores: list[float]
    features: "np.ndarray"

    def layout(self) -> tuple[list[int], list[int], list[str], list[str]]:
        """What the model's second pass reads besides the features: each unit's chunk, position and text, and the titles."""
        return [i for i, _ in self.units], [j for _, j in self.units], self.scored, self.titles


def candidates(
    query: str,
    chunks: Sequence[Chunk],
    count: Callable[[str], int],
    *,
    min_chunk_tokens: int = 0,
    title_weight: float = 1.0,
    hop_weight: float = 1.0,
    relevance: "Relevance | RelevanceScorer" = "bm25",
    title_keys: Sequence[str] | None = None,
    embeddings: EmbeddingSource | None = None,
    titles: Sequence[str] | None = None,
) -> Candidates:
    """Split the chunks into sentences and compute each sentence's features (pure).

    Shared by :func:`plan_compression` and ``scripts/train_relevance.py``, so the model is
    trained on exactly the numbers it is later asked about.
    """
    import numpy as np

    chunk_titles = list(titles) if titles is not None else [chunk_title(c.text, c.metadata, title_keys) for c in chunks]
    # a title the text opens with ("Title: ...", "# ...", f"{title}: {text}") is scored as the title, not as text
    cut = [title_end(c.text, t) for c, t in zip(chunks, chunk_titles)]
    # A label that the text restates right after it ("Arena of Khazan: Arena of Khazan is a 1979 ...") is
    # split off its first sentence: it goes where the kept sentences name the title. Any other label stays
    # part of the first sentence ("Mathematically Alive: A Story of Fandom is ..." may be half a title),
    # and so does one heading on every chunk ("[Excerpt from document]"), which labels none of them.
    shared = len(chunks) > 1 and len(set(chunk_titles)) == 1
    spans: list[list[tuple[int, int]]] = []
    labels: list[tuple[int, int] | None] = []
    for c, k, t in zip(chunks, cut, chunk_titles):
        whole_spans = split_spans(c.text)
        body = _body_spans(whole_spans, c.text, k) if k and not shared else []
        if body and names_title(c.text[body[0][0] : body[0][1]], t):
            spans.append(body)
            labels.append((0, len(c.text[:k].rstrip())))
        else:
            spans.append(whole_spans)
            labels.append(None)
    sizes = [count(c.text[k:] if lab else c.text) for c, k, lab in zip(chunks, cut, labels)]
    # no title anywhere: the subject the text opens with links chunks instead (the second hop)
    subjects = [not t for t in chunk_titles]
    common = lowercase_words([c.text for c in chunks]) if any(subjects) else set()
    if any(subjects):
        chunk_titles = [t or lead_subject(c.text, common=common) for t, c in zip(chunk_titles, chunks)]
    aliases = [lead_aliases(c.text) if s else [] for c, s in zip(chunks, subjects)]
    bodies = [c.text[k:] for c, k in zip(chunks, cut)]
    chunk_rel, direct_rel = chunk_relevance(
        query, bodies, chunk_titles, title_weight, hop_weight, common=common, subjects=subjects, aliases=aliases
    )
    units = [(i, j) for i, sp in enumerate(spans) if sizes[i] > min_chunk_tokens for j in range(len(sp))]
    texts = [chunks[i].text[spans[i][j][0] : spans[i][j][1]] for i, j in units]
    scored = [chunks[i].text[max(spans[i][j][0], cut[i]) : spans[i][j][1]] for i, j in units]
    if not units:
        return Candidates(spans, labels, cut, sizes, chunk_titles, units, texts, scored, chunk_rel, np.zeros((0, len(FEATURES))))
    # one capped term list per chunk, shared by its sentences: a 4,000-word title must not be
    # copied into each of 4,000 sentences (16M terms); real titles are far under the cap
    title_terms = {i: terms(chunk_titles[i])[:MAX_TITLE_TERMS] for i in {i for i, _ in units}}
    sent_rel = any_relevance_scores(query, scored, relevance, extra_terms=[title_terms[i] for i, _ in units], embeddings=embeddings)
    sent_rel = _with_segments(query, chunks, spans, units, sent_rel)
    owners = [i for i, _ in units]
    bridge = bridge_scores(query, scored, owners, chunk_titles, chunk_rel, direct_rel)
    want = _answer_pattern(query)
    features = sentence_features(
        query,
        scored,
        owners,
        [j for _, j in units],
        [len(sp) for sp in spans],
        bodies,
        chunk_titles,
        sent_rel,
        direct_rel,
        chunk_rel,
        bridge,
        [c.score for c in chunks],
        want is _YEAR_OR_DATE,
        want is _NUMBER,
        bool(_WHERE.search(query)),
        bool(_WHO.search(query)),
    )
    return Candidates(spans, labels, cut, sizes, chunk_titles, units, texts, scored, chunk_rel, features)


def plan_compression(
    query: str,
    chunks: Sequence[Chunk],
    count: Callable[[str], int],
    *,
    recall: float,
    ratio: float | None,
    max_tokens: int | None,
    min_tokens: int,
    min_chunk_tokens: int,
    title_weight: float,
    hop_weight: float,
    retriever_weight: float,
    anaphora: bool,
    relevance: "Relevance | RelevanceScorer",
    scorer_weight: float = 1.0,
    title_keys: Sequence[str] | None = None,
    embeddings: EmbeddingSource | None = None,
    titles: Sequence[str] | None = None,
    model: RelevanceModel | None = None,
) -> Plan:
    """Decide which sentences to keep (pure: reads its arguments, changes nothing).

    Each candidate sentence gets the learned model's probability of being needed
    (:mod:`tokenslim._internal.scorer`, from :func:`candidates`' features); with
    ``retriever_weight > 0`` and retriever scores on every chunk, the probability is mixed
    with the chunk's retriever rank, and with a plugged scorer (``relevance=`` an object or import
    path) it is mixed with that scorer's normalised score at ``scorer_weight``. Then:

    * ``ratio=None`` (the default): every sentence whose probability reaches the threshold
      that kept ``recall`` of the needed sentences on held-out training questions is kept,
      best first while ``max_tokens`` allows; below ``min_tokens`` in all, the next best
      sentences are added until that floor. How much a request keeps follows the model's
      confidence, not a fixed share;
    * ``ratio`` set: sentences best first while they fit ``ratio`` of the chunk tokens (at
      least ``min_tokens``, at most ``max_tokens``), as a fixed-ratio compressor.

    A kept sentence that opens with a pronoun brings the sentence before it when that fits
    (``anaphora``). A title label comes with its chunk's first kept sentence unless the
    kept sentences name it.
    """
    cand = candidates(
        query,
        chunks,
        count,
        min_chunk_tokens=min_chunk_tokens,
        title_weight=title_weight,
        hop_weight=hop_weight,
        relevance=relevance,
        title_keys=title_keys,
        embeddings=embeddings,
        titles=titles,
    )
    spans, labels, sizes, units, texts = cand.spans, cand.labels, cand.sizes, cand.units, cand.texts
    keep_labels = [False] * len(chunks)
    total = float(sum(sizes))
    floor = float(min(min_tokens, sum(count(c.text) for c in chunks) if any(labels) else total))
    keep: list[list[int] | None] = [None] * len(chunks)
    used = 0.0
    for i in range(len(spans)):
        if sizes[i] <= min_chunk_tokens:
            used += count(chunks[i].text) if labels[i] else sizes[i]  # kept whole, paid from the budget first
        else:
            keep[i] = []
    if not units:
        return Plan(spans, keep, cand.chunk_scores, max(total * (ratio or 1.0), floor), labels, keep_labels, [[] for _ in chunks])
    prob = [float(p) for p in (model or load_model()).predict(cand.features, *cand.layout())]
    scores = [c.score for c in chunks]
    if retriever_weight > 0 and all(s is not None for s in scores):
        prob = _mix(prob, cand.features, "retriever", retriever_weight)
    if scorer_weight > 0 and not (isinstance(relevance, str) and ":" not in relevance):
        prob = _mix(prob, cand.features, "sent_rel", scorer_weight)
    cost = [count(t) for t in texts]
    index = {u: k for k, u in enumerate(units)}
    order = sorted(range(len(units)), key=lambda k: (-prob[k], k))
    cap = float(max_tokens) if max_tokens is not None else math.inf
    if ratio is not None:
        budget = min(max(total * ratio, floor), cap)
        passes = [(order, budget)]
    else:
        sel = _confident(prob, order, (model or load_model()).threshold(recall), recall)
        passes = [(sel, cap), (order, min(floor, cap))]
    chosen: set[int] = set()
    opened: set[int] = set()  # chunks with a kept sentence
    for candidates_order, budget in passes:
        for k in candidates_order:
            i, j = units[k]
            # a chunk's title label comes with its first kept sentence unless that sentence names it
            label = labels[i] is not None and i not in opened and not names_title(texts[k], cand.titles[i])
            extra = count(chunks[i].text[: labels[i][1]]) if label else 0  # type: ignore[index]
            if k in chosen or used + cost[k] + extra > budget:
                continue
            chosen.add(k)
            opened.add(i)
            used += cost[k] + extra
            keep_labels[i] = keep_labels[i] or label
            prev = index.get((i, j - 1))
            if anaphora and prev is not None and prev not in chosen and _ANAPHOR.match(texts[k]) and used + cost[prev] <= budget:
                chosen.add(prev)
                used += cost[prev]
    if not chosen and max_tokens is None and used == 0:
        # every sentence is longer than the soft budget: keep the best one rather than
        # nothing; an explicit max_tokens (or a Budget stage) is the hard cap
        best = order[0]
        chosen.add(best)
        i = units[best][0]
        keep_labels[i] = labels[i] is not None and not names_title(texts[best], cand.titles[i])
    for k in sorted(chosen):
        i, j = units[k]
        keep[i].append(j)  # type: ignore[union-attr]
        if keep_labels[i] and names_title(texts[k], cand.titles[i]):
            keep_labels[i] = False  # a sentence chosen later names the title after all
    probs: list[list[float]] = [[] for _ in chunks]
    for k, (i, _) in enumerate(units):
        probs[i].append(prob[k])
    budget_used = used if ratio is None else min(max(total * ratio, floor), cap)
    return Plan(spans, keep, cand.chunk_scores, budget_used, labels, keep_labels, probs)


def _mix(prob: list[float], features: "np.ndarray", name: str, weight: float) -> list[float]:
    """``(p + weight * feature) / (1 + weight)`` per sentence: a signal the user trusts mixed into the probability."""
    col = FEATURES.index(name)
    return [(p + weight * float(features[k, col])) / (1.0 + weight) for k, p in enumerate(prob)]


def _confident(prob: Sequence[float], order: Sequence[int], threshold: float, recall: float) -> list[int]:
    """The sentences to keep by the model's word: every one at or above ``threshold``, then the next
    best while the kept ones hold less than ``recall`` of the request's total probability.

    The second rule is the model's own expected recall. Where it is sure, the few needed sentences
    hold nearly all the probability and the threshold decides; where its probabilities are flat
    (it cannot tell), the mass is spread and many more sentences are kept, never fewer.
    """
    total = sum(prob)
    kept: list[int] = []
    mass = 0.0
    for k in order:
        if prob[k] < threshold and mass >= recall * total:
            break
        kept.append(k)
        mass += prob[k]
    return kept


def _body_spans(spans: list[tuple[int, int]], text: str, cut: int) -> list[tuple[int, int]]:
    """``spans`` without the title prefix ``text[:cut]`` (a span inside it goes, one across it starts after it)."""
    if not cut:
        return spans
    out = []
    for a, b in spans:
        if b <= cut:
            continue
        a = max(a, cut)
        while a < b and text[a].isspace():
            a += 1
        out.append((a, b))
    return out


def _with_segments(
    query: str, chunks: Sequence[Chunk], spans: list[list[tuple[int, int]]], units: list[tuple[int, int]], sent_rel: list[float]
) -> list[float]:
    """Sentence relevance averaged with its line's, in chunks of several lines.

    A line is the natural segment of long documents: a speaker turn, a list item, a
    paragraph. A short sentence of a relevant turn ("Yeah, that's the budget.") scores
    little alone; its turn does not. Single-line chunks are left as they are.
    """
    line_of: list[int] = []
    lines: list[str] = []
    index: dict[tuple[int, int], int] = {}
    for i, j in units:
        text = chunks[i].text
        if "\n" not in text.strip():
            line_of.append(-1)
            continue
        a = spans[i][j][0]
        start = text.rfind("\n", 0, a) + 1
        if (i, start) not in index:
            end = text.find("\n", a)
            index[(i, start)] = len(lines)
            lines.append(text[start : len(text) if end < 0 else end])
        line_of.append(index[(i, start)])
    if not lines:
        return sent_rel
    line_rel = relevance_scores(query, lines, "bm25")
    return [r if g < 0 else (r + line_rel[g]) / 2 for r, g in zip(sent_rel, line_of)]


_WHEN = phrases_pattern("date_questions")
_HOW_MANY = phrases_pattern("number_questions")
_WHERE = phrases_pattern("place_questions")
_WHO = phrases_pattern("person_questions")
_YEAR_OR_DATE = YEAR
_NUMBER = re.compile(r"\d|\b(?:" + "|".join(sorted(words("number_words"))) + r")\b", re.I)


def _answer_pattern(query: str) -> "re.Pattern[str] | None":
    """What a sentence answering this question must contain, when the question says (dates, numbers)."""
    if _WHEN.search(query):
        return _YEAR_OR_DATE
    if _HOW_MANY.search(query):
        return _NUMBER
    return None


class CompressDocuments(BaseStage):
    """Keep only the sentences that matter for the query: a learned relevance model decides per request.

    Extractive and verbatim: every kept sentence is an exact substring of its chunk,
    in the original order; numbers, code blocks, JSON, tables and quoted strings are
    atomic units that are kept or dropped whole (see :mod:`tokenslim._internal.sentences`).

    Each sentence gets the probability that it is needed to answer the query, from a small
    model shipped with the package (gradient-boosted trees over 40 features: BM25 of the
    sentence and its chunk, the query's words matched by word vectors ("spouse" finds
    "married"), the chunk's title named by the query, a multi-hop chain that follows the rare
    words of the chunks reached so far, the sentence naming another chain chunk's title,
    pairs of chunks that cover the query together and share a name, position, the kind of
    value asked for (a date, a number, a place, a person) and the names the sentence adds,
    the retriever's rank; see
    :mod:`tokenslim._internal.features`), fitted on public multi-hop training data
    (``scripts/train_relevance.py``). By default the stage keeps every sentence whose
    probability reaches a threshold (a keep decision per request, like Provence), so a
    question with plain evidence keeps little and one the model cannot judge keeps more;
    ``recall`` is the one knob. Runs in milliseconds on CPU, no torch.

    Recorded: every removed sentence (``kind="sentence"``, reason ``"low_relevance"``, with
    its probability), every shortened chunk with its original (reason ``"compressed"``; the
    new chunk's ``metadata["kept_spans"]`` holds the kept character offsets) and every chunk
    that keeps nothing (reason ``"no_relevant_sentences"``).

    Args:
        recall: Target share of needed sentences to keep, in (0, 1): the threshold is the
            probability that kept this share of the supporting sentences of held-out
            training questions. Higher keeps more tokens and loses fewer answers. Default 0.9.
        ratio: ``None`` (default): keep by threshold. A number in (0, 1]: keep the best
            sentences up to this share of the chunk tokens instead (a fixed-ratio budget).
        max_tokens: Absolute cap on kept chunk tokens, or ``None``.
        min_tokens: Never keep below this many chunk tokens (short contexts have little
            to gain and every sentence counts); ``max_tokens`` still caps. Default 200.
        min_chunk_tokens: Chunks of at most this many tokens are kept whole (paid from
            the budget first). Default 0.
        title_weight: Weight of the query naming a chunk's title in the chunk relevance
            feature. Default 1.0.
        hop_weight: Relevance a chunk inherits from a top chunk whose text names its
            title, in the linked-relevance feature. Default 1.0.
        retriever_weight: With retriever scores on every chunk (``Chunk.score``), the
            probability is mixed with the chunk's retriever rank in [0, 1] at this weight
            (an upstream reranker you trust more than the model). The rank is a model
            feature either way. Default 0.0.
        anaphora: A kept sentence opening with a pronoun brings the sentence before it. Default True.
            A title the chunk's text opens with (``"Title: ..."``, ``"# ..."``, ``f"{title}: {text}"``)
            is a label, not a sentence: it is scored as the title, left out of the ``ratio``'s base,
            and kept (and paid for) with the chunk's first kept sentence only when the kept
            sentences do not name it; otherwise it is dropped with reason ``"redundant_title"``.
        relevance: The sentence-relevance feature: ``"bm25"`` (default, fast), ``"embedding"``
            (all-MiniLM-L6-v2 on CPU; tens of ms per prompt), ``"hybrid"``, or your own
            scorer: any object with ``score(query, texts) -> list[float]`` (a cross-encoder,
            an embedding model), or its import path ``"package.module:Class"`` (built with
            no arguments; a config can save it); its scores are min-max normalised per request.
        scorer_weight: With your own scorer, the model's probability is mixed with its score
            at this weight (the model was trained with BM25 in that feature and would
            otherwise under-use a stronger scorer). Default 1.0; 0 uses it as a feature only.
        model: Path of a relevance model file written by ``scripts/train_relevance.py``, or
            ``None`` for the shipped one.
        title_keys: Metadata keys holding a chunk's title, in order (default
            :data:`tokenslim.TITLE_KEYS`: ``title``, ``document_title``,
            ``html_title``, ``file_name``, ``source``, ...); when none holds one, the
            text's own ``Title:`` line, markdown heading or ``Name: text`` prefix.
    """

    def __init__(
        self,
        *,
        recall: float = 0.9,
        ratio: float | None = None,
        max_tokens: int | None = None,
        min_tokens: int = 200,
        min_chunk_tokens: int = 0,
        title_weight: float = 1.0,
        hop_weight: float = 1.0,
        retriever_weight: float = 0.0,
        anaphora: bool = True,
        relevance: "Relevance | RelevanceScorer" = "bm25",
        scorer_weight: float = 1.0,
        model: str | None = None,
        title_keys: Sequence[str] = TITLE_KEYS,
    ) -> None:
        self.recall = recall
        self.ratio = ratio
        self.max_tokens = max_tokens
        self.min_tokens = min_tokens
        self.min_chunk_tokens = min_chunk_tokens
        self.title_weight = title_weight
        self.hop_weight = hop_weight
        self.retriever_weight = retriever_weight
        self.anaphora = anaphora
        self.relevance = relevance
        self.scorer_weight = scorer_weight
        self.model = model
        self.title_keys = title_keys

    def validate(self) -> None:
        """Raises :class:`~tokenslim.errors.ConfigError` for unusable parameters."""
        num = (int, float)
        check(
            isinstance(self.recall, num) and not isinstance(self.recall, bool) and 0 < self.recall < 1,
            self,
            f"recall must be in (0, 1), got {self.recall!r}",
        )
        check(
            self.ratio is None or (isinstance(self.ratio, num) and 0 < self.ratio <= 1),
            self,
            f"ratio must be None or in (0, 1], got {self.ratio!r}",
        )
        check(
            self.max_tokens is None or (isinstance(self.max_tokens, int) and self.max_tokens > 0),
            self,
            f"max_tokens must be a positive int or None, got {self.max_tokens!r}",
        )
        check(
            isinstance(self.min_tokens, int) and self.min_tokens >= 0,
            self,
            f"min_tokens must be an int >= 0, got {self.min_tokens!r}",
        )
        check(
            isinstance(self.min_chunk_tokens, int) and self.min_chunk_tokens >= 0,
            self,
            f"min_chunk_tokens must be an int >= 0, got {self.min_chunk_tokens!r}",
        )
        for name in ("title_weight", "hop_weight", "retriever_weight", "scorer_weight"):
            value = getattr(self, name)
            check(isinstance(value, num) and value >= 0, self, f"{name} must be a number >= 0, got {value!r}")
        check(
            is_relevance(self.relevance),
            self,
            f"relevance must be one of {_RELEVANCE}, an object with score(query, texts) or its import path "
            f"('package.module:Class'), got {self.relevance!r}",
        )
        check(self.model is None or isinstance(self.model, str), self, f"model must be a path or None, got {self.model!r}")
        if self.model is not None:
            load_model(self.model)  # a bad file is a ConfigError now, not at the first request
        check_str_list(self.title_keys, self, "title_keys")

    def apply(self, result: Result) -> Result:
        """Shorten chunks to their kept sentences, recording every removed sentence and chunk."""
        if any(STRUCTURED_KEY in c.metadata for c in result.chunks):  # ReduceStructured's chunks stay whole
            return hold_structured(result, self.apply)
        chunks = result.chunks
        if not chunks:
            return result
        plan = plan_compression(
            result.query,
            chunks,
            result.count,
            recall=self.recall,
            ratio=self.ratio,
            max_tokens=self.max_tokens,
            min_tokens=self.min_tokens,
            min_chunk_tokens=self.min_chunk_tokens,
            title_weight=self.title_weight,
            hop_weight=self.hop_weight,
            retriever_weight=self.retriever_weight,
            anaphora=self.anaphora,
            relevance=self.relevance,
            scorer_weight=self.scorer_weight,
            title_keys=self.title_keys,
            model=load_model(self.model) if self.model else None,
            embeddings=result.embeddings,
            titles=[result.title(c, self.title_keys) for c in chunks],
        )
        out: list[Chunk] = []
        for chunk, spans, keep, rel, label, keep_label, probs in zip(
            chunks, plan.spans, plan.keep, plan.chunk_scores, plan.labels, plan.keep_labels, plan.probs
        ):
            if keep is None or (len(keep) == len(spans) and (label is None or keep_label)):
                out.append(chunk)
                continue
            if not keep:
                result.drop(
                    chunk,
                    reason="no_relevant_sentences",
                    detail=f"0/{len(spans)} sentences kept (best probability {max(probs, default=0.0):.2f})",
                )
                continue
            kept = set(keep)
            for j, (a, b) in enumerate(spans):
                if j not in kept:
                    result.drop(
                        chunk.text[a:b],
                        kind="sentence",
                        reason="low_relevance",
                        chunk_id=chunk.id,
                        detail=f"sentence {j + 1}/{len(spans)}, probability {probs[j]:.2f}",
                    )
            if label is not None and not keep_label:
                result.drop(
                    chunk.text[label[0] : label[1]], kind="sentence", reason="redundant_title", chunk_id=chunk.id,
                    detail="the kept sentences name the title the chunk opens with",
                )
            kept_spans = ([label] if keep_label and label else []) + [spans[j] for j in keep]
            out.append(
                result.shorten(
                    chunk,
                    join_spans(chunk.text, kept_spans),
                    reason="compressed",
                    detail=f"kept {len(keep)}/{len(spans)} sentences",
                    kept_spans=kept_spans,
                )
            )
        result.chunks = out
        return result

    def uses_embeddings(self) -> bool:
        """True with embedding or hybrid sentence relevance."""
        return isinstance(self.relevance, str) and self.relevance in ("embedding", "hybrid")
