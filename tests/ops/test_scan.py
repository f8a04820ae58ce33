"""Scans against PyTorch: cumsum, cumprod, cummax, cummin, logcumsumexp (and cumsum_ /
cumprod_). Gradients include cumprod's zeros and cummax's repeated indices."""

import numpy as np
import pytest
import torch

import ember
from op_oracle import array, check_double, meta_same, oracle, raises_like

from helpers import DTYPE_PAIRS, assert_same, check_grads, check_op, same_message, same_result

ALL_DTYPES = [e for e, _ in DTYPE_PAIRS]


def ns(x):
    return ember if isinstance(x, ember.Tensor) else torch


CALLS = {
    "cumsum": lambda x: x.cumsum(1),
    "cumsum_fn": lambda x: ns(x).cumsum(x, dim=0),
    "cumprod": lambda x: x.cumprod(-1),
    "cummax": lambda x: x.cummax(1),
    "cummin": lambda x: ns(x).cummin(x, 0),
    "logcumsumexp": lambda x: x.logcumsumexp(1),
}


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("call", CALLS, ids=str)
def test_every_dtype_matches_torch(call, dtype):
    # Integer data from [-2, 2) has zeros and ties, which exercise cummax's indices.
    oracle(CALLS[call], array((3, 4), dtype), grad=dtype in (ember.float32, ember.float64))


@pytest.mark.parametrize("shape,dim", [((), 0), ((), -1), ((6,), 0), ((2, 3, 4), 1),
                                       ((2, 3, 4), -1), ((0, 3), 0), ((0, 3), 1)])
@pytest.mark.parametrize("op", ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"])
def test_shapes_and_dims(op, shape, dim):
    oracle(lambda x: getattr(x, op)(dim), array(shape, ember.float64))


@pytest.mark.parametrize("op", ["cumsum", "cumprod", "cummax", "logcumsumexp"])
def test_non_contiguous_inputs_give_contiguous_results(op):
    a = array((3, 4, 5))
    fn = (lambda x: getattr(x.permute(2, 0, 1), op)(1))
    check_op(fn, fn, a, check_stride=True)
    oracle(lambda x: getattr(x.transpose(0, 2)[:, ::2], op)(0), a)


def test_dtype_argument():
    for name in ("float64", "int32", "float16"):
        oracle(lambda x, n=name: x.cumsum(0, dtype=getattr(ns(x), n)), array((3, 4)),
               grad=False)
        oracle(lambda x, n=name: x.cumprod(1, dtype=getattr(ns(x), n)),
               array((3, 4), ember.int16), grad=False)


def test_low_precision_accumulates_in_float32():
    ones = np.ones(5000, np.float16)
    check_op(lambda x: x.cumsum(0), lambda x: x.cumsum(0), ones, grad=False, rtol=0, atol=0)


def test_cumsum_backward_is_a_reverse_cumsum_and_exact():
    # Exact on integers-valued floats: the reverse scan adds no cancellation error.
    g = ember.tensor([1.0, 2.0, 3.0, 4.0])
    x = ember.zeros(4, requires_grad=True)
    x.cumsum(0).backward(g)
    assert x.grad.tolist() == [10.0, 9.0, 7.0, 4.0]


def test_in_place_variants():
    a = array((3, 4))
    for op in ("cumsum_", "cumprod_"):
        e, t = ember.tensor(a), torch.tensor(a)
        assert getattr(e, op)(1) is e
        getattr(t, op)(1)
        assert_same(e, t)
    e, t = ember.tensor(a).t(), torch.tensor(a).t()
    e.cumsum_(0)
    t.cumsum_(0)
    assert_same(e, t)


def test_nan_and_ties_take_the_latest_index():
    nan = np.nan
    a = np.array([[1.0, nan, 0.0, 2.0], [3.0, 1.0, 3.0, 3.0], [nan, 1.0, nan, 0.0]])
    for fn in (lambda x: x.cummax(1), lambda x: x.cummin(1), lambda x: x.cumsum(1),
               lambda x: x.logcumsumexp(1)):
        oracle(fn, a, grad=False)
    oracle(lambda x: x.cummax(1), a[1:2])


def test_logcumsumexp_stable_on_large_and_infinite_inputs():
    a = np.array([[1000.0, 1001.0, -1000.0], [-np.inf, -np.inf, 0.0], [-np.inf, 5.0, -np.inf]])
    out, _ = oracle(lambda x: x.logcumsumexp(1), a[:1])
    assert np.isfinite(out.detach().numpy()).all()
    oracle(lambda x: x.logcumsumexp(1), a, grad=False)


def test_logcumsumexp_complex():
    a = array((2, 4), ember.complex128, low=-1, high=1)
    oracle(lambda x: x.logcumsumexp(1), a, grad=False)
    cot = array((2, 4), ember.complex128, seed=1)
    e, t = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    (e.logcumsumexp(1) * ember.tensor(cot)).sum().real.backward()
    (t.logcumsumexp(1) * torch.tensor(cot)).sum().real.backward()
    np.testing.assert_allclose(e.grad.numpy(), t.grad.resolve_conj().numpy(), rtol=1e-10)


def test_logcumsumexp_carries_float32_in_float64_as_torch():
    # PyTorch's CPU kernel keeps the running value in float64 for float32 (complex128 for
    # complex64) and rounds each output from it; a float32 carry drifts several ulps over a
    # long scan. Tolerance: one float32 ulp, for exp / log1p in float64 rounding apart.
    a = np.random.default_rng(0).standard_normal((3, 2000)).astype(np.float32) * 3
    want = torch.tensor(a).logcumsumexp(1).numpy()
    for dim_first in (False, True):  # along the last dim, and along a strided one
        x = ember.tensor(a.T.copy()).T if dim_first else ember.tensor(a)
        got = x.logcumsumexp(1).numpy()
        np.testing.assert_array_max_ulp(got, want, maxulp=1)
    rev = ember.tensor(a).flip(1).logcumsumexp(1).flip(1).numpy()
    np.testing.assert_array_max_ulp(rev, torch.tensor(a).flip(1).logcumsumexp(1).flip(1).numpy(),
                                    maxulp=1)


@pytest.mark.parametrize("low", ["float16", "bfloat16"])
def test_logcumsumexp_carries_half_types_in_float32_as_torch(low):
    # (float16 / bfloat16 carry in float32, not float64: a float64 carry rounds some
    # outputs the other way; the float32 steps are exact enough to compare bit for bit)
    a = np.random.default_rng(2).standard_normal((2, 3000)).astype(np.float32)
    got = ember.tensor(a).to(getattr(ember, low)).logcumsumexp(1).float().numpy()
    want = torch.tensor(a).to(getattr(torch, low)).logcumsumexp(1).float().numpy()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("vals", [
    [1 + 1j, 2 - 3j, 0.5 + 3j, -1 - 2j],  # imaginary parts leave (-pi, pi]: kept unwrapped
    [complex("-inf"), 1 + 2j, complex("inf"), complex("inf") + 1j],
    [1 + 1j, complex("nan"), 2 + 0j],  # a NaN makes every later output NaN + NaN j
    [complex(1, float("nan")), 1 + 0j],
    [complex("-inf"), complex("-inf")],
])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_logcumsumexp_complex_runs_the_log_add_exp_recurrence(vals, dtype):
    a = np.array(vals, dtype)
    got = ember.tensor(a).logcumsumexp(0).numpy()
    want = torch.tensor(a).logcumsumexp(0).numpy()
    # (complex128: torch's log1p and NumPy's differ in the last bit)
    np.testing.assert_allclose(got, want, rtol=4 * np.finfo(dtype).eps, equal_nan=True)


def test_logcumsumexp_complex_long_scan_unwrapped():
    rng = np.random.default_rng(1)
    a = (rng.standard_normal((2, 300)) + 1j * rng.standard_normal((2, 300)) * 3)
    # complex64 is rounded from a complex128 carry; complex128's carry takes a last-bit
    # difference of log1p at some steps, which adds up over 300 steps (a few 1e-15).
    for dtype, rtol in ((np.complex64, 8 * np.finfo(np.complex64).eps), (np.complex128, 1e-13)):
        got = ember.tensor(a.astype(dtype)).logcumsumexp(1).numpy()
        want = torch.tensor(a.astype(dtype)).logcumsumexp(1).numpy()
        np.testing.assert_allclose(got, want, rtol=rtol)


# --- gradients -------------------------------------------------------------------------

@pytest.mark.parametrize("zeros", [[], [(0, 1)], [(0, 1), (0, 3)], [(1, 0), (2, 4)],
                                   [(2, 0), (2, 1), (2, 2)]])
def test_cumprod_gradient_with_zeros(zeros):
    a = array((3, 5), ember.float64, seed=4)
    for i, j in zeros:
        a[i, j] = 0.0
    for dim in (0, 1):
        oracle(lambda x, d=dim: x.cumprod(d), a)
        check_grads(lambda x, d=dim: x.cumprod(d), a)


def test_cumprod_gradient_complex():
    a = array((2, 4), ember.complex128)
    oracle(lambda x: x.cumprod(1), a)
    a[0, 1] = 0
    oracle(lambda x: x.cumprod(1), a)


def test_finite_differences():
    a = array((3, 5), ember.float64, seed=6)
    for fn in (lambda x: x.cumsum(1) ** 2, lambda x: x.cummax(1).values * x,
               lambda x: x.cummin(0).values, lambda x: x.logcumsumexp(1) * x.cos(),
               lambda x: x.logcumsumexp(0).sin()):
        check_grads(fn, a)


def test_cummax_gradient_accumulates_on_repeated_indices():
    a = np.array([[3.0, 1.0, 2.0, 5.0, 4.0]])
    oracle(lambda x: x.cummax(1), a)
    oracle(lambda x: x.cummin(1), a)


@pytest.mark.parametrize("fn", [
    lambda x: x.cumsum(1) ** 2, lambda x: x.cumprod(1), lambda x: x.cumprod(0) * x,
    lambda x: x.logcumsumexp(1), lambda x: x.logcumsumexp(0) * x,
    lambda x: x.cummax(1).values ** 2,
])
def test_second_derivatives_match_torch(fn):
    check_double(fn, array((3, 4), ember.float64, seed=7))


@pytest.mark.parametrize("zeros", [[(0, 2)], [(0, 1), (0, 3)], [(1, 0), (1, 1), (0, 3)]])
def test_cumprod_second_derivative_with_zeros(zeros):
    a = array((2, 4), ember.float64, seed=8)
    for i, j in zeros:
        a[i, j] = 0.0
    check_double(lambda x: x.cumprod(1), a)
    check_double(lambda x: x.cumprod(0) * x, a)


def test_grad_fn_names():
    e, t = ember.rand(2, 3, requires_grad=True), torch.rand(2, 3, requires_grad=True)
    for fn in (lambda x: x.cumsum(0), lambda x: x.cumprod(1), lambda x: x.cummax(0)[0],
               lambda x: x.cummin(0)[0], lambda x: x.logcumsumexp(1)):
        assert type(fn(e).grad_fn).__name__ == type(fn(t).grad_fn).__name__


# --- named tuples, out=, errors, meta ---------------------------------------------------

def test_named_tuples_and_out():
    x = ember.tensor(array((3, 4)))
    r = x.cummax(1)
    assert type(r).__name__ == "cummax" and r.values is r[0] and r.indices is r[1]
    assert type(x.cummin(0)).__name__ == "cummin"
    vals, idx = ember.empty(3, 4), ember.empty(3, 4, dtype=ember.int64)
    ember.cummax(x, 1, out=(vals, idx))
    assert_same(idx, torch.tensor(x.numpy()).cummax(1).indices)
    out = ember.empty(3, 4)
    assert ember.cumsum(x, 0, out=out) is out
    assert_same(out, torch.tensor(x.numpy()).cumsum(0))


@pytest.mark.parametrize("call", [
    lambda x: x.cumsum(2), lambda x: x.cumprod(-3), lambda x: x.cummax(5),
    lambda x: x.logcumsumexp(2), lambda x: x.cumsum((0, 1)), lambda x: x.cumsum(),
])
def test_bad_arguments_raise_like_torch(call):
    raises_like(call, array((3, 4)))


@pytest.mark.parametrize("call", [
    lambda x: x.cumsum(1), lambda x: x.cumprod(0), lambda x: x.cummax(1),
    lambda x: x.cummin(0), lambda x: x.logcumsumexp(-1),
    lambda x: x.cumsum(0, dtype=ns(x).float64),
])
@pytest.mark.parametrize("transpose", [False, True])
def test_meta_shapes_dtypes_strides(call, transpose):
    meta_same(call, (2, 3, 4), transpose=transpose)


def test_meta_integer_inputs_accumulate_in_int64():
    meta_same(lambda x: x.cumsum(0), (2, 3), ember.int8)
    meta_same(lambda x: x.cumprod(1), (2, 3), ember.bool)



# --- the dtype a scan runs in: dtype=, out='s, bool, in place ------------------------------
# NOTE: PyTorch casts the input to `out`'s dtype and scans in it (floats into a long `out`
# are truncated first), has no bool kernel (0-d and empty inputs return before it), and
# lets an in-place scan keep only its own dtype.

def _op(ns, op, x, *args, **kw):
    return getattr(ns, op)(x, *args, **kw)


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("call,kind", [
    (lambda ns, op: _op(ns, op, ns.tensor([True, False, True]), 0, dtype=ns.bool),
     NotImplementedError),
    (lambda ns, op: getattr(ns.tensor([1, 0, 2]), op)(0, dtype=ns.bool), NotImplementedError),
    (lambda ns, op: _op(ns, op, ns.tensor([1, 0, 2]), 0, out=ns.empty(3, dtype=ns.bool)),
     NotImplementedError),
    (lambda ns, op: getattr(ns.tensor([True, False]).clone(), op + "_")(0), NotImplementedError),
    (lambda ns, op: getattr(ns.tensor([[True], [False]]), op)(1, dtype=ns.bool),
     NotImplementedError),
    (lambda ns, op: getattr(ns.tensor([100, 100], dtype=ns.int8), op + "_")(0, dtype=ns.int64),
     RuntimeError),
    (lambda ns, op: _op(ns, op, ns.tensor([1, 2]), 0, dtype=ns.float32,
                        out=ns.empty(2, dtype=ns.int64)), RuntimeError),
], ids=["bool-dtype", "int-to-bool", "out-bool", "inplace-bool", "2d-bool",
        "inplace-other-dtype", "dtype-vs-out"])
def test_scan_dtype_refusals_like_torch(op, call, kind):
    same_message(lambda ns: call(ns, op), kind)


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("call", [
    lambda ns, op: getattr(ns.tensor(True), op)(0, dtype=ns.bool),
    lambda ns, op: getattr(ns.tensor([], dtype=ns.bool), op)(0, dtype=ns.bool),
    lambda ns, op: getattr(ns.tensor([100, 100], dtype=ns.int8), op + "_")(0, dtype=ns.int8),
    lambda ns, op: _op(ns, op, ns.tensor([0.6, 1.7, 2.9]), 0, out=ns.empty(3, dtype=ns.int64)),
    lambda ns, op: _op(ns, op, ns.tensor([200, 100], dtype=ns.uint8), 0,
                       out=ns.empty(2, dtype=ns.int16)),
    lambda ns, op: _op(ns, op, ns.tensor([100, 100, 3]), 0, out=ns.empty(3, dtype=ns.int8)),
    lambda ns, op: _op(ns, op, ns.full((300,), 1.001), 0, out=ns.empty(300, dtype=ns.float16)),
], ids=["0d-bool", "empty-bool", "inplace-same-dtype", "float-into-long-out",
        "uint8-into-int16-out", "long-into-int8-out", "into-half-out"])
def test_scan_runs_in_dtype_or_out_dtype_like_torch(op, call):
    same_result(lambda ns: call(ns, op))


# --- argument checks (PyTorch's parser words) ------------------------------------------

_SCAN_CALLS = {
    "cumsum": lambda L, *a, **k: L.cumsum(L.ones(3), *a, **k),
    "cumsum method": lambda L, *a, **k: L.ones(3).cumsum(*a, **k),
    "cumsum_": lambda L, *a, **k: L.ones(3).cumsum_(*a, **k),
    "cumprod": lambda L, *a, **k: L.cumprod(L.ones(3), *a, **k),
    "cumprod_": lambda L, *a, **k: L.ones(3).cumprod_(*a, **k),
    "logcumsumexp": lambda L, *a, **k: L.logcumsumexp(L.ones(3), *a, **k),
    "logcumsumexp method": lambda L, *a, **k: L.ones(3).logcumsumexp(*a, **k),
    "cummax": lambda L, *a, **k: L.cummax(L.ones(3), *a, **k),
    "cummin method": lambda L, *a, **k: L.ones(3).cummin(*a, **k),
}


@pytest.mark.parametrize("call", _SCAN_CALLS)
@pytest.mark.parametrize("dim", [None, 0.0, 0.5, True, "a", (0,), [0],
                                 lambda L: L.tensor(0.0), lambda L: L.tensor([0])])
def test_scan_dim_that_is_no_int_is_refused_as_torch(call, dim):
    # a float, bool, str, sequence or non-integer tensor is no `dim`; the parser numbers
    # it as the call's positional argument (1 for the method, 2 for the function)
    fn = _SCAN_CALLS[call]
    same_message(lambda L: fn(L, dim(L) if callable(dim) else dim), TypeError)


@pytest.mark.parametrize("call", _SCAN_CALLS)
def test_scan_without_dim_and_with_integer_like_dims(call):
    fn = _SCAN_CALLS[call]
    same_message(lambda L: fn(L), TypeError)  # 'missing 1 required positional arguments'
    for dim in (np.int64(0), -1):
        assert_same(fn(ember, dim), fn(torch, dim))
    assert_same(fn(ember, ember.tensor(0)), fn(torch, torch.tensor(0)))


@pytest.mark.parametrize("call", ["cumsum", "cumsum method", "cumprod", "cumsum_"])
@pytest.mark.parametrize("dtype", ["float", 3])
def test_scan_dtype_that_is_no_dtype_is_refused_as_torch(call, dtype):
    msgs = []
    for L in (ember, torch):
        with pytest.raises(TypeError) as info:
            _SCAN_CALLS[call](L, 0, dtype=dtype)
        msgs.append(str(info.value).replace(f"{L.__name__}.dtype", "<lib>.dtype"))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("call", ["cumsum", "cumprod", "logcumsumexp"])
def test_scan_out_that_is_no_tensor_and_unknown_keywords(call):
    same_message(lambda L: _SCAN_CALLS[call](L, 0, out=3), TypeError)
    same_message(lambda L: _SCAN_CALLS[call](L, 0, foo=1), TypeError)
    same_message(lambda L: L.ones(3).cumsum(0, foo=1), TypeError)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cum_extreme_value_is_the_element_at_its_index(dtype, name):
    # of tied -0.0 and 0.0 torch keeps the latest, value and index together (float16 too)
    x = np.array([0.0, -0.0, 0.5, -0.0, 0.0, np.nan, -0.0, 1.0, -0.5, -0.0], np.float32)
    x = np.stack([x, x[::-1] * -1])
    for dim in (0, 1):
        e = getattr(ember, name)(ember.tensor(x).to(getattr(ember, dtype)), dim)
        t = getattr(torch, name)(torch.tensor(x).to(getattr(torch, dtype)), dim)
        assert e.indices.tolist() == t.indices.tolist()
        assert str(e.values.tolist()) == str(t.values.tolist())


@pytest.mark.parametrize("out", ["tensor", "int", "one"])
@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cum_extreme_out_must_be_a_pair(name, out):
    def call(L):
        o = {"tensor": L.empty(0), "int": 3, "one": (L.empty(0),)}[out]
        return getattr(L, name)(L.ones(2, 3), 1, out=o)

    same_message(call, TypeError)
