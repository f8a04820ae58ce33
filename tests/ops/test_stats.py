"""Statistics against PyTorch: var, std, var_mean, std_mean, norm, median, nanmedian, mode,
quantile, nanquantile. Order statistics send their gradient to the chosen elements."""

import math
import warnings

import numpy as np
import pytest
import torch

import ember
from op_oracle import array, check_double, meta_same, oracle, raises_like

from helpers import DTYPE_PAIRS, assert_same, check_grads, same_message

ALL_DTYPES = [e for e, _ in DTYPE_PAIRS]


def ns(x):
    return ember if isinstance(x, ember.Tensor) else torch


CALLS = {
    "var": lambda x: x.var(),
    "var_dim": lambda x: x.var(1, keepdim=True),
    "std": lambda x: x.std(0),
    "var_mean": lambda x: ns(x).var_mean(x, 1),
    "std_mean": lambda x: ns(x).std_mean(x),
    "norm": lambda x: x.norm(),
    "norm_1_dim": lambda x: x.norm(1, dim=1),
    "median": lambda x: x.median(),
    "median_dim": lambda x: x.median(1),
    "nanmedian_dim": lambda x: x.nanmedian(0),
    "mode": lambda x: x.mode(1),
    "quantile": lambda x: x.quantile(0.3),
    "nanquantile_dim": lambda x: x.nanquantile(0.6, dim=1),
}


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("call", CALLS, ids=str)
def test_every_dtype_matches_torch(call, dtype):
    data = array((3, 4), dtype)
    if call in ("median", "median_dim", "nanmedian_dim", "mode") and dtype.is_floating_point:
        data = array((3, 4), dtype, low=-100, high=100)  # no low-precision ties
    oracle(CALLS[call], data, grad=dtype in (ember.float32, ember.float64))


# --- var / std ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(), (5,), (2, 3, 4)], ids=str)
@pytest.mark.parametrize("call", [
    lambda x: x.var(), lambda x: x.std(-1), lambda x: x.var((0, -1), keepdim=True),
    lambda x: x.var(correction=0), lambda x: x.std(0, correction=2),
    lambda x: x.var(0, False), lambda x: x.std(False), lambda x: x.var(unbiased=True),
    lambda x: x.std(dim=None, keepdim=True),
    lambda x: ns(x).var_mean(x, 0, keepdim=True), lambda x: ns(x).std_mean(x, correction=0),
])
def test_var_std_forms(call, shape):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zero degrees of freedom on tiny shapes
        oracle(call, array(shape, ember.float64))


def test_var_std_non_contiguous_and_complex():
    oracle(lambda x: x.transpose(0, 2)[:, ::2].var(1), array((3, 4, 5)))
    oracle(lambda x: x.permute(2, 0, 1).std((1, 2)), array((3, 4, 5)))
    oracle(lambda x: x.var(1), array((3, 4), ember.complex128))
    oracle(lambda x: x.std(), array((3, 4), ember.complex64))


def test_zero_degrees_of_freedom_warns_like_torch():
    a = array((3, 4))
    for fn in (lambda x: x.var(0, correction=3), lambda x: x.std(1, correction=5),
               lambda x: x[:1].var(0)):
        with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
            oracle(fn, a, grad=False)


def test_std_gradient_is_zero_where_std_is_zero():
    a = np.array([[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]])
    oracle(lambda x: x.std(1), a)
    check_double(lambda x: x.std(1), a[1:])


def test_var_low_precision():
    a = array((4, 64), ember.float16)
    oracle(lambda x: x.var(1), a, grad=False, rtol=2e-3)
    oracle(lambda x: x.std(1), array((4, 64), ember.bfloat16), grad=False, rtol=1e-2)


# --- norm ----------------------------------------------------------------------------

@pytest.mark.parametrize("p", [2, 1, 3, 0.5, 1.5, 0, float("inf"), float("-inf"), -1, "fro",
                               None])
@pytest.mark.parametrize("dim", [None, 1, (0, 1), -1])
def test_norm_orders_and_dims(p, dim):
    oracle(lambda x: x.norm(p, dim), array((3, 4), ember.float64))


def test_norm_keepdim_dtype_complex_and_3d():
    a = array((2, 3, 4), ember.float64)
    oracle(lambda x: x.norm(dim=(0, 2), keepdim=True), a)
    oracle(lambda x: ns(x).norm(x, 3, dim=1, keepdim=True), a)
    oracle(lambda x: x.norm(dtype=ns(x).float64), array((3, 4)))
    oracle(lambda x: x.norm(), array((3, 4), ember.complex128))
    oracle(lambda x: x.norm(1, 0), array((3, 4), ember.complex64))
    oracle(lambda x: x.norm(float("inf"), 1), array((3, 4), ember.complex128))
    oracle(lambda x: x.norm(), array((), ember.float64))
    oracle(lambda x: x.transpose(0, 2).norm(3, 0), a)


def test_nuclear_norm():
    oracle(lambda x: x.norm("nuc"), array((3, 4), ember.float64))
    oracle(lambda x: x.norm("nuc", dim=(0, 2), keepdim=True), array((3, 2, 4), ember.float64))


def test_norm_gradient_at_zero_matches_torch():
    a = np.zeros((2, 3))
    a[1] = [0.0, 1.0, -2.0]
    for p in (2, 1, 3, 0.5, 1.5, float("inf"), 0):
        oracle(lambda x, p=p: x.norm(p, 1), a)


def test_norm_gradient_of_a_zero_vector_keeps_no_negative_zero():
    # the 2-norm's gradient at a zero vector is +0.0 everywhere, even for a -0.0 element
    # (torch masks after the product); the 3-norm's keeps the element's sign, as torch's
    for p in (2.0, 3.0):
        x = torch.tensor([0.0, -0.0, 0.0], dtype=torch.float64, requires_grad=True)
        e = ember.tensor([0.0, -0.0, 0.0], dtype=ember.float64, requires_grad=True)
        want = torch.autograd.grad(torch.linalg.vector_norm(x, p), x)[0]
        got = ember.autograd.grad(ember.linalg.vector_norm(e, p), e)[0]
        assert np.signbit(got.numpy()).tolist() == np.signbit(want.numpy()).tolist()


def test_norm_ties_share_the_inf_gradient():
    oracle(lambda x: x.norm(float("inf"), 1), np.array([[1.0, -3.0, 3.0], [2.0, 2.0, 2.0]]))


@pytest.mark.parametrize("call", [
    lambda x: x.norm(p="nuc", dim=0), lambda x: x.norm(p="fro", dim=(0, 1, 1)),
    lambda x: x.norm(p="foo"), lambda x: x[0].norm(p="nuc"), lambda x: x.half().norm("nuc"),
    lambda x: x.long().norm(), lambda x: x.norm(dtype=ns(x).float16),
    lambda x: x.norm(dtype=ns(x).int64), lambda x: x.norm(3, 2),
    lambda x: x[:0].norm(float("inf")), lambda x: x[:0].norm(float("inf"), 0),
])
def test_norm_errors(call):
    raises_like(call, array((3, 4)))


def test_norm_of_empty():
    for fn in (lambda x: x.norm(), lambda x: x.norm(dim=0), lambda x: x.norm(float("-inf"), 1),
               lambda x: x.norm(0)):
        oracle(fn, np.zeros((0, 3)))


# --- median / nanmedian / mode ------------------------------------------------------------

def test_median_ties_and_indices():
    a = np.array([[1, 2, 2, 1, 3, 3], [5, 5, 5, 4, 4, 4], [0, 0, 0, 0, 0, 0], [1, 2, 3, 4, 5, 6]])
    for fn in (lambda x: x.median(1), lambda x: x.median(), lambda x: x.mode(1),
               lambda x: x.mode(0), lambda x: x.median(0, keepdim=True)):
        oracle(fn, a)
        oracle(fn, a.astype(np.float64))


def test_median_and_nanmedian_with_nan():
    nan = np.nan
    a = np.array([[1.0, nan, 0.0], [nan, nan, 2.0], [3.0, 1.0, 2.0], [nan, nan, nan]])
    for fn in (lambda x: x.median(1), lambda x: x.nanmedian(1), lambda x: x.median(),
               lambda x: x.nanmedian(), lambda x: x[:3].nanmedian(0)):
        oracle(fn, a)


def test_nanmedian_index_of_an_all_nan_slice():
    # PyTorch's nth_element finds every NaN equivalent: the index libstdc++ leaves at the
    # front depends on the slice's length only (0 up to 3, then 2, 2, 3, 5, 6, 7 ...).
    for n in range(1, 40):
        a = np.full((2, n), np.nan)
        a[1, n // 2] = 1.0  # (a second row with one number in it)
        oracle(lambda x: x.nanmedian(1), a)
        oracle(lambda x: x.T.nanmedian(0, keepdim=True), a.astype(np.float32))


@pytest.mark.parametrize("shape", [(), (7,), (2, 3, 4), (0, 3)], ids=str)
@pytest.mark.parametrize("call", [
    lambda x: x.median(), lambda x: x.median(-1), lambda x: x.nanmedian(0, keepdim=True),
    lambda x: x.mode(), lambda x: x.mode(0, True), lambda x: x.nanmedian(),
])
def test_order_statistics_shapes(call, shape):
    oracle(call, array(shape, ember.float64))


def test_order_statistics_non_contiguous_and_named():
    a = array((3, 4, 5), ember.float64)
    oracle(lambda x: x.transpose(0, 2)[::2].median(1), a)
    oracle(lambda x: x.permute(2, 0, 1).mode(1), a.round())
    x = ember.tensor(a)
    for name in ("median", "nanmedian", "mode"):
        r = getattr(x, name)(1)
        assert type(r).__name__ == name and r.values is r[0] and r.indices is r[1]
    vals, idx = ember.empty(3, 5, dtype=ember.float64), ember.empty(3, 5, dtype=ember.int64)
    ember.median(x, 1, out=(vals, idx))
    assert_same(vals, torch.tensor(a).median(1).values)


def test_median_gradient_goes_to_the_chosen_element():
    a = array((3, 5), ember.float64, seed=3)
    for fn in (lambda x: x.median(1).values, lambda x: x.median(), lambda x: x.mode(0).values,
               lambda x: x.nanmedian(0).values):
        check_grads(fn, a)
    check_double(lambda x: x.median(1).values ** 2, a)


def test_grad_fn_names():
    e, t = ember.rand(3, 5, requires_grad=True), torch.rand(3, 5, requires_grad=True)
    for fn in (lambda x: x.var(), lambda x: x.std(0), lambda x: x.norm(), lambda x: x.norm(1, 0),
               lambda x: x.median(), lambda x: x.median(0)[0], lambda x: x.nanmedian(),
               lambda x: x.nanmedian(1)[0], lambda x: x.mode(0)[0]):
        assert type(fn(e).grad_fn).__name__ == type(fn(t).grad_fn).__name__


# --- quantile ---------------------------------------------------------------------------

@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("dim,keepdim", [(None, False), (None, True), (1, False), (0, True),
                                         (-1, True)])
def test_quantile_forms(interpolation, dim, keepdim):
    a = array((4, 6), ember.float64)
    for q in (0.0, 0.3, 0.5, 1.0):
        oracle(lambda x, q=q: x.quantile(q, dim, keepdim, interpolation=interpolation), a)
    oracle(lambda x: x.quantile(ns(x).tensor([0.25, 0.5, 0.9], dtype=ns(x).float64), dim,
                                keepdim, interpolation=interpolation), a)
    oracle(lambda x: x.nanquantile(ns(x).tensor(0.7, dtype=ns(x).float64), dim, keepdim,
                                   interpolation=interpolation), a)


def test_quantile_nearest_rounds_half_to_even():
    a = np.arange(5.0)
    for q in (0.125, 0.375, 0.625, 0.875):
        oracle(lambda x, q=q: x.quantile(q, interpolation="nearest"), a)


def test_quantile_with_nan():
    nan = np.nan
    a = np.array([[1.0, nan, 0.0, 4.0], [nan, nan, nan, nan], [3.0, 1.0, 2.0, 0.5]])
    fns = (lambda x: x.quantile(0.4, 1), lambda x: x.nanquantile(0.4, 1),
           lambda x: x.nanquantile(ns(x).tensor([0.0, 0.5, 1.0], dtype=ns(x).float64), 1),
           lambda x: x.quantile(0.5), lambda x: x.nanquantile(0.5))
    for fn in fns:
        oracle(fn, a, grad=False)
        # Gradients where the NaN is unique (torch's unstable sort orders equal NaNs freely).
        oracle(fn, a[[0, 2]])


def test_quantile_shapes_and_layouts():
    oracle(lambda x: x.quantile(0.5), array((), ember.float64))
    oracle(lambda x: x.quantile(0.5, 0, keepdim=True), array((), ember.float64))
    oracle(lambda x: x.transpose(0, 2).quantile(0.2, 1), array((3, 4, 5)))
    oracle(lambda x: x.quantile(ns(x).tensor([0.1, 0.9]), dim=None, keepdim=True),
           array((3, 4, 5)))


def test_quantile_gradients():
    a = array((3, 6), ember.float64, seed=5)
    for fn in (lambda x: x.quantile(0.3, 1), lambda x: x.quantile(0.5),
               lambda x: x.nanquantile(0.8, 0, interpolation="midpoint")):
        check_grads(fn, a)
    check_double(lambda x: x.quantile(0.35, 1) ** 2, a)


@pytest.mark.parametrize("call", [
    lambda x: x.quantile(1.5), lambda x: x.quantile(-0.1),
    lambda x: x.quantile(ns(x).tensor([[0.1]])), lambda x: x.quantile(ns(x).tensor([0.1, 1.2])),
    lambda x: x.quantile(ns(x).tensor([0.5], dtype=ns(x).float64)),
    lambda x: x.quantile(0.3, interpolation="foo"), lambda x: x.long().quantile(0.5),
    lambda x: x.half().quantile(0.5), lambda x: x[:0].quantile(0.5),
    lambda x: x.quantile(0.5, dim=2), lambda x: x.nanquantile(0.5, dim=(0, 1)),
])
def test_quantile_errors(call):
    raises_like(call, array((3, 4)))


@pytest.mark.parametrize("call", [
    lambda x: x.var(1), lambda x: x.std((0, 2), keepdim=True), lambda x: x.norm(),
    lambda x: x.norm(3, 1), lambda x: ns(x).var_mean(x, 1), lambda x: x.median(1),
    lambda x: x.nanmedian(0, keepdim=True), lambda x: x.mode(2), lambda x: x.quantile(0.3, 1),
    lambda x: x.nanquantile(0.5, keepdim=True), lambda x: x.median(),
])
@pytest.mark.parametrize("transpose", [False, True])
def test_meta_shapes_dtypes_strides(call, transpose):
    meta_same(call, (2, 3, 4), transpose=transpose)


def test_meta_complex_var_is_real():
    meta_same(lambda x: x.var(0), (2, 3), ember.complex64)
    meta_same(lambda x: x.norm(dim=1), (2, 3), ember.complex128)


# --- found by the differential fuzzer (python -m fuzz) -----------------------------------

@pytest.mark.parametrize("p", [-2, -1, float("inf"), float("-inf")])
def test_norm_without_identity_over_an_empty_dim_is_refused(p):
    from helpers import same_error, same_result

    same_error(lambda L: L.zeros(0, 2, 2).norm(p))
    same_error(lambda L: L.zeros(0, 2).norm(p, dim=0))
    same_result(lambda L: L.zeros(0, 2).norm(p, dim=1))  # reduces nothing empty
    same_result(lambda L: L.zeros(0, 2).norm(2))


# --- renorm -------------------------------------------------------------------------------

@pytest.mark.parametrize("p", [2, 1, 0.5, float("inf"), 3])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "complex64"])
def test_renorm_matches_torch(dtype, p):
    # the slices' norms (x**3 goes through pow: an ulp of float32 apart at most); 16-bit
    # floats: the norm in float32, the factor rounded to the input's dtype
    x = np.random.default_rng(0).standard_normal((3, 4, 5))
    for dim, maxnorm in ((0, 1.0), (1, 2.5), (-1, 0.5), (2, 100.0), (0, 0.0)):
        e = ember.tensor(x).to(getattr(ember, dtype))
        t = torch.tensor(x).to(getattr(torch, dtype))
        assert_same(ember.renorm(e, p, dim, maxnorm), torch.renorm(t, p, dim, maxnorm))
        assert_same(e.renorm_(p, dim, maxnorm), t.renorm_(p, dim, maxnorm))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_renorm_factor_is_one_correctly_rounded_division(dtype):
    # integer rows: the 2-norm is one correctly rounded sqrt, so torch's kernel
    # (maxnorm / (norm + 1e-7), then the product) is matched bit for bit; a reciprocal
    # times maxnorm lands an ulp away (-3.4020690409025622 vs ...627 in float64)
    e = (ember.arange(12, dtype=getattr(ember, dtype)).reshape(3, 4) - 5).renorm(2, 0, 5)
    t = (torch.arange(12, dtype=getattr(torch, dtype)).reshape(3, 4) - 5).renorm(2, 0, 5)
    assert e.tolist() == t.tolist()


def test_renorm_gradients_match_torch_and_finite_differences():
    x = np.random.default_rng(1).standard_normal((3, 4))
    for p in (2, 1.5, float("inf")):
        for maxnorm in (0.8, 10.0):
            e = ember.tensor(x, requires_grad=True)
            t = torch.tensor(x, requires_grad=True)
            g = np.random.default_rng(2).standard_normal((3, 4))
            ember.renorm(e, p, 1, maxnorm).backward(ember.tensor(g))
            torch.renorm(t, p, 1, maxnorm).backward(torch.tensor(g))
            assert_same(e.grad, t.grad)
    check_grads(lambda a: ember.renorm(a, 2, 0, 0.8), x)
    y = ember.tensor(x, requires_grad=True) * 1
    y.renorm_(2, 0, 0.8).sum().backward()  # (in place on a non-leaf)


def test_renorm_gradient_of_slices_left_alone_is_the_gradient_nan_inf_and_zero_too():
    # PyTorch: where(norm > maxnorm, ..., grad); a NaN slice's norm is not above maxnorm
    nan, inf = float("nan"), float("inf")
    rows = [[1, nan, 2], [3, 4, 0], [0, 0, 0], [0.1, 0.2, 0.1], [inf, 1, 2], [5, -6, 7]]
    g = np.arange(18.0).reshape(6, 3) - 5
    for p, dim, maxnorm in ((2, 0, 1.0), (1, 0, 2.0), (2, 0, 0.0), (3, 1, 1.5)):
        e = ember.tensor(rows, dtype=ember.float64, requires_grad=True)
        t = torch.tensor(rows, dtype=torch.float64, requires_grad=True)
        ember.renorm(e, p, dim, maxnorm).backward(ember.tensor(g))
        torch.renorm(t, p, dim, maxnorm).backward(torch.tensor(g))
        # (the products and norms' derivatives in another order: 1e-12)
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("call", [
    lambda m: m.renorm(m.ones(3, 4), 2, 0, -1.0),
    lambda m: m.renorm(m.ones(3, 4), 0, 0, 1.0),
    lambda m: m.renorm(m.ones(3, 4), -1, 0, 1.0),
    lambda m: m.renorm(m.ones(3, 4, dtype=m.int64), 2, 0, 1.0),
    lambda m: m.renorm(m.ones(4), 2, 0, 1.0),
    lambda m: m.renorm(m.ones(3, 4), 2, 2, 1.0),
], ids=range(6))
def test_renorm_errors_as_torch(call):
    with pytest.raises(Exception) as et:
        call(torch)
    with pytest.raises(type(et.value)) as ee:
        call(ember)
    assert str(ee.value) == str(et.value)


QUANTILE_FORMS = [
    lambda L, x: L.quantile(x, 0.5),
    lambda L, x: L.nanquantile(x.double(), 0.5),
    lambda L, x: L.quantile(x.view(1, -1), 0.5, dim=1),
]


@pytest.mark.parametrize("call", QUANTILE_FORMS, ids=["flat", "nanquantile_float64", "along_dim"])
def test_quantile_refuses_slices_past_two_to_the_24(call):
    # (one element over the limit; the same tensor one element shorter is accepted, checked
    # for the first form only: each such call sorts 2**24 values, about 2 s a library.
    # Distinct values: a slice of 2**24 ties makes the NumPy path emulate std::sort's order
    # of the ties, which costs seconds and is tested in test_sorting)
    messages, accepted = [], []
    for L in (ember, torch):
        x = L.arange((1 << 24) + 1, dtype=L.float32)
        with pytest.raises(RuntimeError) as info:
            call(L, x)
        messages.append(str(info.value))
        if call is QUANTILE_FORMS[0]:
            accepted.append(call(L, x[1:]).item())
    assert messages[0] == messages[1]
    assert not accepted or accepted[0] == accepted[1] > 8e6  # (the middle of 1 .. 2**24)


def test_quantile_of_many_short_slices_is_not_too_large():
    x = ember.zeros((1 << 24) + 1, 1)
    assert ember.quantile(x, 0.5, dim=1).shape == ((1 << 24) + 1,)


def test_spread_argument_errors_in_torch_words():
    from helpers import same_message

    x = lambda L: L.arange(10.0)  # noqa: E731
    for call in (lambda L: L.var(x(L), unbiased=True, correction=1),
                 lambda L: L.std_mean(x(L), correction="a"),
                 lambda L: L.var_mean(x(L), unbiased=False, correction=0),
                 lambda L: L.std(x(L), dim=0, unbiased=False, correction=0)):
        same_message(call, TypeError)
    same_message(lambda L: L.corrcoef(L.ones(2, 2, 2)))


@pytest.mark.parametrize("dtypes", [("int64", "int64"), ("int32", "uint8"), ("uint8", "uint8")])
def test_dist_of_integer_tensors_is_refused_in_dists_words(dtypes):
    msgs = []
    for L in (ember, torch):
        a, b = (L.ones(3, dtype=getattr(L, d)) for d in dtypes)
        with pytest.raises(RuntimeError) as info:
            L.dist(a, b)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1] and msgs[0].startswith("norm(): input dtype")
    # an integer with a float promotes to float and works: 3 ones, |1 - 0| summed in quadrature
    assert ember.dist(ember.ones(3, dtype=ember.int64), ember.zeros(3)).item() == \
        torch.dist(torch.ones(3, dtype=torch.int64), torch.zeros(3)).item()


_NAN_FORMS = {
    "nanquantile of ints": lambda m: m.nanquantile(m.tensor([1, 2]), 0.5),
    "nanquantile q out of range": lambda m: m.nanquantile(m.randn(3), 1.5),
    "nanquantile bad interpolation": lambda m: m.nanquantile(m.randn(3), 0.5, interpolation="x"),
    "nanquantile of nothing": lambda m: m.nanquantile(m.randn(0), 0.5),
    "nanquantile of a 2-d q": lambda m: m.nanquantile(m.randn(3), m.tensor([[0.5]])),
    "nanmedian over an empty dim": lambda m: m.nanmedian(m.randn(3, 0), 1),
}


@pytest.mark.parametrize("case", list(_NAN_FORMS))
def test_nan_forms_refuse_in_their_plain_forms_words(case):
    """ATen checks nanquantile / nanmedian with quantile's / median's own checks, so the
    messages name quantile() and median()."""
    import torch

    got = []
    for m in (ember, torch):
        with pytest.raises((RuntimeError, IndexError)) as e:
            _NAN_FORMS[case](m)
        got.append((e.type, str(e.value)))
    assert got[0] == got[1]


# --- ties between -0.0 and 0.0, and error wording ---------------------------------------

@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "nearest", "midpoint"])
def test_quantile_of_zeros_has_the_sign_torchs_sort_leaves(name, interpolation):
    # torch sorts each slice (not stably) and picks from it: which of the tied -0.0 and 0.0
    # lands at a rank decides the sign printed
    rng = np.random.default_rng(3)
    x = (rng.integers(-1, 2, (3, 60)) / 4).astype(np.float32)
    x[(x == 0) & (rng.random(x.shape) < 0.5)] = -0.0
    x[0, ::7] = np.nan
    q = np.array([0.0, 0.2, 0.35, 0.5, 0.61, 1.0], np.float32)
    for dim in (None, 1):
        e = getattr(ember, name)(ember.tensor(x), ember.tensor(q), dim=dim,
                                 interpolation=interpolation)
        t = getattr(torch, name)(torch.tensor(x), torch.tensor(q), dim=dim,
                                 interpolation=interpolation)
        assert str(e.tolist()) == str(t.tolist())


@pytest.mark.parametrize("q", [2.0, 1.23456789, -0.5, 1.0000001, 123456789.0, float("inf")])
def test_quantile_out_of_range_prints_q_as_cpp_does(q):
    msg = same_message(lambda L: L.nanquantile(L.arange(4.0), q))
    assert "but got" in msg


@pytest.mark.parametrize("call", [
    lambda L: L.median(L.tensor([True, False])),
    lambda L: L.median(L.tensor([True, False]), 0),
    lambda L: L.tensor([True, False]).nanmedian(0, keepdim=True),
    lambda L: L.nanmedian(L.tensor([1j]), 0),
])
def test_median_names_its_kernel_as_torch_does(call):
    # the full median's kernel is median_cpu, the per-dim one's median_out
    assert "not implemented" in same_message(call, NotImplementedError)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("name", ["median", "nanmedian"])
def test_full_median_of_zeros_has_the_sign_nth_element_leaves(dtype, name):
    # torch's median() runs std::nth_element on a copy in memory order: of tied -0.0 and
    # 0.0, the one it leaves in the middle is returned
    rng = np.random.default_rng(1)
    for n in (5, 17, 40, 101):
        x = (rng.integers(-1, 2, (3, n)) / 4).astype(np.float32)
        x[(x == 0) & (rng.random(x.shape) < 0.5)] = -0.0
        if name == "nanmedian":
            x[:, ::5] = np.nan
        for view in (lambda t: t, lambda t: t.T, lambda t: t[:, ::2]):
            e = getattr(ember, name)(view(ember.tensor(x).to(getattr(ember, dtype))))
            t = getattr(torch, name)(view(torch.tensor(x).to(getattr(torch, dtype))))
            assert str(e.float().item()) == str(t.float().item())


@pytest.mark.parametrize("call", [
    lambda L: L.median(L.ones(2, 3), out=(L.empty(0), L.empty(0, dtype=L.long))),
    lambda L: L.nanmedian(L.ones(2, 3), out=L.empty(0)),
    lambda L: L.nanmedian(L.ones(2, 3), 0, out=L.empty(0)),
    lambda L: L.mode(L.ones(2, 3), out=L.empty(0)),
    lambda L: L.median(L.ones(2, 3), 1, out=[L.empty(0)]),
])
def test_median_and_mode_out_must_be_a_pair_for_the_dim_form(call):
    # the full median has no out= overload: torch's parser asks for dim
    same_message(call, TypeError)


def test_full_median_by_selection_is_torchs():
    # (median() over every element selects the middle value rather than sorting: the
    # value, its dtype, a zero's sign and NaN follow torch's nth_element)
    rng = np.random.default_rng(3)
    cases = [rng.standard_normal(1001), rng.standard_normal(1000), [1.0, np.nan, 2.0],
             [np.nan, np.nan], [0.0, -0.0, 0.0, -0.0, 1.0, -1.0], [-0.0, 2.0, -0.0], [3.0]]
    for values in cases:
        for dtype in ("float32", "float64", "float16", "bfloat16"):
            for fn in ("median", "nanmedian"):
                e = getattr(ember.tensor(values).to(getattr(ember, dtype)), fn)()
                t = getattr(torch.tensor(values).to(getattr(torch, dtype)), fn)()
                assert str(e.dtype)[6:] == str(t.dtype)[6:]
                a, b = e.double().item(), t.double().item()
                assert (a == b and math.copysign(1, a) == math.copysign(1, b)) or \
                    (a != a and b != b), (values, dtype, fn, a, b)
    for values in (rng.integers(0, 5, 999), rng.integers(-3, 3, 1000)):
        assert ember.tensor(values).median().item() == torch.tensor(values).median().item()


def test_inf_norm_gradient_with_nan_is_torchs():
    # a NaN element counts among the maxima (PyTorch's mask), so a NaN norm's gradient is
    # sgn(x) * 0, not 0 / 0
    nan = float("nan")
    for ord_ in (float("inf"), -float("inf")):
        for data in ([1.0, nan, -3.0], [[1.0, nan], [2.0, -2.0]], [2.0, -2.0, 1.0]):
            got, want = [], []
            for lib, out in ((ember, got), (torch, want)):
                x = lib.tensor(data, requires_grad=True)
                lib.linalg.vector_norm(x, ord=ord_, dim=-1).sum().backward()
                out.append(x.grad.numpy())
            np.testing.assert_array_equal(got[0], want[0])
            assert np.array_equal(np.signbit(got[0]), np.signbit(want[0]))
