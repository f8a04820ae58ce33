"""mx.array against MLX 0.32.4: construction, dtype rules, operators, indexing, printing.

Each case is one expression, evaluated with `mx` bound to ember's face and to MLX itself;
the two reprs must be equal (MLX's repr carries the dtype and six significant digits),
or both sides must raise the same exception type with the same message.
"""

import numpy as np
import pytest

import ember.mlx.core as mx
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")


def _run(expr: str, module):
    return outcome(expr, module)


def _same(expr: str) -> None:
    assert _run(expr, mx) == _run(expr, mlx), expr


CONSTRUCTION = [
    "mx.array([1.0, 2.0, 3.0])",
    "mx.array([1, 2, 3])",
    "mx.array([True, False])",
    "mx.array(2**40)",
    "mx.array(1.5)",
    "mx.array([[1, 2], [3, 4]], dtype=mx.float16)",
    "mx.array(np.arange(3.0))",
    "mx.array(np.arange(3))",
    "mx.array(np.arange(3, dtype=np.uint16))",
    "mx.array(np.arange(4, dtype=np.float64), dtype=mx.float64)",
    "mx.array([1+2j, -1.5-0.5j])",
    "mx.array([mx.array([1, 2]), mx.array([3, 4])])",
    "mx.array([1.5, 2]).astype(mx.int32)",
    "mx.array([-1]).astype(mx.uint32)",
    "mx.array([300]).astype(mx.uint8)",
    "mx.zeros((2, 3))",
    "mx.ones((2,), mx.int32)",
    "mx.full((2, 2), 3)",
    "mx.full((2,), 3.0)",
    "mx.arange(5)",
    "mx.arange(1.0, 2.0, 0.5)",
    "mx.arange(0, 5, 2)",
    "mx.linspace(0, 1, 5)",
    "mx.eye(3)",
    "mx.zeros_like(mx.array([1, 2], mx.int8))",
    "mx.tri(3)",
]

PROMOTION = [
    "mx.array([1, 2], mx.int8) + 1",
    "mx.array([1, 2], mx.int8) + 1000",
    "mx.array([1], mx.uint8) + (-1)",
    "mx.array([1, 2], mx.int8) + 1.5",
    "mx.array([1, 2], mx.int8) / 2",
    "mx.array([1, 2]) / mx.array([3, 4])",
    "mx.array([1, 2], mx.uint32) - 3",
    "mx.array([1, 2], mx.uint8) * mx.array([1, 2], mx.int8)",
    "mx.array([1], mx.uint64) + mx.array([1], mx.int32)",
    "mx.array([1], mx.float16) + mx.array([1], mx.bfloat16)",
    "mx.array([1.0, 2.0], mx.float16) + 2.5",
    "mx.array([True, True]) + True",
    "mx.array([True]) + 1",
    "mx.array([True]) + 1.5",
    "mx.array([1], mx.int32) + 2**40",
    "2 ** mx.array([3])",
    "2.0 ** mx.array([3])",
    "mx.array([7]) // -2",
    "mx.array([-3]) % 2",
    "mx.array([-3.5]) % 2",
    "mx.array([1.5]) // 1",
    "mx.array([1]) / 0",
    "mx.array([1, 2]) == mx.array([1, 3])",
    "mx.array([1, 2]) < 1.5",
    "-mx.array([1, 2], mx.int8)",
    "~mx.array([True, False])",
    "~mx.array([1, 2])",
    "mx.array([6, 3]) & mx.array([3, 1])",
    "mx.array([1, 2]) << 2",
]

MATH = [
    "mx.exp(mx.array([1], mx.int8))",
    "mx.exp(mx.array([0.5], mx.float16))",
    "mx.sqrt(mx.array([4, 9]))",
    "mx.abs(mx.array([-1, 2], mx.int8))",
    "mx.sign(mx.array([-2, 0, 3]))",
    "mx.floor(mx.array([1.5, -1.5]))",
    "mx.floor(mx.array([1]))",
    "mx.round(mx.array([2.5, 1.2345]), 2)",
    "mx.square(mx.array([3]))",
    "mx.sigmoid(mx.array([0, 1]))",
    "mx.maximum(mx.array([1, 5]), 3)",
    "mx.minimum(mx.array([1.5, 5]), mx.array([2, 2]))",
    "mx.clip(mx.array([1, 5, 9]), 2, 6)",
    "mx.where(mx.array([True, False]), 1, 2.5)",
    "mx.isnan(mx.array([1.0, float('nan')]))",
    "mx.logaddexp(mx.array([1.0]), mx.array([2.0]))",
    "mx.arctan2(mx.array([1.0]), mx.array([2.0]))",
    "mx.isclose(mx.array([1.0]), mx.array([1.0 + 1e-6]))",
    "mx.allclose(mx.array([1.0]), mx.array([1.1]))",
    "mx.array_equal(mx.array([1]), mx.array([1.0]))",
    "mx.array_equal(mx.array([1]), mx.array([1, 1]))",
]

REDUCTIONS = [
    "mx.array([1, 2], mx.int8).sum()",
    "mx.array([1, 2], mx.uint8).sum()",
    "mx.array([True, True]).sum()",
    "mx.array([1, 2], mx.int8).max()",
    "mx.array([1, 2], mx.int8).cumsum()",
    "mx.array([1, 2], mx.int16).prod()",
    "mx.array([1, 2], mx.uint32).sum()",
    "mx.array([1, 2]).mean()",
    "mx.array([1, 2], mx.float16).mean()",
    "mx.array([[1, 3], [4, 2]]).argmax(axis=1)",
    "mx.array([[1, 3], [4, 2]]).argmin()",
    "mx.argsort(mx.array([2, 1, 3]))",
    "mx.var(mx.array([1, 2, 3]))",
    "mx.std(mx.array([1.0, 2, 3]), ddof=1)",
    "mx.sum(mx.ones((2, 3)), axis=[0, 1])",
    "mx.mean(mx.ones((2, 3)), axis=(0,), keepdims=True)",
    "mx.logsumexp(mx.array([1.0, 2.0]))",
    "mx.softmax(mx.array([1.0, 2.0]))",
    "mx.softmax(mx.array([[1.0, 2.0], [0.5, 0.0]]), axis=0)",
    "mx.array([[1, 2], [3, 4]]).sum(0)",
    "mx.cumsum(mx.array([1, 2, 3]), reverse=True)",
    "mx.cumsum(mx.array([1, 2, 3]), inclusive=False)",
    "mx.cumprod(mx.array([1.0, 2, 3]))",
    "mx.all(mx.array([1, 0]))",
    "mx.any(mx.array([[0, 0], [0, 1]]), axis=1)",
    "mx.prod(mx.array([[1, 2], [3, 4]]), axis=[0, 1])",
    "mx.array([3.0, 1.0]).max(keepdims=True)",
]

SHAPES = [
    "mx.split(mx.arange(6), 3)",
    "mx.split(mx.arange(6), [1, 4])",
    "mx.concatenate([mx.array([1]), mx.array([2.0])])",
    "mx.stack([mx.array([1, 2]), mx.array([3, 4])], axis=1)",
    "mx.expand_dims(mx.array([1, 2]), 0).shape",
    "mx.squeeze(mx.ones((1, 2, 1))).shape",
    "mx.squeeze(mx.ones((1, 2)), 1)",
    "mx.moveaxis(mx.ones((2, 3, 4)), 0, 2).shape",
    "mx.swapaxes(mx.ones((2, 3)), 0, 1).shape",
    "mx.flatten(mx.ones((2, 3, 4)), 1).shape",
    "mx.transpose(mx.ones((2, 3, 4)), [2, 0, 1]).shape",
    "mx.ones((2, 3)).reshape(3, 2).shape",
    "mx.ones((2, 3)).transpose(1, 0).shape",
    "mx.arange(6).reshape(2, 3).T",
    "mx.repeat(mx.array([1, 2]), 2)",
    "mx.tile(mx.array([1, 2]), 2)",
    "mx.pad(mx.array([1, 2]), 1)",
    "mx.pad(mx.ones((1, 2)), [(0, 1), (1, 0)], constant_values=5)",
    "mx.broadcast_to(mx.array([1, 2]), (2, 2))",
    "mx.take(mx.arange(6).reshape(2, 3), mx.array([0, 2]), axis=1)",
    "mx.take(mx.arange(6), mx.array([5, 1]))",
    "mx.take_along_axis(mx.array([[3, 1], [2, 4]]), mx.array([[1], [0]]), axis=1)",
    "mx.sort(mx.array([3, 1, 2]))",
    "mx.tril(mx.ones((3, 3)))",
    "mx.outer(mx.array([1.0, 2.0]), mx.array([3.0, 4.0]))",
    "mx.einsum('ij,jk->ik', mx.ones((2, 3)), mx.ones((3, 2)))",
    "mx.array([[1.0, 2.0]]) @ mx.array([[3.0], [4.0]])",
    "mx.array([1, 2]) @ mx.array([1, 2])",
]

INDEXING = [
    "mx.arange(6).reshape(2, 3)[1]",
    "mx.arange(6).reshape(2, 3)[:, 1:]",
    "mx.arange(6).reshape(2, 3)[None, ..., -1]",
    "mx.arange(6)[mx.array([0, 5, 2])]",
    "mx.arange(3)[mx.array([True, False, True])]",
    "mx.array([1, 2, 3]).at[mx.array([0, 0])].add(1)",
    "mx.array([1.0, 2, 3]).at[1:].multiply(2)",
    "mx.array([5, 2, 3]).at[mx.array([0, 0, 2])].maximum(4)",
    "len(mx.array(1))",
    "mx.array([1, 2]).item()",
    "mx.array([[7]]).item()",
    "mx.array([1, 2], mx.uint32).tolist()",
    "mx.array([0.5, 1.5], mx.float16).tolist()",
    "list(mx.array([1, 2]))",
]

PRINTING = [
    "mx.arange(2000)",
    "mx.arange(30.0).reshape(3, 10) * 1.1",
    "mx.arange(14).reshape(7, 2)",
    "mx.array([100000.0, 1234567.0, 0.0001, 0.00001234567, 3.14159265])",
    "mx.array([float('nan'), float('inf'), -float('inf'), -0.0])",
    "mx.array([1e10, 1e-5, 123456789.0])",
    "mx.array([[True, False]])",
    "mx.array(True)",
    "mx.zeros((2, 0))",
    "mx.array([0.1, 0.25], mx.float16)",
    "mx.array([0.1], mx.bfloat16)",
    "mx.array([1, 2], mx.uint64) - 5",
    "mx.array(3.0, mx.float64)",
    "mx.float32",
    "mx.DtypeCategory.floating",
    "mx.issubdtype(mx.int32, mx.integer)",
    "mx.issubdtype(mx.uint8, mx.signedinteger)",
    "mx.issubdtype(mx.float16, mx.inexact)",
    "mx.finfo(mx.float32)",
    "mx.iinfo(mx.int32)",
    "mx.default_device()",
    "mx.cpu",
    "mx.default_stream(mx.cpu)",
    "mx.set_default_device(mx.gpu)",
    "mx.zeros(3, stream=mx.gpu)",
]


@pytest.mark.parametrize("expr", CONSTRUCTION)
def test_construction(expr):
    _same(expr)


@pytest.mark.parametrize("expr", PROMOTION)
def test_promotion_and_operators(expr):
    _same(expr)


@pytest.mark.parametrize("expr", MATH)
def test_math(expr):
    _same(expr)


@pytest.mark.parametrize("expr", REDUCTIONS)
def test_reductions(expr):
    _same(expr)


@pytest.mark.parametrize("expr", SHAPES)
def test_shapes_and_products(expr):
    _same(expr)


@pytest.mark.parametrize("expr", INDEXING)
def test_indexing(expr):
    _same(expr)


@pytest.mark.parametrize("expr", PRINTING)
def test_printing_and_devices(expr):
    _same(expr)


def test_promotion_table_matches_mlx_for_every_pair():
    names = ["bool_", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32",
             "int64", "float16", "bfloat16", "float32", "float64", "complex64"]
    for a in names:
        for b in names:
            ours = (mx.array(1, getattr(mx, a)) + mx.array(1, getattr(mx, b))).dtype
            theirs = (mlx.array(1, getattr(mlx, a)) + mlx.array(1, getattr(mlx, b))).dtype
            assert repr(ours) == repr(theirs), (a, b)


def test_setitem_changes_the_object_not_earlier_slices():
    x = mx.array([1, 2, 3])
    alias, tail = x, x[1:]
    x[0] = 10
    x[1] = 20
    assert alias.tolist() == [10, 20, 3]  # the same object
    assert tail.tolist() == [2, 3]  # MLX's slices are copies


def test_in_place_operators_rebind_the_object():
    x = mx.array([1.0, 2.0])
    alias = x
    x += 1
    assert alias is x and x.tolist() == [2.0, 3.0]


def test_numpy_conversion_keeps_mlx_dtypes():
    assert np.array(mx.array([1, 2], mx.uint32)).dtype == np.uint32
    assert np.array(mx.array([1.5], mx.bfloat16)).dtype.name == "bfloat16"
    assert np.array(mx.array([2**63 + 5], mx.uint64))[0] == 2**63 + 5
