"""`Tensor.fill_diagonal_` and `torch.fill_` / `torch.zero_` against torch."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import assert_same, same_message, same_result


@pytest.mark.parametrize("shape,wrap", [((3, 3), False), ((2, 5), False), ((5, 2), False),
                                        ((8, 3), True), ((7, 3), True), ((3, 4), True),
                                        ((8, 3), False), ((0, 3), True), ((3, 3, 3), False),
                                        ((2, 2, 2, 2), False)])
def test_fill_diagonal_writes_where_torch_writes(shape, wrap):
    base = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)

    def call(L):
        x = L.tensor(base)
        out = x.fill_diagonal_(-1.5, wrap=wrap)
        assert out is x
        return x
    same_result(call)


def test_fill_diagonal_on_views_with_gradient_and_casts():
    base = np.arange(12, dtype=np.float32).reshape(3, 4)

    def on_transpose(L):
        x = L.tensor(base)
        x.t().fill_diagonal_(7)  # (the strides of the view, not of a copy)
        return x
    same_result(on_transpose)

    def with_grad(L):
        w = L.tensor(base, requires_grad=True)
        y = w * 2
        y.fill_diagonal_(0.0)
        y.sum().backward()
        return y, w.grad
    same_result(with_grad)
    same_result(lambda L: L.zeros(3, 3, dtype=L.int64).fill_diagonal_(2.7))
    same_result(lambda L: L.zeros(2, 2).fill_diagonal_(L.tensor(3.0)))


def test_fill_diagonal_refusals():
    same_message(lambda L: L.zeros(3).fill_diagonal_(1))
    same_message(lambda L: L.zeros(2, 3, 2).fill_diagonal_(1))


def test_torch_fill_and_zero_write_in_place():
    def call(L):
        x = L.ones(2, 3)
        a = L.fill_(x, 4)
        b = L.zero_(L.ones(2, dtype=L.int32))
        return a is x, x, b
    (ia, xe, be), (it, xt, bt) = call(__import__("ember")), call(__import__("torch"))
    assert ia and it
    assert_same(xe, xt)
    assert_same(be, bt)
