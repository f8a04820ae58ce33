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


def test_one_hot_without_readable_values_skips_the_checks_as_pytorch():
    # meta tensors and vmap's examples: no min / max is read where num_classes is given
    for values, n in (([1, 7], 4), ([], 3), ([[2, 0]], 0)):
        e = ember.nn.functional.one_hot(ember.tensor(values, dtype=ember.int64, device="meta"), n)
        t = torch.nn.functional.one_hot(torch.tensor(values, dtype=torch.int64, device="meta"), n)
        assert (e.device.type, tuple(e.shape), str(e.dtype)) == \
            (t.device.type, tuple(t.shape), str(t.dtype).replace("torch", "ember"))
    for f, t in ((ember.nn.functional.one_hot, ember.tensor([1, 2], device="meta")),
                 (torch.nn.functional.one_hot, torch.tensor([1, 2], device="meta"))):
        try:
            f(t)
        except RuntimeError as err:  # (-1 must read the largest value: both refuse)
            assert "meta" in str(err)
        else:
            raise AssertionError("one_hot(meta, -1) did not raise")
    a = np.array([[1, 4], [3, 0]])
    e = ember.func.vmap(lambda x: ember.nn.functional.one_hot(x, 6))(ember.tensor(a))
    t = torch.func.vmap(lambda x: torch.nn.functional.one_hot(x, 6))(torch.tensor(a))
    assert e.numpy().tolist() == t.numpy().tolist() and e.dtype is ember.int64
