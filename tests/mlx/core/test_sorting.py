"""`_sorting` against MLX 0.32.4: sort, argsort, partition, argpartition and topk, their
values (ascending, stable, NaN last; partition's and topk's values compared in sorted
order, as MLX leaves their order to its kernel) and their errors."""

import pytest

import ember.mlx.core as mx
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")

_SETUP = ("a = mx.array([3, 1, 2, 0]); a2 = mx.array([[1, 2], [3, 4]]);"
          "f = mx.array([2.5, float('nan'), -0.0, 0.0, -1.0, float('nan'), 1.0])")

CASES = [
    "mx.sort(f)", "mx.argsort(f)", "mx.sort(a2, axis=0)", "mx.argsort(a2, axis=None)",
    "mx.sort(mx.sort(f)[::-1])", "mx.sort(mx.partition(a, 2))", "mx.partition(a, 2)[2]",
    "mx.sort(mx.topk(f, 3))", "mx.sort(mx.topk(a2, 1, axis=0), axis=0)",
    "mx.sort(mx.topk(a2, 2, axis=None))", "mx.topk(a, 0)",
    # errors: axes, k and kth out of range
    "mx.topk(a, 5)", "mx.topk(a, -1)", "mx.topk(a2, 3, axis=0)", "mx.topk(a, 2, axis=3)",
    "mx.topk(a2, 5, axis=None)", "mx.topk(mx.array(3), 1)", "mx.topk(a2, 2, axis=-3)",
    "mx.partition(a, 5)", "mx.partition(a, -5)", "mx.argpartition(a, 4)",
    "mx.partition(a2, 9, axis=None)", "mx.argpartition(a2, 9, axis=None)",
    "mx.sort(a, axis=2)", "mx.argsort(a, axis=-3)", "mx.partition(a, 1, axis=2)",
    "mx.sort(mx.array(3))", "mx.partition(mx.array(3), 0)",
]


@pytest.mark.parametrize("expr", CASES)
def test_sorting_as_mlx(expr):
    assert outcome(expr, mx, _SETUP) == outcome(expr, mlx, _SETUP), expr
