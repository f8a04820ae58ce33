"""torch.complex and torch.polar: their operand checks in PyTorch's order and words, values,
and polar's node name."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import ember

CASES = {
    "polar_ints": lambda m: m.polar(m.tensor([1]), m.tensor([0])),
    "polar_float_int": lambda m: m.polar(m.tensor([1.0]), m.tensor([0])),
    "polar_float_double": lambda m: m.polar(m.tensor([1.0]), m.tensor([0.0], dtype=m.float64)),
    "polar_half": lambda m: m.polar(m.tensor([1.0], dtype=m.float16),
                                    m.tensor([0.0], dtype=m.float16)),
    "polar_bfloat16": lambda m: m.polar(m.tensor([1.0], dtype=m.bfloat16),
                                        m.tensor([0.0], dtype=m.bfloat16)),
    "polar_complex": lambda m: m.polar(m.tensor([1 + 0j]), m.tensor([0 + 0j])),
    "polar_broadcast": lambda m: m.polar(m.tensor([2.0]), m.tensor([0.5, 1.0])),
    "polar_number": lambda m: m.polar(m.tensor([2.0]), 0.5),
    "polar_negative_abs": lambda m: m.polar(m.tensor([-1.0]), m.tensor([0.3])),
    "complex_ints": lambda m: m.complex(m.tensor([1]), m.tensor([0])),
    "complex_float_double": lambda m: m.complex(m.tensor([1.0]),
                                                m.tensor([0.0], dtype=m.float64)),
    "complex_number": lambda m: m.complex(1.0, m.tensor([0.0])),
}


def _outcome(m, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch: "ComplexHalf support is experimental")
        try:
            r = CASES[name](m)
        except (RuntimeError, TypeError, NotImplementedError) as e:
            return type(e).__name__, str(e)
    return str(r.dtype).split(".")[1], np.array(r.tolist())


@pytest.mark.parametrize("name", sorted(CASES))
def test_as_torch(name):
    got, want = _outcome(ember, name), _outcome(torch, name)
    assert got[0] == want[0]
    if isinstance(want[1], str):
        assert got[1] == want[1]
    else:  # (cos and sin of the angle: each library's own float32 kernels, an ulp apart)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-6)


def test_polar_node_and_gradients():
    res = []
    for m in (torch, ember):
        a = m.tensor([2.0, 0.5], requires_grad=True)
        t = m.tensor([0.3, -1.2], requires_grad=True)
        z = m.polar(a, t)
        (z.real * 3 + z.imag).sum().backward()
        res.append((type(z.grad_fn).__name__, a.grad.tolist(), t.grad.tolist()))
    assert res[0][0] == res[1][0] == "PolarBackward0"
    np.testing.assert_allclose(np.array(res[1][1:]), np.array(res[0][1:]), rtol=1e-6)


def test_polar_gradient_of_a_negative_or_zero_abs_is_torchs():
    # PyTorch's abs gradient is Re(conj(g) sgn(result)): sign(abs) times the derivative
    res = []
    for m in (torch, ember):
        a = m.tensor([-1.5, 0.0, 2.0, -0.0], dtype=m.float64, requires_grad=True)
        t = m.tensor([0.3, 0.7, -1.0, 0.0], dtype=m.float64, requires_grad=True)
        z = m.polar(a, t)
        z.backward(m.tensor([1 + 2j, 3 - 1j, -0.5 + 0.25j, 1 + 0j]))
        res.append((np.array(z.tolist()), a.grad.tolist(), t.grad.tolist()))
    # NOTE: float64 sin/cos and one product each: 1e-12
    for got, want in zip(res[1], res[0]):
        np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-12, atol=1e-12)
    assert str(res[1][0][3]) == str(res[0][0][3])  # (-0.0 stays -0.0)
