"""Pooling: max pooling (a primitive with indices) and composed average pooling vs torch."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
from ember.ops import pooling as P

from helpers import assert_same, check_grads, check_op, rand_array, same_message


@pytest.mark.parametrize("kw", [
    {"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1},
    {"kernel_size": (2, 3), "stride": 1, "dilation": (2, 1)},
    {"kernel_size": 3, "stride": 2, "ceil_mode": True},
], ids=str)
def test_max_pool2d_values_indices_grads(kw):
    check_op(lambda x: P.max_pool2d(x, return_indices=True, **kw),
             lambda x: TF.max_pool2d(x, return_indices=True, **kw), rand_array((2, 3, 7, 6)))


def test_max_pool_1d_3d_and_unbatched():
    check_op(lambda x: P.max_pool1d(x, 3, 2, 1), lambda x: TF.max_pool1d(x, 3, 2, 1),
             rand_array((2, 8)))
    check_op(lambda x: P.max_pool3d(x, 2, ceil_mode=True),
             lambda x: TF.max_pool3d(x, 2, ceil_mode=True), rand_array((1, 2, 3, 5, 4)))


def test_max_pool_ties_nan_and_double_backward():
    x = np.array([[[1.0, 1.0, 0.0, np.nan, 2.0, 2.0]]], np.float32)
    e, i_e = P.max_pool1d(ember.tensor(x), 2, return_indices=True)
    t, i_t = TF.max_pool1d(torch.tensor(x), 2, return_indices=True)
    assert_same(e, t)
    assert_same(i_e, i_t)

    def f(a):
        a = a if a.requires_grad else a.requires_grad_()  # finite differences pass plain ones
        y = P.max_pool2d(a, 2)
        g, = ember.autograd.grad((y ** 3).sum(), a, create_graph=True)
        return g * a

    check_grads(f, rand_array((1, 1, 4, 4), np.float64))


def test_avg_pool_matches_torch():
    x = rand_array((2, 3, 7, 6))
    for kw in ({"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1},
               {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True,
                "count_include_pad": False},
               {"kernel_size": (3, 2), "divisor_override": 4}):
        check_op(lambda a, k=kw: P.avg_pool2d(a, **k), lambda a, k=kw: TF.avg_pool2d(a, **k), x)
    check_op(lambda a: P.avg_pool1d(a, 4, 3, 2, True, False),
             lambda a: TF.avg_pool1d(a, 4, 3, 2, True, False), rand_array((2, 3, 10)))


def test_adaptive_pools_match_torch():
    x = rand_array((2, 3, 7, 5))
    for size in ((3, 2), 4, (None, 2), 1):
        check_op(lambda a, s=size: P.adaptive_avg_pool2d(a, s),
                 lambda a, s=size: TF.adaptive_avg_pool2d(a, s), x)
    check_op(lambda a: P.adaptive_max_pool1d(a, 3, True),
             lambda a: TF.adaptive_max_pool1d(a, 3, True), rand_array((2, 3, 8)))
    check_op(lambda a: P.adaptive_max_pool2d(a, (2, 2)),
             lambda a: TF.adaptive_max_pool2d(a, (2, 2)), rand_array((1, 2, 6, 4)))


@pytest.mark.parametrize("shape, size", [((2, 3, 7, 9), (3, 4)), ((3, 10, 5), (4, 3)),
                                         ((1, 2, 5, 5), (7, 2)), ((0, 2, 5, 5), (3, 3)),
                                         ((2, 2, 5, 5), (0, 3))],
                         ids=str)
def test_adaptive_max_pool2d_of_uneven_bins_as_torch(shape, size):
    """Bins that do not tile the input (they overlap, or repeat cells when the output is
    larger): values, indices and the gradient (several bins' into one cell) as torch's."""
    # (torch's backward refuses an empty output: forward only there)
    check_op(lambda a: P.adaptive_max_pool2d(a, size, True),
             lambda a: TF.adaptive_max_pool2d(a, size, True), rand_array(shape),
             grad=0 not in size)
    out = P.adaptive_max_pool2d(ember.tensor(rand_array((2, 3, 7, 9))), (3, 4))
    assert out.grad_fn is None  # (no grad asked)
    e = P.adaptive_max_pool2d(ember.tensor(rand_array(shape)).requires_grad_(), size)
    assert e.grad_fn.name() == "AdaptiveMaxPool2DBackward0"


def test_adaptive_max_pool2d_ties_nan_vmap_jvp_and_double_backward():
    x = np.floor(rand_array((2, 3, 7, 5), np.float64, low=-2, high=2))
    x[0, 0, 1, 1] = x[0, 0, 2, 1] = np.nan
    x[1, 1, :3, :3] = -np.inf
    e, ie = P.adaptive_max_pool2d(ember.tensor(x), (3, 2), True)
    t, it = TF.adaptive_max_pool2d(torch.tensor(x), (3, 2), True)
    assert_same(e, t)
    assert_same(ie, it)
    xs = rand_array((4, 2, 3, 7, 5), np.float64)
    got = ember.vmap(lambda a: P.adaptive_max_pool2d(a, (3, 2)))(ember.tensor(xs))
    assert_same(got, torch.stack([TF.adaptive_max_pool2d(torch.tensor(a), (3, 2))
                                  for a in xs]))
    v = rand_array((2, 3, 7, 5), np.float64, seed=3)
    _, je = ember.func.jvp(lambda a: P.adaptive_max_pool2d(a, (3, 2)),
                           (ember.tensor(xs[0]),), (ember.tensor(v),))
    _, jt = torch.func.jvp(lambda a: TF.adaptive_max_pool2d(a, (3, 2)),
                           (torch.tensor(xs[0]),), (torch.tensor(v),))
    assert_same(je, jt)

    def f(a):
        a = a if a.requires_grad else a.requires_grad_()
        y = P.adaptive_max_pool2d(a, (3, 2))
        g, = ember.autograd.grad((y ** 3).sum(), a, create_graph=True)
        return g * a

    check_grads(f, rand_array((1, 2, 7, 5), np.float64))


def test_adaptive_max_pool2d_errors_as_torch():
    for x in (ember.zeros(2, 3, 4, 4, dtype=ember.int64), ember.zeros(5, 5)):
        with pytest.raises(Exception) as ee:
            P.adaptive_max_pool2d(x, (3, 3))
        with pytest.raises(Exception) as et:
            TF.adaptive_max_pool2d(torch.zeros(tuple(x.shape), dtype=torch.int64
                                               if x.dtype == ember.int64 else torch.float32),
                                   (3, 3))
        assert type(ee.value) is type(et.value)


def test_pool_meta_and_errors():
    out = P.max_pool2d(ember.empty(2, 3, 9, 9, device="meta"), 3, 2, 1)
    assert out.is_meta and tuple(out.shape) == (2, 3, 5, 5)
    with pytest.raises(RuntimeError) as ee:
        P.max_pool2d(ember.zeros(1, 1, 4, 4), 2, padding=2)
    with pytest.raises(RuntimeError) as et:
        TF.max_pool2d(torch.zeros(1, 1, 4, 4), 2, padding=2)
    assert str(ee.value) == str(et.value)


@pytest.mark.parametrize("fn", ["max_pool1d", "max_pool2d", "max_pool3d"])
def test_max_pool_of_an_empty_batch_as_torch(fn):
    """An empty batch pools to an empty output, and its gradient is empty too (the
    scatter reshaped by -1 over zero elements before)."""
    nd = int(fn[-2])
    shape = (0, 3) + (4,) * nd
    seen = []
    for lib in (torch, ember):
        x = lib.zeros(*shape, requires_grad=True)
        y = getattr(lib.nn.functional, fn)(x, 2)
        y.sum().backward()
        seen.append((tuple(y.shape), tuple(x.grad.shape)))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("shape, size", [((2, 3, 5, 6, 7), (2, 4, 3)), ((3, 4, 6, 5), 3),
                                         ((1, 2, 5, 3, 7), (5, None, 7)),
                                         ((2, 2, 3, 4, 5), (7, 1, 2)), ((0, 2, 4, 4, 4), 2)],
                         ids=str)
def test_adaptive_pools_3d_as_torch(shape, size):
    """Uneven, overlapping, tiling and repeating bins: values, indices and gradients (float64,
    so the averages' summation order stays below assert_same's tolerance)."""
    x = rand_array(shape, np.float64)
    check_op(lambda a: P.adaptive_avg_pool3d(a, size), lambda a: TF.adaptive_avg_pool3d(a, size),
             x, grad=shape[0] != 0)
    check_op(lambda a: P.adaptive_max_pool3d(a, size, True),
             lambda a: TF.adaptive_max_pool3d(a, size, True), x, grad=shape[0] != 0)
    if shape[0]:
        e = P.adaptive_max_pool3d(ember.tensor(x).requires_grad_(), size)
        assert e.grad_fn.name() == "AdaptiveMaxPool3DBackward0"


def test_adaptive_max_pool3d_nan_and_16_bit_floats_as_torch():
    x = np.floor(rand_array((2, 3, 5, 4, 6), np.float64, low=-2, high=2))
    x[0, 0, 1, 1, 1] = x[0, 0, 2, 1, 3] = np.nan
    e, ie = P.adaptive_max_pool3d(ember.tensor(x), (3, 2, 4), True)
    t, it = TF.adaptive_max_pool3d(torch.tensor(x), (3, 2, 4), True)
    assert_same(e, t)
    assert_same(ie, it)
    for d in ("float16", "bfloat16"):
        assert_same(P.adaptive_max_pool3d(ember.tensor(x).to(getattr(ember, d)), (3, 2, 4)),
                    TF.adaptive_max_pool3d(torch.tensor(x).to(getattr(torch, d)), (3, 2, 4)))
        # (finite values: ember's average pooling contracts with averaging matrices, so a NaN
        # would reach every cell of its rows, not only its own bins as in torch)
        y = np.nan_to_num(x)
        assert_same(P.adaptive_avg_pool3d(ember.tensor(y).to(getattr(ember, d)), (3, 2, 4)),
                    TF.adaptive_avg_pool3d(torch.tensor(y).to(getattr(torch, d)), (3, 2, 4)))


@pytest.mark.parametrize("call", [
    lambda F, m: F.adaptive_avg_pool3d(m.ones(3, 4, 5, 6, dtype=m.int64), 2),
    lambda F, m: F.adaptive_avg_pool3d(m.ones(3, 4, 5, 6, dtype=m.complex64), 2),
    lambda F, m: F.adaptive_avg_pool3d(m.ones(3, 4, 5, 6), (2, -1, 2)),
    lambda F, m: F.adaptive_avg_pool3d(m.ones(3, 0, 5, 6), (2, 2, 2)),
    lambda F, m: F.adaptive_avg_pool3d(m.ones(3, 4, 5), 2),
    lambda F, m: F.adaptive_avg_pool3d(m.ones(3, 4), (2, 2, 2)),
    lambda F, m: F.adaptive_avg_pool3d(m.ones(3, 4, 5, 6), (2, 2)),
    lambda F, m: F.adaptive_avg_pool2d(m.ones(3, 4, 5, dtype=m.int64), 2),
    lambda F, m: F.adaptive_avg_pool2d(m.ones(3, 4, 5), (2, -1)),
    lambda F, m: F.adaptive_avg_pool2d(m.ones(3, 0, 5), 2),
    lambda F, m: F.adaptive_avg_pool2d(m.ones(5), (2, 2)),
    lambda F, m: F.adaptive_max_pool2d(m.ones(5), 2),
    lambda F, m: F.adaptive_max_pool3d(m.ones(3, 4, 5, 6, dtype=m.int64), 2),
    lambda F, m: F.adaptive_max_pool3d(m.ones(3, 4, 5, 6), (2, -1, 2)),
    lambda F, m: F.adaptive_max_pool3d(m.ones(3, 0, 5, 6), (2, 2, 2)),
    lambda F, m: F.adaptive_max_pool3d(m.ones(3, 4, 5), 2),
    lambda F, m: F.adaptive_max_pool3d(m.ones(3, 4, 5, 6), (2, 2)),
])
def test_adaptive_pool_errors_as_torch(call):
    with pytest.raises(Exception) as et:
        call(TF, torch)
    with pytest.raises(type(et.value)) as ee:
        call(ember.nn.functional, ember)
    assert str(ee.value) == str(et.value)


@pytest.mark.parametrize("fn,args", [
    (f, a) for f in ("avg_pool1d", "avg_pool2d", "avg_pool3d", "max_pool1d", "max_pool2d",
                     "max_pool3d")
    for a in ((2, 0), (2, -1), (0,), (-1,), (2, 2, -1), (2, 1, 2), (2,))])
@pytest.mark.parametrize("dims", ["few", "right", "many"])
def test_bad_windows_and_dims_are_refused_in_torchs_order_and_words(fn, args, dims):
    # a zero stride, a negative pad, a kernel or stride below one, a pad past half the
    # kernel, too few or too many dims: each the error PyTorch raises, in its words and
    # its order (before: a zero stride divided by zero, a negative one made a ValueError)
    nd = int(fn[-2])
    shape = {"few": (4,) * nd, "right": (1, 2) + (4,) * nd, "many": (1, 1, 2) + (4,) * nd}[dims]
    if dims == "right" and args == (2,):
        pytest.skip("(valid)")
    with pytest.raises((RuntimeError, IndexError)) as theirs:
        getattr(TF, fn)(torch.ones(shape), *args)
    with pytest.raises((RuntimeError, IndexError)) as mine:
        getattr(P, fn)(ember.ones(shape), *args)
    assert mine.type is theirs.type
    assert str(mine.value) == str(theirs.value).splitlines()[0]


@pytest.mark.parametrize("call", [
    lambda L: L.nn.functional.max_pool3d(L.ones(1, 1, 2, 2, 2), 3),
    lambda L: L.nn.functional.max_pool3d(L.ones(1, 2, 2, 2), 3),
    lambda L: L.nn.functional.max_pool3d(L.ones(2, 3, 5, 5, 2), 2, dilation=2),
    lambda L: L.nn.functional.max_pool3d(L.ones(2, 3, 2, 5, 5), 3, return_indices=True),
    lambda L: L.nn.functional.max_pool2d(L.ones(1, 1, 2, 2), 3),
    lambda L: L.nn.functional.max_pool2d(L.ones(3, 5, 2), 3, return_indices=True),
    lambda L: L.nn.functional.max_pool1d(L.ones(1, 1, 2), 3),
    lambda L: L.nn.functional.max_pool1d(L.ones(2, 1, 2), 3, 1, 1, 3),
    lambda L: L.nn.functional.max_pool1d(L.ones(1, 1, 2), 3, return_indices=True),
], ids=["3d", "3d-unbatched", "3d-dilated", "3d-indices", "2d", "2d-unbatched",
        "1d", "1d-negative", "1d-indices"])
def test_too_small_output_is_refused_in_torch_words(call):
    # the 2-d (also 1-d with indices) and 3-d kernels print (C x spatial) in and out; 1-d
    # without indices names the size
    same_message(call)


@pytest.mark.parametrize("dtype", ["bool", "complex64"])
@pytest.mark.parametrize("nd, indices", [(1, False), (1, True), (2, False), (2, True),
                                         (3, False)])
def test_max_pool_refuses_bool_and_complex_as_torch(nd, indices, dtype):
    # in the kernel's words ("max_pool1d_impl" without indices), after the size checks
    for lib in (ember, torch):
        x = lib.zeros((1, 1) + (4,) * nd, dtype=getattr(lib, dtype))
        fn = getattr(lib.nn.functional, f"max_pool{nd}d")
        with pytest.raises(NotImplementedError) as info:
            fn(x, 2, return_indices=indices)
        if lib is ember:
            mine = str(info.value)
    assert mine == str(info.value)
    with pytest.raises(RuntimeError, match="Output size is too small"):
        ember.nn.functional.max_pool2d(ember.zeros(1, 1, 1, 1, dtype=ember.bool), 2)


def test_double_backward_requires_grad_with_zero_second_order():
    # PyTorch's max_pool / adaptive_max_pool derivative kernels take the input: a
    # create_graph gradient requires grad, under their double-backward node, with zeros
    from helpers import check_double_backward

    cases = []
    for nd in (1, 2, 3):
        shape = (1, 2) + (6,) * nd
        cases += [
            (f"max_pool{nd}d", lambda M, v, nd=nd: getattr(M.nn.functional, f"max_pool{nd}d")(
                v, 2), shape, True),
            (f"max_pool{nd}d dilated", lambda M, v, nd=nd: getattr(
                M.nn.functional, f"max_pool{nd}d")(v, 2, 1, 1, dilation=2), shape, True),
            (f"adaptive_max_pool{nd}d", lambda M, v, nd=nd: getattr(
                M.nn.functional, f"adaptive_max_pool{nd}d")(v, 3), shape, True),
            (f"adaptive_max_pool{nd}d uneven", lambda M, v, nd=nd: getattr(
                M.nn.functional, f"adaptive_max_pool{nd}d")(v, 4), shape, nd > 1),
        ]
    check_double_backward(cases)


def test_max_pooling_keeps_its_checks_by_call_and_refuses_every_time():
    # a call like one seen before skips window_args and the size / dtype checks (ops/
    # pooling.py `_checked_key`): the values, indices and layouts stay torch's, and a
    # refused call is refused again, in torch's words
    x = np.random.default_rng(0).standard_normal((2, 3, 7, 6)).astype(np.float32)
    for args, kw in [((2,), {}), ((3, 2, 1), {"return_indices": True}),
                     (((3, 2), (2, 1), (1, 0), 1, True), {})]:
        for _ in range(2):
            got = ember.nn.functional.max_pool2d(ember.tensor(x), *args, **kw)
            want = torch.nn.functional.max_pool2d(torch.tensor(x), *args, **kw)
            for g, w in zip(got if isinstance(got, tuple) else (got,),
                            want if isinstance(want, tuple) else (want,)):
                np.testing.assert_array_equal(g.numpy(), w.numpy())
                assert g.stride() == w.stride()
    for make in (lambda L: L.nn.functional.max_pool2d(L.ones(1, 1, 2, 2), 3),
                 lambda L: L.nn.functional.max_pool2d(L.ones(1, 1, 4, 4, dtype=L.bool), 2),
                 lambda L: L.nn.functional.max_pool2d(L.ones(1, 1, 4, 4), 2, 2, 2)):
        with pytest.raises((RuntimeError, NotImplementedError)) as theirs:
            make(torch)
        for _ in range(2):
            with pytest.raises(type(theirs.value)) as mine:
                make(ember)
            assert str(mine.value) == str(theirs.value)
