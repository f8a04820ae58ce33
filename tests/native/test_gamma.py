"""csrc/gamma.c (digamma and lgamma in C) against the NumPy kernels they twin
(`_special_float32.digamma32`, `_special_math._lgamma64`): digamma bit for bit, lgamma bit
for bit in float32 and within a few ulps of max(|lgamma|, 1) in float64 (the NumPy kernel
takes NumPy's log, log1p and sin, the C one the C library's)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember import native
from ember.ops import special_ops as S
from native._differential import assert_bits, threads

pytestmark = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")


def _inputs(dtype) -> np.ndarray:
    """Poles, signed zeros, infinities, NaN, subnormals, the recurrence's and series'
    boundaries (0.5, 1.5, 10) and their neighbours, digamma's root, a spread of magnitudes."""
    rng = np.random.default_rng(0)
    tiny = np.finfo(dtype).smallest_subnormal
    edges = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, tiny, -tiny, 1.0, 2.0, -1.0, -2.0,
                      -100.0, 0.5, 1.5, 2.5, 10.0, 9.0, 1.4616321449683623, 1e17, 1e30,
                      -0.5, -2.5, np.finfo(dtype).max, -np.finfo(dtype).max], dtype)
    near = np.concatenate([np.nextafter(edges[11:18], dtype(np.inf)),
                           np.nextafter(edges[11:18], dtype(-np.inf))])
    spread = np.concatenate([rng.uniform(-20, 20, 6000), rng.uniform(0, 3, 2000),
                             10.0 ** rng.uniform(-30, 30, 2000),
                             -(10.0 ** rng.uniform(-5, 6, 2000))]).astype(dtype)
    return np.concatenate([edges, near, spread])


def test_digamma_matches_the_numpy_kernel_bit_for_bit():
    fn, nat = native.twins(S.digamma_p)
    lib = native.library("gamma")
    for dtype in (np.float32, np.float64):
        x = _inputs(dtype)
        for n in (0, 1, 15, 16, 17, 4097, len(x)):
            for t in (1, 2):
                with threads(t), np.errstate(all="ignore"):
                    assert_bits(nat(lib, x[:n]), fn(x[:n]))


def test_lgamma_matches_the_numpy_kernel():
    fn, nat = native.twins(S.lgamma_p)
    lib = native.library("gamma")
    with np.errstate(all="ignore"):
        x = _inputs(np.float32)
        for n in (0, 1, 17, len(x)):
            assert_bits(nat(lib, x[:n]), fn(x[:n]))
        x = _inputs(np.float64)
        got, want = nat(lib, x), fn(x)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    assert same[:24].all()  # (the edges: poles, infinities, NaN exactly)
    fin = np.isfinite(want)
    assert np.array_equal(fin, np.isfinite(got))
    # NumPy's and the C library's log / sin differ in a last bit now and then, which the
    # recurrence and the reflection carry on: a few ulps of max(|lgamma|, 1)
    err = np.abs(got[fin] - want[fin]) / np.spacing(np.maximum(np.abs(want[fin]), 1.0))
    assert err.max() <= 8, err.max()


def test_ops_on_strided_tensors_match_torch_and_the_numpy_path():
    # digamma is PyTorch's calc_digamma step for step: its results are torch's
    x = ember.tensor(_inputs(np.float32)[24:]).reshape(2, -1)[:, ::3]  # (a strided view)
    want = torch.from_numpy(np.ascontiguousarray(x.numpy())).digamma().numpy()
    assert_bits(ember.digamma(x).numpy(), want)
    got = x.lgamma().numpy()
    with native.use("numpy"):
        assert_bits(got, x.lgamma().numpy())
