"""Conversations under a prefix cache: tokens computed per turn for each way of compressing the history.

Every turn of a conversation (:mod:`tokenslim.bench.conversations`) is sent as an application
sends it: system prompt, the whole history so far, the turn's retrieved chunks and the new
message. Each row runs one conversation through a :class:`tokenslim.Conversation`:

* ``full``: no compression (what most applications send);
* ``query-independent``: StripHTML and Dedupe only;
* ``per-request``: :func:`default_pipeline` folding the history on every request
  (``summarize_conversation__fold_every=None``);
* ``cache-aware``: :func:`default_pipeline` as shipped (the history folded in blocks of 8
  messages, appended to the state);
* ``cache-aware + stable docs``: the same through ``Conversation(documents="stable")``.

On vLLM, *computed* = prompt tokens - ``num_cached_tokens``, the engine's own count of tokens
taken from its prefix cache. The cache is reset before each (conversation, row) run, and the
rows of a conversation run in a rotating order, so they are interleaved and none reuses
another's KV. TTFT and the KV blocks the engine reports held are per request (2 tokens are
generated so that the scheduler's KV gauge is seen at its peak). With ``cache_off`` the
requests of the ``full`` and ``cache-aware`` rows also run, each right after its first run, on
a second engine with prefix caching off; vLLM then reports only that engine's KV gauge, so the
KV blocks held are observed there, for those two rows (a request holds as many blocks whether
or not they came from the cache). Without an engine (``backend="sim"``), a block prefix
cache is simulated on the pipeline's tokenizer over ``Result.to_prompt()``.

Quality: SGD slot retention (a gold slot value, case-insensitive, found in the history the
request sends, among those found in the full history; micro average over every request and
over each dialogue's last request); for the chats, whether a gold string (CoQA answer span,
2Wiki supporting sentence or answer) is in the context sent.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Sequence

from tokenslim._conversation import Conversation
from tokenslim._pipeline import Pipeline, default_pipeline
from tokenslim._result import Result
from tokenslim.bench.conversations import CONVERSATION_SETS, Dialogue
from tokenslim.stages import Dedupe, StripHTML

__all__ = ["ROWS", "CACHE_OFF_ROWS", "SimCache", "run_conversations", "summarise", "plot", "text_table"]

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


def run_dialogue(name: str, make: Callable[[], Conversation], dialogue: Dialogue, measure: Callable[[Result, str], dict[str, Any]]) -> list[dict[str, Any]]:
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


def summarise(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per row: totals, per-turn medians, quality; per conversation-length bucket: computed tokens."""
    by_row: dict[str, list[dict[str, Any]]] = defaultdict(list)
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
        gold_turn: dict[int, list[bool]] = defaultdict(list)
        for r in recs:
            if "gold_kept" in r:
                gold_turn[r["turn"]].append(r["gold_kept"])
        if gold_turn:
            s["gold_kept_by_turn"] = {t: sum(v) / len(v) for t, v in sorted(gold_turn.items())}
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


ROWS = tuple(rows())


def run_conversations(
    sets: Sequence[str],
    *,
    backend: str = "vllm",
    limits: dict[str, int] | None = None,
    cache_off: bool = False,
    block_size: int = 32,
    model: Any = None,
    progress: bool = True,
    command: str = "",
) -> dict[str, Any]:
    """Play every conversation of ``sets`` under each row; return the summary and per-request records.

    Args:
        sets: Names in :data:`tokenslim.bench.conversations.CONVERSATION_SETS`.
        backend: ``"vllm"`` (prefix caching on; the figures to report) or ``"sim"`` (no model).
        limits: Conversations per set (``{"sgd": 64}``; key ``"*"`` for every set).
        cache_off: Also time the ``full`` and ``cache-aware`` requests on an engine with prefix caching off.
        block_size: vLLM's KV block size (vLLM-CPU accepts multiples of 32).
        model: The model (None: the offline default SmolLM2-135M-Instruct).
        progress: Show a progress bar per set.
        command: The command line, recorded in the output.

    Raises:
        ConfigError: An unknown set or backend.
    """
    from tokenslim.errors import ConfigError

    unknown = [s for s in sets if s not in CONVERSATION_SETS]
    if unknown or backend not in ("vllm", "sim"):
        raise ConfigError(f"sets must be among {sorted(CONVERSATION_SETS)} and backend 'vllm' or 'sim'; got {sets!r}, {backend!r}")
    limits = limits or {}
    engine = nocache = None
    sim = SimCache()
    if backend == "vllm":
        from tokenslim.backends import VLLMBackend

        kw: dict[str, Any] = {"engine_kwargs": {"block_size": block_size}, "max_model_len": 8192}
        engine = VLLMBackend(model, enable_prefix_caching=True, **kw)
        if cache_off:
            nocache = VLLMBackend(model, enable_prefix_caching=False, **kw)

    def measure(result: Result, row: str) -> dict[str, Any]:
        if engine is None:
            ids = result.tokenizer.encode(result.to_prompt())
            _, computed = sim.computed(ids)
            return {"sent": len(ids), "computed": computed}
        msgs = result.to_messages()
        m = engine.generate([msgs], max_tokens=2)[0]
        rec = {"sent": m.prompt_tokens, "computed": m.prompt_tokens - (m.cached_tokens or 0), "ttft_ms": m.ttft_ms,
               "kv_blocks": m.extra.get("kv_blocks_observed")}
        if nocache is not None and row in CACHE_OFF_ROWS:
            off = nocache.generate([msgs], max_tokens=2)[0]
            rec["ttft_ms_nocache"] = off.ttft_ms
            # vLLM's metrics registry reports the gauges of the engine created last only, so with two
            # engines the blocks held are observed on this one (a request holds as many blocks whether
            # or not they came from the cache)
            rec["kv_blocks"] = off.extra.get("kv_blocks_observed")
        return rec

    try:
        for b in (engine, nocache):  # warm up: the first requests pay one-time costs
            if b is not None:
                b.generate([[{"role": "user", "content": "Hello, what can you do?"}]] * 3, max_tokens=2)
        makers = rows()
        names = list(makers)
        records: dict[str, list[dict[str, Any]]] = {}
        for ds in sets:
            limit = limits.get(ds, limits.get("*"))
            dialogues = CONVERSATION_SETS[ds](limit) if limit else CONVERSATION_SETS[ds]()
            it: Any = dialogues
            if progress:
                from tqdm import tqdm

                it = tqdm(dialogues, desc=ds, file=sys.stderr)
            recs: list[dict[str, Any]] = []
            for k, d in enumerate(it):
                for name in names[k % len(names):] + names[: k % len(names)]:  # rotating order: interleaved rows
                    sim.reset()
                    if engine is not None:
                        engine.reset_prefix_cache()
                    recs += run_dialogue(name, makers[name], d, measure)
            records[ds] = recs
        out: dict[str, Any] = {
            "command": command,
            "backend": backend,
            "model": Path(str(engine.model)).name if engine is not None else None,
            "dtype": engine.dtype if engine is not None else None,
            "block_size": engine.block_size if engine is not None else SIM_BLOCK,
            "summary": {ds: summarise(recs) for ds, recs in records.items()},
            "records": records,
        }
        if engine is not None:
            out["kv_block_bytes"] = engine.block_bytes
        return out
    finally:
        for b in (engine, nocache):
            if b is not None:
                b.close()


def text_table(out: dict[str, Any]) -> str:
    """The summary as plain text: per set and row, tokens sent and computed against ``full``, TTFT, quality."""
    lines = []
    for ds, rows_ in out["summary"].items():
        lines.append(ds)
        base = rows_["full"]
        for row, s in rows_.items():
            extra = " ".join(f"{k}={s[k]:.3f}" for k in ("gold_kept", "slot_retention", "slot_retention_last_turn") if k in s)
            ttft = f" ttft_p50={s['ttft_ms_p50']:.1f}ms" if "ttft_ms_p50" in s else ""
            lines.append(
                f"  {row:<26} sent {s['sent']:>8} ({s['sent'] / base['sent'] - 1:+.1%})  computed {s['computed']:>8} "
                f"({s['computed'] / base['computed'] - 1:+.1%}) hit {s['cache_hit']:.1%}{ttft} {extra}"
            )
    return "\n".join(lines)
