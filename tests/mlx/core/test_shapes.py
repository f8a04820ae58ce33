"""The shape functions of `_shapes` against MLX 0.32.4: reprs (dtype and six significant
digits) or exception type and message must be equal."""

import pytest

import ember.mlx.core as mx
from mlx_oracle import SMALL, outcome

mlx = pytest.importorskip("mlx.core")

def _run(expr: str, module):
    return outcome(expr, module, SMALL)


CASES = [
    "mx.atleast_1d(mx.array(1))",
    "mx.atleast_1d(a)",
    "mx.atleast_2d(mx.array([1, 2]))",
    "mx.atleast_2d(mx.array(1.0))",
    "mx.atleast_3d(mx.array([1, 2]))",
    "mx.atleast_3d(a)",
    "mx.atleast_3d(mx.array(2))",
    "mx.atleast_1d(mx.array(1), mx.array([2]))",
    "mx.broadcast_arrays(mx.ones((2, 1)), mx.zeros(3, mx.int32))",
    "mx.broadcast_shapes((2, 1), (3,))",
    # meshgrid: a tuple; each grid keeps its own type; sparse grids are not broadcast
    "mx.meshgrid(mx.arange(2), mx.arange(3.0))",
    "mx.meshgrid(mx.arange(2), mx.arange(3), mx.arange(2, dtype=mx.int8), indexing='ij')",
    "mx.meshgrid(mx.arange(2), a, sparse=True)",
    "mx.meshgrid(mx.arange(2))",
    "mx.meshgrid()",
    "mx.meshgrid(mx.arange(2), indexing='xx')",
    "mx.broadcast_shapes((5, 1, 4), (3, 1), (1,))",
    "mx.broadcast_shapes((2, 1), (3, 4))",
    "mx.unflatten(a, 1, (3, 1))",
    "mx.unflatten(a, -1, (-1, 1))",
    "mx.unflatten(mx.arange(12), 0, (2, -1, 3))",
    "mx.permute_dims(a)",
    "mx.permute_dims(mx.ones((2, 3, 4)), (2, 0, 1)).shape",
    "mx.matrix_transpose(a)",
    "mx.matrix_transpose(mx.ones((2, 3, 4))).shape",
    "mx.matrix_transpose(mx.array([1]))",
    "mx.unstack(a)",
    "mx.unstack(a, axis=1)",
    "mx.unstack(a, axis=-1)",
    "mx.flip(a)",
    "mx.flip(a, 1)",
    "mx.flip(a, (0, 1))",
    "mx.flip(a, -1)",
    "mx.roll(a, 1)",
    "mx.roll(a, (1, 2))",
    "mx.roll(a, (1, -1), (0, 1))",
    "mx.roll(a, 2, 1)",
    "mx.roll(a, (1, 2), 1)",
    "mx.roll(a, 1, (0, 1))",
    "mx.roll(a, -7)",
    "mx.contiguous(a)",
    "mx.contiguous(a.T)",
    "mx.as_strided(a, (2, 2), (1, 1), 1)",
    "mx.as_strided(a)",
    "mx.as_strided(a.T, (3,), (2,))",
    "mx.as_strided(mx.arange(4), (3, 2), (1, 1))",
    "mx.view(a, mx.uint8)",
    "mx.view(a, mx.int16)",
    "mx.view(a, mx.uint16)",
    "mx.view(a, mx.uint32)",
    "mx.view(a, mx.int64)",
    "mx.view(mx.array([1.0]), mx.int32)",
    "mx.view(mx.array([1.0, -2.0]), mx.int64)",
    "mx.view(mx.array([1.0, -2.0]), mx.uint64)",
    "mx.view(mx.array([1.0, 2.0]), mx.float16)",
    "mx.view(mx.array([1.0, 2.0]), mx.bfloat16)",
    "mx.view(mx.array([65535, 1], mx.uint16), mx.int16)",
    "mx.view(mx.array([1065353216], mx.uint32), mx.float32)",
    "mx.view(mx.array([1, 0, 2], mx.uint8), mx.bool_)",
    "mx.view(mx.array([True, False]), mx.uint8)",
    "mx.view(mx.array([1, 2, 3]), mx.int64)",
    "mx.view(mx.array(1.0), mx.int32)",
    "mx.array([1065353216, 3]).view(mx.float32)",
    "x.view(mx.uint32)",
    "mx.slice(a, mx.array([0, 1]), (0, 1), (1, 2))",
    "mx.slice(a, mx.array([1]), (1,), (2, 2))",
    "mx.slice(a, mx.array([1]), (1,), (2,))",
    "mx.slice(x, mx.array(1), [0], [1, 3])",
    "mx.slice_update(a, mx.array([[9]]), mx.array([1, 2]), (0, 1))",
    "mx.slice_update(a, mx.array([[9, 8]]), mx.array([1, 1]), (0, 1))",
    "mx.slice_update(x, mx.array([7, 8]), mx.array([1]), [1])",
    "mx.slice_update(mx.zeros((3, 4)), mx.array([[7.0], [8]]), mx.array([1, 2]), [0, 1])",
    "mx.slice_update(a, mx.array([[9.5]]), mx.array([0, 0]), (0, 1))",
]


@pytest.mark.parametrize("expr", CASES)
def test_same_as_mlx(expr):
    assert _run(expr, mx) == _run(expr, mlx), expr


# objects with `__mlx_array__` (MLX's ArrayLike) where MLX's shape functions take them
_LIKE = ("class W:\n"
         "    def __init__(self, a): self.a = a\n"
         "    def __mlx_array__(self): return self.a\n"
         "w = W(mx.array([3., 1, 2]))\n")


@pytest.mark.parametrize("expr", ["mx.view(w, mx.int32)", "mx.view(w, mx.uint8).shape",
                                  "mx.broadcast_to(w, (2, 3))", "mx.array(w)[::-1]"])
def test_array_likes_as_mlx(expr):
    assert outcome(expr, mx, _LIKE) == outcome(expr, mlx, _LIKE), expr


# roll takes `shift` and `axis` as keywords too; split reads indices as NumPy's slice
# bounds; transpose of a 0-d array and its axis checks
MORE = [
    "mx.roll(a, 1, axis=0)",
    "mx.roll(a, (1, 2), axis=(0, 1))",
    "mx.roll(a, shift=1, axis=-1)",
    "mx.roll(a, 1, axis=2)",
    "mx.roll(a, 1, axis=(0, -3))",
    "mx.roll(mx.array(5), 1, axis=0)",
    "mx.split(mx.arange(6), [2, 10])",
    "mx.split(mx.arange(6), [-2])",
    "mx.split(mx.arange(6), [-10, 3])",
    "mx.split(mx.arange(6), [4, 2])",
    "mx.split(mx.arange(6), [7, 8])",
    "mx.split(mx.arange(6), [3, -1])",
    "mx.split(mx.zeros((0,)), [1])",
    "mx.split(mx.arange(6), 0)",
    "mx.split(mx.arange(6), -1)",
    "mx.split(mx.arange(6), 4)",
    "mx.split(mx.zeros((2, 6)), 4, axis=-1)",
    "mx.split(a, [1], axis=2)",
    "mx.split(mx.array(3), 1)",
    "mx.transpose(mx.array(3.0))",
    "mx.array(3.0).T",
    "mx.transpose(mx.array(3.0), ())",
    "mx.transpose(mx.array(3.0), (0,))",
    "mx.transpose(mx.zeros((2, 3, 4)), (0, 1))",
    "mx.transpose(mx.zeros((2, 3, 4)), (0, 1, 3))",
    "mx.transpose(mx.zeros((2, 3, 4)), (0, 0, 5))",
    "mx.transpose(mx.zeros((2, 3, 4)), (0, 1, -4))",
]


@pytest.mark.parametrize("expr", MORE)
def test_roll_split_transpose_as_mlx(expr):
    assert _run(expr, mx) == _run(expr, mlx), expr


# as_strided of views: strides and offset count from the view's first element, over its
# row-major flattening (a copy where its axes do not collapse to one stride); a view
# that flattens to a strided one (a stepped slice, a column, a broadcast scalar) is
# refused. (Past the view's own elements MLX reads what memory follows: not compared.)
STRIDED_VIEWS = [
    "mx.as_strided(mx.arange(12).reshape(3, 4)[1:], (4,), (1,), 2)",
    "mx.as_strided(mx.arange(12).reshape(3, 4)[:1], (8,), (1,))",
    "mx.as_strided(mx.arange(12)[2:4], (4,), (1,))",
    "mx.as_strided(mx.arange(12).reshape(3, 4)[:, 1:], (3,), (4,))",
    "mx.as_strided(mx.arange(12).reshape(3, 4).T, (3,), (4,))",
    "mx.as_strided(mx.broadcast_to(mx.arange(3), (2, 3)), (6,), (1,))",
    "mx.as_strided(mx.arange(12).reshape(3, 4)[::2], (4,), (1,))",
    "mx.as_strided(mx.arange(6).reshape(2, 3).swapaxes(0, 1)[1:], (3,), (1,))",
    "mx.as_strided(mx.arange(8).reshape(2, 2, 2).transpose(1, 0, 2)[0], (4,), (1,))",
    "mx.as_strided(mx.arange(12)[::2][:1], (2,), (1,))",
    "mx.as_strided(mx.arange(8).reshape(2, 4)[:, ::2].T[0], (2,), (1,))",  # (one int: a copy)
    "mx.as_strided(mx.arange(12)[4:], (3,), (-1,), 2)",
    "mx.as_strided(mx.arange(12)[::2], (3,), (2,))",
    "mx.as_strided(mx.arange(12)[::2], (0,), (1,))",
    "mx.as_strided(mx.arange(24).reshape(2, 12)[:, ::2], (4,), (1,))",
    "mx.as_strided(mx.arange(12)[::2].reshape(2, 3), (4,), (1,))",
    "mx.as_strided(mx.broadcast_to(mx.array(5), (4,)), (2,), (1,))",
    "mx.as_strided(mx.arange(12).reshape(3, 4)[:, 1], (3,), (1,))",
    "mx.as_strided(mx.arange(12).reshape(3, 4)[:, 1:2], (3,), (1,))",
]


def test_as_strided_of_views_as_mlx():
    wrong = [(e, _run(e, mx), _run(e, mlx)) for e in STRIDED_VIEWS if _run(e, mx) != _run(e, mlx)]
    assert wrong == []
