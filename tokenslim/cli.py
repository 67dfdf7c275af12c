"""The ``tokenslim`` command line: ``bench`` (per-stage ablation on a real LLM) and ``capacity``.

Examples::

    tokenslim bench --dataset hotpotqa --backend vllm --limit 20
    tokenslim capacity --model smollm2 --gpu-memory 80GiB --kv-dtype fp8 --avg-input 1500 --p95-input 3000

``main`` returns the exit status (0 ok, 2 usage or input error) instead of exiting,
so it can be called from tests and other programs.
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from tokenslim.errors import TokenSlimError

__all__ = ["main", "build_parser", "parse_size"]

_BACKENDS = ("vllm", "transformers", "openai", "fake")
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B?|B)?\s*$", re.IGNORECASE)
_UNITS = {"b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
          "t": 10**12, "tb": 10**12, "ki": 2**10, "kib": 2**10, "mi": 2**20, "mib": 2**20, "gi": 2**30,
          "gib": 2**30, "ti": 2**40, "tib": 2**40}


def parse_size(text: str) -> int:
    """Parse a memory size such as ``80GiB``, ``141GB``, ``512MiB`` or ``1073741824B`` into bytes.

    The unit is required: a bare ``80`` is far more likely to mean 80 GiB than
    80 bytes, so it is refused rather than guessed.

    Raises:
        argparse.ArgumentTypeError: not a size, or no unit.
    """
    m = _SIZE_RE.match(text)
    if not m:
        raise argparse.ArgumentTypeError(f"invalid size {text!r}: use a number with a unit, e.g. 80GiB, 141GB, 512MiB")
    if not m.group(2):
        raise argparse.ArgumentTypeError(
            f"size {text!r} has no unit: write e.g. {m.group(1)}GiB (binary), {m.group(1)}GB (decimal) or {m.group(1)}B"
        )
    value = float(m.group(1)) * _UNITS[(m.group(2) or "").lower()]
    if value <= 0:
        raise argparse.ArgumentTypeError(f"size must be positive, got {text!r}")
    return int(value)


def _int_at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number >= ``minimum``, else a one-line usage error."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        return value

    return parse


_positive_int = _int_at_least(1)
_nonneg_int = _int_at_least(0)


def _key_value(text: str) -> tuple[str, Any]:
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    value: Any = raw
    for cast in (int, float):
        try:
            value = cast(raw)
            break
        except ValueError:
            continue
    if raw.lower() in ("true", "false"):
        value = raw.lower() == "true"
    return key.replace("-", "_"), value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed so docs and tests can inspect it)."""
    parser = argparse.ArgumentParser(
        prog="tokenslim",
        description="Make RAG prompts cheaper, and prove the saving on a real LLM.",
    )
    from tokenslim import __version__

    parser.add_argument("--version", action="version", version=f"tokenslim {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="{bench,bench-chat,capacity}")
    sub.required = True

    b = sub.add_parser(
        "bench",
        help="run a real LLM on the baseline and on each cumulative pipeline stage",
        description=(
            "Per-stage ablation: the uncompressed prompts (baseline), then the default pipeline's stages added one "
            "at a time. Reports tokens, prefill/TTFT/TPOT/E2E latency from interleaved passes (prefill ratios with "
            "paired intervals), KV-cache MB (config and observed), prefix-cache hits, throughput and answer quality "
            "(EM, F1, answer-in-context, state retention, gold-answer likelihood with two controls) with bootstrap "
            "confidence intervals."
        ),
    )
    b.add_argument("--dataset", required=True,
                   help="hotpotqa, nq, qmsum, sgd, multihop_rag, or a path to a .jsonl file "
                        '({"query", "chunks", "answers"} per line)')
    b.add_argument("--backend", choices=_BACKENDS, default="vllm", help="where the model runs (default: vllm)")
    b.add_argument("--model", default=None,
                   help="model name or local folder (default: the backend's default, SmolLM2-135M-Instruct)")
    b.add_argument("--limit", type=_positive_int, default=20, help="questions to measure (default: 20)")
    b.add_argument("--out", type=Path, default=None,
                   help="output folder for JSON, Markdown and PNGs (default: results/bench-<dataset>-<backend>/)")
    b.add_argument("--max-tokens", type=_positive_int, default=32, help="tokens generated per answer (default: 32)")
    b.add_argument("--concurrency", type=_nonneg_int, default=8,
                   help="requests in flight in the separate throughput pass; 0 skips it (default: 8)")
    b.add_argument("--repeats", type=_positive_int, default=2,
                   help="interleaved timing passes over all questions; latency = median (default: 2)")
    b.add_argument("--no-likelihood", action="store_true",
                   help="do not score the gold answer's likelihood (and its two controls)")
    b.add_argument("--levers", type=_nonneg_int, default=0, metavar="N",
                   help="also measure the serving levers one at a time on the first N questions: KV-cache dtype "
                        "(--kv-dtype), prefix caching with Reorder(stable_prefix), max_model_len, concurrency "
                        "1/2/4/8 (default: 0, skipped)")
    b.add_argument("--kv-dtype", default="fp8", help="KV-cache dtype the levers pass compares (default: fp8)")
    b.add_argument("--warmup", type=_nonneg_int, default=2,
                   help="warm-up requests before measuring, on questions outside the measured ones (default: 2)")
    b.add_argument("--pipeline", type=Path, default=None, metavar="CONFIG",
                   help="the pipeline to measure, as a .json or .toml config (Pipeline.to_config()); "
                        "default: the default pipeline")
    b.add_argument("--token-budget", type=_positive_int, default=None,
                   help="add a Budget stage capping prompt tokens (default: none)")
    b.add_argument("--instruction", default=None, help='text before the question (default: "Answer with a short phrase only.")')
    b.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: 0)")
    b.add_argument("--backend-arg", type=_key_value, action="append", default=[], metavar="KEY=VALUE",
                   help="extra keyword for the backend constructor, repeatable (e.g. base_url=http://localhost:8000/v1)")
    b.add_argument("--no-plots", action="store_true", help="do not write PNG plots")
    b.add_argument("--no-progress", action="store_true", help="no progress bar")
    b.set_defaults(func=_cmd_bench)

    h = sub.add_parser(
        "bench-chat",
        help="tokenslim bench for conversations: tokens computed under vLLM's prefix cache, turn by turn",
        description=(
            "Plays whole conversations turn by turn (SGD task dialogues with a fresh retrieved context per turn; "
            "CoQA and 2WikiMultihopQA follow-up questions over the same documents) on vLLM with prefix caching, "
            "for five rows: no compression, query-independent stages, the default pipeline folding every turn, the "
            "cache-aware default, and Conversation(documents='stable'). Reports per row tokens sent and computed "
            "(vLLM's own prefix-cache count), TTFT, KV blocks held and quality (SGD slot retention, gold answer in "
            "context), per conversation-length bucket and per turn, and plots computed prefill against turn index."
        ),
    )
    from tokenslim.bench.conversations import CONVERSATION_SETS

    h.add_argument("--sets", nargs="+", default=list(CONVERSATION_SETS), choices=list(CONVERSATION_SETS),
                   help="conversation sets (default: all)")
    h.add_argument("--limit", nargs="+", default=[], metavar="[SET=]N", type=_limit,
                   help="conversations per set: N for every set or SET=N (default: all; twowiki_chat: 50)")
    h.add_argument("--backend", choices=["vllm", "sim"], default="vllm",
                   help="vllm (default), or sim: a 16-token block cache simulated on cl100k, no model")
    h.add_argument("--model", default=None, help="model for vLLM (default: the offline SmolLM2-135M-Instruct)")
    h.add_argument("--cache-off", action="store_true",
                   help="also time the full and cache-aware rows on a second engine without prefix caching")
    h.add_argument("--block-size", type=_positive_int, default=32,
                   help="vLLM KV block size (default 32, the smallest vLLM-CPU accepts; GPUs default to 16)")
    h.add_argument("--out", type=Path, default=Path("results/conversation_cache.json"),
                   help="results JSON (default: results/conversation_cache.json; the plot goes next to it as .png)")
    h.add_argument("--no-plots", action="store_true", help="do not write the PNG plot")
    h.add_argument("--no-progress", action="store_true", help="no progress bar")
    h.set_defaults(func=_cmd_bench_chat)

    c = sub.add_parser(
        "capacity",
        help="max concurrent requests in GPU memory before vs after tokenslim, and an advised max_model_len",
        description=(
            "KV-cache capacity planning: how many requests of the given size fit beside the weights, before and "
            "after the token reduction (measured by a bench JSON via --from-bench)."
        ),
    )
    c.add_argument("--model", default="smollm2", help="smollm2, a model name known to tokenslim, or a local folder with config.json")
    c.add_argument("--gpu-memory", type=parse_size, required=True, help="accelerator memory, e.g. 80GiB or 141GB")
    c.add_argument("--gpu-memory-utilization", type=float, default=0.9,
                   help="fraction of the memory the engine may use (vLLM's default 0.9)")
    c.add_argument("--weight-dtype", default="bf16", help="weight precision: fp32, bf16, fp16, fp8, int8, int4 (default: bf16)")
    c.add_argument("--kv-dtype", default="bf16", help="KV-cache precision: fp32, bf16, fp16, fp8 (default: bf16)")
    c.add_argument("--avg-input", type=_positive_int, required=True, help="mean prompt tokens per request (before tokenslim)")
    c.add_argument("--p95-input", type=_positive_int, default=None, help="95th-percentile prompt tokens (before tokenslim)")
    c.add_argument("--max-input", type=_positive_int, default=None,
                   help="longest prompt to serve (before tokenslim); the advised --max-model-len covers it "
                        "(without it the advice covers the p95 and says so)")
    c.add_argument("--reject-rate", type=float, default=0.0,
                   help="with --from-bench: also advise --max-model-len from the bench's own prompts, rejecting at "
                        "most this fraction of them (default 0: the longest)")
    c.add_argument("--output", type=_positive_int, default=64, help="generated tokens per request (default: 64)")
    c.add_argument("--reduction", type=float, default=None,
                   help="fraction of prompt tokens tokenslim removes (0.4 = 40%%); overrides --from-bench")
    c.add_argument("--from-bench", type=Path, default=None,
                   help="a bench JSON (results/.../bench.json): use its measured token reduction")
    c.add_argument("--json", action="store_true", help="print the plan as JSON")
    c.set_defaults(func=_cmd_capacity)
    return parser


def _default_out(dataset: str, backend: str) -> Path:
    name = Path(dataset).stem.split(".")[0] if ("/" in dataset or dataset.endswith((".jsonl", ".gz"))) else dataset
    return Path("results") / f"bench-{name}-{backend}"


def _cmd_bench(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from tokenslim._pipeline import default_pipeline
    from tokenslim.bench import datasets, report
    from tokenslim.bench.runner import DEFAULT_INSTRUCTION, run_ablation

    if args.pipeline is not None:
        from tokenslim._config import read_config
        from tokenslim._pipeline import Pipeline
        from tokenslim.errors import ConfigError

        if args.token_budget is not None:
            raise ConfigError("--token-budget and --pipeline do not combine: put a budget stage in the config")
        pipeline = Pipeline.from_config(read_config(args.pipeline))
    else:
        pipeline = default_pipeline(token_budget=args.token_budget)
    examples = datasets.load(args.dataset, args.limit + args.warmup)
    measured, warm = examples[: args.limit], examples[args.limit :]
    if len(warm) < args.warmup:
        warm = measured[: args.warmup]
    out_dir = args.out or _default_out(args.dataset, args.backend)
    command = "tokenslim " + shlex.join(argv)
    print(f"tokenslim bench: {len(measured)} questions from {args.dataset}, backend {args.backend}, "
          f"{len(pipeline) + 1} rows (baseline + {len(pipeline)} stages)", file=sys.stderr)
    from tokenslim.backends import get_backend

    extra = dict(args.backend_arg)
    if "model" in extra:
        from tokenslim.errors import ConfigError

        raise ConfigError(f"give the model with --model {extra['model']}, not --backend-arg model=...")
    backend = get_backend(args.backend, model=args.model, **extra)
    try:
        rep = run_ablation(
            measured,
            backend,
            pipeline,
            max_tokens=args.max_tokens,
            concurrency=args.concurrency,
            repeats=args.repeats,
            likelihood=not args.no_likelihood,
            warmup=warm if args.warmup else (),
            instruction=args.instruction or DEFAULT_INSTRUCTION,
            seed=args.seed,
            progress=not args.no_progress,
            meta={"dataset": args.dataset, "command": command,
                  "model": report.portable_path(getattr(backend, "model", None) or args.model or "-")},
        ).as_dict()
        if args.levers:
            from tokenslim.bench.levers import run_levers

            def make_backend(**overrides: Any) -> Any:
                return get_backend(args.backend, model=args.model, **{**dict(args.backend_arg), **overrides})

            rep["levers"] = run_levers(
                measured[: args.levers],
                backend,
                make_backend,
                pipeline,
                max_tokens=args.max_tokens,
                kv_dtype=args.kv_dtype,
                instruction=args.instruction or DEFAULT_INSTRUCTION,
                log=lambda msg: print(msg, file=sys.stderr),
            )
    finally:
        backend.close()
    print(report.text_table(rep))
    written = [report.write_json(rep, out_dir / "bench.json"), report.write_markdown(rep, out_dir / "bench.md")]
    if not args.no_plots:
        from tokenslim.bench.plots import write_plots

        written += write_plots(rep, out_dir)
    for p in written:
        print(f"wrote {p}")
    return 0


def _limit(text: str) -> tuple[str, int]:
    name, _, n = text.rpartition("=")
    try:
        value = int(n)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected N or SET=N, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"a limit must be >= 1, got {text!r}")
    return name or "*", value


def _cmd_bench_chat(args: argparse.Namespace, argv: Sequence[str]) -> int:
    import json

    from tokenslim.bench.prefix_cache import plot, run_conversations, text_table

    out = run_conversations(
        args.sets,
        backend=args.backend,
        limits=dict(args.limit),
        cache_off=args.cache_off,
        block_size=args.block_size,
        model=args.model,
        progress=not args.no_progress,
        command="tokenslim " + shlex.join(argv),
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, separators=(",", ":")) + "\n")
    print(text_table(out))
    print(f"wrote {args.out}")
    if not args.no_plots:
        png = args.out.with_suffix(".png")
        plot(out["summary"], png)
        print(f"wrote {png}")
    return 0


def _bench_tokens(path: Path) -> tuple[list[int], list[int], str]:
    """Per-question prompt tokens of the baseline and of the last row of a bench JSON, and where they came from."""
    from tokenslim.bench import metrics, report
    from tokenslim.errors import InputError

    rep = report.load_json(path)
    first, last = rep["stages"][0], rep["stages"][-1]
    examples = rep.get("examples") or {}
    base = [r["tokens_model"] for r in examples.get(first["stage"], [])]
    final = [r["tokens_model"] for r in examples.get(last["stage"], [])]
    if not base or not final:
        raise InputError(f"{str(path)!r} has no per-example token counts; rerun tokenslim bench")
    meta = rep.get("meta", {})
    source = (
        f"measured by {str(path)!r}: {first['stage']} -> {last['stage']} on {len(base)} {meta.get('dataset', '?')} "
        f"questions, {meta.get('model', '?')} tokenizer"
    )
    return base, final, source


def _bench_ratios(path: Path) -> tuple[float, float, float, str]:
    """Mean, p95 and max prompt-token ratios (last row / baseline) from a bench JSON, and where they came from."""
    from tokenslim.bench import metrics

    base, final, source = _bench_tokens(path)
    mean_ratio = (sum(final) / len(final)) / (sum(base) / len(base))
    p95_ratio = (metrics.percentile(final, 95) or 0.0) / (metrics.percentile(base, 95) or 1.0)
    return mean_ratio, p95_ratio, max(final) / max(base), source


def _cmd_capacity(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from tokenslim.capacity import advise_max_model_len, plan_capacity
    from tokenslim.errors import ConfigError

    if not 0 <= args.reject_rate < 1:
        raise ConfigError(f"--reject-rate is a fraction in [0, 1), got {args.reject_rate}")
    p95 = args.p95_input if args.p95_input is not None else args.avg_input
    if args.reduction is not None:
        if not 0 <= args.reduction < 1:
            raise ConfigError(f"--reduction is a fraction in [0, 1), got {args.reduction}")
        mean_ratio = p95_ratio = max_ratio = 1 - args.reduction
        source = "given by --reduction"
    elif args.from_bench is not None:
        mean_ratio, p95_ratio, max_ratio, source = _bench_ratios(args.from_bench)
    else:
        mean_ratio = p95_ratio = max_ratio = 1.0
        source = "none given (pass --from-bench results/<run>/bench.json or --reduction)"
    plan = plan_capacity(
        args.model,
        args.gpu_memory,
        avg_input_tokens=args.avg_input,
        p95_input_tokens=p95,
        avg_input_tokens_after=args.avg_input * mean_ratio,
        p95_input_tokens_after=p95 * p95_ratio,
        max_input_tokens=args.max_input,
        max_input_tokens_after=None if args.max_input is None else args.max_input * max_ratio,
        output_tokens=args.output,
        weight_dtype=args.weight_dtype,
        kv_dtype=args.kv_dtype,
        gpu_memory_utilization=args.gpu_memory_utilization,
    )
    measured: dict[str, Any] = {}
    if args.from_bench is not None:
        base, final, _ = _bench_tokens(args.from_bench)
        for key, lengths in (("before", base), ("after", final)):
            length, rejected = advise_max_model_len(lengths, args.output, reject_rate=args.reject_rate)
            measured[key] = {"max_model_len": length, "rejected": rejected, "requests": len(lengths)}
    if args.json:
        import json

        extra: dict[str, Any] = {"reduction_source": source}
        if measured:
            extra["max_model_len_from_bench"] = dict(measured, reject_rate=args.reject_rate)
        print(json.dumps(dict(plan.to_dict(), **extra), indent=1))
        return 0
    print(f"tokenslim capacity: model {args.model}, weights {args.weight_dtype}, KV cache {args.kv_dtype}")
    print(
        f"prompt tokens before: avg {args.avg_input}, p95 {p95}; after: avg {args.avg_input * mean_ratio:.0f}, "
        f"p95 {p95 * p95_ratio:.0f}; output {args.output}"
    )
    print(f"token reduction: {100 * (1 - mean_ratio):.1f}% avg, {100 * (1 - p95_ratio):.1f}% p95 ({source})")
    print(plan.to_table())
    print(f"advice: serve with --max-model-len {plan.max_model_len_after} "
          f"(covers the {plan.advice_basis} prompt; max concurrent requests {plan.max_concurrent_before} -> "
          f"{plan.max_concurrent_after})")
    if measured:
        b, a = measured["before"], measured["after"]
        print(f"on the bench's {a['requests']} prompts (+{args.output} output), reject rate <= {args.reject_rate:g}: "
              f"--max-model-len {b['max_model_len']} before (rejects {100 * b['rejected']:.1f}%), "
              f"{a['max_model_len']} after (rejects {100 * a['rejected']:.1f}%)")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line.

    Args:
        argv: Arguments without the program name (default: ``sys.argv[1:]``).

    Returns:
        0 on success, 2 on a usage or input error (message on stderr), 130 on Ctrl-C.
    """
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(args_list)
    try:
        return int(args.func(args, args_list))
    except TokenSlimError as exc:
        print(f"tokenslim {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
