"""Batch norm in evaluation, group norm, rms norm and F.normalize's division run as their
kernels on arrays for a plain call
(ops/norm_plain.py): the composite's bits, layout and dtype, no node; torch's values and
strides; and the calls that must keep the composite (a gradient wanted, other layouts,
16-bit inputs, vmap, arguments of other types)."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as TF

import ember
from ember.nn import functional as F
from ember.ops import norm_plain

from helpers import assert_same, rand_array

# (float32 / float64 shapes; which of weight and bias are given; eps)
CASES = [((2, 8, 6, 6), "float32", (True, True), 1e-5),
         ((4, 16), "float32", (False, False), 1e-5),
         ((3, 6, 7), "float64", (True, False), 1e-3),
         ((2, 4, 2, 2, 2), "float32", (False, True), 0.1),
         ((1, 4, 1, 1), "float64", (True, True), 1e-5)]


def _operands(rng, shape, dtype, affine):
    c = shape[1]
    arrs = [rng.uniform(-3, 3, shape), rng.uniform(-1, 1, c), rng.uniform(0.2, 3, c),
            rng.uniform(-2, 2, c), rng.uniform(-2, 2, c)]
    out = []
    for lib in (ember, torch):
        ts = [lib.tensor(a, dtype=getattr(lib, dtype)) for a in arrs]
        out.append(ts[:3] + [v if on else None for v, on in zip(ts[3:], affine)])
    return out


def _composite(fn, x, *args):
    """`fn(x, *args)` by the composite's ops: x wanting a gradient, under saved-tensor hooks
    (which the kernels path and the constants path leave to the composite)."""
    x = x.clone().requires_grad_()
    with ember.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        return fn(x, *args), x


def _same_as_composite(fast, composite):
    assert fast.grad_fn is None and composite.grad_fn is not None
    np.testing.assert_array_equal(fast.numpy(), composite.detach().numpy())
    assert fast.stride() == composite.stride() and fast.dtype == composite.dtype


def test_plain_calls_are_the_composites_bits_and_torchs_values():
    rng = np.random.default_rng(0)
    for shape, dtype, affine, eps in CASES:
        (x, rm, rv, w, b), (xt, rmt, rvt, wt, bt) = _operands(rng, shape, dtype, affine)
        assert norm_plain.batch_norm_eval(x, rm, rv, w, b, eps) is not None
        assert norm_plain.group_norm(x, 2, w, b, eps) is not None
        def bn(a, r_m, r_v, w_, b_, eps=eps):
            return F.batch_norm(a, r_m, r_v, w_, b_, False, 0.1, eps)

        ref, _ = _composite(bn, x, rm, rv, w, b)
        _same_as_composite(bn(x, rm, rv, w, b), ref)
        _same_as_composite(F.group_norm(x, 2, w, b, eps),
                           _composite(F.group_norm, x, 2, w, b, eps)[0])
        # (torch's statistics and rsqrt are vectorised: an ulp or so apart)
        assert_same(bn(x, rm, rv, w, b), TF.batch_norm(xt, rmt, rvt, wt, bt, False, 0.1, eps),
                    rtol=1e-6, atol=1e-6, check_stride=True)
        assert_same(F.group_norm(x, 2, w, b, eps), TF.group_norm(xt, 2, wt, bt, eps),
                    rtol=1e-5, atol=1e-5, check_stride=True)


def test_frozen_batch_norm_records_one_op_on_constants():
    """Evaluation mode where only the input wants a gradient: the per-channel scale and shift
    computed as kernels on arrays, the one recorded op on the input: the composite's values,
    node name, next functions and gradient, bit for bit; a channels-last input too."""
    rng = np.random.default_rng(2)
    for (shape, dtype, affine, eps), cl in zip(CASES, (False, False, False, False, True)):
        (x, rm, rv, w, b), _ = _operands(rng, shape, dtype, affine)
        if cl:
            x = x.contiguous(memory_format=ember.channels_last)
        assert norm_plain.batch_norm_eval_affine(x, rm, rv, w, b, eps) is not None
        def bn(a, stats=(rm, rv, w, b), eps=eps):
            return F.batch_norm(a, *stats, False, 0.1, eps)

        ref, xr = _composite(bn, x)
        xg = x.clone().requires_grad_()
        got = bn(xg)
        np.testing.assert_array_equal(got.detach().numpy(), ref.detach().numpy())
        assert got.stride() == ref.stride()
        assert type(got.grad_fn).__name__ == type(ref.grad_fn).__name__ == \
            "NativeBatchNormBackward0"
        assert [type(f).__name__ for f, _ in got.grad_fn.next_functions if f is not None] == \
            [type(f).__name__ for f, _ in ref.grad_fn.next_functions if f is not None]
        g = ember.tensor(rng.uniform(-1, 1, shape), dtype=x.dtype)
        got.backward(g)
        ref.backward(g)
        np.testing.assert_array_equal(xg.grad.numpy(), xr.grad.numpy())
    # (a weight that wants a gradient: the composite's ops)
    x = ember.randn(2, 3, 4)
    assert norm_plain.batch_norm_eval_affine(x, ember.zeros(3), ember.ones(3),
                                             ember.ones(3, requires_grad=True), None,
                                             1e-5) is None


def test_rms_norm_plain_calls():
    """Over the trailing one or two dims, with and without a weight, eps given or the
    dtype's: the composite's bits (its clone made contiguous), torch's values."""
    rng = np.random.default_rng(1)
    for shape, k, dtype, weighted, eps in [((4, 16), 1, "float32", False, None),
                                          ((2, 3, 4, 5), 2, "float32", True, None),
                                          ((3, 7), 1, "float64", True, 1e-3),
                                          ((5,), 1, "float64", False, 0.5)]:
        a, wa = rng.uniform(-3, 3, shape), rng.uniform(-2, 2, shape[len(shape) - k:])
        x, xt = ember.tensor(a, dtype=getattr(ember, dtype)), torch.tensor(a).to(
            getattr(torch, dtype))
        w = ember.tensor(wa, dtype=x.dtype) if weighted else None
        wt = torch.tensor(wa, dtype=xt.dtype) if weighted else None
        norm = tuple(shape[len(shape) - k:])
        eps_used = ember.finfo(x.dtype).eps if eps is None else eps
        assert norm_plain.rms_norm(x, k, w, eps_used) is not None
        _same_as_composite(F.rms_norm(x, norm, w, eps),
                           F.rms_norm(x.clone().requires_grad_(), norm, w, eps))
        assert_same(F.rms_norm(x, norm, w, eps), TF.rms_norm(xt, norm, wt, eps), rtol=1e-5,
                    atol=1e-6, check_stride=True)
    x = ember.tensor(rand_array((3, 4)))
    assert norm_plain.rms_norm(x, 1, None, 1) is None  # (an int eps: the composite's sum)
    assert norm_plain.rms_norm(x.t(), 1, None, 1e-5) is None
    assert norm_plain.rms_norm(x.half(), 1, None, 1e-5) is None
    xt = torch.tensor(rand_array((3, 4)))
    assert_same(F.rms_norm(x.t(), (3,)), TF.rms_norm(xt.t(), (3,)), rtol=1e-6, atol=1e-6,
                check_stride=True)


def test_normalize_plain_calls():
    """F.normalize over a dim or two, p 2, 1 or inf, a row of zeros (eps) and a NaN: the
    composite's bits, torch's values; `out=`, an int eps and a transposed input keep the
    composite."""
    a = rand_array((4, 6), low=-2, high=2)
    a[1] = 0.0
    a[2, 3] = np.nan
    for dtype in ("float32", "float64"):
        x = ember.tensor(a, dtype=getattr(ember, dtype))
        xt = torch.tensor(a).to(getattr(torch, dtype))
        for p, dim, eps in ((2.0, 1, 1e-12), (1.0, 0, 1e-3), (float("inf"), -1, 1e-12),
                            (2.0, (0, 1), 0.5)):
            norm = ember.linalg.vector_norm(x, p, dim=dim, keepdim=True)
            assert norm_plain.normalized(x, norm, eps) is not None
            _same_as_composite(F.normalize(x, p, dim, eps),
                               _composite(F.normalize, x, p, dim, eps)[0])
            assert_same(F.normalize(x, p, dim, eps), TF.normalize(xt, p, dim, eps),
                        rtol=1e-6, atol=1e-7, check_stride=True)
    x = ember.tensor(a)
    assert norm_plain.normalized(x, x.norm(dim=1, keepdim=True), 0) is None
    assert norm_plain.normalized(x.t(), x.t().norm(dim=1, keepdim=True), 1e-12) is None
    out = ember.empty(4, 6)
    assert F.normalize(x, out=out) is out
    assert_same(out, TF.normalize(torch.tensor(a)), rtol=1e-6, atol=1e-7)
    assert_same(F.normalize(x.t()), TF.normalize(torch.tensor(a).t()), rtol=1e-6, atol=1e-7,
                check_stride=True)


def test_calls_that_keep_the_composite():
    x = rand_array((2, 4, 3, 3), seed=5)
    xe, xt = ember.tensor(x), torch.tensor(x)
    rm_e, rv_e, rm_t, rv_t = ember.zeros(4), ember.ones(4), torch.zeros(4), torch.ones(4)
    w_e = ember.ones(4, requires_grad=True)
    assert type(F.batch_norm(xe, rm_e, rv_e, w_e, None, False).grad_fn).__name__ == \
        "NativeBatchNormBackward0"
    assert type(F.group_norm(xe, 2, w_e).grad_fn).__name__ == "NativeGroupNormBackward0"
    assert norm_plain.group_norm(xe, 2, w_e, None, 1e-5) is None
    with ember.no_grad():
        assert norm_plain.group_norm(xe, 2, w_e, None, 1e-5) is not None
        assert F.batch_norm(xe, rm_e, rv_e, w_e, None, False).grad_fn is None
        assert F.group_norm(xe, 2, w_e).grad_fn is None
    for make in (lambda L, a: a.contiguous(memory_format=L.channels_last),
                 lambda L, a: a.transpose(2, 3), lambda L, a: a.half()):
        tol = 1e-3 if make(ember, xe).dtype == ember.float16 else 1e-5
        assert_same(F.batch_norm(make(ember, xe), rm_e, rv_e, None, None, False),
                    TF.batch_norm(make(torch, xt), rm_t, rv_t, None, None, False), rtol=tol,
                    atol=tol, check_stride=True)
        assert_same(F.group_norm(make(ember, xe), 2), TF.group_norm(make(torch, xt), 2),
                    rtol=tol, atol=tol, check_stride=True)
    xs_e, xs_t = ember.stack([xe, xe + 1]), torch.stack([xt, xt + 1])
    assert_same(ember.vmap(lambda a: F.batch_norm(a, rm_e, rv_e, None, None, False))(xs_e),
                torch.vmap(lambda a: TF.batch_norm(a, rm_t, rv_t, None, None, False))(xs_t),
                rtol=1e-6, atol=1e-6)
    assert_same(ember.vmap(lambda a: F.group_norm(a, 2))(xs_e),
                torch.vmap(lambda a: TF.group_norm(a, 2))(xs_t), rtol=1e-5, atol=1e-5)
    # an empty batch, and an eps given as an int: the composite, as torch
    assert_same(F.group_norm(ember.zeros(0, 4, 2), 2), TF.group_norm(torch.zeros(0, 4, 2), 2))
    assert_same(F.batch_norm(xe, rm_e, rv_e, None, None, False, 0.1, 0),
                TF.batch_norm(xt, rm_t, rv_t, None, None, False, 0.1, 0), rtol=1e-6,
                atol=1e-6)
