"""ReduceStructured's learned table decisions (every row or a few; the answer's column), their rules
and fallbacks. Quality figures come from benchmarks/bench_structured.py on WikiTableQuestions."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tokenslim._internal.structured import ELLIPSIS, reduce_text
from tokenslim._internal.structured import learned
from tokenslim._internal.structured._select import Query, select
from tokenslim.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def _races() -> list[list[str]]:
    """A season of races: the winner's column is not named by "who won the most?"."""
    rows = [["No", "Date", "Race", "Track", "Winner", "Reports"]]
    winners = ["Justin Allgaier", "Brad Keselowski", "Carl Edwards", "Justin Allgaier", "Kyle Busch"]
    for i in range(1, 31):
        rows.append([str(i), f"2008-{1 + i % 12:02d}-{1 + i % 27:02d}", f"Race {i} 300", f"Speedway {i % 9}", winners[i % 5], "Report"])
    return rows


def _films() -> list[list[str]]:
    """Films by year: "the most ... prior to 1994" names a year that only filters."""
    rows = [["Title", "Year", "Director", "Gross"]]
    for i in range(30):
        year = 1988 + i % 12
        rows.append([f"Picture {chr(65 + i % 26)}{i}", str(year), f"Director {i}", f"${(i * 37) % 100 + 10} million"])
    rows[4][3] = "$390 million"  # 1991: the best before 1994
    rows[10][3] = "$500 million"  # 1997: the best of all
    return rows


def _csv(rows: list[list[str]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def test_the_shipped_model_reads_this_code_s_features() -> None:
    data = json.loads(learned.MODEL_PATH.read_text(encoding="utf-8"))
    assert tuple(data["columns"]["model"]["features"]) == learned.COLUMN_FEATURES
    assert tuple(data["rows"]["model"]["features"]) == learned.ROW_FEATURES
    assert 0 < data["columns"]["threshold"] < 1 and 0 < data["rows"]["threshold"] < 1
    assert "training.tsv" in data["meta"]["trained_on"]  # WTQ's training questions, never its test ones


def test_a_question_over_every_row_keeps_the_column_that_answers() -> None:
    """"Who won the most?" names no column: the learned scorer keeps Winner, which the rules drop."""
    rows = _races()
    header, body = rows[0], rows[1:]
    assert header.index("Winner") in learned.answer_columns(Query.of("Who won the most?"), header, body)
    out = list(csv.reader(io.StringIO(reduce_text(_csv(rows), "Who won the most?").text)))
    assert "Winner" in out[0] and len(out[0]) < len(header)
    assert sum(1 for r in out[1:] if r and ELLIPSIS not in r[0]) == 30  # every row: a comparison


def test_a_year_that_only_filters_leaves_the_choice_to_the_row_model(monkeypatch) -> None:
    """"Which film grossed the most prior to 1994?" names "1994", which the old rule took for the row
    asked about (it kept 1994's rows). Now no rule decides a number's hits: the row model does, and
    its threshold is what sends every row (where the best film before 1994 is) or the picked ones."""
    rows = _films()
    best = rows[4]
    assert int(best[1]) < 1994 and best[3] == "$390 million"
    units = [",".join(r) for r in rows[1:]]
    q = Query.of("Which film grossed the most prior to 1994?")
    sel = select(q, units, top_k=5, min_score=0.5)
    assert sel.keep and learned.rule_decision(q, units, sel) is None
    assert best[0] not in [rows[1 + i][0] for i in sel.keep]  # BM25's pick misses the answer
    part = learned._models()[1]
    monkeypatch.setattr(part, "threshold", 0.0)
    assert best[0] in reduce_text(_csv(rows), q.text).text
    monkeypatch.setattr(part, "threshold", 1.01)
    assert best[0] not in reduce_text(_csv(rows), q.text).text


def test_a_question_naming_its_row_by_an_identifier_stays_a_lookup() -> None:
    """An identifier other than a number names the row: the rule decides, not the model, even with an
    aggregate word ("total") in the question."""
    rows = [["id", "status", "total", "currency"]] + [[f"ord_{i:08x}", "paid", f"{10 + i}.50", "EUR"] for i in range(40)]
    units = [",".join(r) for r in rows[1:]]
    q = Query.of("What is the status and total of order ord_00000011?")
    assert learned.rule_decision(q, units, select(q, units, top_k=5, min_score=0.5)) is False
    out = reduce_text(_csv(rows), q.text).text
    assert "ord_00000011" in out and "ord_00000012" not in out


def test_a_count_follows_the_rule_not_the_model() -> None:
    rows = _races()
    units = [",".join(r) for r in rows[1:]]
    q = Query.of("How many races did Justin Allgaier win?")
    sel = select(q, units, top_k=5, min_score=0.5)
    assert learned.rule_decision(q, units, sel) == q.aggregates(units)


def test_row_features_have_one_value_per_name_and_read_the_name_cell() -> None:
    rows = _races()
    units = [",".join(r) for r in rows[1:]]
    q = Query.of("What is the Track of 17?")
    sel = select(q, units, top_k=5, min_score=0.5)
    f = learned.row_features(q, units, sel, rows[1:])
    assert f.shape == (len(learned.ROW_FEATURES),) and np.isfinite(f).all()
    assert f[learned.ROW_FEATURES.index("key_named")] == 1.0  # "17" is row 17's name cell
    g = learned.row_features(q, units, sel)  # no cells (an HTML-less caller): the feature is 0, nothing breaks
    assert g[learned.ROW_FEATURES.index("key_named")] == 0.0
    c = learned.column_features(q, rows[0], rows[1:])
    assert c.shape == (len(rows[0]), len(learned.COLUMN_FEATURES)) and np.isfinite(c).all()


def test_without_the_model_file_the_rules_decide(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(learned, "MODEL_PATH", tmp_path / "absent.json")
    learned._models.cache_clear()
    try:
        rows = _races()
        assert learned.answer_columns(Query.of("Who won the most?"), rows[0], rows[1:]) == []
        units = [",".join(r) for r in rows[1:]]
        q = Query.of("Which track hosted race 7 300?")
        sel = select(q, units, top_k=5, min_score=0.5)
        assert learned.every_row(q, units, sel) == q.aggregates(units)
    finally:
        learned._models.cache_clear()


def test_a_malformed_model_file_is_a_config_error(monkeypatch, tmp_path) -> None:
    bad = tmp_path / "table_model.json"
    bad.write_text(json.dumps({"columns": {"threshold": 0.1, "model": {"features": ["x"]}}}), encoding="utf-8")
    monkeypatch.setattr(learned, "MODEL_PATH", bad)
    learned._models.cache_clear()
    try:
        with pytest.raises(ConfigError, match="train_table_model"):
            learned.answer_columns(Query.of("Who won the most?"), ["a", "b"], [["1", "2"]])
    finally:
        learned._models.cache_clear()


def test_holds_term_agrees_with_terms() -> None:
    """The substring pre-test never hides a term: plurals, "-ies" words, accents and numbers."""
    from tokenslim._internal.relevance import terms

    q = Query.of("Which country has the most cities named Señor 12?")
    for cell in ["Countries", "city", "Cities of Spain", "senor", "SEÑORES", "112", "12", "12th", "", "country-wide", "cit"]:
        assert q.holds_term(cell) == bool(set(q.terms) & set(terms(cell))), cell


@pytest.mark.slow
def test_training_script_writes_a_model_the_stage_loads(tmp_path) -> None:
    """scripts/train_table_model.py on a small WTQ-shaped checkout of our own making: it runs end to
    end, twice to the same bytes (one thread, seeded), and the file loads."""
    pytest.importorskip("sklearn")
    wtq = tmp_path / "wtq"
    (wtq / "csv" / "t").mkdir(parents=True)
    qs = [["id", "utterance", "context", "targetValue"]]
    for t in range(12):
        rows = _races() if t % 2 else _films()
        (wtq / "csv" / "t" / f"{t}.csv").write_text(_csv(rows), encoding="utf-8")
        for k in range(6):
            r = rows[1 + (k * 5 + t) % 30]
            qs.append([f"q{t}_{k}", f"What is the {rows[0][2]} of {r[0]}?", f"csv/t/{t}.csv", r[2]])
            qs.append([f"w{t}_{k}", f"Which {rows[0][1].lower()} had the most {rows[0][3].lower()}?", f"csv/t/{t}.csv", r[1]])
    (wtq / "data").mkdir()
    (wtq / "data" / "training.tsv").write_text("\n".join("\t".join(q) for q in qs) + "\n", encoding="utf-8")
    outs = []
    for k in range(2):
        out = tmp_path / f"m{k}.json"
        subprocess.run([sys.executable, str(ROOT / "scripts" / "train_table_model.py"), "--wtq", str(wtq), "--out", str(out)],
                       check=True, capture_output=True, text=True, cwd=ROOT)
        outs.append(out.read_text(encoding="utf-8"))
    assert outs[0] == outs[1]
    data = json.loads(outs[0])
    assert tuple(data["columns"]["model"]["features"]) == learned.COLUMN_FEATURES
    assert tuple(data["rows"]["model"]["features"]) == learned.ROW_FEATURES
