"""one_hot (nn/_functional/layers.py: rows of the identity gathered, or a compare where
the classes outnumber the values): values, shape and strides (a fresh row-major tensor,
also for a strided input) and errors against PyTorch."""

import numpy as np
import torch

import ember


def _run(f, t, n):
    try:
        r = f(t, n)
    except Exception as e:  # noqa: BLE001 (the error is compared)
        return type(e).__name__, str(e)
    return str(r.dtype).split(".")[-1], tuple(r.shape), tuple(r.stride()), r.numpy().tolist()


def test_one_hot_matches_pytorch():
    base = np.random.default_rng(0).integers(0, 7, (6, 5))
    arrays = [base, base[:, ::2], base[:0], base[:1, :1], np.zeros((3, 0), np.int64), base + 5]
    for a in arrays:
        pairs = [(ember.tensor(a), torch.tensor(a))]
        if a.ndim == 2 and a.size:  # a transposed view of the same values
            pairs.append((ember.tensor(np.ascontiguousarray(a.T)).T,
                          torch.tensor(np.ascontiguousarray(a.T)).T))
        pairs.append((ember.tensor(3), torch.tensor(3)))
        for e, t in pairs:
            for n in (-1, 0, 3, 7, 12, -2):
                assert _run(ember.nn.functional.one_hot, e, n) == \
                    _run(torch.nn.functional.one_hot, t, n), (a.shape, n)
