"""The creation functions and dtype queries of `_creation` against MLX 0.32.4: reprs (dtype
and six significant digits) or exception type and message must be equal."""

import pytest

import ember.mlx.core as mx
from mlx_oracle import SMALL, outcome

mlx = pytest.importorskip("mlx.core")

def _run(expr: str, module):
    return outcome(expr, module, SMALL)


CASES = [
    # full reads its value as MLX reads a value beside a dtype: an array keeps its dtype, a
    # complex stays complex, a float beside an integer dtype stays float32, an int out of
    # range is refused; full_like casts to the dtype after
    "mx.full((2,), 1 + 2j, dtype=mx.float32)",
    "mx.full((2,), 2.5, dtype=mx.int32)",
    "mx.full((2,), 3, dtype=mx.complex64)",
    "mx.full((2,), 3.5, dtype=mx.complex64)",
    "mx.full((2,), 2, dtype=mx.bool_)",
    "mx.full((2,), True, dtype=mx.float16)",
    "mx.full((2,), 300, dtype=mx.uint8)",
    "mx.full((2,), -1, dtype=mx.uint32)",
    "mx.full((2,), mx.array(1), dtype=mx.int8)",
    "mx.full_like(a, 2.5)",
    "mx.full_like(a, 1 + 1j)",
    "mx.full_like(a, 300, dtype=mx.uint8)",
    "mx.hanning(5)",
    "mx.hanning(1)",
    "mx.hanning(0)",
    "mx.hanning(12)",
    "mx.hamming(1)",
    "mx.hamming(7)",
    "mx.blackman(4)",
    "mx.blackman(9)",
    "mx.bartlett(5)",
    "mx.bartlett(6)",
    "mx.bartlett(-1)",
    "mx.empty((2,))",
    "mx.empty(3, mx.int8)",
    "mx.empty_like(a)",
    "mx.empty_like(a, mx.float16)",
    "mx.asarray([1, 2])",
    "mx.asarray(a, mx.float32)",
    "mx.asarray(a) is a",
    "mx.asarray(np.arange(3.0))",
    "mx.result_type(a, mx.float16)",
    "mx.result_type(mx.int8, mx.uint8)",
    "mx.result_type()",
    "mx.result_type(mx.uint64, mx.int8)",
    "mx.can_cast(mx.int8, mx.int32)",
    "mx.can_cast(a, mx.int8)",
    "mx.can_cast(mx.float32, mx.float16)",
    "mx.isdtype(mx.int8, 'signed integer')",
    "mx.isdtype(mx.float32, ('integral', mx.float32))",
    "mx.isdtype(mx.float32, 'bad')",
    "mx.isdtype(mx.bool_, 'numeric')",
    "mx.isdtype(mx.uint16, 'integral')",
    "mx.isdtype(mx.complex64, ('real floating', 'complex floating'))",
    "mx.isdtype(mx.bool_, 'bool')",
    "mx.hanning(4, stream=mx.gpu)",
    "mx.hanning(4, stream=mx.cpu)",
    "mx.matrix_norm(x)",
    "mx.matrix_norm(x, 'nuc')",
]


@pytest.mark.parametrize("expr", CASES)
def test_same_as_mlx(expr):
    assert _run(expr, mx) == _run(expr, mlx), expr


# arange as MLX's CPU kernel fills it: the step taken in the dtype and added over and
# over (float steps gather rounding; an integer dtype truncates the step first), and
# the dtype of the bounds given (int64 past int32's range, bool refused)
ARANGE = [
    "mx.arange(0, 2, 0.1).tolist()",
    "mx.arange(0, 2, 0.1)[7].item()",
    "mx.arange(1, 0, -0.1).tolist()",
    "mx.arange(0, 100, 0.7)[-5:].tolist()",
    "mx.arange(1e8, 1e8 + 100, 7.0).tolist()",
    "mx.arange(2**24, 2**24 + 6, dtype=mx.float32).tolist()",
    "mx.arange(0, 1, 0.1, dtype=mx.float64).tolist()",
    "mx.arange(0, 3, 0.1, dtype=mx.float16).tolist()",
    "mx.arange(0, 3, 0.1, dtype=mx.bfloat16).tolist()",
    "mx.arange(0, 300, 7, dtype=mx.bfloat16).tolist()",
    "mx.arange(0.1, 1, 0.3, mx.complex64).tolist()",
    "mx.arange(0, 5, 1.5, dtype=mx.int32)",
    "mx.arange(0, 5, 0.5, dtype=mx.int32)",
    "mx.arange(-3, 5, 1.7, dtype=mx.int8)",
    "mx.arange(-1.5, 3.3, 0.7, dtype=mx.int32)",
    "mx.arange(-5, 5, 3.3, mx.uint32)",
    "mx.arange(-3, 0, 1, dtype=mx.uint8)",
    "mx.arange(300, 310, 3, dtype=mx.uint8)",
    "mx.arange(0, 1e10, 3e9, dtype=mx.int32)",
    "mx.arange(2**31 - 2, 2**31 + 1)",
    "mx.arange(0, 5, 2**31)",
    "mx.arange(2**63 - 2, 2**63 - 1)",
    "mx.arange(0, 5, True)",
    "mx.arange(True)",
    "mx.arange(5, dtype=mx.bool_)",
    "mx.arange(0, 10, 0)",
    "mx.arange(0, 10, 0.0)",
    "mx.arange(float('inf'))",
    "mx.arange(0, float('nan'))",
    "mx.arange(0, 2**32)",
    "mx.arange(0, 10, float('inf'))",
    "mx.arange(0, -10, float('inf'))",
    "mx.arange(3, step=2)",
    "mx.arange(stop=3)",
    "mx.arange(5, None, 2)",
    "mx.arange(5, 2, mx.int32)",
    "mx.arange(0, 5, 1, mx.float16)",
]


@pytest.mark.parametrize("expr", ARANGE)
def test_arange_as_mlx(expr):
    assert _run(expr, mx) == _run(expr, mlx), expr
