"""Forward mode and vmap over the op catalogue, against torch.func on the same calls.

Each case is a function of float64 tensors written once against a module `m` (ember or
torch). `func.jvp` must give torch's output and tangent; `vmap` over a batch of 3 (the
first argument batched along a random axis, or every argument batched) must give torch's
batched result. Inputs stay away from kinks and poles.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same


def _pos(x):
    return x.abs() + 0.5


def _idx(m):
    return m.tensor([2, 0, 1])


CASES = {
    # unary maps
    "exp": (lambda m, x: x.exp(), [(3, 4)]),
    "log": (lambda m, x: _pos(x).log(), [(3, 4)]),
    "sin_cos": (lambda m, x: x.sin() * x.cos(), [(3, 4)]),
    "tanh_sigmoid": (lambda m, x: x.tanh() + x.sigmoid(), [(3, 4)]),
    "sqrt_rsqrt": (lambda m, x: _pos(x).sqrt() + _pos(x).rsqrt(), [(4,)]),
    "activations": (lambda m, x: m.nn.functional.gelu(x) + m.nn.functional.silu(x)
                    + m.nn.functional.softplus(x) + m.nn.functional.elu(x)
                    + m.nn.functional.mish(x) + m.nn.functional.logsigmoid(x), [(3, 4)]),
    "relu_leaky": (lambda m, x: m.relu(x) + m.nn.functional.leaky_relu(x, 0.1), [(3, 4)]),
    "erf_lgamma": (lambda m, x: m.erf(x) + m.lgamma(_pos(x)) + m.digamma(_pos(x)), [(5,)]),
    "atan_asinh": (lambda m, x: x.atan() + x.asinh() + x.expm1(), [(5,)]),
    # binary and ternary maps
    "arith": (lambda m, x, y: (x + y) * (x - y) / _pos(y), [(3, 4), (4,)]),
    "pow": (lambda m, x, y: _pos(x) ** y + x ** 2, [(3, 4), (3, 4)]),
    "atan2_hypot": (lambda m, x, y: m.atan2(x, _pos(y)) + m.hypot(x, y), [(3, 4), (3, 4)]),
    "max_min": (lambda m, x, y: m.maximum(x, y * 1.5) - m.minimum(x, y * 1.5), [(6,), (6,)]),
    "where_clamp": (lambda m, x, y: m.where(x > 0, x, y).clamp(-0.9, 0.9), [(3, 4), (3, 4)]),
    "lerp_addcmul": (lambda m, x, y: m.lerp(x, y, 0.3) + m.addcmul(x, x, y, value=0.5),
                     [(3, 4), (3, 4)]),
    # reductions, scans, softmax
    "sum_mean": (lambda m, x: x.sum(0) + x.mean(1, keepdim=True).sum(), [(3, 4)]),
    "var_std": (lambda m, x: x.var(1) + x.std(0).sum(), [(3, 4)]),
    "prod_amax": (lambda m, x: _pos(x).prod(1) + x.amax(1), [(3, 4)]),
    "norms": (lambda m, x: x.norm() + m.linalg.vector_norm(x, 3, dim=1).sum(), [(3, 4)]),
    "softmaxes": (lambda m, x: x.softmax(1) + x.log_softmax(0) + x.logsumexp(1, True),
                  [(3, 4)]),
    "scans": (lambda m, x: x.cumsum(1) + _pos(x).cumprod(0), [(3, 4)]),
    "sort_topk": (lambda m, x: x.sort(1).values + x.topk(2, dim=1).values.sum(1, True),
                  [(3, 4)]),
    "max_dim": (lambda m, x: x.max(1).values + x.median(1).values, [(3, 5)]),
    # views and joins
    "views": (lambda m, x: x.t().reshape(2, 6).unsqueeze(0).expand(2, 2, 6).sum(0), [(3, 4)]),
    "slices": (lambda m, x: x[1:, ::2] + x.narrow(0, 1, 2)[:, :2]
               + x.select(1, 0)[1:].unsqueeze(1), [(3, 4)]),
    "permute_flip": (lambda m, x: x.permute(2, 0, 1).flip(0).roll(1, 2), [(2, 3, 4)]),
    "cat_stack": (lambda m, x, y: m.cat([x, y], 0) + m.stack([x, y]).sum(0).repeat(2, 1),
                  [(2, 3), (2, 3)]),
    "diag": (lambda m, x: x.diagonal() + m.diag_embed(x[0]).sum(0), [(3, 3)]),
    # matmul, nn
    "matmul": (lambda m, x, w: (x @ w) + m.mm(x, w), [(3, 4), (4, 2)]),
    "bmm_einsum": (lambda m, x, y: m.bmm(x, y) + m.einsum("bij,bjk->bik", x, y),
                   [(2, 3, 4), (2, 4, 2)]),
    "linear": (lambda m, x, w, b: m.nn.functional.linear(x, w, b), [(5, 3), (2, 3), (2,)]),
    "conv2d": (lambda m, x, w: m.nn.functional.conv2d(x, w, padding=1),
               [(1, 2, 5, 5), (3, 2, 3, 3)]),
    "conv1d": (lambda m, x, w: m.nn.functional.conv1d(x, w, stride=2), [(2, 2, 7), (3, 2, 3)]),
    "pools": (lambda m, x: m.nn.functional.max_pool2d(x, 2)
              + m.nn.functional.avg_pool2d(x, 2), [(1, 2, 4, 4)]),
    "layer_norm": (lambda m, x, w, b: m.nn.functional.layer_norm(x, (4,), w, b),
                   [(3, 4), (4,), (4,)]),
    "cross_entropy": (lambda m, x: m.nn.functional.cross_entropy(x, _idx(m)), [(3, 4)]),
    "mse_smooth_l1": (lambda m, x, y: m.nn.functional.mse_loss(x, y)
                      + m.nn.functional.smooth_l1_loss(x, y * 3), [(3, 4), (3, 4)]),
    "bce_logits": (lambda m, x, y: m.nn.functional.binary_cross_entropy_with_logits(
        x, y.sigmoid()), [(3, 4), (3, 4)]),
    "pad": (lambda m, x: m.nn.functional.pad(x, (1, 2)), [(3, 4)]),
    # indexing
    "gather_index": (lambda m, x: x.gather(1, _idx(m).unsqueeze(1)) + x[_idx(m)][:, :1]
                     + x.index_select(0, _idx(m))[:, 1:2], [(3, 4)]),
    "masked_fill": (lambda m, x: x.masked_fill(x > 0.5, 0.0), [(3, 4)]),
    "scatter_add": (lambda m, x, y: x.scatter_add(0, _idx(m).unsqueeze(1).expand(3, 4), y),
                    [(3, 4), (3, 4)]),
    # linear algebra, fft
    "inv_det": (lambda m, a: m.linalg.inv(a + 4 * m.eye(3, dtype=a.dtype))
                + m.linalg.det(a + 4 * m.eye(3, dtype=a.dtype)), [(3, 3)]),
    "solve": (lambda m, a, b: m.linalg.solve(a + 4 * m.eye(3, dtype=a.dtype), b),
              [(3, 3), (3, 2)]),
    "cholesky": (lambda m, a: m.linalg.cholesky(a @ a.mT + 3 * m.eye(3, dtype=a.dtype)),
                 [(3, 3)]),
    "eigh_svd": (lambda m, a: m.linalg.eigvalsh(a + a.mT) + m.linalg.svdvals(a), [(3, 3)]),
    "qr": (lambda m, a: m.linalg.qr(a).R.abs() * 0 + m.linalg.qr(a).Q @ m.linalg.qr(a).R,
           [(3, 3)]),
    "fft": (lambda m, x: m.fft.irfft(m.fft.rfft(x) * 2, n=6) + m.fft.fft(x).real, [(3, 6)]),
}


def _inputs(m, shapes, seed):
    rng = np.random.default_rng(seed)
    return [m.tensor(rng.uniform(-1.5, 1.5, s)) for s in shapes]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("name", sorted(CASES))
def test_jvp_matches_torch(name):
    fn, shapes = CASES[name]

    def run(m):
        xs, ts = _inputs(m, shapes, 0), _inputs(m, shapes, 1)
        return m.func.jvp(lambda *a: fn(m, *a), tuple(xs), tuple(ts))

    e, t = run(ember), run(torch)
    assert_same(e[0], t[0], rtol=1e-9, atol=1e-10)
    assert_same(e[1], t[1], rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("every", [False, True], ids=["first", "every"])
def test_vmap_matches_torch(name, every):
    fn, shapes = CASES[name]
    rng = np.random.default_rng(2)
    dims = [int(rng.integers(0, len(s) + 1)) if (every or i == 0) else None
            for i, s in enumerate(shapes)]
    batched = [s[:d] + (3,) + s[d:] if d is not None else s for s, d in zip(shapes, dims)]

    def run(m):
        return m.vmap(lambda *a: fn(m, *a), in_dims=tuple(dims))(*_inputs(m, batched, 3))

    assert_same(run(ember), run(torch), rtol=1e-9, atol=1e-10)
