"""KV bytes from model configs and the capacity plan."""

from __future__ import annotations

import pytest

from tokenslim.capacity import (
    advise_max_model_len,
    kv_bytes,
    kv_bytes_per_token,
    kv_layout,
    load_config,
    plan_capacity,
    weight_bytes,
)
from tokenslim.errors import ConfigError

SMOL = {"num_hidden_layers": 30, "num_attention_heads": 9, "num_key_value_heads": 3, "head_dim": 64,
        "hidden_size": 576, "intermediate_size": 1536, "vocab_size": 49152, "tie_word_embeddings": True,
        "max_position_embeddings": 8192}
# Gemma-3-270m text layout: 18 layers, 5 of 6 sliding (512 tokens), 1 KV head of 256.
GEMMA3 = {"text_config": {"num_hidden_layers": 18, "num_attention_heads": 4, "num_key_value_heads": 1,
                          "head_dim": 256, "hidden_size": 640, "sliding_window": 512,
                          "layer_types": (["sliding_attention"] * 5 + ["full_attention"]) * 3}}
# DeepSeek-V2-Lite MLA layout.
MLA = {"num_hidden_layers": 27, "num_attention_heads": 16, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
       "hidden_size": 2048}


def test_per_token_bytes_for_gqa_fp8_and_mla() -> None:
    assert kv_bytes_per_token(SMOL) == 30 * 2 * 3 * 64 * 2
    assert kv_bytes_per_token(SMOL, "fp8") == 30 * 2 * 3 * 64
    assert kv_bytes_per_token(SMOL, "float32") == 2 * kv_bytes_per_token(SMOL)
    assert kv_layout(MLA).mla and kv_bytes_per_token(MLA) == 27 * (512 + 64) * 2


def test_sliding_window_layers_cap_at_the_window() -> None:
    layout = kv_layout(GEMMA3)
    assert (layout.sliding_layers, layout.sliding_window) == (15, 512)
    per_layer = 2 * 1 * 256 * 2
    assert kv_bytes(GEMMA3, 300) == 18 * 300 * per_layer
    assert kv_bytes(GEMMA3, 2000) == (3 * 2000 + 15 * 512) * per_layer
    # Mistral style: a window on every layer unless use_sliding_window is off.
    assert kv_layout({**SMOL, "sliding_window": 4096}).sliding_layers == 30
    assert kv_layout({**SMOL, "sliding_window": 4096, "use_sliding_window": False}).sliding_layers == 0


@pytest.mark.parametrize("tokens", [1, 127, 128, 129, 1537])
def test_block_allocation_within_one_block(tokens: int) -> None:
    exact = kv_bytes(SMOL, tokens)
    allocated = kv_bytes(SMOL, tokens, block_size=128)
    assert exact <= allocated < exact + 128 * kv_bytes_per_token(SMOL)
    assert allocated % (128 * kv_bytes_per_token(SMOL)) == 0


def test_config_sources_agree(smollm2_folder) -> None:
    from transformers import AutoConfig

    from_folder = kv_bytes_per_token(smollm2_folder)
    assert from_folder == kv_bytes_per_token(AutoConfig.from_pretrained(smollm2_folder))
    assert from_folder == kv_bytes_per_token("smollm2") == kv_bytes_per_token(SMOL)
    assert load_config(smollm2_folder / "config.json")["model_type"] == "llama"
    # Exact parameter count from the safetensors headers: SmolLM2-135M.
    assert weight_bytes(smollm2_folder) == 2 * 134_515_008
    assert abs(weight_bytes(SMOL) - weight_bytes(smollm2_folder)) < 0.01 * weight_bytes(smollm2_folder)


def test_plan_capacity_before_and_after() -> None:
    gib = 1024**3
    plan = plan_capacity(SMOL, 24 * gib, avg_input_tokens=3000, p95_input_tokens=6000, output_tokens=256,
                         token_reduction=0.5, overhead_bytes=2 * gib, num_params=135_000_000)
    budget = int(24 * gib * 0.9) - 270_000_000 - 2 * gib
    assert plan.kv_budget_bytes == budget
    per_before = kv_bytes(SMOL, 3256, block_size=16)
    assert plan.kv_per_request_before == per_before
    assert plan.max_concurrent_before == budget // per_before
    assert plan.max_concurrent_after == budget // kv_bytes(SMOL, 1756, block_size=16)
    assert 1.7 < plan.concurrency_gain < 1.9
    assert plan.max_concurrent_p95_before < plan.max_concurrent_before
    assert (plan.max_model_len_before, plan.max_model_len_after) == (7168, 3328)
    fp8 = plan_capacity(SMOL, 24 * gib, avg_input_tokens=3000, kv_dtype="fp8", num_params=135_000_000)
    assert fp8.max_concurrent_before in (2 * plan.max_concurrent_before, 2 * plan.max_concurrent_before + 1)
    assert "max concurrent (avg)" in plan.to_table() and plan.to_dict()["concurrency_gain"] == plan.concurrency_gain


def test_plan_capacity_reports_when_nothing_fits_and_rejects_bad_input() -> None:
    plan = plan_capacity(SMOL, 1024**3, avg_input_tokens=100, num_params=2_000_000_000)
    assert plan.max_concurrent_before == 0 and "nothing fits" in plan.notes[0]
    with pytest.raises(ConfigError, match="token_reduction"):
        plan_capacity(SMOL, 1024**3, avg_input_tokens=100, token_reduction=1.5)
    with pytest.raises(ConfigError, match="mixture-of-experts"):
        weight_bytes({**SMOL, "num_local_experts": 8})
    with pytest.raises(ConfigError, match="unknown dtype"):
        kv_bytes_per_token(SMOL, "int3")
    with pytest.raises(ConfigError, match="num_hidden_layers"):
        kv_bytes_per_token({"hidden_size": 8})


# Published configs, as their config.json files ship them (fields that matter here).
# google/gemma-2-9b: no layer_types; transformers' Gemma2Config alternates sliding (even) / global (odd) layers.
GEMMA2_9B = {"model_type": "gemma2", "num_hidden_layers": 42, "num_attention_heads": 16, "num_key_value_heads": 8,
             "head_dim": 256, "hidden_size": 3584, "sliding_window": 4096, "sliding_window_size": 4096,
             "max_position_embeddings": 8192, "cache_implementation": "hybrid"}
# google/gemma-3-1b-it: sliding_window_pattern 6 (every 6th layer global).
GEMMA3_1B = {"model_type": "gemma3_text", "num_hidden_layers": 26, "num_attention_heads": 4, "num_key_value_heads": 1,
             "head_dim": 256, "hidden_size": 1152, "sliding_window": 512, "sliding_window_pattern": 6,
             "max_position_embeddings": 32768}
# google/gemma-3-27b-it: the pattern is not written in the text_config; Gemma-3's default (6) applies.
GEMMA3_27B = {"model_type": "gemma3", "text_config": {"model_type": "gemma3_text", "num_hidden_layers": 62,
              "num_attention_heads": 32, "num_key_value_heads": 16, "head_dim": 128, "hidden_size": 5376,
              "sliding_window": 1024}}
# CohereForAI/c4ai-command-r7b-12-2024: sliding_window_pattern 4.
COHERE2 = {"model_type": "cohere2", "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
           "hidden_size": 4096, "sliding_window": 4096, "sliding_window_pattern": 4}
# Qwen/Qwen2.5-7B-Instruct ships a sliding_window it does not use.
QWEN25 = {"model_type": "qwen2", "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
          "hidden_size": 3584, "sliding_window": 131072, "use_sliding_window": False, "max_window_layers": 28}


@pytest.mark.parametrize(
    ("config", "sliding", "window"),
    [(GEMMA2_9B, 21, 4096), (GEMMA3_1B, 22, 512), (GEMMA3_27B, 52, 1024), (COHERE2, 24, 4096), (QWEN25, 0, None),
     ({**QWEN25, "use_sliding_window": True, "max_window_layers": 21}, 7, 131072)],
)
def test_hybrid_sliding_global_layouts(config: dict, sliding: int, window: int | None) -> None:
    layout = kv_layout(config)
    assert (layout.sliding_layers, layout.sliding_window) == (sliding, window)


def test_gemma2_kv_at_8k_counts_the_global_layers_in_full() -> None:
    per_layer = 2 * 8 * 256 * 2
    # 21 global layers hold all 8192 tokens, 21 sliding layers hold 4096.
    assert kv_bytes(GEMMA2_9B, 8192) == (21 * 8192 + 21 * 4096) * per_layer
    assert kv_bytes(GEMMA2_9B, 8192) == 1.5 * 42 * 4096 * per_layer  # what "all 42 sliding" understated
    # An explicit layer_types list wins over the architecture's default pattern.
    explicit = {**GEMMA2_9B, "layer_types": ["full_attention"] * 42}
    assert kv_layout(explicit).sliding_layers == 0
    with pytest.raises(ConfigError, match="layer_types lists 2 layers"):
        kv_layout({**GEMMA2_9B, "layer_types": ["sliding_attention", "full_attention"]})


def test_max_model_len_advice_covers_the_longest_or_a_stated_reject_rate() -> None:
    # 19 prompts of 100 tokens and one of 1,000 (1 in 20 longer than the p95).
    lengths = [100] * 19 + [1000]
    assert advise_max_model_len(lengths, 64) == (1280, 0.0)
    assert advise_max_model_len(lengths, 64, reject_rate=0.05) == (256, 0.05)
    assert advise_max_model_len(lengths, 64, reject_rate=0.04) == (1280, 0.0)  # 0.04 x 20 < 1 request
    assert advise_max_model_len(lengths, 64, limit=1024) == (1024, 0.05)
    with pytest.raises(ConfigError, match="reject_rate"):
        advise_max_model_len(lengths, 64, reject_rate=1.0)
    gib = 1024**3
    p95_only = plan_capacity(SMOL, 24 * gib, avg_input_tokens=500, p95_input_tokens=1000, num_params=135_000_000)
    assert p95_only.advice_basis.startswith("p95") and any("1 request in 20" in n for n in p95_only.notes)
    full = plan_capacity(SMOL, 24 * gib, avg_input_tokens=500, p95_input_tokens=1000, max_input_tokens=3000,
                         token_reduction=0.5, num_params=135_000_000)
    assert full.advice_basis == "max"
    assert (full.max_model_len_before, full.max_model_len_after) == (3328, 1792)  # 3000 + 256 and 1500 + 256
    with pytest.raises(ConfigError, match="below the p95"):
        plan_capacity(SMOL, 24 * gib, avg_input_tokens=500, p95_input_tokens=1000, max_input_tokens=900)
