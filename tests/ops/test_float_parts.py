"""float_parts.py against torch: frexp, ldexp and nextafter over every dtype, broadcast / 0-d /
empty / transposed operands, their gradients (PyTorch's formulas, quirks included), in-place
forms, errors and meta."""

import numpy as np
import pytest
import torch

import ember
from ops._elementwise import Spec, binary_tests, same_outcome, unary_tests

from helpers import assert_same, check_grads

BINARY = [
    # a float exponent: input * pow(2, other) (pow is a transcendental: assert_same's float
    # tolerance); integer operands give the default float dtype
    # (meta strides: ember's meta result is laid out as its CPU one, as PyTorch's CPU kernel
    # lays it out; PyTorch's meta `pow(2.0, other)` follows other's strides, its CPU one is
    # row-major, so PyTorch's meta `ldexp(b, a.t())` differs from its CPU result)
    Spec("ldexp", ember.ldexp, torch.ldexp, ((-2.0, 2.0), (-6.0, 6.0)), scalars=False,
         extra={"meta_stride": False}),
    # an integer exponent: C's ldexp, exact, in the input's dtype
    Spec("ldexp_int_exponent", lambda a, b: ember.ldexp(a, (b * 3).long()),
         lambda a, b: torch.ldexp(a, (b * 3).long()), inplace=None, scalars=False, fd=False),
    Spec("nextafter", ember.nextafter, torch.nextafter, scalars=False),
]
test_values, test_grad_vs_torch, test_grad_fd, test_inplace, test_meta = binary_tests(BINARY)

UNARY = [
    Spec("frexp_mantissa", lambda x: ember.frexp(x).mantissa, lambda x: torch.frexp(x).mantissa,
         ((-100.0, 100.0),), inplace=None),
    Spec("frexp_exponent", lambda x: ember.frexp(x).exponent, lambda x: torch.frexp(x).exponent,
         ((-100.0, 100.0),), inplace=None, grad=False),
]
(test_frexp_values, test_frexp_grad_vs_torch, test_frexp_grad_fd, _,
 test_frexp_meta) = unary_tests(UNARY)

EDGES = [0.0, -0.0, 1.0, -1.0, 0.75, 3e38, -3e38, 1e-40, -1e-45, 65504.0, 6e-8,
         float("inf"), -float("inf"), float("nan")]
FLOATS = ["float16", "bfloat16", "float32", "float64"]


@pytest.mark.parametrize("dtype", FLOATS)
def test_frexp_of_edge_values_is_torchs(dtype):
    e = ember.tensor(EDGES, dtype=ember.float64).to(getattr(ember, dtype))
    t = torch.tensor(EDGES, dtype=torch.float64).to(getattr(torch, dtype))
    m, x = ember.frexp(e)
    assert type(m) is ember.Tensor and x.dtype is ember.int32
    got, want = ember.frexp(e), torch.frexp(t)
    assert_same(got.mantissa, want.mantissa, 0, 0)
    assert_same(got.exponent, want.exponent)
    assert repr(got).startswith("ember.return_types.frexp(\nmantissa=")


def test_frexp_gradient_divides_by_a_float32_power_of_two_like_torch():
    # 2**997 and 2**-996 are beyond float32: torch's gradient is 0 and inf there
    v = [1e300, 3.0, 1e-300, 0.0, -5.5]
    e = ember.tensor(v, dtype=ember.float64, requires_grad=True)
    t = torch.tensor(v, dtype=torch.float64, requires_grad=True)
    ember.frexp(e).mantissa.sum().backward()
    torch.frexp(t).mantissa.sum().backward()
    assert ember.frexp(e).mantissa.grad_fn.name() == "FrexpBackward0"
    assert_same(e.grad, t.grad)


def test_frexp_refuses_integers_and_writes_out():
    for d in (ember.int64, ember.bool, ember.complex64):
        with pytest.raises(RuntimeError, match=r"frexp\(\) only supports floating-point"):
            ember.frexp(ember.ones(2, dtype=d))
    m, x = ember.empty(0), ember.empty(0, dtype=ember.int32)
    r = ember.frexp(ember.tensor([8.0, 0.25]), out=(m, x))
    assert r.mantissa is m and r.exponent is x
    assert m.tolist() == [0.5, 0.5] and x.tolist() == [4, -1]


@pytest.mark.parametrize("dtype", FLOATS)
def test_ldexp_with_integer_exponents_is_exact_beyond_pow2s_range(dtype):
    # 2**-150 is 0 in float32, yet ldexp(2**100, -150) is 2**-50: C's ldexp, not x * 2**e
    rng = np.random.default_rng(1)
    x = rng.standard_normal(2000)
    k = rng.integers(-170, 140, 2000)
    x[:3], k[:3] = [2.0 ** 100, 3.0, 1.0], [-150, -149, 200]
    e = ember.tensor(x).to(getattr(ember, dtype))
    t = torch.tensor(x).to(getattr(torch, dtype))
    for kd in ("int32", "int64", "int8"):
        ek, tk = ember.tensor(k).to(getattr(ember, kd)), torch.tensor(k).to(getattr(torch, kd))
        assert_same(ember.ldexp(e, ek), torch.ldexp(t, tk), 0, 0)


def test_ldexp_dtypes_follow_torch():
    pairs = [("float32", "float64"), ("float16", "float32"), ("int32", "int32"),
             ("int64", "float64"), ("bool", "bool"), ("float64", "float32"),
             ("bfloat16", "bool"), ("complex64", "float32")]
    for da, db in pairs:
        e = (ember.tensor([1.0, -3.0]).to(getattr(ember, da)),
             ember.tensor([2.0, -1.0]).to(getattr(ember, db)))
        t = (torch.tensor([1.0, -3.0]).to(getattr(torch, da)),
             torch.tensor([2.0, -1.0]).to(getattr(torch, db)))
        same_outcome(ember.ldexp, torch.ldexp, e, t)
    with pytest.raises(TypeError, match="'other' \\(position 2\\) must be Tensor, not int"):
        ember.ldexp(ember.ones(2), 3)


def test_ldexp_gradients_carry_torchs_integer_power_quirk():
    # torch's formula is grad * pow(2, other): an integer `other` makes that an integer power,
    # so a negative exponent gives the input a zero gradient
    e = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    t = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    k = [-1, -2, 3]
    ye, yt = ember.ldexp(e, ember.tensor(k)), torch.ldexp(t, torch.tensor(k))
    assert ye.grad_fn.name() == "LdexpBackward0"
    assert [n is None for n, _ in ye.grad_fn.next_functions] == [False, True]
    ye.sum().backward()
    yt.sum().backward()
    assert_same(e.grad, t.grad)
    assert e.grad.tolist() == [0.0, 0.0, 8.0]
    check_grads(lambda a, b: ember.ldexp(a, b), np.array([1.5, -2.0, 0.3]),
                np.array([0.5, -1.25, 2.0]))


def test_ldexp_in_place():
    for da, db in (("float32", "int64"), ("float64", "float32"), ("float16", "int32"),
                   ("int64", "int64"), ("float32", "float64")):
        e = ember.tensor([1.5, -2.0, 3.0]).to(getattr(ember, da))
        t = torch.tensor([1.5, -2.0, 3.0]).to(getattr(torch, da))
        ek = ember.tensor([2.0, -3.0, 1.0]).to(getattr(ember, db))
        tk = torch.tensor([2.0, -3.0, 1.0]).to(getattr(torch, db))
        got = same_outcome(lambda a, b: a.ldexp_(b), lambda a, b: a.ldexp_(b), (e, ek), (t, tk))
        if got is not None:
            assert got is e


@pytest.mark.parametrize("dtype", FLOATS)
def test_nextafter_of_edge_values_is_torchs(dtype):
    a = EDGES + [1.0, 2.0, 0.0]
    b = [1.0, 1.0, 2.0, 5.0, 0.75, float("inf"), 0.0, 0.0, 1.0, 1e10, 0.0, 0.0, 0.0, 1.0,
         -0.0, float("nan"), -1.0]
    e = [ember.tensor(v, dtype=ember.float64).to(getattr(ember, dtype)) for v in (a, b)]
    t = [torch.tensor(v, dtype=torch.float64).to(getattr(torch, dtype)) for v in (a, b)]
    assert_same(ember.nextafter(*e), torch.nextafter(*t), 0, 0)
    assert_same(ember.nextafter(*e[::-1]), torch.nextafter(*t[::-1]), 0, 0)


def test_nextafter_gradient_and_errors_follow_torch():
    e = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    eo = ember.tensor([0.0, 2.0, 5.0], requires_grad=True)
    y = ember.nextafter(e, eo)
    assert y.grad_fn.name() == "NextafterBackward0"
    y.backward(ember.tensor([1.0, 2.0, 3.0]))
    assert e.grad.tolist() == [1.0, 0.0, 3.0] and eo.grad.tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(TypeError, match="'other' \\(position 2\\) must be Tensor, not float"):
        ember.nextafter(e, 2.0)
    with pytest.raises(NotImplementedError, match="\"nextafter_cpu\" not implemented for 'Long'"):
        ember.nextafter(ember.tensor([1]), ember.tensor([2]))
