"""Bounded cost on pathological input: wall time and peak memory, one subprocess per case.

Each case builds its input from real text in ../shared/data (HotpotQA paragraphs,
an article-benchmark page), then runs extract_main_text or default_pipeline() on
it in a fresh interpreter, so peak RSS belongs to that case alone. The table gives
the wall time of the call, the peak RSS of the process, the RSS the call added
over the process after the input was built, tracemalloc's peak of Python
allocations during the call (run separately, since tracing slows the call),
the bound stated for the case, and whether it held. A case that passes its hard
timeout counts as a failure.

Stated bounds (documented limits, see docs/benchmarks/reliability.md):

* 50 MB HTML page (just under ``tokenslim.html.MAX_HTML_BYTES``): extract_main_text
  and default_pipeline finish; one byte over the limit is refused up front with
  ``InputTooLarge``.
* 100,000-deep ``<div>`` nesting: no RecursionError; the nesting is capped at
  ``tokenslim.html._flatten.MAX_DEPTH`` before parsing, so cost is linear.
* 100,000 chunks and a 1 MB single-line chunk through default_pipeline().

A second table ("growth") runs the adversarial shapes of
:mod:`tokenslim.bench.adversarial` (inputs that once grew ~n^2) through
default_pipeline(), one fresh process per shape: after a warm-up request (imports,
tokenizer), the fastest of ``--repeats`` interleaved runs at n and at 2n in wall and in
CPU time, the growth exponents log2(t(2n) / t(n)) and the peak RSS of the process.
Bound: wall t(n) <= 2 s, CPU-time exponent <= 1.3 (the wall-time one is shown too:
other processes on a shared machine stretch it), peak RSS <= 1 GiB; and 100,000 chunks
of the first shape in <= 10 s wall.

Run (serialised with other timing runs)::

    flock /tmp/tokenslim-bench.lock python benchmarks/bounds.py                 # both tables
    flock /tmp/tokenslim-bench.lock python benchmarks/bounds.py --table growth  # the shapes only
    python benchmarks/bounds.py --case nesting_100k_extract   # one case, prints JSON
    python benchmarks/bounds.py --shape dots_run              # one shape, prints JSON
"""

from __future__ import annotations

import argparse
import gc
import gzip
import json
import os
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # measure the tokenslim of this tree, not another installed one
COMMAND = "flock /tmp/tokenslim-bench.lock python benchmarks/bounds.py"
QUERY = "Which university is located in Kansas City, Missouri?"

# case -> (what it does, wall-time bound in s, peak-RSS bound in MiB, hard timeout in s)
BOUNDS: dict[str, tuple[str, float, float, float]] = {
    "html_50mb_extract": ("extract_main_text, 49.9 MB page", 120.0, 3072.0, 400.0),
    "html_50mb_pipeline": ("default_pipeline, 49.9 MB page as one chunk", 240.0, 3072.0, 500.0),
    "html_over_limit": ("extract_main_text, 50 MB + 1 char page (refused)", 1.0, 1024.0, 60.0),
    "nesting_100k_extract": ("extract_main_text, 100,000-deep <div>", 10.0, 1024.0, 120.0),
    "nesting_100k_pipeline": ("default_pipeline, 100,000-deep <div> chunk", 10.0, 1024.0, 120.0),
    "chunks_100k_pipeline": ("default_pipeline, 100,000 chunks", 240.0, 3072.0, 500.0),
    "single_line_1mb_pipeline": ("default_pipeline, 1 MB single-line chunk", 30.0, 1024.0, 200.0),
}


def _paragraphs() -> list[str]:
    from tokenslim.bench.datasets import data_dir

    out: list[str] = []
    with gzip.open(data_dir() / "hotpotqa_distractor" / "hotpotqa_dev_distractor.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            out.extend(c["paragraph_text"] for c in json.loads(line)["contexts"])
    return out


def _big_page(chars: int) -> str:
    """A page of real paragraphs inside an article, plus nav/aside boilerplate, ``chars`` long."""
    paras = _paragraphs()
    head = "<!DOCTYPE html><html><head><title>HotpotQA</title></head><body><nav><a href='/'>Home</a></nav><article>"
    tail = "</article><aside class='sidebar'>Related</aside></body></html>"
    parts: list[str] = [head]
    size = len(head) + len(tail)
    i = 0
    while True:
        p = f"<p>{paras[i % len(paras)]}</p>\n"
        if size + len(p) > chars:
            break
        parts.append(p)
        size += len(p)
        i += 1
    parts.append(tail)
    page = "".join(parts)
    return page + " " * (chars - len(page))


def _nested(depth: int) -> str:
    para = _paragraphs()[0]
    return "<html><body>" + "<div>" * depth + f"<p>{para}</p>" + "</div>" * depth + "</body></html>"


def _many_chunks(n: int) -> list[str]:
    """``n`` distinct chunks: real paragraphs, sentences rotated on each repeat (no invented words)."""
    paras = _paragraphs()
    out = []
    for i in range(n):
        sents = paras[i % len(paras)].split(". ")
        r = (i // len(paras)) % max(1, len(sents))
        out.append(". ".join(sents[r:] + sents[:r]))
    return out


def _single_line(chars: int) -> str:
    text = " ".join(p.replace("\n", " ") for p in _paragraphs())
    while len(text) < chars:
        text += " " + text
    return text[:chars]


def _build(case: str) -> Callable[[], Any]:
    """Build the input (not timed) and return the call to measure."""
    import tokenslim
    from tokenslim.html import MAX_HTML_BYTES, extract_main_text

    if case == "html_50mb_extract":
        page = _big_page(MAX_HTML_BYTES - 100_000)
        return lambda: len(extract_main_text(page))
    if case == "html_50mb_pipeline":
        page = _big_page(MAX_HTML_BYTES - 100_000)
        return lambda: len(tokenslim.default_pipeline().run(QUERY, [page]).chunks)
    if case == "html_over_limit":
        page = _big_page(MAX_HTML_BYTES + 1)

        def refused() -> str:
            try:
                extract_main_text(page)
            except tokenslim.errors.InputTooLarge as exc:
                return f"InputTooLarge: {str(exc)[:60]}"
            return "accepted (bound broken)"

        return refused
    if case == "nesting_100k_extract":
        page = _nested(100_000)
        return lambda: len(extract_main_text(page))
    if case == "nesting_100k_pipeline":
        page = _nested(100_000)
        return lambda: len(tokenslim.default_pipeline().run(QUERY, [page]).chunks)
    if case == "chunks_100k_pipeline":
        chunks = _many_chunks(100_000)
        return lambda: len(tokenslim.default_pipeline().run(QUERY, chunks).chunks)
    if case == "single_line_1mb_pipeline":
        line = _single_line(1_000_000)
        return lambda: len(tokenslim.default_pipeline().run(QUERY, [line]).chunks[0].text)
    raise SystemExit(f"unknown case {case!r}; cases: {sorted(BOUNDS)}")


def _rss_mib() -> float:
    """Current resident set size of this process, MiB (Linux /proc)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def run_case(case: str, trace: bool) -> dict[str, Any]:
    """Measure one case in this process (called in the child)."""
    call = _build(case)
    gc.collect()
    base = _rss_mib()
    if trace:
        tracemalloc.start()
    t0 = time.perf_counter()
    out = call()
    wall = time.perf_counter() - t0
    traced = tracemalloc.get_traced_memory()[1] / 2**20 if trace else None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    return {"case": case, "wall_s": wall, "peak_rss_mib": peak, "added_rss_mib": peak - base, "traced_mib": traced, "out": out}


# growth bounds: t(n) s, exponent, peak RSS MiB; the single-point case: s, MiB
GROWTH_S, GROWTH_EXP, GROWTH_MIB = 2.0, 1.3, 1024.0
SINGLE = ("many_chunks", 100_000, 10.0, 1024.0)


def run_shape(name: str, n: int | None, repeats: int, single: bool) -> dict[str, Any]:
    """Measure one adversarial shape in this process (called in the child)."""
    from tokenslim.bench.adversarial import SHAPES, growth, run_request

    shape = SHAPES[name]
    n = n or shape.n
    run_request(shape.build(10))  # warm-up: imports, tokenizer, regex compilation
    if single:
        request = shape.build(n)
        wall = min(run_request(request)[0] for _ in range(repeats))
        out: dict[str, Any] = {"shape": name, "n": n, "t_n": wall}
    else:
        g = growth(shape, n, repeats)
        out = {"shape": name, "n": n, "t_n": g.wall_n, "t_2n": g.wall_2n, "exponent": g.wall_exponent,
               "cpu_n": g.cpu_n, "cpu_2n": g.cpu_2n, "cpu_exponent": g.cpu_exponent}
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def _shape_child(name: str, n: int | None, repeats: int, single: bool, timeout: float) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--shape", name, "--repeats", str(repeats)]
    cmd += (["--n", str(n)] if n else []) + (["--single"] if single else [])
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"shape": name, "error": f"timeout after {timeout:.0f} s"}
    if proc.returncode != 0:
        return {"shape": name, "error": (proc.stderr.strip().splitlines() or ["exit " + str(proc.returncode)])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def growth_table(names: list[str], repeats: int) -> int:
    """Print the growth table; returns the number of shapes out of bounds."""
    from tokenslim.bench.adversarial import SHAPES

    head = (f"{'shape':<19}{'input':<40}{'n':>8}{'t(n) s':>9}{'t(2n) s':>9}{'exp':>6}"
            f"{'CPU t(n)':>10}{'CPU t(2n)':>10}{'CPU exp':>8}{'peak RSS MiB':>14}  ok")
    print(head + "\n" + "-" * len(head), flush=True)
    failed = 0
    for name in names:
        r = _shape_child(name, None, repeats, False, 600)
        if "error" in r:
            failed += 1
            print(f"{name:<19}{SHAPES[name].what:<40}  FAILED: {r['error']}", flush=True)
            continue
        ok = r["t_n"] <= GROWTH_S and r["cpu_exponent"] <= GROWTH_EXP and r["peak_rss_mib"] <= GROWTH_MIB
        failed += not ok
        print(
            f"{name:<19}{SHAPES[name].what:<40}{r['n']:>8,}{r['t_n']:>9.3f}{r['t_2n']:>9.3f}{r['exponent']:>6.2f}"
            f"{r['cpu_n']:>10.3f}{r['cpu_2n']:>10.3f}{r['cpu_exponent']:>8.2f}{r['peak_rss_mib']:>14.0f}  {'yes' if ok else 'NO'}",
            flush=True,
        )
    name, n, max_s, max_mib = SINGLE
    if name in names:
        r = _shape_child(name, n, 1, True, 600)
        if "error" in r:
            failed += 1
            print(f"{name:<19}{'100,000 chunks (bound 10 s)':<40}  FAILED: {r['error']}")
        else:
            ok = r["t_n"] <= max_s and r["peak_rss_mib"] <= max_mib
            failed += not ok
            print(f"{name:<19}{'same, bound 10 s':<40}{n:>8,}{r['t_n']:>9.3f}{'':>43}{r['peak_rss_mib']:>14.0f}  {'yes' if ok else 'NO'}")
    print(f"bound: wall t(n) <= {GROWTH_S:g} s, CPU-time exponent log2(t(2n)/t(n)) <= {GROWTH_EXP:g}, peak RSS <= "
          f"{GROWTH_MIB:g} MiB; fastest of {repeats} interleaved runs after a warm-up request (the wall-time exponent is "
          "shown too; other processes on a shared machine stretch it, not this process's CPU time)")
    return failed


def _child(case: str, trace: bool, timeout: float) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--case", case] + (["--trace"] if trace else [])
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"case": case, "error": f"timeout after {timeout:.0f} s"}
    if proc.returncode != 0:
        return {"case": case, "error": (proc.stderr.strip().splitlines() or ["exit " + str(proc.returncode)])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--case", help="run one case in this process and print JSON")
    ap.add_argument("--trace", action="store_true", help="with --case: also trace Python allocations")
    ap.add_argument("--only", nargs="*", default=None, help="cases to run (default: all)")
    ap.add_argument("--no-trace", action="store_true", help="skip the tracemalloc pass")
    ap.add_argument("--table", choices=("limits", "growth", "all"), default="all", help="which table to run")
    ap.add_argument("--shape", help="measure one adversarial shape in this process and print JSON")
    ap.add_argument("--n", type=int, help="with --shape: size (default: the shape's stated n)")
    ap.add_argument("--single", action="store_true", help="with --shape: time n only")
    ap.add_argument("--repeats", type=int, default=3, help="interleaved runs per size (fastest counts)")
    args = ap.parse_args()
    if args.case:
        print(json.dumps(run_case(args.case, args.trace)))
        return
    if args.shape:
        print(json.dumps(run_shape(args.shape, args.n, args.repeats, args.single)))
        return
    failed = 0
    if args.table in ("growth", "all"):
        from tokenslim.bench.adversarial import SHAPES

        names = [c for c in (args.only or SHAPES) if c in SHAPES]
        failed += growth_table(names, args.repeats)
        print(f"command: {COMMAND} --table growth" + (" --only " + " ".join(args.only) if args.only else ""))
        if args.table == "growth":
            sys.exit(1 if failed else 0)
        print()
    cases = [c for c in (args.only or BOUNDS) if c in BOUNDS]
    head = f"{'case':<26}{'what':<48}{'wall s':>8}{'peak RSS MiB':>14}{'added MiB':>11}{'traced MiB':>12}{'bound':>16}  ok"
    rows = [head, "-" * len(head)]
    print("\n".join(rows), flush=True)
    growth_failed, failed = failed, 0
    for case in cases:
        what, max_s, max_mib, timeout = BOUNDS[case]
        r = _child(case, False, timeout)
        t = {} if args.no_trace or "error" in r else _child(case, True, timeout * 3)
        bound = f"{max_s:g} s/{max_mib:g} MiB"
        if "error" in r:
            failed += 1
            rows.append(f"{case:<26}{what:<48}  FAILED: {r['error']}")
        else:
            ok = r["wall_s"] <= max_s and r["peak_rss_mib"] <= max_mib
            failed += not ok
            traced = t.get("traced_mib")
            traced_s = f"{traced:>12.1f}" if isinstance(traced, (int, float)) else f"{'-':>12}"
            rows.append(
                f"{case:<26}{what:<48}{r['wall_s']:>8.2f}{r['peak_rss_mib']:>14.1f}{r['added_rss_mib']:>11.1f}"
                f"{traced_s}{bound:>16}  {'yes' if ok else 'NO'}"
            )
        print(rows[-1], flush=True)
    print(f"\n{len(cases) - failed}/{len(cases)} cases within bounds; python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    extra = (" --only " + " ".join(args.only) if args.only else "") + (" --no-trace" if args.no_trace else "")
    print(f"command: {COMMAND}{extra}")
    sys.exit(1 if failed + growth_failed else 0)


if __name__ == "__main__":
    main()
