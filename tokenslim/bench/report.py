"""Benchmark tables: fixed-width text (in the style of ``vllm bench serve``), Markdown and JSON.

All three render the dict form of a :class:`~tokenslim.bench.runner.BenchReport`
(``report.as_dict()``), so a saved JSON file can be re-rendered later.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

__all__ = ["text_table", "markdown", "write_json", "write_markdown", "load_json", "model_name"]

_WIDTH = 50


def _f(x: Any, digits: int = 1) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def _ci(d: Mapping[str, Any] | None, digits: int = 2) -> str:
    if not d or d.get("mean") is None:
        return "-"
    return f"{d['mean']:.{digits}f} [{d['low']:.{digits}f},{d['high']:.{digits}f}]"


def _delta(d: Mapping[str, Any] | None) -> str:
    if not d or d.get("mean") is None:
        return "-"
    real = d["low"] > 0 or d["high"] < 0
    return f"{d['mean']:+.2f}{'*' if real else ''}"


def _delta_ci(d: Mapping[str, Any] | None, digits: int = 2) -> str:
    """``+0.46 [+0.22,+0.75]*`` (``*``: the interval excludes 0)."""
    if not d or d.get("mean") is None:
        return "-"
    real = d["low"] > 0 or d["high"] < 0
    return f"{d['mean']:+.{digits}f} [{d['low']:+.{digits}f},{d['high']:+.{digits}f}]{'*' if real else ''}"


def portable_path(value: Any) -> Any:
    """A path inside this machine's home folder written from ``~`` (a report names no machine's folders);
    any other value as given."""
    home = str(Path.home())
    if isinstance(value, str) and home not in ("", "/") and (value == home or value.startswith(home + "/")):
        return "~" + value[len(home):]
    return value


def model_name(meta: Mapping[str, Any]) -> str:
    """The model for display: a local folder shows as its last path part (SmolLM2-135M-Instruct)."""
    model = str(meta.get("model") or "-")
    return Path(model).name if model.startswith(("/", "~", ".")) else model


def _label(row: Mapping[str, Any]) -> str:
    return str(row["stage"]) + ("" if row["changed"] or row["stage"] == "baseline" else " (=)")


def _cost_rows(rep: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    head = [
        "stage",
        "tok(model)",
        "tok(cl100k)",
        "saved%",
        "prefill p50",
        "prefill p95",
        "prefill ratio [95% CI]",
        "TTFT p50",
        "TPOT p50",
        "E2E p50",
        "E2E p95",
        "E2E p99",
        "KV MB config",
        "KV MB observed",
        "cache hit%",
        "req/s",
        "tp hit%",
        "stage ms",
    ]
    rows = []
    for s in rep["stages"]:
        tp = s.get("throughput") or {}
        hit = s.get("prefix_cache_hit_rate")
        tp_hit = tp.get("prefix_cache_hit_rate")
        rows.append(
            [
                _label(s),
                _f(s["tokens_model"]["mean"], 0),
                _f(s["tokens_cl100k"]["mean"], 0),
                _f(s["token_reduction_pct"], 1),
                _f(s["prefill_ms"]["p50"]),
                _f(s["prefill_ms"]["p95"]),
                _ci(s.get("prefill_ratio")) if s["stage"] != "baseline" else "1",
                _f(s["ttft_ms"]["p50"]),
                _f(s["tpot_ms"]["p50"]),
                _f(s["e2e_ms"]["p50"]),
                _f(s["e2e_ms"]["p95"]),
                _f(s["e2e_ms"]["p99"]),
                _f(s["kv_mb_per_request"], 2),
                _f(s.get("kv_mb_allocated_per_request"), 2),
                "-" if hit is None else f"{100 * hit:.1f}",
                _f(tp.get("requests_per_s"), 2),
                "-" if tp_hit is None else f"{100 * tp_hit:.1f}",
                _f(s["stage_ms"]["p50"], 2),
            ]
        )
    return head, rows


def _quality_rows(rep: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    keys = [("em", "EM"), ("f1", "F1"), ("answer_in_context", "ans-in-ctx"), ("state_retention", "state kept")]
    present = [(k, n) for k, n in keys if any(s["quality"][k]["n"] for s in rep["stages"])]
    nll = any((s.get("answer_nll") or {}).get("n") for s in rep["stages"])
    head = ["stage", *(f"{n} [95% CI]" for _, n in present), *(f"d{n}" for _, n in present)]
    if nll:
        head += ["answer NLL/tok", "dNLL vs baseline [95% CI]"]
    rows = []
    for s in rep["stages"]:
        row = [
            _label(s),
            *(_ci(s["quality"][k]) for k, _ in present),
            *(_delta(s["delta_vs_baseline"].get(k)) if s["stage"] != "baseline" else "" for k, _ in present),
        ]
        if nll:
            row += [_ci(s.get("answer_nll"), 3), _delta_ci(s.get("answer_nll_delta"), 3) if s["stage"] != "baseline" else ""]
        rows.append(row)
    for c in rep.get("controls") or []:
        row = [f"control: {c['control']}", *("" for _ in present), *("" for _ in present)]
        rows.append(row + [_ci(c["answer_nll"], 3), _delta_ci(c["answer_nll_delta"], 3)])
    return head, rows


def _lever_tables(rep: Mapping[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """The levers pass as (title, head, rows) tables; empty when it did not run."""
    lv = rep.get("levers")
    if not lv:
        return []
    stages = rep["stages"]
    base, last = stages[0], stages[-1]
    head = ["lever (one at a time)", "tokens/req", "prefill p50 ms", "prefill ratio [95% CI]", "KV MB/req observed",
            "dNLL vs baseline [95% CI]", "note"]
    rows = [
        ["baseline (uncompressed, default engine)", _f(base["tokens_model"]["mean"], 0), _f(base["prefill_ms"]["p50"]),
         "1", _f(base.get("kv_mb_allocated_per_request"), 2), "", f"ablation, {rep['meta'].get('n_examples')} questions"],
        [f"tokenslim {last['stage'].lstrip('+')} (default_pipeline)", _f(last["tokens_model"]["mean"], 0),
         _f(last["prefill_ms"]["p50"]), _ci(last.get("prefill_ratio")), _f(last.get("kv_mb_allocated_per_request"), 2),
         _delta_ci(last.get("answer_nll_delta"), 3), "ablation, interleaved"],
    ]
    kv = lv.get("kv_cache_dtype") or {}
    if kv.get("error"):
        rows.append([f"kv_cache_dtype={kv.get('setting')}", "", "", "", "", "", f"refused by the engine: {kv['error'][:160]}"])
    elif kv:
        ch, auto = kv["changed"], kv["auto"]
        rows.append([f"kv_cache_dtype={kv['setting']}", _f(ch["tokens"], 0), _f(ch["prefill_ms"]["p50"]),
                     _ci(kv.get("prefill_ratio")), _f(ch["kv_mb_observed"], 2) + ("" if auto.get("kv_mb_observed") is None else f" (auto {_f(auto['kv_mb_observed'], 2)})"),
                     _delta_ci(kv.get("answer_nll_delta"), 3), f"{lv['n']} questions, engines alternating"])
    mml = lv.get("max_model_len") or {}
    if mml:
        note = mml.get("error") or (f"accepts {mml.get('accepted_uncompressed')} uncompressed, "
                                    f"{mml.get('accepted_default_pipeline')} compressed prompts")
        rows.append([f"max_model_len={mml.get('setting')}", "", "", "", "", "", note])
    tables = [(f"Serving levers ({lv['n']} questions, one at a time)", head, rows)]
    phead = ["prompts", "chunk order", "2nd request hit%", "2nd TTFT p50 ms", "1st TTFT p50 ms", "tokens/req"]
    prows = []
    for p in lv.get("prefix_caching") or []:
        hit = p["second"]["prefix_cache_hit_rate"]
        prows.append([p["prompts"], p["order"], "-" if hit is None else f"{100 * hit:.1f}",
                      _f(p["second"]["ttft_ms"]["p50"]), _f(p["first"]["ttft_ms"]["p50"]), _f(p["second"]["tokens"], 0)])
    if prows:
        tables.append(("Prefix caching: a 2nd question over the same documents in another retrieval order", phead, prows))
    chead = ["in flight", "prompts", "tokens/req", "TTFT p50/p95/p99 ms", "TPOT p50/p95/p99 ms", "req/s"]
    crows = []
    for c in lv.get("concurrency") or []:
        t, d = c["ttft_ms"], c["tpot_ms"]
        crows.append([str(c["concurrency"]), c["prompts"], _f(c["tokens"], 0),
                      f"{_f(t['p50'], 0)} / {_f(t['p95'], 0)} / {_f(t['p99'], 0)}",
                      f"{_f(d['p50'])} / {_f(d['p95'])} / {_f(d['p99'])}", _f(c["requests_per_s"], 3)])
    if crows:
        tables.append(("Concurrency sweep (waves of N requests)", chead, crows))
    return tables


def _fixed(head: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]

    def fmt(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    lines = [fmt(head), "-" * len(fmt(head))]
    lines.extend(fmt(r) for r in rows)
    return lines


def _kv(key: str, value: Any) -> str:
    return f"{key + ':':<40}{value}"


def _footnotes(rep: Mapping[str, Any]) -> list[str]:
    check = rep.get("checks", {})
    falls = check.get("prefill_falls_with_tokens")
    verdict = {True: "yes", False: "NO", None: "n/a"}[falls]
    return [
        f"prefill falls with tokens: {verdict} ({check.get('detail', '')})",
        f"KV memory: {check.get('kv', {}).get('detail', 'not checked')}."
        " KV MB config is computed from the model config (layers, KV heads, head_dim, dtype, window);"
        " KV MB observed is what the engine reported holding (vLLM: peak of its KV-usage gauge x blocks x block bytes;"
        " transformers: the cache tensors).",
        f"answer likelihood: {check.get('likelihood', {}).get('detail', 'not scored')}"
        + {True: " (the metric separates on these questions)", False: " (the controls do NOT separate: read the"
           " likelihood column with care)", None: ""}[check.get("likelihood", {}).get("separates")],
        "(=) stage changed no prompt on this dataset: listed with the figures of the row above, not re-measured.",
        "Times in ms, medians over the interleaved passes; prefill ratio = mean over questions of row / baseline"
        " (paired; TTFT where prefill is not observable); tok = mean prompt tokens per request (model tokenizer incl."
        " chat template / cl100k); saved% vs baseline (model tokens); cache hit% of the timed requests (cache reset"
        " before each); req/s and tp hit% from the concurrent pass (fresh cache).",
        "Quality: mean [95% bootstrap CI]; d = paired change vs baseline, * = CI excludes 0 (a real change, not noise)."
        " Answer NLL/tok: the gold answer's negative log-likelihood per token (nats; lower is better); controls on"
        " the same questions: evidence removed (supporting paragraphs dropped) and gold only (just those).",
    ]


def text_table(rep: Mapping[str, Any]) -> str:
    """The report as fixed-width text for a terminal.

    Args:
        rep: ``BenchReport.as_dict()`` (or a loaded JSON report).
    """
    meta = rep["meta"]
    lines = ["=" * _WIDTH, " tokenslim bench: per-stage ablation ".center(_WIDTH, "="), "=" * _WIDTH]
    for key, name in [
        ("dataset", "Dataset"),
        ("backend", "Backend"),
        ("model", "Model"),
        ("n_examples", "Requests per stage"),
        ("max_tokens", "Max output tokens"),
        ("concurrency", "Throughput-pass concurrency"),
        ("repeats", "Interleaved timing passes"),
        ("warmup_requests", "Warm-up requests"),
        ("wall_s", "Benchmark duration (s)"),
    ]:
        if key in meta:
            lines.append(_kv(name, model_name(meta) if key == "model" else meta[key]))
    if meta.get("command"):
        lines.append(f"Command: {meta['command']}")
    lines.append(" Cost per request ".center(_WIDTH, "-"))
    lines.extend(_fixed(*_cost_rows(rep)))
    lines.append(" Answer quality ".center(_WIDTH, "-"))
    lines.extend(_fixed(*_quality_rows(rep)))
    for title, head, rows in _lever_tables(rep):
        lines.append(f" {title} ".center(_WIDTH, "-"))
        lines.extend(_fixed(head, rows))
    lines.append("=" * _WIDTH)
    lines.extend(_footnotes(rep))
    return "\n".join(lines)


def _md_table(head: list[str], rows: list[list[str]]) -> list[str]:

    def esc(c: str) -> str:
        return c.replace("|", "\\|")

    out = ["| " + " | ".join(esc(h) for h in head) + " |", "|" + "|".join("---" if i == 0 else "---:" for i in range(len(head))) + "|"]
    out.extend("| " + " | ".join(esc(c) for c in r) + " |" for r in rows)
    return out


def markdown(rep: Mapping[str, Any]) -> str:
    """The report as Markdown: settings, the exact command, cost and quality tables, checks."""
    meta = rep["meta"]
    lines = [f"# tokenslim bench: {meta.get('dataset', '?')} on {meta.get('backend', '?')} ({model_name(meta)})", ""]
    if meta.get("command"):
        lines += ["Reproduce with:", "", "```", meta["command"], "```", ""]
    settings = ["dataset", "backend", "model", "dtype", "n_examples", "max_tokens", "concurrency", "repeats",
                "warmup_requests", "instruction", "pipeline_tokenizer", "token_source", "cache_reset", "date", "wall_s",
                "platform", "cpu", "python"]
    lines += ["| setting | value |", "|---|---|"]
    lines += [f"| {k} | {str(meta[k]).replace('|', '/')} |" for k in settings if meta.get(k) is not None]
    lines += ["", "## Cost per request", ""]
    lines += _md_table(*_cost_rows(rep))
    lines += ["", "## Answer quality", ""]
    lines += _md_table(*_quality_rows(rep))
    for title, head, rows in _lever_tables(rep):
        lines += ["", f"## {title}", ""]
        lines += _md_table(head, rows)
    if rep.get("levers"):
        lines += ["", f"Levers method: {rep['levers'].get('method', '')}."]
    lines += ["", "## Notes", ""]
    lines += [f"- {n}" for n in _footnotes(rep)]
    if "answer_scoring" in meta:
        lines.append(f"- Answer scoring: {meta['answer_scoring']}.")
    for key, name in (("timing", "Timing"), ("likelihood", "Likelihood"), ("intervals", "Intervals")):
        if key in meta:
            lines.append(f"- {name}: {meta[key]}.")
    if meta.get("pipeline"):
        lines += ["", "Pipeline:", ""] + [f"- `{p}`" for p in meta["pipeline"]]
    return "\n".join(lines).rstrip() + "\n"


def write_json(rep: Mapping[str, Any], path: str | Path) -> Path:
    """Save the report as indented JSON; returns the path."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(rep, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return p


def write_markdown(rep: Mapping[str, Any], path: str | Path) -> Path:
    """Save :func:`markdown` of the report; returns the path."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(markdown(rep), encoding="utf-8")
    return p


def load_json(path: str | Path) -> dict[str, Any]:
    """Read a report saved by :func:`write_json`.

    Raises:
        InputError: the file is missing or is not a tokenslim bench report.
    """
    from tokenslim.errors import InputError

    p = Path(path)
    try:
        rep = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read bench report {str(p)!r}: {exc}") from exc
    if not isinstance(rep, dict) or not isinstance(rep.get("stages"), list) or not rep["stages"]:
        raise InputError(f"{str(p)!r} is not a tokenslim bench report (no 'stages' list)")
    return rep
