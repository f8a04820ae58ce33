"""`gather_mm`, `block_masked_mm`, `segmented_mm` and `gather_qmm`'s index handling against
MLX 0.32.4: the repr (dtype, shape, six significant digits) or the exception type and
message must be equal. The operands hold small integers, so every product is exact on both
sides whatever order the sums run in."""

import pytest

import ember.mlx.core as mx
from mlx_oracle import grad_repr, outcome

mlx = pytest.importorskip("mlx.core")

SETUP = ("a = mx.arange(24.0).reshape(4, 2, 3) - 10; b = mx.arange(45.0).reshape(3, 3, 5) % 7;"
         "a4 = a.reshape(2, 2, 2, 3); o = (mx.arange(64.0 * 96).reshape(64, 96) % 5) - 2;"
         "p = (mx.arange(96.0 * 64).reshape(96, 64) % 3) - 1;"
         "m = mx.array([[True, False], [True, True]]); f = mx.array([[1.0, 0.5], [0.0, 2.0]]);"
         "w = (mx.arange(4 * 8 * 64.0).reshape(4, 8, 64) % 9) / 8;"
         "q = mx.quantize(w, 32, 4); x = mx.arange(3 * 64.0).reshape(3, 1, 64) % 4")

GATHER_MM = [
    "mx.gather_mm(a, b, mx.array([0, 3]), mx.array([1, 2]))",
    "mx.gather_mm(a, b, mx.array([[0], [1]]), mx.array([1, 2, 0]))",
    "mx.gather_mm(a, b, mx.array(1), mx.array([1, 2, 0]))",
    "mx.gather_mm(a, b, None, mx.array([1, 2, 0, 0]))",
    "mx.gather_mm(a[:1], b, None, mx.array([2, 1]))",
    "mx.gather_mm(a, b[:1], mx.array([3, 1]), None)",
    "mx.gather_mm(a4, b, mx.array([3, 0]), mx.array([2, 2]))",
    "mx.gather_mm(a[0, 0], b, None, mx.array([1, 2]))",
    "mx.gather_mm(a, b[0, :, 0], mx.array([1, 2]), None)",
    "mx.gather_mm(a[0, 0], b[0, :, 0], mx.array([0]), None)",
    "mx.gather_mm(a, b, mx.array([0, 1], mx.uint8), mx.array([1, 2], mx.int64))",
    "mx.gather_mm(a, b, mx.array([0, 1]), mx.array([1, 2]), sorted_indices=True)",
    "mx.gather_mm(a, b, mx.array([5, 7]), mx.array([4, 3]))",  # past the batch: wraps
    "mx.gather_mm(a4, b, mx.array([9]), mx.array([0]))",
    "mx.gather_mm(a, b, mx.zeros((0,), mx.int32), mx.zeros((0,), mx.int32))",
    "mx.gather_mm(a.astype(mx.int32), b, mx.array([0]), mx.array([1]))",
    "mx.gather_mm(a[:1], b[:1])",
    "mx.gather_mm(a.astype(mx.float16), b[:1])",
    # mistakes
    "mx.gather_mm(a, b, mx.array([0.0, 1.0]), mx.array([1, 2]))",
    "mx.gather_mm(a, b, mx.array([True]), mx.array([1]))",
    "mx.gather_mm(a, b, mx.array([0, 1, 2]), mx.array([1, 2]))",
    "mx.gather_mm(a, b, None, mx.array([1, 2]))",
    "mx.gather_mm(a, b[:, :2], None, mx.array([1, 2, 0, 0]))",
    "mx.gather_mm(a.astype(mx.int32), b.astype(mx.int32), mx.array([0]), mx.array([1]))",
    "mx.gather_mm(mx.array(1.0), b, None, mx.array([1]))",
    "mx.gather_mm(a, mx.array(1.0), mx.array([1]))",
    "mx.gather_mm(a.astype(mx.float16), b.astype(mx.float16), mx.array([0]), mx.array([1]))",
    "mx.gather_mm(a.astype(mx.bfloat16), b.astype(mx.float16), mx.array([0]), mx.array([1]))",
    "mx.gather_mm(a.astype(mx.float64), b, mx.array([0]), mx.array([1]), stream=mx.cpu)",
    "mx.gather_mm(a.astype(mx.float16), b.astype(mx.float16), mx.array([0.5]), mx.array([1]))",
]

BLOCK_MASKED = [
    "mx.block_masked_mm(o, p, 32, m)[::16, ::16]",
    "mx.block_masked_mm(o, p, 32, f)[::16, ::16]",
    "mx.block_masked_mm(o, p, 64, mx.array([[False]]))[::16, ::16]",
    "mx.block_masked_mm(o, p, 32, None, mx.array([[1.0, 0.5, 0.0], [0.0, 1.0, 2.0]]))[::16, ::16]",
    "mx.block_masked_mm(o, p, 32, None, None, mx.ones((3, 2), mx.bool_) & m[:1])[::16, ::16]",
    "mx.block_masked_mm(o, p, 32, m, mx.ones((2, 3), mx.bool_), "
    "mx.repeat(f[:1], 3, 0))[::16, ::16]",
    "mx.block_masked_mm(o[:40], p, 32, None, m)[::10, ::16]",
    "mx.block_masked_mm(o.at[0, 40].add(float('inf')), p, 32, None, mx.array([[True, False, "
    "True], [True, True, True]]))[::16, ::16]",
    "mx.block_masked_mm(o, p.at[0, 40].add(float('inf')), 32, m)[::16, ::16]",
    "mx.block_masked_mm(mx.stack([o, -o]), p, 32, mx.stack([m, ~m]))[:, ::16, ::16]",
    "mx.block_masked_mm(o[0], p, 32, mx.array([True, False]))[::16]",
    "mx.block_masked_mm(o, p[:, 0], 32, None, mx.array([[True, False, True], "
    "[False, True, True]]))[::16]",
    "mx.block_masked_mm(o, p)[::16, ::16]",
    # mistakes
    "mx.block_masked_mm(o, p, 16, m)",
    "mx.block_masked_mm(o, p, 32, mx.ones((3, 2), mx.bool_))",
    "mx.block_masked_mm(o, p, 32, None, m)",
    "mx.block_masked_mm(o, o, 32, m)",
    "mx.block_masked_mm(mx.array(1.0), p, 32, m)",
    "mx.block_masked_mm(o.astype(mx.int32), p.astype(mx.int32), 32, m)",
    "mx.block_masked_mm(o.astype(mx.float16), p, 32, m)",
    "mx.block_masked_mm(o.astype(mx.float16), p.astype(mx.float16), 32, m)",
    "mx.block_masked_mm(mx.stack([o, o, o]), mx.stack([p, p]), 32, m)",
]

SEGMENTED = [
    "mx.segmented_mm(o[:4], p[:, :3], mx.array([[0, 10], [10, 40], [40, 96], [5, 5]]))",
    "mx.segmented_mm(o[:4], p[:, :3], mx.array([[30, 10], [0, 96]]))",
    "mx.segmented_mm(o[:4], p[:, :3], mx.array([0, 50]))",
    "mx.segmented_mm(o[:2], p[:, :2], mx.array([[[0, 3], [3, 9]], [[1, 2], [0, 0]]]))",
    "mx.segmented_mm(o[:2].at[0, 50].add(float('inf')), p[:, :2], mx.array([[0, 40]]))",
    "mx.segmented_mm(o[:2].astype(mx.float16), p[:, :2].astype(mx.float16), mx.array([[0, 9]]))",
    "mx.segmented_mm(o[:2].astype(mx.bfloat16), p[:, :2], mx.array([[0, 9]], mx.uint8))",
    # mistakes
    "mx.segmented_mm(o, p, mx.array([[0.0, 64.0]]))",
    "mx.segmented_mm(a, b, mx.array([[0, 3]]))",
    "mx.segmented_mm(o, p, mx.array([[0, 1, 2]]))",
    "mx.segmented_mm(o, p, mx.array(3))",
    "mx.segmented_mm(o.astype(mx.int32), p.astype(mx.int32), mx.array([[0, 3]]))",
]

GATHER_QMM = [
    "mx.gather_qmm(x, *q, rhs_indices=mx.array([0, 3, 1]), group_size=32, bits=4)",
    "mx.gather_qmm(x, *q, rhs_indices=mx.array([5, 6]), group_size=32, bits=4)",  # wraps
    "mx.gather_qmm(x, *q, lhs_indices=mx.array([2, 4]), rhs_indices=mx.array([1]), "
    "group_size=32, bits=4)",
    "mx.gather_qmm(x, *q, lhs_indices=mx.array([[0], [2]]), rhs_indices=mx.array([1, 3, 0]), "
    "group_size=32, bits=4)",
    "mx.gather_qmm(x[0], *q, rhs_indices=mx.array([1, 2]), group_size=32, bits=4)",
    # mistakes
    "mx.gather_qmm(x, *q, rhs_indices=mx.array([0, 1]), group_size=32, bits=4)",
    "mx.gather_qmm(x, *q, rhs_indices=mx.array([0.5]), group_size=32, bits=4)",
    "mx.gather_qmm(x, *q, lhs_indices=mx.array([True]), group_size=32, bits=4)",
    "mx.gather_qmm(x[0, 0], *q, lhs_indices=mx.array([0]), group_size=32, bits=4)",
]


def _run(expr: str, module):
    return outcome(expr, module, SETUP)


@pytest.mark.parametrize("expr", GATHER_MM + BLOCK_MASKED + SEGMENTED + GATHER_QMM)
def test_same_as_mlx(expr):
    assert _run(expr, mx) == _run(expr, mlx), expr


@pytest.mark.parametrize("fn", [
    "lambda y: (mx.gather_mm(y, mx.arange(30.0).reshape(2, 3, 5) % 4, mx.array([0, 2, 2]), "
    "mx.array([1, 0, 1])) ** 2).sum()",
    "lambda y: mx.gather_mm(mx.arange(12.0).reshape(2, 2, 3), y.swapaxes(-1, -2)[:, :3, :2], "
    "None, mx.array([[1], [0]])).sum()",
    "lambda y: (mx.block_masked_mm(mx.tile(y.reshape(1, 18), (64, 2))[:, :32], "
    "mx.ones((32, 64)), 32, mx.array([[True, False]]), mx.array([[2.0]])) ** 2).sum()",
    "lambda y: (mx.block_masked_mm(mx.ones((64, 32)), mx.tile(y.reshape(18, 1), (2, 64))"
    "[:32], 32, None, mx.array([[True]]), mx.array([[0.5, 2.0]])) ** 2).sum()",
    "lambda y: (y * mx.segmented_mm(mx.ones((2, 4)), mx.ones((4, 3)), "
    "mx.array([[0, 4], [1, 3], [0, 0]]))).sum()",  # (segments not differentiated)
])
def test_grads_match_mlx(fn):
    arg = "mx.arange(18.0).reshape(3, 2, 3) % 5 - 2"
    assert grad_repr(fn, arg, mx) == grad_repr(fn, arg, mlx)


# MLX has no jvp or vmap rule for the three products, and no vjp for segmented_mm
TRANSFORMS = [
    "mx.grad(lambda y: mx.segmented_mm(y, mx.ones((9, 2)), mx.array([[0, 4]])).sum())"
    "(mx.ones((2, 9)))",
    "mx.grad(lambda y: mx.segmented_mm(mx.ones((2, 9)), y, mx.array([[0, 4]])).sum())"
    "(mx.ones((9, 2)))",
    "mx.vjp(lambda y: mx.segmented_mm(y, mx.ones((9, 2)), mx.array([[0, 4]])), "
    "[mx.ones((2, 9))], [mx.ones((1, 2, 2))])",
    "mx.jvp(lambda y: mx.segmented_mm(y, mx.ones((9, 2)), mx.array([[0, 4]])), "
    "[mx.ones((2, 9))], [mx.ones((2, 9))])",
    "mx.vmap(lambda y: mx.segmented_mm(y, mx.ones((9, 2)), mx.array([[0, 4]])))"
    "(mx.ones((3, 2, 9)))",
    "mx.vmap(lambda y: mx.gather_mm(y, mx.ones((3, 3, 2)), None, mx.array([0, 2])))"
    "(mx.ones((5, 2, 1, 3)))",
    "mx.vmap(lambda i: mx.gather_mm(mx.ones((2, 1, 3)), mx.ones((3, 3, 2)), None, i))"
    "(mx.array([[0, 2]]))",
    "mx.jvp(lambda y: mx.gather_mm(y, mx.ones((3, 3, 2)), None, mx.array([0, 2])), "
    "[mx.ones((2, 1, 3))], [mx.ones((2, 1, 3))])",
    "mx.vjp(lambda y: mx.gather_mm(y, mx.ones((3, 3, 2)), mx.array([1, 0, 1]), "
    "mx.array([0, 2, 2])), [mx.ones((2, 1, 3))], [mx.ones((3, 1, 2))])[1]",
    "mx.jvp(lambda y: mx.block_masked_mm(y, o.T, 32, m), [o[:, :64]], [o[:, :64]])",
    "mx.vmap(lambda y: mx.block_masked_mm(y, o.T, 32, m))(mx.stack([o[:, :64]] * 2))",
    "mx.compile(lambda y: mx.segmented_mm(y, mx.ones((9, 2)), mx.array([[0, 4]])))"
    "(mx.ones((2, 9)))",
    "mx.compile(lambda y: mx.gather_mm(y, mx.ones((3, 3, 2)), None, mx.array([0, 2])))"
    "(mx.ones((2, 1, 3)))",
]


@pytest.mark.parametrize("expr", TRANSFORMS)
def test_transforms_same_as_mlx(expr):
    assert _run(expr, mx) == _run(expr, mlx), expr
