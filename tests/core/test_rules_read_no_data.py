"""No VJP rule reads tensor data: backward runs with every data read outside the kernels
(`_array()`, `item()`, `tolist()`, `bool()`) turned into an error, and the gradients still
match PyTorch's."""

from __future__ import annotations

import sys
from contextlib import contextmanager

import numpy as np
import pytest
import torch

import ember
from ember import _tensor
from ember._core import dispatch


@contextmanager
def no_data_reads():
    """Within the block, only `bind`'s eager kernel path may read a tensor's data."""
    cls = _tensor.Tensor
    saved = {name: getattr(cls, name) for name in ("_array", "item", "tolist", "__bool__")}

    def guard(name):
        real = saved[name]

        def read(self, *args, **kwargs):
            if sys._getframe(1).f_code.co_filename != dispatch.__file__:
                raise AssertionError(f"a rule called Tensor.{name}() during backward")
            return real(self, *args, **kwargs)
        return read

    for name in saved:
        setattr(cls, name, guard(name))
    try:
        yield
    finally:
        for name, fn in saved.items():
            setattr(cls, name, fn)


def backward_without_reads(fn, a: np.ndarray, order: int = 1):
    """Gradient (order 1) or gradient of the gradient's sum (order 2) of sum(fn(x)), in
    ember under `no_data_reads` and in torch."""
    grads = []
    for lib in (ember, torch):
        x = lib.tensor(a, requires_grad=True)
        y = fn(x).sum()
        if lib is ember:
            with no_data_reads():
                (g,) = lib.autograd.grad(y, x, create_graph=order == 2)
                if order == 2:
                    (g,) = lib.autograd.grad(g.sum(), x)
        else:
            (g,) = lib.autograd.grad(y, x, create_graph=order == 2)
            if order == 2:
                (g,) = lib.autograd.grad(g.sum(), x)
        grads.append(g.detach().numpy())
    return grads


def test_the_guard_catches_a_data_read():
    x = ember.ones(2)
    with no_data_reads(), pytest.raises(AssertionError, match="item"):
        x.sum().item()


ZEROS = np.array([[1.5, 0.0, -2.0, 0.5], [0.0, 3.0, 0.0, -1.0], [0.7, 1.1, -0.3, 2.0]])


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("fn", [
    lambda x: x.prod(1), lambda x: x.prod(), lambda x: x.prod(0, keepdim=True),
    lambda x: x.cumprod(1), lambda x: x.cumprod(0),
], ids=["prod_dim", "prod_all", "prod_keepdim", "cumprod_1", "cumprod_0"])
def test_products_with_zeros(fn, order):
    e, t = backward_without_reads(fn, ZEROS, order)
    np.testing.assert_allclose(e, t, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("fn", [
    lambda x: x.index_select(1, idx(x, [2, 0, 2])) ** 2,
    lambda x: x.index_select(0, idx(x, [1, 1])).sin(),
    lambda x: x.index_add(1, idx(x, [0, 3, 0]), x[:, :3] * x[:, 1:]) ** 2,
    lambda x: x.index_copy(1, idx(x, [3, 1]), x[:, :2].exp()) ** 2,
    lambda x: x.index_fill(0, idx(x, [2]), 1.5) ** 2,
], ids=["select_1", "select_0", "add", "copy", "fill"])
def test_index_ops(fn, order):
    e, t = backward_without_reads(fn, ZEROS, order)
    np.testing.assert_allclose(e, t, rtol=1e-12, atol=1e-12)


def idx(x, values):
    """An int64 index tensor of the same library as `x`."""
    lib = ember if isinstance(x, ember.Tensor) else torch
    return lib.tensor(values)
