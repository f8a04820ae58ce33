"""The numbers MLX 0.32.4's bindings take where they ask for an `int` or a scalar, against
MLX in-process: `arange`'s two overloads take Python bool / int / float exactly (no NumPy
scalar, array, string or int subclass; `stop` may be None, `step` too), the window
functions' `M: int` converts what has `__index__` (and two of them print the stream's
type spelt out), an array's `__index__` is a 0-d integer array's only, and
`fast.rope` makes an array of a NumPy offset (keeping its dtype for the checks);
`linspace` binds its bounds as doubles, `num` as a C int, takes `endpoint` and a
positional stream, and works its values as MLX does (a float32 lerp, float64 for a
float64 result: correctly rounded operations, so the lists compare exactly); a random
shape may be an integer vector of MLX's, each size within int32.
Everything compares exactly: the repr of the value or the exception's type and message
(the windows and rope's rotations of ones print 6 digits of one float32 cos / sin each,
the same on both sides: no sum whose order could differ).
"""

import pytest

import ember.mlx.core as mx
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")

SETUP = ("import enum, operator;"
         "E = enum.IntEnum('E', {'A': 3});"
         "x = mx.ones((1, 2, 4))")

CASES = [
    # arange: overload 1, then overload 2
    "mx.arange(np.int64(3))", "mx.arange(0, 3, np.int64(1))", "mx.arange(np.float64(2.0))",
    "mx.arange(E.A)", "mx.arange(np.bool_(True))", "mx.arange('3')", "mx.arange(None)",
    "mx.arange(mx.array(3))", "mx.arange(np.array(3))", "mx.arange(2**63)",
    "mx.arange(0, 4, step=np.int64(2), dtype=mx.float32)", "mx.arange(stop=np.int64(2))",
    "mx.arange()", "mx.arange(1, 2, 3, 4)", "mx.arange(1, 2, 3, mx.int32, 5)",
    "mx.arange(3, dtype=3)", "mx.arange(3, foo=1)", "mx.arange(3, stream=3)",
    "mx.arange(3, mx.int32)", "mx.arange(3, mx.cpu)", "mx.arange(start=1)",
    "mx.arange(3, None)", "mx.arange(0, None, 2)", "mx.arange(1, 5, None)",
    "mx.arange(1, 5, mx.float32)", "mx.arange(1, 5, 2, mx.float32)", "mx.arange(4, step=2)",
    "mx.arange(stop=4, step=2)", "mx.arange(1, stop=4)", "mx.arange(True)",
    "mx.arange(3, stream=mx.cpu)",
    # the windows
    "mx.hanning(np.int64(5))", "mx.hanning(mx.array(5))", "mx.bartlett(np.int32(4))",
    "mx.hamming(True)", "mx.blackman(5.0)", "mx.hanning(m=4)", "mx.hanning(4, 5)",
    "mx.bartlett(None)", "mx.hamming(mx.array([3]))", "mx.hanning(4, stream=3)",
    # linspace: bounds as doubles, num as a C int (no None), endpoint a bool, a
    # positional stream; values worked in float32 (float64 for float64) as a lerp
    "mx.linspace('0', 1, 3)", "mx.linspace(None, 1, 3)", "mx.linspace(0j, 1, 3)",
    "mx.linspace(0, 1, num=None)", "mx.linspace(0, 1, 3.0)", "mx.linspace(0, 1, mx.array(3))",
    "mx.linspace(0, 1, mx.array(3.0))", "mx.linspace(0, 1, 3, endpoint=1)",
    "mx.linspace(0, 1, 3, mx.float16)", "mx.linspace(0, 1, 3, True, mx.float16)",
    "mx.linspace(0, 1, 3, True, None, mx.cpu)", "mx.linspace(0, 1, 3, stream=3)",
    "mx.linspace(0)", "mx.linspace(0, mx.array([1.0, 2.0]), 3)",
    "mx.linspace(2, -1, 4, endpoint=False)", "mx.linspace(0, 1, 1, endpoint=False)",
    "mx.linspace(0, float('inf'), 1)", "mx.linspace(0, float('inf'), 3)",
    "mx.linspace(-0.5, 9.5, 4, dtype=mx.int32)",
    "mx.linspace(0.1, 0.7, 7, dtype=mx.float64, stream=mx.cpu).tolist()",
    "mx.linspace(-3.7, 8.1, 13, endpoint=False).tolist()",
    "mx.linspace(0.3, 2146.06, 18).tolist()",
    # random shapes: an MLX integer vector too; each size an int32 (OverflowError past it)
    "mx.random.normal(mx.array([2, 3]), key=mx.random.key(3)).shape",
    "mx.random.uniform(shape=mx.array([2], mx.uint8), key=mx.random.key(3)).shape",
    "mx.random.randint(0, 3, mx.array([2]), key=mx.random.key(3))",
    "mx.random.normal(mx.array([2.0]), key=mx.random.key(3))",
    "mx.random.normal(mx.array(2), key=mx.random.key(3))",
    "mx.random.normal(mx.array([True]), key=mx.random.key(3))",
    "mx.random.normal(mx.zeros((0,), mx.int32), key=mx.random.key(3)).shape",
    "mx.random.normal((2**31,), key=mx.random.key(3))",
    "mx.random.normal(np.array([2**31]), key=mx.random.key(3))",
    "mx.random.normal(mx.array([-1]), key=mx.random.key(3))",
    # __index__
    "operator.index(mx.array(3))", "operator.index(mx.array([3]))",
    "operator.index(mx.array(True))", "operator.index(mx.array(3.0))",
    "[1, 2, 3][mx.array([1])]", "mx.argmax(mx.ones((2, 3)), axis=mx.array([1]))",
    "mx.argmax(mx.ones((2, 3)), axis=mx.array(1))",
    # rope's offset
    "mx.fast.rope(x, 4, traditional=False, base=10.0, scale=1.0, offset=np.int64(1))",
    "mx.fast.rope(x, 4, traditional=False, base=10.0, scale=1.0, offset=np.float32(1))",
    "mx.fast.rope(x, 4, traditional=False, base=10.0, scale=1.0, offset=np.bool_(True))",
    "mx.fast.rope(x, 4, traditional=False, base=10.0, scale=1.0, offset=np.array([1, 2]))",
]


@pytest.mark.parametrize("expr", CASES)
def test_binding_takes_what_mlx_takes(expr):
    assert outcome(expr, mx, SETUP) == outcome(expr, mlx, SETUP), expr
