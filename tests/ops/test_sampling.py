"""grid_sample / affine_grid against torch: values, dtypes, both gradients, errors."""

from __future__ import annotations

import math
import platform
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
    same_message,
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


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("pad", PADS)
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sample_3d_follows_the_scalar_loop_to_the_bit(mode, pad, align, dtype):
    """The 3-d sampler rounds as PyTorch's scalar loop does: unfused ((g + 1) * size - 1) / 2,
    reflection by fmod of the span, weights (floor + 1) - x multiplied x, y, z in turn,
    corners added one by one, and the input gradient scattered point by point. In half
    and bfloat16 every one of those operations rounds to the dtype, in both libraries."""
    g = torch.Generator().manual_seed(11)
    t, e = getattr(torch, dtype), getattr(ember, dtype)
    x = torch.randn(2, 3, 4, 5, 6, generator=g, dtype=torch.float64).to(t)
    grid = (torch.rand(2, 3, 4, 5, 3, generator=g, dtype=torch.float64) * 3.2 - 1.6).to(t)
    grid.requires_grad_(True)
    xt = x.clone().requires_grad_(True)
    out = TF.grid_sample(xt, grid, mode, pad, align)
    cot = torch.randn(out.shape, generator=g, dtype=torch.float64).to(t)
    out.backward(cot)

    def to_ember(a):
        return ember.tensor(a.detach().double().numpy()).to(e)  # (exact: a widening)

    xe = to_ember(x).requires_grad_(True)
    ge = to_ember(grid).requires_grad_(True)
    oe = EF.grid_sample(xe, ge, mode, pad, align)
    oe.backward(to_ember(cot))
    pairs = [(oe, out), (xe.grad, xt.grad), (ge.grad, grid.grad)]
    if platform.machine() in ("x86_64", "AMD64"):  # compiled without FMA there: to the bit
        for a, b in pairs:
            np.testing.assert_array_equal(a.detach().double().numpy(), b.detach().double().numpy())
        return
    # a compiler that contracts the loop's multiply-adds (the default on aarch64) moves a
    # value by a few units of the dtype's epsilon times |x| * size
    eps = torch.finfo(t).eps
    for a, b in pairs:
        bound = 8 * eps * b.abs().max().item() * 6
        np.testing.assert_allclose(a.detach().double().numpy(), b.detach().double().numpy(), rtol=0,
                                   atol=bound)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("pad", PADS)
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sample_2d_half_and_bfloat16(mode, pad, align, dtype):
    """PyTorch samples 2-d half and bfloat16 with its scalar loop (the 3-d one's rounding):
    the values agree to the bit. Its backward there rounds in another order (not followed):
    the gradients agree to a few units of the dtype's epsilon times their largest value."""
    g = torch.Generator().manual_seed(5)
    t, e = getattr(torch, dtype), getattr(ember, dtype)
    x = torch.randn(2, 3, 7, 9, generator=g, dtype=torch.float64).to(t).requires_grad_(True)
    grid = (torch.rand(2, 5, 6, 2, generator=g, dtype=torch.float64) * 3.2 - 1.6).to(t)
    grid.requires_grad_(True)
    out = TF.grid_sample(x, grid, mode, pad, align)
    cot = torch.randn(out.shape, generator=g, dtype=torch.float64).to(t)
    out.backward(cot)

    def to_ember(a):
        return ember.tensor(a.detach().double().numpy()).to(e)

    xe, ge = to_ember(x).requires_grad_(True), to_ember(grid).requires_grad_(True)
    oe = EF.grid_sample(xe, ge, mode, pad, align)
    oe.backward(to_ember(cot))
    assert oe.dtype == e
    np.testing.assert_array_equal(oe.detach().double().numpy(), out.detach().double().numpy())
    eps = torch.finfo(t).eps
    for a, b in ((xe.grad, x.grad), (ge.grad, grid.grad)):
        want = b.double().numpy()
        np.testing.assert_allclose(a.double().numpy(), want, rtol=0,
                                   atol=4 * eps * np.abs(want).max())


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("pad", PADS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("nd", [2, 3])
def test_grid_sample_non_finite_grid(nd, mode, pad, align):
    """NaN, infinite and huge grid points index nothing (no IndexError): the 2-d kernel
    gives NaN for bilinear NaN weights, the 3-d loop skips them, and 3-d clipping sends
    NaN to the far border as C++'s min/max do."""
    if nd == 3 and mode == "bicubic":
        pytest.skip("bicubic is 2-d only")
    nan, inf = float("nan"), float("inf")
    pts = [[nan] + [0.0] * (nd - 1), [inf] + [0.2] * (nd - 1), [-inf] + [0.1] * (nd - 1),
           [1e20] + [0.0] * (nd - 1), [0.5, nan] + [0.5] * (nd - 2)]
    shape = (1, 2) + (3, 4, 5)[-nd:]
    res = []
    for L in (torch, ember):
        x = L.arange(math.prod(shape), dtype=L.float32).reshape(shape).requires_grad_(True)
        q = L.tensor(pts).reshape((1,) + (1,) * (nd - 1) + (len(pts), nd)).requires_grad_(True)
        out = L.nn.functional.grid_sample(x, q, mode, pad, align)
        if nd == 3 or pad == "zeros":  # (torch's 2-d backward writes out of bounds for a
            out.sum().backward()      # NaN it clipped: undefined behaviour, not compared)
            res.append([out.detach().numpy(), x.grad.numpy(), q.grad.numpy()])
        else:
            res.append([out.detach().numpy()])
    for e, t in zip(res[1], res[0]):
        np.testing.assert_array_equal(e, t)  # (NaN where torch has NaN)


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


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("input_shape,grid_shape", [
    ((1, 4, 5, 6, 7), (1, 3, 10, 3)), ((1, 4, 5, 6), (1, 1, 3, 10, 2)),
    ((1, 4, 5, 6), (1, 3, 2)), ((1, 4, 5), (1, 3, 1)), ((1, 4, 5, 6, 7, 8), (1, 1, 1, 1, 1, 4)),
    ((1, 4, 5, 6, 7), (1, 1, 1, 1, 1, 3)),
])
def test_rank_mismatch_names_the_dispatched_sampler(input_shape, grid_shape, mode):
    """A grid of the wrong rank is refused naming 4D for a 4-d input and 5D for any other."""
    same_message(lambda L: L.nn.functional.grid_sample(L.zeros(input_shape), L.zeros(grid_shape),
                                                       mode, align_corners=False))


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


def test_grid_sample_gradient_of_input_requires_grad_under_create_graph():
    # PyTorch's grid_sampler backward takes the input and the grid: with only the input
    # requiring grad, its create_graph gradient requires grad (GridSampler2DBackwardBackward0)
    # and its own gradient is undefined (None with allow_unused)
    from helpers import check_double_backward

    rs = np.random.RandomState(5)
    cases = []
    for nd in (2, 3):
        grid = rs.uniform(-1.2, 1.2, (1,) + (3,) * nd + (nd,))
        modes = ("bilinear", "nearest", "bicubic") if nd == 2 else ("bilinear", "nearest")
        for mode in modes:
            for pad in ("zeros", "border", "reflection"):
                cases.append((f"{nd}d {mode} {pad}", lambda M, v, g=grid, m=mode, p=pad:
                              M.nn.functional.grid_sample(v, M.tensor(g), mode=m,
                                                          padding_mode=p, align_corners=False),
                              (1, 2) + (4,) * nd, True))
    x = rs.standard_normal((1, 2, 4, 5))
    cases.append(("2d grid", lambda M, v: M.nn.functional.grid_sample(
        M.tensor(x), v.tanh(), align_corners=True), (1, 3, 4, 2), True))
    check_double_backward(cases)
