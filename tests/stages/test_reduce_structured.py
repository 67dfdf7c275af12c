"""ReduceStructured as a stage: pipeline, records, history messages, config, errors, properties."""

from __future__ import annotations

import csv
import json
import re
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "structured"))
from _fixtures import PY_MODULE, csv_table, log_lines, markdown_table, orders_json  # noqa: E402

import tokenslim  # noqa: E402
from tokenslim import Chunk, Pipeline  # noqa: E402
from tokenslim._internal.structured import ELLIPSIS, reduce_text  # noqa: E402
from tokenslim.errors import ConfigError  # noqa: E402
from tokenslim.stages import CompressDocuments, ReduceStructured  # noqa: E402

Q_ORDER = "What is the status and total of order ord_00179f3a?"


def test_default_pipeline_reduces_json_and_keeps_it_whole_through_compression() -> None:
    prose = "Orders ship within two days of payment. Refunds take about a week to reach the card. " * 6
    r = tokenslim.default_pipeline().run(Q_ORDER, [orders_json(), prose])
    assert [s.name for s in r.report][3:5] == ["reduce_structured", "compress_documents"]
    j = next(c for c in r.chunks if c.metadata.get("tokenslim_structured") == "json")
    data = json.loads(j.text)
    assert [x["id"] for x in data["data"] if isinstance(x, dict)] == ["ord_00179f3a"]
    assert r.tokens_before > 10 * r.tokens_after / 2
    reasons = {d.reason for d in r.drops if d.stage == "reduce_structured"}
    assert reasons == {"structured_reduced", "irrelevant_items", "irrelevant_keys"}  # other orders, the kept order's items; its customer's email
    orig = r.original(j.id)
    assert orig is not None and orig.text == orders_json()


def test_every_dropped_unit_is_recorded() -> None:
    text = markdown_table()
    r = Pipeline([ReduceStructured()]).run("population of City137", [text])
    units = [d for d in r.drops if d.kind == "sentence"]
    assert sum(len(d.item.splitlines()) for d in units) == 199
    assert [d.detail for d in units] == ["137 units: row 1/200 .. row 137/200", "62 units: row 139/200 .. row 200/200"]


def test_structured_chunks_skip_compress_documents_alone() -> None:
    table = Chunk(markdown_table(), id="t", metadata={"tokenslim_structured": "markdown_table"})
    prose = Chunk("Alpha is a town. " * 80, id="p")
    r = Pipeline([CompressDocuments()]).run("population of City137", [prose, table])
    assert [c.id for c in r.chunks][-1] == "t" and r.chunks[-1].text == table.text
    assert not [d for d in r.drops if d.chunk_id == "t"]


def test_tool_messages_in_history_are_reduced() -> None:
    history = [
        {"role": "user", "content": "Look up my orders."},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "orders", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": orders_json()},
    ]
    r = tokenslim.default_pipeline().run(Q_ORDER, [], history=history)
    tool = r.history[-1]
    assert tool["tool_call_id"] == "call_1"
    data = json.loads(tool["content"])
    assert [x["id"] for x in data["data"] if isinstance(x, dict)] == ["ord_00179f3a"]
    d = next(d for d in r.drops if d.kind == "text" and d.reason == "structured_reduced")
    assert d.item["content"] == orders_json() and d.detail.startswith("history[2] (tool)")
    msgs = r.to_messages()
    assert msgs[2]["role"] == "tool" and json.loads(msgs[2]["content"])


def test_small_chunks_and_prose_untouched() -> None:
    r = Pipeline([ReduceStructured()]).run("q", ['{"a": [1, 2, 3]}', "plain prose. " * 100])
    assert not r.drops


def test_malformed_json_recorded_as_passed_through() -> None:
    bad = '{"data": [' + ", ".join(f'{{"id": {i}, "name": "item {i}"}}' for i in range(60)) + '], "next": }'
    r = Pipeline([ReduceStructured()]).run("item 7", [bad])
    assert r.chunks[0].text == bad and not r.drops
    assert r.chunks[0].metadata["structured_passed"] == ["malformed_json: not reduced: does not parse as JSON"]


def test_config_round_trip_and_validation() -> None:
    p = Pipeline([ReduceStructured(top_k=3, roles=("tool",))])
    cfg = p.to_config()
    assert cfg["steps"][0]["stage"] == "reduce_structured"
    q = Pipeline.from_config(json.loads(json.dumps(cfg)))
    assert q[0].get_params() == p[0].get_params() | {"roles": ["tool"]} or q[0].get_params()["top_k"] == 3
    assert repr(ReduceStructured(top_k=3)) == "ReduceStructured(top_k=3)"
    for bad in ({"top_k": 0}, {"min_score": 2}, {"roles": "tool"}, {"roles": ("robot",)}, {"min_tokens": -1}):
        with pytest.raises(ConfigError):
            ReduceStructured(**bad)


def test_ten_thousand_tokens_in_budget() -> None:
    text = log_lines(700)
    stage = Pipeline([ReduceStructured()])
    stage.run("blk_1300", [text])
    times = []
    for _ in range(5):
        t = time.perf_counter()
        stage.run("What happened to blk_1300?", [text])
        times.append(time.perf_counter() - t)
    assert sorted(times)[2] < 0.25  # generous on shared CI; the benchmark reports p50


def test_large_log_is_linear() -> None:
    text = log_lines(100_000, error_at=77_777)
    t = time.perf_counter()
    r = reduce_text(text, "error")
    assert time.perf_counter() - t < 30
    assert "blk_-4711" in r.text


_YAML = "services:\n" + "".join(f"  - name: svc-{i:03d}\n    image: app:{i}.0\n    ports:\n      - {8000 + i}\n" for i in range(20))
_SAMPLES = [orders_json(12), markdown_table(30), csv_table(30), log_lines(60), PY_MODULE, _YAML]


@settings(max_examples=60, deadline=None)
@given(
    sample=st.sampled_from(_SAMPLES),
    words=st.lists(st.sampled_from(["City7", "ord_00179f3a", "population", "blk_1030", "parse_header", "status", "total", "Cache", "svc-007", "the", "x"]), max_size=4),
    top_k=st.integers(1, 6),
    min_items=st.integers(1, 12),
)
def test_property_every_kept_line_is_original(sample: str, words: list[str], top_k: int, min_items: int) -> None:
    from tokenslim._internal.structured import Options

    r = reduce_text(sample, " ".join(words), Options(top_k=top_k, min_items=min_items))
    if not r.changed:
        assert r.text == sample
        return
    if r.kinds == ["json"]:
        _check_json_tokens(sample, r.text)
        return
    src = sample.splitlines()
    for ln in r.text.splitlines():
        if ELLIPSIS in ln:
            continue
        if ln in src:
            continue
        # a table whose columns were projected: each kept cell is an original cell
        assert r.kinds in (["csv"], ["markdown_table"]), ln
        cells = next(csv.reader([ln])) if r.kinds == ["csv"] else ln.strip("|").split("|")
        assert all(c in sample for c in cells), ln


def _check_json_tokens(src: str, out: str) -> None:
    """Every key and scalar of the output is a token of the input, byte for byte."""
    from tokenslim._internal.structured.jsondata import _TOKEN

    data = json.loads(out)
    assert data is not None
    src_tokens = {m.group() for m in _TOKEN.finditer(src)}
    out = re.sub(r'"\u2026": "\d+ keys? dropped"', "", out)  # the dropped-keys marker
    for m in _TOKEN.finditer(out):
        tok = m.group()
        if tok.isspace() or tok in "{}[]:,":
            continue
        assert tok in src_tokens or ELLIPSIS in tok, tok


@settings(max_examples=150, deadline=None)
@given(st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),  # NaN, Infinity: Python writes them
    lambda kids: st.lists(kids, max_size=12) | st.dictionaries(st.text(max_size=5), kids, max_size=30),
    max_leaves=120,
), st.sampled_from(["", "x1", "a b", "0"]))
def test_property_any_json_reduces_to_parsable_original_tokens(value: object, query: str) -> None:
    src = json.dumps(value, indent=1)
    from tokenslim._internal.structured import Options

    r = reduce_text(src, query, Options(min_items=2, max_keys=3))
    json.loads(r.text)
    if r.changed:
        _check_json_tokens(src, r.text)


@pytest.mark.parametrize("text", [
    '{"Results": [{"Results": 1, "id": "r1"}]}',  # read as the title "Results" of a "Title: text" chunk
    "| City | Population |\n|---|---|\n| Paris | 2,100,000 |\n| Lyon | 500,000 |\n| Nice | 340,000 |",
])
def test_small_structured_chunks_stay_whole_through_the_default_pipeline(text: str) -> None:
    """Under ``min_tokens`` a chunk is not reduced, but CompressDocuments must not cut it either
    (found by the fuzz benchmark: ``{"Results": [...]}`` lost its first key as a redundant title)."""
    r = tokenslim.default_pipeline().run("What is it?", [text])
    assert r.chunks[0].text == text
    assert r.chunks[0].metadata["tokenslim_structured"] in ("json", "markdown_table")
    prose = "Results: the results were good. Results matter."
    assert tokenslim.default_pipeline().run("What is it?", [prose]).chunks[0].metadata.get("tokenslim_structured") is None


def test_nan_and_infinity_values_keep_keys_and_values_paired() -> None:
    """``json.loads`` reads NaN and +/-Infinity (Python's ``json.dumps`` writes them): before they were
    tokens, the reducer skipped them, so keys and values shifted and the output was no longer JSON."""
    rows = [{"id": f"r{i}", "score": float("nan") if i % 3 else float("-inf"), "max": float("inf")} for i in range(30)]
    src = json.dumps({"count": 30, "rows": rows})
    from tokenslim._internal.structured import Options

    r = reduce_text(src, "What is the score of r17?", Options())
    assert r.changed
    data = json.loads(r.text)
    kept = [x for x in data["rows"] if isinstance(x, dict)]
    assert any(x["id"] == "r17" for x in kept)
    assert all(set(x) == {"id", "score", "max"} for x in kept)
    _check_json_tokens(src, r.text)


_PIECES = st.sampled_from(
    ['{"a": ', "[", "]", "}", ", ", '"x1"', "1.5e3", "null", "\n", "| a | b |\n", "|---|---|\n", "a,b,c\n", '"q,\n', "def f(x):\n", "    return x\n",
     "class C:\n", "2024-01-01 00:00:01 ERROR boom\n", "  - name: n1\n", "```python\n", "```\n", "<table><tr><td>1</td></tr>", "Traceback (most recent call last):\n", "\t", "é", "…"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=80), st.sampled_from(["", "x1", "n1 a", "f"]), st.integers(1, 4))
def test_fuzz_structured_pieces_never_crash(pieces: list[str], query: str, min_items: int) -> None:
    from tokenslim._internal.structured import Options

    text = "".join(pieces)
    r = reduce_text(text, query, Options(min_items=min_items, top_k=1))
    assert isinstance(r.text, str)
    if not r.changed:
        assert r.text == text
    if r.kinds == ["json"] and r.changed:
        json.loads(r.text)


def test_latest_assistant_message_is_kept_whole() -> None:
    older = {"role": "assistant", "content": "Here is the table:\n" + markdown_table()}
    latest = {"role": "assistant", "content": "And again:\n" + markdown_table()}
    r = Pipeline([ReduceStructured()]).run("population of City137", [], history=[{"role": "user", "content": "hi"}, older, latest])
    assert r.history[2]["content"] == latest["content"]
    assert "| City137 | Land4 | 6069 |" in r.history[1]["content"] and len(r.history[1]["content"]) < len(older["content"]) / 10
