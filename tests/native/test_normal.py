"""csrc/normal.c (the Box-Muller step of the normal fill and its v * std + mean) against its
NumPy twins in `_rng_math` / `_rng_kernels`, bit for bit, and randn / normal_ with native
kernels on against the same draws with them off (the NumPy path, which the tests in
tests/ops/test_random_ops.py hold to torch's stream)."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember import native
from ember.ops import _rng_kernels as K
from ember.ops import _rng_math as M
from ember.ops import _rng_native as R
from native._differential import assert_bits, threads

pytestmark = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")


@pytest.fixture(autouse=True)
def _every_size(monkeypatch):
    """The native path for every size (it normally leaves small draws to NumPy)."""
    monkeypatch.setattr(R, "MIN_DRAWS", 0)


def _uniform_blocks(dtype) -> np.ndarray:
    """(blocks, 16) uniforms: a spread over every 64th float uniform k 2^-24 (lanes 0-7 feed
    the log, 8-15 the angle, so both see each), the ends of [0, 1), and random ones."""
    k = np.concatenate([np.arange(0, 2**24, 61), np.arange(4096), 2**24 - 1 - np.arange(4096)])
    u = (k * 2.0**-24).astype(dtype)
    if dtype is np.float64:  # (53-bit uniforms: also values float32 cannot hold)
        u = np.concatenate([u, np.random.default_rng(3).random(4096), [1 - 2.0**-53]])
    u = np.concatenate([u, np.zeros(-len(u) % 8, dtype)])
    return np.concatenate([u.reshape(-1, 8), u[::-1].reshape(-1, 8)], axis=1)


def test_box_muller_blocks_match_numpy_bit_for_bit():
    for dtype, twin in ((np.float32, M.box_muller_f32_avx2), (np.float64, K.box_muller_f64)):
        u = _uniform_blocks(dtype)
        for blocks in (0, 1, 2, 1023, len(u)):  # (split over threads from 1024 blocks)
            part = np.ascontiguousarray(u[:blocks])
            for t in (1, 2):
                with threads(t):
                    assert_bits(R.box_muller(part), twin(part))


def test_affine_matches_fma_and_two_roundings():
    rng = np.random.default_rng(0)
    for dtype, fma in ((np.float32, M.fma32), (np.float64, M.fma64)):
        v = rng.standard_normal(4099).astype(dtype)
        v[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, np.finfo(dtype).smallest_subnormal]
        for s, m in ((1.0, 0.0), (0.02, 0.0), (3.7, -1.25), (1e-3, 5.0)):
            t = dtype
            with np.errstate(invalid="ignore"):  # (NumPy's fma error terms on inf / NaN)
                want_fused = v + t(m) if (s, m) == (1.0, 0.0) else fma(v, t(s), t(m))
            assert_bits(R.affine(v.copy(), s, m, True), want_fused)
            assert_bits(R.affine(v.copy(), s, m, False), v * t(s) + t(m))


def test_randn_and_normal_match_the_numpy_path():
    for dtype in (ember.float32, ember.float64, ember.float16, ember.bfloat16):
        for n in (0, 1, 15, 16, 17, 33, 1001, 4099):
            for mean, std in ((0.0, 1.0), (0.5, 0.02)):
                got = []
                for mode in ("native", "numpy"):
                    with native.use(mode):
                        g = ember.Generator().manual_seed(n + 7)
                        x = ember.empty(n, dtype=dtype).normal_(mean, std, generator=g)
                        y = ember.randn(n, dtype=dtype, generator=g)
                        got.append((x, y, g._words(3)))
                for a, b in zip(got[0][:2], got[1][:2]):
                    assert_bits(a.float().numpy(), b.float().numpy())
                assert np.array_equal(got[0][2], got[1][2])  # the stream moved on alike
