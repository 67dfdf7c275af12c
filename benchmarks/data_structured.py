"""Rebuild the structured-context benchmark samples from public sources you have on disk.

Nothing fetched is committed (project rule); this script turns local copies into a
cache of JSON Lines that ``benchmarks/bench_structured.py`` reads. Sources:

* tables: WikiTableQuestions (https://github.com/ppasupat/WikiTableQuestions, CC BY-SA 4.0):
  ``csv/*/*.csv`` tables and the ``data/pristine-unseen-tables.tsv`` questions; apart, with
  ``--fetaqa``: FeTaQA's test questions (https://github.com/Yale-LILY/FeTaQA, CC BY-SA 4.0),
  ``data/fetaQA-v1_test.jsonl``, judged by their highlighted cells;
* JSON: the same tables as JSON records (a list of row objects, as a SQL or search
  tool returns them) and the recorded GitHub REST API responses of octokit/fixtures
  (https://github.com/octokit/fixtures, MIT), ``scenarios/api.github.com/*/normalized-fixture.json``,
  asked for a value of an object and for a value of an object nested in it;
* logs: Loghub (https://github.com/logpai/loghub, free for research; see its LICENSE):
  ``<System>/<System>_2k.log`` with ``_2k.log_structured.csv`` for each line's level;
* code: the Python standard library of the running interpreter (PSF licence), ``*.py``.

Questions are derived mechanically (documented per kind in ``bench_structured.py``),
seeded, so a rebuild gives the same samples.

Usage::

    python benchmarks/data_structured.py --fetaqa PATH --tables 300 --out ~/.cache/tokenslim/structured_fetaqa
    python benchmarks/data_structured.py --wtq PATH --octokit PATH --loghub PATH [--stdlib PATH]
        [--out DIR]   # default ~/.cache/tokenslim/structured
        [--skip-tables 150]  # the next 150 WTQ questions: a draw no rule was written after

Each PATH is a checkout (or a ``git`` directory: files are then read with ``git show``).
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
import os
import random
import re
import subprocess
import sysconfig
from pathlib import Path
from typing import Iterator

DEFAULT_OUT = Path(os.environ.get("TOKENSLIM_STRUCTURED_DATA", Path.home() / ".cache" / "tokenslim" / "structured"))
SEED = 26


class Source:
    """Files of a checkout or of a bare git directory (read at HEAD)."""

    def __init__(self, path: str) -> None:
        self.path = Path(path)
        self.git = not (self.path / ".git").exists() and (self.path / "HEAD").exists()

    def list(self) -> list[str]:
        if self.git:
            out = subprocess.run(["git", "-C", str(self.path), "ls-tree", "-r", "--name-only", "HEAD"], capture_output=True, text=True, check=True)
            return out.stdout.splitlines()
        return [str(p.relative_to(self.path)) for p in self.path.rglob("*") if p.is_file()]

    def read(self, name: str) -> str:
        if self.git:
            out = subprocess.run(["git", "-C", str(self.path), "show", f"HEAD:{name}"], capture_output=True, check=True)
            return out.stdout.decode("utf-8", "replace")
        return (self.path / name).read_text(encoding="utf-8", errors="replace")


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip().lower()


def _markdown(rows: list[list[str]]) -> str:
    esc = [[c.replace("|", "\\|").replace("\n", " ") for c in r] for r in rows]
    lines = ["| " + " | ".join(esc[0]) + " |", "|" + "|".join("---" for _ in esc[0]) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in esc[1:]]
    return "\n".join(lines)


def _records(rows: list[list[str]]) -> str:
    head = [h or f"column{j}" for j, h in enumerate(rows[0])]
    return json.dumps([dict(zip(head, r)) for r in rows[1:]], indent=2, ensure_ascii=False)


def tables(src: Source, rng: random.Random, limit: int, skip: int = 0) -> Iterator[dict]:
    """WTQ questions whose answer is one cell of a table of >= 20 rows, and lookup questions
    ("What is the <column> of <first cell>?") on the same tables; each as CSV, markdown, JSON.
    ``skip``: pass over the first ``skip`` such questions (a draw that was never read, for an
    out-of-sample check of rules written after reading the first ones)."""
    qs = list(csv.reader(io.StringIO(src.read("data/pristine-unseen-tables.tsv")), delimiter="\t"))[1:]
    cache: dict[str, list[list[str]] | None] = {}
    n_wtq = 0
    seen_tables: set[str] = set()
    for qid, utt, ctx, target in qs:
        if n_wtq >= skip + limit:
            break
        if ctx not in cache:
            try:
                text = src.read(ctx)
                read = list(csv.reader(io.StringIO(text)))
            except Exception:  # noqa: BLE001 - a missing table is skipped
                read = []
            ok = len(read) >= 21 and len({len(r) for r in read}) == 1 and len(read[0]) >= 2
            cache[ctx] = read if ok else None
        table = cache[ctx]
        if table is None or "|" in target:
            continue
        rows = table
        cells = [_norm(c) for r in rows[1:] for c in r]
        if _norm(target) not in cells:
            continue  # counts, sums, comparisons: not extractable
        n_wtq += 1
        if n_wtq <= skip:
            seen_tables.add(ctx)  # its lookup question belongs to the skipped draw
            continue
        for fmt, text in (("csv", src.read(ctx)), ("markdown", _markdown(rows)), ("json_records", _records(rows))):
            kind = "json" if fmt == "json_records" else "table"
            yield {"id": f"{qid}/{fmt}", "type": kind, "format": fmt, "qkind": "wtq", "query": utt, "text": text, "gold": [target], "source": ctx}
        if ctx in seen_tables:
            continue
        seen_tables.add(ctx)
        lookup = lookup_question(rows, rng)
        if lookup is None:
            continue
        q, gold = lookup
        for fmt, text in (("csv", src.read(ctx)), ("markdown", _markdown(rows)), ("json_records", _records(rows))):
            kind = "json" if fmt == "json_records" else "table"
            yield {"id": f"lookup:{ctx}/{fmt}", "type": kind, "format": fmt, "qkind": "lookup", "query": q, "text": text, "gold": [gold], "source": ctx}


def fetaqa(src: Source, limit: int, split: str = "test") -> Iterator[dict]:
    """FeTaQA questions of ``split`` (https://github.com/Yale-LILY/FeTaQA, CC BY-SA 4.0: Wikipedia
    tables from ToTTo, free-form questions) on tables of >= 20 rows, as CSV, markdown and JSON
    records. The answer is a sentence, so the gold is the evidence: every highlighted cell of a
    data row, all of which must still be there (``gold_all``). Misses are read on ``dev``; ``test``
    is the yardstick."""
    n = 0
    for line in src.read(f"data/fetaQA-v1_{split}.jsonl").splitlines():
        if n >= limit:
            break
        rec = json.loads(line)
        rows = [[str(c) for c in r] for r in rec["table_array"]]
        if len(rows) < 21 or len({len(r) for r in rows}) != 1 or len(rows[0]) < 2:
            continue
        gold = list(dict.fromkeys(rows[i][j] for i, j in rec["highlighted_cell_ids"] if 0 < i < len(rows) and j < len(rows[i]) and rows[i][j].strip()))
        if not gold:
            continue
        n += 1
        out = io.StringIO()
        csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL).writerows(rows)  # quoted like WTQ's files
        for fmt, text in (("csv", out.getvalue()), ("markdown", _markdown(rows)), ("json_records", _records(rows))):
            kind = "json" if fmt == "json_records" else "table"
            yield {
                "id": f"fetaqa:{rec['feta_id']}/{fmt}", "type": kind, "format": fmt, "qkind": "fetaqa", "query": rec["question"],
                "text": text, "gold": gold, "gold_all": True, "source": f"{rec['table_page_title']}: {rec['table_section_title']}",
            }


def lookup_question(rows: list[list[str]], rng: random.Random) -> tuple[str, str] | None:
    """A lookup on a table (header + rows): "What is the <column> of <row's first cell>?" for a random
    row whose first cell is unique, and that cell's value; ``None`` when no row or column qualifies."""
    keys = [r[0] for r in rows[1:]]
    uniq = [i for i, k in enumerate(keys, 1) if keys.count(k) == 1 and len(k) > 1]
    if not uniq:
        return None
    i = rng.choice(uniq)
    cols = [j for j in range(1, len(rows[0])) if rows[i][j].strip() and rows[0][j].strip() and _norm(rows[i][j]) != _norm(rows[i][0])]
    if not cols:
        return None
    j = rng.choice(cols)
    return f"What is the {rows[0][j]} of {rows[i][0]}?", rows[i][j]


def _api_objects(src: Source) -> Iterator[tuple[str, dict, str, dict, str]]:
    """Per GitHub API response of at least 3,000 characters (pretty-printed), its first 3 objects
    that a ``full_name``/``title``/``login``/``name``/``sha``/``id`` names: (fixture file, recorded
    request, response text, object, naming key)."""
    names = sorted(n for n in src.list() if n.startswith("scenarios/api.github.com/") and n.endswith("normalized-fixture.json"))
    for name in names:
        for rec in json.loads(src.read(name)):
            body = rec.get("response")
            if not isinstance(body, (list, dict)):
                continue
            text = json.dumps(body, indent=2, ensure_ascii=False)
            if len(text) < 3000:
                continue
            objs = [o for o in (body if isinstance(body, list) else [body]) if isinstance(o, dict)]
            for o in objs[:3]:
                label_key = next((x for x in ("full_name", "title", "login", "name", "sha", "id") if isinstance(o.get(x), (str, int))), None)
                if label_key is not None:
                    yield name, rec, text, o, label_key


def _short_scalars(o: dict, but: str = "") -> list[str]:
    """The keys of ``o`` whose values are short strings or integers (not booleans), ``but`` aside."""
    return [x for x, v in o.items() if isinstance(v, (str, int)) and not isinstance(v, bool) and x != but and str(v).strip() and len(str(v)) < 80]


def api_json(src: Source, rng: random.Random) -> Iterator[dict]:
    """GitHub API responses (>= 3000 characters): "What is the <key> of <name>?" for scalar keys
    of an object in the response (its ``full_name``/``title``/``login``/``id`` names it)."""
    k = 0
    for name, rec, text, o, label_key in _api_objects(src):
        for key in rng.sample(cand := _short_scalars(o, label_key), min(3, len(cand))):
            k += 1
            yield {
                "id": f"octokit:{k}", "type": "json", "format": "api_response", "qkind": "lookup",
                "query": f"What is the {key} of {o[label_key]}?", "text": text, "gold": [str(o[key])], "source": f"{name} {rec.get('method')} {rec.get('path')}",
            }


def nested_json(src: Source) -> Iterator[dict]:
    """The same GitHub API responses, asked for a value one level down: "What is the <key> of the
    <field> of <name>?" for a scalar of a nested object (an issue's ``user``, a repository's
    ``owner``). ``path`` names where the answer must still be: the object whose ``label_key``
    is ``label``, its ``field``, that object's ``key``. Drawn with a seed of their own, so the
    samples before them are those of earlier rebuilds."""
    rng = random.Random(f"{SEED}-nested")
    k = 0
    for name, rec, text, o, label_key in _api_objects(src):
        fields = [f for f, v in o.items() if isinstance(v, dict) and v]
        for f in rng.sample(fields, min(2, len(fields))):
            for key in rng.sample(cand := _short_scalars(o[f]), min(2, len(cand))):
                k += 1
                yield {
                    "id": f"octokit-nested:{k}", "type": "json", "format": "api_response", "qkind": "nested",
                    "query": f"What is the {key} of the {f} of {o[label_key]}?", "text": text, "gold": [str(o[f][key])],
                    "path": {"label_key": label_key, "label": o[label_key], "field": f, "key": key},
                    "source": f"{name} {rec.get('method')} {rec.get('path')}",
                }


_LEVELS = {"ERROR", "FATAL", "SEVERE", "CRITICAL", "E", "F", "CRIT", "ALERT", "EMERG"}  # errors, not warnings
_ID = re.compile(r"[A-Za-z_./:-]*\d[\w./:-]*")


def logs(src: Source, rng: random.Random, window: int) -> Iterator[dict]:
    """Windows of ``window`` lines of each Loghub 2k sample. Per window: an incident question
    (gold: every line whose Level column is an error level: ERROR, FATAL, SEVERE, CRITICAL, logcat E/F...) and an identifier question
    ("What happened to <id>?", an id with a digit found on 1-3 lines; gold: those lines)."""
    names = sorted(n for n in src.list() if n.endswith("_2k.log"))
    for name in names:
        system = name.split("/")[0]
        lines = src.read(name).splitlines(keepends=True)
        try:
            struct = list(csv.DictReader(io.StringIO(src.read(name + "_structured.csv"))))
        except Exception:  # noqa: BLE001
            struct = []
        level = [(r.get("Level") or "").strip("[] ").upper() for r in struct] if struct and "Level" in struct[0] else None
        for w in range(0, len(lines) - window + 1, window):
            part = lines[w : w + window]
            text = "".join(part)
            errs = [ln.rstrip("\r\n") for k, ln in enumerate(part) if level is not None and w + k < len(level) and level[w + k] in _LEVELS]
            if level is not None:
                yield {"id": f"{system}:{w}:errors", "type": "log", "format": system, "qkind": "errors", "query": "Which errors occurred?", "text": text, "gold": errs, "source": name}
            counts: dict[str, list[int]] = {}
            for k, ln in enumerate(part):
                for tok in set(_ID.findall(ln)):
                    tok = tok.strip("./:-")
                    if len(tok) >= 6 and not re.fullmatch(r"[\d:.,-]+", tok):
                        counts.setdefault(tok, []).append(k)
            ids = sorted(t for t, ks in counts.items() if 1 <= len(ks) <= 3)
            if ids:
                tok = rng.choice(ids)
                yield {
                    "id": f"{system}:{w}:id", "type": "log", "format": system, "qkind": "identifier", "query": f"What happened to {tok}?",
                    "text": text, "gold": [part[k].rstrip("\r\n") for k in counts[tok]], "source": name,
                }


def code(root: Path, rng: random.Random, limit: int) -> Iterator[dict]:
    """Python stdlib modules of 6,000-60,000 characters. Per module, two functions with a
    docstring: "What does <name> do?" (named) and the docstring's first sentence with the
    name taken out (described). Gold: the function's whole source."""
    import ast

    files = sorted(p for p in root.glob("*.py") if 6000 <= p.stat().st_size <= 60000)
    rng.shuffle(files)
    n = 0
    for p in files:
        if n >= limit:
            break
        text = p.read_text(encoding="utf-8", errors="replace")
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        lines = text.splitlines(keepends=True)
        funcs = []
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("__"):
                doc = ast.get_docstring(node)
                size = (node.end_lineno or node.lineno) - node.lineno
                if doc and 4 <= size <= 80 and len(doc.split(".")[0].split()) >= 5:
                    funcs.append((node, doc))
        if len(funcs) < 2:
            continue
        n += 1
        for node, doc in rng.sample(funcs, 2):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
            src = "".join(lines[start : node.end_lineno])
            first = doc.split(".")[0].strip().replace("\n", " ")
            described = re.sub(r"\b" + re.escape(node.name) + r"\b", "it", first)
            for qkind, q in (("named", f"What does {node.name} do?"), ("described", f"Which function does this: {described}?")):
                yield {"id": f"{p.name}:{node.name}:{qkind}", "type": "code", "format": "python", "qkind": qkind, "query": q, "text": text, "gold": [src], "source": f"stdlib/{p.name}"}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wtq")
    ap.add_argument("--octokit")
    ap.add_argument("--loghub")
    ap.add_argument("--fetaqa", help="a FeTaQA checkout: build its draw alone (with --out, e.g. ~/.cache/tokenslim/structured_fetaqa)")
    ap.add_argument("--fetaqa-split", default="test", choices=("dev", "test"), help="FeTaQA split (dev: for reading misses)")
    ap.add_argument("--stdlib", default=sysconfig.get_paths()["stdlib"])
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    ap.add_argument("--tables", type=int, default=150, help="WTQ (or FeTaQA) questions kept")
    ap.add_argument("--skip-tables", type=int, default=0, help="WTQ questions passed over first (a fresh draw: 150)")
    ap.add_argument("--modules", type=int, default=60, help="stdlib modules used")
    ap.add_argument("--window", type=int, default=400, help="log lines per sample")
    args = ap.parse_args(argv)
    if not args.fetaqa and not (args.wtq and args.octokit and args.loghub):
        ap.error("give --wtq, --octokit and --loghub, or --fetaqa")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.fetaqa:
        samples = list(fetaqa(Source(args.fetaqa), args.tables, args.fetaqa_split))
    else:
        rng = random.Random(SEED)
        samples = list(tables(Source(args.wtq), rng, args.tables, args.skip_tables))
        samples += list(api_json(Source(args.octokit), rng))
        samples += list(logs(Source(args.loghub), rng, args.window))
        samples += list(code(Path(args.stdlib), rng, args.modules))
        samples += list(nested_json(Source(args.octokit)))
    path = out / "samples.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for s in samples:
            f.write(json.dumps(s, ensure_ascii=False) + "\n")
    counts: dict[str, int] = {}
    for s in samples:
        counts[f"{s['type']}/{s['qkind']}"] = counts.get(f"{s['type']}/{s['qkind']}", 0) + 1
    print(f"{len(samples)} samples -> {path}: {counts}")


if __name__ == "__main__":
    main()
