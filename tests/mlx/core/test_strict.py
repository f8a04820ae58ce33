"""`_strict` and the conversion of operands against MLX 0.32.4: what MLX's functions
refuse where they want arrays (nanobind's TypeError, naming the signature and the types
given) or convert scalars (`ValueError` for a list or tuple), by exception type and
message."""

import numpy as np  # noqa: F401  (the expressions use it)
import pytest

import ember.mlx.core as mx
from ember.mlx.core._strict import _SIGNATURES
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")

_SETUP = "A = mx.array([[1.0, 2.0], [3.0, 4.0]]); L = [[1.0, 2.0], [3.0, 4.0]]"

# each function MLX binds with `array` parameters, given a list where the array goes
_GIVEN = {(0,): "L", (0, 1): "A, L", (0, 1, 2): "A, L, A"}
ARRAY_ONLY = [f"mx.{'linalg.' if name == 'norm' else ''}{name}({_GIVEN[where]})"
              for name, (where, _) in _SIGNATURES.items() if where in _GIVEN]
ARRAY_ONLY += [
    "mx.sum(3)", "mx.sum(3.5)", "mx.sum(True)", "mx.sum(None)", "mx.sum(np.array([1, 2]))",
    "mx.reshape(L, (4,))", "mx.matmul(L, A)",
    "mx.concatenate([[1], [2]])", "mx.concatenate([A, 2])", "mx.concatenate((A, A))",
    "mx.stack([A, L])", "mx.stack((A,))", "mx.take(L, mx.array([0]))", "mx.take(A, [0])",
    "mx.take(A, 1)", "mx.sum(A)", "mx.topk(L, 1)", "mx.cummax(L)",
]
# `scalar | array` parameters: a list or tuple is refused by the conversion
CONVERTED = [f"mx.{fn}({args})" for fn in ("exp", "abs", "sigmoid", "round", "isnan", "real")
             for args in ("[1.0, 2.0]", "(1.0, 2.0)")]
CONVERTED += [f"mx.{fn}({args})" for fn in ("add", "maximum", "less", "arctan2", "remainder",
                                             "logaddexp", "bitwise_and", "left_shift")
              for args in ("[1.0], [2.0]", "A, [3.0, 4.0]", "(1.0, 2.0), A", "1.0, 2.0")]
CONVERTED += ["mx.where([True, False], [1, 2], [3, 4])", "mx.where(mx.array([True]), [1], 3)",
              "mx.broadcast_to([1, 2], (2, 2))", "mx.full((2,), [1.0, 2.0])",
              "mx.pad(A, 1, constant_values=[1])", "mx.divmod(A, [1.0])",
              "mx.array_equal(A, [1.0])", "A + [1.0]", "mx.exp('a')"]


@pytest.mark.parametrize("expr", ARRAY_ONLY + CONVERTED)
def test_refused_as_mlx_refuses(expr):
    assert outcome(expr, mx, _SETUP) == outcome(expr, mlx, _SETUP), expr


# calls nanobind cannot bind (a missing or extra argument, an unknown keyword, an array
# given by a keyword where the binding takes it by position) and ones it can bind by MLX's
# own parameter names, which ember's functions may not share
BINDING = [
    "mx.sum()", "mx.sum(a=A)", "mx.sum(A, foo=1)", "mx.sort(A, 1, 2, 3)", "mx.take(A)",
    "mx.take_along_axis(A)", "mx.matmul(A)", "mx.put_along_axis(A, A)", "mx.tril(x=A)",
    "mx.tril(A, k=1)", "mx.take(A, indices=1, axis=0)", "mx.pad(A, pad_width=1)",
    "mx.concatenate(arrays=[A, A])", "mx.stack(arrays=[A, A])", "mx.stack([A, A], axis=1)",
    "mx.softmax(A, axis=0, precise=True)", "mx.sum(A, 0, True, stream=mx.cpu)",
    "mx.unique()", "mx.unique(A)", "mx.unique(L, 2)", "mx.unique(A, 2.0)", "mx.unique(A, '2')",
    "mx.unique(A, size=2)", "mx.unique(a=A, size=2)", "mx.unique(A, 2, foo=1)",
    "mx.unique(A, True)", "mx.unique(A, np.int64(3))", "mx.unique(A, 3, stream=mx.cpu)",
    # refused operands given by keyword: the message names the call as it was written
    "mx.sum(L, axis=0)", "mx.take(L, indices=1)", "mx.unique(L, size=2)",
    "mx.tril(x=L, k=1)", "mx.matmul(A, b=L)",
]


@pytest.mark.parametrize("expr", BINDING)
def test_binding_as_mlx_binds(expr):
    assert outcome(expr, mx, _SETUP) == outcome(expr, mlx, _SETUP), expr


# a dtype that is not an `mx.Dtype` is refused by the binding; None, where the binding
# allows it, means the function's default (float32 for zeros / ones / eye / identity / tri)
DTYPES = [
    "mx.astype(A, 'float32')", "mx.astype(A, None)", "mx.full_like(A, 1, 'float32')",
    "mx.full_like(A, 1, None)", "mx.trace(A, dtype='float32')", "mx.trace(A, dtype=mx.int32)",
    "mx.zeros((2,), 'float32')", "mx.zeros((2,), None)", "mx.zeros(2, dtype=mx.int8)",
    "mx.ones([2], np.float32)", "mx.ones(2, None)", "mx.full((2,), 3, 'int8')",
    "mx.eye(2, dtype='f')", "mx.eye(2, 3, 1, None)", "mx.eye(2, 3, 1, mx.int32)",
    "mx.identity(2, None)", "mx.identity(2, 'x')", "mx.tri(2, dtype=None)", "mx.tri(2, 2, 0, 3)",
    "mx.zeros_like(A, 'float32')", "mx.zeros_like(A, mx.float16)", "mx.ones_like(A, None)",
    "mx.ones_like(A, dtype=mx.bool_)", "mx.zeros()", "mx.ones(shape=3)", "mx.full(3, vals=2)",
    "mx.eye(n=2)", "mx.cumsum(A, dtype='float32')",
]


@pytest.mark.parametrize("expr", DTYPES)
def test_dtype_as_mlx_binds(expr):
    assert outcome(expr, mx, _SETUP) == outcome(expr, mlx, _SETUP), expr
