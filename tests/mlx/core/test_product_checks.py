"""matmul, addmm and tensordot refuse what MLX 0.32.4 refuses, with its exception and
message, checked in its order (0-d operands, the inner axes, the dtype, the batch axes);
and addmm computes in the type all three operands promote to."""

import numpy as np
import pytest

import ember.mlx.core as mx
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")


@pytest.mark.parametrize("expr", [
    "mx.zeros((2, 3)) @ mx.zeros((4, 5))",
    "mx.matmul(mx.zeros((2, 3)), mx.zeros((4, 5)))",
    "mx.zeros((3,)) @ mx.zeros((4, 5))",  # a vector is one row: (1,3)
    "mx.zeros((2, 4, 3)) @ mx.zeros((4,))",  # ... or one column: (4,1)
    "mx.zeros((3,)) @ mx.zeros((4,))",
    "mx.zeros((0, 3)) @ mx.zeros((4, 0))",
    "mx.zeros((2, 2, 3)) @ mx.zeros((3, 4, 5))",  # the inner axes before the batch axes
    "mx.zeros((2, 2, 3)) @ mx.zeros((3, 3, 5))",
    "mx.zeros((5, 2, 2, 3)) @ mx.zeros((3, 3, 5))",
    "mx.matmul(mx.zeros((2, 1, 3)), mx.zeros((4, 3, 5)))",
    "mx.zeros((2, 3), mx.int32) @ mx.zeros((4, 5), mx.int32)",  # shapes before the dtype
    "mx.zeros((2, 2, 3), mx.int32) @ mx.zeros((3, 3, 5), mx.int32)",  # dtype before batch
    "mx.zeros((), mx.int32) @ mx.zeros((4, 5), mx.int32)",
    "mx.zeros((3,)) @ mx.zeros(())",
])
def test_matmul_errors_are_mlxs(expr):
    assert outcome(expr, mx) == outcome(expr, mlx)


@pytest.mark.parametrize("expr", [
    "mx.addmm(mx.zeros((2, 5)), mx.zeros((2, 3)), mx.zeros((4, 5)))",
    "mx.addmm(mx.zeros((2, 5)), mx.zeros((3,)), mx.zeros((4, 5)))",
    "mx.addmm(mx.zeros((2, 5)), mx.zeros(()), mx.zeros((4, 5)))",
    "mx.addmm(mx.zeros((3, 5)), mx.zeros((2, 3)), mx.zeros((3, 5)))",
    "mx.addmm(mx.zeros((5,)), mx.zeros((3, 4)), mx.zeros((4,)))",
    "mx.addmm(mx.zeros((4, 2, 5)), mx.zeros((2, 3)), mx.zeros((3, 5)))",
    "mx.addmm(mx.zeros((2, 2, 5)), mx.zeros((3, 2, 3)), mx.zeros((2, 3, 5)))",
    "mx.addmm(mx.zeros((2, 5), mx.int16), mx.zeros((2, 3), mx.int32), mx.zeros((3, 5), mx.int8))",
    "mx.addmm(mx.zeros((2, 2, 5), mx.int32), mx.zeros((3, 2, 3), mx.int32),"
    " mx.zeros((2, 4, 5), mx.int32))",
    # integer factors beside a float (or complex) c: computed in c's type
    "mx.addmm(mx.ones((2, 5), mx.float16), mx.ones((2, 3), mx.int32), mx.ones((3, 5), mx.int8))",
    "mx.addmm(mx.ones((2, 5)), mx.ones((2, 3), mx.int32), mx.ones((3, 5), mx.int32), 2.0, 0.5)",
    "mx.addmm(mx.zeros((2, 5), mx.complex64), mx.ones((2, 3)), mx.ones((3, 5)))",
    "mx.addmm(mx.ones((5,)), mx.ones((3,)), mx.ones((3, 5)))",
    "mx.addmm(mx.ones(()), mx.ones((7, 2, 3)), mx.ones((3, 5))).shape",
])
def test_addmm_checks_and_types_are_mlxs(expr):
    assert outcome(expr, mx) == outcome(expr, mlx)


@pytest.mark.parametrize("expr", [
    "mx.tensordot(mx.zeros((2, 3)), mx.zeros((4, 5)), axes=1)",
    "mx.tensordot(mx.zeros((2, 3)), mx.zeros((3, 5)), axes=3)",
    "mx.tensordot(mx.zeros((2, 3)), mx.zeros((3,)), axes=2)",
    "mx.tensordot(mx.zeros((2, 3)), mx.zeros((3, 5)), axes=-1)",
    "mx.tensordot(mx.zeros((2, 3)), mx.zeros((3, 5)), axes=[[1], [0, 1]])",
    "mx.tensordot(mx.zeros((2, 3)), mx.zeros((3, 5)), axes=[[0], [0]])",
    "mx.tensordot(mx.zeros((2, 3)), mx.zeros((3, 5)), axes=([1],))",
    "mx.tensordot(mx.zeros((2, 3)), mx.zeros((3, 5)), axes=[[5], [0]])",
    "mx.tensordot(mx.zeros((2, 3), mx.int32), mx.zeros((3, 5), mx.int32), axes=1)",
    "mx.tensordot(mx.zeros((2, 3), mx.int32), mx.zeros((4, 5), mx.int32), axes=1)",
    "mx.tensordot(mx.ones((2, 3)), mx.ones((3, 5)), axes=[[-1], [-2]])",
    "mx.tensordot(mx.ones((2, 3)), mx.ones((2, 3)), axes=2)",
])
def test_tensordot_checks_are_mlxs(expr):
    assert outcome(expr, mx) == outcome(expr, mlx)


def test_addmm_of_integer_factors_equals_mlxs_values():
    rng = np.random.default_rng(0)
    c = rng.integers(-9, 9, (3, 4)).astype(np.float32)
    a, b = rng.integers(-5, 5, (3, 6)), rng.integers(-5, 5, (6, 4))
    ours = mx.addmm(mx.array(c), mx.array(a, mx.int32), mx.array(b, mx.int32), 0.5, 2.0)
    theirs = mlx.addmm(mlx.array(c), mlx.array(a, mlx.int32), mlx.array(b, mlx.int32), 0.5, 2.0)
    assert ours.dtype == mx.float32
    # (small integers, halved or doubled: every product and sum is exact in float32, in
    # whatever order it is summed)
    np.testing.assert_array_equal(np.array(ours), np.array(theirs))
