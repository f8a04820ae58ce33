"""SyncBatchNorm's kernels against torch 2.13.

torch's CPU build runs only batch_norm_update_stats (compared directly); the other six are CUDA
kernels there, so they are checked by what SyncBatchNorm composes from them: split a batch
into "processes", run stats -> gather -> elemt forward and backward_reduce -> backward_elemt
backward, and compare with torch's batch_norm over the whole batch and its autograd gradients.
"""

import numpy as np
import pytest
import torch

import ember

# NOTE: ember computes these in float64 and rounds once; torch's batch_norm accumulates in
# the input dtype's accumulate type, so float32 results agree to a few ulps.
TOL = {torch.float32: 2e-5, torch.float64: 1e-12}


def _e(t):
    return None if t is None else ember.from_numpy(t.detach().numpy().copy())


def _t(e):
    return None if e is None else torch.from_numpy(e.detach().numpy().copy())


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (2, 3, 2, 2)])
@pytest.mark.parametrize("running", [True, False])
def test_update_stats_matches_torch(dtype, shape, running):
    torch.manual_seed(0)
    x = torch.randn(*shape).to(getattr(torch, dtype))
    pd = torch.float32 if dtype == "float16" else x.dtype  # (mixed: float32 parameters)
    rm = torch.randn(3).to(pd) if running else None
    rv = torch.rand(3).to(pd) + 0.5 if running else None
    ed = getattr(ember, str(pd)[6:])
    erm, erv = (_e(rm.float()).to(ed), _e(rv.float()).to(ed)) if running else (None, None)
    t = torch.batch_norm_update_stats(x, rm, rv, 0.1)
    e = ember.batch_norm_update_stats(_e(x.float()).to(getattr(ember, dtype)), erm, erv, 0.1)
    tol = 1e-2 if dtype in ("float16", "bfloat16") else TOL[x.dtype]
    for a, b in zip(e, t):
        assert str(a.dtype)[6:] == str(b.dtype)[6:]
        np.testing.assert_allclose(_t(a.float()), b.float(), rtol=tol, atol=tol)
    if running:
        np.testing.assert_allclose(_t(erm.float()), rm.float(), rtol=tol, atol=tol)
        np.testing.assert_allclose(_t(erv.float()), rv.float(), rtol=tol, atol=tol)


def test_update_stats_no_derivative_node():
    for lib in (torch, ember):
        x = lib.randn(4, 3, requires_grad=True)
        m, v = lib.batch_norm_update_stats(x, None, None, 0.1)
        assert m.grad_fn is v.grad_fn and m.grad_fn.name() == "torch::autograd::NotImplemented"
        with pytest.raises(RuntimeError,
                           match="derivative for aten::batch_norm_update_stats is not "):
            (m.sum() + v.sum()).backward()


@pytest.mark.parametrize("call, kind", [
    (lambda L: L.batch_norm_update_stats(L.randn(3), L.zeros(3), L.ones(3), 0.1), IndexError),
    (lambda L: L.batch_norm_update_stats(L.randn(0, 3), L.zeros(3), L.ones(3), 0.1),
     RuntimeError),
    (lambda L: L.batch_norm_update_stats(L.ones(4, 3, dtype=L.long), L.zeros(3), L.ones(3),
                                         0.1), NotImplementedError),
    (lambda L: L.batch_norm_update_stats(L.randn(4, 3), L.zeros(3, dtype=L.float64),
                                         L.ones(3), 0.1), RuntimeError),
])
def test_update_stats_refusals(call, kind):
    msgs = []
    for lib in (torch, ember):
        with pytest.raises(kind) as exc:
            call(lib)
        msgs.append(str(exc.value))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("affine", [True, False])
def test_composed_sync_batch_norm_matches_torch_batch_norm(dtype, affine):
    torch.manual_seed(1)
    eps, mom = 1e-5, 0.1
    x = torch.randn(6, 3, 4, dtype=dtype, requires_grad=True)
    w = (torch.rand(3, dtype=dtype) + 0.5).requires_grad_() if affine else None
    b = torch.randn(3, dtype=dtype, requires_grad=True) if affine else None
    rm, rv = torch.zeros(3, dtype=dtype), torch.ones(3, dtype=dtype)
    y = torch.nn.functional.batch_norm(x, rm, rv, w, b, True, mom, eps)
    dy = torch.randn_like(y)
    y.backward(dy)

    # three "processes" of sizes 1, 2, 3
    parts = [(0, 1), (1, 3), (3, 6)]
    stats = [ember.batch_norm_stats(_e(x[i:j]), eps) for i, j in parts]
    mean = ember.stack([s[0] for s in stats])
    invstd = ember.stack([s[1] for s in stats])
    counts = ember.tensor([4.0 * (j - i) for i, j in parts], dtype=mean.dtype)  # (values)
    erm, erv = _e(rm.zero_()), _e(rv.fill_(1))
    gm, ginv = ember.batch_norm_gather_stats_with_counts(_e(x), mean, invstd, erm, erv, mom, eps,
                                                         counts)
    ey = ember.cat([ember.batch_norm_elemt(_e(x[i:j]), _e(w), _e(b), gm, ginv, eps)
                    for i, j in parts])
    tol = TOL[dtype]
    np.testing.assert_allclose(_t(ey), y.detach(), rtol=tol, atol=tol)
    torch.nn.functional.batch_norm(x.detach(), rm, rv, None, None, True, mom, eps)
    np.testing.assert_allclose(_t(erm), rm, rtol=tol, atol=tol)
    np.testing.assert_allclose(_t(erv), rv, rtol=tol, atol=tol)

    reduced = [ember.batch_norm_backward_reduce(_e(dy[i:j]), _e(x[i:j]), gm, ginv, _e(w), True,
                                                affine, affine) for i, j in parts]
    sum_dy = sum(r[0] for r in reduced)
    sum_dy_xmu = sum(r[1] for r in reduced)
    count = ember.tensor([4 * (j - i) for i, j in parts], dtype=ember.int32)
    dx = ember.cat([ember.batch_norm_backward_elemt(_e(dy[i:j]), _e(x[i:j]), gm, ginv, _e(w),
                                                    sum_dy, sum_dy_xmu, count)
                    for i, j in parts])
    np.testing.assert_allclose(_t(dx), x.grad, rtol=tol, atol=tol)
    if affine:
        np.testing.assert_allclose(_t(sum(r[2] for r in reduced)), w.grad, rtol=tol, atol=tol)
        np.testing.assert_allclose(_t(sum(r[3] for r in reduced)), b.grad, rtol=tol, atol=tol)
    else:
        assert reduced[0][2] is None and reduced[0][3] is None


def test_stats_values_and_dtypes():
    x = torch.randn(5, 3, 4)
    var, mean = torch.var_mean(x, (0, 2), unbiased=False)
    m, inv = ember.batch_norm_stats(_e(x), 1e-3)
    np.testing.assert_allclose(_t(m), mean, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(_t(inv), (var + 1e-3).rsqrt(), rtol=1e-6)
    h, hi = ember.batch_norm_stats(_e(x).half(), 1e-3)
    assert h.dtype == hi.dtype == ember.float32  # (float16 input: float32 statistics)
    # gather with an int count is gather with equal counts
    parts = ember.stack([m, m * 2]), ember.stack([inv, inv])
    a = ember.batch_norm_gather_stats(_e(x), *parts, None, None, 0.1, 1e-3, 20)
    b = ember.batch_norm_gather_stats_with_counts(_e(x), *parts, None, None, 0.1, 1e-3,
                                                  ember.tensor([20.0, 20.0]))
    assert all(ember.equal(p, q) for p, q in zip(a, b))
    np.testing.assert_allclose(_t(a[0]), 1.5 * mean, rtol=1e-6, atol=1e-6)


def test_cuda_kernels_have_no_derivative():
    x = ember.randn(4, 3, requires_grad=True)
    m, inv = ember.batch_norm_stats(x, 1e-5)
    assert m.grad_fn.name() == "torch::autograd::NotImplemented"
    with pytest.raises(RuntimeError, match="derivative for aten::batch_norm_stats is not"):
        m.sum().backward()
    y = ember.batch_norm_elemt(x, None, None, m.detach(), inv.detach(), 1e-5)
    assert y.grad_fn.name() == "torch::autograd::NotImplemented"
