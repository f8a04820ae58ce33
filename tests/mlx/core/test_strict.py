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
