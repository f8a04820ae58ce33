"""mx.array against MLX 0.32.4: construction, dtype rules, operators, indexing, printing.

Each case is one expression, evaluated with `mx` bound to ember's face and to MLX itself;
the two reprs must be equal (MLX's repr carries the dtype and six significant digits),
or both sides must raise the same exception type with the same message.
"""

import numpy as np
import pytest

import ember.mlx.core as mx
from mlx_oracle import grad_repr, outcome

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
    "mx.clip(mx.array([1, 5, 9]), None, 6)",
    "mx.clip(mx.array([1, 5, 9]), None, None)",  # MLX refuses clipping to nothing
    "mx.where(mx.array([True, False]), 1, 2.5)",
    "mx.isnan(mx.array([1.0, float('nan')]))",
    "mx.logaddexp(mx.array([1.0]), mx.array([2.0]))",
    "mx.arctan2(mx.array([1.0]), mx.array([2.0]))",
    "mx.isclose(mx.array([1.0]), mx.array([1.0 + 1e-6]))",
    "mx.allclose(mx.array([1.0]), mx.array([1.1]))",
    "mx.array_equal(mx.array([1]), mx.array([1.0]))",
    "mx.array_equal(mx.array([1]), mx.array([1, 1]))",
    # NaNs match under equal_nan also with zero tolerances (array_equal's)
    "mx.array_equal(mx.array([1.0, float('nan')]), mx.array([1.0, float('nan')]), "
    "equal_nan=True)",
    "mx.array_equal(mx.array([float('nan')], mx.bfloat16), mx.array([float('nan')]), "
    "equal_nan=True)",
    "mx.isclose(mx.array([float('nan'), 1.0]), mx.array([float('nan'), 2.0]), 0.0, 0.0, "
    "equal_nan=True)",
    # the operator and the function refuse floats in different words
    "~mx.array([1.5], mx.float16)", "~mx.array([1 + 1j])", "mx.bitwise_invert(mx.array([1.5]))",
    "mx.bitwise_invert(mx.array([True, False]))", "~mx.array([5], mx.uint8)",
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
    "mx.finfo(mx.bfloat16)",
    "(mx.finfo(mx.bfloat16).eps, mx.finfo(mx.bfloat16).min, mx.finfo(mx.float16).max)",
    "(mx.finfo(mx.complex64), mx.finfo(mx.complex64).dtype)",
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
    assert np.array(mx.array(np.array([2**63 + 5], np.uint64)))[0] == 2**63 + 5


# -- the cases below compare every value (MLX's repr elides long arrays) -------------------

def _full(v):
    """An array's values, dtype and shape (anything else: its repr)."""
    return (v.tolist(), repr(v.dtype), v.shape) if hasattr(v, "tolist") else repr(v)


def _same_full(expr: str, setup: str = "") -> None:
    assert outcome(expr, mx, setup, _full) == outcome(expr, mlx, setup, _full), expr


# negative-step slices (ember's tensors refuse them; the MLX face reads the axis flipped):
# reads mixed with ints, None, Ellipsis and arrays; writes; `.at` updates
_SLICING = ("a = mx.arange(24).reshape(2, 3, 4)\n"
            "x = mx.arange(12).reshape(3, 4)\n"
            "def assign(x, idx, v):\n"
            "    x[idx] = v\n"
            "    return x\n")

NEGATIVE_STEPS = [
    "a[::-1]", "a[:, ::-2]", "a[0, 3:0:-1]", "a[..., ::-1]", "a[None, ::-1, 1]",
    "a[:, mx.array([0, 2]), ::-1]", "a[::-1, mx.array([0, 2])]", "a[mx.array([1, 0]), :, ::-2]",
    "a[::-1, :, mx.array([0, 3])]", "a[::-1, None, mx.array([0, 2])]",
    "a[::-1, 1, mx.array([0, 2])]", "a[mx.array([0, 1]), ::-1, mx.array([0, 2])]",
    "a[5:-10:-1]", "a[:, -1:-10:-2]", "a[:, 10::-1]", "a[:, 0:3:-1]", "a[::-100]",
    "a[:, 1::-1, -2::-3]", "a[::-1][0]", "mx.arange(5)[4:1:-2]", "mx.arange(5)[-1::-2]",
    "mx.arange(5)[:-7:-1]", "mx.arange(5)[-7::-1]", "mx.arange(5)[7::-1]", "mx.arange(0)[::-1]",
    "a[:, ::-1, ::-1][1, ::-2]", "a[..., 2:-5:-1, None]", "a[mx.array(1), ::-1]",
    "assign(x, np.s_[::-1], mx.array([1, 2, 3, 4]))",
    "assign(x, np.s_[::-1], mx.array([[1], [2], [3]]))",
    "assign(x, np.s_[:, ::-2], mx.array([[1, 2]]))",
    "assign(x, np.s_[2:0:-1, 1], mx.array([7, 8]))",
    "assign(x, np.s_[mx.array([0, 2]), ::-1], mx.array([1, 2, 3, 4]))",
    "assign(x, np.s_[::-1, mx.array([0, 2])], mx.array([[1, 2], [3, 4], [5, 6]]))",
    "assign(x, np.s_[..., ::-1], 5)",
    "assign(x, np.s_[::-1], 2.5)",
    "assign(x, np.s_[::-1], mx.arange(12).reshape(3, 4))",
    "assign(x, np.s_[::-1], mx.array([1, 2]))",
    "assign(x, np.s_[5:0:-2], mx.array([7, 8]))",
    "assign(mx.zeros((2, 3, 4)), np.s_[::-1, mx.array([0, 2]), 1:3], "
    "mx.arange(8.0).reshape(2, 2, 2))",
    "x.at[::-1].add(mx.array([1, 2, 3, 4]))",
    "x.at[:, ::-2].add(mx.array([[10, 20]]))",
    "x.at[::-1, mx.array([0, 0])].add(1)",
    "x.at[::-1].subtract(mx.array([[1], [2], [3]]))",
    "x.at[::-1].multiply(2)",
    "x.at[::-1].divide(2)",
    "x.at[::-1].maximum(mx.array([5, 5, 5, 5]))",
    "x.at[2:0:-1, ::-3].minimum(3)",
]


@pytest.mark.parametrize("expr", NEGATIVE_STEPS)
def test_negative_step_slices_read_write_and_update(expr):
    _same_full(expr, _SLICING)


_GRAD_ARG = "mx.arange(24.0).reshape(2, 3, 4) / 5 - 1"
_W = "(mx.arange(24.0).reshape(2, 3, 4) / 7)"


def _written(lhs: str, rhs: str) -> str:
    """A function of y writing `rhs` into zeros at `lhs` (a statement inside a lambda)."""
    return (f"lambda y: (lambda z: (z.__setitem__({lhs}, {rhs}), (z * {_W}).sum())[1])"
            "(mx.zeros((2, 3, 4)))")


@pytest.mark.parametrize("fn", [
    f"lambda y: (y[::-1] * {_W}).sum()",
    f"lambda y: (y[:, ::-2] * {_W}[:, :2]).sum()",
    "lambda y: (y[1, 2:0:-1, ::-3] ** 2).sum()",
    "lambda y: (y[mx.array([1, 0]), ::-1, mx.array([3, 0])] * mx.array([1., 2, 3])).sum()",
    f"lambda y: (y[..., ::-1][None] * {_W}).sum()",
    _written("np.s_[:, ::-2]", "y[:, :2] * 2"),
    _written("np.s_[1, 2:0:-1, ::-3]", "y[0, :2, :2] ** 2"),
    f"lambda y: (y.at[::-1].add(y * 2) * {_W}).sum()",
    f"lambda y: (y.at[:, ::-2].multiply(y[:, :2] + 3) * {_W}).sum()",
    f"lambda y: (y.at[::-1, mx.array([0, 0])].add(y[:, 0]) * {_W}).sum()",
    f"lambda y: (y.at[:, ::-1].maximum(0.5) * {_W}).sum()",
    f"lambda y: (y.at[1, ::-1].divide(2.0) * {_W}).sum()",
])
def test_negative_step_slice_gradients_match_mlx(fn):
    scope = {"mx": mx, "np": np}
    ours = repr(mx.grad(eval(fn, scope))(eval(_GRAD_ARG, scope)))
    scope = {"mx": mlx, "np": np}
    theirs = repr(mlx.grad(eval(fn, scope))(eval(_GRAD_ARG, scope)))
    assert ours == theirs, fn


def test_positive_step_slices_need_no_flip():
    x = mx.arange(12).reshape(3, 4)
    from ember.mlx.core._indexing import index_of as _index
    assert _index(np.s_[1:, ::2], x.shape)[1] == ()
    assert _index(np.s_[::-1, 1], x.shape)[1] == [0]


# `.at` updates: the value read next to x, cast to x's dtype (integers keep theirs, and
# `divide` multiplies by the reciprocal cast to it), except with no index at all
_AT = ("xi = mx.array([4, 9, -7, 1]); xu = mx.array([4, 9, 7, 1], mx.uint8);"
       "xf = mx.array([4., 9, -7, 1]); xh = mx.array([4., 9, -7, 1], mx.float16);"
       "xb = mx.array([True, False, True, False])")
_AT_VALUES = ["2", "2.5", "mx.array(2.5)", "mx.array([2, 3])", "mx.array(2, mx.int64)",
              "mx.array(True)", "mx.array(2, mx.uint8)", "mx.array(1+2j)",
              "mx.array(2.5, mx.float16)", "mx.array(-3)", "1000", "np.array([1.5, 2.5])"]
AT_DTYPES = [f"{x}.at[mx.array([0, 1])].{m}({v})"
             for m in ("add", "subtract", "multiply", "divide", "maximum", "minimum")
             for x in ("xi", "xu", "xf", "xh", "xb") for v in _AT_VALUES]
AT_DTYPES += [
    "xi.at[...].add(2.5)", "xi.at[None].add(2.5)", "xi.at[(None,)].add(2.5)",
    "xi.at[...].divide(2)", "xi.at[:].divide(2)", "xi.at[...].subtract(mx.array(True))",
    "xb.at[...].subtract(2)", "xi.at[...].maximum(2.5)", "xi.at[1:3].add(np.array([1.5, 2.5]))",
    "xi.at[0].add([1])", "xi.at[0].add('a')", "xi.at[0].add(None)", "xi.at[0].multiply(None)",
    "xi.at[0].add(2**40)", "xu.at[0].add(-1)", "xi.at[mx.array([0, 0])].multiply(mx.array([2, 3]))",
    "xi.at[mx.array([0, 0])].divide(mx.array([2., 4.]))",
    "xf.at[mx.array([0, 0])].divide(mx.array([2., 4.]))", "xi.at[[0, 1]].add(1)",
    "mx.array(5).at[()].add(1)", "mx.array(5).at[...].add(1.5)", "mx.array(5.).at[None].add(1)",
    "xu.at[mx.array([0])].subtract(mx.array([3], mx.uint8))", "xf.at[0].divide(0)",
    "xi.at[0].add(mx.array([1, 2]))", "xi.at[1:3].add(mx.array([[1, 2]]))",
    "xi.at[1:3].add(mx.array([[[1, 2]]]))", "xi.at[mx.array([0, 1])].add(mx.array([1, 2, 3]))",
    "mx.array([200, 100], mx.uint8).at[mx.array([0, 0])].add(mx.array([100, 100], mx.uint8))",
    "mx.array([1, 2], mx.uint16).at[0].subtract(3)",
]


@pytest.mark.parametrize("expr", AT_DTYPES)
def test_at_updates_keep_mlx_dtype_rules(expr):
    assert outcome(expr, mx, _AT) == outcome(expr, mlx, _AT), expr


_SET = ("x = mx.array([1, 2, 3], mx.uint8)\n"
        "def assign(x, idx, v):\n"
        "    x[idx] = v\n"
        "    return x\n")

SETITEM = [
    "assign(x, 0, 300)", "assign(x, 0, -1)", "assign(x, 0, 2.7)", "assign(x, 0, mx.array(300))",
    "assign(x, mx.array([0, 1]), 256)", "assign(x, ..., 7)", "assign(x, 0, 'a')",
    "assign(x, 0, None)", "assign(x, 0, [5])", "assign(x, np.s_[0:2], np.array([5, 6]))",
    "assign(x, 0, 1+2j)", "assign(x, 0, 2**40)", "assign(x, 0, True)",
    "assign(mx.array([True, False]), 0, 2.5)", "assign(mx.array([1, 2]), ..., mx.array(1.5))",
    "assign(mx.array([1, 2]), None, 2.5)", "assign(mx.array([1, 2]), (), 2.5)",
    "assign(mx.array([1, 2]), ..., mx.array([1, 2, 3]))",
    "assign(mx.array([1, 2]), 0, mx.array([[7, 8]]))",
    "assign(mx.array([1, 2]), np.s_[1:], mx.array([[[7]]]))",
    "assign(mx.array([1, 2]), mx.array([0]), mx.array([7, 8]))",
    "assign(mx.array([1, 2]), np.s_[0:2], mx.array([1, 2, 3]))",
    "assign(mx.array([1, 2, 3]), np.s_[None, 1:], mx.array([[[5, 6]]]))",
    "assign(mx.array([1, 2, 3]), mx.array([0, 1]), mx.array([[1], [2]]))",
]


@pytest.mark.parametrize("expr", SETITEM)
def test_setitem_reads_values_as_mlx(expr):
    assert outcome(expr, mx, _SET) == outcome(expr, mlx, _SET), expr


# mx.array of what MLX refuses: its exception type and message
BAD_CONSTRUCTION = [
    "mx.array('x')", "mx.array(b'x')", "mx.array(bytearray(b'ab'))", "mx.array(None)",
    "mx.array(object())", "mx.array({1: 2})", "mx.array([1, 'x'])", "mx.array(['x'])",
    "mx.array([[1, 2], [3]])", "mx.array([[1, 2], 3])", "mx.array([1, [2, 3]])",
    "mx.array([1, None])", "mx.array([[1], [[2]]])", "mx.array(set([1]))", "mx.array(range(3))",
    "mx.array(2**70)", "mx.array([2**70])", "mx.array(-2**63)", "mx.array(2**63)",
    "mx.array([1, 2**40])", "mx.array([2**31])", "mx.array(-2**31)", "mx.array([2**64])",
    "mx.array(1, 'float32')", "mx.array(1, np.float32)", "mx.array(1, dtype=None)",
    "mx.array([mx.array(1), 2])", "mx.array([mx.array([1]), mx.array([1, 2])])",
    "mx.array(np.array(['a']))", "mx.array(np.array([1, 2], dtype=object))",
    "mx.array(np.float64(2.5))", "mx.array(np.int64(3))", "mx.array(1.5, mx.int32)",
    "mx.array([1.5, 2.7], mx.int32)", "mx.array(1 + 2j, mx.float32)", "mx.array([1+2j], mx.int32)",
    "mx.array(300, mx.uint8)", "mx.array(-1, mx.uint32)", "mx.array([300], mx.uint8)",
    "mx.array([], mx.int32)", "mx.array([[]])", "mx.array(())", "mx.array([(1, 2), (3, 4)])",
    "mx.array([True, 2])", "mx.array([True, 2.5])", "mx.array([1, 2+1j])", "mx.array(1, 2)",
    "mx.array()", "mx.array(1, dtype=mx.float16, foo=1)", "mx.array(val=2)",
    "mx.array(float('nan'), mx.int32)", "mx.array([np.float32(1), 2])",
    "mx.array([np.int64(5)])", "mx.array([np.array(1)])", "mx.array([1.5], mx.bool_)",
    "mx.array([2**63 + 5], mx.uint64)", "mx.array([[1, 2], [3, 4.5]], mx.int8)",
]


@pytest.mark.parametrize("expr", BAD_CONSTRUCTION)
def test_construction_refuses_what_mlx_refuses(expr):
    _same(expr)


# objects with `__mlx_array__` (MLX's ArrayLike): taken by mx.array, operators, `.at`, and
# the functions MLX takes them in; operators refuse lists, strings and other objects;
# NumPy values next to an array take its dtype
_LIKE = ("class W:\n"
         "    def __init__(self, a): self.a = a\n"
         "    def __mlx_array__(self): return self.a\n"
         "class Bad:\n"
         "    def __mlx_array__(self): return 3\n"
         "class O: pass\n"
         "x = mx.array([1., 2, 3]); i = mx.array([1, 2]); f = mx.array([1., 2], mx.float16)\n"
         "w = W(mx.array([1., 2, 3])); wi = W(mx.array([1, 2, 3]))\n")

ARRAY_LIKE = [
    "mx.array(w)", "mx.array(wi, mx.float32)", "mx.array(Bad())", "mx.array([w, w])",
    "x + w", "w + x", "x * wi", "x == w", "x < w", "w < x", "x ** w", "x & w",
    "mx.exp(w)", "mx.abs(wi)", "mx.square(w)", "mx.real(w)", "mx.logical_and(w, w)",
    "mx.broadcast_to(w, (2, 3))", "mx.view(w, mx.int32)", "mx.isnan(w)", "mx.floor(w)",
    "mx.exp(O())", "mx.exp('a')", "x.at[mx.array([0, 1, 2])].add(w)", "x.at[0].add(Bad())",
    "x.at[0].add(O())",
    "i + np.array([1.5, 2.5])", "i * np.float32(1.5)", "f + np.array([1.5, 2.5])",
    "f + np.float64(2.5)", "i + np.array([1, 2], np.int64)", "mx.add(i, np.array([1.5, 2.5]))",
    "mx.add(np.array([1.5, 2.5]), i)", "mx.add(np.array([1.5, 2.5]), np.array([1, 2]))",
    "mx.maximum(i, np.array([1.5, 0.5]))", "mx.where(True, i, np.array([1.5, 0.5]))",
    "i == np.array([1.0, 2.5])", "i < np.float64(1.5)", "i + np.array(2**40)",
    "mx.add(i, np.float64(1.5))", "mx.add(np.float64(1.5), 2)", "mx.add(True, 2)",
    "i + b'ab'", "i + memoryview(b'ab')", "i + np.str_('a')", "i + np.array('a')",
]
_BAD_OPERANDS = ["[1, 2, 3]", "(1, 2, 3)", "None", "'a'", "O()"]
ARRAY_LIKE += [f"x {op} {o}" for o in _BAD_OPERANDS
               for op in ("+", "-", "*", "/", "//", "%", "**", "@", "&", "|", "^", "<<", ">>",
                          "==", "!=", "<", "<=", ">", ">=")]
ARRAY_LIKE += [f"{o} + x" for o in _BAD_OPERANDS] + [f"{o} == x" for o in _BAD_OPERANDS]
ARRAY_LIKE += [f"x.__i{name}__({o})" for o in ("[1]", "None", "'a'")
               for name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and",
                            "or", "xor", "lshift", "rshift", "matmul")]
ARRAY_LIKE += ["x & True", "x << 2", "i & 2", "i << mx.array([1, 2])", "x @ np.ones(3)",
               "mx.array([[1., 2]]) @ mx.array([[1.], [2]])"]


@pytest.mark.parametrize("expr", ARRAY_LIKE)
def test_array_likes_numpy_values_and_refused_operands(expr):
    assert outcome(expr, mx, _LIKE) == outcome(expr, mlx, _LIKE), expr


# mx.pad's modes as MLX has them (NumPy's "reflect" and "symmetric", any width), its errors
_PAD = "a = mx.arange(1, 4); b = mx.arange(6).reshape(2, 3)"
_PAD_ARGS = ["a, 1", "a, 2", "a, 3", "a, 4", "a, 7", "a, (1, 2)", "a, [(0, 4)]", "a, ((5, 0),)",
             "a, (2,)", "b, 1", "b, ((1, 2), (3, 4))", "b, [(2, 2), (0, 5)]", "b, ((1, 0),)",
             "mx.array([7]), 2", "mx.array([7]), ((0, 3),)", "mx.zeros((0,)), 1",
             "mx.zeros((2, 0)), ((1, 1), (0, 0))", "mx.zeros((2, 0)), ((1, 1), (1, 0))",
             "mx.zeros((2, 0)), ((0, 2), (0, 0))", "mx.zeros((0, 3)), ((0, 0), (1, 1))",
             "mx.array(5), 1", "mx.array(5), ()", "a, -1", "a, (-1, 2)", "a, (1, -2)",
             "b, ((1, 2), (0, -1))", "a, 0", "b, [1, 2]",
             "mx.array([1.5, 2.5], mx.float16), 3", "mx.array([True, False]), 3",
             "mx.arange(4), 9", "b, ((1, 1), (1, 1), (1, 1))"]
PAD = [f"mx.pad({args}, mode={mode!r})" for mode in ("constant", "edge", "reflect", "symmetric")
       for args in _PAD_ARGS]
PAD += ["mx.pad(a, 1, mode='wrap')", "mx.pad(a, 1, mode='Edge')", "mx.pad(a, -1, mode='mean')",
        "mx.pad(b, ((1, 1), (1, 1), (1, 1)), 'linear_ramp')", "mx.pad(a, 1, 'constant', 2.5)",
        "mx.pad(a, 1, 'reflect', 2.5)", "mx.pad(a, 1, 'constant', mx.array(7))",
        "mx.pad(a, 1, 'constant', mx.array([7, 8]))", "mx.pad(a, 1, 'constant', 2**40)",
        "mx.pad(a.astype(mx.uint8), 1, constant_values=300)",
        "mx.pad(mx.array([1j]), 1, constant_values=2+1j)",
        "mx.pad(mx.array([1.5], mx.bfloat16), (1, 0), constant_values=2.5)"]


@pytest.mark.parametrize("expr", PAD)
def test_pad_modes_as_mlx(expr):
    _same_full(expr, _PAD)


@pytest.mark.parametrize("fn", [
    "lambda y: mx.pad(y, ((1, 2), (3, 1), (0, 5)), 'reflect').sum() + "
    "(mx.pad(y, 4, 'reflect') ** 2).sum()",
    "lambda y: (mx.pad(y, ((1, 2), (3, 4), (5, 5)), 'symmetric') ** 2).sum()",
    "lambda y: (mx.pad(y, ((1, 2), (3, 4), (5, 5)), 'edge') ** 2).sum()",
    "lambda y: (mx.pad(y, 2, 'constant', 3.0) ** 2).sum()",
])
def test_pad_gradients_match_mlx(fn):
    scope = {"mx": mx}
    ours = repr(mx.grad(eval(fn, scope))(eval(_GRAD_ARG, scope)))
    scope = {"mx": mlx}
    assert ours == repr(mlx.grad(eval(fn, scope))(eval(_GRAD_ARG, scope))), fn


# reductions: MLX's axis checks, its refusals of empty arrays and axes (max, min, argmax,
# argmin, logsumexp), and what a reduction over no axis gives
_EMPTY = ("z = mx.zeros((0,)); z2 = mx.zeros((2, 0)); z3 = mx.zeros((0, 3));"
          "zi = mx.zeros((0,), mx.int32); zb = mx.zeros((2, 0), mx.bool_);"
          "i8 = mx.array(3, mx.int8); v8 = mx.array([3, 4], mx.int8); b = mx.array([True, False])")
_REDUCE_ARGS = ["z", "z2", "z3", "zi", "zb", "z2, 0", "z2, 1", "z2, -1", "z3, 0", "z3, 1",
                "z2, (0, 1)", "z2, 1, True", "z3, 0, True", "z3, None, True", "mx.array(1.0)",
                "mx.array(1.0), 0", "mx.zeros((2, 3)), 2", "mx.zeros((2, 3)), (0, 0)",
                "mx.zeros((2, 3)), -3", "mx.zeros((2, 3)), (1, -1)", "mx.zeros((2, 3)), (5, 0, 0)",
                "mx.zeros((2, 0, 0)), (2, 1)", "mx.zeros((2, 0, 3)), (0, 2)", "i8", "v8, ()",
                "b, ()", "mx.array(True)", "mx.ones((1, 2), mx.int8), 0",
                "mx.array(2, mx.uint8)", "mx.array([1., 2, 4]), ()"]
REDUCTIONS_EDGES = [f"mx.{fn}({args})" for fn in ("logsumexp", "max", "min", "prod", "sum",
                                                   "mean", "var", "std", "all", "any")
                    for args in _REDUCE_ARGS]
REDUCTIONS_EDGES += [f"mx.{fn}({args})" for fn in ("argmax", "argmin")
                     for args in ("z", "z2", "zb", "z2, 0", "z3, 1", "z2, 1, True",
                                  "mx.array(1.0), 0", "mx.zeros((2, 3)), 2",
                                  "mx.zeros((2, 3)), -3", "mx.zeros((2, 3)), (0, 1)",
                                  "mx.array(2.0)", "mx.ones((1, 3)), 0", "i8")]
REDUCTIONS_EDGES += [
    "mx.argmin(mx.array(2.0), keepdims=True)", "mx.argmax(mx.zeros((0,)), keepdims=True)",
    "mx.var(mx.array(1.0), ddof=1)", "mx.var(mx.array([1., 2]), ddof=2)",
    "mx.var(mx.array([1., 2]), ddof=3)", "mx.var(mx.array(2.0), (), ddof=-1)",
    "mx.std(mx.array([1., 2]), ddof=5)", "mx.mean(zi)", "mx.logsumexp(mx.array(2))",
    "mx.logsumexp(mx.array([1.0, 2]), [0])", "mx.logsumexp(z2, 5)", "mx.logsumexp(z2, (0, 0))",
    "mx.array([1.0, 2]).max(5)", "mx.array([1.0, 2]).logsumexp(5)", "mx.minmax(z)",
    "mx.logsumexp(mx.array([[1, 2], [3, 4]]), axis=0)",
]
for _fn in ("softmax", "cumsum", "cumprod", "cummax", "cummin"):
    REDUCTIONS_EDGES += [f"mx.{_fn}({args})" for args in (
        "z", "z2", "zi", "zb", "z2, 0", "z2, 1", "z3, 1", "mx.array(1.0)", "mx.array(1.0), 0",
        "mx.zeros((2, 3)), 2", "mx.zeros((2, 3)), -3", "i8", "b", "mx.array([[1, 2], [3, 4]]), 0",
        "mx.array([[1, 2], [3, 4]]), 1", "mx.array([[1, 2], [3, 4]])")]
REDUCTIONS_EDGES += [
    "mx.softmax(v8, ())", "mx.softmax(mx.array(1.0), ())", "mx.softmax(z2, (0, 1))",
    "mx.softmax(mx.array([[1, 2], [3, 4]]), axis=(0, 1))", "mx.softmax(mx.zeros((2, 3)), (1, -1))",
    "mx.softmax(mx.array([[1, 2]]), axis=(0, 1))", "mx.softmax(mx.array([[True, False]]), (0, 1))",
    "mx.softmax(mx.array([[1., 2], [3, 4]]), axis=0)",
    "mx.softmax(mx.array([[1, 2], [3, 4]]), axis=(-2, -1))",
    "mx.cumsum(b, reverse=True, inclusive=False)", "mx.cumsum(mx.array([200, 100], mx.uint8))",
]


@pytest.mark.parametrize("expr", REDUCTIONS_EDGES)
def test_reductions_refuse_and_keep_dtypes_as_mlx(expr):
    assert outcome(expr, mx, _EMPTY) == outcome(expr, mlx, _EMPTY), expr


# complex maximum / minimum and comparisons: MLX orders by real part, then imaginary part;
# the first argument's NaN (in either part) wins
_COMPLEX = ("nan = float('nan'); inf = float('inf');"
            "c = mx.array([1+2j, 1+3j, 2+0j, -1+5j, complex(nan, 0), complex(0, nan), 3+1j, 1j,"
            " 0j, complex(inf, 1), 2+1j, complex(nan, 1), complex(1, nan), complex(nan, nan),"
            " complex(1, 2), complex(nan, 5)]);"
            "d = mx.array([1+1j, 1+3j, 1+9j, -1+4j, 1+1j, 1+1j, complex(nan, nan), -1j, -0j,"
            " complex(inf, 2), 2+1j, complex(1, nan), complex(nan, 1), complex(1, 1),"
            " complex(1, nan), complex(nan, 4)])")


def _parts(v):
    """A complex array's parts as text (NaN compares equal as text), with its dtype."""
    if not hasattr(v, "tolist"):
        return repr(v)
    return repr(v.dtype), [str(z) for z in v.tolist()]


COMPLEX_ORDER = ["mx.maximum(c, d)", "mx.minimum(c, d)", "mx.maximum(d, c)", "mx.minimum(d, c)",
                 "mx.maximum(c, 2)", "mx.minimum(c, 2.5)", "mx.maximum(2, c)",
                 "mx.maximum(c, mx.array([1.5]))", "mx.maximum(c, mx.array(1, mx.int32))",
                 "mx.minimum(mx.array([1, 2]), mx.array([1j, 3+0j]))", "mx.clip(c, 1+0j, 2+0j)",
                 "mx.clip(c, 1, 2)", "mx.maximum(c, 1j)", "c < d", "c <= d", "c > d", "c >= d",
                 "c == d", "c != d", "mx.greater(c, d)", "mx.less_equal(d, c)", "c < 1",
                 "2j >= c"]


@pytest.mark.parametrize("expr", COMPLEX_ORDER)
def test_complex_order_as_mlx(expr):
    assert outcome(expr, mx, _COMPLEX, _parts) == outcome(expr, mlx, _COMPLEX, _parts), expr


def test_complex_maximum_gradient_matches_mlx():
    fn = "lambda x: mx.maximum(x, mx.array([1+1j, 3+0j, 2-1j])).real.sum()"
    arg = "mx.array([2+0j, 1+5j, 2-1j])"
    assert grad_repr(fn, arg, mx) == grad_repr(fn, arg, mlx)


ADVANCED = [
    # an int among arrays is one of the advanced indices on a read (the arrays' axes first
    # where a slice parts them); MLX's writes select with the int first
    "x[0, :, mx.array([0, 1])]", "x[:, 0, mx.array([0, 1])]", "x[0, mx.array([1, 2]), 1]",
    "x[-1, :, mx.array([[0], [3]])]", "x[0, 1:, mx.array([3, 2])]",
    "x[None, 0, :, mx.array([1])]", "x[0, ..., mx.array([1, 0])]",
    "x.at[0, :, mx.array([0, 1])].add(mx.arange(6).reshape(3, 2))",
    # any integer type indexes
    "x[mx.array([0, 1], mx.uint8)]", "x[mx.array([1], mx.int8), 2]",
    "x[:, mx.array([2, 0], mx.int16)]", "x[:, :, mx.array([3], mx.uint32)]",
    # negative indices along an axis count from its end; indices broadcast
    "mx.take_along_axis(x, mx.array([[[-1]]]), axis=2)",
    "mx.take_along_axis(mx.arange(5), mx.array([-5, 4, -1]), axis=None)",
    "mx.put_along_axis(x, mx.array([[[-1]]]), mx.array(7), axis=2)",
    "mx.put_along_axis(x[0], mx.array([[1], [0], [-1]]), mx.array([[9], [8], [7]]), axis=1)",
    "mx.put_along_axis(x[0], mx.array([[1]]), mx.array([[1], [2], [3]]), axis=1)",
]


@pytest.mark.parametrize("expr", ADVANCED)
def test_advanced_indices_as_mlx(expr):
    _same_full(expr, "x = mx.arange(24).reshape(2, 3, 4)")
