"""csrc/multiply_add.c (add / sub with alpha, addcmul, lerp: one C `fma` each; addcdiv, op by
op) against its NumPy twins in ops/_multiply_add.py (an exact emulation) and
ops/ternary._addc_kernel: bit for bit, at every size, with
NaN, infinities and signed zeros, in place (the output is an input), on one and two
threads. Operands the C kernels do not take reach NumPy through the chooser."""

from __future__ import annotations

import numpy as np
import pytest

from ember import native
from ember.ops import _multiply_add as M
from ember.ops.binary import add_alpha_fn, sub_alpha_fn
from ember.ops.ternary import addcdiv_fn, addcmul_fn, lerp_fn, lerp_tensor_fn
from native._differential import assert_bits, layouts, threads, with_specials

from helpers import rand_array

pytestmark = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")
SHAPES = [(0,), (1,), (7, 9), (3, 1000), (4, 65, 257)]


@pytest.fixture(autouse=True)
def _quiet():
    with np.errstate(all="ignore"):  # (as ember's ops never warn)
        yield


def _lib():
    return native.library("multiply_add")


def _numpy(fn, *args, **params):
    """`fn` with native kernels off: the NumPy emulation, which `_fma.fma` leaves for C's
    fma where they are on."""
    with native.use("numpy"):
        return fn(*args, **params)


def _three(shape, dtype):
    a = with_specials(rand_array(shape, np.float64, low=-3, high=3).astype(dtype))
    b = rand_array(shape, np.float64, seed=1, low=-3, high=3).astype(dtype)
    c = rand_array(shape, np.float64, seed=2, low=-1.5, high=1.5).astype(dtype)
    flat = b.reshape(-1)
    for i, v in enumerate([-0.0, np.inf, np.nan]):  # (meeting a's specials shifted by one)
        if 5 + i < flat.size:
            flat[5 + i] = v
    return a, b, c


CASES = {  # member, (operands, params) from three arrays
    "add alpha": (add_alpha_fn, lambda a, b, c: ((a, b), {"alpha": 0.1})),
    "sub alpha": (sub_alpha_fn, lambda a, b, c: ((a, b), {"alpha": -2.5})),
    "addcmul": (addcmul_fn, lambda a, b, c: ((a, b, c), {"value": 0.3})),
    "addcdiv": (addcdiv_fn, lambda a, b, c: ((a, b, c), {"value": -0.3})),
    "addcdiv 1": (addcdiv_fn, lambda a, b, c: ((a, b, np.where(c > 1, 0.0, c)), {"value": 1})),
    "lerp small": (lerp_fn, lambda a, b, c: ((a, b, 0.3), {})),
    "lerp large": (lerp_fn, lambda a, b, c: ((a, b, 0.8), {})),
    "lerp tensor": (lerp_tensor_fn, lambda a, b, c: ((a, b, c), {})),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_native_is_the_numpy_twin_bit_for_bit(shape, dtype, n_threads, case):
    fn, args = CASES[case]
    numpy_kernel, native_kernel = native.twins(fn)
    operands, params = args(*_three(shape, dtype))
    want = _numpy(numpy_kernel, *operands, **params)
    with threads(n_threads):
        got = native_kernel(_lib(), *operands, **params)
    assert got is not NotImplemented and got.flags.c_contiguous
    assert_bits(got, want)
    for a in layouts(operands[0]).values():  # other layouts: NumPy's, through the chooser
        assert_bits(fn.kernel(a, *operands[1:], **params), want)


@pytest.mark.parametrize("negate", [False, True])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_scaled_add_in_place(n_threads, negate):
    a, b, _ = _three((5, 333), np.float32)
    want = _numpy(M.scaled_add, a, b, -0.7 if negate else 0.7)
    dst = a.copy()
    with threads(n_threads):
        assert M.scaled_add_into_native(_lib(), dst, b, 0.7, negate)
    assert_bits(dst, want)
    same = a.copy()  # dst += 0.7 * dst: the operand is the destination itself
    assert M.scaled_add_into_native(_lib(), same, same, 0.7)
    assert_bits(same, _numpy(M.scaled_add, a, a, 0.7))
    shifted = a.reshape(-1).copy()  # an operand overlapping the destination one step on
    assert not M.scaled_add_into_native(_lib(), shifted[1:], shifted[:-1], 0.7)
    assert not M.scaled_add_into_native(_lib(), np.asfortranarray(a), b, 0.7)


def test_broadcast_and_strided_operands_are_made_dense_for_c():
    """A per-channel scale beside an activation (batch norm's fma(x, scale, shift)), or a
    strided view: broadcast and copied contiguous, then C; NumPy's bits."""
    lib = _lib()
    x = rand_array((4, 3, 5, 5))
    scale, shift = rand_array((1, 3, 1, 1), seed=1), rand_array((1, 3, 1, 1), seed=2)
    got = M.addcmul_native(lib, shift, x, scale)
    assert got.shape == x.shape and got.flags.c_contiguous
    assert_bits(got, _numpy(native.twins(addcmul_fn)[0], shift, x, scale))
    assert_bits(M.scaled_add_native(lib, x, x[:, :1], 0.5), _numpy(M.scaled_add, x, x[:, :1], 0.5))
    assert_bits(M.addcdiv_native(lib, shift, x, scale, 2),
                _numpy(native.twins(addcdiv_fn)[0], shift, x, scale, 2))
    y = rand_array((5, 5, 3, 4), seed=3).T  # (a transposed view)
    assert_bits(M.lerp_native(lib, y, x, 0.25), _numpy(M.lerp, y, x, 0.25))


def test_other_operands_stay_on_numpy():
    lib = _lib()
    a = rand_array((4, 5))
    assert M.scaled_add_native(lib, a, a.astype(np.float64), 0.5) is NotImplemented
    assert M.addcmul_native(lib, a.astype(np.float16), a.astype(np.float16),
                            a.astype(np.float16)) is NotImplemented
    assert M.lerp_native(lib, a, rand_array((3, 5)), 0.5) is NotImplemented  # (NumPy raises)
    assert M.addcmul_native(lib, a, a, a, value=1j) is NotImplemented
    assert M.addcdiv_native(lib, a, a, a, value=(1 << 60) + 1) is NotImplemented
    # (a number `other` is taken: added at once where its product with alpha is exact, else
    # spread to an array for the fused kernel)
    np.testing.assert_array_equal(M.scaled_add_native(lib, np.arange(3.0), 2.0, 1.0),
                                  np.arange(3.0) + 2.0)
    np.testing.assert_array_equal(M.scaled_add_native(lib, np.arange(3.0), 0.1, 0.3),
                                  _numpy(M.fma, np.full(3, 0.1), 0.3, np.arange(3.0)))
