"""_fake_quantize_learnable_per_tensor_affine / _per_channel_affine (LSQ) against torch:
values, the gradients of the input, scale and zero point, node names and errors."""

import numpy as np
import pytest
import torch

import ember

from helpers import E2T, raised


def assert_bits(e, t):
    # exact, sign of zero included: the forward values and the per-element gradient terms
    # are single float32 steps in torch's order (one fused multiply-add, as its kernel)
    a, b = e.detach().double().numpy(), t.detach().double().numpy()
    assert a.shape == b.shape
    assert np.array_equal(a, b, equal_nan=True) and (np.signbit(a) == np.signbit(b)).all()


def assert_sums(e, t):
    # a float32 sum over many elements: torch's cascade adds in another order than NumPy's
    # pairwise sum, so the last bits may differ
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=2e-6, atol=1e-6)


def _data(n, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * 3).astype(np.float32)
    x[: n // 8] = np.round(x[: n // 8] * 2) / 2  # ties at scale 1 and 0.5
    x[:4] = [np.nan, np.inf, -np.inf, -0.0]
    return x, rng.standard_normal(n).astype(np.float32)


def _per_tensor(lib, x, g, scale, zp, lo, hi, factor):
    xt = lib.tensor(x, requires_grad=True)
    st = lib.tensor([scale], requires_grad=True)
    zt = lib.tensor([zp], requires_grad=True)
    y = lib._fake_quantize_learnable_per_tensor_affine(xt, st, zt, lo, hi, factor)
    y.backward(lib.tensor(g))
    return y, xt.grad, st.grad, zt.grad


@pytest.mark.parametrize("scale,zp,lo,hi,factor", [
    (1.0, 1.0, -4, 5, 1.0), (0.5, 2.5, -8, 7, 0.5), (0.1, -1.5, -128, 127, 0.01),
    (0.37, 0.4, 0, 255, 2.0), (0.25, 300.0, -8, 7, 1.0), (0.0, 0.0, -8, 7, 1.0)])
def test_per_tensor_like_torch(scale, zp, lo, hi, factor):
    x, g = _data(64, 0)
    if lo > 0:
        pytest.skip("backward needs 0 in range")
    e = _per_tensor(ember, x, g, scale, zp, lo, hi, factor)
    t = _per_tensor(torch, x, g, scale, zp, lo, hi, factor)
    assert_bits(e[0], t[0])
    assert_bits(e[1], t[1])
    assert_sums(e[2], t[2])
    assert_sums(e[3], t[3])
    assert type(e[0].grad_fn).__name__ == t[0].grad_fn.name()


def test_per_tensor_terms_exact():
    # one element at a time: each gradient is one term, no sum, so it must match exactly;
    # (zero point 2.5: rounded to 2 forward, taken as 3 backward, as torch does)
    x, g = _data(48, 1)
    for i in range(len(x)):
        args = (x[i:i + 1], g[i:i + 1], 0.0731, 1.3 + i % 5 + (i % 2) * 0.2, -8, 7, 0.61)
        for a, b in zip(_per_tensor(ember, *args), _per_tensor(torch, *args)):
            assert_bits(a, b)


def _per_channel(lib, x, g, scale, zp, axis, lo, hi, factor, zp_dtype=None):
    xt = lib.tensor(x, requires_grad=True)
    st = lib.tensor(scale, requires_grad=True)
    zt = lib.tensor(zp, requires_grad=True) if zp_dtype is None else lib.tensor(zp).to(zp_dtype)
    y = lib._fake_quantize_learnable_per_channel_affine(xt, st, zt, axis, lo, hi, factor)
    y.backward(lib.tensor(g))
    return y, xt.grad, st.grad, zt.grad


@pytest.mark.parametrize("axis", [0, 1, 2, 3])
def test_per_channel_like_torch(axis):
    shape = (3, 4, 2, 5)
    x, g = _data(int(np.prod(shape)), axis)
    x, g = x.reshape(shape), g.reshape(shape)
    rng = np.random.default_rng(10 + axis)
    n = shape[axis]
    scale = rng.uniform(0.05, 1.0, n).astype(np.float32)
    zp = rng.uniform(-6, 6, n).astype(np.float32)
    zp[0] = 2.5  # rounded half to even, forward and backward
    e = _per_channel(ember, x, g, scale, zp, axis, -8, 7, 0.3)
    t = _per_channel(torch, x, g, scale, zp, axis, -8, 7, 0.3)
    for a, b in zip(e[:2], t[:2]):
        assert_bits(a, b)
    for a, b in zip(e[2:], t[2:]):
        assert_sums(a, b)
    assert type(e[0].grad_fn).__name__ == t[0].grad_fn.name()


def test_per_channel_terms_exact():
    # one element per channel: every scale / zero point gradient is a single term
    x, g = _data(4000, 3)
    rng = np.random.default_rng(4)
    scale = rng.uniform(0.01, 1.0, 4000).astype(np.float32)
    zp = rng.uniform(-6, 6, 4000).astype(np.float32)
    e = _per_channel(ember, x[:, None], g[:, None], scale, zp, 0, -8, 7, 0.37)
    t = _per_channel(torch, x[:, None], g[:, None], scale, zp, 0, -8, 7, 0.37)
    for a, b in zip(e, t):
        assert_bits(a, b)


@pytest.mark.parametrize("dtype", [ember.float64, ember.float16, ember.bfloat16], ids=str)
def test_forward_other_float_dtypes(dtype):
    x, _ = _data(40, 5)
    for lib, d in ((ember, dtype), (torch, E2T[dtype])):
        xt = lib.tensor(x).to(d)
        out = (lib._fake_quantize_learnable_per_tensor_affine(
                   xt, lib.tensor([0.1]), lib.tensor([1.6]), -8, 7),
               lib._fake_quantize_learnable_per_channel_affine(
                   xt.reshape(5, 8), lib.tensor([0.1, 0.2, 0.3, 0.4, 0.5]),
                   lib.tensor([0.5, 1.5, -2.5, 0.0, 9.0], dtype=lib.float16), 0, -8, 7))
        if lib is ember:
            got = out
        else:
            want = out
    for a, b in zip(got, want):
        assert a.dtype == {v: k for k, v in E2T.items()}[b.dtype]
        assert_bits(a, b)


def test_integer_zero_point_forward_and_no_grad():
    x, _ = _data(16, 6)
    for zp in ([3], [-20]):
        a = ember._fake_quantize_learnable_per_tensor_affine(
            ember.tensor(x), ember.tensor([0.2]), ember.tensor(zp), -8, 7)
        b = torch._fake_quantize_learnable_per_tensor_affine(
            torch.tensor(x), torch.tensor([0.2]), torch.tensor(zp), -8, 7)
        assert_bits(a, b)
        assert a.grad_fn is None


def test_double_backward_and_forward_mode_refused():
    x = ember.randn(5, requires_grad=True)
    s = ember.tensor([0.1], requires_grad=True)
    y = ember._fake_quantize_learnable_per_tensor_affine(x, s, ember.tensor([0.0]), -8, 7)
    (gx,) = ember.autograd.grad(y.sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match="derivative for aten::_fake_quantize_learnable_per_"
                                           "tensor_affine_backward is not implemented"):
        ember.autograd.grad(gx.sum(), s)
    with pytest.raises(NotImplementedError, match="Trying to use forward AD with _fake_quant"):
        ember.func.jvp(lambda v: ember._fake_quantize_learnable_per_channel_affine(
            v, ember.tensor([0.1]), ember.tensor([0.0]), 0, -8, 7), (ember.ones(1, 2),),
            (ember.ones(1, 2),))


def test_func_grad_like_torch():
    x, _ = _data(12, 7)

    def loss(lib):
        def f(s, z):
            y = lib._fake_quantize_learnable_per_tensor_affine(lib.tensor(x), s, z, -8, 7, 0.5)
            return (y - lib.tensor(x)).pow(2).sum()
        return f

    e = ember.func.grad(loss(ember), argnums=(0, 1))(ember.tensor([0.3]), ember.tensor([1.0]))
    t = torch.func.grad(loss(torch), argnums=(0, 1))(torch.tensor([0.3]), torch.tensor([1.0]))
    for a, b in zip(e, t):
        assert_sums(a, b)


def _errors(lib):
    x = lib.ones(2, 3)
    f, c = (lib._fake_quantize_learnable_per_tensor_affine,
            lib._fake_quantize_learnable_per_channel_affine)
    s1, z1 = lib.tensor([0.1]), lib.tensor([0.0])
    s3, z3 = lib.ones(3) * 0.1, lib.zeros(3)

    def back(fn):
        return lambda: fn().sum().backward()

    xg = x.clone().requires_grad_()
    return [
        lambda: f(x, 0.1, z1, -8, 7),
        lambda: f(x, s1, 0, -8, 7),
        lambda: f(x, lib.tensor(0.1), z1, -8, 7),
        lambda: f(x, lib.tensor([]), z1, -8, 7),
        lambda: f(x, s1, lib.tensor(0.0), -8, 7),
        lambda: f(x, s1, z1, 7, -8),
        lambda: f(x.int(), s1, z1, -8, 7),
        back(lambda: f(xg.double(), s1, z1, -8, 7)),
        back(lambda: f(xg, s1, z1, 1, 7)),
        back(lambda: f(xg, s1.double(), z1, -8, 7)),
        back(lambda: f(xg, s1, lib.tensor([0]), -8, 7)),
        lambda: c(x, s3, z3, 0, -8, 7),
        lambda: c(x, s3, z3, 2, -8, 7),
        lambda: c(x, s3, z3, -1, -8, 7),
        lambda: c(x, s3.double(), z3, 1, -8, 7),
        lambda: c(x, s3, z3, 1, 7, -8),
        lambda: c(x, s3[None], z3, 1, -8, 7),
        lambda: c(x.long(), s3, z3, 1, -8, 7),
        back(lambda: c(xg, s3.requires_grad_(), lib.tensor([0, 1, 2]), 1, -8, 7)),
        back(lambda: c(xg, s3, z3, 1, 1, 7)),
        back(lambda: c(xg.double(), s3, z3, 1, -8, 7)),
        back(lambda: c(lib.ones(3), s3.clone().requires_grad_(), z3, 0, -8, 7)),
        back(lambda: c(lib.ones(3), s3, z3.clone().requires_grad_(), 0, -8, 7)),
    ]


@pytest.mark.parametrize("i", range(len(_errors(torch))))
def test_errors_like_torch(i):
    want = raised(_errors(torch)[i])
    assert want is not None and raised(_errors(ember)[i]) == want


def test_empty_input_gives_inputs_back_as_gradients():
    # torch's backward returns (X, scale, zero_point) themselves for an empty X
    for lib in (ember, torch):
        x = lib.empty(0, 3, requires_grad=True)
        s = lib.tensor([0.1, 0.2, 0.3], requires_grad=True)
        z = lib.zeros(3, requires_grad=True)
        lib._fake_quantize_learnable_per_channel_affine(x, s, z, 1, -8, 7).sum().backward()
        assert tuple(x.grad.shape) == (0, 3)
        assert s.grad.tolist() == pytest.approx([0.1, 0.2, 0.3])
        assert z.grad.tolist() == [0.0, 0.0, 0.0]


def test_float64_scale_is_read_as_float32_per_tensor():
    # torch reads scale[0] as a C float: a float64 scale of 0.1 quantises with float32's 0.1
    x, _ = _data(32, 8)
    for dtype in (ember.float32, ember.float64):
        a = ember._fake_quantize_learnable_per_tensor_affine(
            ember.tensor(x).to(dtype), ember.tensor([0.1], dtype=ember.float64),
            ember.tensor([0.4], dtype=ember.float64), -8, 7)
        b = torch._fake_quantize_learnable_per_tensor_affine(
            torch.tensor(x).to(E2T[dtype]), torch.tensor([0.1], dtype=torch.float64),
            torch.tensor([0.4], dtype=torch.float64), -8, 7)
        assert_bits(a, b)


def test_vmap_like_torch():
    x, _ = _data(24, 9)
    x = x.reshape(2, 3, 4)

    def f(lib):
        return lambda v, s: lib._fake_quantize_learnable_per_channel_affine(
            v, s, lib.tensor([0.0, 1.0, -1.0, 2.0]), 1, -8, 7)

    s = np.array([[0.1, 0.2, 0.3, 0.4], [0.5, 0.25, 0.125, 1.0]], np.float32)
    a = ember.vmap(f(ember))(ember.tensor(x), ember.tensor(s))
    with pytest.warns(UserWarning):  # (torch: no batching rule, a loop)
        b = torch.vmap(f(torch))(torch.tensor(x), torch.tensor(s))
    assert_bits(a, b)
