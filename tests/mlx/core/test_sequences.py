"""The sequence functions of `_sequences` against MLX 0.32.4: reprs (dtype and six significant
digits) or exception type and message must be equal."""

import pytest

import ember.mlx.core as mx
from mlx_oracle import SMALL, grad_repr, outcome

mlx = pytest.importorskip("mlx.core")

def _run(expr: str, module):
    return outcome(expr, module, SMALL)


CASES = [
    "mx.diff(a)",
    "mx.diff(a, 2, 0)",
    "mx.diff(a, 0)",
    "mx.diff(a, 5)",
    "mx.diff(a, 1, 0)",
    "mx.diff(x, 2)",
    "mx.diff(mx.array(1))",
    "mx.diff(mx.array([True, False, True]))",
    "mx.diff(a, -1)",
    "mx.diff(a, axis=2)",
    "mx.diff(mx.array([1, 5], mx.uint8))",
    "mx.searchsorted(mx.array([1, 3, 5]), mx.array([0, 3, 6]))",
    "mx.searchsorted(mx.array([1, 3, 5]), mx.array([0, 3, 6]), side='right')",
    "mx.searchsorted(mx.array([1.0, 3, 5]), mx.array([[3], [4]]))",
    "mx.searchsorted(mx.array([1, 3, 5]), mx.array([2.5]))",
    "mx.searchsorted(mx.array([1, 3, 5]), mx.array([3]), side='x')",
    "mx.unique(mx.array([3, 1, 3, 2]), 3)",
    "mx.unique(mx.array([3, 1, 3, 2]), 5)",
    "mx.unique(mx.array([3, 1, 3, 2]), 2)",
    "mx.unique(mx.array([3, 1, 3, 2]), 5, True, True, True)",
    "mx.unique(mx.array([3, 1, 3, 2]), 2, return_index=True, return_counts=True)",
    "mx.unique(mx.array([2, 1, 2, 3, 1]), 4, True, True, True, fill_value=0)",
    "mx.unique(mx.array([3.0, 1, 3, 2]), 5, fill_value=-1)",
    "mx.unique(mx.array([[3, 1], [3, 2]]), 2, return_inverse=True)",
    "mx.unique(mx.array([], mx.int32), 2)",
    "mx.unique(mx.array([], mx.int32), 2, fill_value=4)",
    "mx.unique(mx.array([1.0, 2]), 0)",
    "mx.unique(mx.array([True, False, True]), 2, return_counts=True)",
    "mx.median(a)",
    "mx.median(a, 1)",
    "mx.median(a, 0, keepdims=True)",
    "mx.median(mx.array([1, 2, 3, 4.0]))",
    "mx.median(a.astype(mx.float16), 1)",
    "mx.median(x, (0, 1), keepdims=True)",
    "mx.median(mx.array([1, float('nan'), 3]))",
    "mx.logcumsumexp(mx.array([1.0, 2, 3]))",
    "mx.logcumsumexp(a, 1, reverse=True)",
    "mx.logcumsumexp(a, 0, inclusive=False)",
    "mx.logcumsumexp(x, 1, reverse=True, inclusive=False)",
    "x.logcumsumexp(0)",
    # complex: the imaginary part accumulates unwrapped, a NaN poisons what follows
    "mx.logcumsumexp(mx.array([1 + 1j, 2 - 3j, 0.5 + 3j, -1 - 2j]))",
    "mx.logcumsumexp(mx.array([1 + 1j, 2 - 3j, 0.5 + 3j]), reverse=True)",
    "mx.logcumsumexp(mx.array([1 + 1j, complex('nan'), 2 + 0j]))",
    "mx.cumulative_sum(a, 1, dtype=mx.float32)",
    "mx.cumulative_sum(a.astype(mx.int8))",
    "mx.cumulative_sum(x, 0, reverse=True)",
    "mx.cumulative_prod(a, 0)",
    "mx.cumulative_prod(a, 1, inclusive=False, dtype=mx.int64)",
    "mx.count_nonzero(a)",
    "mx.count_nonzero(mx.array([[0, 1], [2, 0.0]]), axis=0, keepdims=True)",
    "mx.count_nonzero(mx.array([True, False]))",
    "mx.minmax(a)",
    "mx.minmax(a, 1, True)",
    "mx.minmax(x, (0, 1))",
    "mx.trace(a)",
    "mx.trace(a, 1)",
    "mx.trace(a, -1)",
    "mx.trace(a, dtype=mx.float32)",
    "mx.trace(a.astype(mx.int8))",
    "mx.trace(mx.ones((2, 3, 3)), 0, 1, 2)",
    "mx.trace(x.astype(mx.uint8))",
]


@pytest.mark.parametrize("expr", CASES)
def test_same_as_mlx(expr):
    assert _run(expr, mx) == _run(expr, mlx), expr


@pytest.mark.parametrize(("fn", "arg"), [
    ("lambda x: mx.logcumsumexp(x, 0).sum()", "mx.array([0.5, -1.0, 2.0])"),
    ("lambda x: mx.median(x, 1).sum()", "mx.array([[0.5, -1.0, 2.0, 3.0], [1.0, 4.0, 0.0, 2.5]])"),
    ("lambda x: (mx.diff(x, 2) ** 2).sum()", "mx.array([0.5, -1.0, 2.0, 3.0])"),
])
def test_grads_match_mlx(fn, arg):
    assert grad_repr(fn, arg, mx) == grad_repr(fn, arg, mlx)



# median and logcumsumexp: MLX's axis checks and its refusal of an empty median
_EMPTY = ("z = mx.zeros((0,)); z2 = mx.zeros((2, 0)); z3 = mx.zeros((0, 3));"
          "i8 = mx.array(3, mx.int8); v8 = mx.array([3, 4], mx.int8)")
_AXES = ["z", "z2", "z3", "z2, 0", "z2, 1", "z2, -1", "z3, 0", "z3, 1", "mx.array(1.0)",
         "mx.array(1.0), 0", "mx.zeros((2, 3)), 2", "mx.zeros((2, 3)), -3", "i8",
         "mx.array(True)", "mx.array(2, mx.uint8)"]
EMPTY_AND_AXES = [f"mx.{fn}({args})" for fn in ("median", "logcumsumexp") for args in _AXES]
EMPTY_AND_AXES += [f"mx.median({args})" for args in (
    "z2, (0, 1)", "z3, None, True", "mx.zeros((2, 3)), (0, 0)", "mx.zeros((2, 3)), (1, -1)",
    "v8, ()", "mx.zeros((0, 2)), 1, True", "mx.zeros((2, 0)), (1, 1)")]
EMPTY_AND_AXES += ["mx.logcumsumexp(z2, 1, reverse=True)", "mx.logcumsumexp(mx.array([1, 2]), 0)"]


@pytest.mark.parametrize("expr", EMPTY_AND_AXES)
def test_empty_arrays_and_axes_as_mlx(expr):
    assert outcome(expr, mx, _EMPTY) == outcome(expr, mlx, _EMPTY), expr


def test_logcumsumexp_carries_float32_in_float32():
    # MLX's scan rounds its running value to float32 at every step (PyTorch's carries it
    # in float64): over a long 1-D scan the two drift apart, so this is bit-for-bit
    # (a sequential scalar loop on both sides, exp and log1p correctly rounded enough).
    import numpy as np

    a = np.random.default_rng(0).standard_normal(2000).astype(np.float32) * 3
    ours = np.array(mx.logcumsumexp(mx.array(a)))
    np.testing.assert_array_equal(ours, np.array(mlx.logcumsumexp(mlx.array(a))))
