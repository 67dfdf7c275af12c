"""The structure-aware reducers: detection, JSON, tables, logs, code (pure functions)."""

from __future__ import annotations

import ast
import csv
import io
import json

from _fixtures import GO_FILE, PY_MODULE, csv_table, log_lines, markdown_table, orders_json

from tokenslim._internal.structured import ELLIPSIS, Options, reduce_text, segments
from tokenslim._internal.structured.detect import classify


def test_detection_per_kind() -> None:
    assert classify(orders_json()) == "json"
    assert classify('{"a": 1}\n{"a": 2}\n') == "jsonl"
    assert classify('{"a": 1, "b": [1, 2}') == "malformed_json"
    assert classify(markdown_table(10)) == "markdown_table"
    assert classify(csv_table(10)) == "csv"
    assert classify(csv_table(10, "\t")) == "csv"
    assert classify("<table><tr><th>a</th></tr><tr><td>1</td></tr></table>") == "html_table"
    assert classify(log_lines(50)) == "log"
    assert classify(PY_MODULE) == "python"
    assert classify(GO_FILE) == "code"
    assert classify("name: app\nversion: 2\nservices:\n  - web\n  - db\n") == "yaml"
    prose = "Paris is the capital of France. It has 2.1 million people, a river, and many museums.\nThe Seine flows through it."
    assert classify(prose) == "prose"


def test_transcripts_are_prose_not_yaml() -> None:
    # DialogSum's "#Person1#: ..." lines all open with "#": comments to YAML, which hold no data
    talk = "#Person1#: Hello, how are you?\n#Person2#: Fine: tired.\n#Person1#: Why?\n#Person2#: Work: too much of it.\n"
    assert classify(talk) == "prose"
    commented = "# service settings\n# owner: ops\nname: app\nport: 80\n# end\n"
    assert classify(commented) == "yaml"
    # nor is one of "Speaker: sentence" lines (each value three words or more, ending a sentence)
    said = "USER: I need a hotel in the north.\nSYSTEM: Which price range do you want?\nUSER: Something cheap please.\nSYSTEM: I found 3 hotels.\n"
    assert classify(said) == "prose"
    described = "name: app\ndescription: A small tool that does things.\nversion: 2\nowner: ops\n"
    assert classify(described) == "yaml"


def test_mixed_chunk_is_cut_into_parts() -> None:
    text = "Intro text here.\n\n" + markdown_table(20) + "\n\nSome prose between.\n\n```python\n" + PY_MODULE + "```\nThe end.\n"
    kinds = [s.kind for s in segments(text)]
    assert kinds == ["prose", "markdown_table", "prose", "python", "prose"]
    r = reduce_text(text, "What is the population of City13?")
    assert r.whole is None
    assert "Intro text here." in r.text and "Some prose between." in r.text and "The end." in r.text
    assert "| City13 | Land6 | 1481 |" in r.text
    assert "City14 |" not in r.text


def test_json_keeps_the_identified_item_and_parses() -> None:
    doc = orders_json()
    r = reduce_text(doc, "What is the status and total of order ord_00179f3a?")
    data = json.loads(r.text)
    kept = [x for x in data["data"] if isinstance(x, dict)]
    assert [x["id"] for x in kept] == ["ord_00179f3a"]
    assert data["data"][0] == f"{ELLIPSIS} 17 items dropped" and data["data"][-1] == f"{ELLIPSIS} 22 items dropped"
    assert data["has_more"] is False and data["url"] == "/v1/orders"
    assert len(r.text) * 10 < len(doc)
    # the order's own status and total answer; its customer and items are not reached
    assert kept[0]["customer"] == {"name": "Customer 17", ELLIPSIS: "1 key dropped"}
    assert kept[0]["items"] == [f"{ELLIPSIS} 3 items dropped"]
    assert {d[0] for d in r.dropped} == {"irrelevant_items", "irrelevant_keys"}
    assert any(d[1].startswith('key "items": nested array') and '"SKU-17-0"' in d[2] for d in r.dropped)


def test_json_keeps_a_nested_value_the_question_reaches() -> None:
    doc = orders_json()
    # named by its key
    r = reduce_text(doc, "What is the email of the customer of order ord_00179f3a?")
    kept = [x for x in json.loads(r.text)["data"] if isinstance(x, dict)]
    assert kept[0]["customer"] == {"name": "Customer 17", "email": "c17@example.com"}
    assert kept[0]["items"] == [f"{ELLIPSIS} 3 items dropped"]
    # reached by a word no scalar of the order holds
    r = reduce_text(doc, "Which SKU with qty 2 is in order ord_00179f3a?")
    kept = [x for x in json.loads(r.text)["data"] if isinstance(x, dict)]
    assert [i["sku"] for i in kept[0]["items"]] == ["SKU-17-0", "SKU-17-1", "SKU-17-2"]
    # named by a word of like meaning ("owns" -> owner) or stem ("assigned" -> assignee)
    repo = {"full_name": "octo/hello", "stars": 3, "owner": {"login": "octocat", "id": 7, "url": "https://x/octocat"}, "license": {"key": "mit", "name": "MIT License", "spdx_id": "MIT", "url": "https://x/licenses/mit"}}
    r = reduce_text(json.dumps(repo), "Who owns octo/hello?")
    assert json.loads(r.text)["owner"] == repo["owner"] and json.loads(r.text)["license"] == {"name": "MIT License", ELLIPSIS: "3 keys dropped"}
    issue = {"title": "Crash on start", "number": 12, "assignee": {"id": 9, "url": "https://x/u/9"}, "labels": [{"id": 1, "name": "bug"}, {"id": 2, "name": "crash"}]}
    r = reduce_text(json.dumps(issue), "Who is assigned to issue 12?")
    assert json.loads(r.text)["assignee"] == issue["assignee"] and json.loads(r.text)["labels"] == [f"{ELLIPSIS} 2 items dropped"]


def test_json_wide_object_keeps_what_names_a_nested_object_it_leaves_out() -> None:
    user = {"login": "octocat", "id": 7, **{f"{k}_url": f"https://api.example.com/users/octocat/{k}" for k in ("html", "repos", "gists", "events")}}
    issue = {"title": "Crash on start", "number": 12, **{f"field_{i}": f"https://api.example.com/x/{i}" for i in range(30)}, "user": user}
    r = reduce_text(json.dumps(issue), "Who opened the issue Crash on start?")
    out = json.loads(r.text)
    assert out["title"] == "Crash on start" and out["user"] == {"login": "octocat", ELLIPSIS: "5 keys dropped"}
    assert any(d[1] == 'key "user": nested object, 5 keys' and "repos_url" in d[2] for d in r.dropped)


def test_json_wide_map_of_named_objects_keeps_at_most_max_keys() -> None:
    # a map of 5,000 entities, each named: the named stand-ins share the max_keys room, they do not all stay
    doc = json.dumps({f"key{i}": {"name": f"n{i}", "v": i, "w": "abc"} for i in range(5000)})
    out = json.loads(reduce_text(doc, "What is the v of n17?").text)
    assert out["key17"] == {"name": "n17", "v": 17, "w": "abc"}
    assert len(out) == Options().max_keys + 1 and out[ELLIPSIS] == f"{5000 - Options().max_keys} keys dropped"


def test_json_nested_values_stay_when_the_question_reaches_nothing() -> None:
    doc = json.dumps({"data": {"a": {"x": 1, "y": 2}, "b": [1, 2, 3]}, "meta": {"page": 1}})
    r = reduce_text(doc, "What colour is the sky?")
    assert r.text == doc and not r.dropped


def test_json_scalars_are_original_tokens() -> None:
    items = ", ".join(f'{{"id": "x{i}", "v": 1.50e3, "s": "caf\\u00e9 {i}"}}' for i in range(20))
    doc = '{"rows": [' + items + "]}"
    r = reduce_text(doc, "value of x7")
    assert '"v": 1.50e3' in r.text and '"caf\\u00e9 7"' in r.text
    json.loads(r.text)


def test_json_without_query_keeps_one_example_per_shape() -> None:
    items = [{"a": i} for i in range(10)] + [{"b": i, "c": 1} for i in range(10)]
    r = reduce_text(json.dumps(items), "")
    data = json.loads(r.text)
    dicts = [x for x in data if isinstance(x, dict)]
    assert dicts == [{"a": 0}, {"b": 0, "c": 1}]


def test_malformed_json_passes_through() -> None:
    bad = '{"data": [' + ", ".join(f'{{"id": {i}}}' for i in range(50)) + '], "next": }'  # a value missing
    r = reduce_text(bad, "id 7")
    assert r.text == bad and not r.changed and r.passed and r.passed[0][0] == "malformed_json"


def test_deep_nesting_is_bounded() -> None:
    deep = "[" * 900 + "]" * 900
    r = reduce_text(deep, "x")  # json.loads may refuse it (RecursionError): passed through either way
    assert r.text == deep
    nested = '{"a": ' * 200 + '[' + ", ".join(str(i) for i in range(30)) + ']' + "}" * 200
    r = reduce_text(nested, "x")
    json.loads(r.text)


def test_jsonl_keeps_lines_byte_exact() -> None:
    lines = [json.dumps({"id": f"evt_{i:04d}", "kind": "click", "ms": i * 3}) for i in range(50)]
    text = "\n".join(lines) + "\n"
    r = reduce_text(text, "what happened in evt_0031?")
    out = r.text.splitlines()
    assert lines[31] in out and len(out) == 3  # the kept line shows the one shape
    for ln in out:
        json.loads(ln)
        assert ln in lines or ELLIPSIS in ln


def test_markdown_table_rows_and_marker() -> None:
    r = reduce_text(markdown_table(), "What is the population of City137?")
    lines = r.text.splitlines()
    assert lines[:2] == ["| City | Country | Population |", "|------|---------|-----------:|"]
    assert "| City137 | Land4 | 6069 |" in lines
    assert lines[2] == f"| {ELLIPSIS} 137 rows dropped | | |"
    assert all(ln.count("|") == 4 for ln in lines)


def test_csv_rows_parse_with_same_width() -> None:
    text = csv_table()
    r = reduce_text(text, "Who is the mayor of City42?")
    rows = list(csv.reader(io.StringIO(r.text)))
    assert rows[0] == ["city", "country", "population", "mayor"]
    assert ["City42", "Land0", "2554", "Mayor 42, Jr."] in rows
    assert {len(x) for x in rows} == {4}
    assert r.text.count(ELLIPSIS) == 2


def test_wide_table_drops_unneeded_columns() -> None:
    head = ["name"] + [f"metric{j}" for j in range(20)] + ["population"]
    rows = [",".join(head)] + [",".join([f"Town{i}"] + [str(i * j) for j in range(20)] + [str(5000 + i)]) for i in range(30)]
    r = reduce_text("\n".join(rows), "What is the population of Town7?")
    out = list(csv.reader(io.StringIO(r.text)))
    # the named column and the row's name, and at most the learned scorer's guesses at the answer's column
    assert out[0][0] == "name" and "population" in out[0] and len(out[0]) <= 4
    row = next(x for x in out if x and x[0] == "Town7")
    assert row[out[0].index("population")] == "5007"
    assert any(d[0] == "irrelevant_columns" for d in r.dropped)


def test_a_lookup_keeps_every_column_of_its_rows() -> None:
    """A few kept rows are cheap whole, and the answer's column need not be named by the question."""
    head = ["Pos", "No", "Driver", "Team", "Engine", "Laps", "Time/Retired", "Grid", "Laps Led", "Points"]
    rows = [",".join(head)] + [",".join([str(i), str(30 + i), f"Driver {i}", f"Team {i % 7}", "Honda", "85",
                                         f"+{i}.{i:02d}", str(i), "0", str(50 - i)]) for i in range(1, 26)]
    r = reduce_text("\n".join(rows), "How long did it take Driver 7 to finish?")
    out = list(csv.reader(io.StringIO(r.text)))
    assert out[0] == head and ["7", "37", "Driver 7", "Team 0", "Honda", "85", "+7.07", "7", "0", "43"] in out
    assert not any(d[0] == "irrelevant_columns" for d in r.dropped)


def test_order_questions_keep_the_neighbouring_rows() -> None:
    rows = ["Season,Winner"] + [f"{1960 + i},Team {chr(65 + i)}" for i in range(20)]
    r = reduce_text("\n".join(rows), "Who won after the 1975 winner?")
    out = list(csv.reader(io.StringIO(r.text)))
    assert ["1975", "Team P"] in out and ["1976", "Team Q"] in out and ["1974", "Team O"] in out
    plain = list(csv.reader(io.StringIO(reduce_text("\n".join(rows), "Who won in 1975?").text)))
    assert ["1976", "Team Q"] not in plain


def test_html_table_keeps_header_and_row() -> None:
    rows = "".join(f"<tr><td>City{i}</td><td>{i * 10}</td></tr>\n" for i in range(30))
    html = f"<table>\n<tr><th>City</th><th>Pop</th></tr>\n{rows}</table>"
    r = reduce_text(html, "population of City12")
    assert "<tr><th>City</th><th>Pop</th></tr>" in r.text and "<tr><td>City12</td><td>120</td></tr>" in r.text
    assert "City13<" not in r.text and r.text.endswith("</table>")


def test_log_keeps_errors_relevant_lines_and_counts_templates() -> None:
    text = log_lines()
    r = reduce_text(text, "What happened to block blk_1300?")
    lines = r.text.splitlines()
    assert any("ERROR" in ln and "blk_-4711" in ln for ln in lines)
    assert any("blk_1300 " in ln for ln in lines)
    assert any(ln.startswith(f"{ELLIPSIS} ") and "more lines like the line above" in ln for ln in lines)
    assert len(text) > 20 * len(r.text)
    src = set(text.splitlines())
    assert all(ln in src or ln.startswith(ELLIPSIS) for ln in lines)


def test_traceback_is_kept_whole() -> None:
    body = [f"2024-01-01 00:00:{i % 60:02d} INFO worker: tick {i}" for i in range(40)]
    tb = [
        "2024-01-01 00:01:00 ERROR worker: job failed",
        "Traceback (most recent call last):",
        '  File "job.py", line 3, in run',
        "    x = 1 / 0",
        "ZeroDivisionError: division by zero",
    ]
    text = "\n".join(body[:20] + tb + body[20:]) + "\n"
    r = reduce_text(text, "")
    for ln in tb:
        assert ln in r.text


def test_python_keeps_function_whole_and_stubs_the_rest() -> None:
    r = reduce_text(PY_MODULE, "What does parse_header return?")
    ast.parse(r.text)
    assert 'key, _, value = line.partition(":")' in r.text
    assert 'def render_table(rows):\n    """Render rows as text."""\n    ...  # ' in r.text
    assert "os.walk" not in r.text
    assert "import re\n" not in r.text  # re is used nowhere in the kept code
    assert any(d[0] == "irrelevant_code" for d in r.dropped)


def test_python_method_keeps_its_class_header() -> None:
    r = reduce_text(PY_MODULE, "How does Cache.get move the key?")
    ast.parse(r.text)
    assert "class Cache:" in r.text and "self.data.move_to_end(key)" in r.text
    assert "from collections import OrderedDict" in r.text


def test_go_braces() -> None:
    r = reduce_text(GO_FILE, "what does renderTable return?")
    assert 'out += strings.Join(r, " | ")' in r.text
    assert "func listFiles(path string) []string {\n\t// " in r.text
    assert "filepath.Walk" not in r.text


def test_prose_untouched() -> None:
    prose = "The quick brown fox jumps over the lazy dog. " * 40
    r = reduce_text(prose, "fox")
    assert r.text == prose and not r.kinds


def test_options_min_items() -> None:
    r = reduce_text(markdown_table(6), "City3", Options(min_items=8))
    assert not r.changed


def test_pipe_rows_inside_prose_are_a_table() -> None:
    rows = "\n".join(["City | Pop"] + [f"City{i} | {i * 10}" for i in range(40)])
    text = "# Cities\nPopulation of each city, from the census.\n" + rows + "\nSource: the census office.\n"
    r = reduce_text(text, "population of City12")
    assert r.kinds == ["csv"]
    assert r.text.splitlines() == [
        "# Cities", "Population of each city, from the census.", "City | Pop",
        f"{ELLIPSIS} 12 rows dropped | ", "City12 | 120", f"{ELLIPSIS} 27 rows dropped | ", "Source: the census office.",
    ]


def test_yaml_sequence_items_and_comment_markers() -> None:
    import yaml

    items = "".join(f"  - name: svc-{i:03d}\n    image: registry.example.com/app:{i}.0\n    replicas: {i % 4}\n" for i in range(30))
    text = "version: 3\nservices:\n" + items + "network: default\n"
    assert classify(text) == "yaml"
    r = reduce_text(text, "Which image does svc-017 run?")
    assert "  - name: svc-017\n    image: registry.example.com/app:17.0\n    replicas: 1\n" in r.text
    assert "  - name: svc-000\n" in r.text  # the example of the item shape
    assert f"  # {ELLIPSIS} 16 items dropped\n" in r.text and r.text.endswith("network: default\n")
    data = yaml.safe_load(r.text)
    assert [s["name"] for s in data["services"]] == ["svc-000", "svc-017"] and data["network"] == "default"


def test_yaml_mapping_keeps_the_asked_keys_and_names_the_dropped() -> None:
    import yaml

    settings = "".join(f"  FEATURE_{i:02d}_TIMEOUT: \"{i * 10}s\"\n" for i in range(40))
    text = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-settings\n  namespace: prod\ndata:\n" + settings
            + "  DATABASE_URL: postgres://db.internal:5432/app\n  LOG_LEVEL: info\n  retry:\n    attempts: 3\n    backoff: 2s\n")
    assert classify(text) == "yaml"
    r = reduce_text(text, "What is the DATABASE_URL of app-settings?")
    data = yaml.safe_load(r.text)
    assert data["data"] == {"DATABASE_URL": "postgres://db.internal:5432/app"}  # kept bytes mean what they meant
    assert data["metadata"] == {"name": "app-settings", "namespace": "prod"}  # a short mapping stays whole
    assert f"  # {ELLIPSIS} 40 keys dropped: FEATURE_00_TIMEOUT, FEATURE_01_TIMEOUT," in r.text and "and 34 more\n" in r.text
    assert f"  # {ELLIPSIS} 2 keys dropped: LOG_LEVEL, retry\n" in r.text
    assert all(line in text.splitlines() for line in r.text.splitlines() if ELLIPSIS not in line)
    assert sum(d[0] == "irrelevant_keys" for d in r.dropped) == 2
    # a question no key matches keeps the mapping whole: there is nothing to choose by
    assert reduce_text(text, "Is this safe?").text == text


def _f1_results() -> list[str]:
    head = ["Pos", "No", "Driver", "Constructor", "Laps", "Time/Retired", "Grid", "Points"]
    status = ["Ret", "DNS", "NC"]
    rows = [",".join(head)]
    for i in range(1, 27):
        pos = str(i) if i <= 10 else status[i % 3]
        rows.append(",".join([pos, str(40 + i), f"Driver {chr(64 + i)}", f"Team {i % 6}", str(70 - i), f"+{i}.5", str(i), str(max(0, 10 - i))]))
    return rows


def test_a_question_naming_no_row_keeps_every_row() -> None:
    """Nothing to pick rows by ("what engine did the winner use?" names no row): every row stays
    (a table reduced to its header answers nothing), in CSV, markdown and HTML alike."""
    rows = _f1_results()
    csv_text = "\n".join(rows)
    r = reduce_text(csv_text, "Which constructor had its car on the seventh grid slot?")
    out = list(csv.reader(io.StringIO(r.text)))
    assert len([row for row in out if row and row[0] != "" and ELLIPSIS not in row[0]]) == len(rows)
    assert not any(d[0] == "irrelevant_rows" for d in r.dropped)
    html = "<table>\n<tr><th>" + "</th><th>".join(rows[0].split(",")) + "</th></tr>\n" + "".join(
        "<tr><td>" + "</td><td>".join(row.split(",")) + "</td></tr>\n" for row in rows[1:]) + "</table>"
    assert reduce_text(html, "Which constructor had its car on the seventh grid slot?").text == html


def test_an_entity_question_over_every_row_keeps_the_name_column() -> None:
    """"Who ... the most" compares every row and answers with the row's name: the first text
    column after the first is kept with the compared one; a count ("how many") does without it."""
    text = "\n".join(_f1_results())
    out = list(csv.reader(io.StringIO(reduce_text(text, "Who had the most points?").text)))
    assert out[0] == ["Pos", "Driver", "Points"] and ["1", "Driver A", "9"] in out
    count = list(csv.reader(io.StringIO(reduce_text(text, "How many cars scored points?").text)))
    assert count[0] == ["Pos", "Points"]


def test_rows_tied_with_the_last_kept_one_are_kept() -> None:
    """Past ``top_k``, a row scoring exactly as the last one kept stays: a tie is not broken by position."""
    rows = ["Week,Film,Gross"] + [f"{w},{'Titanic' if 3 <= w <= 15 else f'Film {w}'},{1000 * w}" for w in range(1, 40)]
    r = reduce_text("\n".join(rows), "Which weeks was Titanic number one?")
    out = list(csv.reader(io.StringIO(r.text)))
    assert sum(row[1:2] == ["Titanic"] for row in out) == 13
