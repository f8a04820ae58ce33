"""The course example worked by hand: a=2, b=3; c=a*b; d=a+b; e=c*d; L=e**2."""

import numpy as np
import pytest
import torch

import ember

from helpers import check_op, rand_array


def test_course_example_square():
    a = ember.tensor(2.0, requires_grad=True)
    b = ember.tensor(3.0, requires_grad=True)
    c = a * b
    d = a + b
    e = c * d
    loss = e**2
    loss.backward()
    # dL/da = 2e * (b*d + c) = 2*30*(15 + 6) = 1260; dL/db = 2e * (a*d + c) = 60*16 = 960
    assert a.grad.item() == 1260.0
    assert b.grad.item() == 960.0


def test_course_example_cube():
    a = ember.tensor(2.0, requires_grad=True)
    b = ember.tensor(3.0, requires_grad=True)
    e = (a * b) * (a + b)
    (e**3).backward()
    # dL/da = 3e^2 * (b*d + c) = 3*900*21 = 56700; dL/db = 3*900*16 = 43200
    assert a.grad.item() == 56700.0
    assert b.grad.item() == 43200.0


def test_broadcast_mul_sum_matches_torch():
    check_op(lambda x, y: (x * y + x).sum(1), lambda x, y: (x * y + x).sum(1),
             rand_array((3, 4)), rand_array((4,), seed=2))


def test_matmul_chain_matches_torch():
    check_op(lambda x, w: (x @ w).tanh().mean(), lambda x, w: (x @ w).tanh().mean(),
             rand_array((5, 3)), rand_array((3, 2), seed=3))


def test_view_and_index_grads_match_torch():
    def f(x):
        return x.t()[1:3, ::2] * x[0, :2].sum() + x[[0, 2, 2]].sum()

    check_op(f, f, rand_array((4, 5)))


def test_second_backward_raises():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp()).sum()
    y.backward()
    try:
        y.backward()
    except RuntimeError as e:
        assert "retain_graph=True" in str(e)
    else:
        raise AssertionError("expected RuntimeError")
    np.testing.assert_allclose(x.grad.numpy(), np.exp([1.0, 2.0]), rtol=1e-6)
    assert torch is not None


@pytest.mark.parametrize("create_graph", [False, True])
def test_retained_grad_is_a_contiguous_copy(create_graph):
    # torch stores a clone (contiguous) of the first gradient a non-leaf retains: with
    # create_graph that copy is a graph node, CloneBackward0, and never the incoming tensor
    def run(L):
        x = L.ones(2, 3, requires_grad=True)
        y = (x * 2).t()
        y.retain_grad()
        go = L.arange(6.0).view(2, 3).t()  # a transposed (non-contiguous) gradient
        y.backward(go, create_graph=create_graph)
        name = type(y.grad.grad_fn).__name__ if y.grad.grad_fn is not None else None
        return y.grad, y.grad.stride(), y.grad is go, name

    e, t = run(ember), run(torch)
    assert e[1:] == t[1:]
    assert e[0].tolist() == t[0].tolist()


def test_leaf_grad_layout_follows_the_layout_contract():
    # PyTorch's AccumulateGrad: a gradient laid out as a dense leaf (its strides on every
    # dim of more than one element) becomes `.grad` as it is; any other is copied into the
    # leaf's strides (a size-1 dim's too), or row-major for a leaf that is not dense
    def leaves(lib):
        return [lib.ones(3, 4).t(), lib.ones(2, 3, 4).permute(2, 0, 1),
                lib.ones(2, 3, 4, 5).to(memory_format=lib.channels_last),
                lib.ones(4, 6)[:, ::2], lib.ones(4, 1).t(),
                lib.ones(8).as_strided((2, 1, 3), (3, 5, 1)), lib.ones(3, 4)]

    def losses(lib):
        return [lambda x: x.sum(), lambda x: (x * 2).sum(), lambda x: x.exp().sum(),
                lambda x: (x + lib.ones(x.shape)).sum()]

    for i in range(7):
        for j in range(4):
            got = []
            for lib in (torch, ember):
                x = leaves(lib)[i].requires_grad_()
                losses(lib)[j](x).backward()
                got.append(x.grad.stride())
            assert got[1] == got[0], (i, j)


def test_summed_gradients_keep_the_first_ones_layout():
    # two paths' gradients of one tensor: PyTorch adds the later into the buffered one in
    # place (grad mode off, the buffer dense and its own), so the sum keeps that one's
    # strides, a size-1 dim's too; mean's gradient is expanded, then divided (a fresh
    # row-major tensor, as PyTorch's MeanBackward makes it, which `.grad` then keeps)
    def leaves(lib):
        return [lib.ones(4, 1).t(), lib.ones(3, 4).t(), lib.ones(2, 1, 3).permute(2, 1, 0),
                lib.ones(4, 6)[:, ::2], lib.ones(8).as_strided((2, 1, 3), (3, 5, 1)),
                lib.ones(2, 3, 1, 1).to(memory_format=lib.channels_last)]

    losses = [lambda x: (x * x).sum(), lambda x: x.mean(), lambda x: (x * x).mean(),
              lambda x: (x * x * x).sum(), lambda x: (x.exp() + x.sin()).sum(),
              lambda x: x.mean(0).sum(), lambda x: (x * 2 + x * 3).sum()]
    for i in range(6):
        for j, loss in enumerate(losses):
            got = []
            for lib in (torch, ember):
                x = leaves(lib)[i].requires_grad_()
                loss(x).backward()
                got.append((x.grad.stride(), x.grad.tolist()))
            assert got[1][0] == got[0][0], (i, j)
            np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-6)  # (exp / sin)


def test_an_empty_leafs_gradient_is_the_vjps_own():
    # an empty gradient holds no memory to share: it becomes `.grad` itself when it keeps
    # the layout contract, as PyTorch's does (mean's fresh row-major gradient of a (3, 1, 0)
    # leaf laid out (1, 0, 1): strides (1, 1, 1), not a copy in the leaf's)
    for shape, stride in (((3, 1, 0), (1, 0, 1)), ((1, 2, 0, 2), (0, 2, 2, 1)),
                          ((0, 3, 2, 1), (6, 2, 1, 12))):
        got = []
        for lib in (torch, ember):
            x = lib.zeros(16).as_strided(shape, stride).detach().requires_grad_()
            x.mean().backward()
            got.append(x.grad.stride())
        assert got[1] == got[0], (shape, stride, got)
