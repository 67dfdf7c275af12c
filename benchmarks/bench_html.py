"""Benchmark: tokenslim's HTML main-text extraction vs trafilatura, readability-lxml and naive bs4.

Data (read-only, relative to the repo root):
  ../shared/data/article_extraction_benchmark  121 pages + gold article bodies
  ../shared/data/trafilatura_eval_subset       300 pages + must-contain / must-not-contain snippets

Metrics (identical for every tool):
  * article benchmark: text is lower-cased and split into word tokens (regex ``\\w+``, so
    punctuation, markdown markers and whitespace kinds do not matter); sets of 4-word
    shingles of the extracted and gold text give per-page precision and recall (an empty
    extraction scores 0/0); P and R are means over pages (each page weighs the same) and
    F1 = 2PR/(P+R) of those means.
  * trafilatura set: invisible format characters (Unicode Cf: soft hyphens, zero-width marks)
    are deleted and whitespace is collapsed to single spaces in both the extracted text and
    each snippet; "with" = share of must-contain snippets found (substring, case-sensitive),
    "without" = share of must-not-contain snippets absent. Pooled over all snippets.
  * time: each tool gets the same raw page bytes (decompressed and read beforehand, not timed)
    and is timed from bytes to text (parsing + extraction, including HTML-to-text for
    readability); ms/page p50 and mean over all 421 pages. Runs are interleaved: each page
    goes through every tool (in an order rotating per page) before the next page.

Run (from the repo root):
    flock /tmp/tokenslim-bench.lock python benchmarks/bench_html.py
Writes results/html.json. trafilatura / readability are imported only here.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
import sys
import time
import unicodedata
from pathlib import Path
from typing import Callable

from _peers import readability_text, trafilatura_text

from tokenslim.bench.datasets import data_dir

ROOT = Path(__file__).resolve().parent.parent
_WORD = re.compile(r"\w+")


def shingles(text: str, n: int = 4) -> set[tuple[str, ...]]:
    """Set of n-word shingles of lower-cased word tokens (whole text if shorter than n)."""
    words = _WORD.findall(text.lower())
    if len(words) < n:
        return {tuple(words)} if words else set()
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def page_pr(extracted: str, gold: str) -> tuple[float, float]:
    """Shingle precision and recall of one page."""
    e, g = shingles(extracted), shingles(gold)
    if not e or not g:
        return (1.0, 1.0) if not e and not g else (0.0, 0.0)
    inter = len(e & g)
    return inter / len(e), inter / len(g)


def norm_ws(text: str) -> str:
    """Delete invisible format characters (Unicode category Cf: soft hyphen, zero-width and bidi
    marks) and collapse every whitespace run to one space (applied to texts and snippets alike)."""
    if any(unicodedata.category(ch) == "Cf" for ch in text):
        text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    return " ".join(text.split())


def load_pages() -> tuple[list[tuple[str, bytes, str]], list[tuple[str, bytes, list[str], list[str]]]]:
    """Read both datasets (decompressed once, outside any timing)."""
    data = data_dir()
    aeb = data / "article_extraction_benchmark"
    gt = json.loads((aeb / "ground-truth.json").read_text(encoding="utf-8"))
    articles = [
        (pid, gzip.open(aeb / "html" / f"{pid}.html.gz").read(), v["articleBody"]) for pid, v in sorted(gt.items())
    ]
    tes = data / "trafilatura_eval_subset"
    ann = json.loads((tes / "annotations.json").read_text(encoding="utf-8"))
    snippets = []
    for key, v in sorted(ann.items()):
        path = tes / v["html"]
        if path.exists():
            snippets.append((key, gzip.open(path).read(), list(v.get("with") or []), list(v.get("without") or [])))
    return articles, snippets


def tool_tokenslim() -> Callable[[bytes], str]:
    from tokenslim.html import extract_main_text

    return extract_main_text


def tool_bs4() -> Callable[[bytes], str]:
    from bs4 import BeautifulSoup

    return lambda html: BeautifulSoup(html, "lxml").get_text(" ")


TOOLS = {"tokenslim": tool_tokenslim, "trafilatura": trafilatura_text, "readability-lxml": readability_text,
         "bs4-get_text": tool_bs4}


def run_tools(fns: dict[str, Callable[[bytes], str]], pages: list[bytes]) -> tuple[dict, dict]:
    """Texts and times per tool, interleaved: each page goes through every tool before the next
    page, the tool order rotating per page, so load from other processes on a shared machine
    falls on all tools alike and the time ratios compare like with like."""
    names = list(fns)
    texts: dict[str, list[str]] = {n: [] for n in names}
    times: dict[str, list[float]] = {n: [] for n in names}
    for i, html in enumerate(pages):
        k = i % len(names)
        for name in names[k:] + names[:k]:
            t = time.perf_counter()
            try:
                text = fns[name](html)
            except Exception:  # noqa: BLE001 - a crashing tool scores 0 on that page
                text = ""
            times[name].append(time.perf_counter() - t)
            texts[name].append(text)
    return texts, times


def score(texts: list[str], times: list[float], articles, snippets) -> dict:
    """One tool's metrics from its texts (articles first, then snippet pages) and times."""
    ps, rs = [], []
    per_page = {}
    for (pid, _html, gold), text in zip(articles, texts):
        p, r = page_pr(text, gold)
        ps.append(p)
        rs.append(r)
        per_page[pid] = [round(p, 4), round(r, 4)]
    found = total_with = absent = total_without = 0
    for (_key, _html, with_, without), text in zip(snippets, texts[len(articles):]):
        text = norm_ws(text)
        for s in with_:
            total_with += 1
            found += norm_ws(s) in text
        for s in without:
            total_without += 1
            absent += norm_ws(s) not in text
    P, R = statistics.mean(ps), statistics.mean(rs)
    return {
        "F1": 2 * P * R / (P + R) if P + R else 0.0,
        "P": P,
        "R": R,
        "ms_p50": statistics.median(times) * 1000,
        "ms_mean": statistics.mean(times) * 1000,
        "with": found / max(1, total_with),
        "without": absent / max(1, total_without),
        "pages": len(times),
        "per_page": per_page,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tools", default=",".join(TOOLS), help="comma-separated subset of " + ",".join(TOOLS))
    ap.add_argument("--out", default=str(ROOT / "results" / "html.json"))
    args = ap.parse_args(argv)
    articles, snippets = load_pages()
    fns = {name: TOOLS[name]() for name in args.tools.split(",")}
    for fn in fns.values():
        fn(articles[0][1])  # warm-up (imports, regex compilation), not timed
    pages = [html for _, html, _ in articles] + [html for _, html, *_ in snippets]
    texts, times = run_tools(fns, pages)
    results = {name: score(texts[name], times[name], articles, snippets) for name in fns}
    command = "flock /tmp/tokenslim-bench.lock python benchmarks/bench_html.py" + (
        f" --tools {args.tools}" if args.tools != ",".join(TOOLS) else "")
    print(f"HTML main-text extraction: {len(articles)} article pages (shingle P/R/F1), "
          f"{len(snippets)} trafilatura-eval pages (snippets)")
    head = f"{'tool':<18}{'F1':>7}{'P':>7}{'R':>7}{'ms p50':>9}{'ms mean':>9}{'with':>7}{'without':>9}"
    print(head)
    print("-" * len(head))
    for name, r in results.items():
        print(f"{name:<18}{r['F1']:>7.3f}{r['P']:>7.3f}{r['R']:>7.3f}{r['ms_p50']:>9.2f}{r['ms_mean']:>9.2f}"
              f"{r['with']:>7.3f}{r['without']:>9.3f}")
    if "tokenslim" in results and "trafilatura" in results:
        a, b = results["tokenslim"], results["trafilatura"]
        print(f"tokenslim vs trafilatura: F1 {a['F1'] - b['F1']:+.3f}, time ratio (p50) {a['ms_p50'] / b['ms_p50']:.3f}x"
              f" (goal: F1 >= trafilatura at <= 0.33x)")
    print(f"command: {command}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"command": command, "python": sys.version.split()[0], "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
