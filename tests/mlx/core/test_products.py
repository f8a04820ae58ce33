"""The products of `_products` against MLX 0.32.4: reprs (dtype and six significant digits)
or exception type and message must be equal."""

import pytest

import ember.mlx.core as mx
from mlx_oracle import grad_repr, outcome

mlx = pytest.importorskip("mlx.core")

SETUP = ("i = mx.array([0, 2]); o = mx.ones((64, 64)); b = mx.arange(8.0).reshape(2, 2, 2);"
         "mask = mx.array([[True, False], [True, True]]);"
         "a = mx.array([[1, -2, 3], [4, 5, -6]]);"
         "f = mx.array([1.5, -2.5, float('nan'), float('inf'), -float('inf')]);"
         "x = mx.array([[0.5, -1.0, 2.0], [3.0, 0.25, -4.0]])")


def _run(expr: str, module):
    return outcome(expr, module, SETUP)


CASES = [
    "mx.kron(a, mx.array([[1, 0], [0, 2]]))",
    "mx.kron(mx.array([1.0, 2]), mx.array([[1], [3]]))",
    "mx.kron(x, mx.array(2))",
    "mx.kron(mx.array([1, 2], mx.int8), mx.array([1.5]))",
    "mx.vecdot(a, a)",
    "mx.vecdot(a.astype(mx.float32), a, axis=0)",
    "mx.vecdot(mx.array([1 + 1j]), mx.array([1 + 1j]))",
    "mx.vecdot(x, mx.array([1.0, 2.0, 3.0]))",
    "mx.vecdot(x, mx.ones((1, 3)))",
    "mx.vecdot(x, x, axis=3)",
    "mx.vecdot(x, x, axis=-2)",
    "mx.convolve(mx.array([1.0, 2, 3]), mx.array([0, 1, 0.5]))",
    "mx.convolve(mx.array([1.0, 2, 3, 4, 5]), mx.array([1.0, -1]), mode='same')",
    "mx.convolve(mx.array([1.0, 2, 3, 4, 5]), mx.array([1.0, -1, 2, 0.5]), mode='same')",
    "mx.convolve(mx.array([1.0, 2, 3, 4, 5]), mx.array([1.0, -1, 2]), mode='same')",
    "mx.convolve(mx.array([1.0, 2]), mx.array([1.0, -1, 3]), mode='valid')",
    "mx.convolve(mx.array([1.0, 2]), mx.array([1.0, -1, 3]))",
    "mx.convolve(mx.array([1, 2, 3]), mx.array([1, 1]))",
    "mx.gather_mm(mx.arange(12.0).reshape(3, 2, 2), mx.ones((2, 2)), i)",
    "mx.gather_mm(mx.arange(12.0).reshape(3, 2, 2), b, i, i // 2)",
    "mx.gather_mm(mx.ones((2, 3)), mx.arange(12.0).reshape(2, 3, 2), None, i.reshape(2, 1) // 2)",
    "mx.segmented_mm(mx.arange(8.0).reshape(2, 4), mx.arange(12.0).reshape(4, 3),"
    " mx.array([[0, 1], [1, 4], [2, 2]]))",
    "mx.block_masked_mm(o, o, 32, mx.array([[True, False], [False, True]]))[::32, ::32]",
    "mx.block_masked_mm(o, o, 32, None, mask, mask.T)[::32, ::32]",
    "mx.block_masked_mm(o[:40], o * 2, 32, None, mask)[::20, ::20]",
    "mx.hadamard_transform(mx.array([1.0, 2, 3, 4]))",
    "mx.hadamard_transform(mx.array([[1, 2], [3, 4]]), scale=1.0)",
    "mx.hadamard_transform(mx.arange(16.0).reshape(2, 8))",
    "mx.hadamard_transform(mx.arange(8.0).astype(mx.float16))",
    "mx.hadamard_transform(mx.ones(3))",
]


@pytest.mark.parametrize("expr", CASES)
def test_same_as_mlx(expr):
    assert _run(expr, mx) == _run(expr, mlx), expr


@pytest.mark.parametrize(("fn", "arg"), [
    ("lambda x: mx.kron(x, mx.array([[1.0, 2.0], [3.0, 4.0]])).sum()", "mx.array([0.5, -1.0])"),
    ("lambda x: (mx.hadamard_transform(x) ** 2 * mx.arange(4.0)).sum()",
     "mx.array([0.5, -1.0, 2.0, 3.0])"),
    ("lambda x: (mx.convolve(x, mx.array([1.0, -2.0])) ** 2).sum()", "mx.array([0.5, -1.0, 2.0])"),
])
def test_grads_match_mlx(fn, arg):
    assert grad_repr(fn, arg, mx) == grad_repr(fn, arg, mlx)
