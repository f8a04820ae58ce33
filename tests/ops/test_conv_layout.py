"""Convolutions lay their outputs out as PyTorch's CPU kernels do: channels-last when the
input or the weight is (c10's `suggest_memory_format`, ambiguous layouts read as
contiguous), for plain and transposed, grouped and biased ones; 3-d ones only where PyTorch
runs oneDNN. The node keeps PyTorch's name and gradients are unchanged."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same


def _cl(L, a, nd=2):
    """`a` (NumPy) as a tensor of library L with its channel dim innermost in memory."""
    perm = (0,) + tuple(range(2, 2 + nd)) + (1,)
    back = tuple(int(i) for i in np.argsort(perm))
    return L.tensor(np.ascontiguousarray(a.transpose(perm))).permute(*back)


def _arrays(*shapes):
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


CASES = {
    "input cl": (2, (2, 4, 6, 6), (8, 4, 3, 3), True, False, {}),
    "weight cl": (2, (2, 4, 6, 6), (8, 4, 3, 3), False, True, {}),
    "both, padded": (2, (2, 4, 6, 6), (8, 4, 3, 3), True, True, {"padding": 1}),
    "depthwise": (2, (2, 4, 6, 6), (4, 1, 3, 3), True, False, {"groups": 4}),
    "1x1 strided": (2, (2, 4, 6, 6), (8, 4, 1, 1), True, False, {"stride": 2}),
    "one channel": (2, (2, 1, 5, 5), (3, 1, 3, 3), True, False, {}),
    "1x1 spatial": (2, (2, 4, 1, 1), (3, 4, 1, 1), True, False, {}),
    "contiguous": (2, (2, 4, 6, 6), (8, 4, 3, 3), False, False, {}),
    "3d input cl": (3, (2, 2, 4, 5, 5), (3, 2, 3, 3, 3), True, False, {}),
    "3d weight cl": (3, (2, 2, 4, 5, 5), (3, 2, 3, 3, 3), False, True, {}),
    # (one sample: ATen's slow 3-d kernel runs, not oneDNN, and writes contiguous)
    "3d one sample": (3, (1, 2, 4, 5, 5), (3, 2, 3, 3, 3), True, False, {}),
    "3d one sample grouped": (3, (1, 2, 4, 5, 5), (2, 1, 3, 3, 3), True, False, {"groups": 2}),
}


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("name", CASES)
def test_output_strides_and_node_match_torch(name, transposed):
    nd, xs, ws, xcl, wcl, kw = CASES[name]
    if transposed:  # (in, out / groups, k...) weights
        ws = (xs[1], ws[0] // kw.get("groups", 1)) + ws[2:]
    x, w, b = _arrays(xs, ws, (ws[1] * kw.get("groups", 1) if transposed else ws[0],))
    outs = []
    for L in (ember, torch):
        xt = (_cl(L, x, nd) if xcl else L.tensor(x)).requires_grad_()
        wt = (_cl(L, w, nd) if wcl else L.tensor(w)).requires_grad_()
        fn = getattr(L.nn.functional, f"conv{'_transpose' if transposed else ''}{nd}d")
        out = fn(xt, wt, L.tensor(b), **kw)
        out.pow(2).sum().backward()
        outs.append((out, xt.grad, wt.grad))
    (oe, gxe, gwe), (ot, gxt, gwt) = outs
    assert oe.stride() == ot.stride()
    assert type(oe.grad_fn).__name__ == type(ot.grad_fn).__name__ == "ConvolutionBackward0"
    assert_same(oe.detach(), ot.detach(), 1e-5, 1e-5)
    # (sums of products over the batch and the window: float32 order noise)
    assert_same(gxe, gxt, 1e-5, 1e-4)
    assert_same(gwe, gwt, 1e-5, 1e-4)


def test_in_place_activation_after_a_channels_last_conv_keeps_torchs_node():
    x, w = _arrays((1, 3, 5, 5), (4, 3, 3, 3))
    names = []
    for L in (ember, torch):
        out = L.nn.functional.conv2d(_cl(L, x).requires_grad_(), L.tensor(w))
        out.relu_()
        names.append((type(out.grad_fn).__name__, out._base is None, out.stride()))
    assert names[0] == names[1]


def test_unbatched_input_stays_contiguous():
    x, w = _arrays((1, 3, 5, 5), (4, 3, 3, 3))
    got = [L.nn.functional.conv2d(_cl(L, x)[0], L.tensor(w)).stride() for L in (ember, torch)]
    assert got[0] == got[1]


def test_a_contiguous_tensor_with_channels_last_strides_reads_as_channels_last():
    # c10 reads the format from the strides alone: an (N, C, 1, 1) tensor strided (C, 1, C, C)
    # (a channels-last network's pooled features) or an (N, 1, H, W) one strided
    # (HW, 1, W, 1) (a one-channel image made channels-last) is channels-last, though also
    # contiguous; the ops allocating in that format lay their results out so.
    def inputs(L):
        yield L.arange(12.0).reshape(2, 1, 1, 6).permute(0, 3, 1, 2)
        yield L.arange(12.0).reshape(1, 3, 4, 1).permute(0, 3, 1, 2)
        yield L.arange(12.0).reshape(1, 3, 4, 1).contiguous().view(1, 1, 3, 4)  # (plain)
        yield L.arange(6.0).reshape(1, 1, 1, 1, 6).permute(0, 4, 1, 2, 3)

    def calls(L, x):
        F = L.nn.functional
        c = x.shape[1]
        if x.dim() == 4:
            w = L.ones(4, c, 3, 3)
            yield "conv", F.conv2d(x, w, padding=1)
            yield "conv1x1", F.conv2d(x, w[:, :, :1, :1])
            yield "max_pool", F.max_pool2d(x, 1)
            yield "adaptive_max_pool", F.adaptive_max_pool2d(x, 1)
            yield "adaptive_avg_pool", F.adaptive_avg_pool2d(x, 1)
        else:
            yield "max_pool3d", F.max_pool3d(x, 1)
        yield "pad", F.pad(x, (1, 1))
        yield "cat", L.cat([x, x], 1)

    for e, t in zip(inputs(ember), inputs(torch)):
        for (name, got), (_, want) in zip(calls(ember, e), calls(torch, t)):
            assert got.stride() == want.stride(), (name, tuple(t.shape), t.stride())
    # 1-d pooling runs the 2-d kernels on the input unsqueezed: a (1, C, 1) input strided
    # (C, 1, C) is channels-last there, its result's size-1 dim keeping stride C
    for L_ in (ember, torch):
        x = L_.arange(6.0).reshape(1, 1, 6).transpose(1, 2)
        F = L_.nn.functional
        got = [F.adaptive_max_pool1d(x, 1).stride(), F.adaptive_avg_pool1d(x, 1).stride(),
               F.max_pool1d(x, 1, return_indices=True)[1].stride()]
        assert got == [(6, 1, 6)] * 3, (L_.__name__, got)
