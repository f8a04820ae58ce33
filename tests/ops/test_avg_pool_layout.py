"""Average pooling (src/ember/ops/avg_pool.py) lays out its result as PyTorch's CPU kernels
do: the 2-d kernels, plain and adaptive, keep a channels-last input channels-last (and the
gradient follows), the 3-d ones return row-major results, and adaptive pooling to one cell
restrides the mean of a channels-last input in place (node AsStridedBackward1)."""

import numpy as np
import pytest
import torch

import ember


def _pair(shape, layout):
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    out = []
    for L in (torch, ember):
        t = L.tensor(a)
        if layout == "channels_last":
            t = t.to(memory_format=L.channels_last if len(shape) == 4 else L.channels_last_3d)
        elif layout == "permuted":  # channels-last by a permute of an NHWC array
            perm = (0,) + tuple(range(2, len(shape))) + (1,)
            back = tuple(int(i) for i in np.argsort(perm))
            t = L.tensor(np.ascontiguousarray(a.transpose(perm))).permute(*back)
        elif layout == "transposed":
            t = t.transpose(-1, -2)
        out.append(t.requires_grad_())
    return out


CASES = {
    "avg_pool2d": ((2, 3, 6, 6), lambda F, x: F.avg_pool2d(x, 2)),
    "avg_pool2d padded ceil": ((2, 3, 6, 6), lambda F, x: F.avg_pool2d(
        x, 3, 2, 1, ceil_mode=True, count_include_pad=False)),
    "avg_pool2d divisor": ((2, 3, 6, 6), lambda F, x: F.avg_pool2d(x, 2, divisor_override=3)),
    "adaptive 2d even": ((2, 3, 6, 6), lambda F, x: F.adaptive_avg_pool2d(x, 3)),
    "adaptive 2d uneven": ((2, 3, 6, 6), lambda F, x: F.adaptive_avg_pool2d(x, 4)),
    "adaptive 2d one cell": ((2, 3, 6, 6), lambda F, x: F.adaptive_avg_pool2d(x, 1)),
    "adaptive 2d None": ((2, 3, 6, 6), lambda F, x: F.adaptive_avg_pool2d(x, (None, 2))),
    "lp_pool2d": ((2, 3, 6, 6), lambda F, x: F.lp_pool2d(x, 2, 2)),
    "avg_pool3d": ((2, 3, 4, 4, 4), lambda F, x: F.avg_pool3d(x, 2)),
    "adaptive 3d": ((2, 3, 4, 4, 4), lambda F, x: F.adaptive_avg_pool3d(x, 2)),
    "adaptive 3d one cell": ((2, 3, 4, 4, 4), lambda F, x: F.adaptive_avg_pool3d(x, 1)),
}


@pytest.mark.parametrize("layout", ["channels_last", "permuted", "transposed", "contiguous"])
@pytest.mark.parametrize("name", list(CASES))
def test_result_and_gradient_layout_match_torch(name, layout):
    shape, fn = CASES[name]
    tx, ex = _pair(shape, layout)
    want = fn(torch.nn.functional, tx)
    got = fn(ember.nn.functional, ex)
    assert got.stride() == want.stride()
    assert type(got.grad_fn).__name__ == type(want.grad_fn).__name__
    # (window sums added in the kernels' order; an ulp or two where bins are uneven)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6,
                               atol=1e-6)
    g = np.random.default_rng(1).standard_normal(tuple(want.shape)).astype(np.float32)
    want.backward(torch.tensor(g))
    got.backward(ember.tensor(g))
    assert ex.grad.stride() == tx.grad.stride()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_module_form_keeps_channels_last():
    tx, ex = _pair((1, 4, 8, 8), "channels_last")
    assert ember.nn.AvgPool2d(2)(ex).is_contiguous(memory_format=ember.channels_last)
    assert torch.nn.AvgPool2d(2)(tx).is_contiguous(memory_format=torch.channels_last)


@pytest.mark.parametrize("layout", ["channels_last", "contiguous"])
def test_integer_adaptive_pooling_names_the_kernel_of_the_layout(layout):
    # PyTorch's channels-last kernel has its own name in the dtype refusal
    msgs = []
    for L in (torch, ember):
        x = L.ones(2, 3, 6, 6, dtype=L.int64)
        if layout == "channels_last":
            x = x.to(memory_format=L.channels_last)
        with pytest.raises(NotImplementedError) as info:
            L.nn.functional.adaptive_avg_pool2d(x, 4)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]
