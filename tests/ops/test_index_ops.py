"""index_select / add / copy / fill, the scatter family, masked ops and take against torch."""

import numpy as np
import pytest
import torch

import ember

from helpers import (
    DTYPE_PAIRS,
    assert_same,
    check_grads,
    check_op,
    rand_array,
    same_error,
    to_torch,
)


def _e(a):
    return ember.tensor(a)


def _t(a):
    return torch.tensor(a)


def both(fn, *arrays):
    """fn(lib, convert) run for ember and torch; the results compared."""
    out_e = fn(ember, _e)
    out_t = fn(torch, _t)
    assert_same(out_e, out_t)
    return out_e


def raises_like_torch(exc, fn):
    with pytest.raises(exc):
        fn(torch, _t)
    with pytest.raises(exc):
        fn(ember, _e)


IDX = np.array([2, 0, 2, 1])

# --- index_select ----------------------------------------------------------------------


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_select_values_and_accumulated_grads(dim):
    check_op(lambda x: x.index_select(dim, _e(IDX)), lambda x: x.index_select(dim, _t(IDX)),
             rand_array((3, 3, 4), np.float64))


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.bool_, np.float16])
def test_index_select_dtypes_and_int32_index(dtype):
    idx = IDX.astype(np.int32)
    check_op(lambda x: ember.index_select(x, 0, _e(idx)),
             lambda x: torch.index_select(x, 0, _t(idx)), rand_array((3, 2), dtype))


def test_index_select_zero_dim_and_noncontiguous():
    check_op(lambda x: x.index_select(0, _e(np.array(0))),
             lambda x: x.index_select(0, _t(np.array(0))), np.array(1.5))
    check_op(lambda x: x.t().index_select(1, _e(IDX)), lambda x: x.t().index_select(1, _t(IDX)),
             rand_array((3, 5)))
    check_grads(lambda x: x.index_select(1, _e(IDX[:3])) ** 2, rand_array((2, 3)))


@pytest.mark.parametrize("idx, exc", [
    (np.array([3]), IndexError), (np.array([-1]), IndexError), (np.array([[0]]), IndexError),
    (np.array([0.0]), RuntimeError),
])
def test_index_select_errors(idx, exc):
    raises_like_torch(exc, lambda lib, c: lib.zeros(3, 2).index_select(0, c(idx)))


def test_index_select_on_meta():
    e = ember.empty(3, 4, device="meta").index_select(1, ember.empty(5, dtype=ember.int64,
                                                                     device="meta"))
    t = torch.empty(3, 4, device="meta").index_select(1, torch.empty(5, dtype=torch.int64,
                                                                     device="meta"))
    assert_same(e, t, check_stride=True)


# --- index_add / index_copy / index_fill -----------------------------------------------------

@pytest.mark.parametrize("alpha", [1, 2.5])
def test_index_add_accumulates_repeats(alpha):
    check_op(lambda x, s: x.index_add(1, _e(IDX), s, alpha=alpha),
             lambda x, s: x.index_add(1, _t(IDX), s, alpha=alpha),
             rand_array((2, 3), np.float64), rand_array((2, 4), np.float64, seed=1))


def test_index_add_inplace_and_integer():
    both(lambda lib, c: c(np.arange(6).reshape(3, 2)).index_add_(0, c(IDX), c(np.ones((4, 2),
                                                                                np.int64))), )
    check_grads(lambda x, s: x.index_add(0, _e(IDX), s, alpha=3), rand_array((3, 2)),
                rand_array((4, 2), seed=3))


def test_index_add_errors():
    raises_like_torch(RuntimeError, lambda lib, c: lib.zeros(3, 2).index_add(
        0, c(IDX), lib.ones(4, 2, dtype=lib.float64)))
    raises_like_torch(RuntimeError, lambda lib, c: lib.zeros(3, 2).index_add(
        0, c(IDX), lib.ones(4, 3)))
    raises_like_torch(RuntimeError, lambda lib, c: lib.zeros(3, 2).index_add(
        0, c(np.array([0, 3])), lib.ones(2, 2)))


def test_index_copy_matches_torch():
    idx = np.array([2, 0])
    check_op(lambda x, s: x.index_copy(0, _e(idx), s), lambda x, s: x.index_copy(0, _t(idx), s),
             rand_array((3, 4), np.float64), rand_array((2, 4), np.float64, seed=2))
    both(lambda lib, c: lib.zeros(2, 3).index_copy_(1, c(np.array([1])), lib.ones(2, 1)))
    raises_like_torch(IndexError, lambda lib, c: lib.zeros(3).index_copy(
        0, c(np.array([-1])), lib.ones(1)))


@pytest.mark.parametrize("value", [7, -1.5, True])
def test_index_fill_matches_torch(value):
    idx = np.array([0, -1])
    check_op(lambda x: x.index_fill(1, _e(idx), value), lambda x: x.index_fill(1, _t(idx), value),
             rand_array((3, 4), np.float64))
    both(lambda lib, c: c(np.arange(6).reshape(2, 3)).index_fill_(1, c(idx), value))


def test_index_fill_with_tensor_value_gets_its_gradient():
    idx = np.array([0, 2])
    check_op(lambda x, v: x.index_fill(0, _e(idx), v), lambda x, v: x.index_fill(0, _t(idx), v),
             rand_array((3, 2), np.float64), np.array(2.0))
    raises_like_torch(RuntimeError, lambda lib, c: lib.zeros(3).index_fill(
        0, c(idx), lib.ones(1)))
    raises_like_torch(IndexError, lambda lib, c: lib.zeros(3).index_fill(0, c(np.array([3])), 1))


# --- scatter family ----------------------------------------------------------------------

def _perm_index(shape, dim, n, seed=0):
    """An index of `shape` with distinct entries along `dim` (writes don't collide)."""
    rng = np.random.default_rng(seed)
    out = np.empty(shape, np.int64)
    for pos in np.ndindex(*[s for d, s in enumerate(shape) if d != dim]):
        p = list(pos)
        p.insert(dim, slice(None))
        out[tuple(p)] = rng.permutation(n)[:shape[dim]]
    return out


@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_src_values_and_grads(dim):
    idx = _perm_index((2, 3), dim, 3 if dim == 0 else 4)
    check_op(lambda x, s: x.scatter(dim, _e(idx), s), lambda x, s: x.scatter(dim, _t(idx), s),
             rand_array((3, 4), np.float64), rand_array((2, 3), np.float64, seed=1))


def test_scatter_src_larger_than_index():
    idx = np.array([[1, 0]])
    out = both(lambda lib, c: lib.zeros(3, 4).scatter(0, c(idx), c(np.ones((3, 4), np.float32))))
    assert out.shape == (3, 4)
    # PyTorch's ScatterBackward0 cannot give src a gradient here; ember pads it with zeros.
    check_grads(lambda x, s: x.scatter(0, _e(idx), s), rand_array((3, 4)), rand_array((2, 3)))


def test_scatter_value_and_reduce_arguments():
    idx = np.array([[0, 1, 2], [2, 2, 0]])
    check_op(lambda x: x.scatter(0, _e(idx), 2.5), lambda x: x.scatter(0, _t(idx), 2.5),
             rand_array((3, 3), np.float64))
    with pytest.warns(UserWarning, match="deprecated"):
        both(lambda lib, c: lib.ones(3, 3).scatter(0, c(idx), c(np.full((2, 3), 2.0, np.float32)),
                                                  reduce="add"))
    both(lambda lib, c: lib.ones(3, 3).scatter(0, c(idx), 3.0, reduce="multiply"))
    both(lambda lib, c: c(np.arange(9).reshape(3, 3)).scatter_(1, c(idx), 7))
    both(lambda lib, c: c(np.zeros(3, np.int32)).scatter(0, c(np.array([1])), 2.7))
    both(lambda lib, c: lib.tensor(3.0).scatter(0, c(np.array(0)), lib.tensor(5.0)))


@pytest.mark.parametrize("fn, exc", [
    (lambda lib, c: lib.zeros(3, 4).scatter(0, c(np.array([[3]])), 1.0), RuntimeError),
    (lambda lib, c: lib.zeros(3, 4).scatter(0, c(np.array([[-1]])), 1.0), RuntimeError),
    (lambda lib, c: lib.zeros(3, 4).scatter(0, c(np.array([0])), 1.0), RuntimeError),
    (lambda lib, c: lib.zeros(3, 4).scatter(0, c(np.array([[0]], np.int16)), 1.0), RuntimeError),
    (lambda lib, c: lib.zeros(3, 4).scatter(0, c(np.array([[0]])), lib.ones(1, 1,
                                                                         dtype=lib.float64)),
     RuntimeError),
    (lambda lib, c: lib.zeros(3, 4).scatter(2, c(np.array([[0]])), 1.0), IndexError),
    (lambda lib, c: lib.zeros(3, 4).scatter(0, c(np.array([[0]])), 1.0, reduce="mean"),
     RuntimeError),
    (lambda lib, c: lib.zeros(3, 4).scatter_reduce(0, c(np.array([[0]])), lib.ones(1, 1),
                                                   "add"), RuntimeError),
])
def test_scatter_errors(fn, exc):
    raises_like_torch(exc, fn)


def test_scatter_add_accumulates_and_differentiates():
    idx = np.array([[0, 0, 1], [0, 2, 1]])
    check_op(lambda x, s: x.scatter_add(0, _e(idx), s), lambda x, s: x.scatter_add(0, _t(idx), s),
             rand_array((3, 3), np.float64), rand_array((2, 3), np.float64, seed=4))
    both(lambda lib, c: c(np.zeros((3, 3), np.int64)).scatter_add_(0, c(idx),
                                                                   c(np.ones((2, 3), np.int64))))
    check_grads(lambda x, s: ember.scatter_add(x, 1, _e(idx), s) ** 2, rand_array((2, 3)),
                rand_array((2, 3), seed=9))


REDUCES = ["sum", "prod", "mean", "amax", "amin"]


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCES)
def test_scatter_reduce_values_and_grads(reduce, include_self):
    idx = np.array([[0, 1, 0, 2], [0, 1, 1, 2], [2, 1, 0, 0]])
    check_op(lambda x, s: x.scatter_reduce(0, _e(idx), s, reduce, include_self=include_self),
             lambda x, s: x.scatter_reduce(0, _t(idx), s, reduce, include_self=include_self),
             rand_array((4, 4), np.float64), rand_array((3, 4), np.float64, seed=5))


def test_scatter_reduce_ties_and_zeros_match_torch_grads():
    idx = np.array([0, 0, 1, 1, 1])
    x = np.array([2.0, 0.0, 5.0])
    src = np.array([2.0, 1.0, 0.0, 3.0, 0.0])
    for reduce in ["amax", "prod"]:
        for include_self in [True, False]:
            check_op(lambda a, b, r=reduce, i=include_self: a.scatter_reduce(0, _e(idx), b, r,
                                                                             include_self=i),
                     lambda a, b, r=reduce, i=include_self: a.scatter_reduce(0, _t(idx), b, r,
                                                                             include_self=i),
                     x, src)


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCES)
def test_scatter_reduce_on_integers(reduce, include_self):
    idx = np.array([0, 0, 2, 0])
    both(lambda lib, c: c(np.array([5, 2, -3], np.int32)).scatter_reduce(
        0, c(idx), c(np.array([1, 4, 3, 2], np.int32)), reduce, include_self=include_self))


def test_scatter_reduce_inplace_and_finite_differences():
    idx = np.array([1, 0, 1])
    both(lambda lib, c: lib.ones(2).scatter_reduce(0, c(idx), c(np.array([2.0, 3, 4],
                                                                         np.float32)), "max"))
    both(lambda lib, c: lib.ones(2).scatter_reduce_(0, c(idx), c(np.array([2.0, 3, 4],
                                                                          np.float32)), "prod"))
    check_grads(lambda x, s: x.scatter_reduce(0, _e(idx), s, "mean", include_self=False),
                rand_array((2,)), rand_array((3,), seed=2))


def test_scatter_on_meta():
    x = ember.empty(3, 4, device="meta")
    i = ember.empty(2, 4, dtype=ember.int64, device="meta")
    tx = torch.empty(3, 4, device="meta")
    ti = torch.empty(2, 4, dtype=torch.int64, device="meta")
    assert_same(x.scatter(0, i, 1.0), tx.scatter(0, ti, 1.0))
    assert_same(x.scatter_add(0, i, ember.empty(2, 4, device="meta")),
                tx.scatter_add(0, ti, torch.empty(2, 4, device="meta")))


# --- masked ops ------------------------------------------------------------------------------

MASK = rand_array((3, 4), np.bool_, seed=7)


@pytest.mark.parametrize("value", [-1e9, 0, 3, True])
def test_masked_fill_values_and_grads(value):
    check_op(lambda x: x.masked_fill(_e(MASK), value), lambda x: x.masked_fill(_t(MASK), value),
             rand_array((3, 4), np.float64))


@pytest.mark.parametrize("dtype", [np.float16, np.int32, np.uint8, np.bool_])
def test_masked_fill_keeps_dtype(dtype):
    check_op(lambda x: ember.masked_fill(x, _e(MASK), 2.7),
             lambda x: torch.masked_fill(x, _t(MASK), 2.7), rand_array((3, 4), dtype))


def test_masked_fill_broadcasts_mask_and_input():
    m = MASK[:, :1]
    check_op(lambda x: x.masked_fill(_e(m), float("-inf")),
             lambda x: x.masked_fill(_t(m), float("-inf")), rand_array((2, 3, 4)))
    check_op(lambda x: x.masked_fill(_e(MASK), 1.0), lambda x: x.masked_fill(_t(MASK), 1.0),
             rand_array((4,)))


def test_masked_fill_tensor_value_gets_its_gradient():
    check_op(lambda x, v: x.masked_fill(_e(MASK), v), lambda x, v: x.masked_fill(_t(MASK), v),
             rand_array((3, 4), np.float64), np.array(0.5))


def test_masked_fill_inplace_paths():
    both(lambda lib, c: lib.zeros(3, 4).masked_fill_(c(MASK), 2.0))
    both(lambda lib, c: lib.zeros(3, 4).t().masked_fill_(c(MASK.T), 2.0))
    x = ember.tensor(rand_array((3, 4)), requires_grad=True)
    t = torch.tensor(rand_array((3, 4)), requires_grad=True)
    ye, yt = x * 2, t * 2
    ye.masked_fill_(_e(MASK), 0.0)
    yt.masked_fill_(_t(MASK), 0.0)
    ye.sum().backward()
    yt.sum().backward()
    assert_same(x.grad, t.grad)
    raises_like_torch(RuntimeError, lambda lib, c: lib.zeros(4).masked_fill_(c(MASK), 1.0))


@pytest.mark.parametrize("n", [12, 5000])  # NumPy's masked copy, then the bit blend
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int8, np.bool_,
                                   np.complex128, "bfloat16"])
@pytest.mark.parametrize("value", [2.5, float("nan"), float("-inf"), "tensor"])
def test_masked_fill_in_place_writes_only_the_masked_elements(n, dtype, value):
    """masked_fill_ writes into the tensor's memory (its own kernel, no copy back): the
    value's exact bits where the mask is True, every other element untouched, through a
    broadcast mask and a strided target, as torch."""
    if dtype in (np.int8, np.bool_) and isinstance(value, float) and value != 2.5:
        return  # (NaN and inf do not fit: refused, tested with the fill overflows)
    if dtype == "bfloat16":
        x = ember.tensor(rand_array((2, n), np.float32)).to(ember.bfloat16)
    else:
        x = ember.tensor(rand_array((2, n), dtype))
    tx = to_torch(x)
    rng = np.random.default_rng(3)
    full, row = rng.random((2, n)) < 0.5, rng.random(n) < 0.5
    for target, mask in ((lambda a: a, full), (lambda a: a[:, ::2], row[::2]),
                         (lambda a: a.t(), full.T)):
        v = value if value != "tensor" else 0.25
        ve = ember.tensor(v) if value == "tensor" else v
        vt = torch.tensor(v) if value == "tensor" else v
        before = x.data_ptr()
        got = target(x).masked_fill_(ember.tensor(mask), ve)
        target(tx).masked_fill_(torch.tensor(mask), vt)
        assert x.data_ptr() == before and got._base is (x if got is not x else None)
        assert_same(x, tx)


def test_masked_fill_in_place_with_its_own_memory_as_the_mask():
    for lib in (ember, torch):
        x = lib.tensor([True, False, True, True, False] * 1000)
        x.masked_fill_(x, False)  # the same memory, read before each write
        assert not x.any()
    # the mask shifted over the target: read whole before any write (torch refuses this
    # partial overlap; ember's in-place ops do not check it yet)
    y = ember.tensor([True, False, True, True, False] * 1000)
    want = y[1:].masked_fill(y[:-1], False)
    y[1:].masked_fill_(y[:-1], False)
    assert_same(y[1:], to_torch(want))


def test_masked_fill_errors():
    raises_like_torch(RuntimeError, lambda lib, c: lib.zeros(3, 4).masked_fill(
        c(MASK.astype(np.int32)), 1.0))
    raises_like_torch(RuntimeError, lambda lib, c: lib.zeros(3, 4).masked_fill(
        c(MASK), lib.ones(1)))


def test_masked_fill_on_meta():
    e = ember.empty(3, 4, device="meta").masked_fill(ember.empty(4, dtype=ember.bool,
                                                                 device="meta"), 1.0)
    t = torch.empty(3, 4, device="meta").masked_fill(torch.empty(4, dtype=torch.bool,
                                                                 device="meta"), 1.0)
    assert_same(e, t)


def test_masked_select_values_and_grads():
    check_op(lambda x: x.masked_select(_e(MASK)), lambda x: x.masked_select(_t(MASK)),
             rand_array((3, 4), np.float64))
    check_op(lambda x: ember.masked_select(x, _e(MASK)), lambda x: torch.masked_select(x, _t(MASK)),
             rand_array((4,), np.float64))  # input broadcast to the mask: grads sum back
    raises_like_torch(RuntimeError, lambda lib, c: lib.zeros(3, 4).masked_select(
        c(MASK.astype(np.uint8))))


def test_masked_scatter_values_and_grads():
    n = int(MASK.sum())
    check_op(lambda x, s: x.masked_scatter(_e(MASK), s),
             lambda x, s: x.masked_scatter(_t(MASK), s),
             rand_array((3, 4), np.float64), rand_array((n + 3,), np.float64, seed=3))
    check_op(lambda x, s: x.masked_scatter(_e(MASK), s),
             lambda x, s: x.masked_scatter(_t(MASK), s),
             rand_array((4,), np.float64), rand_array((3, 4), np.float64, seed=3))
    both(lambda lib, c: lib.zeros(3, 4).masked_scatter_(c(MASK), lib.ones(12)))


def test_masked_scatter_errors():
    raises_like_torch(RuntimeError, lambda lib, c: lib.zeros(3, 4).masked_scatter(
        c(MASK), lib.ones(1)))
    raises_like_torch(RuntimeError, lambda lib, c: lib.zeros(3, 4).masked_scatter(
        c(MASK), lib.ones(12, dtype=lib.float64)))


# --- take ------------------------------------------------------------------------------------

def test_take_values_grads_and_errors():
    idx = np.array([[0, 11], [-12, 3], [3, 3]])
    check_op(lambda x: ember.take(x, _e(idx)), lambda x: torch.take(x, _t(idx)),
             rand_array((3, 4), np.float64))
    check_op(lambda x: x.t().take(_e(idx)), lambda x: x.t().take(_t(idx)), rand_array((3, 4)))
    raises_like_torch(IndexError, lambda lib, c: lib.zeros(3, 4).take(c(np.array([12]))))
    raises_like_torch(IndexError, lambda lib, c: lib.zeros(3, 4).take(c(np.array([-13]))))


# --- result layouts (cpu and meta) ---------------------------------------------------------

LAYOUT_CASES = {
    "masked_fill": lambda l, t, d: t.masked_fill(l.ones(4, 3, dtype=l.bool, device=d), 1.0),
    "index_select": lambda l, t, d: t.index_select(1, l.tensor([1, 0], device=d)),
    "index_add": lambda l, t, d: t.index_add(0, l.tensor([1, 0], device=d), l.ones(2, 3, device=d)),
    "index_copy": lambda l, t, d: t.index_copy(0, l.tensor([1, 0], device=d),
                                               l.ones(2, 3, device=d)),
    "index_fill": lambda l, t, d: t.index_fill(0, l.tensor([1, 0], device=d), 2.0),
    "index_put": lambda l, t, d: t.index_put((l.tensor([1, 0], device=d),),
                                             l.tensor(1.0, device=d)),
    "scatter": lambda l, t, d: t.scatter(0, l.tensor([[1, 0, 0]], device=d), 1.0),
    "scatter_add": lambda l, t, d: t.scatter_add(0, l.tensor([[1, 0, 0]], device=d),
                                                 l.ones(1, 3, device=d)),
    "scatter_reduce": lambda l, t, d: t.scatter_reduce(0, l.tensor([[1, 0, 0]], device=d),
                                                       l.ones(1, 3, device=d), "amax"),
    "gather": lambda l, t, d: t.gather(0, l.tensor([[1, 0, 0]], device=d)),
    "take_along_dim": lambda l, t, d: l.take_along_dim(t, l.tensor([[1, 0, 0]], device=d), 0),
}


@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize("name", list(LAYOUT_CASES))
def test_result_layout_of_transposed_input_matches_torch(name, device):
    fn = LAYOUT_CASES[name]
    x = rand_array((3, 4))
    te = ember.tensor(x).to(device).t()
    tt = torch.tensor(x).to(device).t()
    assert_same(fn(ember, te, device), fn(torch, tt, device), check_stride=True)


def test_masked_scatter_result_is_contiguous_like_torch():
    x = rand_array((3, 4))
    m = x > 0
    assert_same(_e(x).t().masked_scatter(_e(m).t(), ember.ones(12)),
                _t(x).t().masked_scatter(_t(m).t(), torch.ones(12)), check_stride=True)


# --- in-place variants under autograd --------------------------------------------------------

INPLACE_CASES = {
    "masked_fill_": lambda l, c, y, s: y.masked_fill_(c(MASK), s.sum()),
    "index_add_": lambda l, c, y, s: y.index_add_(0, c(np.array([2, 0, 2])), s, alpha=2),
    "index_copy_": lambda l, c, y, s: y.index_copy_(0, c(np.array([2, 0, 1])), s),
    "index_fill_": lambda l, c, y, s: y.index_fill_(1, c(np.array([3, 1])), s.sum()),
    "index_put_": lambda l, c, y, s: y.index_put_((c(np.array([0, 2, 0])),), s, accumulate=True),
    "scatter_": lambda l, c, y, s: y.scatter_(0, c(np.array([[2, 1, 0, 2]])), s[:1]),
    "scatter_add_": lambda l, c, y, s: y.scatter_add_(0, c(np.array([[0, 0, 1, 2]])), s[:1]),
    "scatter_reduce_": lambda l, c, y, s: y.scatter_reduce_(
        0, c(np.array([[0, 0, 1, 2], [0, 1, 1, 2]])), s[:2], "amax", include_self=False),
    "masked_scatter_": lambda l, c, y, s: y.masked_scatter_(c(MASK), s),
}


@pytest.mark.parametrize("name", list(INPLACE_CASES))
def test_inplace_variants_record_the_graph(name):
    fn = INPLACE_CASES[name]

    def run(lib, c, x, s):
        y = x * 1
        out = fn(lib, c, y, s)
        assert out is y
        return y * 2

    check_op(lambda x, s: run(ember, _e, x, s), lambda x, s: run(torch, _t, x, s),
             rand_array((3, 4), np.float64), rand_array((3, 4), np.float64, seed=11))


@pytest.mark.parametrize("name", list(INPLACE_CASES))
def test_inplace_variants_without_grad_write_into_memory(name):
    fn = INPLACE_CASES[name]
    x, s = rand_array((3, 4)), rand_array((3, 4), seed=2)
    e, t = _e(x), _t(x)
    ptr, version = e.data_ptr(), e._version
    fn(ember, _e, e, _e(s))
    fn(torch, _t, t, _t(s))
    assert_same(e, t)
    assert e.data_ptr() == ptr and e._version > version


# --- every dtype -------------------------------------------------------------------------------

DTYPE_CASES = {
    "getitem": lambda l, t: t[l.tensor([2, 0, 2])],
    "getitem_mask": lambda l, t: t[l.tensor([True, False, True])],
    "index_select": lambda l, t: t.index_select(1, l.tensor([3, 0, 3])),
    "gather": lambda l, t: t.gather(1, l.tensor([[0, 3], [1, 1], [2, 0]])),
    "scatter": lambda l, t: t.scatter(1, l.tensor([[0, 3], [1, 2], [2, 0]]), t[:, :2]),
    "scatter_add": lambda l, t: t.scatter_add(1, l.tensor([[0, 0], [1, 1], [2, 0]]), t[:, :2]),
    "scatter_reduce_amax": lambda l, t: t.scatter_reduce(
        1, l.tensor([[0, 0], [1, 1], [2, 0]]), t[:, :2], "amax"),
    "scatter_reduce_mean": lambda l, t: t.scatter_reduce(
        1, l.tensor([[0, 0], [1, 1], [2, 0]]), t[:, :2], "mean", include_self=False),
    "index_add": lambda l, t: t.index_add(0, l.tensor([0, 0]), t[:2]),
    "index_copy": lambda l, t: t.index_copy(0, l.tensor([2, 0]), t[:2]),
    "index_fill": lambda l, t: t.index_fill(0, l.tensor([2, 0]), 1),
    "index_put_acc": lambda l, t: t.index_put((l.tensor([0, 0]),), t[1], accumulate=True),
    "masked_fill": lambda l, t: t.masked_fill(l.tensor([True, False, True, False]), 1),
    "masked_select": lambda l, t: t.masked_select(l.tensor([True, False, True, False])),
    "masked_scatter": lambda l, t: t.masked_scatter(l.tensor([True, False, True, False]),
                                                    t.flatten()),
    "take": lambda l, t: t.take(l.tensor([0, 11, 5])),
}


@pytest.mark.parametrize("dtype", [e for e, _ in DTYPE_PAIRS], ids=lambda d: d.name)
@pytest.mark.parametrize("name", list(DTYPE_CASES))
def test_every_dtype_matches_torch_or_raises_alike(name, dtype):
    fn = DTYPE_CASES[name]
    e = ember.tensor(rand_array((3, 4), np.float64, low=-3, high=3)).to(dtype)
    t = to_torch(e)
    try:
        expected = fn(torch, t)
    except (RuntimeError, NotImplementedError) as err:
        with pytest.raises(type(err)):
            fn(ember, e)
        return
    assert_same(fn(ember, e), expected)


SECOND_ORDER = {
    "getitem": lambda l, c, x: (x * x)[c(np.array([1, 1, 0]))],
    "getitem_mask": lambda l, c, x: (x * x)[c(MASK[:2, :3])],
    "index_select": lambda l, c, x: (x * x).index_select(1, c(np.array([2, 2, 0]))),
    "gather": lambda l, c, x: (x * x).gather(1, c(np.array([[2, 2], [0, 1]]))),
    "scatter_add": lambda l, c, x: (x * x).scatter_add(0, c(np.array([[1, 1, 0]])), x[:1] * x[1:]),
    "scatter_reduce_mean": lambda l, c, x: (x * x).scatter_reduce(
        0, c(np.array([[1, 1, 0]])), x[:1] * x[1:], "mean"),
    "index_add": lambda l, c, x: (x * x).index_add(0, c(np.array([1, 1])), x * 2),
    "masked_fill": lambda l, c, x: (x * x).masked_fill(c(MASK[:2, :3]), 0.0),
    "masked_select": lambda l, c, x: (x * x).masked_select(c(MASK[:2, :3])),
    "masked_scatter": lambda l, c, x: (x * x).masked_scatter(c(MASK[:2, :3]), x.exp()),
    "take": lambda l, c, x: (x * x).take(c(np.array([5, 5, 0]))),
    "index_put": lambda l, c, x: (x * x).index_put((c(np.array([0, 0])),), x[1] * x[0],
                                                   accumulate=True),
}


@pytest.mark.parametrize("name", list(SECOND_ORDER))
def test_double_backward_matches_torch(name):
    fn = SECOND_ORDER[name]
    a = rand_array((2, 3), np.float64)
    results = []
    for lib, c in ((ember, _e), (torch, _t)):
        x = lib.tensor(a, requires_grad=True)
        (g,) = lib.autograd.grad((fn(lib, c, x) ** 2).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g ** 2).sum(), x)
        results.append((g, gg))
    assert_same(*results)


EMPTY_CASES = {
    "index_select": lambda l, c, x: x.index_select(0, c(np.zeros(0, np.int64))),
    "gather": lambda l, c, x: x.gather(1, c(np.zeros((3, 0), np.int64))),
    "scatter": lambda l, c, x: x.scatter(1, c(np.zeros((3, 0), np.int64)), x[:, :0]),
    "scatter_add": lambda l, c, x: x.scatter_add(0, c(np.zeros((0, 4), np.int64)), x[:0]),
    "index_add": lambda l, c, x: x.index_add(0, c(np.zeros(0, np.int64)), x[:0]),
    "masked_select": lambda l, c, x: x.masked_select(c(np.zeros((3, 4), bool))),
    "masked_fill_empty": lambda l, c, x: x[:, :0].masked_fill(c(np.zeros((3, 0), bool)), 1.0),
    "take": lambda l, c, x: x.take(c(np.zeros((2, 0), np.int64))),
    "getitem_empty": lambda l, c, x: x[c(np.zeros((0, 2), np.int64))],
}


@pytest.mark.parametrize("name", list(EMPTY_CASES))
def test_empty_indices_and_results_match_torch(name):
    fn = EMPTY_CASES[name]
    check_op(lambda x: fn(ember, _e, x), lambda x: fn(torch, _t, x),
             rand_array((3, 4), np.float64))


# --- found by the differential fuzzer (python -m fuzz) -----------------------------------

@pytest.mark.parametrize("call", [
    lambda L: L.ones(0, 1).index_select(0, L.tensor([0])),    # RuntimeError, not IndexError
    lambda L: L.ones(2, 0).index_select(-1, L.tensor([0])),
    lambda L: L.ones(0).index_select(0, L.tensor([0])),       # 1-D: IndexError, as before
    lambda L: L.tensor(1.0).index_select(0, L.tensor([0, 0])),
    lambda L: L.tensor(1.0).index_select(0, L.tensor([], dtype=L.int64)),
    lambda L: L.ones(3).masked_select(L.ones(4, dtype=L.bool)),  # was NumPy's ValueError
])
def test_index_select_and_masked_select_errors(call):
    from helpers import same_error

    same_error(call)


def test_index_select_on_empty_and_0d_inputs():
    from helpers import same_result

    same_result(lambda L: L.ones(0, 1).index_select(0, L.tensor([], dtype=L.int64)))
    same_result(lambda L: L.tensor(1.5).index_select(0, L.tensor([0])))


def test_index_add_copy_and_fill_nodes_and_gradients_match_torch():
    # one primitive for the three (accumulate / fill params); the nodes keep PyTorch's names,
    # including index_fill's two overloads (a number, a 0-d tensor value)
    def run(m):
        x = m.arange(6.0, dtype=m.float64).reshape(2, 3).requires_grad_()
        s = m.ones(2, 2, dtype=m.float64, requires_grad=True)
        v = m.tensor(5.0, dtype=m.float64, requires_grad=True)
        i = m.tensor([0, 2])
        outs = (x.index_add(1, i, s, alpha=2), x.index_copy(1, i, s), x.index_fill(1, i, v),
                x.index_fill(1, i, 3.0))
        sum((o * o).sum() for o in outs).backward()
        return [type(o.grad_fn).__name__ for o in outs], outs, (x.grad, s.grad, v.grad)

    names, outs, grads = run(ember)
    t_names, t_outs, t_grads = run(torch)
    assert names == t_names == ["IndexAddBackward0", "IndexCopyBackward0", "IndexFillBackward1",
                                "IndexFillBackward0"]
    for a, b in zip(outs + grads, t_outs + t_grads):
        assert_same(a, b)


# --- 0-d operands, found by the differential fuzzer (python -m fuzz) ---------------------

@pytest.mark.parametrize("call", [
    lambda L: L.tensor(0.091).index_fill(-1, L.zeros(0, dtype=L.int64), 5.0),
    lambda L: L.tensor(2.0).index_fill(0, L.tensor([0]), 5.0),
    lambda L: L.tensor(2.0).index_add(0, L.tensor([0]), L.tensor(1.0)),
    lambda L: L.tensor(2.0).index_copy(0, L.tensor([0]), L.tensor(1.0)),
])
def test_zero_dim_index_fill_add_copy(call):
    assert_same(call(ember), call(torch))


@pytest.mark.parametrize("call", [
    lambda L: L.tensor(2).index_add(0, L.zeros(0, dtype=L.int64), L.tensor(1)),
    lambda L: L.tensor(True).index_add_(0, L.zeros(0, dtype=L.int64), L.tensor(False)),
    lambda L: L.tensor(2.0).index_copy(-1, L.zeros(0, dtype=L.int64), L.tensor(1.0)),
    lambda L: L.ones(3).index_copy(0, L.zeros(0, dtype=L.int64), L.tensor(1.0)),
    # (the scalar-source check comes before the dtype check, as in PyTorch)
    lambda L: L.ones(3).index_copy(0, L.zeros(0, dtype=L.int64), L.tensor(1, dtype=L.int8)),
    # (and index_add's dtype check before its 0-d check)
    lambda L: L.tensor(3).index_add(-1, L.zeros(0, dtype=L.int64), L.tensor(1.5)),
])
def test_zero_dim_index_add_copy_errors(call):
    same_error(call)


@pytest.mark.parametrize("shape", [(0, 0, 1), (0, 3), (3, 0), (0, 3, 0), (2, 0, 3)])
@pytest.mark.parametrize("op", ["index_fill", "index_copy"])
def test_index_writes_into_empty_tensors_as_torch(shape, op):
    # PyTorch's kernel refuses an empty indexed dim only when the slice it restrides to has
    # elements; otherwise it writes nothing and checks no bound
    for d in range(len(shape)):
        for i in ([0], [5]):
            got = []
            for m in (ember, torch):
                x, idx = m.zeros(shape), m.tensor(i)
                src = m.zeros(shape[:d] + (1,) + shape[d + 1:])
                try:
                    r = m.index_fill(x, d, idx, 0) if op == "index_fill" else \
                        m.index_copy(x, d, idx, src)
                    got.append(tuple(r.shape))
                except (RuntimeError, IndexError) as e:
                    got.append(type(e).__name__)
            assert got[0] == got[1], (d, i)


# --- index_reduce -----------------------------------------------------------------------------

IR = pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")


@IR
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32", "float16"])
def test_index_reduce_matches_torch(dtype, reduce, include_self):
    # repeated indices, a slot no index names, an int32 index; integer means divide as torch's
    # (floor); ties among the maxima share the gradient as in torch
    rng = np.random.default_rng(0)
    x = np.round(rng.standard_normal((5, 4, 3)) * 3)
    src = np.round(rng.standard_normal((5, 6, 3)) * 3)
    index = np.array([0, 2, 0, 3, 2, 2])
    for dim, idx_dtype in ((1, "int64"), (1, "int32")):
        e = ember.tensor(x).to(getattr(ember, dtype))
        t = torch.tensor(x).to(getattr(torch, dtype))
        es = ember.tensor(src).to(getattr(ember, dtype))
        ts = torch.tensor(src).to(getattr(torch, dtype))
        ei = ember.tensor(index).to(getattr(ember, idx_dtype))
        ti = torch.tensor(index).to(getattr(torch, idx_dtype))
        got = ember.index_reduce(e, dim, ei, es, reduce, include_self=include_self)
        assert_same(got, torch.index_reduce(t, dim, ti, ts, reduce, include_self=include_self))
        assert_same(e.index_reduce_(dim, ei, es, reduce, include_self=include_self),
                    t.index_reduce_(dim, ti, ts, reduce, include_self=include_self))
    if dtype == "float64":
        check_op(lambda a, b: a.index_reduce(0, ember.tensor([1, 0, 1, 4, 1]), b, reduce,
                                             include_self=include_self),
                 lambda a, b: a.index_reduce(0, torch.tensor([1, 0, 1, 4, 1]), b, reduce,
                                             include_self=include_self), x, src[:, :4])


@IR
@pytest.mark.parametrize("call", [
    lambda m, s: s.index_reduce(0, m.tensor([0, 2, 0]), m.ones(3, 3), "sum"),
    lambda m, s: s.index_reduce(0, m.tensor([[0, 2, 0]]), m.ones(3, 3), "prod"),
    lambda m, s: s.index_reduce(0, m.tensor([0, 2, 0]), m.ones(3, 3, dtype=m.float64), "prod"),
    lambda m, s: s.index_reduce(0, m.tensor([0.0, 2.0, 0.0]), m.ones(3, 3), "prod"),
    lambda m, s: s.index_reduce(0, m.tensor([0, 2, 7]), m.ones(3, 3), "prod"),
    lambda m, s: s.index_reduce_(0, m.tensor([0, -1, 0]), m.ones(3, 3), "amax"),
    lambda m, s: s.index_reduce(0, m.tensor([0, 2]), m.ones(3, 3), "prod"),
    lambda m, s: s.index_reduce(0, m.tensor([0, 2, 0]), m.ones(3, 4), "mean"),
    lambda m, s: m.zeros(()).index_reduce(0, m.tensor([0, 0]), m.tensor([1.0, 2.0]), "amin"),
    lambda m, s: m.zeros(3).index_reduce(0, m.tensor([0, 2, 0]), m.tensor(1.0), "amin"),
], ids=range(10))
def test_index_reduce_errors_as_torch(call):
    with pytest.raises(Exception) as et:
        call(torch, torch.zeros(5, 3))
    with pytest.raises(type(et.value)) as ee:
        call(ember, ember.zeros(5, 3))
    assert str(ee.value) == str(et.value)


# (index_reduce's "in beta" warning, once a process at the user's line as torch's:
# tests/test_user_warnings.py, in a fresh interpreter)


@pytest.mark.parametrize("count", [25, 1500])
@pytest.mark.parametrize("dim", [0, 1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_index_add_of_wide_slices_adds_in_order_as_torch(dim, dtype, count):
    # wide slices are added a vectorised slice at a time (ops/index.py `add_slices`: the
    # j-th slice of every index at once), each index's slices in order: torch's index_add_
    # and np.add.at give the same bits, indices repeated a few or a hundred times, signed
    # zeros, NaN and a base that is not zero included
    import torch

    rng = np.random.default_rng(dim)
    shape = (6, 70, 5) if dim != 1 else (20, 9, 12)
    base = (rng.standard_normal(shape) * 1e3).astype(dtype)
    idx = rng.integers(0, shape[dim], count)
    src_shape = shape[:dim] + (count,) + shape[dim + 1:]
    src = (rng.standard_normal(src_shape) * 10.0 ** rng.integers(-4, 4, src_shape)).astype(dtype)
    src[rng.random(src_shape) < 0.1] = -0.0
    src.reshape(-1)[::97] = np.nan
    got = ember.tensor(base).index_add_(dim, ember.tensor(idx), ember.tensor(src)).numpy()
    want = torch.tensor(base).index_add_(dim, torch.tensor(idx), torch.tensor(src)).numpy()
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    # and index_select's gradient (an index_add into zeros) is np.add.at's
    x = ember.tensor(base, requires_grad=True)
    x.index_select(dim, ember.tensor(idx)).backward(ember.tensor(src))
    ref = np.zeros(shape, dtype)
    np.add.at(ref, (slice(None),) * dim + (idx,), src)
    np.testing.assert_array_equal(x.grad.numpy(), ref)
    np.testing.assert_array_equal(np.signbit(x.grad.numpy()), np.signbit(ref))


def _out_calls(L, out):
    x, i, src = L.zeros(4, 2), L.tensor([0, 2, 2]), L.ones(3, 2)
    return {
        "index_add": lambda: L.index_add(x, 0, i, src, out=out),
        "index_copy": lambda: L.index_copy(x, 0, L.tensor([0, 1, 3]), src, out=out),
        "index_reduce": lambda: L.index_reduce(x, 0, i, src, "amax", out=out),
        "scatter": lambda: L.scatter(x, 0, i[:, None].expand(3, 2), src, out=out),
        "scatter_add": lambda: L.scatter_add(x, 0, i[:, None].expand(3, 2), src, out=out),
        "scatter_reduce": lambda: L.scatter_reduce(x, 0, i[:, None].expand(3, 2), src, "sum",
                                                   out=out),
        "index_select": lambda: L.index_select(x, 0, i, out=out),
        "masked_select": lambda: L.masked_select(x, x == 0, out=out),
    }


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("dtype", ["float64", "int64", "float32"])
@pytest.mark.parametrize("name", sorted(_out_calls(torch, None)))
def test_index_ops_out_must_have_selfs_dtype(name, dtype):
    # (PyTorch's structured kernels cast nothing into `out`)
    res = []
    for L in (ember, torch):
        out = L.empty(0, dtype=getattr(L, dtype))
        try:
            res.append(_out_calls(L, out)[name]())
        except RuntimeError as e:
            res.append(str(e))
    if isinstance(res[1], str):
        assert res[0] == res[1]
    else:  # (sums of ones: exact)
        assert_same(res[0], res[1])


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("shape, dim", [((64,), 0), ((64, 8), 1), ((64, 8), 0)])
def test_index_add_alpha_on_16_bits_rounds_the_product_as_torch(dtype, shape, dim):
    """16-bit `index_add(alpha=)` through PyTorch's loop kernel: alpha read in the dtype, the
    product rounded to it, then the sum (ml_dtypes 0.6 gave a float32 product for bfloat16,
    0.7 a bfloat16 one: now explicit). (A (8, 64) input along dim 0 is one of PyTorch's
    slice-wise `add_` paths, fused in float32: not this.)"""
    rng = np.random.default_rng(3)
    a, s = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
    idx = np.arange(shape[dim])[::-1].copy()
    got, want = (L.tensor(a).to(getattr(L, dtype)).index_add(
        dim, L.tensor(idx), L.tensor(s).to(getattr(L, dtype)), alpha=0.37).float().numpy()
        for L in (ember, torch))
    np.testing.assert_array_equal(got, want)  # (two single roundings, in C's order)
