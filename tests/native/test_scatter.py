"""csrc/scatter.c (scatter_add and index_add in C) against the NumPy kernels it twins
(np.add.at): the same sums in the same order, so the same bits, on every dim, index and
source layout, repeated and special values; what it leaves to NumPy."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember import native
from ember.ops import index as I
from ember.ops import index_ops
from native._differential import assert_bits, layouts, with_specials

pytestmark = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")

# (target shape, index shape): an index narrower than the target off its dim, and wider
# along it (repeated targets: the order of the sums decides the bits)
CASES = [((7,), (20,)), ((1,), (5,)), ((5, 6), (9, 6)), ((5, 6), (3, 4)), ((6, 5), (6, 30)),
         ((3, 4, 5), (3, 2, 5)), ((3, 4, 5), (6, 4, 2)), ((2, 3, 4), (2, 3, 9))]


def test_scatter_add_matches_the_numpy_kernel_bit_for_bit():
    fn, nat = native.twins(I.scatter_add_fn)
    lib = native.library("scatter")
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        for oshape, ishape in CASES:
            for dim in range(len(oshape)):
                if any(i > o for d, (o, i) in enumerate(zip(oshape, ishape)) if d != dim):
                    continue
                a = with_specials(rng.standard_normal(oshape).astype(dtype))
                idx = rng.integers(0, oshape[dim], ishape)
                big = tuple(n + 1 for n in ishape)  # (a source larger than the index)
                src = (rng.standard_normal(big) * 10 ** rng.uniform(-3, 3, big)).astype(dtype)
                for name, s in layouts(src).items():
                    for ix in layouts(idx).values():
                        assert_bits(nat(lib, a, ix, s, dim=dim), fn(a, ix, s, dim=dim))
                    # (gather's backward: into zeros of a shape; a negative dim too)
                    neg = dim - len(oshape)
                    assert_bits(nat(lib, 0, idx, s, dim=neg, shape=oshape),
                                fn(0, idx, s, dim=neg, shape=oshape)), (oshape, name)


def test_what_stays_with_the_numpy_kernel():
    lib = native.library("scatter")
    _, nat = native.twins(I.scatter_add_fn)
    a, idx = np.zeros(4, np.float32), np.array([0, 3, 1])
    assert nat(lib, a, np.array([0, 4, 1]), np.ones(3, np.float32), dim=0) is NotImplemented
    assert nat(lib, a, np.array([0, -1, 1]), np.ones(3, np.float32), dim=0) is NotImplemented
    assert nat(lib, a.astype(np.float16), idx, np.ones(3, np.float16), dim=0) is NotImplemented
    assert nat(lib, a.astype(np.int64), idx, np.ones(3, np.int64), dim=0) is NotImplemented
    got = nat(lib, a, idx, np.array([1.0, 2.0, 3.0], np.float32), dim=0)
    assert got.tolist() == [1.0, 3.0, 0.0, 2.0]  # (worked by hand)
    assert got is not a and a.tolist() == [0.0] * 4


def test_scatter_add_and_gathers_gradient_agree_with_torch():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((64, 50)).astype(np.float32)
    idx = rng.integers(0, 50, (64, 80))
    src = rng.standard_normal((64, 80)).astype(np.float32)
    want = torch.from_numpy(x).scatter_add(1, torch.from_numpy(idx), torch.from_numpy(src))
    got = ember.from_numpy(x).scatter_add(1, ember.from_numpy(idx), ember.from_numpy(src))
    # (repeated targets: torch may add them in another order; a few ulps of the sums)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
    for lib in (torch, ember):
        t = lib.tensor(x, requires_grad=True)
        lib.gather(t, 1, lib.tensor(idx[:, :50])).pow(2).sum().backward()
        if lib is torch:
            tg = t.grad.numpy()
        else:
            np.testing.assert_allclose(t.grad.numpy(), tg, rtol=1e-5, atol=1e-6)


def test_index_add_matches_the_numpy_kernel_bit_for_bit():
    fn, nat = native.twins(index_ops.index_copy_p)
    lib = native.library("scatter")
    rng = np.random.default_rng(3)
    for dtype in (np.float32, np.float64):
        for shape in ((9,), (6, 70), (5, 4, 3), (2, 1, 300)):
            for dim in range(len(shape)):
                a = with_specials(rng.standard_normal(shape).astype(dtype))
                for n in (0, 1, 3 * shape[dim] + 1):  # (repeats: the order of the adds)
                    idx = rng.integers(0, shape[dim], n)
                    sshape = shape[:dim] + (n,) + shape[dim + 1:]
                    src = (rng.standard_normal(sshape) * 10.0 ** rng.uniform(-3, 3, sshape))
                    for s in layouts(src.astype(dtype)).values():
                        for alpha in (1, 2.5, -0.3):
                            kw = dict(dim=dim, accumulate=True, alpha=alpha)
                            assert_bits(nat(lib, a, idx, s, **kw), fn(a, idx, s, **kw))
    a = np.zeros(4, np.float32)
    assert nat(lib, a, np.array([4]), np.ones(1, np.float32), dim=0,
               accumulate=True) is NotImplemented  # (out of range: NumPy's way with it)
    assert nat(lib, a, np.array([1]), np.ones(1, np.float32), dim=0) is NotImplemented
    got = ember.zeros(3).index_add(0, ember.tensor([2, 0, 2]), ember.tensor([1.0, 2.0, 3.0]))
    assert got.tolist() == [2.0, 0.0, 4.0]  # (worked by hand)
