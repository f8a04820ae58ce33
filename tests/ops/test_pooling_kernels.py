"""The max-pooling kernel's paths (one pass per window tap, running-maximum offsets, an
add.at scatter back): values, indices and gradients against torch for padding, dilation,
overlapping windows, ceil mode, 1-d to 3-d, integer and half inputs, NaN and -inf."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
from ember.ops import pooling as P

from helpers import E2T, assert_same, check_op, rand_array


@pytest.mark.parametrize("kw", [
    {"kernel_size": 2},  # disjoint windows, no padding
    {"kernel_size": 3, "stride": 1, "padding": 1},  # overlapping: the scatter must add
    {"kernel_size": (3, 2), "stride": (2, 1), "padding": (1, 0), "dilation": (2, 3)},
    {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
    {"kernel_size": (1, 3), "stride": (1, 2)},
], ids=str)
def test_max_pool2d_paths_match_torch(kw):
    check_op(lambda x: P.max_pool2d(x, return_indices=True, **kw),
             lambda x: TF.max_pool2d(x, return_indices=True, **kw), rand_array((3, 4, 9, 8)))


def test_max_pool_1d_3d_large_kernel_match_torch():
    check_op(lambda x: P.max_pool1d(x, 5, 2, 2, 2, return_indices=True),
             lambda x: TF.max_pool1d(x, 5, 2, 2, 2, return_indices=True),
             rand_array((2, 3, 17)))
    check_op(lambda x: P.max_pool3d(x, (2, 3, 2), (1, 2, 2), (1, 1, 0), return_indices=True),
             lambda x: TF.max_pool3d(x, (2, 3, 2), (1, 2, 2), (1, 1, 0), return_indices=True),
             rand_array((2, 2, 4, 7, 6)))


def test_max_pool_ties_nans_and_infinities_match_torch():
    x = np.array([[[[np.nan, np.nan, 1, np.nan],
                    [np.inf, np.nan, 3, 3],
                    [-np.inf, -np.inf, 2, 2],
                    [-np.inf, -np.inf, 2, 5]]]], np.float32)
    for kw in ({"kernel_size": 2}, {"kernel_size": 2, "stride": 1},
               {"kernel_size": 3, "stride": 2, "padding": 1},  # all -inf windows at the edge
               {"kernel_size": 2, "stride": 2, "ceil_mode": True, "padding": 1}):
        e = P.max_pool2d(ember.tensor(x), return_indices=True, **kw)
        t = TF.max_pool2d(torch.tensor(x), return_indices=True, **kw)
        assert_same(e[0], t[0])
        assert_same(e[1], t[1])
    x = np.full((1, 2, 3, 3), -np.inf, np.float32)
    e = P.max_pool2d(ember.tensor(x), 3, 2, 1, return_indices=True)
    t = TF.max_pool2d(torch.tensor(x), 3, 2, 1, return_indices=True)
    assert_same(e[1], t[1])


@pytest.mark.parametrize("dtype", [ember.int32, ember.int64, ember.float16, ember.bfloat16,
                                   ember.float64])
def test_max_pool_dtypes_match_torch(dtype):
    x = ember.tensor(rand_array((2, 3, 7, 6), np.float64, -50, 50)).to(dtype)
    t = torch.tensor(x.to(ember.float64).numpy()).to(E2T[dtype])
    e_v, e_i = P.max_pool2d(x, 3, 2, 1, return_indices=True)
    t_v, t_i = TF.max_pool2d(t, 3, 2, 1, return_indices=True)
    assert_same(e_v, t_v)
    assert_same(e_i, t_i)


def test_max_pool_backward_dtypes_and_overlap_match_torch():
    for dtype in (ember.float16, ember.float64):
        x = ember.tensor(rand_array((2, 3, 6, 6))).to(dtype).requires_grad_()
        t = torch.tensor(x.detach().to(ember.float32).numpy()).to(E2T[dtype]).requires_grad_()
        g = rand_array((2, 3, 6, 6), seed=1)
        (P.max_pool2d(x, 3, 1, 1) * ember.tensor(g).to(dtype)).sum().backward()
        (TF.max_pool2d(t, 3, 1, 1) * torch.tensor(g).to(E2T[dtype])).sum().backward()
        assert x.grad.dtype is dtype
        assert_same(x.grad, t.grad, rtol=1e-2, atol=1e-2)
