"""What this CPU can do: its name and the SIMD extensions that decide how fast it runs a model."""

from __future__ import annotations

import os
import platform

_X86_SIMD = ("avx2", "avx512f", "avx512_bf16", "amx_bf16")
_NATIVE_BF16 = frozenset({"avx512_bf16", "amx_bf16", "bf16"})  # x86 AVX-512 BF16 / AMX; aarch64 "bf16"


def cpu_info(cpuinfo: str | None = None) -> tuple[str, frozenset[str]]:
    """The CPU's model name and feature flags, from ``/proc/cpuinfo`` (or the given text of it).

    Only the first processor's block is read: the others repeat it. Where there is no
    ``/proc/cpuinfo`` (macOS, Windows) the name is the platform's and the flags are empty.
    """
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
                cpuinfo = f.read()
        except OSError:
            cpuinfo = ""
    name: str = platform.processor() or "unknown CPU"
    flags: frozenset[str] = frozenset()
    for line in cpuinfo.strip().split("\n\n", 1)[0].splitlines():
        key, _, value = (part.strip() for part in line.partition(":"))
        if key == "model name" and value:
            name = value
        elif key in ("flags", "Features"):
            flags = frozenset(value.split())
    return name, flags


def cpu_summary(cpuinfo: str | None = None) -> str:
    """Name the CPU, its core count and the x86 SIMD extensions that decide its inference speed.

    Benchmark reports record this because CPU timings are only comparable on like hardware
    (see :func:`default_dtype` for how much native bf16 matters).
    """
    name, flags = cpu_info(cpuinfo)
    simd = " ".join(f for f in _X86_SIMD if f in flags)
    summary = f"{name}, {os.cpu_count()} cores"
    return f"{summary}, {simd}" if simd else summary


def default_dtype(on_gpu: bool, flags: frozenset[str] | None = None) -> str:
    """``"bfloat16"`` on a GPU or a CPU with native bf16 arithmetic, else ``"float32"``.

    Without native bf16 (an AVX2-only x86 core) bf16 matmuls are emulated and prefill is several
    times slower than in float32: compare ``results/demo`` (float32) with ``results/demo_bfloat16``
    (``tokenslim bench ... --backend-arg dtype=bfloat16``), both run on a 2-core AVX2 AMD EPYC.
    float32 doubles the KV cache per token, which the reports account for.
    """
    if on_gpu:
        return "bfloat16"
    if flags is None:
        flags = cpu_info()[1]
    return "bfloat16" if flags & _NATIVE_BF16 else "float32"
