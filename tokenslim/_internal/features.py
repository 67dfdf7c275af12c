"""Per-sentence features for the learned relevance model (:mod:`tokenslim._internal.scorer`).

Every feature is scale-free within one request (normalised by the request's maximum, a rank,
a share or a flag), so a model fitted on one dataset reads the same numbers on another. The
hand rules of earlier releases (title match, multi-hop title links, the bridge sentence, the
answer's kind of value) are features here: the model decides how much each is worth, from
training data (``scripts/train_relevance.py``), instead of a constant fitted by hand.

Multi-hop without grammar: :func:`hop_chain` follows a chain of chunks from the one the
question points at, each step expanding the query with the rarest words of the chunks
reached so far (entities, numbers, dates: whatever the text says), for up to three hops;
:func:`pair_scores` scores each chunk by how much of the question it covers together with a
chunk the question points at and whose name it holds (the two ends of a two-hop question).
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Sequence

from tokenslim._internal.lang import word_vectors, words
from tokenslim._internal.relevance import bm25_scores, normalize, terms

if TYPE_CHECKING:
    import numpy as np

__all__ = ["FEATURES", "CONTEXT_FEATURES", "HOPS", "YEAR", "ANAPHOR", "sentence_features", "context_features", "hop_chain", "pair_scores"]

HOPS = 3
"""Hops :func:`hop_chain` follows past the chunk the question points at (MuSiQue asks up to 4)."""
_EXPANSION_TERMS = 24
_PAIR_STARTS = 4
"""Chunks the question points at most directly that :func:`pair_scores` pairs every chunk with."""
YEAR = re.compile(
    r"\b(?:1[0-9]{3}|20[0-9]{2})s?\b|\b[0-9]{1,2}(?:st|nd|rd|th)[ -](?:" + "|".join(sorted(words("date_units"))) + r")\b", re.I
)
_DIGIT = re.compile(r"\d")
_CAPITAL = re.compile(r"(?<=[\w,;:)] )[A-Z][\w'’-]+")
ANAPHOR = re.compile(r"^[\"'“(]?(?:" + "|".join(sorted(words("anaphors"))) + r")\b", re.I)

FEATURES: tuple[str, ...] = (
    "sent_rel",  # the sentence's own relevance (BM25 with its title, embeddings, or a plugged scorer), max-normalised
    "sent_rank",  # 1 / (1 + its rank by sent_rel among the request's sentences)
    "sent_cover",  # IDF-weighted share of the question's terms in the sentence
    "sent_hop",  # BM25 of the sentence against the question + the words of the top sentences (second hop), normalised
    "names_chain",  # share of another chain chunk's title the sentence names (the link between hops)
    "bridge",  # bridge score: names the subject of a chunk the question points at
    "chunk_direct",  # the chunk's relevance to the question alone (BM25 + title named), normalised
    "chunk_linked",  # the chunk's relevance after the title-link hop step
    "chunk_rank",  # 1 / (1 + rank of the chunk by chunk_linked)
    "chunk_cover",  # IDF-weighted share of the question's terms in the chunk
    "title_named",  # share of the chunk's title the question names
    "chain_order",  # 1 / (1 + hop at which the chain reached the chunk), 0 off the chain
    "hop1",  # BM25 of the chunk against the rare words of the chain's first chunk
    "hop2",  # ... + the second chunk's
    "hop3",  # ... + the third chunk's
    "retriever",  # the retriever's score for the chunk as a rank in [0, 1] (0 without scores)
    "has_retriever",  # 1 when the chunks came with retriever scores
    "first",  # the chunk's first sentence (it names the subject)
    "position",  # min(position, 5) / 5
    "relative_position",  # position / sentences in the chunk
    "length",  # log(1 + terms in the sentence) / 5
    "anaphor",  # opens with a pronoun ("He", "It", "Their ...")
    "wants_date",  # the question asks when / what year
    "wants_number",  # the question asks how many / much / long ...
    "has_date",  # the sentence holds a year, decade or century
    "has_number",  # the sentence holds a digit
    "date_match",  # wants_date and has_date
    "number_match",  # wants_number and has_number
    "names_cover",  # share of the sentence's capitalised words (names) found in the question
    "chunks",  # log(chunks in the request) / 3
    "sent_soft",  # like sent_cover, but a question term counts by its best word-vector match in the sentence
    "sent_soft_norm",  # sent_soft / the request's maximum
    "chunk_soft",  # sent_soft over the chunk's words and title
    "pair",  # best pair with a top chunk: share of the question the two cover together x their rarest shared name
    "sent_pair",  # the same, for the sentence with a top chunk other than its own
    "pair_rank",  # 1 / (1 + rank of the chunk by pair)
    "pair_next",  # pair again, from the chunks the best pairs reached (the hop after)
    "wants_place",  # the question asks where / in what country ... (the language's place_questions)
    "wants_person",  # the question asks who / whose (person_questions)
    "new_names",  # log(1 + names in the sentence that neither the question nor its chunk's title holds) / 3
)


def _idf_table(docs: Sequence[Sequence[str]]) -> dict[str, float]:
    df: dict[str, int] = {}
    for d in docs:
        for w in set(d):
            df[w] = df.get(w, 0) + 1
    n = len(docs)
    return {w: math.log(1.0 + (n - k + 0.5) / (k + 0.5)) for w, k in df.items()}


def _cover(q: Sequence[str], bag: set[str], idf: dict[str, float], default: float) -> float:
    total = sum(idf.get(w, default) for w in q)
    return sum(idf.get(w, default) for w in q if w in bag) / total if total else 0.0


def soft_cover(q: Sequence[str], bags: Sequence[Sequence[str]], idf: dict[str, float], default: float) -> list[float]:
    """Per bag of words, the IDF-weighted share of the question's terms it matches, where a term counts
    by its best match: 1 for the same term, else the cosine of the two words' vectors (at least 0;
    :func:`~tokenslim._internal.lang.word_vectors`). "spouse" asked finds "married" written; a word
    without a vector matches only itself."""
    import numpy as np

    qt = list(dict.fromkeys(q))
    if not qt or not bags:
        return [0.0] * len(bags)
    vocab: dict[str, int] = {}
    for bag in bags:
        for w in bag:
            vocab.setdefault(w, len(vocab))
    sim = np.zeros((len(qt), len(vocab) + 1))  # a last, all-zero column for an empty bag
    table = word_vectors()
    if table is not None:
        index, rows = table
        qk = [(a, index[w]) for a, w in enumerate(qt) if w in index]
        vk = [(b, index[w]) for w, b in vocab.items() if w in index]
        if qk and vk:
            cos = rows[[r for _, r in qk]].astype(np.float32) @ rows[[r for _, r in vk]].astype(np.float32).T
            sim[np.ix_([a for a, _ in qk], [b for b, _ in vk])] = np.clip(cos, 0.0, 1.0)
    for a, w in enumerate(qt):
        if w in vocab:
            sim[a, vocab[w]] = 1.0
    weight = np.asarray([idf.get(w, default) for w in qt])
    total = float(weight.sum())
    empty = len(vocab)
    out = []
    for bag in bags:
        cols = sorted({vocab[w] for w in bag}) or [empty]
        out.append(float(weight @ sim[:, cols].max(axis=1)) / total if total else 0.0)
    return out


def _ranks(values: Sequence[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda k: (-values[k], k))
    out = [0.0] * len(values)
    for r, k in enumerate(order):
        out[k] = 1.0 / (1.0 + r)
    return out


def hop_chain(
    query_terms: Sequence[str], docs: Sequence[Sequence[str]], direct: Sequence[float], hops: int = HOPS
) -> tuple[list[int], list[list[float]]]:
    """Follow a chain of chunks from the one the question points at most directly.

    Each step scores every chunk by BM25 against the ``24`` rarest words (by IDF over the
    request's chunks) of the chunks reached so far that the question does not use (what they
    add to the question), and adds the best chunk not on the chain yet (ties go to the chunk
    the question points at more directly). The rare words are what a text
    names (people, places, titles, dates), so the chain goes from "the film X" to its
    director's chunk to the director's mother's chunk without knowing any grammar.

    Returns:
        The chain (chunk indices, in the order reached), and per hop the normalised score of
        every chunk at that hop (1.0 for chunks already on the chain).
    """
    n = len(docs)
    if n == 0:
        return [], [[] for _ in range(hops)]
    idf = _idf_table(docs)
    qset = set(query_terms)
    chain = [min(range(n), key=lambda i: (-direct[i], i))]
    per_hop: list[list[float]] = []
    for _ in range(hops):
        seen: dict[str, float] = {}
        for c in chain:
            for w in docs[c]:
                # numbers other than years say little about what a text names
                if w not in qset and (not w.isdigit() or len(w) == 4):
                    seen[w] = idf.get(w, 0.0)
        expansion = sorted(seen, key=lambda w: (-seen[w], w))[:_EXPANSION_TERMS]
        scores = normalize([float(x) for x in bm25_scores(expansion, docs)]) if expansion else [0.0] * n
        on = set(chain)
        per_hop.append([1.0 if i in on else scores[i] for i in range(n)])
        rest = [i for i in range(n) if i not in on]
        if not rest:
            continue
        chain.append(min(rest, key=lambda i: (-scores[i], -direct[i], i)))
    return chain, per_hop


def pair_scores(
    q: Sequence[str],
    bags: Sequence[set[str]],
    owners: Sequence[int],
    starts: Sequence[tuple[int, set[str], set[str]]],
    idf: dict[str, float],
    default: float,
) -> list[float]:
    """Per bag, how well it completes the question together with one of the ``starts`` chunks.

    Multi-hop questions name the first hop's subject and ask the last hop's relation ("What
    currency predated the Euro in the country Signmark is from?"): no single text covers them,
    but the pair of texts that does is linked by a name both hold ("Finland"). The score of a
    bag with a start is the IDF-weighted share of the question the two cover together, times the
    IDF of the rarest of the start's names (title words, capitalised words) that the bag holds and
    the question does not use, relative to the request's rarest word; the best over ``starts``
    (chunk index, its words, its names) other than the bag's own chunk (``owners``). Linear in
    the bags: a request has at most :data:`_PAIR_STARTS` starts.
    """
    qset = set(q)
    weights = {w: idf.get(w, default) for w in qset}
    total = sum(weights[w] for w in sorted(qset))  # sums in a fixed order: the same in every process
    if not total or not starts:
        return [0.0] * len(bags)
    top_idf = max(idf.values(), default=default) or 1.0
    start_bags = [(a, names - qset, abag & qset) for a, abag, names in starts]
    out = []
    for k, bag in enumerate(bags):
        best = 0.0
        covered = bag & qset
        for a, abag, acover in start_bags:
            if a == owners[k]:
                continue
            shared = [idf.get(w, default) for w in abag & bag]
            if not shared:
                continue
            link = max(shared) / top_idf
            cover = sum(weights[w] for w in sorted(covered | acover)) / total
            best = max(best, cover * link)
        out.append(best)
    return out


def sentence_features(
    query: str,
    sentences: Sequence[str],
    owners: Sequence[int],
    positions: Sequence[int],
    chunk_sizes: Sequence[int],
    chunk_texts: Sequence[str],
    titles: Sequence[str],
    sent_rel: Sequence[float],
    chunk_direct: Sequence[float],
    chunk_linked: Sequence[float],
    bridge: Sequence[float],
    retriever: Sequence[float | None],
    wants_date: bool,
    wants_number: bool,
    wants_place: bool,
    wants_person: bool,
) -> "np.ndarray":
    """The feature matrix, one row per sentence, columns in :data:`FEATURES` order.

    Args:
        query: The question.
        sentences: Every candidate sentence (its text, without a title label).
        owners: Each sentence's chunk index; ``positions``: its index within the chunk.
        chunk_sizes: Sentences per chunk.
        chunk_texts: Each chunk's text (without a title label); ``titles``: its title or subject.
        sent_rel: The sentence relevance the stage was configured with, in [0, 1].
        chunk_direct, chunk_linked: :func:`~tokenslim._internal.relevance.chunk_relevance`'s two scores.
        bridge: :func:`~tokenslim._internal.relevance.bridge_scores`.
        retriever: Each chunk's retriever score, or ``None``.
        wants_date, wants_number, wants_place, wants_person: What the question asks for, when its wording says.
    """
    import numpy as np

    n_chunks = len(chunk_texts)
    q = terms(query)
    qset = set(q)
    sent_terms = [terms(s) for s in sentences]
    chunk_terms = [terms(t) + terms(x) for t, x in zip(titles, chunk_texts)]
    sent_idf = _idf_table(sent_terms)
    chunk_idf = _idf_table(chunk_terms)
    default_s = math.log(1.0 + (len(sentences) + 0.5) / 0.5)
    default_c = math.log(1.0 + (n_chunks + 0.5) / 0.5)
    chunk_sets = [set(t) for t in chunk_terms]
    sent_sets = [set(t) for t in sent_terms]
    chunk_cover = [_cover(q, bag, chunk_idf, default_c) for bag in chunk_sets]
    title_terms = [set(terms(t)) for t in titles]
    title_named = [_cover(sorted(t), qset, chunk_idf, default_c) for t in title_terms]
    chain, per_hop = hop_chain(q, chunk_terms, chunk_direct)
    chain_order = [0.0] * n_chunks
    for h, c in enumerate(chain):
        chain_order[c] = 1.0 / (1.0 + h)
    # the second hop at sentence level: the question + the rare words of the two best sentences
    first_pass = [sent_rel[k] + chunk_linked[owners[k]] for k in range(len(sentences))]
    top = sorted(range(len(sentences)), key=lambda k: (-first_pass[k], k))[:2]
    seen = {w: sent_idf.get(w, 0.0) for k in top for w in sent_terms[k] if w not in qset}
    expansion = sorted(seen, key=lambda w: (-seen[w], w))[:_EXPANSION_TERMS]
    sent_hop = normalize([float(x) for x in bm25_scores(q + expansion, sent_terms)]) if expansion and q else [0.0] * len(sentences)
    chain_titles = [(c, title_terms[c] - qset) for c in chain]
    has_scores = bool(retriever) and all(s is not None for s in retriever)
    retr = [0.0] * n_chunks
    if has_scores and n_chunks > 1:
        order = sorted(range(n_chunks), key=lambda i: (-float(retriever[i]), i))  # type: ignore[arg-type]
        for r, i in enumerate(order):
            retr[i] = 1.0 - r / (n_chunks - 1)
    elif has_scores:
        retr = [1.0]
    chunk_rank = _ranks(chunk_linked)
    sent_rank = _ranks(sent_rel)
    sent_soft = soft_cover(q, sent_terms, sent_idf, default_s)
    soft_top = max(sent_soft, default=0.0)
    chunk_soft = soft_cover(q, chunk_terms, sent_idf, default_s)

    def start(i: int) -> tuple[int, set[str], set[str]]:
        # a start chunk's names: its title's words and the capitalised words of its text
        return i, chunk_sets[i], set(terms(titles[i] + " " + " ".join(_CAPITAL.findall(chunk_texts[i]))))

    starts = [start(i) for i in sorted(range(n_chunks), key=lambda i: (-chunk_direct[i], i))[:_PAIR_STARTS]]
    pair = pair_scores(q, chunk_sets, range(n_chunks), starts, chunk_idf, default_c)
    sent_pair = pair_scores(q, sent_sets, owners, starts, chunk_idf, default_c)
    pair_rank = _ranks(pair)
    # the hop after: the chunks the best pairs reached become the starts
    first = {i for i, _, _ in starts}
    reached = [i for i in sorted(range(n_chunks), key=lambda i: (-pair[i], i)) if i not in first][:_PAIR_STARTS]
    pair_next = pair_scores(q, chunk_sets, range(n_chunks), [start(i) for i in reached], chunk_idf, default_c)
    rows = np.zeros((len(sentences), len(FEATURES)), dtype=np.float64)
    log_chunks = math.log(max(n_chunks, 1)) / 3.0
    for k, (text, i, j) in enumerate(zip(sentences, owners, positions)):
        bag = sent_sets[k]
        names = 0.0
        for c, tt in chain_titles:
            if c != i and tt:
                names = max(names, len(tt & bag) / len(tt))
        caps = set(terms(" ".join(_CAPITAL.findall(text))))
        new_names = len(caps - qset - title_terms[i])
        has_date = bool(YEAR.search(text))
        has_number = bool(_DIGIT.search(text))
        rows[k] = (
            sent_rel[k],
            sent_rank[k],
            _cover(q, bag, sent_idf, default_s),
            sent_hop[k],
            names,
            bridge[k],
            chunk_direct[i],
            chunk_linked[i],
            chunk_rank[i],
            chunk_cover[i],
            title_named[i],
            chain_order[i],
            per_hop[0][i] if per_hop and per_hop[0] else 0.0,
            per_hop[1][i] if len(per_hop) > 1 and per_hop[1] else 0.0,
            per_hop[2][i] if len(per_hop) > 2 and per_hop[2] else 0.0,
            retr[i],
            1.0 if has_scores else 0.0,
            1.0 if j == 0 else 0.0,
            min(j, 5) / 5.0,
            j / max(chunk_sizes[i], 1),
            math.log1p(len(sent_terms[k])) / 5.0,
            1.0 if ANAPHOR.match(text) else 0.0,
            1.0 if wants_date else 0.0,
            1.0 if wants_number else 0.0,
            1.0 if has_date else 0.0,
            1.0 if has_number else 0.0,
            1.0 if wants_date and has_date else 0.0,
            1.0 if wants_number and has_number else 0.0,
            len(caps & qset) / len(caps) if caps else 0.0,
            log_chunks,
            sent_soft[k],
            sent_soft[k] / soft_top if soft_top > 0 else 0.0,
            chunk_soft[i],
            pair[i],
            sent_pair[k],
            pair_rank[i],
            pair_next[i],
            1.0 if wants_place else 0.0,
            1.0 if wants_person else 0.0,
            math.log1p(new_names) / 3.0,
        )
    return rows


CONTEXT_FEATURES: tuple[str, ...] = (
    "p",  # the first pass's probability for the sentence
    "p_rank",  # 1 / (1 + its rank by p among the request's sentences)
    "chunk_max",  # the best first-pass probability in its chunk (is the chunk needed?)
    "chunk_max_rank",  # 1 / (1 + rank of its chunk by chunk_max)
    "chunk_mean",  # mean first-pass probability of its chunk's sentences
    "rank_in_chunk",  # 1 / (1 + its rank by p within its chunk)
    "prev_p",  # the previous sentence's p (0 for a first sentence)
    "next_p",  # the next sentence's p (0 for a last sentence)
    "names_needed",  # the sentence names the title of another chunk the first pass found needed, times its chunk_max
)


def context_features(
    p: Sequence[float], owners: Sequence[int], positions: Sequence[int], sentences: Sequence[str], titles: Sequence[str]
) -> "np.ndarray":
    """Second-pass features from the first pass's probabilities (:data:`CONTEXT_FEATURES` order).

    A sentence of a chunk the first pass finds needed is itself more likely needed, and so is a
    sentence naming such a chunk's subject (the link to the next hop); the second pass learns how
    much, from out-of-fold first-pass probabilities (``scripts/train_relevance.py``).
    """
    import numpy as np

    n = len(p)
    out = np.zeros((n, len(CONTEXT_FEATURES)), dtype=np.float64)
    if n == 0:
        return out
    by_chunk: dict[int, list[int]] = {}
    for k, i in enumerate(owners):
        by_chunk.setdefault(i, []).append(k)
    cmax = {i: max(p[k] for k in ks) for i, ks in by_chunk.items()}
    cmean = {i: sum(p[k] for k in ks) / len(ks) for i, ks in by_chunk.items()}
    chunk_order = sorted(cmax, key=lambda i: (-cmax[i], i))
    crank = {i: 1.0 / (1.0 + r) for r, i in enumerate(chunk_order)}
    p_rank = _ranks(p)
    within: dict[int, float] = {}
    at: dict[tuple[int, int], int] = {}
    for i, ks in by_chunk.items():
        for r, k in enumerate(sorted(ks, key=lambda k: (-p[k], k))):
            within[k] = 1.0 / (1.0 + r)
        for k in ks:
            at[(i, positions[k])] = k
    top = [(i, set(terms(titles[i]))) for i in chunk_order[:3] if i < len(titles)]
    for k in range(n):
        i, j = owners[k], positions[k]
        prev = at.get((i, j - 1))
        nxt = at.get((i, j + 1))
        bag = set(terms(sentences[k]))
        names = 0.0
        for c, tt in top:
            if c != i and tt:
                names = max(names, cmax[c] * len(tt & bag) / len(tt))
        out[k] = (
            p[k],
            p_rank[k],
            cmax[i],
            crank[i],
            cmean[i],
            within[k],
            p[prev] if prev is not None else 0.0,
            p[nxt] if nxt is not None else 0.0,
            names,
        )
    return out
