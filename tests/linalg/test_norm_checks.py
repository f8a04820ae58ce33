"""The order of linalg.norm's and linalg.matrix_norm's checks against torch: a string order
always means a matrix norm; an unsupported order is reported before the input's rank and the
dims (exact: messages)."""

import pytest
import torch

import ember

from helpers import assert_same, same_message, to_ember

V, M, C = torch.ones(3), torch.ones(3, 3), torch.ones(2, 3, 3)


def _on(L, x):
    return x if L is torch else to_ember(x)


@pytest.mark.parametrize("ord", ["fro", "nuc", "foo", 2, 3, -1])
@pytest.mark.parametrize("x, dim", [(V, None), (V, (0,)), (C, (0, 1, 2)), (M, (0, 0))])
def test_matrix_norm_checks(ord, x, dim):
    kwargs = {} if dim is None else {"dim": dim}
    same_message(lambda L: L.linalg.matrix_norm(_on(L, x), ord=ord, **kwargs))


@pytest.mark.parametrize("ord", ["fro", "nuc", "foo"])
@pytest.mark.parametrize("x, dim", [(V, None), (V, 0), (M, 0), (C, (0, 1, 2)), (C, None),
                                    (C, (1,)), (M, (1, 1)), (C, ())])
def test_norm_with_a_string_order_is_a_matrix_norm(ord, x, dim):
    same_message(lambda L: L.linalg.norm(_on(L, x), ord=ord, dim=dim))


@pytest.mark.parametrize("ord", ["fro", "nuc"])
@pytest.mark.parametrize("dim", [(1, 2), (0, 2)])
def test_string_order_values(ord, dim):
    # (a float reduction, and for nuc an SVD whose last bits depend on the LAPACK build)
    x = torch.arange(18.0).view(2, 3, 3) - 8
    for keepdim in (False, True):
        assert_same(ember.linalg.norm(to_ember(x), ord=ord, dim=dim, keepdim=keepdim),
                    torch.linalg.norm(x, ord=ord, dim=dim, keepdim=keepdim), rtol=1e-5)
