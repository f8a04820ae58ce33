"""F.interpolate(mode='bicubic') and nn.Upsample(mode='bicubic') against torch."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
from ember.nn import functional as F

from helpers import assert_same, check_grads, check_op, rand_array, same_error

# float32 sums of 16 taps round in another order than torch's kernel: a few ulps apart
TOL = {np.float32: dict(rtol=1e-5, atol=3e-6), np.float64: {}}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("kwargs", [{"size": (9, 13)}, {"scale_factor": 2},
                                    {"scale_factor": (1.7, 0.6)}, {"size": (3, 4)},
                                    {"size": (1, 1)}, {"scale_factor": 3,
                                                       "recompute_scale_factor": True}], ids=str)
def test_bicubic_matches_torch(kwargs, align, dtype):
    check_op(lambda a: F.interpolate(a, mode="bicubic", align_corners=align, **kwargs),
             lambda a: TF.interpolate(a, mode="bicubic", align_corners=align, **kwargs),
             rand_array((2, 3, 5, 7), dtype), **TOL[dtype])


def test_bicubic_non_contiguous_and_default_align():
    x = rand_array((2, 7, 5, 3))
    check_op(lambda a: F.interpolate(a.permute(0, 3, 2, 1), size=(8, 6), mode="bicubic"),
             lambda a: TF.interpolate(a.permute(0, 3, 2, 1), size=(8, 6), mode="bicubic"), x,
             **TOL[np.float32])


def test_bicubic_finite_differences():
    check_grads(lambda a: F.interpolate(a, size=(5, 4), mode="bicubic", align_corners=True),
                rand_array((1, 2, 3, 3), np.float64))


def test_upsample_module_bicubic():
    x = rand_array((1, 2, 4, 4))
    e, t = ember.nn.Upsample(scale_factor=2, mode="bicubic"), torch.nn.Upsample(
        scale_factor=2, mode="bicubic")
    assert repr(e) == repr(t)
    assert_same(e(ember.tensor(x)), t(torch.tensor(x)), **TOL[np.float32])


@pytest.mark.parametrize("shape", [(1, 1, 4), (1, 1, 2, 2, 2)])
def test_bicubic_needs_4d(shape):
    same_error(lambda L: L.nn.functional.interpolate(L.zeros(shape), scale_factor=2,
                                                     mode="bicubic"))
