"""Power-average (LP) pooling and the 3-d adaptive pooling layers against torch: values,
shapes, gradients (NaN and inf where torch has them), ceil_mode, modules and their repr."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as EF

from helpers import assert_same, check_grads, check_op, rand_array

CASES = [  # (nd, input shape, kernel_size, stride)
    (1, (2, 3, 11), 3, 2), (1, (3, 10), 4, None),
    (2, (2, 3, 7, 9), (3, 2), None), (2, (3, 8, 7), 2, (3, 2)),
    (3, (2, 3, 5, 6, 7), 2, (2, 1, 3)), (3, (2, 5, 4, 6), (3, 2, 2), None),
]


@pytest.mark.parametrize("ceil_mode", [False, True])
@pytest.mark.parametrize("p", [2, 1, 3, 1.5, 0.5, math.inf, -math.inf])
@pytest.mark.parametrize("nd, shape, kernel, stride", CASES, ids=str)
def test_lp_pool_matches_torch(nd, shape, kernel, stride, p, ceil_mode):
    # float64: torch sums each window in order, ember by NumPy's reduction (an ulp apart).
    # A fractional p makes negative inputs NaN, and p=3 gives windows whose sum is negative:
    # NaN and inf must land in the same places as torch's, in values and gradients.
    fe, ft = getattr(EF, f"lp_pool{nd}d"), getattr(TF, f"lp_pool{nd}d")
    check_op(lambda a: fe(a, p, kernel, stride, ceil_mode),
             lambda a: ft(a, p, kernel, stride, ceil_mode), rand_array(shape, np.float64))


def test_lp_pool_float32_and_a_window_of_zeros():
    x = rand_array((2, 3, 6, 6))
    x[0, 0, :2, :2] = 0.0  # sum of x**p is 0 there: torch's gradient is 0, not NaN
    check_op(lambda a: EF.lp_pool2d(a, 2, 2), lambda a: TF.lp_pool2d(a, 2, 2), x)
    check_grads(lambda a: EF.lp_pool2d(a, 2.0, 2), rand_array((1, 2, 4, 4), np.float64) + 3)


def test_lp_pool_modules_match_torch():
    x = rand_array((2, 3, 6, 7, 8), np.float64)
    for e, t, a in (
            (ember.nn.LPPool1d(2, 3, stride=2), torch.nn.LPPool1d(2, 3, stride=2), x[0, 0]),
            (ember.nn.LPPool2d(1.5, (3, 2), ceil_mode=True),
             torch.nn.LPPool2d(1.5, (3, 2), ceil_mode=True), np.abs(x[0])),
            (ember.nn.LPPool3d(3, 2), torch.nn.LPPool3d(3, 2), x)):
        assert repr(e) == repr(t)
        assert_same(e(ember.tensor(a)), t(torch.tensor(a)))


def test_lp_pool_errors_as_torch():
    for call in (lambda F, m: F.lp_pool1d(m.ones(2, 3, 5), 2, (3,)),
                 lambda F, m: F.lp_pool2d(m.ones(2, 3, 5, 5), 2, (2, 2, 2)),
                 lambda F, m: F.lp_pool2d(m.ones(2, 3, 5, 5), 2, 6),
                 lambda F, m: F.lp_pool1d(m.ones(3, 5), 2, 6),
                 lambda F, m: F.lp_pool3d(m.ones(2, 3, 5, 5, 5), 2, 7)):
        with pytest.raises(Exception) as et:
            call(TF, torch)
        with pytest.raises(type(et.value)) as ee:
            call(EF, ember)
        if not isinstance(et.value, TypeError):  # (the argument parser's words differ)
            assert str(ee.value) == str(et.value)


def test_adaptive_3d_modules_match_torch():
    x = rand_array((2, 3, 5, 6, 7), np.float64)
    for e, t in ((ember.nn.AdaptiveAvgPool3d((2, None, 3)),
                  torch.nn.AdaptiveAvgPool3d((2, None, 3))),
                 (ember.nn.AdaptiveMaxPool3d(3), torch.nn.AdaptiveMaxPool3d(3)),
                 (ember.nn.AdaptiveMaxPool3d((4, 2, 3), return_indices=True),
                  torch.nn.AdaptiveMaxPool3d((4, 2, 3), return_indices=True))):
        assert repr(e) == repr(t)
        assert_same(e(ember.tensor(x)), t(torch.tensor(x)))
    ve, ie = EF.adaptive_max_pool3d_with_indices(ember.tensor(x), 2)
    vt, it = TF.adaptive_max_pool3d_with_indices(torch.tensor(x), 2)
    assert_same(ve, vt)
    assert_same(ie, it)
    for nd in (1, 2):
        shape = (2, 3, 7) if nd == 1 else (2, 3, 7, 5)
        fe = getattr(EF, f"adaptive_max_pool{nd}d_with_indices")
        ft = getattr(TF, f"adaptive_max_pool{nd}d_with_indices")
        a = rand_array(shape)
        for ge, gt in zip(fe(ember.tensor(a), 3), ft(torch.tensor(a), 3)):
            assert_same(ge, gt)
