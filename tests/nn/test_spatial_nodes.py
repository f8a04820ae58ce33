"""unfold / fold / pixel_shuffle / pixel_unshuffle, composed in ember, end in the node
PyTorch's one kernel leaves (Im2ColBackward0, Col2ImBackward0, PixelShuffleBackward0,
PixelUnshuffleBackward0), batched or not; pixel (un)shuffling keeps a channels-last input's
layout and unfold / fold give contiguous results whatever the input, as PyTorch's kernels
do. Values and gradients are unchanged."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same


def _input(L, shape, channels_last=False):
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    if not channels_last:
        return L.tensor(a).requires_grad_()
    return L.tensor(np.ascontiguousarray(a.transpose(0, 2, 3, 1))).permute(0, 3, 1, 2) \
        .requires_grad_()


CASES = {
    "unfold": ((2, 4, 6, 6), lambda F, x: F.unfold(x, 2)),
    "unfold unbatched": ((4, 6, 6), lambda F, x: F.unfold(x, 2)),
    "unfold padded dilated": ((2, 3, 6, 6), lambda F, x: F.unfold(x, 2, dilation=2, padding=1,
                                                                  stride=(1, 2))),
    "fold": ((2, 16, 25), lambda F, x: F.fold(x, 6, 2)),
    "fold unbatched": ((16, 9), lambda F, x: F.fold(x, 4, 2, stride=1)),
    "fold overlapping": ((1, 18, 9), lambda F, x: F.fold(x, (5, 5), 3, padding=1, stride=2)),
    "pixel_shuffle": ((2, 8, 3, 3), lambda F, x: F.pixel_shuffle(x, 2)),
    "pixel_shuffle unbatched": ((8, 3, 3), lambda F, x: F.pixel_shuffle(x, 2)),
    "pixel_shuffle 5d": ((1, 2, 4, 3, 3), lambda F, x: F.pixel_shuffle(x, 2)),
    "pixel_unshuffle": ((2, 2, 6, 6), lambda F, x: F.pixel_unshuffle(x, 2)),
    "pixel_unshuffle unbatched": ((2, 6, 6), lambda F, x: F.pixel_unshuffle(x, 3)),
    "pixel_unshuffle 5d": ((1, 2, 2, 4, 4), lambda F, x: F.pixel_unshuffle(x, 2)),
    "pixel_unshuffle by 1": ((2, 3, 4, 4), lambda F, x: F.pixel_unshuffle(x, 1)),
}


@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("name", CASES)
def test_node_layout_and_values_match_torch(name, channels_last):
    shape, call = CASES[name]
    if channels_last and len(shape) != 4:
        pytest.skip("channels-last needs a 4-d input")
    got = []
    for L in (ember, torch):
        x = _input(L, shape, channels_last)
        out = call(L.nn.functional, x)
        (out * L.arange(out.numel(), dtype=L.float32).view(out.shape)).sum().backward()
        got.append((out, x.grad))
    (oe, ge), (ot, gt) = got
    assert type(oe.grad_fn).__name__ == type(ot.grad_fn).__name__
    assert oe.is_contiguous() == ot.is_contiguous()
    assert oe.is_contiguous(memory_format=ember.channels_last) == \
        ot.is_contiguous(memory_format=torch.channels_last)
    if oe.numel() and min(oe.shape) > 1:  # (a size-1 dim's stride is free)
        assert oe.stride() == ot.stride()
    assert_same(oe.detach(), ot.detach())
    assert_same(ge, gt)


def test_unfold_is_not_autocast():
    """im2col is on none of autocast's lists: a float32 input stays float32."""
    got = []
    for L in (ember, torch):
        with L.autocast("cpu", dtype=L.bfloat16):
            got.append(L.nn.functional.unfold(L.ones(1, 2, 4, 4), 2).dtype)
    assert str(got[0]).split(".")[-1] == str(got[1]).split(".")[-1] == "float32"


def test_pad_double_backward():
    # reflection / replication pad: PyTorch's derivative kernel takes the input, so the
    # create_graph gradient requires grad (its own gradient zeros); circular and constant
    # pads are copies of slices in PyTorch, whose gradient does not require grad
    from helpers import check_double_backward

    cases = []
    for nd in (1, 2, 3):
        for mode in ("reflect", "replicate", "circular", "constant"):
            cases.append((f"{mode} {nd}d", lambda M, v, nd=nd, mode=mode: M.nn.functional.pad(
                v, (1, 2) * nd, mode=mode), (1, 2) + (4,) * nd, True))
    check_double_backward(cases)
