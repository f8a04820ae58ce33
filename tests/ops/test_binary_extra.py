"""binary_extra.py against torch: remainder/fmod, atan2/hypot, maximum/minimum/fmax/fmin,
logical and bitwise ops with shifts, gcd/lcm, isclose/allclose/equal: every dtype, broadcast / 0-d /
empty / transposed operands, scalars, gradients, in-place forms and meta."""

import numpy as np
import pytest
import torch

import ember
from ops._elementwise import Spec, binary_tests, make, same_outcome

from helpers import check_op

NONZERO = ((-3.0, 3.0), (0.5, 3.0))
SPECS = [
    Spec("remainder", ember.remainder, torch.remainder, NONZERO),
    Spec("fmod", ember.fmod, torch.fmod, NONZERO),
    Spec("atan2", ember.atan2, torch.atan2, scalars=False),
    Spec("arctan2", ember.arctan2, torch.arctan2, scalars=False),
    Spec("hypot", ember.hypot, torch.hypot, scalars=False),
    Spec("maximum", ember.maximum, torch.maximum, inplace=None, scalars=False),
    Spec("minimum", ember.minimum, torch.minimum, inplace=None, scalars=False),
    Spec("fmax", ember.fmax, torch.fmax, inplace=None, scalars=False),
    Spec("fmin", ember.fmin, torch.fmin, inplace=None, scalars=False),
    Spec("logical_and", ember.logical_and, torch.logical_and, grad=False, scalars=False,
         extra={"meta_stride": False}),
    Spec("logical_or", ember.logical_or, torch.logical_or, grad=False, scalars=False,
         extra={"meta_stride": False}),
    Spec("logical_xor", ember.logical_xor, torch.logical_xor, grad=False, scalars=False,
         extra={"meta_stride": False}),
    Spec("bitwise_and", ember.bitwise_and, torch.bitwise_and, grad=False),
    Spec("bitwise_or", ember.bitwise_or, torch.bitwise_or, grad=False),
    Spec("bitwise_xor", ember.bitwise_xor, torch.bitwise_xor, grad=False),
    Spec("bitwise_left_shift", ember.bitwise_left_shift, torch.bitwise_left_shift,
         ((-8.0, 8.0), (0.0, 5.0)), grad=False),
    Spec("bitwise_right_shift", ember.bitwise_right_shift, torch.bitwise_right_shift,
         ((-8.0, 8.0), (0.0, 5.0)), grad=False),
    Spec("gcd", ember.gcd, torch.gcd, ((-20.0, 20.0), (-12.0, 12.0)), grad=False,
         scalars=False),
    Spec("lcm", ember.lcm, torch.lcm, ((-20.0, 20.0), (-12.0, 12.0)), grad=False,
         scalars=False),
    Spec("isclose", lambda a, b: ember.isclose(a, a + b * 1e-6),
         lambda a, b: torch.isclose(a, a + b * 1e-6), grad=False, inplace=None, scalars=False,
         extra={"meta_stride": False}),
]
test_values, test_grad_vs_torch, test_grad_fd, test_inplace, test_meta = binary_tests(SPECS)


def test_ties_split_the_gradient_like_torch():
    a = np.array([1.0, 2.0, 3.0, np.nan, 5.0])
    b = np.array([1.0, 3.0, 2.0, 4.0, np.nan])
    for name in ("maximum", "minimum", "fmax", "fmin"):
        check_op(getattr(ember, name), getattr(torch, name), a, b)


def test_nan_propagation():
    a = [1.0, float("nan"), float("nan"), 2.0]
    b = [float("nan"), 1.0, float("nan"), 3.0]
    for name in ("maximum", "minimum", "fmax", "fmin", "hypot", "atan2", "remainder", "fmod"):
        same_outcome(getattr(ember, name), getattr(torch, name),
                     (ember.tensor(a), ember.tensor(b)), (torch.tensor(a), torch.tensor(b)))


SHIFT_COUNTS = [-1, 0, 1, 7, 8, 15, 31, 63, 64, 70]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("n", [4, 20], ids=["short", "vectorised"])
def test_a_zero_remainder_keeps_the_dividends_sign_like_torch(dtype, n):
    """PyTorch's remainder is fmod adjusted by the divisor: a zero result is fmod's, with the
    dividend's sign (3 % -1 is +0.0, -3 % 1 is -0.0), on its scalar and vectorised paths."""
    a = ([3.0, -3.0, 0.0, -0.0, 2.0, -2.0, 5.5, -5.5] * 3)[:n]
    b = ([-1.0, 1.0, -1.0, 1.0, 2.0, 2.0, -5.5, 5.5] * 3)[:n]
    for call in (lambda m: m.remainder(m.tensor(a, dtype=getattr(m, dtype)),
                                       m.tensor(b, dtype=getattr(m, dtype))),
                 lambda m: m.tensor(a, dtype=getattr(m, dtype)) % -1.0,
                 lambda m: 3.0 % m.tensor(b, dtype=getattr(m, dtype))):
        got, want = call(ember), call(torch)
        # exact, signs included: the zeros are what differs
        assert np.array_equal(np.signbit(got.float().numpy()), np.signbit(want.float().numpy()))
        assert got.tolist() == want.tolist()


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
def test_shifts_by_out_of_range_counts_follow_torch(dtype):
    values = [1, -1, 5, -7, 100, 0]
    t = torch.tensor(values).to(getattr(torch, dtype))
    e = ember.tensor(values).to(getattr(ember, dtype))
    for k in SHIFT_COUNTS:
        for op in (lambda x, s: x << s, lambda x, s: x >> s):
            same_outcome(op, op, (e, k), (t, k))
        kt, ke = torch.full((6,), k, dtype=t.dtype), ember.full((6,), k, dtype=e.dtype)
        same_outcome(ember.bitwise_right_shift, torch.bitwise_right_shift, (e, ke), (t, kt))


def test_isclose_options_and_errors():
    a = [1.0, float("nan"), float("inf"), -float("inf"), 1.0 + 1e-9, 0.0]
    b = [1.0, float("nan"), float("inf"), float("inf"), 1.0, 1e-9]
    ea, eb, ta, tb = ember.tensor(a), ember.tensor(b), torch.tensor(a), torch.tensor(b)
    for kw in ({}, {"equal_nan": True}, {"rtol": 0, "atol": 0}, {"atol": 1e-8, "rtol": 0},
               {"rtol": -1.0}, {"atol": -1.0}):
        for fe, ft in ((ember.isclose, torch.isclose), (ember.allclose, torch.allclose)):
            same_outcome(lambda x, y, f=fe, k=kw: f(x, y, **k),
                         lambda x, y, f=ft, k=kw: f(x, y, **k), (ea, eb), (ta, tb))
    # Mismatched dtypes are refused; integers compare in floating point.
    same_outcome(ember.isclose, torch.isclose, (ember.tensor([1, 2]), ember.tensor([1.0, 2.0])),
                 (torch.tensor([1, 2]), torch.tensor([1.0, 2.0])))
    same_outcome(ember.isclose, torch.isclose, (ember.tensor([100, 2]), ember.tensor([101, 2])),
                 (torch.tensor([100, 2]), torch.tensor([101, 2])))


def test_equal_compares_shapes_and_values():
    cases = [([1, 2], [1, 2]), ([1, 2], [1.0, 2.0]), ([1, 2], [1, 3]), ([1, 2], [1]),
             ([float("nan")], [float("nan")]), ([[1, 2]], [1, 2])]
    for a, b in cases:
        same_outcome(ember.equal, torch.equal, (ember.tensor(a), ember.tensor(b)),
                     (torch.tensor(a), torch.tensor(b)))


@pytest.mark.parametrize("name", ["fmod", "atan2", "hypot", "maximum", "logical_and", "isclose"])
def test_number_where_a_tensor_is_required_raises_type_error(name):
    e, t = make((3,), ember.float32)
    same_outcome(getattr(ember, name), getattr(torch, name), (2.0, e), (2.0, t))
    if name != "fmod":
        same_outcome(getattr(ember, name), getattr(torch, name), (e, 2.0), (t, 2.0))


def test_grad_fn_names_match_torch():
    for name in ("remainder", "fmod", "atan2", "hypot", "maximum", "minimum", "fmax", "fmin"):
        e = ember.tensor([0.5, 1.5], requires_grad=True)
        t = torch.tensor([0.5, 1.5], requires_grad=True)
        ye = getattr(ember, name)(e, ember.tensor([1.0, 1.0]))
        yt = getattr(torch, name)(t, torch.tensor([1.0, 1.0]))
        assert type(ye.grad_fn).__name__ == type(yt.grad_fn).__name__, name


# --- found by the differential fuzzer (python -m fuzz) -----------------------------------

def test_fmod_and_remainder_in_place_take_a_number_on_bfloat16():
    from helpers import same_result

    for op in ("fmod_", "remainder_"):
        same_result(lambda L, op=op: getattr(L.tensor([-2.25, 1.5], dtype=L.bfloat16), op)(0.5))


@pytest.mark.parametrize("call", [
    # the result type (float) can't be cast into the int tensor: checked before the kernel
    lambda L: L.ones(4, 2, dtype=L.int32).bitwise_and_(1.5),
    lambda L: L.ones(3, dtype=L.uint8).bitwise_or_(L.ones(3, dtype=L.float16)),
    # the broadcast shape is checked before the dtype
    lambda L: L.ones((), dtype=L.uint8).hypot_(L.ones(3, dtype=L.uint8)),
    lambda L: L.ones(4, 3, dtype=L.bool).hypot_(L.ones(1, 4, 3, dtype=L.bool)),
    # hypot_ takes a tensor only
    lambda L: L.ones(1, 3, dtype=L.uint8).hypot_(1.5),
])
def test_in_place_checks_come_in_pytorchs_order(call):
    from helpers import same_error

    same_error(call)


@pytest.mark.parametrize("f", [lambda m, a: 3 % a, lambda m, a: m.remainder(3.5, a)],
                         ids=["3%a", "remainder(3.5,a)"])
def test_a_number_modulo_a_tensor_has_no_derivative_like_torch(f):
    """`number % tensor` (PyTorch's remainder.Scalar_Tensor) records a NotImplemented node
    with one edge, and its backward raises PyTorch's error."""
    seen = []
    for m in (ember, torch):
        a = m.tensor([1.5, 2.0, 4.0], requires_grad=True)
        y = f(m, a)
        seen.append((type(y.grad_fn).__name__,
                     [type(n).__name__ for n, _ in y.grad_fn.next_functions],
                     y.detach().numpy().tolist()))
        with pytest.raises(RuntimeError, match="derivative for aten::remainder is not "
                                               "implemented"):
            y.sum().backward()
    assert seen[0] == seen[1]
    with pytest.raises(NotImplementedError, match="forward AD with aten::remainder"):
        ember.func.jvp(lambda v: 3 % v, (ember.ones(2),), (ember.ones(2),))


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
def test_gcd_lcm_at_the_ends_of_the_range_wrap_like_torch(dtype):
    # |INT_MIN| is INT_MIN in C, so gcd(INT_MIN, 0) stays negative; lcm overflows and wraps
    # (in the operands' type from 32 bits up, in C's int below). Pairs whose gcd is -1 are
    # left out: torch's lcm then divides INT_MIN by -1, which traps.
    info = np.iinfo(dtype)
    rng = np.random.default_rng(0)
    a = rng.integers(info.min, info.max, 3000, endpoint=True).astype(dtype)
    b = rng.integers(info.min, info.max, 3000, endpoint=True).astype(dtype)
    a[:40] = info.min
    b[:10] = 0
    b[10:40] = np.arange(30).astype(dtype)
    keep = ember.gcd(ember.tensor(a), ember.tensor(b)).numpy() != -1
    a, b = a[keep], b[keep]
    for name in ("gcd", "lcm"):
        got = getattr(ember, name)(ember.tensor(a), ember.tensor(b))
        want = getattr(torch, name)(torch.tensor(a), torch.tensor(b))
        assert got.dtype is getattr(ember, dtype)
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_gcd_lcm_promote_and_refuse_like_torch():
    e8, t8 = ember.tensor([12, -18, 0], dtype=ember.int8), torch.tensor([12, -18, 0],
                                                                          dtype=torch.int8)
    eu, tu = ember.tensor([8, 6, 0], dtype=ember.uint8), torch.tensor([8, 6, 0],
                                                                        dtype=torch.uint8)
    for name in ("gcd", "lcm"):
        same_outcome(getattr(ember, name), getattr(torch, name), (e8, eu), (t8, tu))  # int16
        with pytest.raises(TypeError, match="must be Tensor, not int"):
            getattr(ember, name)(e8, 3)
        with pytest.raises(NotImplementedError, match=f'"{name}_cpu" not implemented for'):
            getattr(ember, name)(ember.tensor([True]), ember.tensor([False]))
    x = ember.tensor([4, 6], dtype=ember.int32)
    assert x.gcd_(ember.tensor([6, 4])) is x  # int64 other, written back into int32
    assert x.tolist() == [2, 2] and x.dtype is ember.int32
