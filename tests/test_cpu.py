"""The CPU probe that picks the model dtype and labels benchmark runs."""

from __future__ import annotations

import re

from tokenslim._internal.cpu import cpu_info, cpu_summary, default_dtype

EPYC_AVX2 = "processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse4_2 avx avx2 fma\n"
XEON_AMX = "model name\t: Intel(R) Xeon(R) Platinum 8480+\nflags\t: avx2 avx512f avx512_bf16 amx_bf16 amx_tile\n"
GRAVITON3 = "processor\t: 0\nFeatures\t: fp asimd sve bf16 i8mm\n"


def test_reads_name_and_flags() -> None:
    name, flags = cpu_info(EPYC_AVX2)
    assert name == "AMD EPYC" and {"avx2", "fma"} <= flags and "avx512f" not in flags
    assert cpu_info(EPYC_AVX2 + "\n" + XEON_AMX.replace("model name", "processor\t: 1\nmodel name")) == (name, flags)


def test_summary_names_the_simd_that_decides_cpu_inference_speed() -> None:
    assert re.fullmatch(r"AMD EPYC, \d+ cores, avx2", cpu_summary(EPYC_AVX2))
    assert cpu_summary(XEON_AMX).endswith(" cores, avx2 avx512f avx512_bf16 amx_bf16")
    assert re.fullmatch(r".+, \d+ cores", cpu_summary(""))  # no /proc/cpuinfo (macOS, Windows): name and cores only


def test_float32_only_where_bf16_would_be_emulated() -> None:
    assert default_dtype(on_gpu=False, flags=cpu_info(EPYC_AVX2)[1]) == "float32"
    assert default_dtype(on_gpu=False, flags=cpu_info(XEON_AMX)[1]) == "bfloat16"
    assert default_dtype(on_gpu=False, flags=cpu_info(GRAVITON3)[1]) == "bfloat16"
    assert default_dtype(on_gpu=True, flags=frozenset()) == "bfloat16"
    assert default_dtype(on_gpu=False, flags=cpu_info("")[1]) == "float32"  # unknown CPU: the safe choice
