"""SummarizeConversation vs plain "keep the last N turns" truncation, on real dialogues.

SGD (../shared/data/sgd_dialogues, all 128 dialogues of the dev shard via
``tokenslim.bench.datasets.sgd()``): history = every turn but the last, the last
turn is the query. *Slot retention* = share of gold slot values (final value of
each ``service.slot``; a slot counts when any of its gold spellings is a
case-insensitive substring) found in the compressed history (state message + kept
turns), among the slots found in the uncompressed history. Summed over all
dialogues (micro average).

DialogSum (../shared/data/dialogsum/dialogsum.dev.jsonl, all 500 dev dialogues;
``#Person1#`` -> user, ``#Person2#`` -> assistant; history = every line but the
last): token ratio and *summary recall* = ROUGE-1 recall: clipped count of the
human summary's lower-cased word tokens (``\\w+``, stopwords kept) that occur in
the compressed history, divided by the summary's token count, averaged over
dialogues. The uncompressed history gives the ceiling.

tokenslim runs as shipped (``SummarizeConversation(keep_last=N)``, folding in blocks of 8
messages) and with ``fold_every=None`` (folding on every request, the smallest history).
Baselines measured in the same run: "truncate last N" (what trim_messages does)
and "truncate to same tokens": per dialogue, the longest tail of turns whose prompt
is no larger than tokenslim's output, so the two are compared at (at most) equal size.

Tokens are whole-prompt tokens (history + query) in cl100k_base, as
``Result.prompt_tokens()`` counts them. Timing is per call of the stage alone.

Run from the repository root::

    flock /tmp/tokenslim-bench.lock python benchmarks/bench_conversation.py

Writes results/conversation_sgd.json.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable

from tokenslim import Result
from tokenslim.bench import datasets
from tokenslim.stages import SummarizeConversation
from tokenslim.tokenizers import get_tokenizer

COMMAND = "flock /tmp/tokenslim-bench.lock python benchmarks/bench_conversation.py"
_WORD = re.compile(r"\w+")


def truncate(result: Result, keep_last: int) -> Result:
    """The baseline: keep the last ``keep_last`` messages (what trim_messages does)."""
    result.history = result.history[len(result.history) - keep_last :] if keep_last else []
    return result


def truncate_to(result: Result, max_tokens: int) -> Result:
    """Baseline at equal size: the longest tail of the history whose prompt fits ``max_tokens``."""
    history = result.history
    keep = 0
    while keep < len(history):
        result.history = history[len(history) - keep - 1 :]
        if result.prompt_tokens() > max_tokens:
            break
        keep += 1
    result.history = history[len(history) - keep :] if keep else []
    return result


def history_text(result: Result) -> str:
    return "\n".join(str(m.get("content", "")) for m in result.history)


def slot_counts(history: str, compressed: str, slots: dict[str, list[str]]) -> tuple[int, int]:
    """(slots present in the full history, of those present in the compressed history)."""
    full, comp = history.lower(), compressed.lower()
    present = kept = 0
    for values in slots.values():
        vals = [v.lower() for v in values if v.strip()]
        if any(v in full for v in vals):
            present += 1
            kept += any(v in comp for v in vals)
    return present, kept


def rouge1_recall(reference: str, text: str) -> float:
    ref = Counter(_WORD.findall(reference.lower()))
    got = Counter(_WORD.findall(text.lower()))
    total = sum(ref.values())
    return sum(min(n, got[w]) for w, n in ref.items()) / total if total else 0.0


def timed(fn: Callable[[Result], Result], result: Result) -> tuple[Result, float]:
    t0 = time.perf_counter()
    out = fn(result)
    return out, (time.perf_counter() - t0) * 1000


def dialogsum_examples(path: Path) -> list[tuple[list[dict[str, str]], str, str]]:
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            msgs = []
            for ln in row["dialogue"].split("\n"):
                m = re.match(r"#Person(\d)#:\s*(.*)", ln)
                if m:
                    msgs.append({"role": "user" if m.group(1) == "1" else "assistant", "content": m.group(2)})
            out.append((msgs[:-1], msgs[-1]["content"], row["summary"]))
    return out


def run_method(name: str, fn: Callable[[Result], Result], rows: list[tuple[Any, ...]], tok: Any, score: Callable) -> dict:
    before = 0
    sizes: list[int] = []
    ms: list[float] = []
    acc: list[Any] = []
    for history, query, gold in rows:
        r = Result.create(query, history=history, tokenizer=tok)
        full = history_text(r)
        before += r.tokens_before
        r.current_stage = "bench"
        out, t = timed(fn, r)
        ms.append(t)
        sizes.append(out.prompt_tokens())
        acc.append(score(full, history_text(out), gold))
    after = sum(sizes)
    return {"method": name, "tokens_before": before, "tokens_after": after, "ratio": before / max(1, after),
            "ms_p50": statistics.median(ms), "scores": acc, "sizes": sizes}


def compare(n: int, rows: list[tuple[Any, ...]], tok: Any, score: Callable) -> list[dict]:
    """Truncation to the last ``n`` turns, tokenslim with ``keep_last=n`` (as shipped: folding in
    blocks of 8 messages; and folding on every request, ``fold_every=None``), and truncation held
    to the shipped stage's output size dialogue by dialogue (the fair equal-size baseline)."""
    stage = SummarizeConversation(keep_last=n)
    every_turn = SummarizeConversation(keep_last=n, fold_every=None)
    out = [
        run_method(f"truncate last {n}", lambda r: truncate(r, n), rows, tok, score),
        run_method("tokenslim summarize", stage, rows, tok, score),
        run_method("tokenslim, fold every turn", every_turn, rows, tok, score),
    ]
    sizes = iter(out[1]["sizes"])
    out.append(run_method("truncate to same tokens", lambda r: truncate_to(r, next(sizes)), rows, tok, score))
    for res in out:
        del res["sizes"]
        res["keep_last"] = n
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--keep-last", type=int, nargs="+", default=[2, 4, 6])
    ap.add_argument("--out", default="results/conversation_sgd.json")
    args = ap.parse_args(argv)
    tok = get_tokenizer(None)

    sgd = [(e.history, e.query, e.gold["slot_values"]) for e in datasets.sgd()]
    dsum_path = datasets.data_dir() / "dialogsum" / "dialogsum.dev.jsonl"
    dsum = dialogsum_examples(dsum_path)

    def slots(full: str, comp: str, gold: dict) -> tuple[int, int]:
        return slot_counts(full, comp, gold)

    def recall(full: str, comp: str, gold: str) -> tuple[float, float]:
        return rouge1_recall(gold, full), rouge1_recall(gold, comp)

    rows_out: dict[str, Any] = {"command": COMMAND, "tokenizer": tok.name, "sgd": [], "dialogsum": []}
    print(f"SGD dev shard 001: {len(sgd)} dialogues; tokens = prompt tokens (history + query), {tok.name}")
    head = f"{'keep_last':>9}  {'method':<24}{'tokens before':>14}{'tokens after':>13}{'ratio':>7}{'slot retention':>16}{'ms p50':>8}"
    print(head)
    print("-" * len(head))
    for n in args.keep_last:
        for res in compare(n, sgd, tok, slots):
            present = sum(p for p, _ in res["scores"])
            kept = sum(k for _, k in res["scores"])
            res["slot_retention"] = kept / max(1, present)
            res["slots_present"], res["slots_kept"] = present, kept
            del res["scores"]
            rows_out["sgd"].append(res)
            print(f"{n:>9}  {res['method']:<24}{res['tokens_before']:>14}{res['tokens_after']:>13}{res['ratio']:>7.2f}"
                  f"{res['slot_retention']:>16.3f}{res['ms_p50']:>8.2f}")

    print()
    print(f"DialogSum dev: {len(dsum)} dialogues; summary recall = ROUGE-1 recall of the human summary")
    head = f"{'keep_last':>9}  {'method':<24}{'tokens before':>14}{'tokens after':>13}{'ratio':>7}{'recall full':>12}{'recall kept':>12}{'ms p50':>8}"
    print(head)
    print("-" * len(head))
    for n in args.keep_last:
        for res in compare(n, dsum, tok, recall):
            res["recall_full"] = statistics.mean(f for f, _ in res["scores"])
            res["recall_compressed"] = statistics.mean(c for _, c in res["scores"])
            del res["scores"]
            rows_out["dialogsum"].append(res)
            print(f"{n:>9}  {res['method']:<24}{res['tokens_before']:>14}{res['tokens_after']:>13}{res['ratio']:>7.2f}"
                  f"{res['recall_full']:>12.3f}{res['recall_compressed']:>12.3f}{res['ms_p50']:>8.2f}")

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows_out, indent=2) + "\n")
    print(f"\nwrote {out}\ncommand: {COMMAND}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
