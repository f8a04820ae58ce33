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


# an output letter no input has: MLX lets it through to the final transpose; the binding's
# type checks (subscripts not a string, an operand not an array); no operand at all
@pytest.mark.parametrize("expr", [
    "mx.einsum('ij,jk->il', a, b)", "mx.einsum('ij->kl', a)", "mx.einsum('i->kij', mx.ones(2))",
    "mx.einsum('...i->k...', a)", "mx.einsum('ij,jk->ilk', a, b)", "mx.einsum('ij')",
    "mx.einsum(3, a)", "mx.einsum('i', [1.0, 2.0])", "mx.einsum('ij->i', a, 3)",
    "mx.einsum('ij,jk->il', a.astype(mx.int32), b.astype(mx.int32))",
])
def test_missing_letters_and_argument_types(expr):
    assert outcome(expr, mx, SETUP) == outcome(expr, mlx, SETUP)


# MLX computes einsum step by step: a summed letter of one operand is `sum` (bools and
# small integers widen to int32 / uint32), two operands sharing a summed letter are one
# matmul (which refuses integers and bools), anything else is multiply (+ sum). The dtype
# and the wrap of int8 products follow from that, so they are compared exactly.
@pytest.mark.parametrize("expr", [
    "mx.einsum('i->', mx.array([True, False, True]))", "mx.einsum('ij->i', a > 1)",
    "mx.einsum('ij->', a.astype(mx.int8))", "mx.einsum('ij->', a.astype(mx.uint8))",
    "mx.einsum('ii->', mx.ones((2, 2), mx.bool_))", "mx.einsum('ii', mx.ones((2, 2), mx.uint16))",
    "mx.einsum('i,i->i', mx.array([True, False]), mx.array([True, True]))",
    "mx.einsum('i,i->', mx.array([True, False]), mx.array([True, True]))",
    "mx.einsum('i,i->', mx.array([1, 2]), mx.array([3, 4]))",
    "mx.einsum('bi,bi->b', a.astype(mx.int32), a.astype(mx.int32))",
    "mx.einsum('i,j->ij', mx.array([1, 2]), mx.array([3, 4]))",
    "mx.einsum('i,i->i', mx.array([100], mx.int8), mx.array([100], mx.int8))",
    "mx.einsum('ij,jk,kl->il', a.astype(mx.int32), b.astype(mx.int32), mx.ones((4, 2), mx.int32))",
    "mx.einsum('i,i,i->i', mx.array([1, 2]), mx.array([3, 4]), mx.array([1, 1]))",
    "mx.einsum('ij,jk->ik', a, b.astype(mx.int32))",
])
def test_dtypes_follow_mlx_steps(expr):
    assert outcome(expr, mx, SETUP) == outcome(expr, mlx, SETUP)


# float results: small integers in float32, so every step is exact and the reprs (values,
# shapes, dtypes) compare equal; repeated letters, size-1 broadcasting, ellipses, greedy
# paths over 3-4 operands, and einsum under grad / vmap / compile
@pytest.mark.parametrize("expr", [
    "mx.einsum('ij,jk,kl->il', a, b, mx.arange(8.0).reshape(4, 2))",
    "mx.einsum('ij,jk,kl,lm->im', a, b, mx.arange(8.0).reshape(4, 2), mx.ones((2, 5)))",
    "mx.einsum('bij,jk->bik', mx.arange(12.0).reshape(2, 2, 3), b)",
    "mx.einsum('ij,kj->ki', a, mx.arange(12.0).reshape(4, 3))",
    "mx.einsum('ij,jk->ik', mx.arange(2.0).reshape(2, 1), b)",
    "mx.einsum('...ij,...jk->...ik', mx.ones((2, 1, 2, 3)), mx.ones((3, 3, 2)))",
    "mx.einsum('iij->ji', mx.arange(18.0).reshape(3, 3, 2))",
    "mx.einsum('ijij->ij', mx.arange(36.0).reshape(3, 2, 3, 2))",
    "mx.einsum('iijj->ji', mx.arange(36.0).reshape(3, 3, 2, 2))",
    "mx.einsum('ii,ij->j', mx.arange(9.0).reshape(3, 3), mx.ones((3, 2)))",
    "mx.einsum('i,j,k->kji', mx.array([1.0, 2]), mx.array([3.0]), mx.array([1.0, 2, 3]))",
    "mx.einsum('ij,jk->ik', a.astype(mx.float16), b.astype(mx.float16))",
    "mx.einsum('ij,jk->ik', mx.zeros((2, 0)), mx.zeros((0, 3)))",
    "mx.grad(lambda x: mx.einsum('ij,jk->', x, b))(a)",
    "mx.grad(lambda x: mx.einsum('ii->', x))(mx.ones((3, 3)))",
    "mx.vmap(lambda x: mx.einsum('ii->i', x))(mx.arange(18.0).reshape(2, 3, 3))",
    "mx.compile(lambda x: mx.einsum('ij,kj->ik', x, x))(a)",
])
def test_values_along_mlx_path(expr):
    setup = "a = mx.arange(6.0).reshape(2, 3); b = mx.arange(12.0).reshape(3, 4)"
    assert outcome(expr, mx, setup) == outcome(expr, mlx, setup)
