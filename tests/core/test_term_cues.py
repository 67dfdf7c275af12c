"""The substring prefilter behind ``Query.holds_term`` and one-text BM25 relevance: reading
:func:`terms` only on the lines that hold a cue gives the same answer as reading all of it."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from tokenslim._internal.relevance import holds_any, relevance_scores, terms

WORDS = ["countries", "country", "Öresund", "Øresund", "films", "film", "class", "bus", "Straße", "strasse", "naïve", "ies", "ys"]


@settings(max_examples=300, deadline=None, database=None, derandomize=True)
@given(
    st.lists(st.sampled_from(WORDS) | st.text(max_size=12), max_size=12),
    st.lists(st.sampled_from(WORDS) | st.text(max_size=8), min_size=1, max_size=4),
    st.sampled_from([" ", "\n", "\r\n", "\u2028", "-", ""]),
)
@example(["Countries", "of", "Europe"], ["country"], " ")
@example(["The", "Öresund\nbridge"], ["oresund"], "\n")
def test_holds_any_is_terms_membership(words: list[str], query: list[str], sep: str) -> None:
    text = sep.join(words)
    qt = terms(" ".join(query))
    assert holds_any(qt, text) == (not set(qt).isdisjoint(terms(text)))


def test_one_text_relevance_is_what_bm25_max_normalised_gives(data_dir: Path) -> None:
    with gzip.open(data_dir / "hotpotqa_distractor" / "hotpotqa_dev_distractor.jsonl.gz", "rt", encoding="utf-8") as f:
        rows = [json.loads(next(f)) for _ in range(20)]
    for row in rows:
        for c in row["contexts"][:5]:
            one = relevance_scores(row["question_text"], [c["paragraph_text"]])
            # the general path, on the text with an empty neighbour (which scores 0, so the max is the text's)
            two = relevance_scores(row["question_text"], [c["paragraph_text"], ""])
            assert one == [1.0 if two[0] > 0 else 0.0]
        assert relevance_scores("Who?", [row["contexts"][0]["paragraph_text"]], extra_terms=[["who"]]) == relevance_scores("Who?", [row["contexts"][0]["paragraph_text"], ""], extra_terms=[["who"], []])[:1]
