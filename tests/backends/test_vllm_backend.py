"""The vLLM backend on the real engine (SmolLM2-135M-Instruct, CPU)."""

from __future__ import annotations

import math

import pytest

from tokenslim.backends import Backend
from tokenslim.capacity import dtype_bytes, kv_bytes_per_token

pytestmark = [pytest.mark.slow, pytest.mark.vllm]

FRANCE = [{"role": "user", "content": "What is the capital of France?"}]


def test_answers_a_simple_question(vllm_backend) -> None:
    assert isinstance(vllm_backend, Backend)
    (m,) = vllm_backend.generate([FRANCE], max_tokens=12)
    # Greedy text depends on numerics (bf16 on CPUs with native bf16 answers "L'Étoile, ..."), so the
    # check that the model knows the answer is its likelihood, which is stable across dtypes.
    assert m.text.strip()
    paris, london = vllm_backend.score_continuations([FRANCE, FRANCE], ["Paris", "London"])
    assert sum(paris) > sum(london) + 2
    assert m.prompt_tokens == vllm_backend.count_tokens(FRANCE)
    assert 0 < m.output_tokens <= 12
    assert m.ttft_ms > 0 and m.prefill_ms > 0 and m.e2e_ms >= m.ttft_ms
    assert m.extra["engine"]["prompt_tokens"] == m.prompt_tokens
    assert m.extra["engine"]["generation_tokens"] == m.output_tokens


def test_prefill_grows_with_prompt_length(vllm_backend, rag_prompts) -> None:
    vllm_backend.reset_prefix_cache()
    short, long = vllm_backend.generate([rag_prompts["short"], rag_prompts["long"]], max_tokens=4)
    assert short.prompt_tokens < 80 and long.prompt_tokens >= 1500
    assert long.cached_tokens == 0
    assert long.prefill_ms > 3 * short.prefill_ms
    # The engine's own prefill histogram saw the same request time.
    engine_prefill_ms = long.extra["engine"]["request_prefill_time_seconds_sum"] * 1000
    assert engine_prefill_ms == pytest.approx(long.prefill_ms, rel=0.05)


def test_kv_bytes_computed_match_engine_allocation(vllm_backend, rag_prompts) -> None:
    (m,) = vllm_backend.generate([rag_prompts["long"]], max_tokens=4)
    assert vllm_backend.dtype in ("bfloat16", "float32")  # chosen by the CPU's bf16 support
    per_token = kv_bytes_per_token(vllm_backend.config, vllm_backend.dtype)
    assert per_token == 30 * 2 * 3 * 64 * dtype_bytes(vllm_backend.dtype)  # SmolLM2: 30 layers, 3 KV heads of 64
    held = m.prompt_tokens + m.output_tokens - 1
    assert m.kv_bytes == held * per_token
    block = vllm_backend.block_bytes
    assert block == vllm_backend.block_size * per_token
    # Observed: the blocks the engine's scheduler reported holding (peak of its KV usage gauge),
    # not computed. The last step reports after the request freed its blocks, so the peak holds
    # the tokens of the step before: held - 1.
    blocks = m.extra["kv_blocks_observed"]
    assert blocks in (math.ceil(held / vllm_backend.block_size), math.ceil((held - 1) / vllm_backend.block_size))
    assert m.kv_bytes_allocated == blocks * block
    # The engine sized its cache from the same block bytes: 1 GiB / block bytes blocks.
    assert vllm_backend.num_blocks == (1024**3) // block


def test_observed_kv_grows_with_the_prompt_and_counts_shared_cached_blocks_once(vllm_backend, rag_prompts) -> None:
    vllm_backend.reset_prefix_cache()
    short, long, again = vllm_backend.generate([rag_prompts["short"], rag_prompts["long"], rag_prompts["long"]], max_tokens=4)
    assert short.extra["kv_blocks_observed"] == 1 < long.extra["kv_blocks_observed"]
    # A prefix-cache hit reuses the cached blocks: the request still holds as many.
    assert again.cached_tokens > 0 and again.extra["kv_blocks_observed"] == long.extra["kv_blocks_observed"]


def test_gold_answer_likelihood_from_prompt_logprobs(vllm_backend, rag_prompts) -> None:
    from tokenslim.backends import HFBackend

    evidence = "Context: Dan O'Bannon wrote the screenplay of the film Alien (1979)."
    question = "Question: Who wrote the screenplay of Alien?"
    with_ctx = [{"role": "user", "content": evidence + "\n\n" + question}]
    without = [{"role": "user", "content": question}]
    answer = "Dan O'Bannon"
    lp_with, lp_without = vllm_backend.score_continuations([with_ctx, without], [answer, answer])
    n = len(vllm_backend.tokenizer.encode(answer, add_special_tokens=False))
    assert len(lp_with) == len(lp_without) == n and all(v <= 0 for v in lp_with + lp_without)
    assert sum(lp_with) > sum(lp_without) + n  # the evidence makes the answer far likelier (> 1 nat per token)
    # The same teacher-forced scores from a float32 transformers forward pass.
    hf = HFBackend(vllm_backend.model, dtype="float32")
    try:
        ref_with, ref_without = hf.score_continuations([with_ctx, without], [answer, answer])
    finally:
        hf.close()
    assert sum(lp_with) / n == pytest.approx(sum(ref_with) / n, abs=0.25)
    assert sum(lp_without) / n == pytest.approx(sum(ref_without) / n, abs=0.25)
    with pytest.raises(Exception, match="continuations"):
        vllm_backend.score_continuations([with_ctx], [answer, answer])


def test_repeated_prefix_is_served_from_cache(vllm_backend, rag_prompts) -> None:
    vllm_backend.reset_prefix_cache()
    first, second = vllm_backend.generate([rag_prompts["long"], rag_prompts["long"]], max_tokens=4)
    assert first.cached_tokens == 0
    assert second.cached_tokens >= second.prompt_tokens - vllm_backend.block_size
    assert second.cached_tokens % vllm_backend.block_size == 0
    assert second.extra["engine"]["prefix_cache_hits"] == second.cached_tokens
    assert second.prefill_ms < first.prefill_ms
    assert second.text == first.text


def test_concurrent_batch(vllm_backend, rag_prompts) -> None:
    prompts = [FRANCE, rag_prompts["short"], rag_prompts["long"]]
    results, seconds = vllm_backend.generate_concurrent(prompts, max_tokens=4)
    assert len(results) == 3 and seconds > 0
    assert [r.prompt_tokens for r in results] == [vllm_backend.count_tokens(p) for p in prompts]
    assert results[0].extra["engine_batch"]["generation_tokens"] == sum(r.output_tokens for r in results)


def test_cache_aware_conversation_computes_fewer_prefill_tokens_on_the_engine(vllm_backend, data_dir) -> None:
    """SGD dialogues sent turn by turn: vLLM's own prefix-cache count decides what was computed.
    Folding in blocks (the default) lets the engine reuse the history; folding every turn does not."""
    from tokenslim import Conversation, default_pipeline
    from tokenslim.bench.conversations import sgd_dialogues

    dialogues = [d for d in sgd_dialogues(limit=40) if len(d.turns) >= 8][:3]
    assert len(dialogues) == 3
    computed = {}
    for name, every in (("blocks", 8), ("every turn", None)):
        total = 0
        for d in dialogues:
            vllm_backend.reset_prefix_cache()
            conv = Conversation(default_pipeline().set_params(summarize_conversation__fold_every=every))
            for i, t in enumerate(d.turns):
                r = conv.run(t.query, t.chunks, history=d.history(i), system_prompt="You are a booking assistant.")
                (m,) = vllm_backend.generate([r.to_messages()], max_tokens=1)
                assert m.cached_tokens % vllm_backend.block_size == 0 and m.cached_tokens < m.prompt_tokens
                total += m.prompt_tokens - m.cached_tokens
        computed[name] = total
    assert computed["blocks"] < computed["every turn"]
