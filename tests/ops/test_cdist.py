"""cdist against torch: values, the gradient at zero distances and zero differences (0 for
every p, as PyTorch's _cdist_backward gives), ties at p=inf, the matmul route for p=2
(`_euclidean_dist`: the compute_mode rules, its rounding, its graph nodes), finite
differences in float64, the direct route's rounding (the same bits as PyTorch's per-pair
kernel), and the argument errors."""

import numpy as np
import pytest
import torch

import ember

from helpers import (
    TORCH_VECTOR_KERNELS,
    assert_same,
    assert_ulp,
    check_grads,
    rand_array,
    same_message,
)

PS = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("inf")]
POW_ULPS = 4  # pow/sqrt and division order differ from PyTorch's per-pair kernel


def _both(x1, x2, p=2.0, **kw):
    """cdist(x1, x2).sum() backward in ember and torch: (out, grads) for each."""
    res = []
    for lib in (ember, torch):
        a = lib.tensor(x1, requires_grad=True)
        b = lib.tensor(x2, requires_grad=True)
        out = lib.cdist(a, b, p=p, **kw)
        out.sum().backward()
        res.append((out, a.grad, b.grad))
    return res


@pytest.mark.parametrize("p", PS)
def test_gradient_is_zero_at_zero_distance(p):
    x = np.array([[0.0, 1.0], [2.0, 3.0]], np.float32)
    a = ember.tensor(x, requires_grad=True)
    t = torch.tensor(x, requires_grad=True)
    out_e, out_t = ember.cdist(a, a, p=p), torch.cdist(t, t, p=p)
    assert type(out_e.grad_fn).__name__ == type(out_t.grad_fn).__name__ == "CdistBackward0"
    out_e.sum().backward()
    out_t.sum().backward()
    assert_ulp(out_e, out_t, POW_ULPS, "pow rounding")
    assert not np.isnan(a.grad.numpy()).any()
    assert_ulp(a.grad, t.grad, POW_ULPS, "pow rounding in the gradient")


@pytest.mark.parametrize("p", PS)
def test_gradient_at_zero_differences_and_ties(p):
    # one coordinate of a difference is 0 while the distance is not; |d| ties at p=inf
    x1 = np.array([[0.0, 1.0], [0.0, 0.0]], np.float32)
    x2 = np.array([[0.0, 3.0], [1.0, 1.0], [2.0, 5.0], [1.0, -1.0]], np.float32)
    (oe, ge1, ge2), (ot, gt1, gt2) = _both(x1, x2, p)
    assert_ulp(oe, ot, POW_ULPS, "pow rounding")
    assert_ulp(ge1, gt1, POW_ULPS, "pow rounding in the gradient")
    assert_ulp(ge2, gt2, POW_ULPS, "pow rounding in the gradient")


@pytest.mark.parametrize("p", [0.5, 1.0, 1.5, 2.0, 3.0, float("inf")])
def test_gradients_match_finite_differences(p):
    a, b = rand_array((2, 4, 3), seed=3), rand_array((2, 5, 3), seed=4)  # no ties, no zeros
    check_grads(lambda x, y: ember.cdist(x, y, p=p), a, b, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("p", PS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batched_values_and_gradients_match_torch(p, dtype):
    a, b = rand_array((2, 1, 4, 3), dtype, seed=5), rand_array((3, 5, 3), dtype, seed=6)
    (oe, ge1, ge2), (ot, gt1, gt2) = _both(a, b, p)
    # the sums and roots round per element, in a different order than PyTorch's kernel
    assert_ulp(oe, ot, POW_ULPS, "pow rounding, summation order")
    for ge, gt in ((ge1, gt1), (ge2, gt2)):
        assert_ulp(ge, gt, 16, "pow rounding, summation order of the batch-broadcast sum",
                   scale=np.abs(gt.numpy()).max())


@pytest.mark.parametrize("rows,mode,route", [
    (25, "use_mm_for_euclid_dist_if_necessary", "CdistBackward0"),
    (26, "use_mm_for_euclid_dist_if_necessary", "ViewBackward0"),
    (3, "use_mm_for_euclid_dist", "ViewBackward0"),
    (30, "donot_use_mm_for_euclid_dist", "CdistBackward0"),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_p2_matmul_route_follows_compute_mode(rows, mode, route, dtype):
    x = rand_array((rows, 3), dtype, seed=7)
    (oe, ge, _), (ot, gt, _) = _both(x, x, 2.0, compute_mode=mode)
    assert type(oe.grad_fn).__name__ == type(ot.grad_fn).__name__ == route
    if route == "ViewBackward0":
        inner_e = oe.grad_fn.next_functions[0][0]
        assert type(inner_e).__name__ == "EuclideanDistBackward0"
    # NOTE: through the matmul the squared distance is ||x||^2 + ||y||^2 - 2 x.y, which
    # cancels: its error is a few ulps of ||x||^2 + ||y||^2, not of the result (cdist(X, X)'s
    # diagonal is rounding noise, nonzero in float32). So compare squares on that scale.
    n = (x.astype(np.float64) ** 2).sum(-1)
    scale = n[:, None] + n[None, :]
    sq_e = oe.detach().numpy().astype(np.float64) ** 2
    sq_t = ot.detach().numpy().astype(np.float64) ** 2
    eps = np.finfo(dtype).eps
    assert oe.dtype == (ember.float32 if dtype == np.float32 else ember.float64)
    assert np.all(np.abs(sq_e - sq_t) <= 8 * eps * scale), np.abs(sq_e - sq_t).max()
    if route == "CdistBackward0":
        assert not oe.diagonal().detach().numpy().any()
    assert not np.isnan(ge.numpy()).any()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_p2_matmul_route_values_and_gradients_off_the_diagonal(dtype):
    a, b = rand_array((2, 30, 3), dtype, seed=8), rand_array((27, 3), dtype, seed=9) + 5
    (oe, ge1, ge2), (ot, gt1, gt2) = _both(a, b)
    assert type(oe.grad_fn).__name__ == type(ot.grad_fn).__name__ == "ViewBackward0"
    # a BLAS product of the padded rows: its last bits depend on the CPU's summation order
    n = (a.astype(np.float64) ** 2).sum(-1)[..., :, None] + (b.astype(np.float64) ** 2).sum(-1)
    assert_ulp(oe, ot, 8, "BLAS summation order in _euclidean_dist", scale=np.sqrt(n))
    for ge, gt in ((ge1, gt1), (ge2, gt2)):
        assert_ulp(ge, gt, 64, "BLAS summation order, magnified by the division by distances",
                   scale=np.abs(gt.numpy()).max())


def test_p2_matmul_route_exact_zero_distances_have_zero_gradient():
    # small integers: the matmul is exact, the repeated rows are exactly 0 apart
    x = np.array([[0.0, 1.0], [2.0, 3.0]] * 15, np.float32)
    (oe, ge, _), (ot, gt, _) = _both(x, x)
    assert_same(oe, ot)
    assert_same(ge, gt)


@pytest.mark.parametrize("shapes", [((0, 3), (2, 3)), ((2, 0), (30, 0)), ((0, 2, 3), (2, 3)),
                                    ((30, 0), (3, 0))])
def test_empty_inputs(shapes):
    a, b = np.zeros(shapes[0], np.float32), np.zeros(shapes[1], np.float32)
    (oe, ge, _), (ot, gt, _) = _both(a, b)
    assert_same(oe, ot)
    assert_same(ge, gt)
    assert type(oe.grad_fn).__name__ == type(ot.grad_fn).__name__


@pytest.mark.parametrize("call,kind", [
    (lambda L: L.cdist(L.ones(2, 3), L.ones(2, 3), compute_mode="foo"), ValueError),
    (lambda L: L.cdist(L.ones(3), L.ones(2, 3), p=-1.0), RuntimeError),
    (lambda L: L.cdist(L.ones(2, 3), L.ones(3)), RuntimeError),
    (lambda L: L.cdist(L.ones(2, 3), L.ones(2, 4)), RuntimeError),
    (lambda L: L.cdist(L.ones(2, 3), L.ones(2, 3, dtype=L.long)), RuntimeError),
    (lambda L: L.cdist(L.ones(2, 3, dtype=L.long), L.ones(2, 3), p=-1.0), RuntimeError),
    (lambda L: L.cdist(L.ones(2, 3, dtype=L.bool), L.ones(2, 3, dtype=L.bool)), RuntimeError),
    (lambda L: L.cdist(L.ones(2, 3), L.ones(2, 3), p=-1.0), RuntimeError),
    (lambda L: L.cdist(L.ones(2, 3, dtype=L.float16), L.ones(2, 3, dtype=L.float16)),
     NotImplementedError),
    (lambda L: L.cdist(L.ones(2, 3, dtype=L.bfloat16), L.ones(2, 3, dtype=L.bfloat16), p=1.0),
     NotImplementedError),
    (lambda L: L.cdist(L.ones(2, 3, dtype=L.float64), L.ones(2, 3)), RuntimeError),
    (lambda L: L.cdist(L.ones(2, 2, 3), L.ones(3, 2, 3)), RuntimeError),
    (lambda L: L.cdist(L.ones(2, 3, dtype=L.complex64), L.ones(2, 3, dtype=L.complex64)),
     RuntimeError),
    # the matmul route has no dtype check of its own: the matmul's refuses a mix
    (lambda L: L.cdist(L.ones(2, 3, dtype=L.float64), L.ones(2, 3),
                       compute_mode="use_mm_for_euclid_dist"), RuntimeError),
    (lambda L: L.cdist(L.ones(2, 3, dtype=L.float16), L.ones(2, 3),
                       compute_mode="use_mm_for_euclid_dist"), RuntimeError),
])
def test_errors_match_torch(call, kind):
    same_message(call, kind)


def test_matmul_route_takes_low_precision_as_torch_does():
    x = np.array([[0.0, 1.0], [2.0, 3.0]], np.float32)
    for lib in (ember, torch):
        out = lib.cdist(lib.tensor(x, dtype=lib.bfloat16), lib.tensor(x, dtype=lib.bfloat16),
                        compute_mode="use_mm_for_euclid_dist")
        assert out.dtype == lib.bfloat16


DIRECT = "donot_use_mm_for_euclid_dist"


@pytest.mark.parametrize("m", [1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 33])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_direct_route_rounds_as_torchs_kernel(m, dtype):
    # every coordinate count around the 16-byte chunks (4 float32, 2 float64), batched
    a, b = rand_array((2, 9, m), dtype, seed=m), rand_array((2, 7, m), dtype, seed=m + 50)
    for p in (0.0, 1.0, float("inf")):  # counts, in-order sums, maxima: exact ops
        assert_same(ember.cdist(ember.tensor(a), ember.tensor(b), p=p, compute_mode=DIRECT),
                    torch.cdist(torch.tensor(a), torch.tensor(b), p=p, compute_mode=DIRECT))
    e2 = ember.cdist(ember.tensor(a), ember.tensor(b), compute_mode=DIRECT)
    t2 = torch.cdist(torch.tensor(a), torch.tensor(b), compute_mode=DIRECT)
    # squares, in-order adds and fused multiply-adds: single roundings, the same bits
    # where torch runs its vectorised build (its scalar build fuses none of them)
    assert_ulp(e2, t2, 0 if TORCH_VECTOR_KERNELS else 2, "torch's scalar kernels fuse no "
               "multiply-add in the sum of squares")
    for p in (0.5, 1.5, 3.0):
        e = ember.cdist(ember.tensor(a), ember.tensor(b), p=p, compute_mode=DIRECT)
        t = torch.cdist(torch.tensor(a), torch.tensor(b), p=p, compute_mode=DIRECT)
        # float32: powf is not correctly rounded in rare cases, where ember's pow in double
        # rounded once may be one ulp away; float64: ember's power is NumPy's, not C's pow
        # (an ulp in the terms and one in the root)
        assert_ulp(e, t, 1 if dtype == np.float32 else 2,
                   "pow rounds apart from torch's C pow (powf, or NumPy's power)")


def test_direct_route_sums_in_order():
    # 1 + 2^-24 * 16 terms: in order each tiny term is lost; NumPy's pairwise sum keeps them
    a = np.zeros((1, 17), np.float32)
    b = np.full((1, 17), 2.0 ** -24, np.float32)
    b[0, 0] = 1.0
    for p in (1.0, 3.0):
        assert_same(ember.cdist(ember.tensor(a), ember.tensor(b), p=p),
                    torch.cdist(torch.tensor(a), torch.tensor(b), p=p))
    assert float(ember.cdist(ember.tensor(a), ember.tensor(b), p=1.0)) == 1.0


def test_direct_route_large_terms_overflow_as_torch():
    a = np.array([[1e200, 0.0]]), np.array([[-1e200, 1.0], [0.0, 2.0]])
    for p in (1.0, 2.0, 3.0, 0.5):
        assert_same(ember.cdist(ember.tensor(a[0]), ember.tensor(a[1]), p=p),
                    torch.cdist(torch.tensor(a[0]), torch.tensor(a[1]), p=p))


@pytest.mark.parametrize("p", PS)
@pytest.mark.parametrize("shapes", [((3, 0), (2, 0)), ((2, 3, 0), (4, 0)), ((0, 3), (2, 3))])
def test_direct_route_with_no_coordinates_or_rows(p, shapes):
    # no coordinates: every distance is 0 (p=inf included: a max over nothing)
    outs = []
    for lib in (ember, torch):
        x = lib.zeros(shapes[0], requires_grad=True)
        out = lib.cdist(x, lib.ones(shapes[1]), p=p, compute_mode=DIRECT)
        out.sum().backward()
        outs.append((out, x.grad))
    assert_same(outs[0][0], outs[1][0])
    assert_same(outs[0][1], outs[1][1])


@pytest.mark.parametrize("p", [0.5, 1.0, 2.0, 3.0])
def test_direct_route_under_vmap_and_jvp(p):
    a, b = rand_array((3, 4, 6), np.float64, seed=11), rand_array((3, 5, 6), np.float64, seed=12)
    t = rand_array((3, 4, 6), np.float64, seed=13)
    assert_same(ember.func.vmap(lambda x, y: ember.cdist(x, y, p=p))(ember.tensor(a),
                                                                      ember.tensor(b)),
                torch.func.vmap(lambda x, y: torch.cdist(x, y, p=p))(torch.tensor(a),
                                                                     torch.tensor(b)))
    # (PyTorch has no forward-mode cdist: central differences of its values instead)
    _, tangent = ember.func.jvp(lambda x: ember.cdist(x, ember.tensor(b), p=p),
                                (ember.tensor(a),), (ember.tensor(t),))
    h = 1e-6
    fd = (torch.cdist(torch.tensor(a + h * t), torch.tensor(b), p=p)
          - torch.cdist(torch.tensor(a - h * t), torch.tensor(b), p=p)) / (2 * h)
    np.testing.assert_allclose(tangent.numpy(), fd.numpy(), rtol=1e-5, atol=1e-6)
