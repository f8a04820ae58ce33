"""grid_sample / affine_grid against torch: values, dtypes, both gradients, errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as EF

from helpers import (
    TORCH_VECTOR_KERNELS,
    assert_same,
    assert_ulp,
    check_grads,
    check_op,
    rand_array,
    same_error,
)

MODES = ["bilinear", "nearest", "bicubic"]
PADS = ["zeros", "border", "reflection"]


def _grid(shape, dtype, seed=3):
    return rand_array(shape, dtype, -1.3, 1.3, seed=seed)  # some points fall outside


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("pad", PADS)
@pytest.mark.parametrize("mode", MODES)
def test_grid_sample_2d(mode, pad, align, dtype):
    x = rand_array((2, 3, 5, 6), dtype)
    g = _grid((2, 4, 7, 2), dtype)
    # bicubic sums its 16 taps in another order than torch's compiled code: a few ulps
    tol = dict(rtol=2e-5, atol=2e-5) if mode == "bicubic" and dtype == np.float32 else {}
    check_op(lambda a, b: EF.grid_sample(a, b, mode, pad, align),
             lambda a, b: TF.grid_sample(a, b, mode, pad, align), x, g, **tol)


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("pad", PADS)
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sample_2d_float32_bitwise(mode, pad, align):
    """Bilinear and nearest follow torch's CPU kernel to the bit (values and grid grad)."""
    x = torch.tensor(rand_array((2, 3, 9, 11), np.float32))
    g = torch.tensor(_grid((2, 6, 5, 2), np.float32), requires_grad=True)
    out = TF.grid_sample(x, g, mode, pad, align)
    cot = torch.tensor(rand_array(tuple(out.shape), np.float32, seed=5))
    out.backward(cot)
    ge = ember.tensor(g.detach().numpy(), requires_grad=True)
    oe = EF.grid_sample(ember.tensor(x.numpy()), ge, mode, pad, align)
    oe.backward(ember.tensor(cot.numpy()))
    why = ("torch's grid_sample kernel fuses its multiply-adds into FMAs in its AVX2/AVX512 "
           "builds, not in its default (scalar) one; a pixel coordinate's last bit moves a "
           "value by up to |x| * size ulps")
    ulps = 0 if TORCH_VECTOR_KERNELS else 4
    size = max(x.shape[-2:])
    assert_ulp(oe, out, ulps, why, scale=x.abs().max().item() * size)
    assert_ulp(ge.grad, g.grad, ulps, why, scale=g.grad.abs().max().item() * size)


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("pad", PADS)
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sample_3d(mode, pad, align):
    x = rand_array((2, 2, 3, 4, 5), np.float64)
    g = _grid((2, 3, 2, 4, 3), np.float64)
    check_op(lambda a, b: EF.grid_sample(a, b, mode, pad, align),
             lambda a, b: TF.grid_sample(a, b, mode, pad, align), x, g)


def test_grid_sample_non_contiguous_and_grad_fn():
    x = rand_array((2, 6, 5, 3), np.float32)  # permuted below to (2, 3, 6, 5)
    g = rand_array((2, 2, 4, 7), np.float32)  # permuted to (2, 4, 7, 2): strided grid
    check_op(lambda a, b: EF.grid_sample(a.permute(0, 3, 1, 2), b.permute(0, 2, 3, 1),
                                         align_corners=False),
             lambda a, b: TF.grid_sample(a.permute(0, 3, 1, 2), b.permute(0, 2, 3, 1),
                                         align_corners=False), x, g)
    e = EF.grid_sample(ember.tensor(x, requires_grad=True), ember.tensor(g[..., :2].copy()),
                       align_corners=True)
    assert e.grad_fn.name() == "GridSampler2DBackward0"


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_grid_sample_finite_differences(mode):
    x = rand_array((1, 2, 4, 5), np.float64)
    g = _grid((1, 3, 2, 2), np.float64, seed=7) * 0.9
    check_grads(lambda a, b: EF.grid_sample(a, b, mode, "zeros", False), x, g, rtol=1e-4,
                atol=1e-6)


def test_grid_sample_warns_on_default_align_corners():
    x = ember.zeros(1, 1, 2, 2)
    g = ember.zeros(1, 1, 1, 2)
    with pytest.warns(UserWarning, match="align_corners=False"):
        EF.grid_sample(x, g)


@pytest.mark.parametrize("call", [
    lambda L: L.nn.functional.grid_sample(L.zeros(1, 1, 2, 2), L.zeros(1, 1, 1, 2), "cubic",
                                          align_corners=False),
    lambda L: L.nn.functional.grid_sample(L.zeros(1, 1, 2, 2), L.zeros(1, 1, 1, 2),
                                          padding_mode="wrap", align_corners=False),
    lambda L: L.nn.functional.grid_sample(L.zeros(1, 1, 2, 2), L.zeros(1, 1, 1, 2,
                                          dtype=L.float64), align_corners=False),
    lambda L: L.nn.functional.grid_sample(L.zeros(2, 1, 2, 2), L.zeros(1, 1, 1, 2),
                                          align_corners=False),
    lambda L: L.nn.functional.grid_sample(L.zeros(1, 1, 2, 2), L.zeros(1, 1, 1, 3),
                                          align_corners=False),
    lambda L: L.nn.functional.grid_sample(L.zeros(1, 1, 2, 2, 2), L.zeros(1, 1, 1, 1, 3),
                                          "bicubic", align_corners=False),
    lambda L: L.nn.functional.grid_sample(L.zeros(1, 1, 0, 2), L.zeros(1, 1, 1, 2),
                                          align_corners=False),
    lambda L: L.nn.functional.affine_grid(L.zeros(1, 2, 3, dtype=L.int64), [1, 1, 2, 2],
                                          align_corners=False),
    lambda L: L.nn.functional.affine_grid(L.zeros(1, 3, 4), [1, 1, 2, 2], align_corners=False),
    lambda L: L.nn.functional.affine_grid(L.zeros(1, 2, 3), [1, 1, 2], align_corners=False),
    lambda L: L.nn.functional.affine_grid(L.zeros(1, 2, 3), [1, 1, 0, 2], align_corners=False),
])
def test_errors(call):
    same_error(call)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("size", [(2, 3, 5, 7), (2, 1, 4, 5, 6), (2, 3, 1, 1)])
def test_affine_grid(size, align, dtype):
    nd = len(size) - 2
    theta = rand_array((2, nd, nd + 1), dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the unit-size warning
        check_op(lambda t: EF.affine_grid(t, list(size), align),
                 lambda t: TF.affine_grid(t, list(size), align), theta)


def test_affine_grid_then_sample_identity():
    """The identity transform with align_corners=True gives back the image exactly."""
    x = rand_array((1, 2, 4, 5), np.float64)
    theta = ember.tensor([[[1.0, 0, 0], [0, 1, 0]]], dtype=ember.float64)
    grid = EF.affine_grid(theta, [1, 2, 4, 5], align_corners=True)
    out = EF.grid_sample(ember.tensor(x), grid, align_corners=True)
    assert_same(out, torch.tensor(x), rtol=0, atol=1e-12)


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("size", [(3, 1, 16, 16), (2, 1, 5, 7), (2, 2, 28, 40), (1, 1, 3, 4, 6)])
def test_affine_grid_float32_to_the_ulp(size, align):
    """The base grid reproduces torch.linspace's values and the product rounds as torch's,
    to the last bits that depend on the CPU (tests/README.md)."""
    nd = len(size) - 2
    # under the identity every product and sum is exact: the grid is the base grid itself
    eye = torch.eye(nd, nd + 1).expand(size[0], nd, nd + 1).contiguous()
    want = TF.affine_grid(eye, list(size), align)
    got = EF.affine_grid(ember.tensor(eye.numpy()), list(size), align)
    assert_ulp(got, want, 0 if TORCH_VECTOR_KERNELS else 2, "torch.linspace fuses "
               "start + step * i into an FMA in its AVX2/AVX512 kernels, not in its default "
               "(scalar) one", scale=1.0)
    theta = torch.tensor(rand_array((size[0], nd, nd + 1), np.float32, seed=4))
    want = TF.affine_grid(theta, list(size), align)
    got = EF.affine_grid(ember.tensor(theta.numpy()), list(size), align)
    terms = theta.abs().sum(-1).reshape(size[0], *[1] * nd, nd).numpy()  # |base| <= 1
    assert_ulp(got, want, 4, "torch's bmm goes through MKL, whose kernel (FMA or not, "
               "summation order) depends on the CPU; and the base grid's linspace", scale=terms)


def _penalty(L, x0, g0, mode, pad, align):
    """A gradient penalty: the gradients of grid_sample, differentiated again."""
    x = L.tensor(x0, requires_grad=True)
    g = L.tensor(g0, requires_grad=True)
    y = L.nn.functional.grid_sample(x, g, mode, pad, align)
    w = L.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)))
    gx, gg = L.autograd.grad((y * w).sum(), (x, g), create_graph=True)
    (gx.square().sum() + gg.sin().sum()).backward()
    return [t.detach().numpy() for t in (gx, gg, x.grad, g.grad)]


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("pad", PADS)
@pytest.mark.parametrize("mode, nd", [("bilinear", 2), ("bicubic", 2), ("bilinear", 3)])
def test_grid_sample_double_backward(mode, nd, pad, align):
    shape = (2, 3, 4, 5) if nd == 2 else (1, 2, 3, 4, 5)
    x0 = rand_array(shape, np.float64, seed=11)
    g0 = _grid((shape[0], 3, 2, 2) if nd == 2 else (shape[0], 2, 3, 2, 3), np.float64, seed=12)
    for got, want in zip(_penalty(ember, x0, g0, mode, pad, align),
                         _penalty(torch, x0, g0, mode, pad, align)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_the_2d_and_3d_cases_are_one_primitive_named_as_pytorch_names_them():
    x2, g2 = rand_array((1, 2, 3, 4)), rand_array((1, 2, 2, 2), seed=1)
    x3, g3 = rand_array((1, 2, 3, 4, 2)), rand_array((1, 2, 2, 1, 3), seed=1)
    for x, g in ((x2, g2), (x3, g3)):
        e = EF.grid_sample(ember.tensor(x, requires_grad=True), ember.tensor(g),
                           align_corners=False)
        t = TF.grid_sample(torch.tensor(x, requires_grad=True), torch.tensor(g),
                           align_corners=False)
        assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__
    from ember.ops.sampling import grid_sampler_p

    assert type(e.grad_fn).__name__ == "GridSampler3DBackward0"
    assert grid_sampler_p.name == "grid_sampler"
