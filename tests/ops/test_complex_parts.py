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
