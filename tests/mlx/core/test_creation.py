"""The creation functions and dtype queries of `_creation` against MLX 0.32.4: reprs (dtype
and six significant digits) or exception type and message must be equal."""

import pytest

import ember.mlx.core as mx
from mlx_oracle import SMALL, outcome

mlx = pytest.importorskip("mlx.core")

def _run(expr: str, module):
    return outcome(expr, module, SMALL)


CASES = [
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
