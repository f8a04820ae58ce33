"""sort / argsort / topk / kthvalue / unique / searchsorted / bucketize / bincount / histc
against torch."""

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
    same_message,
    to_torch,
)


def _e(a):
    return ember.tensor(a)


def _t(a):
    return torch.tensor(a)


def both(fn):
    out_e, out_t = fn(ember, _e), fn(torch, _t)
    assert_same(out_e, out_t)
    return out_e


def raises_like_torch(exc, fn):
    with pytest.raises(exc):
        fn(torch, _t)
    with pytest.raises(exc):
        fn(ember, _e)


WITH_NAN = np.array([[3.0, np.nan, 1.0, -np.inf], [0.5, 2.0, np.nan, 2.5]])
TIES = np.array([[2, 1, 2, 0, 1, 2], [5, 5, 5, 1, 1, 0]], np.int32)


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_sort_values_indices_and_grads(dim, descending):
    check_op(lambda x: x.sort(dim, descending), lambda x: x.sort(dim, descending),
             rand_array((3, 4, 5), np.float64))


@pytest.mark.parametrize("descending", [False, True])
def test_stable_sort_keeps_ties_in_order(descending):
    for dim in (0, 1):
        both(lambda lib, c, d=dim: lib.sort(c(TIES), dim=d, descending=descending, stable=True))
        both(lambda lib, c, d=dim: lib.argsort(c(TIES), dim=d, descending=descending,
                                              stable=True))


def _tied(shape, dtype, seed):
    """Few distinct values (so many ties), with NaN and -0.0 among the floats."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 3, shape).astype(np.float64)
    if np.dtype(dtype).kind == "f" or dtype == "bfloat16":
        x[rng.random(shape) < 0.15] = np.nan
        x[x == 0] = np.where(rng.random(shape) < 0.5, -0.0, 0.0)[x == 0]
    return x


def _same_order(e, t):
    """Same indices, and the same values bit for bit (-0.0 before or after 0.0, too)."""
    assert e.indices.tolist() == t.indices.tolist()
    ev, tv = e.values.double().numpy(), t.values.double().numpy()
    np.testing.assert_array_equal(ev, tv)
    np.testing.assert_array_equal(np.signbit(ev) & (ev == 0), np.signbit(tv) & (tv == 0))


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "float32", "float64",
                                   "float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(8,), (17,), (300,), (3, 90), (40, 5)])
def test_unstable_sort_leaves_ties_where_torch_does(dtype, shape):
    # NOTE: PyTorch's CPU sort with stable=False is libstdc++'s std::sort (introsort on
    # (value, index) pairs), whose tie order ember replays.
    x = _tied(shape, dtype, seed=sum(shape))
    if dtype == "bool":
        x = np.nan_to_num(x) > 0
    e, t = ember.tensor(x).to(getattr(ember, dtype)), torch.tensor(x).to(getattr(torch, dtype))
    for dim in range(len(shape)):
        for desc in (False, True):
            _same_order(e.sort(dim, desc), t.sort(dim, desc))
            _same_order(ember.sort(e, dim=dim, descending=desc, stable=False),
                        torch.sort(t, dim=dim, descending=desc, stable=False))
            assert (ember.argsort(e, dim, desc).tolist()
                    == torch.argsort(t, dim, desc).tolist())
            assert (e.argsort(dim=dim, descending=desc, stable=True).tolist()
                    == t.argsort(dim=dim, descending=desc, stable=True).tolist())
    em, tm = ember.msort(e).double().numpy(), torch.msort(t).double().numpy()
    np.testing.assert_array_equal(em, tm)
    np.testing.assert_array_equal(np.signbit(em) & (em == 0), np.signbit(tm) & (tm == 0))


def test_unstable_sort_tie_order_large_and_special_layouts():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 50, 40000)
    for desc in (False, True):  # 1-D int ascending from 32768 on: PyTorch's (stable) radix sort
        for n in (32767, 32768, 40000):
            _same_order(ember.tensor(x[:n]).sort(descending=desc),
                        torch.tensor(x[:n]).sort(descending=desc))
    _same_order(ember.tensor(x.reshape(1, -1)).sort(), torch.tensor(x.reshape(1, -1)).sort())
    f = rng.standard_normal(20000).astype(np.float32).round(2)
    _same_order(ember.tensor(f).sort(descending=True), torch.tensor(f).sort(descending=True))
    _same_order(ember.tensor(f[::3]).sort(), torch.tensor(f[::3]).sort())  # strided
    e, t = ember.tensor([2.0]).expand(40), torch.tensor([2.0]).expand(40)
    _same_order(e.sort(), t.sort())  # a broadcast dim: PyTorch leaves it as it is
    m = rng.integers(0, 3, (30, 20))
    _same_order(ember.tensor(m).t().sort(0), torch.tensor(m).t().sort(0))


@pytest.mark.parametrize("kernels", ["native", "numpy"])
def test_std_sort_replay_matches_the_step_by_step_one(kernels):
    # organ pipes spend median-of-3's depth budget: the heap-sort fallback runs too
    from ember.native.kernels import use
    from ember.ops import _stl_sort

    rng = np.random.default_rng(1)
    rows = [rng.integers(0, 6, 300), np.r_[np.arange(150), np.arange(150)[::-1]] // 3,
            np.r_[np.arange(201), np.arange(199)[::-1]]]
    with use(kernels):
        for k in rows:
            q = [(int(v), j) for j, v in enumerate(k)]
            _stl_sort.sort(q, 0, len(q), lambda x, y: x[0] < y[0])
            assert _stl_sort.sort_rows(k[None])[0].tolist() == [j for _, j in q]
    pipe = np.r_[np.arange(2000), np.arange(2000)[::-1]] // 2
    for desc in (False, True):
        _same_order(ember.tensor(pipe).sort(descending=desc),
                    torch.tensor(pipe).sort(descending=desc))


@pytest.mark.parametrize("largest", [True, False])
def test_topk_tie_order_like_torch(largest):
    x = _tied((6, 100), "float32", seed=3)
    for k in (1, 5, 40, 100):
        for dim, xx in ((1, x), (0, x.T.copy())):
            _same_order(ember.tensor(xx).topk(k, dim, largest),
                        torch.tensor(xx).topk(k, dim, largest))


@pytest.mark.parametrize("descending", [False, True])
def test_sort_puts_nan_last_like_torch(descending):
    both(lambda lib, c: c(WITH_NAN).sort(descending=descending))
    both(lambda lib, c: c(WITH_NAN).argsort(dim=0, descending=descending))


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.int8, np.int64, np.float16,
                                   np.float32])
def test_sort_dtypes(dtype):
    x = rand_array((4, 6), dtype, low=-5, high=5)
    both(lambda lib, c: lib.sort(c(x), stable=True))
    both(lambda lib, c: lib.sort(c(x), dim=0, descending=True, stable=True))


def test_sort_edge_shapes_and_layout():
    both(lambda lib, c: lib.sort(c(np.array(3.0))))
    both(lambda lib, c: lib.sort(c(np.zeros((2, 0)))))
    x = rand_array((3, 4))
    e, t = ember.tensor(x).t().sort(0), torch.tensor(x).t().sort(0)
    assert_same(e, t, check_stride=True)  # the result keeps the input's layout, as in torch
    check_grads(lambda a: a.t().sort(0).values * ember.arange(3.0), rand_array((3, 4)))
    assert_same(ember.msort(ember.tensor(x)), torch.msort(torch.tensor(x)))


def test_sort_on_meta_and_errors():
    e = ember.empty(3, 4, device="meta").t().sort(0)
    t = torch.empty(3, 4, device="meta").t().sort(0)
    assert_same(e, t, check_stride=True)
    raises_like_torch(RuntimeError, lambda lib, c: lib.sort(c(np.array([1 + 1j]))))
    raises_like_torch(IndexError, lambda lib, c: lib.sort(c(np.zeros(3)), 1))


def test_sort_grad_fn_name_and_indices_need_no_grad():
    x = ember.tensor(rand_array((4,)), requires_grad=True)
    v, i = x.sort()
    assert type(v.grad_fn).__name__ == "SortBackward0"
    assert not i.requires_grad
    assert not x.argsort().requires_grad


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("dim", [0, -1])
def test_topk_values_indices_and_grads(dim, largest):
    check_op(lambda x: x.topk(2, dim, largest), lambda x: x.topk(2, dim, largest),
             rand_array((4, 5), np.float64))


def test_topk_edge_cases():
    both(lambda lib, c: lib.topk(c(WITH_NAN), 2))
    both(lambda lib, c: lib.topk(c(WITH_NAN), 2, largest=False))
    both(lambda lib, c: lib.topk(c(np.arange(6.0).reshape(2, 3)), 0))
    both(lambda lib, c: lib.topk(c(np.array(2.0)), 1))
    raises_like_torch(RuntimeError, lambda lib, c: lib.topk(c(np.zeros(3)), 4))
    raises_like_torch(RuntimeError, lambda lib, c: lib.topk(c(np.zeros(3)), -1))
    e = ember.empty(3, 4, device="meta").t().topk(2, 0)
    t = torch.empty(3, 4, device="meta").t().topk(2, 0)
    assert_same(e, t, check_stride=True)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("k, dim", [(1, 0), (3, 1), (5, -1)])
def test_kthvalue_values_indices_and_grads(k, dim, keepdim):
    check_op(lambda x: x.kthvalue(k, dim, keepdim), lambda x: x.kthvalue(k, dim, keepdim),
             rand_array((5, 5), np.float64))


def test_kthvalue_edge_cases():
    both(lambda lib, c: lib.kthvalue(c(WITH_NAN), 4))
    both(lambda lib, c: lib.kthvalue(c(np.array(2.0)), 1))
    raises_like_torch(RuntimeError, lambda lib, c: lib.kthvalue(c(np.zeros((2, 3))), 4))
    raises_like_torch(RuntimeError, lambda lib, c: lib.kthvalue(c(np.zeros((2, 3))), 0))
    e = ember.empty(3, 4, device="meta").kthvalue(2, 0, True)
    t = torch.empty(3, 4, device="meta").kthvalue(2, 0, True)
    assert_same(e, t, check_stride=True)


# --- unique ---------------------------------------------------------------------------------

X_INT = np.array([[3, 1, 2], [1, 3, 3], [3, 1, 2]])


@pytest.mark.parametrize("return_inverse", [False, True])
@pytest.mark.parametrize("return_counts", [False, True])
def test_unique_matches_torch(return_inverse, return_counts):
    kw = dict(return_inverse=return_inverse, return_counts=return_counts)
    both(lambda lib, c: lib.unique(c(X_INT), **kw))
    both(lambda lib, c: c(X_INT).unique(sorted=False, **kw))
    for dim in (0, 1, -1):
        both(lambda lib, c, d=dim: lib.unique(c(X_INT), dim=d, **kw))


def test_unique_floats_bools_nans_and_zero_dim():
    both(lambda lib, c: lib.unique(c(np.array([1.0, np.nan, 2.0, np.nan, 1.0]))))
    both(lambda lib, c: lib.unique(c(np.array([True, False, True])), return_counts=True))
    both(lambda lib, c: lib.unique(c(np.array(3)), return_inverse=True))
    both(lambda lib, c: lib.unique(c(np.zeros((0,), np.float32)), return_inverse=True))


@pytest.mark.parametrize("n", [5, 17, 64, 1000])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_unique_keeps_the_sign_of_zero_torch_keeps(n, dtype):
    # -0.0 == 0.0: torch keeps the zero its std::sort puts first, which is not always the
    # first one in the input once the sort is no longer an insertion sort (past 16)
    rng = np.random.default_rng(n)
    x = rng.integers(-2, 3, n).astype(dtype)
    x[(x == 0) & (rng.random(n) < 0.5)] = -0.0
    e, t = ember.unique(_e(x)), torch.unique(_t(x))
    assert_same(e, t)
    assert np.signbit(e.numpy()).tolist() == torch.signbit(t).tolist()
    e, t = ember.unique(_e(x), return_counts=True), torch.unique(_t(x), return_counts=True)
    assert np.signbit(e[0].numpy()).tolist() == torch.signbit(t[0]).tolist()


@pytest.mark.parametrize("return_inverse", [False, True])
@pytest.mark.parametrize("return_counts", [False, True])
def test_unique_consecutive_matches_torch(return_inverse, return_counts):
    kw = dict(return_inverse=return_inverse, return_counts=return_counts)
    x = np.array([1, 1, 2, 2, 3, 1, 1, 2])
    both(lambda lib, c: lib.unique_consecutive(c(x), **kw))
    both(lambda lib, c: lib.unique_consecutive(c(x.reshape(2, 4)), **kw))
    rows = np.array([[1, 1], [1, 1], [2, 2], [1, 1]])
    both(lambda lib, c: c(rows).unique_consecutive(dim=0, **kw))
    both(lambda lib, c: c(rows).unique_consecutive(dim=1, **kw))
    both(lambda lib, c: lib.unique_consecutive(c(np.array(3)), **kw))


def test_unique_on_meta_raises_not_implemented():
    with pytest.raises(NotImplementedError):
        ember.unique(ember.empty(3, device="meta"))


# --- searchsorted / bucketize --------------------------------------------------------------

SEQ = np.array([1.0, 2.0, 2.0, 3.0, 5.0])
VALS = np.array([[0.0, 2.0, 2.5], [5.0, 6.0, np.nan]])


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("out_int32", [False, True])
def test_searchsorted_1d_boundaries(right, out_int32):
    kw = dict(right=right, out_int32=out_int32)
    both(lambda lib, c: lib.searchsorted(c(SEQ), c(VALS), **kw))
    both(lambda lib, c: lib.searchsorted(c(SEQ), 2.0, **kw))
    both(lambda lib, c: lib.searchsorted(c(SEQ), c(np.array([2, 4])), **kw))
    side = "right" if right else "left"
    both(lambda lib, c: lib.searchsorted(c(SEQ), c(VALS), side=side))


def test_searchsorted_batched_boundaries_and_sorter():
    seq = np.sort(rand_array((2, 3, 6)), axis=-1)
    vals = rand_array((2, 3, 4), seed=4)
    both(lambda lib, c: lib.searchsorted(c(seq), c(vals)))
    both(lambda lib, c: lib.searchsorted(c(seq), c(vals), right=True))
    unsorted = np.array([3.0, 1.0, 2.0])
    both(lambda lib, c: lib.searchsorted(c(unsorted), c(np.array([2.5, 0.0])),
                                         sorter=c(np.argsort(unsorted))))


@pytest.mark.parametrize("fn", [
    lambda lib, c: lib.searchsorted(c(np.zeros((2, 3))), c(np.zeros((3, 1)))),
    lambda lib, c: lib.searchsorted(c(SEQ), c(VALS), side="left", right=True),
    lambda lib, c: lib.searchsorted(c(SEQ), c(VALS), side="middle"),
    lambda lib, c: lib.searchsorted(c(np.array(1.0)), c(VALS)),
    lambda lib, c: lib.bucketize(c(VALS), c(np.zeros((2, 3)))),
])
def test_searchsorted_errors(fn):
    raises_like_torch(RuntimeError, fn)


@pytest.mark.parametrize("sorter", [
    np.array([0, 1]),  # not the boundaries' shape
    np.array([[0, 1, 2, 3, 4]]),  # same numel, another shape
    np.array([0, 1, 2, 3, 4], np.int32),  # not int64
    np.array([0.0, 1.0, 2.0, 3.0, 4.0]),  # not int64 either
    np.array([0, 1, 2, 3, 5]),  # past the end
    np.array([0, -1, 2, 3, 4]),  # negative
])
def test_searchsorted_refuses_a_bad_sorter_in_torchs_words(sorter):
    def call(lib, c):
        return lib.searchsorted(c(SEQ), c(VALS[0]), sorter=c(sorter))
    with pytest.raises(RuntimeError) as want:
        call(torch, _t)
    with pytest.raises(RuntimeError) as got:
        call(ember, _e)
    assert str(got.value) == str(want.value)


def test_searchsorted_checks_the_sorter_before_the_boundaries_shape():
    # batched boundaries whose leading dims do not match the values: the sorter is read first
    seq, vals = np.zeros((2, 4)), np.zeros((3, 1))
    for sorter in (np.array([0, 1]), np.array([[0, 1, 2, 9]] * 2)):
        with pytest.raises(RuntimeError) as want:
            torch.searchsorted(_t(seq), _t(vals), sorter=_t(sorter))
        with pytest.raises(RuntimeError) as got:
            ember.searchsorted(_e(seq), _e(vals), sorter=_e(sorter))
        assert str(got.value) == str(want.value)


@pytest.mark.parametrize("right", [False, True])
def test_bucketize_matches_torch(right):
    both(lambda lib, c: lib.bucketize(c(VALS), c(SEQ), right=right))
    both(lambda lib, c: lib.bucketize(3, c(SEQ), right=right, out_int32=True))
    both(lambda lib, c: lib.bucketize(c(np.array([3, 0, 9])), c(SEQ), right=right))


SORT_DTYPE_CASES = {
    "sort": lambda l, t: t.sort(stable=True),
    "argsort_desc": lambda l, t: t.argsort(descending=True, stable=True),
    "topk": lambda l, t: t.topk(2),
    "kthvalue": lambda l, t: t.kthvalue(2),
    "unique": lambda l, t: l.unique(t, return_counts=True, return_inverse=True),
    "unique_dim": lambda l, t: l.unique(t, dim=1),
    "unique_consecutive": lambda l, t: l.unique_consecutive(t, return_counts=True),
    "searchsorted": lambda l, t: l.searchsorted(t.flatten().sort().values, t),
}


@pytest.mark.parametrize("dtype", [e for e, _ in DTYPE_PAIRS], ids=lambda d: d.name)
@pytest.mark.parametrize("name", list(SORT_DTYPE_CASES))
def test_every_dtype_matches_torch_or_raises_alike(name, dtype):
    fn = SORT_DTYPE_CASES[name]
    # distinct values (a permutation) so that ties cannot reorder indices
    values = np.random.default_rng(0).permutation(12).reshape(3, 4) - 4
    e = ember.tensor(values.astype(np.float64)).to(dtype)
    t = to_torch(e)
    try:
        expected = fn(torch, t)
    except (RuntimeError, NotImplementedError) as err:
        with pytest.raises(type(err)):
            fn(ember, e)
        return
    assert_same(fn(ember, e), expected)


# --- bincount / histc ------------------------------------------------------------------------

@pytest.mark.parametrize("weights", [None, np.float32, np.float64, np.float16, np.int64])
def test_bincount_matches_torch(weights):
    x = np.array([0, 3, 3, 1, 7])
    w = None if weights is None else rand_array((5,), weights, low=0, high=4)
    both(lambda lib, c: lib.bincount(c(x), None if w is None else c(w)))
    both(lambda lib, c: c(x).bincount(minlength=10))
    both(lambda lib, c: lib.bincount(c(np.array([], np.int64))))


@pytest.mark.parametrize("fn, exc", [
    (lambda lib, c: lib.bincount(c(np.array([0, -1]))), RuntimeError),
    (lambda lib, c: lib.bincount(c(np.array([[0, 1]]))), RuntimeError),
    (lambda lib, c: lib.bincount(c(np.array([0.0]))), NotImplementedError),
    (lambda lib, c: lib.bincount(c(np.array([0, 1])), c(np.array([1.0]))), RuntimeError),
    (lambda lib, c: lib.histc(c(np.array([1, 2]))), NotImplementedError),
    (lambda lib, c: lib.histc(c(np.array([1.0])), bins=0), RuntimeError),
    (lambda lib, c: lib.histc(c(np.array([1.0])), min=2, max=1), RuntimeError),
    (lambda lib, c: lib.histc(c(np.array([1.0, np.inf]))), RuntimeError),
])
def test_bincount_histc_errors(fn, exc):
    raises_like_torch(exc, fn)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_histc_matches_torch(dtype):
    x = rand_array((200,), dtype, low=-3, high=3)
    both(lambda lib, c: lib.histc(c(x), bins=7, min=-2, max=2.5))
    both(lambda lib, c: c(x).histc(bins=10))
    edges = np.array([0.0, 1.0, 1.0, 3.0, 2.999], dtype)
    both(lambda lib, c: lib.histc(c(edges), bins=3, min=0, max=3))
    both(lambda lib, c: lib.histc(c(np.array([1.0, 1.0], dtype)), bins=4))


@pytest.mark.parametrize("name", ["sort", "topk", "kthvalue"])
def test_double_backward_matches_torch(name):
    fns = {"sort": lambda x: (x * x).sort(1, descending=True).values,
           "topk": lambda x: (x * x).topk(2, 0).values,
           "kthvalue": lambda x: (x * x).kthvalue(2, 1).values}
    a = rand_array((3, 4), np.float64)
    results = []
    for lib in (ember, torch):
        x = lib.tensor(a, requires_grad=True)
        (g,) = lib.autograd.grad((fns[name](x) ** 2).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g ** 2).sum(), x)
        results.append((g, gg))
    assert_same(*results)


# --- found by the differential fuzzer (python -m fuzz) -----------------------------------

@pytest.mark.parametrize("call", [
    lambda L: L.kthvalue(L.ones(2, 0), 1, dim=-1),  # IndexError, not k out of range
    lambda L: L.ones(0, 3, 3, dtype=L.bool).kthvalue(1, dim=0),  # before the bool refusal
])
def test_kthvalue_over_an_empty_dim(call):
    from helpers import same_error

    same_error(call)


@pytest.mark.parametrize("seed", range(40))
def test_searchsorted_replays_atens_binary_search(seed):
    # NaN compares false both ways in ATen's search: a NaN value goes past every boundary, a
    # NaN boundary is stepped over where the halving meets it; an unsorted sequence gives
    # whatever the halving finds. NumPy's search (NaN sorts last) differs in all three.
    rng = np.random.default_rng(seed)
    m, k = int(rng.integers(0, 12)), int(rng.integers(1, 9))
    lead = [int(rng.integers(1, 4))] if seed % 3 == 0 else []
    seq = np.sort(rng.integers(-3, 4, lead + [m]).astype(float), axis=-1)
    if seed % 4 == 1:
        seq = rng.permutation(seq.reshape(-1)).reshape(seq.shape)  # unsorted
    vals = rng.integers(-4, 5, lead + [k]).astype(float)
    name = ("float32", "float64", "int64", "bfloat16")[seed % 4]
    if not name.startswith("int"):
        seq[rng.random(seq.shape) < 0.25] = np.nan
        vals[rng.random(vals.shape) < 0.25] = np.nan
    for kw in ({}, {"right": True}, {"side": "right", "out_int32": True}):
        e = ember.searchsorted(ember.tensor(seq).to(getattr(ember, name)),
                               ember.tensor(vals).to(getattr(ember, name)), **kw)
        t = torch.searchsorted(torch.tensor(seq).to(getattr(torch, name)),
                               torch.tensor(vals).to(getattr(torch, name)), **kw)
        assert_same(e, t)
    if not lead:
        sorter = rng.permutation(m)
        e = ember.searchsorted(ember.tensor(seq), ember.tensor(vals), sorter=ember.tensor(sorter))
        t = torch.searchsorted(torch.tensor(seq), torch.tensor(vals), sorter=torch.tensor(sorter))
        assert_same(e, t)
        assert_same(ember.bucketize(ember.tensor(vals), ember.tensor(seq), right=True),
                    torch.bucketize(torch.tensor(vals), torch.tensor(seq), right=True))


def test_searchsorted_out_dtype_must_match_out_int32():
    for out, flag in (("int32", False), ("float32", False), ("int64", True)):
        for fn in (lambda L, o, f: L.searchsorted(L.tensor([1.0, 2.0]), L.tensor([1.5]),
                                                  out_int32=f, out=L.empty(1, dtype=o)),
                   lambda L, o, f: L.bucketize(L.tensor([1.5]), L.tensor([1.0, 2.0]),
                                               out_int32=f, out=L.empty(1, dtype=o))):
            same_message(lambda L, fn=fn, o=out, f=flag: fn(L, getattr(L, o), f))


def test_unique_dim_must_be_an_int():
    for dim in (0.5, True):
        same_message(lambda L, d=dim: L.unique(L.arange(4), dim=d), TypeError)
        same_message(lambda L, d=dim: L.unique_consecutive(L.arange(4), dim=d), TypeError)
    assert_same(ember.unique(ember.arange(4), dim=ember.tensor(0)),
                torch.unique(torch.arange(4), dim=torch.tensor(0)))


# --- unique: which tied value is kept, and where NaNs go ---------------------------------

def _zeros_and_nans(shape, seed, nan=0.2):
    rng = np.random.default_rng(seed)
    x = (rng.integers(0, 3, shape) / 4).astype(np.float32)
    x[rng.random(shape) < 0.3] = -0.0
    x[rng.random(shape) < nan] = np.nan
    return x


def _same_unique(e, t):
    """Same values (the sign of each zero too), inverse and counts: exact, as unique only
    copies values."""
    for a, b in zip(e, t):
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.tolist()) == str(b.tolist())
    # (the sign of zeros only: torch's float -> bfloat16 cast gives its NaNs a set sign bit)
    a, b = e[0].float().numpy(), t[0].float()
    assert (np.signbit(a) & ~np.isnan(a)).tolist() == (b.signbit() & ~b.isnan()).tolist()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_unique_places_each_nan_and_zero_where_torchs_sort_does(dtype, dim):
    # torch's unique sorts (not stably) and keeps the first of each run: each NaN is a run
    # of its own, so the inverse of a NaN (and the sign of a kept zero) is the sort's doing.
    # Over rows, std::sort compares them lexicographically, skipping columns with a NaN.
    for seed, shape in enumerate([(70, 2), (33, 3), (200, 1), (5, 2)]):
        x = _zeros_and_nans(shape, seed)
        kw = dict(dim=dim, return_inverse=True, return_counts=True)
        e = ember.unique(ember.tensor(x).to(getattr(ember, dtype)), **kw)
        t = torch.unique(torch.tensor(x).to(getattr(torch, dtype)), **kw)
        _same_unique(e, t)


def test_unique_rows_with_signed_zeros_keep_the_first_sorted_row():
    x = _zeros_and_nans((64, 2), 7, nan=0.0)
    for dim in (0, 1):
        e = ember.unique(ember.tensor(x), dim=dim, return_inverse=True, return_counts=True)
        t = torch.unique(torch.tensor(x), dim=dim, return_inverse=True, return_counts=True)
        _same_unique(e, t)


@pytest.mark.parametrize("call", [
    lambda L: L.unique(L.tensor(1.0), dim=0),
    lambda L: L.unique(L.tensor(1.0), dim=-1),
    lambda L: L.unique_consecutive(L.tensor(1.0), dim=1),
])
def test_unique_over_slices_of_a_scalar_raises_index_error(call):
    assert "no dimensions" in same_message(call, IndexError)


@pytest.mark.parametrize("call", [
    lambda L: L.unique(L.zeros(0, 3), dim=1),
    lambda L: L.unique(L.zeros(0, 0), dim=0),
    lambda L: L.unique_consecutive(L.zeros(0, 3), dim=1),
    lambda L: L.unique_consecutive(L.zeros(3, 0, 2), dim=2),
])
def test_unique_over_slices_refuses_other_empty_dims(call):
    assert "unique cannot be applied" in same_message(call)


@pytest.mark.parametrize("call", [
    lambda L: L.unique(L.zeros(2, 0), dim=1, return_inverse=True, return_counts=True),
    lambda L: L.unique(L.zeros(0, 3), dim=0, return_inverse=True, return_counts=True),
    lambda L: L.unique_consecutive(L.zeros(0, 3), dim=0, return_inverse=True,
                                   return_counts=True),
    lambda L: L.unique_consecutive(L.zeros(3, 0), dim=1, return_inverse=True,
                                   return_counts=True),
])
def test_unique_over_an_empty_dim_is_empty(call):
    assert_same(call(ember), call(torch))


@pytest.mark.parametrize("x", [[1.0, np.nan], [np.nan, np.nan], [np.nan], [-np.nan],
                               [1.0, 1.0, -np.nan]])
def test_histc_names_a_nan_range_as_torch_prints_it(x):
    # torch's vectorized aminmax of two or more values marks a NaN with all bits set (-nan)
    same_message(lambda L: L.histc(L.tensor(x), bins=3))
    same_message(lambda L: L.histc(L.tensor(x, dtype=L.float64), bins=3))


# --- out= of the ordering ops ------------------------------------------------------------

@pytest.mark.parametrize("call, kind", [
    (lambda L: L.topk(L.ones(2, 3), 1, out=L.empty(0)), TypeError),
    (lambda L: L.topk(L.ones(2, 3), 1, out=(L.empty(0),)), TypeError),
    (lambda L: L.kthvalue(L.ones(2, 3), 1, out=(L.empty(0),) * 3), TypeError),
    (lambda L: L.kthvalue(L.ones(2, 3), 1, out=L.empty(0)), TypeError),
    (lambda L: L.argsort(L.ones(2, 3), stable=True, out=L.empty(0, dtype=L.int32)),
     RuntimeError),
    (lambda L: L.histc(L.ones(3), 3, out=L.empty(0, dtype=L.float64)), RuntimeError),
    (lambda L: L.histc(L.ones(3, dtype=L.float64), 3, out=L.empty(0, dtype=L.float16)),
     RuntimeError),
])
def test_out_of_the_wrong_kind_is_refused_as_torch_refuses_it(call, kind):
    same_message(call, kind)


def test_argsort_and_topk_write_into_out():
    x = np.array([[3.0, 1.0, 3.0, -0.0], [0.0, 2.0, 2.0, 5.0]], np.float32)
    for lib in (ember, torch):
        idx = lib.empty(0, dtype=lib.long)
        assert lib.argsort(lib.tensor(x), dim=0, descending=True, stable=True, out=idx) is idx
    got = [lib.argsort(lib.tensor(x), stable=True, out=lib.empty(0, dtype=lib.long))
           for lib in (ember, torch)]
    assert_same(*got)
    got = [lib.topk(lib.tensor(x), 2, out=[lib.empty(0), lib.empty(0, dtype=lib.long)])
           for lib in (ember, torch)]
    assert_same(tuple(got[0]), tuple(got[1]))


@pytest.mark.parametrize("call", [
    lambda L: L.sort(L.ones(2, 3), 0, out=L.empty(0)),
    lambda L: L.sort(L.ones(2, 3), out=L.empty(0)),
    lambda L: L.sort(L.ones(2, 3), stable=True, out=L.empty(0)),
    lambda L: L.sort(L.ones(2, 3), 1, True, out=3),
    lambda L: L.sort(L.ones(2, 3), 0, out=(L.empty(0),)),
])
def test_sort_out_that_is_no_pair_fits_no_overload(call):
    same_message(call, TypeError)


def test_sort_stable_overload_node_and_keyword_only_stable():
    """Regression: torch picks sort's `stable` overload whenever `stable=` is passed (even
    as None or False) and records SortBackward1; ember recorded SortBackward0. `stable` is
    keyword-only in sort and argsort, as torch's parser has it."""
    x_t = torch.tensor([3.0, 1.0, 3.0, 2.0, 1.0], requires_grad=True)
    x_e = ember.tensor([3.0, 1.0, 3.0, 2.0, 1.0], requires_grad=True)
    calls = [{}, {"stable": True}, {"stable": False, "descending": True}, {"stable": None},
             {"stable": True, "dim": 0, "descending": True}]
    for kw in calls:
        got, want = ember.sort(x_e, **kw), torch.sort(x_t, **kw)
        assert got.values.grad_fn.name() == want.values.grad_fn.name(), kw
        assert got.indices.tolist() == want.indices.tolist() or not kw.get("stable"), kw
        node = x_e.sort(**kw).values.grad_fn
        assert node.name() == want.values.grad_fn.name()
        assert node._saved_indices.tolist() == want.values.grad_fn._saved_indices.tolist() \
            or not kw.get("stable")
    (ember.sort(x_e, stable=True, descending=True).values * ember.arange(5.0)).sum().backward()
    (torch.sort(x_t, stable=True, descending=True).values * torch.arange(5.0)).sum().backward()
    assert x_e.grad.tolist() == x_t.grad.tolist()
    for lib, x in ((torch, x_t), (ember, x_e)):
        for fn in (lib.sort, lib.argsort, lib.Tensor.sort, lib.Tensor.argsort):
            with pytest.raises(TypeError):
                fn(x, 0, True, True)


# PyTorch's `stable` overloads of sort / argsort take dim and descending by keyword only (the
# other overloads have no `stable`): `torch.sort(x, 0, stable=True)` fits neither, and the
# parser says so (listing both, or naming the one overload that could take that many
# arguments); argsort's stable is a bool (sort's may be None).
STABLE_CALLS = {
    "sort(x, 0, stable=True)": lambda L, x: L.sort(x, 0, stable=True),
    "sort(x, 0, True, stable=True)": lambda L, x: L.sort(x, 0, True, stable=True),
    "sort(x, 0, stable=None)": lambda L, x: L.sort(x, 0, stable=None),
    "sort(x, 0, descending=True, stable=False)":
        lambda L, x: L.sort(x, 0, descending=True, stable=False),
    "sort(x, dim=0, stable=True)": lambda L, x: L.sort(x, dim=0, stable=True),
    "sort(x, stable=None)": lambda L, x: L.sort(x, stable=None),
    "sort(x, stable=1)": lambda L, x: L.sort(x, stable=1),
    "x.sort(0, stable=True)": lambda L, x: x.sort(0, stable=True),
    "x.sort(0, True, stable=True)": lambda L, x: x.sort(0, True, stable=True),
    "x.sort(dim=0, descending=True, stable=True)":
        lambda L, x: x.sort(dim=0, descending=True, stable=True),
    "argsort(x, 0, stable=True)": lambda L, x: L.argsort(x, 0, stable=True),
    "argsort(x, 0, True, stable=True)": lambda L, x: L.argsort(x, 0, True, stable=True),
    "argsort(x, dim=0, stable=True)": lambda L, x: L.argsort(x, dim=0, stable=True),
    "argsort(x, stable=None)": lambda L, x: L.argsort(x, stable=None),
    "x.argsort(0, stable=False)": lambda L, x: x.argsort(0, stable=False),
    "x.argsort(1, True)": lambda L, x: x.argsort(1, True),
    "sort(x, 0, stable=True, out=...)": lambda L, x: L.sort(
        x, 0, stable=True, out=(L.empty(0), L.empty(0, dtype=L.long))),
}


def test_stable_takes_dim_and_descending_by_keyword_only():
    for name, call in STABLE_CALLS.items():
        got = []
        for L in (ember, torch):
            try:
                r = call(L, L.tensor([[3.0, 1.0], [2.0, 2.0]]))
                got.append([v.tolist() for v in r] if isinstance(r, tuple) else r.tolist())
            except TypeError as exc:
                got.append(str(exc))
        assert got[0] == got[1], (name, got)
