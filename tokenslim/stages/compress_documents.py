"""CompressDocuments: query-aware extractive compression, sentence by sentence, to a global token budget."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

from tokenslim._chunk import Chunk
from tokenslim._internal.embeddings import EmbeddingSource
from tokenslim._internal.relevance import Relevance, bridge_scores, chunk_relevance, names_title, relevance_scores, terms
from tokenslim._internal.sentences import join_spans, split_spans
from tokenslim._internal.structured import STRUCTURED_KEY, hold_structured  # issue 26
from tokenslim._internal.titles import TITLE_KEYS, chunk_title, lead_aliases, lead_subject, lowercase_words, title_end
from tokenslim._result import Result
from tokenslim.stages._base import BaseStage, check, check_str_list

__all__ = ["CompressDocuments", "plan_compression", "Plan", "MAX_TITLE_TERMS"]

_RELEVANCE = ("bm25", "embedding", "hybrid")
MAX_TITLE_TERMS = 32
"""Title terms indexed with each sentence for sentence relevance (the first 32); longer
titles are cut so a huge title costs linear, not sentences x title, time and memory."""
_ANAPHOR = re.compile(r"^[\"'“(]?(?:he|she|it|they|his|her|its|their|this|these|those|there)\b", re.I)


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
    """

    spans: list[list[tuple[int, int]]]
    keep: list[list[int] | None]
    chunk_scores: list[float]
    budget: float
    labels: list[tuple[int, int] | None]
    keep_labels: list[bool]


def plan_compression(
    query: str,
    chunks: Sequence[Chunk],
    count: Callable[[str], int],
    *,
    ratio: float,
    max_tokens: int | None,
    min_tokens: int,
    min_chunk_tokens: int,
    title_weight: float,
    hop_weight: float,
    lead_bonus: float,
    sentence_weight: float,
    position_penalty: float,
    answer_type_bonus: float,
    bridge_weight: float,
    anaphora: bool,
    relevance: Relevance,
    title_keys: Sequence[str] | None = None,
    embeddings: EmbeddingSource | None = None,
    titles: Sequence[str] | None = None,
) -> Plan:
    """Decide which sentences to keep (pure: reads its arguments, changes nothing).

    Each sentence ``j`` of chunk ``i`` scores
    ``chunk_rel[i] * (1 + lead_bonus if j == 0 else 1) + sentence_weight * sentence_rel
    - position_penalty * min(j, 5) + answer_type_bonus * chunk_rel[i] * [sentence holds the
    asked-for kind of value] + bridge_weight * bridge``, where ``chunk_rel`` comes from
    :func:`~tokenslim._internal.relevance.chunk_relevance` (BM25 + title match +
    multi-hop title links), ``sentence_rel`` is the sentence's own relevance
    (BM25 over all sentences of all chunks, or embeddings; in chunks of several lines,
    averaged with its line's BM25: a speaker turn, a list item) and ``bridge`` is
    :func:`~tokenslim._internal.relevance.bridge_scores` (the sentence names the
    subject of one of the two chunks the question points at: the link of a 2-hop question). Sentences are taken
    best-first while they fit a budget shared by all chunks: ``ratio`` of the chunk
    tokens (at least ``min_tokens``), capped by ``max_tokens``. A kept sentence that
    opens with a pronoun brings the sentence before it when that fits (``anaphora``).
    ``embeddings``: the request's embedding cache (``result.embeddings``).
    """
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
    keep_labels = [False] * len(chunks)
    sizes = [count(c.text[k:] if lab else c.text) for c, k, lab in zip(chunks, cut, labels)]
    budget = max(float(sum(sizes)) * ratio, float(min(min_tokens, sum(count(c.text) for c in chunks) if any(labels) else sum(sizes))))
    if max_tokens is not None:
        budget = min(budget, float(max_tokens))
    # no title anywhere: the subject the text opens with links chunks instead (the second hop)
    subjects = [not t for t in chunk_titles]
    common = lowercase_words([c.text for c in chunks]) if any(subjects) else set()
    if any(subjects):
        chunk_titles = [t or lead_subject(c.text, common=common) for t, c in zip(chunk_titles, chunks)]
    aliases = [lead_aliases(c.text) if s else [] for c, s in zip(chunks, subjects)]
    chunk_rel, direct_rel = chunk_relevance(
        query, [c.text[k:] for c, k in zip(chunks, cut)], chunk_titles, title_weight, hop_weight, common=common, subjects=subjects, aliases=aliases
    )
    keep: list[list[int] | None] = [None] * len(chunks)
    units: list[tuple[int, int]] = []
    used = 0.0
    for i, sp in enumerate(spans):
        if sizes[i] <= min_chunk_tokens:
            used += count(chunks[i].text) if labels[i] else sizes[i]  # kept whole, paid from the budget first
            continue
        keep[i] = []
        units.extend((i, j) for j in range(len(sp)))
    if not units:
        return Plan(spans, keep, chunk_rel, budget, labels, keep_labels)
    texts = [chunks[i].text[spans[i][j][0] : spans[i][j][1]] for i, j in units]
    scored = [chunks[i].text[max(spans[i][j][0], cut[i]) : spans[i][j][1]] for i, j in units]
    # one capped term list per chunk, shared by its sentences: a 4,000-word title must not be
    # copied into each of 4,000 sentences (16M terms); real titles are far under the cap
    title_terms = {i: terms(chunk_titles[i])[:MAX_TITLE_TERMS] for i in {i for i, _ in units}}
    sent_rel = relevance_scores(query, scored, relevance, extra_terms=[title_terms[i] for i, _ in units], embeddings=embeddings)
    want = _answer_pattern(query)
    bridge = (
        bridge_scores(query, scored, [i for i, _ in units], chunk_titles, chunk_rel, direct_rel)
        if bridge_weight > 0
        else [0.0] * len(units)
    )
    sent_rel = _with_segments(query, chunks, spans, units, sent_rel)
    score = [
        chunk_rel[i] * (1.0 + lead_bonus if j == 0 else 1.0)
        + sentence_weight * sent_rel[k]
        - position_penalty * min(j, _POSITION_CAP)
        + (answer_type_bonus * chunk_rel[i] if want is not None and want.search(scored[k]) else 0.0)
        + bridge_weight * bridge[k]
        for k, (i, j) in enumerate(units)
    ]
    cost = [count(t) for t in texts]
    index = {u: k for k, u in enumerate(units)}
    chosen: set[int] = set()
    opened: set[int] = set()  # chunks with a kept sentence
    for k in sorted(range(len(units)), key=lambda k: (-score[k], k)):
        i, j = units[k]
        # a chunk's title label comes with its first kept sentence unless that sentence names it
        label = labels[i] is not None and i not in opened and not names_title(texts[k], chunk_titles[i])
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
        # every sentence is longer than the soft (ratio) budget: keep the best one rather than
        # nothing; an explicit max_tokens (or a Budget stage) is the hard cap
        best = min(range(len(units)), key=lambda k: (-score[k], k))
        chosen.add(best)
        i = units[best][0]
        keep_labels[i] = labels[i] is not None and not names_title(texts[best], chunk_titles[i])
    for k in sorted(chosen):
        i, j = units[k]
        keep[i].append(j)  # type: ignore[union-attr]
        if keep_labels[i] and names_title(texts[k], chunk_titles[i]):
            keep_labels[i] = False  # a sentence chosen later names the title after all
    return Plan(spans, keep, chunk_rel, budget, labels, keep_labels)


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


_POSITION_CAP = 5
"""The position penalty counts the first 5 positions only: in a paragraph the lead sentences
matter, but in a long chunk (a 20-turn transcript window) sentence 30 is not 30 times less
relevant than sentence 1 (QMSum term recall at ~8.5x: 55.9% uncapped, 62.5% capped, with
segments; HotpotQA unchanged in every input format)."""


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


_WHEN = re.compile(r"\b(?:when|what (?:year|date|decade|century)|which year|how long ago)\b", re.I)
_HOW_MANY = re.compile(
    r"\bhow (?:many|much|long|old|tall|far|big|large|high|deep|wide)\b|\bwhat (?:number|percentage|amount|population)\b",
    re.I,
)
_YEAR_OR_DATE = re.compile(r"\b(?:1[0-9]{3}|20[0-9]{2})s?\b|\b[0-9]{1,2}(?:st|nd|rd|th)[ -](?:century|millennium)\b", re.I)
_NUMBER = re.compile(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|hundred|thousand|million|billion)\b", re.I)


def _answer_pattern(query: str) -> "re.Pattern[str] | None":
    """What a sentence answering this question must contain, when the question says (dates, numbers)."""
    if _WHEN.search(query):
        return _YEAR_OR_DATE
    if _HOW_MANY.search(query):
        return _NUMBER
    return None


class CompressDocuments(BaseStage):
    """Keep only the sentences that matter for the query, within one token budget for all chunks.

    Extractive and verbatim: every kept sentence is an exact substring of its chunk,
    in the original order; numbers, code blocks, JSON, tables and quoted strings are
    atomic units that are kept or dropped whole (see :mod:`tokenslim._internal.sentences`).
    The budget is shared across chunks, so the relevant chunks keep most of their text
    and marginal ones keep a sentence or disappear. Relevance is lexical by default
    (BM25 over chunks and sentences, the chunk's ``metadata["title"]``, and multi-hop
    links: a chunk whose title is named in a top chunk inherits its relevance; titles
    are found wherever the loader put them, see ``title_keys``), so a
    10-chunk prompt compresses in a few milliseconds on CPU without any model.

    Recorded: every removed sentence (``kind="sentence"``, reason ``"low_relevance"``),
    every shortened chunk with its original (reason ``"compressed"``; the new chunk's
    ``metadata["kept_spans"]`` holds the kept character offsets) and every chunk that
    keeps nothing (reason ``"no_relevant_sentences"``).

    Args:
        ratio: Share of the chunk tokens to keep, in (0, 1]. Default 0.22.
        max_tokens: Absolute cap on kept chunk tokens, or ``None``.
        min_tokens: Never aim below this many chunk tokens (short contexts have little
            to gain and every sentence counts); ``max_tokens`` still caps. Default 200:
            on NQ's single ~130-token passages, 100 kept the answer in 89% of the
            questions at 1.52x, 200 in 98% at 1.12x (benchmarks/bench_compression.py).
        min_chunk_tokens: Chunks of at most this many tokens are kept whole (paid from
            the budget first). Default 0.
        title_weight: Weight of the query naming a chunk's title. Default 1.0.
        hop_weight: Relevance a chunk inherits from a top chunk whose text names its
            title (the second hop of a multi-hop question). Default 1.0.
        lead_bonus: Extra weight of a chunk's first sentence, which names its subject. Default 1.0.
        sentence_weight: Weight of the sentence's own query relevance. Default 0.5.
        position_penalty: Score lost per sentence position within a chunk, for the first
            5 positions (lead sentences matter; sentence 30 of a long chunk is not
            30 times less relevant than sentence 1). Default 0.1.
        answer_type_bonus: Bonus (times chunk relevance) for a sentence holding what the
            question asks for, when its wording says: a year for "when"/"what year", a
            number for "how many/much/long...". Default 0.4.
        bridge_weight: Bonus for a sentence that names the title of one of the two chunks
            most relevant to the question itself (other than its own), times that chunk's relevance: the
            sentence linking the two hops of a multi-hop question. Default 0.4 (on
            HotpotQA it moved answer retention at ~4x from 95.3% to 96.8%;
            ``benchmarks/bench_compression.py``). 0 turns it off.
        anaphora: A kept sentence opening with a pronoun brings the sentence before it. Default True.
            A title the chunk's text opens with (``"Title: ..."``, ``"# ..."``, ``f"{title}: {text}"``)
            is a label, not a sentence: it is scored as the title, left out of the ``ratio``'s base,
            and kept (and paid for) with the chunk's first kept sentence only when the kept
            sentences do not name it; otherwise it is dropped with reason ``"redundant_title"``.
        relevance: Sentence relevance: ``"bm25"`` (default, fast), ``"embedding"``
            (all-MiniLM-L6-v2 on CPU; tens of ms per prompt) or ``"hybrid"``.
        title_keys: Metadata keys holding a chunk's title, in order (default
            :data:`tokenslim.TITLE_KEYS`: ``title``, ``document_title``,
            ``html_title``, ``file_name``, ``source``, ...); when none holds one, the
            text's own ``Title:`` line, markdown heading or ``Name: text`` prefix.
    """

    def __init__(
        self,
        *,
        ratio: float = 0.22,
        max_tokens: int | None = None,
        min_tokens: int = 200,
        min_chunk_tokens: int = 0,
        title_weight: float = 1.0,
        hop_weight: float = 1.0,
        lead_bonus: float = 1.0,
        sentence_weight: float = 0.5,
        position_penalty: float = 0.1,
        answer_type_bonus: float = 0.4,
        bridge_weight: float = 0.4,
        anaphora: bool = True,
        relevance: Relevance = "bm25",
        title_keys: Sequence[str] = TITLE_KEYS,
    ) -> None:
        self.ratio = ratio
        self.max_tokens = max_tokens
        self.min_tokens = min_tokens
        self.min_chunk_tokens = min_chunk_tokens
        self.title_weight = title_weight
        self.hop_weight = hop_weight
        self.lead_bonus = lead_bonus
        self.sentence_weight = sentence_weight
        self.position_penalty = position_penalty
        self.answer_type_bonus = answer_type_bonus
        self.bridge_weight = bridge_weight
        self.anaphora = anaphora
        self.relevance = relevance
        self.title_keys = title_keys

    def validate(self) -> None:
        """Raises :class:`~tokenslim.errors.ConfigError` for unusable parameters."""
        num = (int, float)
        check(isinstance(self.ratio, num) and 0 < self.ratio <= 1, self, f"ratio must be in (0, 1], got {self.ratio!r}")
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
        for name in ("title_weight", "hop_weight", "lead_bonus", "sentence_weight", "position_penalty", "answer_type_bonus", "bridge_weight"):
            value = getattr(self, name)
            check(isinstance(value, num) and value >= 0, self, f"{name} must be a number >= 0, got {value!r}")
        check(self.relevance in _RELEVANCE, self, f"relevance must be one of {_RELEVANCE}, got {self.relevance!r}")
        check_str_list(self.title_keys, self, "title_keys")

    def apply(self, result: Result) -> Result:
        """Shorten chunks to their kept sentences, recording every removed sentence and chunk."""
        if any(STRUCTURED_KEY in c.metadata for c in result.chunks):  # issue 26: ReduceStructured's chunks stay whole
            return hold_structured(result, self.apply)
        chunks = result.chunks
        if not chunks:
            return result
        plan = plan_compression(
            result.query,
            chunks,
            result.count,
            ratio=self.ratio,
            max_tokens=self.max_tokens,
            min_tokens=self.min_tokens,
            min_chunk_tokens=self.min_chunk_tokens,
            title_weight=self.title_weight,
            hop_weight=self.hop_weight,
            lead_bonus=self.lead_bonus,
            sentence_weight=self.sentence_weight,
            position_penalty=self.position_penalty,
            answer_type_bonus=self.answer_type_bonus,
            bridge_weight=self.bridge_weight,
            anaphora=self.anaphora,
            relevance=self.relevance,
            title_keys=self.title_keys,
            embeddings=result.embeddings,
            titles=[result.title(c, self.title_keys) for c in chunks],
        )
        out: list[Chunk] = []
        for chunk, spans, keep, rel, label, keep_label in zip(
            chunks, plan.spans, plan.keep, plan.chunk_scores, plan.labels, plan.keep_labels
        ):
            if keep is None or (len(keep) == len(spans) and (label is None or keep_label)):
                out.append(chunk)
                continue
            if not keep:
                result.drop(
                    chunk,
                    reason="no_relevant_sentences",
                    detail=f"0/{len(spans)} sentences fit the budget (chunk relevance {rel:.2f})",
                )
                continue
            kept = set(keep)
            for j, (a, b) in enumerate(spans):
                if j not in kept:
                    result.drop(
                        chunk.text[a:b], kind="sentence", reason="low_relevance", chunk_id=chunk.id, detail=f"sentence {j + 1}/{len(spans)}"
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
        return self.relevance != "bm25"
