"""Memory formats against PyTorch: channels-last for 4-d and 5-d tensors (`channels_last`,
`channels_last_3d`), their strides, tests, refusals and the nodes of the copies."""

from __future__ import annotations

import pytest
import torch

import ember


@pytest.mark.parametrize("fmt,shape", [("channels_last", (2, 3, 4, 5)),
                                       ("channels_last_3d", (2, 3, 4, 5, 2)),
                                       ("channels_last", (2, 1, 4, 1)),
                                       ("channels_last_3d", (1, 4, 1, 3, 1))])
def test_channels_last_copies_have_torchs_strides_and_values(fmt, shape):
    for m in (torch, ember):
        x = m.arange(float(torch.Size(shape).numel())).reshape(shape)
        y = x.contiguous(memory_format=getattr(m, fmt))
        z = x.to(memory_format=getattr(m, fmt))
        if m is torch:
            want = (y.stride(), z.stride(), m.empty_like(y).stride(), y.clone().stride(),
                    y.is_contiguous(memory_format=getattr(m, fmt)), y.is_contiguous(),
                    y.tolist())
        else:
            got = (y.stride(), z.stride(), m.empty_like(y).stride(), y.clone().stride(),
                   y.is_contiguous(memory_format=getattr(m, fmt)), y.is_contiguous(),
                   y.tolist())
    assert got == want


def test_a_format_of_another_rank_is_refused_in_torchs_words():
    for fmt, shape in (("channels_last", (2, 3, 4)), ("channels_last", (1, 2, 3, 4, 5)),
                       ("channels_last_3d", (2, 3, 4, 5))):
        with pytest.raises(RuntimeError) as want:
            torch.zeros(shape).contiguous(memory_format=getattr(torch, fmt))
        with pytest.raises(RuntimeError) as got:
            ember.zeros(shape).contiguous(memory_format=getattr(ember, fmt))
        assert str(got.value) == str(want.value)
        assert not ember.zeros(shape).is_contiguous(memory_format=getattr(ember, fmt))


@pytest.mark.parametrize("fmt,shape", [("channels_last", (2, 3, 4, 5)),
                                       ("channels_last_3d", (2, 3, 4, 5, 2))])
def test_copies_that_track_gradients_name_torchs_nodes(fmt, shape):
    for m in (torch, ember):
        x = m.ones(shape, requires_grad=True)
        a = x.contiguous(memory_format=getattr(m, fmt))
        b = x.to(memory_format=getattr(m, fmt))
        (a * b * 3).sum().backward()
        res = (type(a.grad_fn).__name__, type(b.grad_fn).__name__, a.stride(),
               x.grad.stride(), x.grad.tolist())
        if m is torch:
            want = res
    assert res == want
    assert repr(ember.channels_last_3d) == "torch.channels_last_3d".replace("torch", "ember")



def test_suggest_memory_format_reads_strides_as_pytorch_does():
    # c10's heuristic, worked by hand: channels-last(-3d) when the strides grow through C, W,
    # H, (D), N; an ambiguous layout (N, 1, 1, 1 with equal strides), an empty dim or
    # another rank reads as contiguous
    from ember._layout import suggest_memory_format

    cases = [
        ((2, 3, 4, 5), (60, 20, 5, 1), "contiguous_format"),
        ((2, 3, 4, 5), (60, 1, 15, 3), "channels_last"),
        ((1, 3, 1, 2), (6, 1, 6, 3), "channels_last"),
        ((2, 1, 1, 1), (1, 1, 1, 1), "contiguous_format"),
        ((2, 0, 4, 5), (60, 1, 15, 3), "contiguous_format"),
        ((2, 3, 4, 5, 6), (360, 1, 90, 18, 3), "channels_last_3d"),
        ((2, 3, 4, 5, 6), (360, 1, 90, 18, 3)[:3] + (3, 18), "contiguous_format"),
        ((4, 5, 3), (15, 3, 1), "contiguous_format"),
    ]
    for shape, stride, want in cases:
        assert suggest_memory_format(shape, stride).name == want, (shape, stride)
