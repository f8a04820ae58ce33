"""csrc/scan.c (cumsum, cumprod, cummax, cummin in C) against ops/scan.py's NumPy kernels
they twin: the same bits (one add or multiply per element, in the same order, carried in
the same dtype), cummax / cummin's indices equal, on every layout, dim, special value and
edge size, with one and two threads."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember import native
from ember.ops import scan as S
from native._differential import assert_bits, layouts, threads, with_specials

pytestmark = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")

SHAPES = [(0,), (1,), (17,), (3, 0), (5, 1), (1, 9), (7, 33), (4, 3, 5), (2, 300, 3),
          (3, 5, 260)]  # (inner widths past a block of 256 columns, rows not a multiple of 8)


def _arrays(dtype):
    rng = np.random.default_rng(0)
    for shape in SHAPES:
        a = rng.standard_normal(shape).astype(dtype)
        for name, v in layouts(a).items():
            yield shape, name, v
        if a.size >= 4:
            yield shape, "specials", with_specials(a)
            # (ties and repeated extrema: the latest index wins)
            yield shape, "ties", np.round(a).astype(dtype)


def _sum_product_cases():
    return ((S.CUMSUM, {}), (S.CUMSUM, {"reverse": True}), (S.CUMSUM, {"own": True}),
            (S.CUMSUM, {"reverse": True, "own": True}), (S.CUMPROD, {}),
            (S.CUMPROD, {"own": True}))


def test_running_sums_and_products_match_the_numpy_kernel_bit_for_bit():
    lib = native.library("scan")
    for member, params in _sum_product_cases():
        fn, nat = native.twins(member)
        for dtype in (np.float32, np.float64):
            for shape, name, a in _arrays(dtype):
                for dim in [*range(len(shape)), -1]:  # (a negative dim, as NumPy's axis=)
                    want = fn(a, dim=dim, **params)
                    for t in (1, 2):
                        with threads(t), np.errstate(all="ignore"):
                            got = nat(lib, a, dim=dim, **params)
                        assert_bits(got, want), (member, params, shape, name, dim, t)


@pytest.mark.parametrize("member", ["CUMMAX", "CUMMIN"])
def test_running_extrema_and_their_indices_match_the_numpy_kernel(member):
    lib = native.library("scan")
    fn, nat = native.twins(getattr(S, member))
    for dtype in (np.float32, np.float64):
        for shape, name, a in _arrays(dtype):
            for dim in range(len(shape)):
                wv, wi = fn(a, dim=dim)
                for t in (1, 2):
                    with threads(t), np.errstate(all="ignore"):
                        gv, gi = nat(lib, a, dim=dim)
                    assert_bits(gv, wv)
                    assert gi.dtype == np.int64 and np.array_equal(gi, wi), (shape, name, dim)


def test_other_dtypes_and_0d_inputs_take_the_numpy_kernel():
    lib = native.library("scan")
    _, nat = native.twins(S.CUMSUM)
    _, ext = native.twins(S.CUMMAX)
    assert nat(lib, np.arange(5, dtype=np.int64), dim=0) is NotImplemented
    assert nat(lib, np.ones(3, np.float16), dim=0) is NotImplemented
    assert nat(lib, np.array(2.0, np.float32), dim=0) is NotImplemented
    assert ext(lib, np.arange(5, dtype=np.int32), dim=0) is NotImplemented


def test_the_ops_through_ember_agree_with_torch():
    # PyTorch's CPU scans carry float32 in double and round each output once: the same
    # operations in the same order, so equal bits where its loop is sequential (as here,
    # along a dim of 1000 and across 7 rows); cummax / cummin indices are exact
    x = np.random.default_rng(1).standard_normal((7, 1000)).astype(np.float32)
    x[2, 10] = np.nan
    x[3, ::7] = 1.0
    e, t = ember.from_numpy(x), torch.from_numpy(x)
    for dim in (0, 1):
        np.testing.assert_array_equal(ember.cumsum(e, dim).numpy(), torch.cumsum(t, dim).numpy())
        for name in ("cummax", "cummin"):
            ev, ei = getattr(ember, name)(e, dim)
            tv, ti = getattr(torch, name)(t, dim)
            np.testing.assert_array_equal(ev.numpy(), tv.numpy())
            np.testing.assert_array_equal(ei.numpy(), ti.numpy())
    small = ember.from_numpy(x[:, :30] * 0.5)
    np.testing.assert_allclose(ember.cumprod(small, 1).numpy(),
                               torch.cumprod(torch.from_numpy(x[:, :30] * 0.5), 1).numpy(),
                               rtol=1e-6)  # (products: torch may vectorise; a few ulps)
