"""The fused batch-norm primitive: values, running statistics and the gradients of input,
weight and bias against torch (training and eval, 1-d to 3-d, chunked over threads, half
and double precision), the grad_fn name, double backward and the meta device."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
from ember.nn import functional as F
from ember.ops import _parallel

from helpers import E2T, assert_same, check_grads, check_module, check_op, rand_array


@pytest.mark.parametrize("shape", [(6, 4), (4, 3, 5), (2, 3, 4, 4), (2, 3, 2, 3, 4)], ids=str)
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_batch_norm_matches_torch(shape, training):
    c = shape[1]
    rm, rv = rand_array((c,), seed=3), rand_array((c,), low=0.5, high=2.0, seed=4)
    rm_e, rv_e, rm_t, rv_t = (ember.tensor(rm), ember.tensor(rv), torch.tensor(rm),
                              torch.tensor(rv))
    check_op(lambda x, w, b: F.batch_norm(x, rm_e, rv_e, w, b, training, 0.3, 1e-3),
             lambda x, w, b: TF.batch_norm(x, rm_t, rv_t, w, b, training, 0.3, 1e-3),
             rand_array(shape, low=1.0, high=5.0), rand_array((c,), seed=1),
             rand_array((c,), seed=2), rtol=1e-4, atol=1e-5)
    assert_same(rm_e, rm_t, rtol=1e-5, atol=1e-6)
    assert_same(rv_e, rv_t, rtol=1e-5, atol=1e-6)


def test_batch_norm_without_affine_or_running_stats_matches_torch():
    x = rand_array((3, 4, 5, 2))
    check_op(lambda a: F.batch_norm(a, None, None, training=True),
             lambda a: TF.batch_norm(a, None, None, training=True), x, rtol=1e-4, atol=1e-5)
    check_op(lambda a, w: F.batch_norm(a, None, None, w, None, True),
             lambda a, w: TF.batch_norm(a, None, None, w, None, True), x,
             rand_array((4,), seed=1), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("chunk_bytes", [1, 1 << 30], ids=["one-sample-chunks", "one-chunk"])
def test_batch_norm_module_chunked_matches_torch(monkeypatch, chunk_bytes):
    """Large enough to share out to the kernel threads; partial channel sums combined."""
    monkeypatch.setattr(_parallel, "BATCH_CHUNK_BYTES", chunk_bytes)
    e_mod, t_mod = ember.nn.BatchNorm2d(16), torch.nn.BatchNorm2d(16)
    with torch.no_grad():
        t_mod.weight.uniform_(0.5, 1.5)
        t_mod.bias.uniform_(-1, 1)
    check_module(e_mod, t_mod, rand_array((24, 16, 24, 24)), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16, ember.float64])
def test_batch_norm_dtypes_match_torch(dtype):
    x, w, b = rand_array((4, 3, 5, 5)), rand_array((3,), seed=1), rand_array((3,), seed=2)
    e = [ember.tensor(a).to(dtype).requires_grad_() for a in (x, w, b)]
    t = [torch.tensor(a).to(E2T[dtype]).requires_grad_() for a in (x, w, b)]
    out_e = F.batch_norm(e[0], None, None, e[1], e[2], True)
    out_t = TF.batch_norm(t[0], None, None, t[1], t[2], True)
    tol = {ember.float64: 1e-10, ember.float16: 4e-3, ember.bfloat16: 3e-2}[dtype]
    assert_same(out_e, out_t, rtol=tol, atol=tol * 4)
    out_e.sum().backward()
    out_t.sum().backward()
    for a, b_ in zip(e, t):
        assert_same(a.grad, b_.grad, rtol=tol, atol=tol * 20)


def test_batch_norm_errors_match_torch():
    for call in (lambda lib, nn: nn.batch_norm(lib.ones(2, 3), None, None, training=False),
                 lambda lib, nn: nn.batch_norm(lib.ones(1, 3), None, None, training=True)):
        with pytest.raises(Exception) as et:
            call(torch, TF)
        with pytest.raises(et.type) as ee:
            call(ember, F)
        assert str(ee.value).replace("ember.Size", "torch.Size") == str(et.value)


def test_batch_norm_grad_fn_and_meta():
    x = ember.randn(4, 3, 2, 2, requires_grad=True)
    out = F.batch_norm(x, None, None, training=True)
    assert out.grad_fn.name() == "NativeBatchNormBackward0"
    m = F.batch_norm(ember.empty(4, 3, 5, 5, device="meta"), None, None,
                     ember.empty(3, device="meta"), ember.empty(3, device="meta"), True)
    assert m.is_meta and tuple(m.shape) == (4, 3, 5, 5)


def test_batch_norm_double_backward_by_finite_differences():
    w0, b0 = rand_array((3,), np.float64, seed=1), rand_array((3,), np.float64, seed=2)

    def grad_norm(x, w):
        x, w = (t if t.requires_grad else t.requires_grad_() for t in (x, w))
        y = F.batch_norm(x, None, None, w, ember.tensor(b0), True)
        gx, gw = ember.autograd.grad((y ** 3).sum(), (x, w), create_graph=True)
        return (gx * gx).sum() + (gw * gw).sum()

    x0 = rand_array((4, 3, 2, 2), np.float64)
    check_grads(lambda x: grad_norm(x, ember.tensor(w0)), x0, rtol=1e-4, atol=1e-6)
    check_grads(lambda w: grad_norm(ember.tensor(x0), w), w0, rtol=1e-4, atol=1e-6)


def test_an_in_place_activation_may_overwrite_the_normalised_output():
    # BatchNorm2d then ReLU(inplace=True), as DCGAN writes it: the backward reads the saved
    # normalised input and 1/std, never the output the ReLU overwrote.
    x, w, b = rand_array((4, 3, 5, 5)), rand_array((3,), seed=1), rand_array((3,), seed=2)
    check_op(lambda a, wt, bs: F.relu(F.batch_norm(a, None, None, wt, bs, True), inplace=True),
             lambda a, wt, bs: TF.relu(TF.batch_norm(a, None, None, wt, bs, True), inplace=True),
             x, w, b, rtol=1e-4, atol=1e-5)


def _weighted_sum(outs, seed: int):
    """One number from several outputs, each weighted elementwise at random (so every
    output's gradient is checked at once)."""
    r = np.random.default_rng(seed)
    return sum((o * ember.tensor(r.standard_normal(tuple(o.shape)))).sum() for o in outs)


@pytest.mark.parametrize("affine", [True, False])
def test_the_fused_backward_kernel_has_a_gradient_in_each_input(affine):
    # forward over reverse (jvp(grad(f))) runs the fused kernel, so it has derivatives
    from ember.ops.batch_norm import batch_norm_backward_p
    from ember.ops.registry import bind

    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((4, 3, 2)), rng.standard_normal((4, 3, 2)),
              rng.uniform(0.5, 2, 3)] + ([rng.standard_normal(3)] if affine else [])
    # (the kernel reads x and the mean, the values xhat stands for: x = xhat / rstd here)
    check_grads(lambda g, xhat, r, *w: _weighted_sum(
        bind(batch_norm_backward_p, g, xhat, r, w[0] if w else None, xhat / r.reshape(1, -1, 1),
             ember.zeros(3, dtype=xhat.dtype)), 1), *arrays)


def _norm_inputs(lib):
    g = lib.Generator().manual_seed(0)
    return {"t2": lib.randn(3, 10, generator=g).t(),
            "t2_step": lib.randn(3, 10, generator=g).t()[::2],
            "perm3": lib.randn(4, 5, 3, generator=g).permute(0, 2, 1),
            "cl": lib.randn(2, 3, 4, 5, generator=g).contiguous(memory_format=lib.channels_last),
            "perm4": lib.randn(2, 4, 5, 3, generator=g).permute(0, 3, 2, 1)}


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_norm_results_are_row_major_or_channels_last_as_torch(training):
    """Regression: batch_norm of a transposed (N, C) input (training) and of a permuted one
    (eval), and group_norm of a permuted input, kept the input's layout; torch gives its
    `suggest_memory_format` (row-major, or channels-last for a channels-last batch)."""
    def calls(L):
        out = []
        for x in _norm_inputs(L).values():
            c = x.shape[1]
            rm, rv = L.zeros(c), L.ones(c)
            out.append(L.nn.functional.batch_norm(x, rm, rv, L.ones(c), L.zeros(c),
                                                  training=training))
            out.append(L.nn.functional.group_norm(x, 3))
        return out

    for got, want in zip(calls(ember), calls(torch)):
        assert got.stride() == want.stride()
        assert_same(got, want, rtol=1e-5, atol=1e-5)  # (per-channel sums: a few ulp apart)
