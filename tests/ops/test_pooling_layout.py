"""Max pooling returns what PyTorch's kernels return beyond the values: their node names
(MaxPool2D/3DWithIndicesBackward0, AdaptiveMaxPool2D/3DBackward0, and SqueezeBackward1 for
1-d pooling, which PyTorch runs as 2-d) and, for a channels-last 4-d input, channels-last
values and indices (3-d pooling keeps its contiguous results); 1-d pooling of an (N, C, L)
transposed from (N, L, C) keeps the channel dim innermost, as the 2-d kernel it runs does
(average pooling always, max_pool1d where it runs that kernel: for indices or a gradient)."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same


def _input(L, shape, channels_last=False):
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    if not channels_last:
        return L.tensor(a).requires_grad_()
    nd = len(shape) - 2
    perm = (0,) + tuple(range(2, 2 + nd)) + (1,)
    back = tuple(int(i) for i in np.argsort(perm))
    return L.tensor(np.ascontiguousarray(a.transpose(perm))).permute(*back).requires_grad_()


CASES = {
    "max_pool1d": ((2, 4, 6), lambda F, x: F.max_pool1d(x, 2, return_indices=True)),
    "max_pool1d unbatched": ((4, 6), lambda F, x: F.max_pool1d(x, 2, return_indices=True)),
    "max_pool2d": ((2, 4, 6, 6), lambda F, x: F.max_pool2d(x, 2, return_indices=True)),
    "max_pool2d padded": ((2, 4, 6, 6), lambda F, x: F.max_pool2d(x, 3, 2, 1,
                                                                 return_indices=True)),
    "max_pool3d": ((1, 2, 4, 4, 4), lambda F, x: F.max_pool3d(x, 2, return_indices=True)),
    "adaptive1d even": ((2, 4, 6), lambda F, x: F.adaptive_max_pool1d(x, 2, True)),
    "adaptive1d uneven": ((2, 4, 7), lambda F, x: F.adaptive_max_pool1d(x, 3, True)),
    "adaptive2d even": ((2, 4, 6, 6), lambda F, x: F.adaptive_max_pool2d(x, 2, True)),
    "adaptive2d uneven": ((2, 4, 7, 7), lambda F, x: F.adaptive_max_pool2d(x, 3, True)),
    "adaptive2d unbatched": ((4, 6, 6), lambda F, x: F.adaptive_max_pool2d(x, 2, True)),
    "adaptive2d None": ((2, 4, 6, 6), lambda F, x: F.adaptive_max_pool2d(x, (None, 2), True)),
    "adaptive3d even": ((1, 2, 4, 4, 4), lambda F, x: F.adaptive_max_pool3d(x, 2, True)),
    "adaptive3d uneven": ((1, 2, 5, 5, 5), lambda F, x: F.adaptive_max_pool3d(x, 3, True)),
}


@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("name", CASES)
def test_node_layout_and_values_match_torch(name, channels_last):
    shape, call = CASES[name]
    if channels_last and len(shape) < (3 if "1d" in name else 4):
        pytest.skip("channels-last needs a batched input")
    got = []
    for L in (ember, torch):
        x = _input(L, shape, channels_last)
        values, indices = call(L.nn.functional, x)
        values.pow(2).sum().backward()
        got.append((values, indices, x.grad))
    (ve, ie, ge), (vt, it, gt) = got
    assert type(ve.grad_fn).__name__ == type(vt.grad_fn).__name__
    assert (ve.stride(), ie.stride()) == (vt.stride(), it.stride())
    assert_same(ve.detach(), vt.detach())
    assert_same(ie, it)
    assert_same(ge, gt)


def test_values_without_indices_keep_the_layout():
    got = [L.nn.functional.adaptive_max_pool2d(_input(L, (2, 4, 6, 6), True), 2)
           for L in (ember, torch)]
    assert got[0].stride() == got[1].stride()
    assert type(got[0].grad_fn).__name__ == type(got[1].grad_fn).__name__


_ONE_D = {
    "avg_pool1d": lambda F, x: F.avg_pool1d(x, 2),
    "adaptive_avg_pool1d": lambda F, x: F.adaptive_avg_pool1d(x, 3),
    "adaptive_avg_pool1d to one": lambda F, x: F.adaptive_avg_pool1d(x, 1),
    "adaptive_max_pool1d": lambda F, x: F.adaptive_max_pool1d(x, 3),
    "max_pool1d": lambda F, x: F.max_pool1d(x, 2),
}


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("name", _ONE_D)
def test_one_d_pooling_of_transposed_tokens_keeps_channels_innermost(name, grad):
    # the Swin / ViT head: pooling (N, L, C) tokens as x.transpose(1, 2)
    got = []
    for L in (ember, torch):
        x = _input(L, (2, 3, 6), True).requires_grad_(grad)
        out = _ONE_D[name](L.nn.functional, x)
        got.append((out.stride(), out.grad_fn and type(out.grad_fn).__name__, out))
    assert got[0][:2] == got[1][:2]
    assert_same(got[0][2].detach(), got[1][2].detach())
