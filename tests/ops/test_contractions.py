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
