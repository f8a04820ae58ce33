"""Reflection and replication pads (nn/_functional/spatial.py, through ops/index.py's
merged index dims): values and gradients against PyTorch, bit for bit (copies, and each
input's gradient summed in PyTorch's order: its outputs row by row)."""

import itertools

import numpy as np
import pytest
import torch

import ember


def _bits(t) -> tuple:
    a = np.ascontiguousarray(t.detach().numpy())
    return a.dtype.str, a.shape, a.tobytes()


def test_reflect_and_replicate_values_and_gradients_match_pytorch():
    r = np.random.default_rng(0)
    cases = [  # (input shape, pad): 1, 2 and 3 padded dims, batched or not, wide pads
        ((2, 3, 9), (2, 3)), ((3, 9), (4, 1)), ((2, 3, 8, 7), (2, 2, 3, 1)),
        ((3, 6, 5), (1, 4, 2, 0)), ((1, 2, 4, 5, 6), (1, 2, 3, 1, 2, 2)),
        ((2, 1, 5, 5), (4, 4, 4, 4)), ((2, 2, 6, 6), (-1, 2, 1, -2)), ((1, 1, 1, 1), (0, 0, 0, 0)),
    ]
    for shape, pad in cases:
        for mode in ("reflect", "replicate"):
            if mode == "reflect" and any(p >= n for p, n in zip(pad[::2], shape[::-1])):
                continue
            for dtype in (np.float32, np.float64):
                a = (r.standard_normal(shape) * 3).astype(dtype)
                a.flat[0] = np.inf
                for layout in ("contiguous", "channels_last"):
                    e = ember.tensor(a)
                    t = torch.tensor(a)
                    if layout == "channels_last":
                        if len(shape) != 4:
                            continue
                        e = e.contiguous(memory_format=ember.channels_last)
                        t = t.contiguous(memory_format=torch.channels_last)
                    e.requires_grad_()
                    t.requires_grad_()
                    ye = ember.nn.functional.pad(e, pad, mode=mode)
                    yt = torch.nn.functional.pad(t, pad, mode=mode)
                    assert _bits(ye) == _bits(yt), (shape, pad, mode, dtype, layout)
                    g = (r.standard_normal(yt.shape) * 3).astype(dtype)
                    g.flat[-1] = -0.0
                    ye.backward(ember.tensor(g))
                    yt.backward(torch.tensor(g))
                    assert _bits(e.grad) == _bits(t.grad), (shape, pad, mode, dtype, layout)


def test_a_plain_gather_pad_is_the_ops_bits_and_layout():
    # With no graph to record, a row-major input's reflection / replication / circular pad
    # is NumPy's indexing by index grids kept by the call's key (nn/_functional/spatial.py):
    # torch's bits and strides on the first call and the kept plan's; a layout the plan
    # leaves to the ops (channels-last, transposed) too; a refused call refused every time.
    r = np.random.default_rng(1)
    cases = [((2, 3, 9), (2, 3)), ((3, 9), (4, 1)), ((2, 3, 8, 7), (2, 2, 3, 1)),
             ((1, 2, 4, 5, 6), (1, 2, 3, 1, 2, 2)), ((2, 2, 6, 6), (-1, 2, 1, -2))]
    for (shape, pad), mode, dtype in itertools.product(
            cases, ("reflect", "replicate", "circular"), (np.float32, np.int64, np.bool_)):
        if mode == "reflect" and any(p >= n for p, n in zip(pad[::2], shape[::-1])):
            continue
        if dtype == np.bool_ and mode != "circular":
            continue  # (refused: below)
        a = (r.standard_normal(shape) * 3).astype(dtype)
        t = torch.tensor(a)
        ref = torch.nn.functional.pad(t, pad, mode=mode)
        layouts = [("row-major", ember.tensor(a), t), ("fresh", ember.tensor(a).clone(), t)]
        if len(shape) == 4:
            layouts.append(("channels-last",
                            ember.tensor(a).contiguous(memory_format=ember.channels_last),
                            t.contiguous(memory_format=torch.channels_last)))
        layouts.append(("transposed", ember.tensor(a.swapaxes(-1, -2).copy()).transpose(-1, -2),
                        torch.tensor(a.swapaxes(-1, -2).copy()).transpose(-1, -2)))
        for (layout, e, tt), _ in itertools.product(layouts, range(2)):
            ye = ember.nn.functional.pad(e, pad, mode=mode)
            yt = torch.nn.functional.pad(tt, pad, mode=mode)
            what = (shape, pad, mode, dtype, layout)
            assert _bits(ye) == _bits(yt) == _bits(ref), what
            assert ye.stride() == yt.stride() and ye.grad_fn is None, what
    for _ in range(2):
        with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
            ember.nn.functional.pad(ember.ones(1, 2, 4, dtype=ember.bool), (1, 1), mode="reflect")
        with pytest.raises(RuntimeError, match="Padding size should be less than"):
            ember.nn.functional.pad(ember.ones(1, 2, 4), (4, 1), mode="reflect")
    # a plan kept for one shape is not another's
    ember.nn.functional.pad(ember.ones(1, 2, 6), (3, 1), mode="reflect")
    with pytest.raises(RuntimeError, match="Padding size should be less than"):
        ember.nn.functional.pad(ember.ones(1, 2, 3), (3, 1), mode="reflect")
