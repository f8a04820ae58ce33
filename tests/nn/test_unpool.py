"""max_unpool1d/2d/3d (and MaxUnpool3d) against torch: values, the result's node named as
PyTorch's kernel (under a squeeze for 1-d, which PyTorch runs as 2-d), an exact gradient,
and the kernel's checks in its order and words."""

import numpy as np
import pytest
import torch

import ember

from helpers import same_message

X = np.arange(2 * 2 * 4 * 6 * 4, dtype=np.float32).reshape(2, 2, 4, 6, 4) % 11


def _pooled(lib, nd, x=X):
    x = lib.tensor(x[(0,) * (3 - nd)] if nd < 3 else x, requires_grad=True)
    return x, getattr(lib.nn.functional, f"max_pool{nd}d")(x, 2, return_indices=True)


@pytest.mark.parametrize("output_size", [None, "larger"])
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_unpool_values_node_and_gradient(nd, output_size):
    res = []
    for lib in (torch, ember):
        x, (p, i) = _pooled(lib, nd)
        size = None if output_size is None else [s + 1 for s in x.shape[-nd:]]
        y = getattr(lib.nn.functional, f"max_unpool{nd}d")(p, i, 2, output_size=size)
        y.backward(lib.arange(float(y.numel())).reshape(y.shape).remainder(5))
        res.append((type(y.grad_fn).__name__, y.detach().numpy(), x.grad.numpy()))
    assert res[1][0] == res[0][0]
    for a, b in zip(res[1][1:], res[0][1:]):
        np.testing.assert_array_equal(a, b)


def test_max_unpool3d_module_matches_torch():
    outs = []
    for lib in (torch, ember):
        _, (p, i) = _pooled(lib, 3)
        m = lib.nn.MaxUnpool3d((2, 2, 2))
        outs.append((repr(m), m(p, i).detach().numpy()))
    assert outs[1][0] == outs[0][0]
    np.testing.assert_array_equal(outs[1][1], outs[0][1])


def _unpool(nd, p_of=lambda p: p, i_of=lambda i: i, **kw):
    def call(L):
        _, (p, i) = _pooled(L, nd)
        return getattr(L.nn.functional, f"max_unpool{nd}d")(p_of(p.detach()), i_of(i), 2, **kw)
    return call


def _one_bad(value, at: int = 3):
    """The indices with one out of its plane: PyTorch's threads share the loop out and name
    the last bad index they met, so with several the message depends on their timing."""
    def edit(i):
        i = i.clone()
        i.view(-1)[at] = value
        return i
    return edit


REFUSED = {
    "2-d invalid index": _unpool(2, i_of=_one_bad(1000)),
    "3-d negative index": _unpool(3, i_of=_one_bad(-7, at=10)),
    "1-d invalid index, sizes as 2-d": _unpool(1, i_of=_one_bad(4)),
    "2-d int32 indices": _unpool(2, i_of=lambda i: i.int()),
    "3-d int32 indices": _unpool(3, i_of=lambda i: i.int()),
    "2-d rank": _unpool(2, p_of=lambda p: p[0, 0], i_of=lambda i: i[0, 0]),
    "3-d rank": _unpool(3, p_of=lambda p: p[0, 0], i_of=lambda i: i[0, 0]),
    "indices dtype before rank": _unpool(2, p_of=lambda p: p[0, 0], i_of=lambda i: i[0].int()),
    "shapes": _unpool(2, i_of=lambda i: i[:1]),
    "empty channels": _unpool(3, p_of=lambda p: p[:, :0], i_of=lambda i: i[:, :0]),
    "shape before dtype": _unpool(2, p_of=lambda p: p.byte(), i_of=lambda i: i[:1]),
}


@pytest.mark.parametrize("name", REFUSED)
def test_refused_in_torchs_words(name):
    same_message(REFUSED[name])


@pytest.mark.parametrize("dtype", ["uint8", "int64", "bool", "complex64"])
@pytest.mark.parametrize("nd", [2, 3])
def test_non_floating_values_have_no_kernel(nd, dtype):
    same_message(_unpool(nd, p_of=lambda p: p.to(getattr(ember if isinstance(p, ember.Tensor)
                                                          else torch, dtype))),
                 NotImplementedError)
