"""csrc/pdist.c (pdist's p = 2 gradient in C) against ops/pdist_euclidean.py's NumPy
kernel it twins: the same bits (each pair's (g * d) / dist added to its first row and
subtracted from its second, in pair order), on every layout, special value and edge size."""

from __future__ import annotations

import numpy as np
import pytest

from ember import native
from ember.ops import pdist_euclidean as P
from native._differential import assert_bits, layouts, with_specials

pytestmark = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_native_gradient_is_the_numpy_kernels_bits(dtype):
    rng = np.random.default_rng(0)
    for n, m in ((2, 1), (3, 7), (9, 1), (17, 33), (40, 130)):
        x = rng.standard_normal((n, m)).astype(dtype)
        x[n - 1] = x[0]  # (a zero distance: its pair adds nothing)
        k = n * (n - 1) // 2
        g = rng.standard_normal(k).astype(dtype)
        dist = P._forward_kernel(x)
        cases = {name: (v, g, dist) for name, v in layouts(x).items()}
        if x.size >= 4:
            cases["specials"] = (with_specials(x), g, P._forward_kernel(with_specials(x)))
        g_special = g.copy()
        g_special[:3] = [np.nan, np.inf, -0.0][:k]
        cases["special cotangent"] = (x, g_special[:k], dist)
        cases["broadcast cotangent"] = (x, np.broadcast_to(g[:1], (k,)), dist)
        for name, (xa, ga, da) in cases.items():
            with native.use("native"):
                got = P.backward(xa, ga, da)
            with native.use("numpy"):
                want = P.backward(xa, ga, da)
            assert_bits(got, want), (n, m, name)
