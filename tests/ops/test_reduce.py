"""Reductions against PyTorch: sum, mean, nansum, nanmean, prod, amax/amin, max/min,
argmax/argmin, aminmax, any/all, count_nonzero, sum_to_size.

Values, dtypes, shapes, exception types and gradients come from torch; float64 finite
differences are a second oracle for the gradient rules with special cases (prod's zeros,
ties in amax / max).
"""

import numpy as np
import pytest
import torch

import ember
from op_oracle import array, check_double, meta_same, oracle, raises_like

from helpers import (
    DTYPE_PAIRS,
    assert_same,
    check_grads,
    check_op,
    same_error,
    same_message,
    same_result,
    to_torch,
)

ALL_DTYPES = [e for e, _ in DTYPE_PAIRS]

# One row per call form; each runs on every dtype, and torch decides which dtypes are legal.
CALLS = {
    "sum": lambda x: x.sum(),
    "sum_dim": lambda x: x.sum(1),
    "sum_tuple_keepdim": lambda x: x.sum((0, 1), keepdim=True),
    "nansum": lambda x: x.nansum(0),
    "mean": lambda x: x.mean(),
    "mean_dim": lambda x: x.mean(-1, keepdim=True),
    "nanmean": lambda x: x.nanmean(1),
    "prod": lambda x: x.prod(),
    "prod_dim": lambda x: x.prod(0, keepdim=True),
    "amax": lambda x: x.amax(1),
    "amin_all": lambda x: x.amin(),
    "max": lambda x: x.max(),
    "max_dim": lambda x: x.max(1),
    "min_dim_keepdim": lambda x: x.min(0, keepdim=True),
    "argmax": lambda x: x.argmax(),
    "argmin_dim": lambda x: x.argmin(1, keepdim=True),
    "aminmax": lambda x: x.aminmax(),
    "aminmax_dim": lambda x: x.aminmax(dim=0),
    "any": lambda x: x.any(),
    "all_dim": lambda x: x.all(1),
    "count_nonzero": lambda x: x.count_nonzero(),
    "count_nonzero_dim": lambda x: x.count_nonzero(0),
}


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("call", CALLS, ids=str)
def test_every_dtype_matches_torch(call, dtype):
    # Integer data from [-2, 2) includes zeros and ties; floats are distinct.
    oracle(CALLS[call], array((3, 4), dtype), grad=dtype in (ember.float32, ember.float64))


SHAPES = [(), (5,), (2, 3, 4), (0, 3)]
DIM_CALLS = {
    "sum": lambda x: x.sum(),
    "sum_last": lambda x: x.sum(-1),
    "sum_list_keepdim": lambda x: x.sum([0, -1], keepdim=True),
    "sum_empty_list": lambda x: x.sum([]),
    "mean": lambda x: x.mean(),
    "mean_first": lambda x: x.mean(0, keepdim=True),
    "nansum_last": lambda x: x.nansum(-1),
    "prod": lambda x: x.prod(),
    "prod_first": lambda x: x.prod(0),
    "amax_last": lambda x: x.amax(-1),
    "amin_tuple": lambda x: x.amin((0, -1), keepdim=True),
    "max_last": lambda x: x.max(-1),
    "min": lambda x: x.min(),
    "argmax_first": lambda x: x.argmax(0),
    "argmin": lambda x: x.argmin(keepdim=True),
    "any_last": lambda x: x.any(-1, keepdim=True),
    "all_empty_tuple": lambda x: x.all(()),
    "count_nonzero_first": lambda x: x.count_nonzero(0),
}


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("call", DIM_CALLS, ids=str)
def test_shapes_dims_and_gradients(call, shape):
    """0-d, 1-d, 3-d and empty inputs; errors (e.g. max of nothing) must match too."""
    oracle(DIM_CALLS[call], array(shape, ember.float64))


@pytest.mark.parametrize("call", ["sum_last", "mean_first", "prod_first", "amin_tuple",
                                  "max_last", "argmax_first", "any_last"])
def test_non_contiguous_inputs(call):
    fn = DIM_CALLS[call]
    oracle(lambda x: fn(x.permute(2, 0, 1)[:, ::2]), array((3, 4, 5), ember.float32))
    oracle(lambda x: fn(x.transpose(0, 2)), array((3, 4, 5), ember.int32), grad=False)


def test_reductions_return_contiguous_results():
    a = array((3, 4, 5))
    for fn in (lambda x: x.permute(2, 0, 1).sum(1, keepdim=True),
               lambda x: x.permute(2, 0, 1).amax(1),
               lambda x: x.transpose(0, 2).max(0, keepdim=True)):
        check_op(fn, fn, a, check_stride=True)


# --- numerics -----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16], ids=str)
def test_low_precision_sums_accumulate_in_float32(dtype):
    # 10000 ones: a float16 accumulator would stall at 2048; float32 gets 10000 exactly.
    ones = np.ones(10000, dtype.np)
    for fn in (lambda x: x.sum(), lambda x: x.mean(), lambda x: x.nansum(),
               lambda x: x.reshape(100, 100).sum(0)):
        check_op(fn, fn, ones, grad=False, rtol=0, atol=0)
    x = ember.tensor(ones)
    assert x.sum().dtype is dtype
    assert x.sum().item() == float(np.array(10000.0, np.float32).astype(dtype.np))


def test_integer_sums_promote_to_int64_and_wrap():
    big = np.full(4, 2**62, np.int64)
    oracle(lambda x: x.sum(), big)
    oracle(lambda x: x.prod(), np.array([2**40, 2**40], np.int64))
    oracle(lambda x: x.sum(dtype=torch_dtype(x, "int32")), array((3, 4), ember.int8))


def torch_dtype(x, name):
    return getattr(torch if isinstance(x, torch.Tensor) else ember, name)


@pytest.mark.parametrize("dtype_name", ["float64", "float16", "int16", "complex64"])
def test_dtype_argument_casts_first(dtype_name):
    a = array((3, 4))
    oracle(lambda x: x.sum(1, dtype=torch_dtype(x, dtype_name)), a, grad=False)
    oracle(lambda x: x.prod(dtype=torch_dtype(x, dtype_name)), a, grad=False)
    oracle(lambda x: x.nansum(0, dtype=torch_dtype(x, dtype_name)), a, grad=False)
    oracle(lambda x: x.mean(0, dtype=torch_dtype(x, dtype_name)), a, grad=False)
    oracle(lambda x: x.mean(dtype=torch_dtype(x, dtype_name)), array((5,), ember.int64),
           grad=False)


def test_nan_handling():
    a = array((3, 4), ember.float64)
    a[0, 1] = a[2, 0] = a[2, 3] = np.nan
    for fn in (lambda x: x.nansum(1), lambda x: x.nanmean(0), lambda x: x.nanmean(),
               lambda x: x.sum(1), lambda x: x.amax(0), lambda x: x.max(1),
               lambda x: x.argmin(1), lambda x: x.max(), lambda x: x.aminmax(dim=1)):
        oracle(fn, a)


@pytest.mark.parametrize("shape", [(4096, 10), (300, 3), (70, 2, 16), (64, 17)], ids=str)
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.int32], ids=str)
def test_short_rows_of_many_samples(shape, dtype):
    """Reductions over a classifier's short class dim (ember reduces down the columns of a
    transposed copy there), NaNs and ties included, match torch."""
    a = array(shape, dtype)
    if dtype is not ember.int32:
        a[5, ..., 1] = np.nan
        a[7, ..., :2] = 1.5  # a tie for the max
    for fn in (lambda x: x.sum(-1), lambda x: x.amax(-1, keepdim=True), lambda x: x.amin(-1),
               lambda x: x.max(-1), lambda x: x.argmax(-1)):
        oracle(fn, a, grad=dtype is not ember.int32)
    if dtype is not ember.int32:
        for fn in (lambda x: x.mean(-1, keepdim=True), lambda x: x.logsumexp(-1),
                   lambda x: x.softmax(-1), lambda x: x.log_softmax(-1)):
            oracle(fn, a)


# --- gradients --------------------------------------------------------------------------

def test_max_routes_to_index_and_amax_shares_ties():
    a = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 1.0]])
    for fn in (lambda x: x.max(1), lambda x: x.min(0, keepdim=True), lambda x: x.amax(1),
               lambda x: x.amin((0, 1)), lambda x: x.max(), lambda x: x.min(),
               lambda x: x.aminmax(dim=1)):
        oracle(fn, a)


@pytest.mark.parametrize("zeros", [[], [(0, 1)], [(0, 1), (0, 3)], [(1, 0), (2, 2)]])
def test_prod_gradient_with_zeros(zeros):
    a = array((3, 4), ember.float64, seed=4)
    for i, j in zeros:
        a[i, j] = 0.0
    for fn in (lambda x: x.prod(1), lambda x: x.prod(0, keepdim=True), lambda x: x.prod()):
        oracle(fn, a)
        check_grads(fn, a)


def test_prod_gradient_complex():
    a = array((2, 3), ember.complex128)
    oracle(lambda x: x.prod(1), a)
    a[0, 1] = 0
    oracle(lambda x: x.prod(1), a)


def test_finite_differences():
    a = array((3, 4), ember.float64, seed=5)
    for fn in (lambda x: x.sum(0), lambda x: x.mean((0, 1)), lambda x: x.amax(1),
               lambda x: x.max(0).values, lambda x: x.min(1, keepdim=True).values,
               lambda x: x.prod(1), lambda x: x.nansum(1) * x.nanmean(1)):
        check_grads(fn, a)


@pytest.mark.parametrize("shape,fn", [
    ((3, 4), lambda x: (x.sum(1) ** 2)),
    ((3, 4), lambda x: x.exp().sum((0, 1), keepdim=True) * x),
    ((3, 4), lambda x: x.mean(0) ** 3),
    ((2, 3, 4), lambda x: x.sin().mean((0, 2)) * x.sum((0, 2))),
    ((), lambda x: x.sum() * x.mean()),
])
def test_second_derivatives_match_torch(shape, fn):
    check_double(fn, array(shape, ember.float64))


def test_second_derivatives_through_prod_and_max():
    a = array((2, 4), ember.float64)
    for fn in (lambda x: x.prod(1), lambda x: x.prod() * x, lambda x: x.max(1).values ** 2,
               lambda x: x.amin(0) ** 2):
        check_double(fn, a)
    a[0, 1] = 0.0
    check_double(lambda x: x.prod(1), a)
    a[1, 1] = a[1, 3] = 0.0
    check_double(lambda x: x.prod(1), a)
    check_double(lambda x: x.prod(), a)


@pytest.mark.parametrize("call,expected", [
    (lambda x: x.sum(), "SumBackward0"), (lambda x: x.sum(0), "SumBackward1"),
    (lambda x: x.mean(), "MeanBackward0"), (lambda x: x.mean(0), "MeanBackward1"),
    (lambda x: x.prod(), "ProdBackward0"), (lambda x: x.prod(0), "ProdBackward1"),
    (lambda x: x.nansum(), "NansumBackward0"), (lambda x: x.amax(0), "AmaxBackward0"),
    (lambda x: x.amin(0), "AminBackward0"), (lambda x: x.max(), "MaxBackward1"),
    (lambda x: x.max(0)[0], "MaxBackward0"), (lambda x: x.min(), "MinBackward1"),
    (lambda x: x.min(0)[0], "MinBackward0"),
])
def test_grad_fn_names_match_torch(call, expected):
    t = torch.rand(2, 3, requires_grad=True)
    e = ember.rand(2, 3, requires_grad=True)
    assert type(call(t).grad_fn).__name__ == expected
    assert type(call(e).grad_fn).__name__ == expected


# --- named tuples, out=, binary max -----------------------------------------------------

def test_named_tuples():
    x = ember.tensor(array((3, 4)))
    r = x.max(1)
    assert type(r).__name__ == "max" and r.values is r[0] and r.indices is r[1]
    assert type(x.min(dim=0)).__name__ == "min"
    mm = ember.aminmax(x, dim=1, keepdim=True)
    assert type(mm).__name__ == "aminmax" and mm.min.shape == (3, 1)
    assert_same(mm.max, torch.aminmax(to_torch(x), dim=1, keepdim=True).max)
    assert repr(r).startswith("ember.return_types.max(\nvalues=tensor(")


def test_out_arguments():
    a = array((3, 4))
    x, t = ember.tensor(a), torch.tensor(a)
    out_e, out_t = ember.empty(3), torch.empty(3)
    assert ember.sum(x, 1, out=out_e) is out_e
    torch.sum(t, 1, out=out_t)
    assert_same(out_e, out_t)
    vals, idx = ember.empty(4), ember.empty(4, dtype=ember.int64)
    r = ember.max(x, 0, out=(vals, idx))
    rt = torch.max(t, 0)
    assert r.values is vals and r.indices is idx
    assert_same(vals, rt.values)
    assert_same(idx, rt.indices)
    out_b = ember.empty(3, dtype=ember.bool)
    ember.any(x > 1, 1, out=out_b)
    assert_same(out_b, torch.any(t > 1, 1))


def test_binary_max_min_dispatch():
    a, b = array((3, 4)), array((4,), seed=2)
    oracle(lambda x, y: x.max(y), a, b)
    oracle(lambda x, y: ember.min(x, y) if isinstance(x, ember.Tensor) else torch.min(x, y),
           a, b)


# --- errors -----------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda x: x.sum(2), lambda x: x.sum((0, 0)), lambda x: x.sum((0, -2)),
    lambda x: x.max(5), lambda x: x.argmax(-3), lambda x: x.prod((0, 1)),
    lambda x: x.argmax((0, 1)), lambda x: x.mean(dtype=torch_dtype(x, "int64")),
    lambda x: x.amax(3), lambda x: x.count_nonzero(2), lambda x: x.any(4),
])
def test_bad_arguments_raise_like_torch(call):
    raises_like(call, array((3, 4)))


@pytest.mark.parametrize("call", [
    lambda x: x.max(), lambda x: x.max(0), lambda x: x.amax(0), lambda x: x.argmax(),
    lambda x: x.argmin(0), lambda x: x.aminmax(), lambda x: x.aminmax(dim=0),
    lambda x: x.min(),
])
def test_reducing_an_empty_dim_without_identity_raises(call):
    raises_like(call, np.zeros((0, 3), np.float32))


def test_empty_reductions_with_identity():
    e = np.zeros((0, 3), np.float32)
    for fn in (lambda x: x.sum(0), lambda x: x.prod(0), lambda x: x.mean(0),
               lambda x: x.amax(1), lambda x: x.max(1), lambda x: x.argmax(1),
               lambda x: x.any(0), lambda x: x.all(0), lambda x: x.count_nonzero(),
               lambda x: x.nansum(), lambda x: x.nanmean(0)):
        oracle(fn, e)


# --- sum_to_size -----------------------------------------------------------------------

@pytest.mark.parametrize("size", [(3, 4), (1, 4), (3, 1), (4,), (1,), (), (1, 1), (2, 1, 1)])
def test_sum_to_size(size):
    a = array((2, 3, 4), ember.float64)
    oracle(lambda x: x.sum_to_size(size), a)
    oracle(lambda x: x.sum_to_size(*size) if size else x.sum_to_size(size), a)


def test_sum_to_size_errors():
    raises_like(lambda x: x.sum_to_size((5,)), array((2, 3)))
    raises_like(lambda x: x.sum_to_size((1, 2, 3)), array((2, 3)))


def test_broadcast_gradients_use_sum_to_size():
    check_op(lambda x, y: x * y, lambda x, y: x * y, array((2, 1, 4)), array((3, 1), seed=1))


@pytest.mark.parametrize("size", [(4,), (1, 4), (3, 1), (1,), (1, 1, 1), ()])
def test_sum_to_size_records_torchs_nodes(size):
    # PyTorch sums with kept dims, then views the leading ones away: a create_graph
    # gradient of a broadcast operand ends in ViewBackward0, or SumBackward1 where no dim
    # is dropped; the second derivative goes through both
    got = []
    for m in (ember, torch):
        x = m.tensor(np.arange(24.0).reshape(2, 3, 4) / 4, requires_grad=True)  # (exact sums)
        b = m.full(size, 0.5, dtype=m.float64, requires_grad=True)
        (gb,) = m.autograd.grad(((x * b) ** 2).sum(), b, create_graph=True)
        (gx,) = m.autograd.grad(gb.sum(), x)
        assert gb.shape == size
        got.append((gb.grad_fn.name(), gb.tolist(), gx.tolist(),
                    x.sum_to_size(size).grad_fn.name()))
    assert got[0] == got[1]


# --- meta ----------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda x: x.sum(), lambda x: x.sum(1, keepdim=True), lambda x: x.mean((0, 2)),
    lambda x: x.prod(0), lambda x: x.amax(-1), lambda x: x.max(1), lambda x: x.min(),
    lambda x: x.argmax(2, keepdim=True), lambda x: x.argmin(), lambda x: x.any(0),
    lambda x: x.all(), lambda x: x.count_nonzero((0, 1)), lambda x: x.nansum(1),
    lambda x: x.aminmax(dim=1), lambda x: x.sum_to_size(1, 3, 1),
    lambda x: x.sum(1, dtype=torch_dtype(x, "float64")),
])
@pytest.mark.parametrize("transpose", [False, True])
def test_meta_shapes_dtypes_strides(call, transpose):
    meta_same(call, (2, 3, 4) if not transpose else (4, 3, 2), transpose=transpose)


def test_meta_integer_inputs():
    meta_same(lambda x: x.sum(0), (2, 3), ember.int32)
    meta_same(lambda x: x.prod(), (2, 3), ember.bool)
    meta_same(lambda x: x.all(1), (2, 3), ember.uint8)


# --- found by the differential fuzzer (python -m fuzz) -----------------------------------

@pytest.mark.parametrize("call", [
    # the dim / size errors come before the complex (or bool) refusal, as in PyTorch
    lambda L: L.min(L.ones(3, 2, 1, dtype=L.complex64), 5),
    lambda L: L.ones(2, 3, dtype=L.complex128).max(4),
    lambda L: L.ones(0, 4, 1, dtype=L.complex64).min(),
    lambda L: L.ones(2, 0, dtype=L.complex64).min(-1, keepdim=True),
    lambda L: L.nansum(L.ones(3, dtype=L.complex64), -2),
    lambda L: L.ones(1, 0, dtype=L.complex128).amax((1,)),
    lambda L: L.ones(0, 2, dtype=L.complex64).amin(dim=0),
    lambda L: L.median(L.ones(0, dtype=L.complex64), 0),
    lambda L: L.ones(0, 4, dtype=L.bool).median(0, keepdim=True),
])
def test_reductions_check_dims_before_dtypes(call):
    from helpers import same_error

    same_error(call)


def test_nansum_of_bfloat16_skips_nan():
    from helpers import same_result

    same_result(lambda L: L.nansum(L.tensor([[2.0, 1.0], [float("nan"), 3.0],
                                             [float("inf"), 0.5]], dtype=L.bfloat16), (0,)))


# --- _is_all_true / _is_any_true: the truth of a whole bool tensor, for a Python branch ---

@pytest.mark.parametrize("name", ["_is_all_true", "_is_any_true"])
@pytest.mark.parametrize("values", [[True, False], [True, True], [False, False], [],
                                    [[True], [False]], True])
def test_whole_truth_matches_torch(name, values):
    want = getattr(torch, name)(torch.tensor(values, dtype=torch.bool))
    for got in (getattr(ember, name)(ember.tensor(values, dtype=ember.bool)),
                getattr(ember.tensor(values, dtype=ember.bool), name)()):
        assert got.shape == want.shape and got.dtype is ember.bool
        assert got.item() == want.item()


def test_whole_truth_of_a_non_bool_tensor_raises_like_torch():
    same_error(lambda L: L._is_all_true(L.tensor([1.0, 0.0])))
    same_error(lambda L: L._is_any_true(L.tensor([1, 0])))


def test_whole_truth_under_vmap_answers_for_the_whole_batch():
    # PyTorch's batch rule reduces the batch too and returns an unbatched bool, so a Python
    # `if` on it works inside vmap (the distributions' validation relies on it)
    def run(L):
        seen = []

        def f(x):
            seen.append(bool(L._is_all_true(x > 0)))
            return x * L._is_any_true(x > 2.5)

        rows = L.tensor([[1.0, 2.0], [3.0, 0.5]])
        out = L.vmap(f)(rows)
        nested = L.vmap(L.vmap(lambda x: L._is_all_true(x > 0.75).clone()))(rows)
        return seen, out.tolist(), nested.tolist()

    assert run(ember) == run(torch)



# --- out= decides the dtype a sum-like reduction runs in -----------------------------------
# NOTE: PyTorch casts the input to `out`'s dtype before reducing (floats summed into a long
# `out` are truncated first) and refuses a `dtype=` other than `out`'s.

@pytest.mark.parametrize("call", [
    lambda ns: ns.sum(ns.tensor([0.6, 1.7, 2.9]), 0, out=ns.empty((), dtype=ns.int64)),
    lambda ns: ns.prod(ns.tensor([0.6, 1.7, 2.9]), 0, out=ns.empty((), dtype=ns.int64)),
    lambda ns: ns.nansum(ns.tensor([6, 7]), 0, out=ns.empty((), dtype=ns.int16)),
    lambda ns: ns.nansum(ns.tensor([0.6, 1.7]), 0, dtype=ns.int16,
                         out=ns.empty((), dtype=ns.int16)),
    lambda ns: ns.sum(ns.tensor([100, 100]), 0, out=ns.empty((), dtype=ns.int8)),
    lambda ns: ns.sum(ns.tensor([True, True]), 0, out=ns.empty((), dtype=ns.bool)),
    lambda ns: ns.sum(ns.full((3, 500), 1.001), 1, out=ns.empty(3, dtype=ns.float16)),
], ids=["sum-float-into-long", "prod-float-into-long", "nansum-int-into-short",
        "nansum-dtype-and-out", "sum-into-int8", "sum-bool-into-bool", "sum-into-half"])
def test_out_dtype_is_the_reduction_dtype_like_torch(call):
    same_result(call)


@pytest.mark.parametrize("call,kind", [
    (lambda ns: ns.nansum(ns.tensor([0.6, 1.7]), 0, out=ns.empty((), dtype=ns.int64)),
     NotImplementedError),
    (lambda ns: ns.sum(ns.tensor([0.5, 1.5]), 0, dtype=ns.float64, out=ns.empty(())),
     RuntimeError),
    (lambda ns: ns.prod(ns.tensor([2, 3]), 0, dtype=ns.int32, out=ns.empty((), dtype=ns.int64)),
     RuntimeError),
], ids=["nansum-float-into-long", "sum-dtype-vs-out", "prod-dtype-vs-out"])
def test_out_dtype_refusals_like_torch(call, kind):
    same_message(call, kind)
