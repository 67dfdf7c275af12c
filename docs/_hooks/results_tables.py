"""Benchmark tables generated from ``results/*.json`` when the docs are built.

A page writes a marker such as ``<!-- results: compression results/compression_hotpotqa.json -->``
and this mkdocs hook (``hooks:`` in ``mkdocs.yml``) replaces it with the table rendered from
that file, headed by the command that produced it, so a figure on the site cannot drift from
its run. Rerun the command, commit the new json, rebuild: the page follows.

    python docs/_hooks/results_tables.py compression results/compression_nq.json   # print one table

Kinds (``RENDERERS``): ``compression`` (benchmarks/bench_compression.py; ``compression_rows``
for its older files), ``bench`` (a
``tokenslim bench`` run's bench.json, rendered by :func:`tokenslim.bench.report.markdown`;
``bench_summary`` for its changed rows and controls in a few columns),
``llama_cpp`` (benchmarks/bench_llama_cpp.py), ``langchain``, ``run_batch``, ``ray``,
``conversation``, ``html``, ``injection``, ``fuzz``, ``structured`` (benchmarks/bench_structured.py),
``pareto`` (``benchmarks/bench_compression.py --pareto``: one table per results/pareto_<dataset>.json),
``heldout`` (benchmarks/bench_relevance_heldout.py).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"^([ \t]*)<!--\s*results:\s*(\w+)\s+(\S+?)\s*-->[ \t]*$", re.M)


class ResultsError(ValueError):
    """A marker names an unknown kind or a results file that is missing or malformed."""


def _load(path: str) -> Any:
    p = ROOT / path
    if not p.is_file():
        raise ResultsError(f"results file {path!r} not found (marker in the docs)")
    return json.loads(p.read_text(encoding="utf-8"))


def _table(head: list[str], rows: list[list[str]], align: str | None = None) -> str:
    align = align or "l" + "r" * (len(head) - 1)
    sep = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(sep) + "|"]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(lines)


def _source(command: str | None, path: str) -> str:
    cmd = f"`{command}`" if command else "(command not recorded in the file)"
    return f"Command: {cmd}  \nSource: `{path}` (table generated from the file at build time)"


def _n(x: float | None, digits: int = 0) -> str:
    return "-" if x is None else f"{x:,.{digits}f}"


def _pct(q: dict[str, Any] | None) -> str:
    if not q or q.get("mean") is None:
        return "-"
    return f"{100 * q['mean']:.1f}% [{100 * q['low']:.1f}, {100 * q['high']:.1f}]"


# -- renderers ---------------------------------------------------------------------------------
def compression(path: str) -> str:
    """benchmarks/bench_compression.py: one table per input format, every system of that run."""
    d = _load(path)
    metric = {"answer_kept": "answer kept [95% CI]", "term_recall": "term recall [95% CI]"}.get(d.get("metric"), "quality")
    out = [_source(d.get("command"), path), ""]
    extra = [f"{k}={d[k]}" for k in ("limit", "ratio", "relevance") if d.get(k) is not None]
    if extra:
        out += [f"Settings: {', '.join(extra)}.", ""]
    for fmt, systems in d["formats"].items():
        budget = " (every system capped at BM25 top-3's tokens, per question)" if "@top-3" in fmt else ""
        out += [f"**{d['dataset']}, chunks given as `{fmt.split(' @')[0]}`{budget}**", ""]
        rows = []
        for name, s in systems.items():
            q = s.get("quality")
            kept = f" ({s['kept']}/{q['n']})" if s.get("kept") is not None and q else ""
            halves = " / ".join(_pct(h.get("quality")).split(" ")[0] for h in s.get("halves") or [])
            rows.append([name, _n(s["tokens_after"]), f"{s['ratio']:.2f}x", _pct(q) + kept, halves or "-",
                         _n(s.get("p50_ms"), 1)])
        out += [_table(["system", "tokens after", "ratio", metric, "halves", "p50 ms"], rows), ""]
    return "\n".join(out)


def compression_rows(path: str) -> str:
    """Older bench_compression.py files (a flat ``rows`` dict, before per-format tables)."""
    d = _load(path)
    rows = []
    for name, r in d["rows"].items():
        halves = " / ".join(f"{100 * h['quality']:.1f}%" for h in r.get("halves") or [])
        rows.append([name, _n(r["tokens_after"]), f"{r['ratio']:.2f}x",
                     f"{100 * r['quality']:.1f}% (of {r['denominator']})", halves or "-", _n(r.get("p50_ms"), 1)])
    return _source(d.get("command"), path) + "\n\n" + _table(
        ["system", "tokens after", "ratio", "answer kept", "halves", "p50 ms"], rows)


def bench(path: str) -> str:
    """A `tokenslim bench` run (bench.json), rendered by the library's own report writer."""
    from tokenslim.bench.report import markdown

    text = markdown(_load(path))
    # the report is a page of its own: demote its headings below the docs page's
    text = re.sub(r"^(#+) ", lambda m: "#" * min(6, len(m.group(1)) + 2) + " ", text, flags=re.M)
    return f"Source: `{path}` (rendered at build time by `tokenslim.bench.report.markdown`)\n\n{text}"


def bench_summary(path: str) -> str:
    """A `tokenslim bench` run, the rows that change the prompt and the controls, in a few columns."""
    d = _load(path)

    def ci(x: dict[str, Any] | None, digits: int = 2, sign: bool = False) -> str:
        if not x or x.get("mean") is None:
            return ""
        f = f"{{:+.{digits}f}}" if sign else f"{{:.{digits}f}}"
        return f"{f.format(x['mean'])} [{f.format(x['low'])}, {f.format(x['high'])}]"

    rows = []
    for st in d["stages"]:
        if st["stage"] != "baseline" and not st.get("changed", True):
            continue
        red = st.get("token_reduction_pct")
        tokens = _n(st["tokens_model"]["mean"]) + (f" (-{red:.1f}%)" if red else "")
        ratio = "1" if st["stage"] == "baseline" else ci(st.get("prefill_ratio"))
        kv = f"{st['kv_mb_per_request']:.1f} / {st['kv_mb_allocated_per_request']:.1f}" if st.get("kv_mb_per_request") else "-"
        aic = (st.get("quality") or {}).get("answer_in_context")
        rows.append([st["stage"], tokens, _n(st["prefill_ms"]["p50"]), ratio, kv,
                     ci(aic) if st["stage"] != "baseline" else f"{aic['mean']:.2f}" if aic and aic.get("mean") is not None else "-",
                     f"{st['answer_nll']['mean']:.2f}" if st.get("answer_nll") else "-",
                     ci(st.get("answer_nll_delta"), sign=True) if st["stage"] != "baseline" else ""])
    for c in d.get("controls") or []:
        rows.append([f"control: {c['control'].replace('_', ' ')}", "", "", "", "", "",
                     f"{c['answer_nll']['mean']:.2f}", f"**{ci(c['answer_nll_delta'], sign=True)}**"])
    meta = d["meta"]
    return "\n".join([
        f"Command: `{meta.get('command', '?')}`  \nSource: `{path}` (table generated from the file at build time); "
        + ", ".join(x for x in (f"{meta.get('n_examples')} {meta.get('dataset')} questions", meta.get("backend"),
                                meta.get("dtype"), meta.get("repeats") and f"{meta['repeats']} timing pass(es)",
                                meta.get("cpu")) if x), "",
        _table(["stage", "prompt tokens (model)", "prefill p50 ms", "prefill ratio [95% CI]",
                "KV MB / request: config / observed", "answer in context", "answer NLL/token",
                "change vs baseline [95% CI]"], rows),
    ])


def llama_cpp(path: str) -> str:
    """benchmarks/bench_llama_cpp.py: ``path`` is the run's folder (vllm/, llama_cpp/, memory.json)."""
    mem = _load(f"{path}/memory.json")
    rows = []
    commands = []
    for name, engine in (("vllm", "vLLM"), ("llama_cpp", "llama.cpp, 1 thread")):
        rep = _load(f"{path}/{name}/bench.json")
        commands.append(f"`{rep['meta'].get('command', '?')}`")
        for label, stage in (("uncompressed", rep["stages"][0]), ("default_pipeline()", rep["stages"][-1])):
            rows.append([engine, label, _n(stage["tokens_model"]["mean"]), _n(stage["ttft_ms"]["p50"]),
                         _n(stage["ttft_ms"]["p95"]), _n(stage["tpot_ms"]["p50"], 1), _n(stage["tpot_ms"]["p95"], 1),
                         _n(mem[name]["rss_peak_bytes"] / 2**20)])
    return "\n".join([
        "Command: `flock /tmp/tokenslim-bench.lock python benchmarks/bench_llama_cpp.py --limit 12 --out "
        f"{path}`, which runs, per engine: " + "; ".join(commands) + f"  \nSource: `{path}/*/bench.json`, "
        f"`{path}/memory.json` (generated at build time)", "",
        _table(["engine", "prompts", "tokens/req", "TTFT p50 ms", "TTFT p95 ms", "TPOT p50 ms", "TPOT p95 ms",
                "server RSS peak MiB"], rows, "llrrrrrr"),
    ])


def langchain(path: str) -> str:
    """benchmarks/bench_langchain.py: each compressor at its own budget and at the other's."""
    d = _load(path)
    rows = []
    for key, budget, label in (
        ("langchain", "LangChain's", "LangChain DocumentCompressorPipeline(EmbeddingsRedundantFilter + EmbeddingsFilter(k=3))"),
        ("tokenslim_at_langchain", "LangChain's", "tokenslim capped per question at LangChain's tokens"),
        ("tokenslim", "tokenslim's", "langchain_tokenslim.TokenSlimCompressor() (default_pipeline())"),
        ("langchain_at_tokenslim", "tokenslim's", "LangChain's ranking, whole paragraphs ≤ tokenslim's tokens"),
    ):
        s = d[key]
        lo, hi = s["wilson95"]
        rows.append([budget, label, _n(s["tokens_out"]), f"{s['reduction']:.2f}x",
                     f"{100 * s['answer_in_context']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] ({s['answer_kept']}/{s['answerable']})",
                     _n(s.get("ms_per_query"), 1)])
    return _source(d["command"], path) + "\n\n" + _table(
        ["budget", "compressor", "tokens out", "reduction", "answer kept [95% CI]", "ms/query"], rows, "llrrrr")


def run_batch(path: str) -> str:
    """benchmarks/bench_run_batch.py: a loop of run() against one run_batch()."""
    d = _load(path)
    rows = []
    for arm, label in (("loop", "loop of `run()`"), ("batch", "`run_batch()`")):
        real, padded = d["model_tokens_real_padded"][arm]
        rows.append([label, f"{d['median'][arm]['wall']:.2f}", f"{d['median'][arm]['cpu']:.2f}",
                     _n(d["encode_calls_per_round"][arm]), f"{real:,} ({padded:,})"])
    return "\n".join([
        _source(d["command"], path), "",
        _table(["arm", "wall s (median)", "CPU s (median)", "model encode calls", "tokens through the model (padded)"], rows),
        "", f"{d['requests']} requests, {d['rounds']} rounds, pipeline parameters `{d['pipeline_params']}`; "
        f"`run_batch` is {d['ratio_loop_over_batch']['wall']:.2f}x faster (wall); {d['outputs_equal']} of "
        f"{d['requests']} outputs equal `run()`'s.",
    ])


def ray(path: str) -> str:
    """benchmarks/bench_ray.py: requests per second in-process and on a local Ray cluster."""
    d = _load(path)
    rows = [[k, f"{v:.1f}", " / ".join(f"{c:.2f}" for c in d["cpu_cores_obtained_each"][k])]
            for k, v in d["requests_per_s"].items()]
    return "\n".join([
        _source(d["command"], path), "",
        _table([f"run ({d['requests']:,} requests, batch {d['batch_size']})", "requests/s (median)", "CPU cores obtained per repeat"], rows),
        "", f"2 workers vs 1: {d['speedup_2_vs_1']}x ({100 * d['scaling_efficiency']:.0f}% scaling efficiency); "
        f"rows differing from the in-process output: {d.get('rows_differing_from_in_process', '?')}. CPU: {d['cpu']}.",
    ])


def conversation(path: str) -> str:
    """benchmarks/bench_conversation.py: state summary against truncation."""
    d = _load(path)
    out = [_source(d["command"], path), "", "**SGD dialogues: share of gold slot values kept**", ""]
    rows = [[r["method"], str(r["keep_last"]), _n(r["tokens_after"]), f"{r['ratio']:.2f}x",
             f"{100 * r['slot_retention']:.1f}% ({r['slots_kept']}/{r['slots_present']})", f"{r['ms_p50']:.3f}"]
            for r in d["sgd"]]
    out += [_table(["method", "keep_last", "tokens after", "ratio", "slot values kept", "p50 ms"], rows), ""]
    if d.get("dialogsum"):
        out += ["**DialogSum (500 dev dialogues): ROUGE-1 recall of the human summary in the compressed history**", ""]
        rows = [[r["method"], str(r["keep_last"]), _n(r["tokens_after"]), f"{r['ratio']:.2f}x",
                 f"{100 * r['recall_compressed']:.1f}% (uncompressed: {100 * r['recall_full']:.1f}%)"] for r in d["dialogsum"]]
        out += [_table(["method", "keep_last", "tokens after", "ratio", "summary recall"], rows), ""]
    return "\n".join(out)


def conversation_cache(path: str) -> str:
    """benchmarks/bench_conversation_cache.py: tokens computed under a prefix cache, per row."""
    d = _load(path)
    engine = f"{d['backend']} ({d.get('model') or 'simulated'}, {d.get('dtype') or '-'}, KV block {d['block_size']} tokens)"
    out = [_source(d["command"], path), "", f"Engine: {engine}. Computed = prompt tokens - tokens served from the "
           "prefix cache (the engine's own count); changes are against `full`.", ""]
    names = {"sgd": "SGD, fresh schema context every turn", "coqa": "CoQA, follow-ups over one story",
             "twowiki_chat": "2WikiMultihopQA asked in turns over its ten paragraphs"}
    for ds, rows in d["summary"].items():
        base = rows["full"]
        head = ["row", "requests", "tokens sent", "tokens computed", "cache hit", "TTFT p50 ms", "TTFT p50, cache off",
                "KV held p50"]
        quality = "slot_retention_last_turn" if "slot_retention_last_turn" in base else "gold_kept"
        head.append("slots kept (last turn)" if quality.startswith("slot") else "gold kept")
        table = []
        for row, s in rows.items():
            sent = f"{s['sent']:,} ({s['sent'] / base['sent'] - 1:+.1%})"
            comp = f"{s['computed']:,} ({s['computed'] / base['computed'] - 1:+.1%})"
            ttft = f"{s['ttft_ms_p50']:.0f}" if "ttft_ms_p50" in s else "-"
            off = f"{s['ttft_ms_nocache_p50']:.0f}" if "ttft_ms_nocache_p50" in s else "-"
            q = f"{100 * s[quality]:.1f}%" if quality in s else "-"
            kv = f"{s['kv_blocks_p50'] * d['kv_block_bytes'] / 2**20:.1f} MB" if "kv_blocks_p50" in s and d.get("kv_block_bytes") else "-"
            table.append([row, str(s["requests"]), sent, comp, f"{100 * s['cache_hit']:.1f}%", ttft, off, kv, q])
        out += [f"**{names.get(ds, ds)}**", "", _table(head, table), ""]
        if "gold_kept_by_turn" in base:
            shown = [r for r in ("full", "per-request", "cache-aware", "cache-aware + stable docs") if r in rows]
            turns = sorted(base["gold_kept_by_turn"], key=int)
            per_turn = [[str(int(t) + 1)] + [
                f"{rows[r]['computed_mean_by_turn'][t]:.0f} / {100 * rows[r]['gold_kept_by_turn'].get(t, 0):.0f}%" for r in shown
            ] for t in turns]
            out += [f"Per turn ({names.get(ds, ds)}): mean tokens computed / gold kept", "",
                    _table(["turn", *shown], per_turn), ""]
    return "\n".join(out)


def html(path: str) -> str:
    """benchmarks/bench_html.py: main-text extraction quality and speed."""
    d = _load(path)
    rows = [[name, f"{r['F1']:.3f}", f"{r['P']:.3f}", f"{r['R']:.3f}", f"{r['ms_p50']:.2f}", f"{r['with']:.3f}",
             f"{r['without']:.3f}", str(r["pages"])] for name, r in d["results"].items()]
    return _source(d["command"], path) + "\n\n" + _table(
        ["extractor", "F1", "P", "R", "ms/page p50", "snippets found", "boilerplate absent", "pages"], rows)


def injection(path: str) -> str:
    """benchmarks/bench_injection.py: hidden instructions that reach the output, per tool."""
    d = _load(path)
    labels = {"tokenslim": "tokenslim `extract_main_text`", "pipeline_chunk": "tokenslim `default_pipeline()`, page as a chunk",
              "pipeline_history": "tokenslim `default_pipeline()`, page as a tool message",
              "trafilatura": "trafilatura `extract`", "readability": "readability-lxml `Document.summary()`"}
    rows = []
    for name, pages in d["results"].items():
        v = list(pages.values())
        rows.append([labels.get(name, name), f"{sum(1 for p in v if p['leaked'])} / {len(v)}",
                     f"{sum(p['leaked'] for p in v)} / {sum(p['hidden'] for p in v)}",
                     f"{sum(p['visible_kept'] for p in v)} / {sum(p['visible'] for p in v)}",
                     str(sum(1 for p in v if p.get("error")))])
    return _source(d["command"], path) + "\n\n" + _table(
        ["tool", "pages leaking", "instructions leaked", "visible paragraphs kept", "errors"], rows)


def fuzz(path: str) -> str:
    """benchmarks/fuzz.py: inputs tried per target, typed errors, unexpected failures."""
    d = _load(path)
    rows = [[r["target"], _n(r["tried"]), _n(r["typed"]), str(r["unexpected"]), _n(r["max_ms"])] for r in d]
    total = sum(r["tried"] for r in d)
    return "\n".join([
        "Command: `python benchmarks/fuzz.py --jobs 2`  \n"
        f"Source: `{path}` (generated at build time)", "",
        _table(["target", "inputs", "typed errors", "unexpected", "slowest input ms"], rows), "",
        f"{total:,} inputs, {sum(r['unexpected'] for r in d)} unexpected exceptions or broken invariants.",
    ])


_STRUCTURED = {  # bench_structured.py's "type/questions" keys, in the order shown
    "table/lookup": "tables, lookup",
    "table/wtq": "tables, WikiTableQuestions",
    "json/lookup": "JSON, lookup (API responses + records)",
    "json/wtq": "JSON records, WikiTableQuestions",
    "json/nested": "JSON, a value nested in an API object",
    "table/fetaqa": "tables, FeTaQA (every evidence cell)",
    "json/fetaqa": "JSON records, FeTaQA (every evidence cell)",
    "code/named": "code, function named",
    "code/described": "code, function described",
    "log/errors": "logs, every error line",
    "log/identifier": "logs, lines naming an id",
}


def _rate(q: dict[str, Any] | None, interval: bool = True) -> str:
    """A Wilson rate; ``-`` where no sample had an answer (n=0, mean NaN)."""
    if not q or not q.get("n") or q.get("mean") is None or q["mean"] != q["mean"]:
        return "-"
    return f"{100 * q['mean']:.1f}%" + (f" [{100 * q['low']:.1f}, {100 * q['high']:.1f}]" if interval else "")


def structured(path: str) -> str:
    """benchmarks/bench_structured.py: per type and question kind, then per source (log system, JSON kind...)."""
    d = _load(path)
    res = d["results"]
    keys = [k for k in _STRUCTURED if k in res] + sorted(k for k in res if k.count("/") == 1 and k not in _STRUCTURED)

    def n(r: dict[str, Any]) -> str:
        answered = r["answer_kept"].get("n", r["samples"])
        return str(r["samples"]) + (f" ({answered} with an answer)" if answered != r["samples"] else "")

    rows = [[_STRUCTURED.get(k, k), n(r), f"{r['ratio']:.2f}x", _rate(r["answer_kept"]),
             _rate(r["peer_bm25_lines"]["answer_kept"], interval=False),
             f"{_n(r.get('p50_ms'), 1)} ({_n(r.get('stage_p50_ms'), 1)})", _n(r.get("p50_ms_8k_12k_tokens"), 1)]
            for k, r in ((k, res[k]) for k in keys)]
    out = [_source(d.get("command"), path), "",
           _table(["type / questions", "n", "ratio", "answer kept [95% CI]", "BM25 lines, same tokens",
                   "p50 ms (stage)", "p50 ms, 8k-12k-token inputs"], rows, "lrrrrrr"), ""]
    for k, r in res.items():
        if "/" not in k and r.get("evidence_cells_kept") is not None:
            out += [f"{k}: evidence cells kept {100 * r['evidence_cells_kept']:.1f}% "
                    f"(BM25 lines: {100 * r['peer_bm25_lines']['evidence_cells_kept']:.1f}%).", ""]
    parses = [(k, r) for k, r in res.items() if "/" not in k and r.get("json_parses") is not None]
    for k, r in parses:
        out += [f"Reduced JSON that parses: {100 * r['json_parses']:.1f}% of {r['samples']} samples "
                f"(BM25 lines' output: {100 * r['peer_json_parses']:.1f}%).", ""]
    deep = sorted(k for k in res if k.count("/") == 2)
    parents = [k.rsplit("/", 1)[0] for k in deep]
    deep = [k for k, p in zip(deep, parents) if parents.count(p) > 1]  # a parent's only source repeats its row
    if deep:
        rows = [[f"`{k}`", n(res[k]), f"{res[k]['ratio']:.2f}x", _rate(res[k]["answer_kept"]),
                 _rate(res[k]["peer_bm25_lines"]["answer_kept"], interval=False)] for k in deep]
        out += ["??? note \"Per source (type/questions/source)\"", "",
                *("    " + line if line else line for line in _table(
                    ["source", "n", "ratio", "answer kept [95% CI]", "BM25 lines, same tokens"], rows, "lrrrr").split("\n")),
                ""]
    return "\n".join(out)


_PARETO_TITLE = {
    "hotpotqa": "HotpotQA distractor (10 passages)",
    "twowiki": "2WikiMultihopQA distractor (10 passages)",
    "hotpotqa_open": "HotpotQA open (BM25 top-20 of the pool)",
    "twowiki_open": "2WikiMultihopQA open (BM25 top-20 of the pool)",
}


def pareto(path: str) -> str:
    """``bench_compression.py --pareto``: one row per ``compress_documents__recall``, tokenslim's
    ratio and quality, and each peer's quality at tokenslim's tokens (per question)."""
    d = _load(path)
    metric = "answer kept" if d.get("metric") == "answer_kept" else "term recall"
    points = d["points"]
    peers = list(dict.fromkeys(p for pt in points for p in pt["systems"] if p != "tokenslim"))
    first = points[0]["systems"]["tokenslim"]["quality"]["n"] if points else 0
    answerable = f", {first} with the answer in the input" if d.get("metric") == "answer_kept" else ""
    out = [_source(d.get("command"), path), ""]
    extra = [f"{k}={d[k]}" for k in ("limit", "relevance") if d.get(k) is not None]
    if d.get("pipeline") not in (None, "default"):
        extra.append(f"pipeline={d['pipeline']}")
    if extra:
        out += [f"Settings: {', '.join(extra)}.", ""]
    out += [f"**{_PARETO_TITLE.get(d['dataset'], d['dataset'])}: {d['questions']} questions{answerable}; chunks given "
            f"as `{d.get('format', '?')}`; peers filled to tokenslim's tokens per question**", ""]
    rows = []
    for pt in points:
        s = pt["systems"]["tokenslim"]
        kept = f" ({s['kept']}/{s['quality']['n']})" if s.get("kept") is not None and s["quality"].get("n") else ""
        rows.append([f"{pt['recall']:g}", _n(s["tokens_after"]), f"{s['ratio']:.2f}x", _rate(s["quality"]) + kept,
                     *(_rate(pt["systems"][p]["quality"], interval=False) if p in pt["systems"] else "-" for p in peers)])
    out += [_table(["recall", "tokens after", "ratio", f"tokenslim {metric} [95% CI]", *peers], rows), ""]
    return "\n".join(out)


def heldout(path: str) -> str:
    """benchmarks/bench_relevance_heldout.py: the relevance model on questions it was not trained on, per
    input setting and ``compress_documents__recall``."""
    d = _load(path)
    rows = []
    for name, r in d["rows"].items():
        q = r.get("quality")
        kept = f" ({r['kept']}/{q['n']})" if r.get("kept") is not None and q and q.get("n") else ""
        rows.append([f"`{r.get('setting', name)}`", f"{r['recall']:g}" if r.get("recall") is not None else "-",
                     f"{r['ratio']:.2f}x", _rate(q) + kept, _n(r.get("p50_ms"), 1)])
    note = f"{d['questions']} questions" + (f"; {d['note']}" if d.get("note") else "") + "."
    return "\n".join([_source(d.get("command"), path), "", note, "",
                      _table(["input", "recall", "ratio", "answer kept [95% CI]", "p50 ms"], rows, "llrrr")])


def learners(path: str) -> str:
    """benchmarks/bench_relevance_learners.py: learners for the relevance model, out of fold on the training rows."""
    d = _load(path)
    sets = [k for k in ("hotpotqa", "twowiki", "musique", "nq") if k in next(iter(d["learners"].values()))]
    names = {"hotpotqa": "HotpotQA", "twowiki": "2Wiki", "musique": "MuSiQue", "nq": "NQ"}
    rows = [[name] + [f"{v[k]['ap']:.3f} / {100 * v[k]['kept_at_0.9']:.1f}% / {100 * v[k]['kept_at_0.95']:.1f}%" for k in sets]
            for name, v in d["learners"].items()]
    note = (f"{d['questions']:,} questions, {d['rows']:,} sentence rows, {d['folds']} folds grouped by question. "
            "Each cell: average precision / sentences kept for 90% / for 95% of the needed ones (lower keeps fewer "
            "tokens for the same recall).")
    return "\n".join([_source(d.get("command"), path), "", note, "",
                      _table(["learner"] + [names[k] for k in sets], rows, "l" + "r" * len(sets))])


def browser_exact(path: str) -> str:
    """benchmarks/bench_browser_exact.py: milliseconds per page, Python rules vs exact mode (Chromium)."""
    d = _load(path)
    r = d["results"]
    rows = [[name, f"{r[key]['ms_p50']:.1f}", f"{r[key]['ms_mean']:.1f}", f"{r[key]['ms_p90']:.1f}"]
            for name, key in (("Python rules (default)", "python"), ('`renderer="chromium"`', "chromium"))]
    note = f"{r['pages']} pages; identical text on {r['identical_text_share']:.1%} of them."
    return _source(d["command"], path) + "\n\n" + _table(["renderer", "ms/page p50", "mean", "p90"], rows) + "\n\n" + note


def browser_fuzz(path: str) -> str:
    """benchmarks/bench_browser_fuzz.py: tokenslim's keep/drop against Chromium's on generated pages."""
    d = _load(path)
    r = d["results"]
    rows = [[f"{r['pages']:,}", f"{r['hidden_nodes']:,}", f"{r['hidden_kept']:,} ({r['hidden_kept_rate']:.2%})",
             f"{r['visible_nodes']:,}", f"{r['visible_dropped']:,} ({r['visible_dropped_rate']:.2%})"]]
    return _source(d["command"], path) + "\n\n" + _table(
        ["pages", "text nodes Chromium hides", "of them kept by tokenslim", "text nodes Chromium shows",
         "of them dropped by tokenslim"], rows)


RENDERERS: dict[str, Callable[[str], str]] = {
    "compression": compression, "compression_rows": compression_rows, "bench": bench,
    "bench_summary": bench_summary, "llama_cpp": llama_cpp, "langchain": langchain,
    "run_batch": run_batch, "ray": ray, "conversation": conversation, "html": html, "injection": injection, "fuzz": fuzz,
    "structured": structured, "pareto": pareto, "heldout": heldout, "conversation_cache": conversation_cache,
    "browser_exact": browser_exact, "browser_fuzz": browser_fuzz, "learners": learners,
}


def render(kind: str, path: str) -> str:
    """The markdown for one marker."""
    if kind not in RENDERERS:
        raise ResultsError(f"unknown results kind {kind!r}; known: {sorted(RENDERERS)}")
    return RENDERERS[kind](path)


def expand(markdown: str) -> str:
    """Replace every results marker of a page with its table."""
    def table(m: re.Match[str]) -> str:
        indent = m.group(1)  # a marker inside an admonition: indent the whole table like it
        return "\n".join(indent + line if line else line for line in render(m.group(2), m.group(3)).split("\n"))

    return MARKER.sub(table, markdown)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """mkdocs hook: expand the page's results markers (a bad marker stops the build)."""
    return expand(markdown)


_ROLE = re.compile(r":(?:class|meth|func|data|mod|attr|exc|obj):(<code>)~?")


def on_page_content(html: str, **kwargs: Any) -> str:
    """mkdocs hook: the docstrings are shared with Sphinx-style readers; drop the ``:class:`` / ``:meth:``...
    role prefixes (and a leading ``~``) that mkdocstrings leaves in front of the code they mark."""
    return _ROLE.sub(r"\1", html)


if __name__ == "__main__":
    print(render(sys.argv[1], sys.argv[2]))
