"""Nothing lost: invariants over default_pipeline() and each stage on real data.

Inputs are real retrieval sets from ../shared/data (HotpotQA, MultiHop-RAG, NQ) with
random subsets, orders and duplications of their chunks (Hypothesis, derandomized).
For every run:

* every input chunk is kept or recorded as dropped with a reason;
* kept text is faithful: for plain-text chunks, the kept text is an in-order
  subsequence of the original chunk's sentences (verbatim); a chunk that absorbed
  overlapping windows holds only text of those windows;
* the prompt never has more tokens than the input;
* when some chunk shares a word with the query, the output keeps at least one chunk,
  unless a token budget forces it out, and then every removal says ``over_budget``.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import tokenslim
from tokenslim import Chunk, Pipeline, Result
from tokenslim._internal.normalize import squash_spaces
from tokenslim._internal.relevance import terms
from tokenslim._internal.sentences import split_spans
from tokenslim.bench import datasets
from tokenslim.errors import BudgetExceeded
from tokenslim.html import looks_like_html
from tokenslim.stages import Budget, CompressDocuments, Dedupe, Reorder, StripHTML, SummarizeConversation, TrimTopK

from reliability_strategies import CI_SETTINGS, check_accounting

_EXAMPLES = [
    *datasets.hotpotqa(limit=25),
    *datasets.multihop_rag(),
    *datasets.nq(limit=10, passage="oracle"),
    *datasets.nq(limit=5),
]


@st.composite
def retrieval_sets(draw):
    """(query, chunks): a real example's chunks, subset + duplicated + shuffled."""
    ex = draw(st.sampled_from(_EXAMPLES))
    n = len(ex.chunks)
    picks = draw(st.lists(st.integers(0, n - 1), min_size=0, max_size=2 * n + 2))
    chunks = [ex.chunks[i] for i in picks]
    scored = draw(st.booleans())
    if not scored:  # drop retriever scores so relevance is computed
        chunks = [Chunk(text=c.text, id=c.id, metadata=c.metadata) for c in chunks]
    return ex.query, chunks


def _fold(text: str) -> str:
    return squash_spaces(text).strip()


def _is_subsequence(kept: str, original: str) -> bool:
    """True when ``kept`` is original sentences, in order, joined by whitespace."""
    rest = _fold(kept)
    for a, b in split_spans(original):
        s = _fold(original[a:b])
        if s and rest.startswith(s):
            rest = rest[len(s) :].lstrip()
    return rest == ""


def _only_text_of(kept: str, originals: list[str], k: int = 30) -> bool:
    """Every ``k``-character window of ``kept`` occurs in one of ``originals`` (whitespace folded)."""
    src = [_fold(o) for o in originals]
    s = _fold(kept)
    if any(s in o for o in src):
        return True
    return len(s) >= k and all(any(s[i : i + k] in o for o in src) for i in range(0, len(s) - k + 1, 5))


def check_faithful(result: Result, inputs: dict[str, Chunk]) -> None:
    """Kept text is verbatim text of the input (see the module docstring)."""
    for c in result.chunks:
        original = inputs[c.id].text
        if looks_like_html(original):
            continue
        merged = [str(i) for i in c.metadata.get("merged_ids", [])]
        if any(d.chunk_id == c.id and d.reason == "overlap_merged" for d in result.drops):
            members = [original, *(inputs[i].text for i in merged if i in inputs)]
            for a, b in split_spans(c.text):  # per sentence: compression may have joined two apart
                assert _only_text_of(c.text[a:b], members), f"{c.id}: merged text not made of its windows"
        else:
            assert _is_subsequence(c.text, original), f"{c.id}: kept text is not a subsequence of the original"


def _relevant(query: str, chunks: list[Chunk]) -> bool:
    q = set(terms(query))
    return any(q & set(terms(c.text)) for c in chunks)


def _check(result: Result, query: str, chunks: list[Chunk]) -> None:
    coerced = Result.create(query, chunks).chunks
    inputs = {c.id: c for c in coerced}
    check_accounting(result, list(inputs))
    check_faithful(result, inputs)
    assert result.tokens_after <= result.tokens_before
    for d in result.drops:
        assert d.reason and d.stage != "?", d


@settings(CI_SETTINGS, max_examples=250)
@given(retrieval_sets(), st.one_of(st.none(), st.integers(40, 2500)))
@example(case=(_EXAMPLES[0].query * 3, []), budget=40)  # the query alone is over budget: typed error
def test_default_pipeline_loses_nothing(case, budget):
    query, chunks = case
    pipe = tokenslim.default_pipeline(token_budget=budget)
    try:
        r = pipe.run(query, chunks)
    except BudgetExceeded as e:  # documented: the query alone does not fit the budget
        assert budget is not None and e.max_tokens == budget
        assert e.required_tokens > budget >= 0
        assert pipe.get_tokenizer().count(query) < e.required_tokens  # the framing counts too
        return
    _check(r, query, chunks)
    if chunks and _relevant(query, chunks) and not r.chunks:
        assert budget is not None, "no budget, relevant input, yet zero chunks out"
        last = {d.chunk_id: d.reason for d in r.drops if d.kind == "chunk"}
        assert "over_budget" in last.values(), f"zero chunks out and no over_budget drop: {set(last.values())}"
        assert r.report[-2].name == "budget" and r.report[-2].chunks_out == 0


STAGES = [
    StripHTML(),
    Dedupe(),
    Dedupe(threshold=0.5, min_overlap_chars=20),
    TrimTopK(),
    TrimTopK(k=3, cliff=0.5, mmr_lambda=0.5, max_tokens=300),
    CompressDocuments(),
    CompressDocuments(ratio=0.05, max_tokens=60),
    SummarizeConversation(),
    Budget(max_tokens=400),
    Reorder(order="lost_in_the_middle"),
]


@pytest.mark.parametrize("stage", STAGES, ids=[repr(s) for s in STAGES])
def test_each_stage_loses_nothing(stage):
    @settings(CI_SETTINGS, max_examples=100)
    @given(retrieval_sets())
    def run(case):
        query, chunks = case
        r = Pipeline([stage]).run(query, chunks)
        _check(r, query, chunks)

    run()


def test_budget_that_forces_everything_out_says_so():
    ex = datasets.hotpotqa(limit=1)[0]
    query = ex.query
    floor = Result.create(query, []).prompt_tokens()
    r = tokenslim.default_pipeline(token_budget=floor + 2).run(query, ex.chunks)
    assert r.chunks == []
    reasons = {d.chunk_id: d.reason for d in r.drops if d.kind == "chunk"}
    assert set(reasons) == {c.id for c in ex.chunks if c.id not in {d.chunk_id for d in r.drops if d.stage != "budget"}} | set(reasons)
    assert "over_budget" in reasons.values()
    assert r.tokens_after <= floor + 2


def test_faithfulness_checks_can_fail():
    # the checks above are not vacuous: an invented or reordered sentence is caught
    original = datasets.hotpotqa(limit=1)[0].chunks[0].text
    sents = [original[a:b] for a, b in split_spans(original)]
    assert len(sents) >= 2
    assert _is_subsequence(" ".join(sents[::2]), original)
    assert not _is_subsequence(" ".join(reversed(sents)), original)
    assert not _is_subsequence(sents[0] + " The answer is 42.", original)
    assert not _only_text_of(sents[0] + " and then something else happened entirely", [original])
