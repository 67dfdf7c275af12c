"""KV-cache memory per request and the serving capacity it implies.

Shorter prompts matter on a GPU server mostly through the KV cache: every
token of every running request keeps a key and a value vector per layer. The
memory left after the weights, divided by the KV bytes one request needs, is
how many requests fit at once. :func:`plan_capacity` computes that before and
after tokenslim shortened the prompts, and advises ``max_model_len``.

Layouts handled (read from the model config):

* standard / grouped-query attention: ``2 * kv_heads * head_dim`` values per
  layer and token;
* sliding-window layers: a layer keeps at most ``sliding_window`` tokens.
  Which layers slide comes from ``layer_types`` when the config lists them,
  else from the architecture's published pattern: Gemma-2 alternates sliding
  and global layers (its configs carry no ``layer_types``), Gemma-3 and
  Cohere-2 make every ``sliding_window_pattern``-th layer global, Qwen-2 slides
  from ``max_window_layers`` on, and Mistral-style configs slide everywhere;
* MLA (DeepSeek-V2/V3): one compressed latent of ``kv_lora_rank +
  qk_rope_head_dim`` values per layer and token.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from tokenslim.errors import ConfigError

__all__ = [
    "DTYPE_BYTES",
    "CapacityPlan",
    "KVLayout",
    "advise_max_model_len",
    "dtype_bytes",
    "kv_bytes",
    "kv_bytes_per_token",
    "kv_layout",
    "load_config",
    "plan_capacity",
    "weight_bytes",
]

GiB = 1024**3

DTYPE_BYTES: dict[str, float] = {
    "float32": 4,
    "fp32": 4,
    "bfloat16": 2,
    "bf16": 2,
    "float16": 2,
    "fp16": 2,
    "half": 2,
    "fp8": 1,
    "fp8_e4m3": 1,
    "fp8_e5m2": 1,
    "fp8_inc": 1,
    "int8": 1,
    "int4": 0.5,
    "awq": 0.5,
    "gptq": 0.5,
}


def dtype_bytes(dtype: str) -> float:
    """Bytes per value of a dtype name ("bfloat16", "fp8", "int4", ...).

    Raises:
        ConfigError: Unknown dtype name.
    """
    key = str(dtype).lower().removeprefix("torch.")
    if key not in DTYPE_BYTES:
        raise ConfigError(f"unknown dtype {dtype!r}; expected one of {sorted(DTYPE_BYTES)}")
    return DTYPE_BYTES[key]


def load_config(config: Any) -> dict[str, Any]:
    """Normalise a model config to a plain dict of the text model.

    Args:
        config: A transformers ``PretrainedConfig``, a dict, a local folder (or
            path to its config.json), or a known model name ("smollm2",
            "gemma3-270m": converted offline, see :mod:`tokenslim.models`).

    Returns:
        The config as a dict; for multimodal configs the ``text_config`` part,
        keeping the outer ``dtype``.

    Raises:
        ConfigError: The config cannot be found or read.
    """
    if isinstance(config, Mapping):
        data = dict(config)
    elif isinstance(config, (str, os.PathLike)):
        data = _read_config_file(config)
    elif hasattr(config, "to_dict"):
        data = config.to_dict()
    else:
        raise ConfigError(f"config must be a dict, a HF config, a folder or a model name, got {type(config).__name__}")
    text = data.get("text_config")
    if isinstance(text, Mapping) and "num_hidden_layers" in text:
        merged = dict(text)
        for key in ("dtype", "torch_dtype"):
            merged.setdefault(key, data.get(key))
        data = merged
    return data


def _read_config_file(config: str | os.PathLike[str]) -> dict[str, Any]:
    path = Path(config).expanduser()
    if path.is_dir():
        path = path / "config.json"
    if not path.is_file():
        from tokenslim.models import KNOWN_MODELS, model_path

        if os.fspath(config) in KNOWN_MODELS:
            path = model_path(os.fspath(config)) / "config.json"
        else:
            raise ConfigError(
                f"no model config at {os.fspath(config)!r}: pass a folder with config.json, a dict, "
                f"a transformers config or one of {sorted(KNOWN_MODELS)}"
            )
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return data
    except (OSError, ValueError) as exc:
        raise ConfigError(f"could not read model config {str(path)!r}: {exc}") from exc


def _require(cfg: Mapping[str, Any], key: str) -> int:
    value = cfg.get(key)
    if not isinstance(value, int) or value <= 0:
        raise ConfigError(f"model config lacks a positive integer {key!r} (got {value!r})")
    return value


@dataclass(frozen=True)
class KVLayout:
    """What one token costs in the KV cache, per layer kind.

    Attributes:
        num_layers: Decoder layers that keep a KV cache.
        values_per_layer: Cached values per token and layer (K and V together).
        sliding_layers: How many of the layers are sliding-window layers.
        sliding_window: Tokens a sliding layer keeps (None: no sliding layers).
        mla: True for a multi-head latent attention (compressed) cache.
    """

    num_layers: int
    values_per_layer: int
    sliding_layers: int = 0
    sliding_window: int | None = None
    mla: bool = False


def kv_layout(config: Any) -> KVLayout:
    """Read the KV layout off a model config (see the module docstring).

    Raises:
        ConfigError: Required fields are missing.
    """
    cfg = load_config(config)
    layers = _require(cfg, "num_hidden_layers")
    if cfg.get("kv_lora_rank") and cfg.get("qk_rope_head_dim"):
        values = int(cfg["kv_lora_rank"]) + int(cfg["qk_rope_head_dim"])
        return KVLayout(num_layers=layers, values_per_layer=values, mla=True)
    heads = _require(cfg, "num_attention_heads")
    kv_heads = cfg.get("num_key_value_heads") or heads
    head_dim = cfg.get("head_dim") or _require(cfg, "hidden_size") // heads
    values = 2 * int(kv_heads) * int(head_dim)
    window = cfg.get("sliding_window")
    sliding = _sliding_layers(cfg, layers) if window else 0
    return KVLayout(
        num_layers=layers,
        values_per_layer=values,
        sliding_layers=sliding,
        sliding_window=int(window) if sliding and window is not None else None,
    )


#: Architectures whose configs give no ``layer_types``: every ``n``-th layer is global
#: (n = ``sliding_window_pattern``, default here), the others slide. Gemma-2 alternates
#: (transformers' Gemma2Config: layer i slides when (i + 1) % 2); Gemma-3 defaults to 6,
#: Cohere-2 to 4.
_PATTERN_DEFAULTS: dict[str, int] = {"gemma2": 2, "gemma3": 6, "gemma3_text": 6, "cohere2": 4}


def _sliding_layers(cfg: Mapping[str, Any], layers: int) -> int:
    """How many of ``layers`` decoder layers use the sliding window (see the module docstring)."""
    layer_types = cfg.get("layer_types")
    if isinstance(layer_types, list) and layer_types:
        if len(layer_types) < layers:
            raise ConfigError(f"layer_types lists {len(layer_types)} layers, num_hidden_layers is {layers}")
        return sum(1 for t in layer_types[:layers] if "sliding" in str(t))
    pattern = cfg.get("sliding_window_pattern") or _PATTERN_DEFAULTS.get(str(cfg.get("model_type", "")))
    if pattern:
        if not isinstance(pattern, int) or pattern < 1:
            raise ConfigError(f"sliding_window_pattern must be a positive integer, got {pattern!r}")
        return sum(1 for i in range(layers) if (i + 1) % pattern)
    if not cfg.get("use_sliding_window", True):
        return 0
    if cfg.get("model_type") in ("qwen2", "qwen2_moe", "qwen3", "qwen3_moe") and cfg.get("max_window_layers") is not None:
        return max(0, layers - int(cfg["max_window_layers"]))
    return layers


def kv_bytes_per_token(config: Any, kv_dtype: str = "bfloat16") -> int:
    """KV-cache bytes one token adds across all layers (before any window cap).

    Args:
        config: Model config (see :func:`load_config`).
        kv_dtype: Cache dtype: "bfloat16", "float16", "fp8", ...

    Returns:
        Bytes per token.
    """
    layout = kv_layout(config)
    return int(layout.num_layers * layout.values_per_layer * dtype_bytes(kv_dtype))


def kv_bytes(config: Any, num_tokens: int, kv_dtype: str = "bfloat16", block_size: int | None = None) -> int:
    """KV-cache bytes a request of ``num_tokens`` tokens (prompt + output) holds.

    Sliding-window layers keep at most their window. With ``block_size`` the
    figure is what a paged cache (vLLM) allocates: each layer's tokens rounded
    up to whole blocks.

    Args:
        config: Model config (see :func:`load_config`).
        num_tokens: Tokens of the request held in the cache.
        kv_dtype: Cache dtype.
        block_size: Tokens per cache block; None for the exact figure.

    Returns:
        Bytes.

    Raises:
        ConfigError: Negative token count or a non-positive block size.
    """
    if num_tokens < 0:
        raise ConfigError(f"num_tokens must be >= 0, got {num_tokens}")
    if block_size is not None and block_size <= 0:
        raise ConfigError(f"block_size must be > 0, got {block_size}")
    layout = kv_layout(config)
    per_layer = layout.values_per_layer * dtype_bytes(kv_dtype)

    def held(tokens: int) -> int:
        return tokens if block_size is None else math.ceil(tokens / block_size) * block_size

    full_layers = layout.num_layers - layout.sliding_layers
    total = full_layers * held(num_tokens)
    if layout.sliding_layers:
        total += layout.sliding_layers * held(min(num_tokens, layout.sliding_window or num_tokens))
    return int(total * per_layer)


def _dense_params(cfg: Mapping[str, Any]) -> int:
    hidden = _require(cfg, "hidden_size")
    layers = _require(cfg, "num_hidden_layers")
    heads = _require(cfg, "num_attention_heads")
    kv_heads = cfg.get("num_key_value_heads") or heads
    head_dim = cfg.get("head_dim") or hidden // heads
    inter = _require(cfg, "intermediate_size")
    vocab = _require(cfg, "vocab_size")
    attn = hidden * heads * head_dim * 2 + hidden * kv_heads * head_dim * 2
    mlp = 3 * hidden * inter
    embeddings = vocab * hidden * (1 if cfg.get("tie_word_embeddings", True) else 2)
    return embeddings + layers * (attn + mlp + 2 * hidden) + hidden


def _safetensors_params(folder: Path) -> int | None:
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        return None
    total = 0
    for path in files:
        with path.open("rb") as f:
            header = json.loads(f.read(int.from_bytes(f.read(8), "little")))
        for name, meta in header.items():
            if name != "__metadata__":
                total += math.prod(meta["shape"])
    return total


def weight_bytes(config: Any, weight_dtype: str = "bfloat16", num_params: int | None = None) -> int:
    """Bytes of the model weights.

    The parameter count comes from ``num_params``, else the safetensors headers
    of a local folder, else a dense-decoder estimate from the config.

    Raises:
        ConfigError: A mixture-of-experts config without ``num_params``.
    """
    if num_params is None and isinstance(config, (str, os.PathLike)):
        folder = Path(config).expanduser()
        if not folder.is_dir():
            from tokenslim.models import KNOWN_MODELS, model_path

            if os.fspath(config) in KNOWN_MODELS:
                folder = model_path(os.fspath(config))
        num_params = _safetensors_params(folder) if folder.is_dir() else None
    if num_params is None:
        cfg = load_config(config)
        if any(cfg.get(k) for k in ("num_experts", "num_local_experts", "n_routed_experts")):
            raise ConfigError("mixture-of-experts config: pass num_params (total parameters) explicitly")
        num_params = _dense_params(cfg)
    return int(num_params * dtype_bytes(weight_dtype))


def _round_model_len(tokens: float, limit: int | None) -> int:
    step = 256 if tokens <= 4096 else 1024
    value = max(step, math.ceil(tokens / step) * step)
    return min(value, limit) if limit else value


def advise_max_model_len(
    prompt_tokens: Sequence[float], output_tokens: int, *, reject_rate: float = 0.0, limit: int | None = None
) -> tuple[int, float]:
    """The smallest rounded ``max_model_len`` that rejects at most ``reject_rate`` of these requests.

    Args:
        prompt_tokens: Measured prompt lengths (e.g. a bench run's per-question tokens).
        output_tokens: Tokens each request generates.
        reject_rate: Fraction of the requests allowed to be longer than the advice
            (0: cover the longest).
        limit: The model's context (the advice never exceeds it).

    Returns:
        The advised length and the fraction of the given requests it actually rejects.

    Raises:
        ConfigError: No lengths, or a reject rate outside [0, 1).
    """
    if not prompt_tokens:
        raise ConfigError("advise_max_model_len needs at least one prompt length")
    if not 0 <= reject_rate < 1:
        raise ConfigError(f"reject_rate is a fraction in [0, 1), got {reject_rate}")
    needs = sorted(float(t) + output_tokens for t in prompt_tokens)
    allowed = math.floor(reject_rate * len(needs) + 1e-9)  # requests that may be rejected
    length = _round_model_len(needs[len(needs) - 1 - allowed], limit)
    rejected = sum(1 for n in needs if n > length) / len(needs)
    return length, rejected


@dataclass
class CapacityPlan:
    """How many requests fit in GPU memory, before and after tokenslim.

    Attributes:
        gpu_memory_bytes: Device memory.
        usable_bytes: ``gpu_memory_bytes * gpu_memory_utilization``.
        weight_bytes: Model weights.
        overhead_bytes: Activations, CUDA graphs, runtime (not KV, not weights).
        kv_budget_bytes: Memory left for the KV cache.
        kv_bytes_per_token: KV bytes per token (all layers, no window cap).
        kv_per_request_before: KV bytes of an average request before tokenslim.
        kv_per_request_after: The same after tokenslim.
        max_concurrent_before: Average-size requests that fit at once, before.
        max_concurrent_after: The same after.
        max_concurrent_p95_before: p95-size requests that fit at once, before.
        max_concurrent_p95_after: The same after.
        max_model_len_before: Advised ``max_model_len``: the longest prompt + output, rounded
            up, before (from ``max_input_tokens``; see ``advice_basis`` when only a p95 was given).
        max_model_len_after: The same after.
        inputs: The token figures the plan used.
        notes: Warnings (weights do not fit, window caps applied, ...).
    """

    gpu_memory_bytes: int
    usable_bytes: int
    weight_bytes: int
    overhead_bytes: int
    kv_budget_bytes: int
    kv_bytes_per_token: int
    kv_per_request_before: int
    kv_per_request_after: int
    max_concurrent_before: int
    max_concurrent_after: int
    max_concurrent_p95_before: int
    max_concurrent_p95_after: int
    max_model_len_before: int
    max_model_len_after: int
    inputs: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    advice_basis: str = "max"

    @property
    def concurrency_gain(self) -> float:
        """max_concurrent_after / max_concurrent_before (0 when nothing fits before)."""
        return self.max_concurrent_after / self.max_concurrent_before if self.max_concurrent_before else 0.0

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (for JSON output), including ``concurrency_gain``."""
        out = asdict(self)
        out["concurrency_gain"] = self.concurrency_gain
        return out

    def to_table(self) -> str:
        """A small text table: figure, before, after."""
        rows = [
            ("KV bytes / request (avg)", _fmt_bytes(self.kv_per_request_before), _fmt_bytes(self.kv_per_request_after)),
            ("max concurrent (avg)", str(self.max_concurrent_before), str(self.max_concurrent_after)),
            ("max concurrent (p95)", str(self.max_concurrent_p95_before), str(self.max_concurrent_p95_after)),
            ("advised max_model_len", str(self.max_model_len_before), str(self.max_model_len_after)),
        ]
        head = (
            f"GPU {_fmt_bytes(self.gpu_memory_bytes)} (usable {_fmt_bytes(self.usable_bytes)}), weights "
            f"{_fmt_bytes(self.weight_bytes)}, overhead {_fmt_bytes(self.overhead_bytes)}, KV budget "
            f"{_fmt_bytes(self.kv_budget_bytes)}, {self.kv_bytes_per_token} B/token"
        )
        width = max(len(r[0]) for r in rows)
        lines = [head, f"{'':<{width}}  {'before':>12}  {'after':>12}"]
        lines += [f"{a:<{width}}  {b:>12}  {c:>12}" for a, b, c in rows]
        lines.append(f"{'concurrency gain':<{width}}  {'':>12}  {self.concurrency_gain:>11.2f}x")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


def _fmt_bytes(n: float) -> str:
    for unit, size in (("GiB", GiB), ("MiB", 1024**2), ("KiB", 1024)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{int(n)} B"


def plan_capacity(
    config: Any,
    gpu_memory_bytes: int,
    *,
    avg_input_tokens: float,
    output_tokens: int = 256,
    p95_input_tokens: float | None = None,
    max_input_tokens: float | None = None,
    token_reduction: float | None = None,
    avg_input_tokens_after: float | None = None,
    p95_input_tokens_after: float | None = None,
    max_input_tokens_after: float | None = None,
    weight_dtype: str = "bfloat16",
    kv_dtype: str = "bfloat16",
    overhead_bytes: int = 2 * GiB,
    gpu_memory_utilization: float = 0.9,
    num_params: int | None = None,
    block_size: int = 16,
) -> CapacityPlan:
    """Plan serving capacity from KV memory per request, before vs after tokenslim.

    ``max concurrent = (memory * utilization - weights - overhead) / KV per
    request`` where a request holds its prompt plus ``output_tokens`` in whole
    cache blocks (vLLM's paged cache). "After" prompts come from the explicit
    ``*_after`` figures, else from ``token_reduction`` (the measured fraction of
    prompt tokens tokenslim removed).

    Args:
        config: Model config (see :func:`load_config`); a folder also gives the
            exact parameter count from its safetensors.
        gpu_memory_bytes: Memory of one device (e.g. ``80 * 1024**3``).
        avg_input_tokens: Mean prompt tokens before tokenslim.
        output_tokens: Generated tokens per request (``max_tokens``).
        p95_input_tokens: p95 prompt tokens before (defaults to the mean).
        max_input_tokens: The longest prompt to serve, before; the advised
            ``max_model_len`` covers it. Without it the advice covers the p95
            prompt, rejecting about 1 request in 20, and ``advice_basis`` and
            the notes say so (see :func:`advise_max_model_len` for a stated
            reject rate over measured lengths).
        token_reduction: Fraction of prompt tokens removed, in [0, 1).
        avg_input_tokens_after: Measured mean prompt tokens after tokenslim.
        p95_input_tokens_after: Measured p95 prompt tokens after tokenslim.
        max_input_tokens_after: Measured longest prompt after tokenslim.
        weight_dtype: Weight dtype ("bfloat16", "fp8", "int4", ...).
        kv_dtype: KV-cache dtype ("bfloat16", "fp8", ...).
        overhead_bytes: Activations, CUDA graphs and runtime memory (2 GiB default,
            a typical vLLM figure for small and mid-size models).
        gpu_memory_utilization: Fraction of memory vLLM may use (its default 0.9).
        num_params: Total parameters, overriding the count from the config.
        block_size: KV-cache block size in tokens (vLLM's default 16).

    Returns:
        A :class:`CapacityPlan`.

    Raises:
        ConfigError: Invalid figures or an unusable config.
    """
    if gpu_memory_bytes <= 0:
        raise ConfigError(f"gpu_memory_bytes must be > 0, got {gpu_memory_bytes}")
    if not 0 < gpu_memory_utilization <= 1:
        raise ConfigError(f"gpu_memory_utilization must be in (0, 1], got {gpu_memory_utilization}")
    if avg_input_tokens <= 0 or output_tokens < 0:
        raise ConfigError(f"need avg_input_tokens > 0 and output_tokens >= 0, got {avg_input_tokens}, {output_tokens}")
    if token_reduction is not None and not 0 <= token_reduction < 1:
        raise ConfigError(f"token_reduction is a fraction in [0, 1), got {token_reduction}")
    if overhead_bytes < 0:
        raise ConfigError(f"overhead_bytes must be >= 0, got {overhead_bytes}")
    p95_before = p95_input_tokens if p95_input_tokens is not None else avg_input_tokens
    keep = 1.0 - (token_reduction or 0.0)
    avg_after = avg_input_tokens_after if avg_input_tokens_after is not None else avg_input_tokens * keep
    p95_after = p95_input_tokens_after if p95_input_tokens_after is not None else p95_before * keep
    if max_input_tokens is not None:
        if max_input_tokens < p95_before:
            raise ConfigError(f"max_input_tokens ({max_input_tokens}) is below the p95 ({p95_before})")
        max_before = max_input_tokens
        max_after = max_input_tokens_after if max_input_tokens_after is not None else max_input_tokens * keep
        basis = "max"
    else:
        max_before, max_after, basis = p95_before, p95_after, "p95 (about 5% of requests rejected)"

    cfg = load_config(config)
    weights = weight_bytes(config, weight_dtype, num_params)
    usable = int(gpu_memory_bytes * gpu_memory_utilization)
    budget = usable - weights - overhead_bytes
    notes: list[str] = []
    if budget <= 0:
        notes.append("weights + overhead exceed the usable memory: nothing fits; use more memory or smaller weights")
        budget = 0

    def per_request(prompt: float) -> int:
        return kv_bytes(cfg, math.ceil(prompt) + output_tokens, kv_dtype, block_size)

    def fit(prompt: float) -> int:
        return budget // per_request(prompt)

    layout = kv_layout(cfg)
    if layout.sliding_layers:
        notes.append(
            f"{layout.sliding_layers}/{layout.num_layers} layers use a {layout.sliding_window}-token sliding window "
            "(their KV is capped)"
        )
    limit = cfg.get("max_position_embeddings")
    need = max_before + output_tokens
    if limit and need > limit:
        notes.append(f"longest prompt + output ({need:.0f}) exceeds the model's context ({limit})")
    if basis != "max":
        notes.append("advised max_model_len covers the p95 prompt only: about 1 request in 20 would be rejected; "
                     "give the longest prompt (max_input_tokens / --max-input) to cover every request")
    return CapacityPlan(
        gpu_memory_bytes=int(gpu_memory_bytes),
        usable_bytes=usable,
        weight_bytes=weights,
        overhead_bytes=int(overhead_bytes),
        kv_budget_bytes=int(budget),
        kv_bytes_per_token=kv_bytes_per_token(cfg, kv_dtype),
        kv_per_request_before=per_request(avg_input_tokens),
        kv_per_request_after=per_request(avg_after),
        max_concurrent_before=fit(avg_input_tokens),
        max_concurrent_after=fit(avg_after),
        max_concurrent_p95_before=fit(p95_before),
        max_concurrent_p95_after=fit(p95_after),
        max_model_len_before=_round_model_len(max_before + output_tokens, limit),
        max_model_len_after=_round_model_len(max_after + output_tokens, limit),
        advice_basis=basis,
        inputs={
            "avg_input_tokens": avg_input_tokens,
            "p95_input_tokens": p95_before,
            "avg_input_tokens_after": avg_after,
            "p95_input_tokens_after": p95_after,
            "max_input_tokens": max_before if basis == "max" else None,
            "max_input_tokens_after": max_after if basis == "max" else None,
            "output_tokens": output_tokens,
            "weight_dtype": weight_dtype,
            "kv_dtype": kv_dtype,
            "block_size": block_size,
            "gpu_memory_utilization": gpu_memory_utilization,
        },
        notes=notes,
    )
