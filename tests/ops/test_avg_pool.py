"""ops/avg_pool.py: average pooling as PyTorch computes it. Each window's sum in order from
zero, then PyTorch's divisor: the values are torch's bit for bit (sums of a few terms in one
order, then one correctly rounded division: nothing here depends on the vector unit), a
NaN or inf reaches only its own windows, int64 divides with truncation."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import ember
from ember import native

torch = pytest.importorskip("torch")
E, T = ember.nn.functional, torch.nn.functional

_CASES = [  # (nd, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
    (1, 3, 2, 1, False, True, None), (1, 4, 3, 2, True, False, None), (1, 2, None, 0, False,
                                                                       True, None),
    (2, 2, 2, 0, False, True, None), (2, 3, 1, 1, False, True, None),
    (2, (3, 2), (2, 1), (1, 0), True, False, None), (2, 3, 2, 1, True, True, 5),
    (2, (1, 4), 3, 0, True, True, None), (3, 2, None, 0, False, True, None),
    (3, (3, 2, 3), (2, 1, 2), (1, 1, 0), True, False, None), (3, 2, 1, 1, False, True, 3),
]


def _pool(lib, x, nd, k, s, p, ceil, cip, div):
    f = getattr(lib, f"avg_pool{nd}d")
    kw = dict(kernel_size=k, stride=s, padding=p, ceil_mode=ceil, count_include_pad=cip)
    if nd > 1:
        kw["divisor_override"] = div
    return f(x, **kw)


def _data(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("kernels", ["native", "numpy"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("case", _CASES, ids=str)
def test_values_are_torchs_bits_and_gradients_torchs(case, dtype, kernels):
    if kernels == "native" and not native.available():
        pytest.skip("native kernels unavailable")
    nd = case[0]
    for lead in ((2, 3), (3,), (1, 1)):  # (batched, unbatched, a single plane)
        x = _data(lead + (7, 9, 6)[:nd], dtype, seed=len(lead))
        xe = ember.tensor(x, requires_grad=True)
        xt = torch.tensor(x, requires_grad=True)
        with native.use(kernels):
            out = _pool(E, xe, *case)
            ref = _pool(T, xt, *case)
            np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
            g = _data(tuple(ref.shape), dtype, seed=9)
            out.backward(ember.tensor(g))
        ref.backward(torch.tensor(g))
        # (overlapping windows add a position's shares in another order than torch's)
        np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-6, atol=1e-6)


def test_a_nan_or_inf_reaches_only_its_own_windows():
    x = _data((2, 3, 12, 12))
    x[0, 1, 5, 6], x[1, 2, 0, 0], x[1, 0, 11, 3] = np.nan, np.inf, -np.inf
    for args in ((2, 2), (3, 1, 1), (3, 2, 1, True, False)):
        xe, xt = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        out, ref = E.avg_pool2d(xe, *args), T.avg_pool2d(xt, *args)
        np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
        assert 0 < np.isnan(ref.detach().numpy()).sum() < 20  # (a few windows, not rows)
        out.sum().backward()
        ref.sum().backward()
        np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-6)
    g = np.ones((2, 3, 6, 6), np.float32)
    g[0, 0, 2, 2] = np.nan  # a NaN gradient reaches only that window's inputs
    xe = ember.tensor(_data((2, 3, 12, 12)), requires_grad=True)
    E.avg_pool2d(xe, 2).backward(ember.tensor(g))
    assert np.isnan(xe.grad.numpy()).sum() == 4 and np.isnan(xe.grad.numpy()[0, 0, 4:6, 4:6]).all()


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_int64_sums_exactly_and_divides_with_truncation(nd):
    x = np.random.default_rng(1).integers(-1000, 1000, (2, 3) + (7, 6, 5)[:nd])
    for case in (c for c in _CASES if c[0] == nd):
        out = _pool(E, ember.tensor(x), *case)
        ref = _pool(T, torch.tensor(x), *case)
        assert out.dtype == ember.int64
        np.testing.assert_array_equal(out.numpy(), ref.numpy())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_types_are_summed_in_float32_and_rounded_once(dtype):
    x = _data((2, 3, 9, 8)) * 10
    for args in ((3, 2, 1), (2,), (3, 1, 1, True, False)):
        out = E.avg_pool2d(ember.tensor(x).to(getattr(ember, dtype)), *args)
        ref = T.avg_pool2d(torch.tensor(x).to(getattr(torch, dtype)), *args)
        assert out.dtype == getattr(ember, dtype)
        np.testing.assert_array_equal(out.float().numpy(), ref.float().numpy())
    # the 3-d adaptive kernel adds and divides in the half type itself
    y = _data((2, 3, 8, 6, 4)) * 10
    out = E.adaptive_avg_pool3d(ember.tensor(y).to(getattr(ember, dtype)), (4, 3, 2))
    ref = T.adaptive_avg_pool3d(torch.tensor(y).to(getattr(torch, dtype)), (4, 3, 2))
    np.testing.assert_array_equal(out.float().numpy(), ref.float().numpy())


@pytest.mark.parametrize("make", [
    lambda F, m: F.avg_pool2d(m.ones(1, 2, 4, 4, dtype=m.int32), 2),
    lambda F, m: F.avg_pool1d(m.ones(1, 2, 4, dtype=m.uint8), 2),
    lambda F, m: F.avg_pool3d(m.ones(1, 2, 4, 4, 4, dtype=m.float16), 2),
    lambda F, m: F.avg_pool3d(m.ones(1, 2, 4, 4, 4, dtype=m.int16), 2),
    lambda F, m: F.avg_pool2d(m.ones(1, 2, 4, 4, dtype=m.complex64), 2),
])
def test_dtypes_torch_refuses_are_refused_in_its_words(make):
    with pytest.raises(NotImplementedError) as theirs:
        make(T, torch)
    with pytest.raises(NotImplementedError) as mine:
        make(E, ember)
    assert str(mine.value) == str(theirs.value)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_adaptive_pooling_over_even_bins_is_torchs_bits(nd):
    x = _data((2, 3) + (12, 8, 6)[:nd])
    x[1, 1, (5,) * nd] = np.nan
    for sizes in itertools.islice(itertools.product((1, 2, 3, 4), repeat=nd), 0, None, 3):
        sizes = tuple(s if x.shape[2 + i] % s == 0 else 2 for i, s in enumerate(sizes))
        if all(s == 1 for s in sizes):
            continue  # (the global mean: PyTorch's mean, a vectorised sum)
        f = f"adaptive_avg_pool{nd}d"
        out = getattr(E, f)(ember.tensor(x), sizes)
        ref = getattr(T, f)(torch.tensor(x), sizes)
        np.testing.assert_array_equal(out.numpy(), ref.numpy())


def test_uneven_adaptive_bins_are_within_a_few_ulps():
    # products with matrices of bin means (see ops/avg_pool.py): not torch's order
    x = _data((2, 3, 15, 13))
    xe, xt = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, ref = E.adaptive_avg_pool2d(xe, (7, 5)), T.adaptive_avg_pool2d(xt, (7, 5))
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=4e-7, atol=4e-7)
    out.sum().backward()
    ref.sum().backward()
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-6)


def test_empty_outputs_and_the_saved_input():
    x = ember.zeros(0, 3, 4, 4, requires_grad=True)
    out = E.avg_pool2d(x, 2)
    assert out.shape == (0, 3, 2, 2)
    out.sum().backward()
    assert x.grad.shape == (0, 3, 4, 4)
    assert E.adaptive_avg_pool2d(ember.ones(2, 3, 4, 4), (0, 2)).shape == (2, 3, 0, 2)
    # PyTorch's kernel saves its input: writing into it before backward is refused
    y = ember.ones(1, 2, 4, 4, requires_grad=True).clone()
    pooled = E.avg_pool2d(y, 2)
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        pooled.sum().backward()


def test_double_backward_requires_grad_with_zero_second_order():
    # PyTorch's avg_pool / adaptive_avg_pool derivative kernels take the input, so a
    # create_graph gradient requires grad (its own gradient: zeros, not None). (Not its
    # node's name: ember's pooling is a composite, whose gradient ends in another op.)
    from helpers import check_double_backward

    cases = []
    for nd in (1, 2, 3):
        shape = (1, 2) + (5,) * nd
        size = (3,) * nd
        cases += [
            (f"avg_pool{nd}d", lambda M, v, nd=nd: getattr(M.nn.functional, f"avg_pool{nd}d")(
                v, 2), shape, False),
            (f"avg_pool{nd}d padded", lambda M, v, nd=nd: getattr(
                M.nn.functional, f"avg_pool{nd}d")(v, 3, 2, 1, ceil_mode=True,
                                                   count_include_pad=False), shape, False),
            (f"adaptive_avg_pool{nd}d", lambda M, v, nd=nd: getattr(
                M.nn.functional, f"adaptive_avg_pool{nd}d")(v, 3), shape, False),
            (f"area {nd}d", lambda M, v, size=size: M.nn.functional.interpolate(
                v, size=size, mode="area"), shape, False),
        ]
    check_double_backward(cases)


def _layouts(shape, dtype):
    """(name, ember tensor, torch tensor) over one set of values in several layouts: a
    fresh kernel result, a tensor over a storage, a row-major view at an offset, and the
    layouts a plain call leaves to the composite (channels-last, transposed)."""
    x = _data(shape, dtype)
    big = _data((2,) + shape, dtype)
    big[1] = x
    yield "storage", ember.tensor(x), torch.tensor(x)
    yield "fresh", ember.tensor(x) * 1, torch.tensor(x) * 1
    yield "offset view", ember.tensor(big)[1], torch.tensor(big)[1]
    if len(shape) == 4:
        yield "channels-last", ember.tensor(x).contiguous(memory_format=ember.channels_last), \
            torch.tensor(x).contiguous(memory_format=torch.channels_last)
    xs = np.ascontiguousarray(x.swapaxes(-1, -2))  # (x's values, its last two dims swapped)
    yield "transposed", ember.tensor(xs).transpose(-1, -2), torch.tensor(xs).transpose(-1, -2)


_PLANNED = [(f"avg_pool{c[0]}d", c[0], c[1:6]) for c in _CASES if c[6] is None] + [
    (f"adaptive_avg_pool{nd}d", nd, (size,))
    for nd, size in ((1, 3), (2, (2, 3)), (2, (3, 1)), (3, (2, 1, 3)))]


def test_a_plain_call_is_the_composites_bits_and_layout():
    # A call with no graph to record runs the composite's kernels on the arrays directly,
    # its checks kept by the call's key (ops/avg_pool.py): the values must be the
    # composite's (a call whose input requires grad) and torch's, bit for bit, the strides
    # torch's, in both kernel modes and on the second call (the kept plan) as on the first.
    calls = _PLANNED
    modes = ["numpy"] + (["native"] if native.available() else [])
    for (name, nd, args), dtype in itertools.product(calls, (np.float32, np.float64)):
        for lead in ((2, 3), (3,), (1, 1)):
            for layout, xe, xt in _layouts(lead + (6, 9, 6)[:nd], dtype):
                ref = getattr(T, name)(xt, *args)
                graph = getattr(E, name)(xe.detach().requires_grad_(), *args)
                for mode, _ in itertools.product(modes, range(2)):
                    with native.use(mode):
                        out = getattr(E, name)(xe, *args)
                    what = (name, args, dtype, lead, layout, mode)
                    np.testing.assert_array_equal(out.numpy(), ref.numpy(), err_msg=str(what))
                    np.testing.assert_array_equal(out.numpy(), graph.detach().numpy())
                    assert out.stride() == ref.stride() == graph.stride(), what
                    assert out.dtype == xe.dtype, what
                    assert out.grad_fn is None and not out.requires_grad


def test_plain_calls_outside_the_fast_path_and_refusals_on_every_call():
    x = _data((2, 3, 6, 6))
    for case in [((2,), {"divisor_override": 3}), ((3, 2, 1), {})]:
        for dtype in ("float16", "bfloat16", "int64"):  # (the composite's, each its own way)
            xe, xt = ember.tensor(x * 10).to(getattr(ember, dtype)), \
                torch.tensor(x * 10).to(getattr(torch, dtype))
            for _ in range(2):
                out = E.avg_pool2d(xe, *case[0], **case[1])
                ref = T.avg_pool2d(xt, *case[0], **case[1])
                np.testing.assert_array_equal(out.float().numpy(), ref.float().numpy())
                assert out.dtype == xe.dtype
    # a refused call is refused again (no plan is kept for it), in torch's words
    for args in ((ember.ones(1, 1, 2, 2), 3), (ember.ones(1, 1, 4, 4), 2, 2, 2),
                 (ember.ones(1, 1, 4, 4), 0)):
        with pytest.raises(RuntimeError) as theirs:
            T.avg_pool2d(torch.tensor(args[0].numpy()), *args[1:])
        for _ in range(2):
            with pytest.raises(RuntimeError) as mine:
                E.avg_pool2d(*args)
            assert str(mine.value) == str(theirs.value)
    # a plan kept for one shape is not another's
    E.avg_pool2d(ember.ones(1, 2, 4, 4), 2)
    with pytest.raises(RuntimeError, match="Output size is too small"):
        E.avg_pool2d(ember.ones(1, 2, 1, 4), 2)
    # with grad on and an input that requires it, the composite's one node
    xe = ember.tensor(x, requires_grad=True)
    assert E.avg_pool2d(xe, 2).grad_fn.name() == "AvgPool2DBackward0"
    with ember.no_grad():
        assert E.avg_pool2d(xe, 2).grad_fn is None


def test_a_recorded_call_is_the_composites_gradient_under_torchs_node():
    # With grad wanted, a row-major float input's pooling is one node of its own whose
    # gradient is the composite's op for op: the same bits (a zero's sign too) as the
    # composite's, which runs for the same values laid out otherwise; torch's node name
    # and saved attributes; torch's gradient within rounding (see the first test).
    for (name, nd, args), lead in itertools.product(_PLANNED, ((2, 3), (1, 1))):
        shape = lead + (6, 9, 6)[:nd]
        x = _data(shape)
        xs = np.ascontiguousarray(x.swapaxes(-1, -2))
        for _ in range(2):  # (the second call: the kept plan)
            xe = ember.tensor(x, requires_grad=True)
            xo = ember.tensor(xs).transpose(-1, -2).requires_grad_()  # (the composite)
            xt = torch.tensor(x, requires_grad=True)
            out, other = getattr(E, name)(xe, *args), getattr(E, name)(xo, *args)
            ref = getattr(T, name)(xt, *args)
            np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
            assert out.grad_fn.name() == other.grad_fn.name() == ref.grad_fn.name()
            for attr in dir(ref.grad_fn):
                if attr.startswith("_saved_") and attr != "_saved_self":
                    assert getattr(out.grad_fn, attr) == getattr(ref.grad_fn, attr), attr
            g = _data(tuple(ref.shape), seed=5)
            g[..., 0] = -0.0
            out.backward(ember.tensor(g))
            other.backward(ember.tensor(g))
            ref.backward(torch.tensor(g))
            np.testing.assert_array_equal(xe.grad.numpy(), xo.grad.numpy())
            assert (np.signbit(xe.grad.numpy()) == np.signbit(xo.grad.numpy())).all()
            np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-6, atol=1e-6)
    # a second order through the one node: torch's node and zeros for the input
    xe = ember.tensor(_data((2, 3, 6, 6)), requires_grad=True)
    (gx,) = ember.autograd.grad(E.avg_pool2d(xe, 2).sum(), xe, create_graph=True)
    assert gx.grad_fn.name() == "AvgPool2DBackwardBackward0"
    (ggx,) = ember.autograd.grad(gx.sum(), xe)
    assert not ggx.any()
