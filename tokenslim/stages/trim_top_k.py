"""TrimTopK: keep the best chunks (top-k, score floor, score cliff, token budget, optional MMR)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from tokenslim._chunk import Chunk
from tokenslim._internal.embeddings import EmbeddingSource
from tokenslim._internal.relevance import Relevance, RelevanceScorer, any_relevance_scores, is_relevance, terms
from tokenslim._internal.titles import TITLE_KEYS, chunk_title
from tokenslim._result import Result
from tokenslim.stages._base import BaseStage, check, check_str_list

__all__ = ["TrimTopK", "select_top_k", "Selection", "MMR_POOL"]

_RELEVANCE = ("bm25", "embedding", "hybrid")

MMR_POOL = 200
"""MMR re-ranks only the best ``MMR_POOL`` chunks by score (like LangChain's ``fetch_k``); the
rest follow in score order. Ordering a pool of p by MMR costs p^2/2 similarities, so the
stage stays linear in the number of chunks."""


@dataclass(frozen=True)
class Selection:
    """Outcome of :func:`select_top_k`.

    Attributes:
        scores: The score each chunk was ranked by (retriever score, or computed relevance).
        source: ``"retriever"`` when every chunk had a score, else the relevance method used.
        rank: Chunk indices, best first (MMR order when MMR is on).
        dropped: Chunk index -> ``(reason, detail)`` for every chunk to remove.
    """

    scores: list[float]
    source: str
    rank: list[int]
    dropped: dict[int, tuple[str, str]]


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _mmr_order(order: list[int], scores: list[float], texts: Sequence[str], lam: float) -> list[int]:
    """Maximal marginal relevance order: ``lam * relevance - (1 - lam) * max similarity to picked``."""
    top = max((scores[i] for i in order), default=0.0)
    low = min((scores[i] for i in order), default=0.0)
    span = (top - low) or 1.0
    rel = {i: (scores[i] - low) / span for i in order}
    bags = {i: set(terms(texts[i])) for i in order}
    picked: list[int] = []
    left = list(order)
    # closest[i]: max similarity of i to any picked chunk, updated with each new pick only,
    # so ordering n chunks costs O(n^2) similarities instead of O(n^3)
    closest = {i: 0.0 for i in order}
    while left:
        best = max(left, key=lambda i: lam * rel[i] - (1 - lam) * closest[i])
        picked.append(best)
        left.remove(best)
        for i in left:
            sim = _jaccard(bags[i], bags[best])
            if sim > closest[i]:
                closest[i] = sim
    return picked


def select_top_k(
    query: str,
    chunks: Sequence[Chunk],
    count: Callable[[str], int],
    *,
    k: int | None,
    min_score: float | None,
    cliff: float | None,
    min_keep: int,
    max_tokens: int | None,
    mmr_lambda: float | None,
    relevance: "Relevance | RelevanceScorer | str",
    title_keys: Sequence[str] | None = None,
    embeddings: EmbeddingSource | None = None,
    titles: Sequence[str] | None = None,
    retriever_weight: float | None = None,
) -> Selection:
    """Decide which chunks to keep (pure: touches nothing but its arguments).

    Rules, applied in this order on the ranking (best first): score floor
    (``below_min_score``), top-k cap (``beyond_top_k``; ``mmr_redundant`` when MMR
    pushed a chunk out of the top k), score cliff (``score_cliff``: everything after
    the first relative drop larger than ``cliff``), token budget
    (``over_token_budget``: a chunk that does not fit is skipped, smaller ones
    further down may still fit). The first ``min_keep`` ranked chunks survive the
    floor and the cliff. ``embeddings``: the request's embedding cache (``result.embeddings``). ``titles``: each chunk's title when the caller has them
    (:meth:`Result.title`), else found here with ``title_keys``.
    ``retriever_weight``: with scores on every chunk, ``None`` ranks by the retriever's scores
    alone; a number ``w`` ranks by ``(relevance + w * retriever rank) / (1 + w)``, the
    retriever's score turned into a rank in [0, 1] (scale-free: BM25 and cosine scores mix alike).
    """
    n = len(chunks)
    scored = all(c.score is not None for c in chunks)
    if scored and retriever_weight is None:
        scores = [float(c.score) for c in chunks]  # type: ignore[arg-type]
        source = "retriever"
    else:
        if titles is None:
            titles = [chunk_title(c.text, c.metadata, title_keys) for c in chunks]
        scores = any_relevance_scores(query, [c.text for c in chunks], relevance, extra_terms=[terms(t) for t in titles], embeddings=embeddings)
        source = relevance if isinstance(relevance, str) else type(relevance).__name__
        if scored and retriever_weight is not None and n:
            order = sorted(range(n), key=lambda i: (-float(chunks[i].score), i))  # type: ignore[arg-type]
            retriever_rank = {i: 1.0 - r / max(1, n - 1) for r, i in enumerate(order)}
            scores = [(s + retriever_weight * retriever_rank[i]) / (1.0 + retriever_weight) for i, s in enumerate(scores)]
            source = f"{source}+retriever"
    by_score = sorted(range(n), key=lambda i: (-scores[i], i))
    rank = by_score
    if mmr_lambda is not None:
        rank = _mmr_order(by_score[:MMR_POOL], scores, [c.text for c in chunks], mmr_lambda) + by_score[MMR_POOL:]
    position = {i: p for p, i in enumerate(rank)}
    dropped: dict[int, tuple[str, str]] = {}
    alive: list[int] = []
    for pos, i in enumerate(rank):
        if min_score is not None and scores[i] < min_score and pos >= min_keep:
            dropped[i] = ("below_min_score", f"score {scores[i]:.3g} < {min_score:g} ({source})")
        else:
            alive.append(i)
    if k is not None and len(alive) > k:
        plain_top = set(by_score[:k])
        for i in alive[k:]:
            if mmr_lambda is not None and i in plain_top:
                dropped[i] = ("mmr_redundant", f"pushed out of the top {k} by more diverse chunks (lambda {mmr_lambda:g})")
            else:
                dropped[i] = ("beyond_top_k", f"rank {position[i] + 1} > k={k}")
        alive = alive[:k]
    if cliff is not None:
        for pos in range(max(1, min_keep), len(alive)):
            prev, cur = scores[alive[pos - 1]], scores[alive[pos]]
            if prev > 0 and (prev - cur) / prev > cliff:
                for i in alive[pos:]:
                    dropped[i] = ("score_cliff", f"score {scores[i]:.3g} after a drop of more than {cliff:.0%} from {prev:.3g}")
                alive = alive[:pos]
                break
    if max_tokens is not None:
        used = 0
        for i in alive:
            cost = count(chunks[i].text)
            if used + cost > max_tokens:
                dropped[i] = ("over_token_budget", f"{cost} tokens do not fit ({used}/{max_tokens} used)")
            else:
                used += cost
    return Selection(scores, source, rank, dropped)


class TrimTopK(BaseStage):
    """Keep only the best chunks: top k, above a score floor, before a score cliff, within a token budget.

    Chunks are ranked by their retriever ``score`` when every chunk has one (or by that
    score's rank mixed with computed relevance, ``retriever_weight``); otherwise by query
    relevance computed here (BM25 over text + title, see ``title_keys``, MiniLM embeddings,
    both, or your own scorer), so the stage works on unscored input. Survivors
    keep their input order (ordering is :class:`~tokenslim.stages.Reorder`'s job) and
    get ``metadata["rank"]`` and ``metadata["relevance"]``. Every removed chunk is
    recorded with a reason: ``below_min_score``, ``beyond_top_k``, ``mmr_redundant``,
    ``score_cliff`` or ``over_token_budget``.

    Args:
        k: Keep at most this many chunks (``None``: no cap). Default ``None``: CompressDocuments'
            learned keep decision drops whole chunks per request, and a fixed cap cut half the
            passages of 20-passage inputs; set it to bound what reaches later stages.
        min_score: Drop chunks scoring below this. Compared with the retriever score
            when chunks have one, else with the computed relevance in [0, 1].
        cliff: Cut the ranking at the first relative score drop larger than this
            (0.5: the next chunk scores less than half the previous one). ``None``: off.
        min_keep: The best ``min_keep`` chunks are never removed by ``min_score`` or ``cliff``.
        max_tokens: Keep chunks best-first while their tokens fit this budget.
        mmr_lambda: Turn on maximal marginal relevance in [0, 1]: 1 is pure relevance,
            lower values favour chunks unlike those already chosen (word-set Jaccard
            similarity, so near-duplicate windows of one document give way). ``None``: off.
            MMR re-ranks the best :data:`MMR_POOL` (200) chunks; the rest keep score order.
        relevance: How to score unscored chunks: ``"bm25"`` (fast, default),
            ``"embedding"`` (all-MiniLM-L6-v2 on CPU, offline), ``"hybrid"``, or your own
            scorer (an object with ``score(query, texts) -> list[float]``, or its import path
            ``"package.module:Class"``), min-max normalised per request.
        retriever_weight: With scores on every chunk: ``None`` (default) ranks by the
            retriever's scores alone; a number mixes their rank with computed relevance
            at that weight (see :func:`select_top_k`).
        title_keys: Metadata keys holding a chunk's title (indexed with its text), in
            order (default :data:`tokenslim.TITLE_KEYS`); when none holds one, the
            text's own ``Title:`` line, heading or ``Name: text`` prefix.
    """

    def __init__(
        self,
        *,
        k: int | None = None,
        min_score: float | None = None,
        cliff: float | None = None,
        min_keep: int = 1,
        max_tokens: int | None = None,
        mmr_lambda: float | None = None,
        relevance: "Relevance | RelevanceScorer | str" = "bm25",
        retriever_weight: float | None = None,
        title_keys: Sequence[str] = TITLE_KEYS,
    ) -> None:
        self.k = k
        self.min_score = min_score
        self.cliff = cliff
        self.min_keep = min_keep
        self.max_tokens = max_tokens
        self.mmr_lambda = mmr_lambda
        self.relevance = relevance
        self.retriever_weight = retriever_weight
        self.title_keys = title_keys

    def validate(self) -> None:
        """Raises :class:`~tokenslim.errors.ConfigError` for unusable parameters."""
        check(self.k is None or (isinstance(self.k, int) and not isinstance(self.k, bool) and self.k >= 1), self, f"k must be an int >= 1 or None, got {self.k!r}")
        check(self.min_score is None or isinstance(self.min_score, (int, float)), self, f"min_score must be a number or None, got {self.min_score!r}")
        check(self.cliff is None or (isinstance(self.cliff, (int, float)) and 0 < self.cliff < 1), self, f"cliff must be in (0, 1) or None, got {self.cliff!r}")
        check(isinstance(self.min_keep, int) and self.min_keep >= 0, self, f"min_keep must be an int >= 0, got {self.min_keep!r}")
        check(self.max_tokens is None or (isinstance(self.max_tokens, int) and self.max_tokens > 0), self, f"max_tokens must be a positive int or None, got {self.max_tokens!r}")
        check(self.mmr_lambda is None or (isinstance(self.mmr_lambda, (int, float)) and 0 <= self.mmr_lambda <= 1), self, f"mmr_lambda must be in [0, 1] or None, got {self.mmr_lambda!r}")
        check(
            is_relevance(self.relevance),
            self,
            f"relevance must be one of {_RELEVANCE}, an object with score(query, texts) or its import path "
            f"('package.module:Class'), got {self.relevance!r}",
        )
        check(
            self.retriever_weight is None
            or (isinstance(self.retriever_weight, (int, float)) and not isinstance(self.retriever_weight, bool) and self.retriever_weight >= 0),
            self,
            f"retriever_weight must be None or a number >= 0, got {self.retriever_weight!r}",
        )
        check_str_list(self.title_keys, self, "title_keys")

    def apply(self, result: Result) -> Result:
        """Remove the chunks :func:`select_top_k` rejects, recording each with its reason."""
        chunks = result.chunks
        if not chunks:
            return result
        sel = select_top_k(
            result.query,
            chunks,
            result.count,
            k=self.k,
            min_score=self.min_score,
            cliff=self.cliff,
            min_keep=self.min_keep,
            max_tokens=self.max_tokens,
            mmr_lambda=self.mmr_lambda,
            relevance=self.relevance,
            title_keys=self.title_keys,
            embeddings=result.embeddings,
            titles=[result.title(c, self.title_keys) for c in chunks]
            if self.retriever_weight is not None or any(c.score is None for c in chunks)
            else None,
            retriever_weight=self.retriever_weight,
        )
        position = {i: p + 1 for p, i in enumerate(sel.rank)}
        out: list[Chunk] = []
        for i, chunk in enumerate(chunks):
            if i in sel.dropped:
                reason, detail = sel.dropped[i]
                result.drop(chunk, reason=reason, detail=detail)
            else:
                out.append(chunk.with_text(chunk.text, rank=position[i], relevance=sel.scores[i], relevance_source=sel.source))
        result.chunks = out
        return result

    def uses_embeddings(self) -> bool:
        """True with embedding or hybrid relevance (unscored chunks are then embedded)."""
        return isinstance(self.relevance, str) and self.relevance in ("embedding", "hybrid")
