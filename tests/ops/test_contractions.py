"""The contractions against PyTorch: inner, outer / ger, kron and tensordot (values, dtypes,
shapes and gradients, first and second order, through check_op)."""

import numpy as np
import pytest
import torch

import ember

from helpers import check_op, rand_array


@pytest.mark.parametrize("sa,sb", [((3, 4), (5, 4)), ((4,), (4,)), ((2, 3, 4), (4,)),
                                   ((3,), (2, 5, 3)), ((), (3,)), ((2, 3), ())], ids=str)
def test_inner(sa, sb):
    check_op(ember.inner, torch.inner, rand_array(sa), rand_array(sb, seed=1))


def test_outer_and_ger_promote_like_mul():
    v, w = rand_array((3,)), rand_array((4,), np.float64, seed=1)
    check_op(ember.outer, torch.outer, v, w)
    check_op(lambda a, b: a.ger(b), lambda a, b: a.ger(b), v, w)
    check_op(ember.outer, torch.outer, v, rand_array((4,), np.int64))


@pytest.mark.parametrize("sa,sb", [((2, 3), (4, 5)), ((3,), (2, 2)), ((2, 1, 3), (3, 2)),
                                   ((2,), (3,))], ids=str)
def test_kron(sa, sb):
    check_op(ember.kron, torch.kron, rand_array(sa), rand_array(sb, seed=1))


@pytest.mark.parametrize("sa,sb,dims", [
    ((3, 4), (2, 5), 0),
    ((3, 4), (4, 5), 1),
    ((3, 4, 2), (4, 2, 5), 2),
    ((3, 4, 2), (4, 3, 5), ([1, 0], [0, 1])),
    ((3, 4, 2), (2, 5), ([2], [0])),
    ((3, 4, 2), (4, 2, 3), ((0, 2), (2, 1))),
    ((3, 4), (4, 3), ([-1], [0])),
], ids=str)
def test_tensordot(sa, sb, dims):
    check_op(lambda x, y: ember.tensordot(x, y, dims), lambda x, y: torch.tensordot(x, y, dims),
             rand_array(sa), rand_array(sb, seed=1))


@pytest.mark.parametrize("sa,sb,dims", [
    ((1, 3), (4, 3), ([0], [0])),
    ((4, 3), (1, 3), ([0], [0])),
    ((3, 1), (2, 4), ([1], [0])),
    ((1, 2, 1), (3, 2, 4), ([0, 1], [0, 1])),
    ((2, 1), (1, 3), 1),
], ids=str)
def test_tensordot_broadcasts_contracted_size_one_dims(sa, sb, dims):
    """PyTorch lets a contracted dim of size 1 meet any size (that operand is expanded)."""
    check_op(lambda x, y: ember.tensordot(x, y, dims), lambda x, y: torch.tensordot(x, y, dims),
             rand_array(sa), rand_array(sb, seed=1))


def test_tensordot_mismatch_message_matches_torch():
    a, b = rand_array((1, 2, 1)), rand_array((3, 2, 4), seed=1)
    with pytest.raises(RuntimeError) as te:
        torch.tensordot(torch.tensor(a), torch.tensor(b), dims=2)
    with pytest.raises(RuntimeError) as ee:
        ember.tensordot(ember.tensor(a), ember.tensor(b), dims=2)
    assert str(ee.value) == str(te.value)


@pytest.mark.parametrize("sa,sb", [((2,), (3,)), ((), ()), ((2, 3), (4,)), ((1, 2), (3, 1))],
                         ids=str)
def test_kron_result_is_a_fresh_tensor_as_torch(sa, sb):
    """kron reshapes its (fresh) product as PyTorch's _unsafe_view: UnsafeViewBackward0, no base."""
    a, b = rand_array(sa), rand_array(sb, seed=1)
    te = torch.kron(torch.tensor(a, requires_grad=True), torch.tensor(b))
    ee = ember.kron(ember.tensor(a, requires_grad=True), ember.tensor(b))
    assert ee.grad_fn.name() == te.grad_fn.name() == "UnsafeViewBackward0"
    assert ee._base is None and ee.stride() == te.stride()


@pytest.mark.parametrize("dims", [([0, 0], [0, 1]), ([0, 1], [1, 1]), ([0, -2], [0, 1])], ids=str)
def test_tensordot_repeated_dim_message_matches_torch(dims):
    a = rand_array((3, 3))
    with pytest.raises(RuntimeError) as te:
        torch.tensordot(torch.tensor(a), torch.tensor(a), dims=dims)
    with pytest.raises(RuntimeError) as ee:
        ember.tensordot(ember.tensor(a), ember.tensor(a), dims=dims)
    assert str(ee.value) == str(te.value)
