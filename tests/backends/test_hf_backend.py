"""The transformers backend on the real SmolLM2 model, in float32 and in bfloat16.

Both dtypes run on every machine: the backend picks bfloat16 on CPUs with native bf16
(AVX-512 BF16 / AMX) and float32 elsewhere, so CI on either kind of CPU must pass both.
No assertion reads exact generated text: greedy text sits on the numerics (a padded
batch in bf16 can flip an argmax), so answers are checked through the model's own
probabilities with margins far wider than the rounding of either dtype.
"""

from __future__ import annotations

import pytest

from tokenslim.backends import Backend, HFBackend
from tokenslim.backends._common import encode_chat
from tokenslim.capacity import dtype_bytes

pytestmark = [pytest.mark.slow, pytest.mark.model]

FRANCE = [{"role": "user", "content": "What is the capital of France?"}]


@pytest.fixture(scope="module", params=["float32", "bfloat16"])
def hf(request, smollm2_path):
    backend = HFBackend(smollm2_path, device="cpu", dtype=request.param)
    yield backend
    backend.close()


def _next_token_logprobs(hf: HFBackend, chat, continuation: list[int] | None = None):
    """Log-probabilities of the next token after ``chat`` (+ ``continuation``), one unpadded forward pass."""
    import torch

    ids = encode_chat(hf.tokenizer, chat) + list(continuation or [])
    with torch.inference_mode():
        logits = hf.model(input_ids=torch.tensor([ids])).logits[0, -1].float()
    return torch.log_softmax(logits, -1)


def _answer_logprob(hf: HFBackend, chat, answer: str) -> float:
    """Teacher-forced log-likelihood of ``answer`` as the assistant's reply to ``chat``."""
    total = 0.0
    answer_ids = hf.tokenizer.encode(answer, add_special_tokens=False)
    for i, tok in enumerate(answer_ids):
        total += float(_next_token_logprobs(hf, chat, answer_ids[:i])[tok])
    return total


def test_answers_and_reads_kv_off_the_cache(hf) -> None:
    assert isinstance(hf, Backend)
    chat = FRANCE
    (m,) = hf.generate([chat], max_tokens=10)
    assert 1 <= m.output_tokens <= 10 and m.text.strip()
    # The model knows the answer: the right reply is far likelier than a wrong one (margins of
    # several nats, where bf16 rounding moves log-probabilities by hundredths).
    right = _answer_logprob(hf, chat, "The capital of France is Paris.")
    wrong = _answer_logprob(hf, chat, "The capital of France is London.")
    assert right > wrong + 3
    assert m.prompt_tokens == hf.count_tokens(chat)
    # Cache tensors hold exactly what the config says: prompt + all outputs but the last.
    assert m.extra["kv_tokens"] == m.prompt_tokens + m.output_tokens - 1
    assert m.kv_bytes_allocated == m.kv_bytes == m.extra["kv_tokens"] * 30 * 2 * 3 * 64 * dtype_bytes(hf.dtype)


def test_prefill_grows_with_prompt_length(hf, rag_prompts) -> None:
    hf.generate([rag_prompts["short"]], max_tokens=1)  # warm-up
    # Interleaved pairs, fastest of each: a busy machine stalls single runs by seconds, and the
    # minimum is the run that was not stalled. 30x the tokens must cost well over 3x the time.
    pairs = [hf.generate([rag_prompts["short"], rag_prompts["long"]], max_tokens=1) for _ in range(3)]
    short, long = (min(runs, key=lambda m: m.prefill_ms) for runs in zip(*pairs))
    assert long.prompt_tokens > 20 * short.prompt_tokens
    assert long.prefill_ms > 3 * short.prefill_ms


def test_batch_generation_matches_prompt_counts(hf, rag_prompts) -> None:
    chats = [rag_prompts["short"], FRANCE]  # different lengths: the shorter one is left-padded
    results, seconds = hf.generate_concurrent(chats, max_tokens=8)
    assert seconds > 0
    assert [r.prompt_tokens for r in results] == [hf.count_tokens(c) for c in chats]
    for chat, r in zip(chats, results):
        out = r.extra["output_ids"]
        assert 1 <= r.output_tokens <= 8 and len(out) <= r.output_tokens
        # Padding and the attention mask work: each batched token is one the unpadded model ranks
        # near the top at that step (a dropped mask or shifted positions would put it far down).
        for i, tok in enumerate(out[:3]):
            ranked = _next_token_logprobs(hf, chat, out[:i]).argsort(descending=True)
            assert tok in ranked[:5].tolist(), (i, tok, r.text)


def test_unknown_dtype_is_a_config_error(smollm2_path) -> None:
    from tokenslim.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown torch dtype 'float33'"):
        HFBackend(smollm2_path, device="cpu", dtype="float33")
    with pytest.raises(ConfigError, match="unknown torch dtype 'nn'"):  # a torch attribute that is no dtype
        HFBackend(smollm2_path, device="cpu", dtype="nn")
