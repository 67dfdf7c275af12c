"""Structured-context benchmark: tables, JSON, code and logs through ``default_pipeline()``.

Samples come from ``benchmarks/data_structured.py`` (real public data rebuilt locally:
WikiTableQuestions tables, GitHub API responses of octokit/fixtures, Loghub logs, the
Python standard library). Per type and question kind we report, in cl100k_base tokens
of the chunk text (each sample is one chunk):

* ratio = sum of tokens before / sum of tokens after;
* answer kept, with a Wilson 95% interval (``tokenslim.bench.metrics.wilson_ci``):
  tables: a gold answer string is in the output (``contains_answer``, after the elision
  markers are taken out, so "… 3 rows dropped" never counts as "3"), or is a whole cell
  (one-character answers such as "-" normalise to nothing); JSON: the same over the
  parsed output's keys and values (markers left out), so an escaped ``\n`` is a newline;
  code: the gold function's whole source is in the output; logs: every gold line
  (all error/warning lines for ``errors``; the lines naming the id for ``identifier``)
  is an output line; a FeTaQA question (``gold_all``): every highlighted cell, each judged
  as a table answer; a value nested in an API object (``path``): still at its path;
* JSON: share of outputs that parse; p50 / p95 ms of ``pipeline.run`` and of the
  reduce_structured stage alone; p50 on the samples of 8k-12k tokens;
* ``--pipeline structured`` runs ReduceStructured + CompressDocuments alone: StripHTML
  (first in the default pipeline) flattens a source file that holds HTML strings;
* the peer: ``BM25 lines``, the best BM25 lines of the input (rank-bm25 through
  ``tokenslim._internal.relevance.bm25_scores``; a table keeps its header line) in
  input order, filled up to tokenslim's own output tokens for that sample (never more).

Usage::

    python benchmarks/data_structured.py --wtq ... --octokit ... --loghub ...   # once
    flock /tmp/tokenslim-bench.lock python benchmarks/bench_structured.py [--data DIR] [--limit N] [--out results/structured.json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import shlex
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from data_structured import DEFAULT_OUT  # noqa: E402

from tokenslim import Pipeline, default_pipeline, get_tokenizer  # noqa: E402
from tokenslim._internal.relevance import bm25_scores, terms  # noqa: E402
from tokenslim.bench.metrics import contains_answer, wilson_ci  # noqa: E402
from tokenslim.bench.report import portable_path  # noqa: E402

_MARKER = re.compile(r"…[^\"|\n,<]*")


_SEPARATOR = re.compile(r'"\s*[,:]\s*"|"\s*,|,\s*"|[|\t\n]')


def _strip_markers(text: str) -> str:
    """Markers out, and field separators (``","``, ``|``, tabs) made spaces, so a cell
    is a word sequence of its own for ``contains_answer`` (which drops punctuation)."""
    return _SEPARATOR.sub(" ", _MARKER.sub(" ", text))


def cell_recall(sample: dict[str, Any], out: str) -> float:
    """The share of a ``gold_all`` sample's evidence cells that ``out`` keeps."""
    return sum(kept({**sample, "gold": [g], "gold_all": False}, out) for g in sample["gold"]) / len(sample["gold"])


def kept(sample: dict[str, Any], out: str) -> bool:
    if sample.get("gold_all"):  # evidence cells (FeTaQA): every one of them, each judged as an answer
        return all(kept({**sample, "gold": [g], "gold_all": False}, out) for g in sample["gold"])
    kind = sample["type"]
    if kind == "code":
        return all(g in out for g in sample["gold"])
    if kind == "log":
        lines = set(out.splitlines())
        return all(g in lines for g in sample["gold"])
    if kind == "json":
        # the values a reader of the parsed output sees (escapes such as \n decoded)
        try:
            parsed = json.loads(out)
        except ValueError:
            parsed = None
        if "path" in sample:  # a nested value: still at its path, not just somewhere
            return parsed is not None and _at_path(parsed, sample["path"], sample["gold"][0])
        values = [v for v in _scalars(parsed) if ELLIPSIS not in v] if parsed is not None else [out]
        if any(g.strip() == v.strip() for g in sample["gold"] for v in values):
            return True
        return contains_answer("\n".join(values), sample["gold"])
    cells = [c.strip() for c in re.split(r'[|\n]|","', out)]
    if any(g.strip() == c.strip('"') for g in sample["gold"] for c in cells):
        return True  # a one-character answer ("-", "A") is a whole cell
    return contains_answer(_strip_markers(out), sample["gold"])


ELLIPSIS = "\u2026"


def _at_path(value: Any, path: dict[str, Any], gold: str) -> bool:
    """Whether an object whose ``label_key`` is ``label`` still holds ``gold`` at ``field.key``."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            inner = v.get(path["field"])
            if v.get(path["label_key"]) == path["label"] and isinstance(inner, dict) and path["key"] in inner and str(inner[path["key"]]) == gold:
                return True
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False


def _scalars(value: Any) -> list[str]:
    """Every key and scalar of a parsed JSON value, as text (iterative)."""
    out: list[str] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            out.extend(str(k) for k in v)
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        else:
            out.append("" if v is None else str(v))
    return out


def bm25_lines(sample: dict[str, Any], budget: int, count: Any) -> str:
    """The peer: header + best BM25 lines, in input order, within ``budget`` tokens."""
    lines = sample["text"].splitlines(keepends=True)
    head = 0
    if sample["type"] == "table":
        head = 2 if sample["format"] == "markdown" else 1
    keep = list(range(min(head, len(lines))))
    used = sum(count(lines[i]) for i in keep)
    scores = bm25_scores(terms(sample["query"]), lines)
    for i in sorted(range(head, len(lines)), key=lambda i: -scores[i]):
        c = count(lines[i])
        if used + c > budget:
            continue
        keep.append(i)
        used += c
    return "".join(lines[i] for i in sorted(keep))


def _parses(text: str) -> bool:
    try:
        json.loads(text)
        return True
    except ValueError:
        return False


def _pipeline(kind: str) -> Pipeline:
    if kind == "default":
        return default_pipeline()
    from tokenslim.stages import CompressDocuments, ReduceStructured

    return Pipeline([ReduceStructured(), CompressDocuments()])


def run(samples: list[dict[str, Any]], pipeline: str = "default") -> dict[str, Any]:
    pipe = _pipeline(pipeline)
    tok = get_tokenizer()
    count = tok.count
    pipe.run("warm up", ["warm up text", '{"a": [1, 2, 3]}'])
    rows: dict[str, dict[str, Any]] = {}
    for s in samples:
        t0 = time.perf_counter()
        r = pipe.run(s["query"], [s["text"]])
        ms = (time.perf_counter() - t0) * 1000
        stage_ms = next(rep.seconds for rep in r.report if rep.name == "reduce_structured") * 1000
        out = r.chunks[0].text if r.chunks else ""
        before, after = count(s["text"]), count(out)
        peer = bm25_lines(s, after, count)
        for key in (f"{s['type']}", f"{s['type']}/{s['qkind']}", f"{s['type']}/{s['qkind']}/{s['format']}"):
            row = rows.setdefault(key, {"before": 0, "after": 0, "peer_after": 0, "kept": [], "peer_kept": [], "ms": [], "stage_ms": [], "ms_10k": [], "parses": [], "peer_parses": [], "cells": [], "peer_cells": []})
            row["before"] += before
            row["after"] += after
            row["peer_after"] += count(peer)
            applies = bool(s["gold"]) or s["type"] != "log"
            row["kept"].append(float(kept(s, out)) if applies else None)
            row["peer_kept"].append(float(kept(s, peer)) if applies else None)
            row["ms"].append(ms)
            row["stage_ms"].append(stage_ms)
            if 8000 <= before <= 12000:
                row["ms_10k"].append(ms)
            if s.get("gold_all"):  # the share of the evidence cells kept, beside "all of them"
                row["cells"].append(cell_recall(s, out))
                row["peer_cells"].append(cell_recall(s, peer))
            if s["type"] == "json":
                row["parses"].append(float(_parses(out)))
                row["peer_parses"].append(float(_parses(peer)))
    table: dict[str, Any] = {}
    for key, row in sorted(rows.items()):
        ci, pci = wilson_ci(row["kept"]), wilson_ci(row["peer_kept"])
        q = statistics.quantiles(row["ms"], n=20) if len(row["ms"]) >= 2 else row["ms"] * 19
        table[key] = {
            "samples": len(row["ms"]),
            "tokens_before": row["before"],
            "tokens_after": row["after"],
            "ratio": round(row["before"] / max(1, row["after"]), 2),
            "answer_kept": {"mean": round(ci.mean, 4), "low": round(ci.low, 4), "high": round(ci.high, 4), "n": ci.n},
            "peer_bm25_lines": {
                "tokens_after": row["peer_after"],
                "ratio": round(row["before"] / max(1, row["peer_after"]), 2),
                "answer_kept": {"mean": round(pci.mean, 4), "low": round(pci.low, 4), "high": round(pci.high, 4), "n": pci.n},
            },
            "p50_ms": round(statistics.median(row["ms"]), 2),
            "p95_ms": round(q[18], 2),
            "stage_p50_ms": round(statistics.median(row["stage_ms"]), 2),
            "p50_ms_8k_12k_tokens": round(statistics.median(row["ms_10k"]), 2) if row["ms_10k"] else None,
            "samples_8k_12k_tokens": len(row["ms_10k"]),
        }
        if row["cells"]:
            table[key]["evidence_cells_kept"] = round(statistics.mean(row["cells"]), 4)
            table[key]["peer_bm25_lines"]["evidence_cells_kept"] = round(statistics.mean(row["peer_cells"]), 4)
        if row["parses"]:
            table[key]["json_parses"] = round(sum(row["parses"]) / len(row["parses"]), 4)
            table[key]["peer_json_parses"] = round(sum(row["peer_parses"]) / len(row["peer_parses"]), 4)
    return table


def _print(table: dict[str, Any]) -> None:
    head = f"{'type/question/format':<34}{'n':>5}{'ratio':>8}  {'answer kept [Wilson 95%]':<28}{'peer ratio':>11}  {'peer kept':<24}{'p50 ms':>8}{'stage':>7}{'@10k':>7}"
    print(head)
    print("-" * len(head))
    for key, row in table.items():
        a, p = row["answer_kept"], row["peer_bm25_lines"]["answer_kept"]
        ak = f"{a['mean'] * 100:.1f}% [{a['low'] * 100:.1f}, {a['high'] * 100:.1f}]" if a["n"] else "n/a"
        pk = f"{p['mean'] * 100:.1f}% [{p['low'] * 100:.1f}, {p['high'] * 100:.1f}]" if p["n"] else "n/a"
        ten = f"{row['p50_ms_8k_12k_tokens']:.1f}" if row["p50_ms_8k_12k_tokens"] is not None else "-"
        print(f"{key:<34}{row['samples']:>5}{row['ratio']:>7.2f}x  {ak:<28}{row['peer_bm25_lines']['ratio']:>10.2f}x  {pk:<24}{row['p50_ms']:>8.1f}{row['stage_p50_ms']:>7.1f}{ten:>7}")
        if "evidence_cells_kept" in row:
            print(f"{'':<34}evidence cells kept: tokenslim {row['evidence_cells_kept'] * 100:.1f}%, peer {row['peer_bm25_lines']['evidence_cells_kept'] * 100:.1f}%")
        if "json_parses" in row:
            print(f"{'':<34}JSON parses: tokenslim {row['json_parses'] * 100:.1f}%, peer {row['peer_json_parses'] * 100:.1f}%")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(DEFAULT_OUT), help="folder holding samples.jsonl.gz (data_structured.py --out)")
    ap.add_argument("--limit", type=int, default=None, help="first N samples of each type")
    ap.add_argument("--types", default="table,json,code,log")
    ap.add_argument("--pipeline", default="default", choices=["default", "structured"],
                    help="default_pipeline(), or ReduceStructured + CompressDocuments alone (no StripHTML, which flattens code holding HTML strings)")
    ap.add_argument("--out", default=str(ROOT / "results" / "structured.json"))
    args = ap.parse_args(argv)
    path = Path(args.data) / "samples.jsonl.gz"
    if not path.exists():
        sys.exit(f"no samples at {path}; build them with benchmarks/data_structured.py (see its docstring)")
    with gzip.open(path, "rt", encoding="utf-8") as f:
        samples = [json.loads(line) for line in f]
    wanted = args.types.split(",")
    picked: list[dict[str, Any]] = []
    for t in wanted:
        of_type = [s for s in samples if s["type"] == t]
        picked += of_type[: args.limit] if args.limit else of_type
    table = run(picked, args.pipeline)
    _print(table)
    shown = [portable_path(a) for a in (argv if argv is not None else sys.argv[1:])]
    command = "python benchmarks/bench_structured.py " + " ".join(a if a.startswith("~/") else shlex.quote(a) for a in shown)
    print(f"command: {command}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"command": command, "tokenizer": "cl100k_base", "results": table}, indent=1) + "\n")


if __name__ == "__main__":
    main()
