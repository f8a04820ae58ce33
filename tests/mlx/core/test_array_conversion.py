"""Arrays made from Python ints, nested lists and NumPy arrays, and read back by NumPy, as
MLX 0.32.4 makes and reads them: the range a Python int may have (with and without a
dtype, in a list or next to an array), lists mixing lists and tuples, NumPy arrays MLX
refuses (negative strides, non-native byte order), `np.array(x)`'s layout, 0-d arrays in
.safetensors, and `slice_update`'s shape check. Values or exception and message equal."""

import pytest

import ember.mlx.core as mx
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")

_INTS = [2**31, 2**32, 2**63 - 1, 2**63, -1, -(2**63), -(2**63) - 1, 2**64, 3 * 10**9]
_DTYPES = ["mx.uint8", "mx.uint16", "mx.int16", "mx.int32", "mx.uint32", "mx.uint64",
           "mx.int64", "mx.float16", "mx.bool_", "mx.complex64", "mx.int8"]


@pytest.mark.parametrize("v", _INTS)
@pytest.mark.parametrize("dtype", [None, *_DTYPES])
def test_python_int_scalar_and_list(v, dtype):
    # a scalar is read as a C int64 then cast (wrapping); a list given an integer dtype is
    # read into a C vector of int64 / uint64 / uint32 / int32, which refuses what it cannot hold
    for expr in (f"mx.array({v}{', ' + dtype if dtype else ''})",
                 f"mx.array([{v}]{', ' + dtype if dtype else ''})",
                 f"mx.array([True, {v}]{', ' + dtype if dtype else ''})",
                 f"mx.array([[1], [{v}]]{', ' + dtype if dtype else ''})"):
        assert outcome(expr, mx) == outcome(expr, mlx), expr


@pytest.mark.parametrize("v", _INTS)
@pytest.mark.parametrize("dtype", ["mx.uint64", "mx.int64", "mx.float32", "mx.bool_",
                                   "mx.int8"])
def test_python_int_next_to_an_array(v, dtype):
    # (past int64 refused; next to bool, an int32 that wraps). NOTE: not `maximum` next to
    # uint64: ember orders uint64 values past 2**63 (here -1 wrapped) as signed, MLX not
    exprs = [f"mx.array([1], {dtype}) + {v}", f"mx.array([3], {dtype}) * {v}",
             f"mx.array([1.5, {v}])"]
    if dtype != "mx.uint64":
        exprs.append(f"mx.maximum({v}, mx.array([1], {dtype}))")
    for expr in exprs:
        assert outcome(expr, mx) == outcome(expr, mlx), expr


@pytest.mark.parametrize("expr", [
    "mx.array([(1, 2), [3, 4]])", "mx.array(([1, 2], (3, 4)))", "mx.array([[1, 2], (3, 4)])",
    "mx.array([[[1]], [(2,)]])", "mx.array([(1,), (2,)])", "mx.array([[1], (2,), [3]])",
    "mx.array([[1.5], (2,)], dtype=mx.int8)", "mx.array([[1], (2, 3)])",
    "mx.array([[[1], [2]], [[3], (4,)]])", "mx.array([mx.array([1]), [2]])",
])
def test_lists_and_tuples_mixed(expr):
    # (after a list, MLX reads the siblings as lists: a tuple there is refused)
    assert outcome(expr, mx) == outcome(expr, mlx)


@pytest.mark.parametrize("expr", [
    "mx.array(np.arange(6)[::-1])", "mx.array(np.arange(6).reshape(2, 3)[:, ::-1])",
    "mx.array(np.arange(3)[2:1:-1])", "mx.array(np.arange(0)[::-1])",
    "mx.array(np.arange(6)[::-1], dtype=mx.float32)", "mx.add(np.arange(6)[::-1], 1)",
    "mx.array([1]) + np.arange(3)[::-1]", "mx.where(True, np.arange(3)[::-1], 0)",
    "mx.array(np.broadcast_to(np.arange(3), (2, 3)))",
    "mx.array(np.asfortranarray(np.arange(6).reshape(2, 3)))",
    "mx.array(np.array([1, 2], '>f4'))", "mx.array(np.array([1, 2], '>i4'), mx.int32)",
    "mx.array(np.array([1], '>i1'))", "mx.array(np.array(['a']))",
    "mx.array([1]) + np.array([1], '>i2')", "mx.array([1]) * np.array([1], '>f8')",
    "mx.add(mx.array([1]), np.array([1], '>i2'))", "mx.array([1]) == np.array([1], '>i2')",
    "mx.where(True, np.array([1], '>i2'), 1)", "mx.add(mx.array([1]), np.array(['a']))",
    "mx.array([1]) == np.array(['a'])", "mx.sum(np.array([1, 2], '>i4'))",
])
def test_numpy_arrays_mlx_refuses(expr):
    assert outcome(expr, mx) == outcome(expr, mlx)


@pytest.mark.parametrize("index", ["[:, ::2]", ".T", "[:, 1:]", "[::-1]", ""])
def test_numpy_copy_layout(index):
    # np.array(x) copies in x's own element order (NumPy's order="K"), which for a view
    # with gaps is row-major; (np.asarray shows the view's strides, which for a reversed
    # slice are MLX's own: negative there, positive in ember, whose slices are copies)
    show = lambda a: (a.strides, a.tolist())  # noqa: E731
    exprs = [f"np.array(mx.arange(6).reshape(2, 3){index})",
             f"np.array(mx.arange(6).reshape(2, 3){index}, dtype=np.float32)"]
    if index != "[::-1]":
        exprs.append(f"np.asarray(mx.arange(6).reshape(2, 3){index})")
    for expr in exprs:
        assert outcome(expr, mx, show=show) == outcome(expr, mlx, show=show), expr


def test_zero_dim_arrays_keep_their_shape_in_safetensors(tmp_path):
    path = str(tmp_path / "w.safetensors")
    mx.save_safetensors(path, {"c": mx.array(1.5), "i": mx.array(3, mx.int8)})
    ours, theirs = mx.load(path), mlx.load(path)  # (each reads what ember wrote)
    assert {k: (v.shape, v.tolist()) for k, v in ours.items()} == \
        {k: (v.shape, v.tolist()) for k, v in theirs.items()} == {"c": ((), 1.5), "i": ((), 3)}
    assert open(path, "rb").read().count(b'"shape":[]') == 2


@pytest.mark.parametrize("expr", [
    "mx.slice_update(mx.zeros((2, 4)), mx.ones((2, 5)), mx.array([0]), axes=(0,))",
    "mx.slice_update(mx.zeros((2, 4)), mx.ones((3, 4)), mx.array([0]), axes=(0,))",
    "mx.slice_update(mx.zeros((2, 4)), mx.ones((5,)), mx.array([0]), axes=(0,))",
    "mx.slice_update(mx.zeros((2, 4)), mx.ones((3, 3)), mx.array([1]), axes=(1,))",
    "mx.slice_update(mx.zeros((2, 4)), mx.ones((2, 6)), mx.array([1]), axes=(1,))",
    "mx.slice_update(mx.zeros((3, 4)), mx.ones((4, 2)), mx.array([0, 1]), axes=(0, 1))",
    "mx.slice_update(mx.zeros((2, 4)), mx.ones((1, 4)), mx.array([1]), axes=(0,))",
    "mx.slice_update(mx.zeros((2, 4)), mx.ones((4,)), mx.array([1]), axes=(0,))",
    "mx.slice_update(mx.zeros((3, 4)), mx.ones((2, 2)), mx.array([1, 1]), axes=(0, 1))",
    "mx.slice_update(mx.zeros((2, 4), mx.int32), mx.ones((1, 4)), mx.array([1]), axes=(0,))",
])
def test_slice_update_shapes(expr):
    # the window spans the other axes whole and, along `axes`, as much of the update as the
    # array holds; the update must broadcast to it (MLX's broadcast_shapes message)
    assert outcome(expr, mx) == outcome(expr, mlx)


def test_slice_update_with_more_dimensions_is_refused():
    # (MLX 0.32.4 crashes the process here, so there is nothing to compare with)
    with pytest.raises(ValueError, match="3 dimensions for an array with 2"):
        mx.slice_update(mx.zeros((2, 4)), mx.ones((1, 1, 4)), mx.array([1]), axes=(0,))


_ROUNDS_TWICE = "[1 + 2**-8 + 2**-40, 1 + 2**-11 + 2**-40, -3.3, 0.1, 1e39]"


@pytest.mark.parametrize("expr", [
    f"mx.array({_ROUNDS_TWICE}, mx.bfloat16)", f"mx.array({_ROUNDS_TWICE}, mx.float16)",
    f"mx.array(np.array({_ROUNDS_TWICE}), mx.bfloat16)",
    f"mx.array(np.array({_ROUNDS_TWICE}), mx.float16)",
    "mx.array(np.array([2**24 + 2**16 + 1, 2049, -257]), mx.bfloat16)",
    "mx.array(np.array([2**24 + 2**16 + 1, 2049, -257]), mx.float16)",
    "mx.array(1 + 2**-8 + 2**-40, mx.bfloat16)", "mx.array(2**24 + 2**16 + 1, mx.bfloat16)",
    "mx.array(np.array([-2.7, 300.5, 7e4], np.float32), mx.uint8)",
    "mx.arange(0, 3, 1 + 2**-8 + 2**-40, mx.bfloat16)",
])
def test_doubles_and_ints_into_16_bit_floats_round_through_float(expr):
    # MLX's C++ casts make a 16-bit float from a float: a double rounds to float first
    # (1 + 2**-8 + 2**-40 is bfloat16's 1, not 1 + 2**-7), whatever ml_dtypes' version
    # (0.7 rounds a double to bfloat16 once); an int64 likewise
    assert outcome(expr, mx) == outcome(expr, mlx), expr
