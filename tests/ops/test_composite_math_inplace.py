"""The in-place forms of the everyday composites (deg2rad_, rad2deg_, xlogy_, copysign_,
sinc_, heaviside_) against torch: values, dtypes, refusals and gradients through them."""

from __future__ import annotations

import pytest
import torch

import ember

from helpers import assert_same

CALLS = {
    "deg2rad_": lambda m, x: x.deg2rad_(),
    "rad2deg_": lambda m, x: x.rad2deg_(),
    "xlogy_ tensor": lambda m, x: x.xlogy_(m.tensor([3.0, 0.5, 2.0])),
    "xlogy_ number": lambda m, x: x.xlogy_(3),
    "copysign_ tensor": lambda m, x: x.copysign_(m.tensor([-1.0, 1.0, -0.0])),
    "copysign_ number": lambda m, x: x.copysign_(-1),
    "sinc_": lambda m, x: x.sinc_(),
    "heaviside_": lambda m, x: x.heaviside_(m.tensor([0.5, 0.5, 0.5], dtype=m.float64)),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_written_into_self_as_torch_writes_it(name):
    def run(m):
        x = m.tensor([0.5, -2.0, 0.0], dtype=m.float64)
        out = CALLS[name](m, x)
        return out is x, x

    (same_e, x_e), (same_t, x_t) = run(ember), run(torch)
    assert same_e and same_t
    # (log, sin and the degree factor go through libm: one ulp of float64)
    assert_same(x_e, x_t, rtol=1e-15, atol=0)


@pytest.mark.parametrize("call", [
    lambda m: m.zeros(3, dtype=m.int32).deg2rad_(),
    lambda m: m.tensor([True]).sinc_(),
    lambda m: m.zeros(3, dtype=m.long).copysign_(m.ones(3)),
    lambda m: m.zeros(3).xlogy_(m.ones(2, 3)),
    lambda m: m.zeros(3).copysign_(m.ones(2, 3)),
    lambda m: m.zeros(3).heaviside_(m.ones(3, dtype=m.long)),
    lambda m: m.ones(3, requires_grad=True).copysign_(m.ones(3)),
], ids=["int-deg2rad", "bool-sinc", "long-copysign", "xlogy-broadcast",
        "copysign-broadcast", "heaviside-dtypes", "leaf"])
def test_refusals_match_torch(call):
    def run(m):
        with pytest.raises(Exception) as info:
            call(m)
        return type(info.value).__name__, str(info.value)

    assert run(ember) == run(torch)


@pytest.mark.parametrize("name", ["xlogy_ tensor", "copysign_ tensor", "sinc_", "deg2rad_"])
def test_gradients_flow_through_the_write(name):
    def run(m):
        x = m.tensor([0.5, -2.0, 1.5], dtype=m.float64, requires_grad=True)
        y = x * 1
        CALLS[name](m, y)
        (y * m.tensor([1.0, 2.0, 3.0], dtype=m.float64)).sum().backward()
        return y.detach(), x.grad

    for ours, theirs in zip(run(ember), run(torch)):
        assert_same(ours, theirs, rtol=1e-15, atol=0)  # (libm, as above)
