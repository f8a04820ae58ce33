"""`mx.einsum`'s argument checks against MLX 0.32.4: the checks `einsum_path` makes (the
operand count, subscripts per operand, repeated letters, sizes that do not broadcast), in
MLX's order and named `[einsum]`; size-1 axes broadcast against a letter's size."""

import pytest

import ember.mlx.core as mx
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")

SETUP = "a = mx.ones((2, 3)); b = mx.ones((3, 4))"


@pytest.mark.parametrize("expr", [
    "mx.einsum('ij,jk->ik', a, b, mx.ones(2))", "mx.einsum('ij,jk->ik', a)",
    "mx.einsum('ij,jk->ik', a, mx.ones(3))", "mx.einsum('ij,jk->ik', a, mx.ones((5, 4)))",
    "mx.einsum('ij,ij->i', a, mx.ones((2, 4)))", "mx.einsum('ii->i', a)",
    "mx.einsum('i.j', a)", "mx.einsum('ij->jj', a)", "mx.einsum('...ii->...i', a)",
    "mx.einsum('ij,jk->ik', a, mx.ones((1, 4)))", "mx.einsum('ij,jk->ik', mx.ones((2, 1)), b)",
    "mx.einsum('ij,jk', a, b)",
])
def test_checks(expr):
    assert outcome(expr, mx, SETUP) == outcome(expr, mlx, SETUP)
