"""Bessel Y0/Y1, modified Bessel K0/K1 (plain and scaled) and Airy Ai (ops/_bessel_math.py,
bound in ops/special_ops.py) against torch and against reference values: torch's float64
Y0/Y1/Ai are off by up to ~1e-5 relative (checked against mpmath), so float64 values are
checked against known digits and torch only loosely; dtypes, edges and refusals exactly."""

import math

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, assert_ulp, same_message

NAMES = ["bessel_y0", "bessel_y1", "modified_bessel_k0", "modified_bessel_k1",
         "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "airy_ai"]
EDGES = np.array([-np.inf, -3.0, -0.0, 0.0, 1e-300, 1e-3, 0.5, 1.0, 2.0, 2.01, 10.0, 15.0,
                  15.1, 49.0, 51.0, 103.5, 104.0, 720.0, np.inf, np.nan])
# mpmath, 16 digits: Y0(5), Y1(5), K0(0.5), K1(3), e^x K0(60), Ai(-3), Ai(-9.5), Ai(5)
REFERENCE = [("bessel_y0", 5.0, -0.3085176252490338), ("bessel_y1", 5.0, 0.1478631433912269),
             ("modified_bessel_k0", 0.5, 0.9244190712276659),
             ("modified_bessel_k1", 3.0, 0.04015643112819418),
             ("scaled_modified_bessel_k0", 60.0, 0.1614681782362939),
             ("airy_ai", -3.0, -0.3788142936776581), ("airy_ai", -9.5, 0.3191032477191282),
             ("airy_ai", 5.0, 1.083444281360744e-04)]


@pytest.mark.parametrize("name, x, value", REFERENCE)
def test_reference_values(name, x, value):
    got = getattr(ember.special, name)(ember.tensor([x], dtype=ember.float64)).item()
    assert math.isclose(got, value, rel_tol=1e-13)


@pytest.mark.parametrize("name", NAMES)
def test_edges_and_float64_against_torch(name):
    x = np.concatenate([EDGES, np.linspace(-30, 60, 91)])
    e = getattr(ember.special, name)(ember.tensor(x))
    t = getattr(torch.special, name)(torch.tensor(x))
    # torch's float64 Y0, Y1 and Ai carry errors up to ~1e-5 relative (its rational fits);
    # K0/K1 agree to ~1e-14. NaN, inf, zeros and their signs must agree exactly.
    loose = name in ("bessel_y0", "bessel_y1", "airy_ai")
    assert_same(e, t, rtol=2e-5 if loose else 1e-12, atol=1e-9 if loose else 0)


@pytest.mark.parametrize("name", NAMES)
def test_float32_against_torch(name):
    x = np.concatenate([EDGES, np.linspace(-8, 30, 77)]).astype(np.float32)
    e = getattr(ember.special, name)(ember.tensor(x))
    t = getattr(torch.special, name)(torch.tensor(x))
    # torch computes float32 in float32 (its sin/cos phase and rational fits); ember rounds
    # the float64 value once: a few float32 ulps apart, relative to the oscillation's scale
    assert_ulp(e, t, 64, "torch's float32 kernels round each step", scale=0.1)


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
