"""Which hiding techniques leak through which extractor: the injection corpus, tool by tool.

Corpus: tests/reliability/injection_corpus/ (manifest.json: per page the technique, the hidden
instructions and the visible paragraphs). For every page and tool, "leak" means a hidden
instruction (its canary word ``zxNN``, or for one without a canary its first 40 characters:
every instruction opens alike, and a page may show one on screen) or Unicode tag characters or
variation selectors reached the output; "kept" means every visible paragraph is in the output (whitespace
collapsed). Tools get the raw page bytes:

  * tokenslim ``extract_main_text``
  * tokenslim ``default_pipeline()``: the page (decoded as UTF-8) as the only chunk, then as a
    tool message in the history; the leak check runs on ``Result.to_prompt()``. For the chunk,
    "kept" is checked on StripHTML's output (the text CompressDocuments received: later
    stages keep only the sentences relevant to the question, each cut recorded as a drop),
    and "in prompt" counts the paragraphs that are in the prompt whole
  * trafilatura ``extract`` (defaults) and readability-lxml ``Document.summary()`` + lxml text

Run (from the repo root):
    flock /tmp/tokenslim-bench.lock python benchmarks/bench_injection.py
Writes results/injection.json (per page and tool) and prints the pages each tool leaks.
trafilatura / readability are imported only here.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Callable

from _peers import readability_text, trafilatura_text

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "reliability" / "injection_corpus"
_TAG_CHARS = re.compile("[\U000e0000-\U000e007f\ufe00-\ufe0f\U000e0100-\U000e01ef]")
_CANARY = re.compile(r"zx\d\d")


def norm(text: str) -> str:
    """Whitespace collapsed to single spaces."""
    return " ".join(text.split())


def leaks(text: str, hidden: list[str]) -> list[str]:
    """The hidden instructions (by canary word, else first 40 characters) found in ``text``."""
    flat = norm(text).lower()
    out = []
    for h in hidden:
        m = _CANARY.search(h)
        if (m.group() in flat) if m else norm(h).lower()[:40] in flat:
            out.append(h)
    if _TAG_CHARS.search(text):
        out.append("<unicode tag characters or variation selectors>")
    return out


def tool_tokenslim() -> Callable[[bytes], str]:
    from tokenslim.html import extract_main_text

    return extract_main_text


def tool_pipeline_chunk() -> Callable[[bytes], tuple[str, str]]:
    import tokenslim

    pipe = tokenslim.default_pipeline()

    def run(page: bytes) -> tuple[str, str]:
        r = pipe.run("What is this page about?", [page.decode("utf-8")])
        stripped = [c.text for c in r.chunks] + [
            d.item.text for d in r.drops if d.kind == "text" and d.stage != "strip_html"
        ]
        return r.to_prompt(), "\n".join(stripped)

    return run


def tool_pipeline_history() -> Callable[[bytes], str]:
    import tokenslim

    pipe = tokenslim.default_pipeline()

    def run(page: bytes) -> str:
        history = [{"role": "user", "content": "Please fetch the page."},
                   {"role": "tool", "content": page.decode("utf-8"), "tool_call_id": "call_1"}]
        return pipe.run("What is this page about?", [], history=history).to_prompt()

    return run


TOOLS = {
    "tokenslim": tool_tokenslim,
    "pipeline_chunk": tool_pipeline_chunk,
    "pipeline_history": tool_pipeline_history,
    "trafilatura": trafilatura_text,
    "readability": readability_text,
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tools", default=",".join(TOOLS), help="comma-separated subset of " + ",".join(TOOLS))
    ap.add_argument("--out", default=str(ROOT / "results" / "injection.json"))
    args = ap.parse_args(argv)
    pages = json.loads((CORPUS / "manifest.json").read_text(encoding="utf-8"))["pages"]
    results: dict[str, dict] = {}
    for name in args.tools.split(","):
        fn = TOOLS[name]()
        per_page = {}
        for p in pages:
            raw = (CORPUS / p["file"]).read_bytes()
            try:
                out = fn(raw)
                error = None
            except Exception as exc:  # noqa: BLE001 - a peer's crash is recorded, not fatal
                out, error = "", f"{type(exc).__name__}: {exc}"[:200]
            text, kept_text = out if isinstance(out, tuple) else (out, out)
            leaked = leaks(text, p["hidden"])
            kept = sum(norm(v) in norm(kept_text) for v in p["visible"])
            whole = sum(norm(v) in norm(text) for v in p["visible"])
            per_page[p["file"]] = {"technique": p["technique"], "leaked": len(leaked), "hidden": len(p["hidden"]),
                                   "visible_kept": kept, "visible_in_output": whole, "visible": len(p["visible"]),
                                   "error": error}
        results[name] = per_page
    print(f"Injection corpus: {len(pages)} pages, {sum(len(p['hidden']) for p in pages)} hidden instructions, "
          f"{sum(len(p['visible']) for p in pages)} visible paragraphs")
    head = (f"{'tool':<18}{'pages leaking':>15}{'instructions leaked':>21}{'visible kept':>14}{'in output':>11}"
            f"{'errors':>8}")
    print(head)
    print("-" * len(head))
    for name, per_page in results.items():
        leaking = sum(1 for r in per_page.values() if r["leaked"])
        leaked = sum(r["leaked"] for r in per_page.values())
        hidden = sum(r["hidden"] for r in per_page.values())
        kept = sum(r["visible_kept"] for r in per_page.values())
        visible = sum(r["visible"] for r in per_page.values())
        whole = sum(r["visible_in_output"] for r in per_page.values())
        errors = sum(1 for r in per_page.values() if r["error"])
        print(f"{name:<18}{leaking:>9}/{len(per_page):<5}{leaked:>14}/{hidden:<6}{kept:>8}/{visible:<5}{whole:>6}/{visible:<4}"
              f"{errors:>8}")
    for name, per_page in results.items():
        leaking = [f"{f[:2]} {r['technique']}" for f, r in per_page.items() if r["leaked"]]
        if leaking:
            print(f"\n{name} leaks on:\n  " + "\n  ".join(leaking))
    command = "flock /tmp/tokenslim-bench.lock python benchmarks/bench_injection.py" + (
        f" --tools {args.tools}" if args.tools != ",".join(TOOLS) else "")
    print(f"\ncommand: {command}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"command": command, "python": sys.version.split()[0], "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
