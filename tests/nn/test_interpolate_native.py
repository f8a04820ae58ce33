"""interpolate's native passes (csrc/resample.c) against its NumPy path, the reference.

Forward: the same bits (each output's taps added in the same order with the same fused
multiply-adds), NaN / inf included. Backward: the nearest modes' bits (sums of exact
products in output order, as the gathers' VJP); the others' NumPy path is a matrix product
(BLAS's order of additions), so float32 gradients are compared with float64 ones within a
few float32 ulps of the sums. One and two threads give the same bits.
"""

import itertools

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember import native
from ember.native import kernels

pytestmark = pytest.mark.skipif(not native.available(), reason="no C compiler")

# (mode, shape, interpolate's keywords): sizes 1, odd sizes, factors that are not integers,
# align_corners both ways, downscaling, antialiasing.
_CASES = [
    ("nearest", (2, 3, 7), dict(scale_factor=2.5)),
    ("nearest", (1, 2, 3, 4, 5), dict(scale_factor=(1.5, 0.7, 2.0))),
    ("nearest-exact", (2, 3, 7, 5), dict(size=(3, 11))),
    ("linear", (2, 3, 11), dict(scale_factor=1.7, align_corners=False)),
    ("linear", (1, 2, 1), dict(size=5, align_corners=True)),
    ("bilinear", (2, 3, 7, 9), dict(scale_factor=2.3, align_corners=False)),
    ("bilinear", (2, 3, 7, 9), dict(size=(5, 13), align_corners=True)),
    ("bilinear", (1, 1, 1, 1), dict(size=(3, 1), align_corners=True)),
    ("bilinear", (1, 2, 33, 47), dict(scale_factor=0.6, align_corners=False)),
    ("trilinear", (1, 2, 3, 5, 4), dict(scale_factor=1.5, align_corners=True)),
    ("trilinear", (2, 1, 4, 1, 3), dict(size=(7, 2, 5), align_corners=False)),
    ("bicubic", (2, 2, 6, 7), dict(scale_factor=2.5, align_corners=False)),
    ("bicubic", (1, 2, 5, 1), dict(size=(9, 3), align_corners=True)),
    ("bilinear", (1, 2, 20, 17), dict(size=(6, 5), antialias=True)),
    ("bicubic", (1, 2, 20, 17), dict(size=(6, 5), antialias=True)),
]


def _layouts(x: E.Tensor):
    """x contiguous, channels-last, and as a strided view (every other row of a copy)."""
    yield "contiguous", x
    if x.dim() in (4, 5):
        fmt = E.channels_last if x.dim() == 4 else E.channels_last_3d
        yield "channels-last", x.contiguous(memory_format=fmt)
    wide = E.cat([x, x], dim=-1)
    yield "strided", wide[..., ::2]


def _run(x: E.Tensor, g, mode: str, kw: dict, which: str):
    with kernels.use(which):
        xx = x.detach().clone().requires_grad_(True) if which else x
        y = F.interpolate(xx, mode=mode, **kw)
        y.backward(g(y))
    return y.detach().numpy(), xx.grad.numpy()


def test_native_matches_numpy_path():
    gen = np.random.default_rng(0)
    for mode, shape, kw in _CASES:
        for dt in (E.float32, E.float64):
            a = gen.standard_normal(shape)
            a.reshape(-1)[gen.integers(a.size)] = np.nan
            a.reshape(-1)[gen.integers(a.size)] = np.inf
            base = E.tensor(a, dtype=dt)
            cache = {}

            def g(y, dt=dt, cache=cache):
                if "g" not in cache:
                    cache["g"] = gen.standard_normal(tuple(y.shape))
                return E.tensor(cache["g"], dtype=dt)

            for name, x in _layouts(base):
                what = f"{mode} {shape} {kw} {dt} {name}"
                y0, g0 = _run(x, g, mode, kw, "numpy")
                y1, g1 = _run(x, g, mode, kw, "native")
                assert y0.shape == y1.shape, what
                np.testing.assert_array_equal(y1, y0, err_msg=what)  # (NaN equal to NaN)
                if mode.startswith("nearest") or kw.get("antialias"):
                    np.testing.assert_array_equal(g1, g0, err_msg=what)
                    continue
                # the reference gradient in float64 (finite: the input's NaN does not
                # reach the gradient of a linear map); float32 within ~1e-5 of the sums
                _, ref = _run(base.double(), g, mode, kw, "numpy")
                tol = 1e-5 if dt == E.float32 else 1e-12
                np.testing.assert_allclose(g1, ref, rtol=tol, atol=tol, err_msg=what)


def test_threads_give_the_same_bits():
    x = E.randn(2, 3, 40, 50)
    before = E.get_num_threads()
    outs = []
    try:
        for n in (1, 2):
            E.set_num_threads(n)
            res = []
            for mode, kw in [("bilinear", dict(scale_factor=1.7)),
                             ("bicubic", dict(scale_factor=0.45)),
                             ("nearest", dict(scale_factor=2.2)),
                             ("bilinear", dict(size=(12, 11), antialias=True))]:
                xx = x.clone().requires_grad_(True)
                y = F.interpolate(xx, mode=mode, **kw)
                y.backward(E.cos(E.arange(y.numel(), dtype=E.float32)).view(y.shape))
                res += [y.detach().numpy(), xx.grad.numpy()]
            outs.append(res)
    finally:
        E.set_num_threads(before)
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a, b)


def test_double_backward_and_layout():
    """create_graph differentiates the reference path (the C gradient is not
    differentiable); a channels-last input gives a channels-last output and gradient."""
    x = E.randn(1, 2, 5, 6, dtype=E.float64).contiguous(memory_format=E.channels_last)
    x.requires_grad_(True)
    y = F.interpolate(x, scale_factor=1.5, mode="bicubic", align_corners=False)
    assert y.is_contiguous(memory_format=E.channels_last)
    assert y.grad_fn.name() == "UpsampleBicubic2DBackward0"
    (gx,) = E.autograd.grad((y * y).sum(), x, create_graph=True)
    (ggx,) = E.autograd.grad(gx.sum(), x)
    with kernels.use("numpy"):
        x0 = x.detach().clone().requires_grad_(True)
        y0 = F.interpolate(x0, scale_factor=1.5, mode="bicubic", align_corners=False)
        (g0,) = E.autograd.grad((y0 * y0).sum(), x0, create_graph=True)
        (gg0,) = E.autograd.grad(g0.sum(), x0)
    np.testing.assert_allclose(gx.detach().numpy(), g0.detach().numpy(), rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(ggx.numpy(), gg0.numpy(), rtol=1e-12, atol=1e-12)


def test_a_kept_plan_gives_the_full_paths_bits_node_and_gradient():
    # A row-major float call keeps its checked passes and taps by the call's key
    # (interpolate.py): its second call, with no grad wanted (the passes on the array) or
    # with grad (the passes' node), must give what the full path gives the same values laid
    # out otherwise (a strided view: no plan) bit for bit, and torch's node and strides.
    torch = pytest.importorskip("torch")
    gen = np.random.default_rng(4)
    for (mode, shape, kw), dt in zip(_CASES, [E.float32, E.float64] * len(_CASES)):
        a = gen.standard_normal(shape)
        a.reshape(-1)[gen.integers(a.size)] = np.inf
        other = E.tensor(np.repeat(a, 2, axis=-1), dtype=dt)[..., ::2]  # (a's values)
        with E.no_grad():
            want = F.interpolate(other, mode=mode, **kw)
        ref = torch.nn.functional.interpolate(torch.tensor(a).requires_grad_(), mode=mode,
                                              **kw)
        makes = (lambda a=a, dt=dt: E.tensor(a, dtype=dt),  # (over a storage, fresh, offset)
                 lambda a=a, dt=dt: E.tensor(a, dtype=dt).clone(),
                 lambda a=a, dt=dt: E.tensor(np.stack([a, a]), dtype=dt)[1])
        for make, _ in itertools.product(makes, range(2)):
            what = f"{mode} {shape} {kw} {dt}"
            y = F.interpolate(make(), mode=mode, **kw)
            np.testing.assert_array_equal(y.numpy(), want.numpy(), err_msg=what)
            assert y.stride() == ref.stride() and y.grad_fn is None, what
            x, xo = make().requires_grad_(), other.detach().requires_grad_()
            y, yo = F.interpolate(x, mode=mode, **kw), F.interpolate(xo, mode=mode, **kw)
            np.testing.assert_array_equal(y.detach().numpy(), want.numpy(), err_msg=what)
            assert y.grad_fn.name() == yo.grad_fn.name() == ref.grad_fn.name(), what
            for attr in dir(ref.grad_fn):
                if attr.startswith("_saved_"):
                    assert getattr(y.grad_fn, attr) == getattr(ref.grad_fn, attr), (what, attr)
            g = E.tensor(gen.standard_normal(tuple(y.shape)), dtype=dt)
            y.backward(g)
            yo.backward(g)
            np.testing.assert_array_equal(x.grad.numpy(), xo.grad.numpy(), err_msg=what)
    # a refused call is refused each time; a kept plan is not another shape's
    for _ in range(2):
        with pytest.raises(RuntimeError, match="should be greater than 0"):
            F.interpolate(E.ones(1, 2, 3), size=0)
    F.interpolate(E.ones(1, 2, 4), size=3)
    with pytest.raises(NotImplementedError, match="needs 4D input"):
        F.interpolate(E.ones(1, 2, 4), size=3, mode="bilinear")
