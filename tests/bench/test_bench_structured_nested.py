"""The structured benchmark's nested-JSON questions (``benchmarks/data_structured.py``'s
``nested_json``) and how ``benchmarks/bench_structured.py`` judges them: the answer must still be at
its path, not merely somewhere in the output."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


def _issue(n: int, login: str) -> dict:
    return {"title": f"Test issue {n}", "number": n, "body": "x" * 400, "user": {"login": login, "id": 1000 + n, "type": "User"}}


def test_nested_questions_name_a_value_one_level_down(tmp_path: Path) -> None:
    data = _load("data_structured")
    fixture = tmp_path / "scenarios" / "api.github.com" / "issues" / "normalized-fixture.json"
    fixture.parent.mkdir(parents=True)
    issues = [_issue(n, f"user-{n}") for n in range(8)]
    fixture.write_text(json.dumps([{"method": "get", "path": "/issues", "response": issues}]))
    samples = list(data.nested_json(data.Source(str(tmp_path))))
    assert samples and all(s["qkind"] == "nested" for s in samples)
    assert samples == list(data.nested_json(data.Source(str(tmp_path))))  # seeded
    for s in samples:  # the first 3 issues, each asked about its user
        p = s["path"]
        issue = next(i for i in issues if i[p["label_key"]] == p["label"])
        assert p["field"] == "user" and s["gold"] == [str(issue["user"][p["key"]])]
        assert s["query"] == f"What is the {p['key']} of the user of {p['label']}?"


def test_a_nested_answer_counts_only_at_its_path() -> None:
    bench = _load("bench_structured")
    sample = {"type": "json", "gold": ["user-2"], "path": {"label_key": "title", "label": "Test issue 2", "field": "user", "key": "login"}}
    right = json.dumps([_issue(1, "user-1"), _issue(2, "user-2")])
    assert bench.kept(sample, right)
    # the same login elsewhere (another issue's user, a top-level key) is not the answer at its path
    moved = json.dumps([{"title": "Test issue 2", "user": {"login": "user-9", "…": "2 keys dropped"}}, {"title": "Test issue 3", "user": {"login": "user-2"}}, {"login": "user-2"}])
    assert not bench.kept(sample, moved)
    assert not bench.kept(sample, "not json")


def test_fetaqa_questions_need_every_highlighted_cell(tmp_path: Path) -> None:
    data = _load("data_structured")
    bench = _load("bench_structured")
    rows = [["Year", "Title", "Role"]] + [[str(2000 + i), f"Show {i}", f"Role {i}"] for i in range(25)]
    rec = {"feta_id": 7, "table_array": rows, "highlighted_cell_ids": [[0, 0], [10, 1], [10, 2], [11, 1]], "question": "What did she play in 2009?",
           "table_page_title": "Someone", "table_section_title": "Television"}
    small = {**rec, "feta_id": 8, "table_array": rows[:10]}  # under 20 rows: not drawn
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "fetaQA-v1_test.jsonl").write_text(json.dumps(small) + "\n" + json.dumps(rec) + "\n")
    samples = list(data.fetaqa(data.Source(str(tmp_path)), 10))
    assert [s["format"] for s in samples] == ["csv", "markdown", "json_records"]
    s = samples[0]
    assert s["gold"] == ["Show 9", "Role 9", "Show 10"] and s["gold_all"]  # the header cell is always kept
    assert bench.kept(s, s["text"]) and bench.cell_recall(s, s["text"]) == 1.0
    one_row = "\n".join(s["text"].splitlines()[:1] + [line for line in s["text"].splitlines() if "Show 9" in line])
    assert not bench.kept(s, one_row) and bench.cell_recall(s, one_row) == 2 / 3
