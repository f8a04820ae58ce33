"""Reflection and replication pads (nn/_functional/spatial.py, through ops/index.py's
merged index dims): values and gradients against PyTorch, bit for bit (copies, and each
input's gradient summed in PyTorch's order: its outputs row by row)."""

import numpy as np
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
