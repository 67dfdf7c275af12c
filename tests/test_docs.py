"""The docs site builds with --strict, its examples run, its benchmark tables come from results/*.json,
and the README's example prints what the README shows."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "_hooks" not in p.parts)
RUNNABLE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)  # ```python runs; ```py, ```bash, ```text do not
IMPORT = re.compile(r"^\s*(?:from|import)\s+([A-Za-z_][\w]*)", re.M)
# one row of Result.report_table(): stage, tokens in, out, saved, chunks, turns, ms, drops
ROW = re.compile(r"^(\w+)\s+(\d+)\s+(\d+)\s+(-?\d+)\s+(\d+->\d+)\s+(\d+->\d+)\s+[\d.]+\s*(.*?)\s*$")


def _env() -> dict[str, str]:
    """This tree's tokenslim first (a worktree next to an editable install of another checkout)."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _hook():
    spec = importlib.util.spec_from_file_location("results_tables", DOCS / "_hooks" / "results_tables.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run_blocks(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    missing = sorted({m for m in IMPORT.findall(code) if not _importable(m)})
    if missing:
        pytest.skip(f"the page's examples need {', '.join(missing)} (bash scripts/setup.sh installs everything)")
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("page", [p.relative_to(DOCS).as_posix() for p in PAGES if RUNNABLE.search(p.read_text())])
def test_python_blocks_of_the_page_run(page: str, tmp_path: Path) -> None:
    """Every ```python block of a page runs, in order, in one fresh process (a page reads like a notebook)."""
    code = "\n".join(RUNNABLE.findall((DOCS / page).read_text(encoding="utf-8")))
    proc = _run_blocks(code, tmp_path)
    assert proc.returncode == 0, f"{page}: {proc.stderr[-3000:]}"


def _table(text: str) -> list[tuple[str, ...]]:
    return [m.groups() for m in map(ROW.match, text.splitlines()) if m]


@pytest.mark.parametrize("doc", ["README.md", "docs/getting-started.md"])
def test_the_example_prints_the_table_shown(doc: str, tmp_path: Path) -> None:
    """The per-stage table shown after the first example is what that example prints (milliseconds aside)."""
    text = (ROOT / doc).read_text(encoding="utf-8")
    code = RUNNABLE.search(text)
    assert code, f"{doc} has no ```python example"
    shown = _table(text[code.end():])
    assert len(shown) >= 5, f"{doc}: no per-stage table after the example"
    proc = _run_blocks(code.group(1), tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    printed = _table(proc.stdout)
    assert len(printed) >= 5 and printed == shown[: len(printed)], f"{doc} shows\n{shown}\nbut the example prints\n{proc.stdout}"


def test_every_results_marker_renders_and_every_results_file_is_shown() -> None:
    hook = _hook()
    markers = [(m.group(2), m.group(3), p) for p in PAGES for m in hook.MARKER.finditer(p.read_text(encoding="utf-8"))]
    assert markers, "no results markers in docs/"
    for kind, path, page in markers:
        assert hook.render(kind, path).strip(), f"{page}: {kind} {path} rendered nothing"
    shown = {path for _, path, _ in markers}
    files = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "results").rglob("*.json"))
    unshown = [f for f in files if f not in shown and not any(f.startswith(s.rstrip("/") + "/") for s in shown)]
    assert not unshown, f"results files shown on no docs page (add a <!-- results: ... --> marker): {unshown}"


def test_a_bad_marker_stops_the_build() -> None:
    hook = _hook()
    with pytest.raises(hook.ResultsError, match="not found"):
        hook.expand("<!-- results: fuzz results/no_such_file.json -->")
    with pytest.raises(hook.ResultsError, match="unknown results kind"):
        hook.expand("<!-- results: nope results/fuzz.json -->")


def test_mkdocs_build_strict(tmp_path: Path) -> None:
    for module in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python"):
        pytest.importorskip(module, reason="pip install -e '.[docs]' (scripts/setup.sh installs it)")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, env={**_env(), "NO_MKDOCS_2_WARNING": "1"}, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    assert (tmp_path / "site" / "reference" / "stages" / "index.html").is_file()
    built = (tmp_path / "site" / "benchmarks" / "compression" / "index.html").read_text(encoding="utf-8")
    assert "python benchmarks/bench_compression.py --dataset all" in built  # tables name their command


def test_readme_is_a_front_page() -> None:
    """Short, the two commands CI and the demo use first, and every docs link it gives resolves."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150, "README.md is the front page: move long material into docs/"
    first_block = text.split("```bash\n", 1)[1].split("```", 1)[0]
    assert [line.split()[:2] for line in first_block.splitlines()] == [["bash", "scripts/demo.sh"], ["bash", "scripts/test.sh"]]
    for target in re.findall(r"\]\(((?:docs/|CONTRIBUTING|LICENSE|NOTICE)[^)#]*)", text):
        assert (ROOT / target).exists(), f"README links to a missing file: {target}"


def _headlines() -> list[str]:
    """The figures the README's and the docs home page's headline table must show, computed from results/*.json."""
    import json

    def load(path: str):
        return json.loads((ROOT / "results" / path).read_text(encoding="utf-8"))

    def pct(q) -> str:
        return f"**{100 * q['mean']:.1f}%** [{100 * q['low']:.1f}, {100 * q['high']:.1f}]"

    hot = load("compression_hotpotqa.json")["formats"]["metadata_title"]
    wiki = load("compression_twowiki.json")["formats"]["metadata_title"]
    musique = load("relevance_heldout_musique.json")["rows"]["metadata_title recall=0.9"]
    musique_95 = load("relevance_heldout_musique.json")["rows"]["metadata_title recall=0.95"]
    unseen_hot = load("relevance_heldout_shared.json")["rows"]["hotpotqa metadata_title recall=0.9"]
    unseen_wiki = load("relevance_heldout_shared.json")["rows"]["twowiki metadata_title recall=0.9"]
    llm = load("hotpotqa_vllm_100/bench.json")["stages"]
    base, last = llm[0], llm[-1]
    html = load("html.json")["results"]
    inj = load("injection.json")["results"]
    lc = load("langchain_vs_tokenslim.json")
    sgd = {(r["method"], r["keep_last"]): r for r in load("conversation_sgd.json")["sgd"]}
    fuzz = load("fuzz.json")
    bf = load("browser_fuzz.json")["results"]
    bf2 = load("browser_fuzz_2.json")["results"]
    cache = load("conversation_cache.json")["summary"]
    chat, coqa = cache["sgd"], cache["coqa"]
    structured = load("structured.json")["results"]
    jl, tl = structured["json/lookup"], structured["table/lookup"]
    unseen = load("structured_heldout.json")["results"]["table"]
    fresh = load("structured_fresh.json")["results"]["table"]
    feta = load("structured_fetaqa.json")["results"]["table"]
    return [
        f"**{hot['tokenslim']['ratio']:.2f}x**", pct(hot["tokenslim"]["quality"]),
        f"{100 * hot['BM25 sentences']['quality']['mean']:.1f}%",
        f"2WikiMultihopQA: {100 * wiki['tokenslim']['quality']['mean']:.1f}% at {wiki['tokenslim']['ratio']:.2f}x",
        f"each judged by a model trained without it: HotpotQA {100 * unseen_hot['quality']['mean']:.1f}% at {unseen_hot['ratio']:.2f}x, "
        f"2WikiMultihopQA {100 * unseen_wiki['quality']['mean']:.1f}% at {unseen_wiki['ratio']:.2f}x",
        f"MuSiQue, held out: {100 * musique['quality']['mean']:.1f}% at {musique['ratio']:.2f}x "
        f"(`recall=0.95`: {100 * musique_95['quality']['mean']:.1f}% at {musique_95['ratio']:.2f}x)",
        f"{base['tokens_model']['mean']:,.0f} -> {last['tokens_model']['mean']:,.0f} prompt tokens",
        f"prefill **{last['prefill_ratio']['mean']:.2f}x** [{last['prefill_ratio']['low']:.2f}, {last['prefill_ratio']['high']:.2f}]",
        f"KV {base['kv_mb_allocated_per_request']:.1f} -> {last['kv_mb_allocated_per_request']:.1f} MB",
        f"{last['answer_nll_delta']['mean']:+.2f} [{last['answer_nll_delta']['low']:+.2f}, {last['answer_nll_delta']['high']:+.2f}]".lstrip("+"),
        f"F1 **{html['tokenslim']['F1']:.3f}** at {html['tokenslim']['ms_p50']:.1f} ms",
        f"trafilatura {html['trafilatura']['F1']:.3f} at {html['trafilatura']['ms_p50']:.1f} ms",
        f"**{sum(p['leaked'] for p in inj['pipeline_chunk'].values())} of {sum(p['hidden'] for p in inj['pipeline_chunk'].values())}**",
        f"trafilatura {sum(p['leaked'] for p in inj['trafilatura'].values())}, readability {sum(p['leaked'] for p in inj['readability'].values())}",
        f"{100 * lc['tokenslim_at_langchain']['answer_in_context']:.1f}% of answers kept vs {100 * lc['langchain']['answer_in_context']:.1f}%",
        f"**{load('run_batch.json')['ratio_loop_over_batch']['wall']:.2f}x**", f"{load('ray_scaling.json')['speedup_2_vs_1']}x of 1",
        f"**{100 * sgd[('tokenslim summarize', 4)]['slot_retention']:.1f}%** of slot values kept at {sgd[('tokenslim summarize', 4)]['ratio']:.2f}x",
        f"same tokens: {100 * sgd[('truncate to same tokens', 4)]['slot_retention']:.1f}%",
        f"folding every turn instead of in blocks: {100 * sgd[('tokenslim, fold every turn', 4)]['slot_retention']:.1f}% "
        f"at {sgd[('tokenslim, fold every turn', 4)]['ratio']:.2f}x",
        f"prefix caching on: **{100 * (1 - chat['cache-aware']['computed'] / chat['full']['computed']):.1f}%** fewer prefill tokens",
        f"(folding every turn: {100 * (1 - chat['per-request']['computed'] / chat['full']['computed']):.1f}%)",
        f"TTFT p50 {chat['cache-aware']['ttft_ms_p50']:.0f} vs {chat['full']['ttft_ms_p50']:.0f} ms",
        f"stable documents: {100 * (1 - coqa['cache-aware + stable docs']['computed'] / coqa['full']['computed']):.1f}% fewer computed, "
        f"{100 * coqa['cache-aware + stable docs']['gold_kept']:.1f}% of answers kept (per request: {100 * coqa['per-request']['gold_kept']:.1f}%)",
        f"{sum(r['tried'] for r in fuzz):,} fuzzed inputs, {sum(r['unexpected'] for r in fuzz)} unexpected",
        f"**{bf['hidden_kept']} of {bf['hidden_nodes']:,}** hidden text nodes kept ({100 * bf['hidden_kept_rate']:.2f}%), "
        f"{bf['visible_dropped']:,} of {bf['visible_nodes']:,} visible ones dropped ({100 * bf['visible_dropped_rate']:.2f}%)",
        f"grammar 2 (`--grammar 2`, with the classes closed later): {bf2['hidden_kept']} of {bf2['hidden_nodes']:,} "
        f"({100 * bf2['hidden_kept_rate']:.2f}%), {bf2['visible_dropped']:,} of {bf2['visible_nodes']:,} "
        f"({100 * bf2['visible_dropped_rate']:.2f}%)",
        f"JSON lookups (API responses, records): **{jl['ratio']:.2f}x** fewer tokens, {pct(jl['answer_kept'])} of answers kept",
        f"(BM25 lines at the same tokens: {100 * jl['peer_bm25_lines']['answer_kept']['mean']:.1f}%)",
        f"table lookups {tl['ratio']:.2f}x at {100 * tl['answer_kept']['mean']:.1f}%",
        f"all tables (WikiTableQuestions included) {structured['table']['ratio']:.2f}x at "
        f"{100 * structured['table']['answer_kept']['mean']:.1f}%, all JSON {structured['json']['ratio']:.2f}x at "
        f"{100 * structured['json']['answer_kept']['mean']:.1f}% (values nested in an API object {structured['json/nested']['ratio']:.2f}x at "
        f"{100 * structured['json/nested']['answer_kept']['mean']:.1f}%)",
        f"{100 * structured['json']['json_parses']:.1f}% of the reduced JSON parses",
        f"tables on questions nothing was tuned on: {unseen['ratio']:.2f}x at {100 * unseen['answer_kept']['mean']:.1f}% (WTQ 301-600), "
        f"{fresh['ratio']:.2f}x at {100 * fresh['answer_kept']['mean']:.1f}% (601 on); FeTaQA tables, never tuned on: every evidence cell kept for "
        f"{100 * feta['answer_kept']['mean']:.1f}% at {feta['ratio']:.2f}x (BM25 lines at the same tokens: {100 * feta['peer_bm25_lines']['answer_kept']['mean']:.1f}%)",
    ]


@pytest.mark.parametrize("doc", ["README.md", "docs/index.md"])
def test_headline_figures_come_from_the_results_files(doc: str) -> None:
    """The headline table is typed by hand (a README is not built): every figure in it is checked against its json."""
    text = (ROOT / doc).read_text(encoding="utf-8")
    missing = [h for h in _headlines() if h not in text]
    assert not missing, f"{doc}: headline figures that no longer match results/*.json (rerun, then update): {missing}"


def _quality(mean: float, low: float, high: float, n: int) -> dict:
    return {"mean": mean, "low": low, "high": high, "n": n}


def test_pareto_renderer_one_row_per_recall_peers_at_the_same_tokens(tmp_path: Path) -> None:
    """``pareto`` (bench_compression.py --pareto's layout): recall, tokenslim's tokens, ratio and Wilson
    interval, then each peer's rate at those tokens; a peer missing at one setting shows ``-``."""
    import json

    def system(tokens: int, ratio: float, q: dict, kept: int | None) -> dict:
        return {"questions": 10, "tokens_before": 5000, "tokens_plain": 5000, "tokens_after": tokens, "ratio": ratio,
                "quality": q, "kept": kept, "p50_ms": None, "p95_ms": None, "halves": []}

    payload = {
        "dataset": "twowiki_open", "command": "python benchmarks/bench_compression.py --pareto --limit 10", "limit": 10,
        "pipeline": "default", "relevance": None, "format": "metadata_title", "metric": "answer_kept", "questions": 10,
        "points": [
            {"recall": 0.5, "systems": {
                "tokenslim": system(1000, 5.0, _quality(0.75, 0.4093, 0.9285, 8), 6),
                "BM25 sentences": system(990, 5.05, _quality(0.5, 0.2152, 0.7848, 8), 4),
                "retriever top-k": system(980, 5.1, _quality(0.25, 0.0715, 0.5907, 8), 2)}},
            {"recall": 0.975, "systems": {
                "tokenslim": system(2500, 2.0, _quality(1.0, 0.6756, 1.0, 8), 8),
                "BM25 sentences": system(2490, 2.01, _quality(0.875, 0.5291, 0.9776, 8), 7)}},
        ],
    }
    path = tmp_path / "pareto_twowiki_open.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    text = _hook().render("pareto", str(path))
    assert "`python benchmarks/bench_compression.py --pareto --limit 10`" in text and "Settings: limit=10." in text
    assert "2WikiMultihopQA open (BM25 top-20 of the pool): 10 questions, 8 with the answer in the input" in text
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    assert rows[0] == "| recall | tokens after | ratio | tokenslim answer kept [95% CI] | BM25 sentences | retriever top-k |"
    assert rows[1:] == [
        "| 0.5 | 1,000 | 5.00x | 75.0% [40.9, 92.8] (6/8) | 50.0% | 25.0% |",
        "| 0.975 | 2,500 | 2.00x | 100.0% [67.6, 100.0] (8/8) | 87.5% | - |",
    ]


def test_structured_renderer_rows_and_sources(tmp_path: Path) -> None:
    """``structured`` (bench_structured.py's layout): one row per type/questions, a source split only
    where a row has several sources, ``-`` where no sample had an answer (NaN rate)."""
    import json

    def row(samples: int, ratio: float, q: dict, peer: float, **extra) -> dict:
        return {"samples": samples, "tokens_before": 1, "tokens_after": 1, "ratio": ratio, "answer_kept": q,
                "peer_bm25_lines": {"tokens_after": 1, "ratio": ratio, "answer_kept": _quality(peer, 0, 1, q["n"])},
                "p50_ms": 3.87, "p95_ms": 9.0, "stage_p50_ms": 2.29, "p50_ms_8k_12k_tokens": None, **extra}

    nan = _quality(float("nan"), float("nan"), float("nan"), 0)
    payload = {"command": "python benchmarks/bench_structured.py ", "tokenizer": "cl100k_base", "results": {
        "json": row(4, 3.0, _quality(1.0, 0.5, 1.0, 4), 0.5, json_parses=1.0, peer_json_parses=0.25),
        "json/lookup": row(4, 6.48, _quality(0.9796, 0.9417, 0.993, 4), 0.6395, json_parses=1.0, peer_json_parses=0.25),
        "json/lookup/api_response": row(2, 2.5, _quality(1.0, 0.5, 1.0, 2), 1.0),
        "json/lookup/json_records": row(2, 25.05, _quality(1.0, 0.5, 1.0, 2), 0.0),
        "log/errors": row(3, 8.48, _quality(1.0, 0.2, 1.0, 1), 1.0),
        "log/errors/HDFS": row(2, 25.34, nan, float("nan")),
        "log/errors/Apache": row(1, 3.49, _quality(1.0, 0.2, 1.0, 1), 1.0),
        "code/named": row(1, 2.22, _quality(1.0, 0.2, 1.0, 1), 0.0),
        "code/named/python": row(1, 2.22, _quality(1.0, 0.2, 1.0, 1), 0.0),
    }}
    path = tmp_path / "structured.json"
    path.write_text(json.dumps(payload), encoding="utf-8")  # NaN written as NaN, as the benchmark does
    text = _hook().render("structured", str(path))
    assert "| JSON, lookup (API responses + records) | 4 | 6.48x | 98.0% [94.2, 99.3] | 63.9% | 3.9 (2.3) | - |" in text
    assert "| logs, every error line | 3 (1 with an answer) | 8.48x |" in text
    assert text.index("JSON, lookup") < text.index("code, function named") < text.index("logs, every error line")
    assert "Reduced JSON that parses: 100.0% of 4 samples (BM25 lines' output: 25.0%)." in text
    assert "| `log/errors/HDFS` | 2 (0 with an answer) | 25.34x | - | - |" in text
    assert "`json/lookup/json_records`" in text and "`code/named/python`" not in text  # an only source repeats its row


def test_conversation_cache_renderer_rows_changes_and_per_turn(tmp_path: Path) -> None:
    """``conversation_cache`` (tokenslim bench-chat's layout): per set one row per mode with its change
    against ``full``, ``-`` where a figure was not measured, and a per-turn table where gold answers exist."""
    import json

    def row(sent: int, computed: int, **extra) -> dict:
        return {"requests": 4, "sent": sent, "computed": computed, "cache_hit": 1 - computed / sent,
                "computed_mean_by_turn": {"0": computed / 4, "1": computed / 4}, **extra}

    payload = {"command": "tokenslim bench-chat --sets coqa", "backend": "vllm", "model": "smollm2", "dtype": "bfloat16",
               "block_size": 32, "kv_block_bytes": 2**20, "summary": {"coqa": {
                   "full": row(1000, 800, ttft_ms_p50=200.0, ttft_ms_nocache_p50=210.0, kv_blocks_p50=30,
                               gold_kept=1.0, gold_kept_by_turn={"0": 1.0, "1": 1.0}),
                   "cache-aware": row(600, 400, ttft_ms_p50=120.0, gold_kept=0.75, gold_kept_by_turn={"0": 1.0, "1": 0.5}),
               }}}
    path = tmp_path / "conversation_cache.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    text = _hook().render("conversation_cache", str(path))
    assert "| full | 4 | 1,000 (+0.0%) | 800 (+0.0%) | 20.0% | 200 | 210 | 30.0 MB | 100.0% |" in text
    assert "| cache-aware | 4 | 600 (-40.0%) | 400 (-50.0%) | 33.3% | 120 | - | - | 75.0% |" in text
    assert "| 2 | 200 / 100% | 100 / 50% |" in text
