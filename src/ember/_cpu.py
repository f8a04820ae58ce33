"""This CPU's feature flags (Linux's /proc/cpuinfo), read once: some of PyTorch's choices of
kernel depend on them, and ember makes the same choices where they show (a message, a
layout)."""

from __future__ import annotations

import functools
import os


@functools.cache
def flags() -> frozenset:
    """The first processor's flags (empty where /proc/cpuinfo is not there)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.split(":")[0].strip() in ("flags", "Features"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def onednn_bf16() -> bool:
    """PyTorch's `mkldnn_bf16_device_check` on x86 (oneDNN's: AVX-NE-CONVERT, or AVX-512
    BW, VL and DQ)."""
    f = flags()
    return "avx_ne_convert" in f or {"avx512bw", "avx512vl", "avx512dq"} <= f


def onednn_fp16() -> bool:
    """PyTorch's `mkldnn_fp16_device_check` on x86 (AVX-NE-CONVERT or AVX512-FP16)."""
    f = flags()
    return "avx_ne_convert" in f or "avx512_fp16" in f


@functools.cache
def torch_vector_bytes() -> int:
    """The width of PyTorch's Vectorized types on this CPU: 64 bytes where it runs its AVX512
    kernels (AVX512 F, BW, VL and DQ, or ATEN_CPU_CAPABILITY=avx512), else 32 (its AVX2
    build, and the scalar build's emulated vectors). Read once, as PyTorch reads it."""
    env = os.environ.get("ATEN_CPU_CAPABILITY", "").lower()
    if env in ("avx2", "avx512", "default"):
        return 64 if env == "avx512" else 32
    return 64 if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags() else 32


@functools.cache
def numpy_vector_math() -> bool:
    """Whether NumPy runs its AVX-512 loops (its X86_V4 dispatch) for expm1, log1p, the
    hyperbolic and inverse trigonometric functions; without them each is a C-library call
    per element."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as found
    except ImportError:  # (NumPy 1.x)
        from numpy.core._multiarray_umath import __cpu_features__ as found
    return bool(found.get("X86_V4") or found.get("AVX512_SKX"))
