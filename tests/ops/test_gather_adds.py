"""The NumPy formulations of ops/_gather_adds.py against PyTorch, bit for bit (copies, and
adds in PyTorch's order: each position's terms in index order): several adjacent index
tensors between full slices (merged into one dim, read by one take, written by in-order
adds), gathers along one dim by runs of consecutive positions, and add_slices."""

import numpy as np
import torch

import ember
from ember.ops._gather_adds import add_slices


def _bits(t) -> tuple:
    a = np.ascontiguousarray(t.detach().numpy())
    return a.dtype.str, a.shape, a.tobytes()


def _cases():
    """(x shape, key maker over the index module, dtype): keys of 2 and 3 adjacent index
    tensors, broadcast and negative, repeated positions, slices before and after, empty."""
    r = np.random.default_rng(0)
    ix = lambda *a: np.ix_(*a)  # noqa: E731
    return [
        ((3, 4, 5, 6), lambda: (Ellipsis, *ix(r.integers(-5, 5, 7), r.integers(-6, 6, 9)))),
        ((4, 5, 6), lambda: (slice(None), r.integers(0, 5, (3, 1)), r.integers(-6, 6, (1, 4)))),
        ((5, 6, 3), lambda: (r.integers(0, 5, 8), r.integers(0, 6, 8))),  # (a slice after)
        ((2, 3, 4, 5), lambda: (slice(None), r.integers(0, 3, (2, 2)), r.integers(0, 4, (2, 2)),
                                r.integers(0, 5, (2, 2)))),
        ((6, 7), lambda: (np.zeros(0, np.int64), np.zeros(0, np.int64))),
        ((1, 1, 9), lambda: (Ellipsis, np.zeros((40, 1), np.int64), r.integers(0, 9, (1, 3)))),
        ((64, 300), lambda: (r.integers(0, 64, 2000), r.integers(0, 300, 2000))),
        # one index tensor of 2 or 3 dims (not stacked slots), wide rows before it
        ((128, 4, 5), lambda: (slice(None), r.integers(0, 4, (2, 2)))),
        ((70, 5, 6), lambda: (Ellipsis, r.integers(0, 6, (3, 2, 2)))),
    ]


def test_read_add_and_gradient_match_pytorch_bit_for_bit():
    r = np.random.default_rng(1)
    for shape, key_of in _cases():
        key = key_of()
        for dtype in (np.float32, np.float64, np.int64, np.bool_):
            a = (r.standard_normal(shape) * 4).astype(dtype)
            a[(0,) * len(shape)] = np.nan if dtype == np.float32 else a[(0,) * len(shape)]
            views = [(ember.tensor(a), torch.tensor(a))]
            if len(shape) >= 2:  # a non-contiguous input of the same values
                at = np.ascontiguousarray(np.swapaxes(a, 0, 1))
                views.append((ember.tensor(at).transpose(0, 1), torch.tensor(at).transpose(0, 1)))
            ek = tuple(ember.tensor(k) if isinstance(k, np.ndarray) else k for k in key)
            tk = tuple(torch.tensor(k) if isinstance(k, np.ndarray) else k for k in key)
            for e, t in views:
                assert _bits(e[ek]) == _bits(t[tk]), (shape, dtype)
                v = (r.standard_normal(t[tk].shape) * 4).astype(dtype)
                tk_put = tuple(k for k in tk if k is not Ellipsis and k != slice(None))
                if len(tk_put) == len(tk):  # (index_put takes index tensors only)
                    ek_put = tuple(k for k in ek)
                    got = e.index_put(ek_put, ember.tensor(v), accumulate=True)
                    assert _bits(got) == _bits(t.index_put(tk_put, torch.tensor(v),
                                                           accumulate=True)), (shape, dtype)
            if dtype in (np.float32, np.float64):
                e = ember.tensor(a, requires_grad=True)
                t = torch.tensor(a, requires_grad=True)
                g = (r.standard_normal(t[tk].shape) * 4).astype(dtype)
                e[ek].backward(ember.tensor(g))
                t[tk].backward(torch.tensor(g))
                assert _bits(e.grad) == _bits(t.grad), (shape, dtype)


def test_add_slices_keeps_np_add_at_sums_when_the_runs_cover_every_position():
    # every position hit (a pad's gradient) or some missed, along the first, a middle and the
    # last axis; repeats up to 5 deep
    r = np.random.default_rng(2)
    for shape, axis in (((70, 64), 0), ((8, 70, 9), 1), ((9, 8, 70), 2)):
        n = shape[axis]
        for idx in (np.r_[np.arange(n), r.integers(-n, n, 40)], r.integers(0, n, 90)):
            vshape = list(shape)
            vshape[axis] = idx.size
            v = r.standard_normal(vshape).astype(np.float32)
            want = np.zeros(shape, np.float32)
            np.add.at(want, (slice(None),) * axis + (np.where(idx < 0, idx + n, idx),), v)
            got = np.zeros(shape, np.float32)
            assert add_slices(got, axis, idx, v)
            assert np.array_equal(got.view(np.int32), want.view(np.int32)), (shape, axis)


def test_gathers_by_runs_match_pytorch():
    # runs long enough for slice copies (a rotation, a circular pad's wrap, a repeat of a
    # block), short ones (np.take), negative positions, along each dim of a strided input
    r = np.random.default_rng(3)
    a = r.standard_normal((6, 70, 80)).astype(np.float32)
    e, t = ember.tensor(a).transpose(0, 2), torch.tensor(a).transpose(0, 2)
    for dim, n in ((0, 80), (1, 70), (2, 6)):
        for idx in (np.r_[n - 3:n, 0:n], np.r_[0:n, 0:n], r.integers(-n, n, 64),
                    np.r_[-2:0, 0:n, 0:2], np.r_[2:n - 1]):
            if dim == 2 and idx.size > 64:
                idx = idx[:64]
            ei, ti = ember.tensor(idx), torch.tensor(idx)
            key = (slice(None),) * dim
            assert _bits(e[key + (ei,)]) == _bits(t[key + (ti,)]), (dim, idx[:5])
            if idx.min() >= 0:
                got = e.index_select(dim, ei)
                assert _bits(got) == _bits(t.index_select(dim, ti)), (dim, idx[:5])
