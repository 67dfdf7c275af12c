"""Pipeline.run_batch vs a loop of Pipeline.run, with embedding relevance, on HotpotQA.

The pipeline is ``default_pipeline()`` with MiniLM relevance in both ranking stages
(``trim_top_k__relevance="embedding"``, ``compress_documents__relevance="embedding"``;
all-MiniLM-L6-v2, offline, CPU). The requests are the first ``--requests`` questions of
../shared/data/hotpotqa_distractor, each with its 10 paragraphs; every third request
carries its own settings (``trim_top_k__k=4`` or ``compress_documents__max_tokens=150``),
as a server batching different clients would.

Both arms run in the same process, interleaved: each round times the loop and the batch
once, the order alternating between rounds, after one untimed warm-up of each. Reported
per arm: median wall seconds and median CPU seconds (process time, all threads: less
moved by other jobs on a shared machine than wall time) over the rounds, the ratio
loop / batch of each, the model's ``encode`` calls per arm, the tokens the model processed
per arm (real, and with the padding of its length-sorted batches of 32: the work batching
saves, independent of machine load), and how many of the batch's outputs equal run()'s
(chunks, texts and every drop with its reason and detail).

Run from the repository root::

    flock /tmp/tokenslim-bench.lock python benchmarks/bench_run_batch.py [--requests 64] [--rounds 3] [--threads N]

Writes results/run_batch.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

import tokenslim
from tokenslim._internal.relevance import load_embedding_model
from tokenslim.bench import datasets

OUT = Path("results/run_batch.json")
EMBEDDING = {"trim_top_k__relevance": "embedding", "compress_documents__relevance": "embedding"}


def _settings(n: int) -> dict[str, Any]:
    return {"trim_top_k__k": 4} if n % 3 == 1 else {"compress_documents__max_tokens": 150} if n % 3 == 2 else {}


def _signature(r: tokenslim.Result) -> tuple[Any, ...]:
    return (
        [(c.id, c.text) for c in r.chunks],
        [(d.stage, d.kind, d.reason, d.detail) for d in r.drops],
        r.tokens_after,
    )


def _padded_tokens(model: Any, calls: list[list[str]]) -> tuple[int, int]:
    """(tokens, padded tokens) the model processed over ``calls``: sentence-transformers sorts each
    call's texts by length and pads each batch of 32 to its longest text (truncated at max_seq_length)."""
    real = padded = 0
    for texts in calls:
        order = sorted(texts, key=lambda t: -len(t))
        for b in range(0, len(order), 32):
            lengths = [len(ids) for ids in model.tokenizer(order[b : b + 32], truncation=True, max_length=model.max_seq_length)["input_ids"]]
            real += sum(lengths)
            padded += max(lengths) * len(lengths)
    return real, padded


def _timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w0, time.process_time() - c0


def main(argv: list[str] | None = None) -> int:
    """Time both arms, check the outputs agree, print the table and the command, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=64, help="HotpotQA questions in the batch (default 64)")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds of each arm (default 3)")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (default: torch's own choice)")
    args = parser.parse_args(argv)

    examples = datasets.hotpotqa(limit=args.requests)
    pipe = tokenslim.default_pipeline().set_params(**EMBEDDING)
    requests = [{"query": e.query, "chunks": e.chunks, "params": _settings(n)} for n, e in enumerate(examples)]
    singles = [tokenslim.default_pipeline().set_params(**EMBEDDING, **_settings(n)) for n in range(len(examples))]

    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    model = load_embedding_model()
    encode = model.encode
    calls = {"loop": 0, "batch": 0}
    texts_seen: dict[str, list[list[str]]] = {"loop": [], "batch": []}
    arm = ["loop"]

    def counting(texts: Any, *a: Any, **k: Any) -> Any:
        calls[arm[0]] += 1
        texts_seen[arm[0]].append(texts)
        return encode(texts, *a, **k)

    model.encode = counting

    def loop() -> list[tokenslim.Result]:
        return [p.run(e.query, e.chunks) for p, e in zip(singles, examples)]

    def batch() -> list[tokenslim.Result]:
        return pipe.run_batch(requests)

    arms = {"loop": loop, "batch": batch}
    outputs: dict[str, list[tokenslim.Result]] = {}
    padded: dict[str, tuple[int, int]] = {}
    for name, fn in arms.items():  # warm-up, untimed; also the outputs compared
        arm[0] = name
        outputs[name] = fn()
        padded[name] = _padded_tokens(model, texts_seen[name])
        calls[name] = 0
    times: dict[str, dict[str, list[float]]] = {a: {"wall": [], "cpu": []} for a in arms}
    for r in range(args.rounds):
        for name in (("loop", "batch") if r % 2 == 0 else ("batch", "loop")):
            arm[0] = name
            _, wall, cpu = _timed(arms[name])
            times[name]["wall"].append(wall)
            times[name]["cpu"].append(cpu)
    model.encode = encode

    same = sum(_signature(a) == _signature(b) for a, b in zip(outputs["loop"], outputs["batch"]))
    med = {a: {k: statistics.median(v) for k, v in t.items()} for a, t in times.items()}
    ratio = {k: med["loop"][k] / med["batch"][k] for k in ("wall", "cpu")}
    command = "flock /tmp/tokenslim-bench.lock python benchmarks/bench_run_batch.py" + (
        f" --requests {args.requests}" if args.requests != 64 else ""
    ) + (f" --rounds {args.rounds}" if args.rounds != 3 else "") + (f" --threads {args.threads}" if args.threads else "")
    print(f"HotpotQA, {len(examples)} requests x 10 paragraphs, MiniLM relevance in TrimTopK and CompressDocuments, "
          f"{args.rounds} interleaved rounds")
    print(f"{'arm':<28}{'wall s (median)':>16}{'CPU s (median)':>16}{'encode calls/round':>20}{'model tokens (padded)':>24}")
    for name, label in (("loop", "loop of run()"), ("batch", "run_batch()")):
        print(f"{label:<28}{med[name]['wall']:>16.2f}{med[name]['cpu']:>16.2f}{calls[name] / args.rounds:>20.0f}"
              f"{f'{padded[name][0]} ({padded[name][1]})':>24}")
    print(f"loop / batch: wall {ratio['wall']:.2f}x, CPU {ratio['cpu']:.2f}x "
          f"(per round wall: {', '.join(f'{a / b:.2f}' for a, b in zip(times['loop']['wall'], times['batch']['wall']))})")
    print(f"outputs equal to run(): {same}/{len(examples)}")
    print(f"command: {command}")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({
        "command": command, "dataset": "hotpotqa_distractor", "requests": len(examples), "rounds": args.rounds,
        "pipeline_params": EMBEDDING, "seconds": times, "median": med, "ratio_loop_over_batch": ratio,
        "encode_calls_per_round": {a: calls[a] / args.rounds for a in calls}, "outputs_equal": same,
        "model_tokens_real_padded": padded, "torch_threads": args.threads or None,
    }, indent=2) + "\n")
    print(f"wrote {OUT}")
    return 0 if same == len(examples) else 1


if __name__ == "__main__":
    sys.exit(main())
