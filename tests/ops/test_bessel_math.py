"""Bessel Y0/Y1, modified Bessel K0/K1 (plain and scaled) and Airy Ai (ops/_cephes_bessel_jy.py,
_cephes_bessel_k.py, _cephes_airy.py, bound in ops/special_ops.py) against reference values:
ember replays PyTorch's Cephes fits (bit for bit: tests/ops/test_cephes_bessel.py), so these
check the fits' own accuracy against mpmath digits; dtypes, edges and refusals exactly."""

import math

import pytest
import torch

import ember

from helpers import assert_same, same_message

NAMES = ["bessel_y0", "bessel_y1", "modified_bessel_k0", "modified_bessel_k1",
         "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "airy_ai"]
# mpmath, 16 digits: Y0(5), Y1(5), K0(0.5), K1(3), e^x K0(60), Ai(-3), Ai(-9.5), Ai(5), with
# the relative accuracy of PyTorch's fits there (Y at 5 and Ai at -3 sit where two fits meet)
REFERENCE = [("bessel_y0", 5.0, -0.3085176252490338, 1e-7),
             ("bessel_y1", 5.0, 0.1478631433912269, 1e-7),
             ("modified_bessel_k0", 0.5, 0.9244190712276659, 1e-15),
             ("modified_bessel_k1", 3.0, 0.04015643112819418, 1e-15),
             ("scaled_modified_bessel_k0", 60.0, 0.1614681782362939, 1e-15),
             ("airy_ai", -3.0, -0.3788142936776581, 3e-8),
             ("airy_ai", -9.5, 0.3191032477191282, 1e-15),
             ("airy_ai", 5.0, 1.083444281360744e-04, 1e-15)]


@pytest.mark.parametrize("name, x, value, rel", REFERENCE)
def test_reference_values(name, x, value, rel):
    got = getattr(ember.special, name)(ember.tensor([x], dtype=ember.float64)).item()
    assert math.isclose(got, value, rel_tol=rel)


def test_airy_float32_flushes_where_torch_overflows():
    x = [25.5, 25.9, 26.0, 30.0]
    assert_same(ember.special.airy_ai(ember.tensor(x)), torch.special.airy_ai(torch.tensor(x)),
                rtol=1e-5, atol=0)


@pytest.mark.parametrize("name", NAMES)
def test_dtypes_no_graph_and_refusals(name):
    assert_same(getattr(ember.special, name)(ember.tensor([1, 2])),
                getattr(torch.special, name)(torch.tensor([1, 2])), rtol=1e-6, atol=0)
    y = getattr(ember.special, name)(ember.ones(2, requires_grad=True))
    assert not y.requires_grad
    same_message(lambda L: getattr(L.special, name)(L.ones(2, dtype=L.float16)),
                 NotImplementedError)
