"""torch.native_* layer functions, ATen's embedding_bag 4-tuple, conv_tbc,
native_channel_shuffle and max_pool3d_with_indices against torch 2.13."""

import numpy as np
import pytest
import torch

import ember

# NOTE: the normalisations sum in a different order from PyTorch's vectorised kernels:
# float32 results agree to a few ulps, hence rtol/atol of 1e-5.
TOL = dict(rtol=1e-5, atol=1e-5)


def E(t, grad=False):
    return ember.tensor(t.detach().numpy(), requires_grad=grad)


def close(e, t, **tol):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), **(tol or TOL))


def test_native_layer_norm_outputs_and_grad():
    torch.manual_seed(0)
    x = torch.randn(2, 3, 4, requires_grad=True)
    w = torch.randn(4, requires_grad=True)
    b = torch.randn(4, requires_grad=True)
    xe, we, be = E(x, True), E(w, True), E(b, True)
    t = torch.native_layer_norm(x, [4], w, b, 1e-5)
    e = ember.native_layer_norm(xe, [4], we, be, 1e-5)
    for a, c in zip(e, t):
        close(a, c)
    assert type(e[0].grad_fn).__name__ == "NativeLayerNormBackward0"
    assert e[1].grad_fn is None and e[2].grad_fn is None
    (t[0] * t[0]).sum().backward()
    (e[0] * e[0]).sum().backward()
    close(xe.grad, x.grad, rtol=1e-4, atol=1e-4)
    close(we.grad, w.grad, rtol=1e-4, atol=1e-4)
    t2 = torch.native_layer_norm(x, [3, 4], None, None, 1e-5)
    e2 = ember.native_layer_norm(xe, [3, 4], None, None, 1e-5)
    for a, c in zip(e2, t2):
        close(a, c)


def test_native_batch_norm_training_and_eval():
    torch.manual_seed(1)
    x = torch.randn(4, 3, 5, dtype=torch.float64, requires_grad=True)
    rm, rv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    rme, rve = E(rm), E(rv)
    xe = E(x, True)
    t = torch.native_batch_norm(x, None, None, rm, rv, True, 0.1, 1e-5)
    e = ember.native_batch_norm(xe, None, None, rme, rve, True, 0.1, 1e-5)
    for a, c in zip(e, t):
        close(a, c, rtol=1e-12, atol=1e-12)
    close(rme, rm, rtol=1e-12, atol=1e-12)
    close(rve, rv, rtol=1e-12, atol=1e-12)
    assert type(e[0].grad_fn).__name__ == "NativeBatchNormBackward0"
    t = torch.native_batch_norm(x, None, None, rm, rv, False, 0.1, 1e-5)
    e = ember.native_batch_norm(xe, None, None, rme, rve, False, 0.1, 1e-5)
    close(e[0], t[0], rtol=1e-12, atol=1e-12)
    assert tuple(e[1].shape) == (0,) and e[1].dtype == ember.float64


def test_native_group_norm_stats_are_differentiable():
    torch.manual_seed(2)
    x = torch.randn(2, 6, 5, dtype=torch.float64, requires_grad=True)
    xe = E(x, True)
    t = torch.native_group_norm(x, None, None, 2, 6, 5, 3, 1e-5)
    e = ember.native_group_norm(xe, None, None, 2, 6, 5, 3, 1e-5)
    for a, c in zip(e, t):
        close(a, c, rtol=1e-12, atol=1e-12)
        assert type(a.grad_fn).__name__ == "NativeGroupNormBackward0"
    sum(u.sum() * (i + 1) for i, u in enumerate(t)).backward()
    sum(u.sum() * (i + 1) for i, u in enumerate(e)).backward()
    close(xe.grad, x.grad, rtol=1e-10, atol=1e-10)
    with pytest.raises(RuntimeError, match="Expected input to have 61 elements"):
        ember.native_group_norm(xe, None, None, 61, 1, 1, 1, 1e-5)


@pytest.mark.parametrize("p", [0.0, 0.3, 1.0])
def test_native_dropout_same_stream_and_mask(p):
    torch.manual_seed(5)
    x = torch.randn(3, 7, requires_grad=True)
    xe = E(x, True)
    torch.manual_seed(9)
    ember.manual_seed(9)
    t = torch.native_dropout(x, p, True)
    e = ember.native_dropout(xe, p, True)
    np.testing.assert_array_equal(e[1].numpy(), t[1].numpy())  # (the same RNG draws)
    np.testing.assert_array_equal(e[0].detach().numpy(), t[0].detach().numpy())
    assert e[1].dtype == ember.bool
    assert type(e[0].grad_fn).__name__ == "NativeDropoutBackward0"
    t[0].sum().backward()
    e[0].sum().backward()
    np.testing.assert_array_equal(xe.grad.numpy(), x.grad.numpy())
    # the generator advanced as PyTorch's did
    assert ember.rand(1).item() == torch.rand(1).item()


def test_native_dropout_eval_and_errors():
    x = torch.randn(2, 3)
    o, m = ember.native_dropout(E(x), 0.5, False)
    np.testing.assert_array_equal(o.numpy(), x.numpy())
    assert m.dtype == ember.bool and bool(m.all())
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        ember.native_dropout(ember.arange(3), 0.5, True)


def test_native_norm_sparse_only():
    i = torch.tensor([[0, 1, 1], [2, 0, 2]])
    v = torch.tensor([3.0, -4.0, 1.0])
    s = torch.sparse_coo_tensor(i, v, (2, 3))
    se = ember.sparse_coo_tensor(E(i), E(v), (2, 3))
    for p in (2, 1, 3):
        close(ember.native_norm(se, p), torch.native_norm(s, p))
    with pytest.raises(RuntimeError, match="only supports full reductions"):
        ember.native_norm(se, 2, [1], False, None)
    with pytest.raises(NotImplementedError, match="Could not run 'aten::native_norm'"):
        ember.native_norm(ember.ones(3))


# NOTE: include_last_offset with offsets[-1] short of the input's end is left out: PyTorch's
# CPU kernel then sums to offsets[-1] but divides (and takes maxima) to the end, and its sum
# backward reads uninitialised memory.
CASES = [((0, 2, 2, 5), False, None), ((0, 2, 2, 5), False, 4), ((0, 2, 2, 8), True, None),
         ((0, 2, 5, 8), True, 2), ((0, 3), False, None)]


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("offsets,last,pad", CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_embedding_bag_four_outputs(mode, offsets, last, pad, dtype):
    torch.manual_seed(3)
    w = torch.randn(10, 2, dtype=dtype, requires_grad=True)
    i = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
    off = torch.tensor(offsets)
    we = E(w, True)
    t = torch.embedding_bag(w, i, off, False, mode, False, None, last, pad)
    e = ember.embedding_bag(we, E(i), E(off), False, mode, False, None, last, pad)
    close(e[0], t[0], rtol=1e-6, atol=1e-6)  # (sums in PyTorch's order: a few ulps)
    for a, c in zip(e[1:], t[1:]):
        assert a.dtype == ember.int64
        np.testing.assert_array_equal(a.numpy(), c.numpy())
    assert type(e[0].grad_fn).__name__ == "EmbeddingBagBackward0"
    t[0].sum().backward()
    e[0].sum().backward()
    close(we.grad, w.grad, rtol=1e-6, atol=1e-6)


def test_embedding_bag_int32_indices_and_offsets_required():
    w = torch.randn(10, 2)
    i = torch.tensor([1, 2, 4, 5], dtype=torch.int32)
    off = torch.tensor([0, 2], dtype=torch.int32)
    t = torch.embedding_bag(w, i, off, False, 1)
    e = ember.embedding_bag(E(w), E(i), E(off), False, 1)
    for a, c in zip(e[1:], t[1:]):
        assert a.dtype == ember.int32
        np.testing.assert_array_equal(a.numpy(), c.numpy())
    with pytest.raises(TypeError, match="argument 'offsets' \\(position 3\\) must be Tensor"):
        ember.embedding_bag(E(w), E(i), None)


def test_conv_tbc_values_grads_and_errors():
    torch.manual_seed(4)
    x = torch.randn(5, 2, 3, dtype=torch.float64, requires_grad=True)
    w = torch.randn(3, 3, 4, dtype=torch.float64, requires_grad=True)
    b = torch.randn(4, dtype=torch.float64, requires_grad=True)
    xe, wbe, be = E(x, True), E(w, True), E(b, True)
    for pad in (0, 1, 2):
        t = torch.conv_tbc(x, w, b, pad)
        e = ember.conv_tbc(xe, wbe, be, pad)
        close(e, t, rtol=1e-12, atol=1e-12)
        assert e.stride() == t.stride()
        assert type(e.grad_fn).__name__ == "ConvTbcBackward0"
    (t * t).sum().backward()
    (e * e).sum().backward()
    for a, c in ((xe, x), (wbe, w), (be, b)):
        close(a.grad, c.grad, rtol=1e-12, atol=1e-12)
    assert ember.nn.functional.conv_tbc is ember.conv_tbc
    bad = [((x[0], w, b), "Input must have 3 dims"),
           ((x, w[:, :2], b), "Input dim 2 \\(input channels\\) is not == dim 1"),
           ((x, w, b[:2]), "Bias size must equal dim 2")]
    for args, msg in bad:
        with pytest.raises(RuntimeError, match=msg):
            torch.conv_tbc(*args, 0)
        with pytest.raises(RuntimeError, match=msg):
            ember.conv_tbc(*(E(a) for a in args), 0)


def test_channel_shuffle_checks_and_native_form():
    torch.manual_seed(6)
    x = torch.randn(2, 6, 3, requires_grad=True)
    xe = E(x, True)
    for fn in ("channel_shuffle", "native_channel_shuffle"):
        t = getattr(torch.nn.functional, fn)(x, 3)
        e = getattr(ember.nn.functional, fn)(xe, 3)
        np.testing.assert_array_equal(e.detach().numpy(), t.detach().numpy())
        assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__
        for args in ((x, 4), (x, 0), (x, -1), (x[0], 2), (x, 2.0)):
            with pytest.raises(Exception) as want:
                getattr(torch.nn.functional, fn)(*args)
            with pytest.raises(type(want.value)) as got:
                getattr(ember.nn.functional, fn)(E(args[0]), args[1])
            assert str(got.value) == str(want.value).split("\n")[0].replace("native_", "")
    with pytest.raises(RuntimeError, match="derivative for aten::native_channel_shuffle"):
        ember.native_channel_shuffle(xe, 2).sum().backward()


def test_max_pool3d_with_indices():
    torch.manual_seed(7)
    x = torch.randn(1, 2, 5, 4, 4, requires_grad=True)
    t = torch.nn.functional.max_pool3d_with_indices(x, 2, ceil_mode=True)
    e = ember.nn.functional.max_pool3d_with_indices(E(x), 2, ceil_mode=True)
    for a, c in zip(e, t):
        np.testing.assert_array_equal(a.detach().numpy(), c.detach().numpy())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("param", [None, "float32", "same"])
def test_reduced_precision_statistics_dtype(dtype, param):
    # float16 / bfloat16 inputs: the statistics are float32 with float32 parameters (PyTorch's
    # "mixed type"), else the input's dtype; values within one unit of the last place
    x = torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(0))
    xt, xe = x.to(getattr(torch, dtype)), E(x).to(getattr(ember, dtype))
    pd = dtype if param == "same" else param

    def p(n, lib):
        return None if pd is None else lib.ones(n, dtype=getattr(lib, pd))

    calls = [("native_layer_norm", lambda m, v: (v, [4], p(4, m), None, 1e-5)),
             ("native_batch_norm", lambda m, v: (v, p(3, m), None, None, None, True, 0.1,
                                                 1e-5)),
             ("native_group_norm", lambda m, v: (v, p(3, m), None, 2, 3, 4, 3, 1e-5))]
    for name, args in calls:
        t = getattr(torch, name)(*args(torch, xt))
        e = getattr(ember, name)(*args(ember, xe))
        for a, b in zip(e, t):
            assert str(a.dtype).split(".")[1] == str(b.dtype).split(".")[1]
            np.testing.assert_allclose(a.detach().float().numpy(), b.detach().float().numpy(),
                                       rtol=8e-3, atol=8e-3)
