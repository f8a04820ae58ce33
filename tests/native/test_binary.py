"""csrc/binary.c (a + b, a - b, a * b, a / b over the kernel threads) against NumPy's
ufuncs, the NumPy twins of ops/binary.py's `add`, `sub`, `mul` and `div`, and against
torch: one IEEE operation per element, so bit for bit (NaN stays NaN, -0.0 + -0.0 is -0.0,
-0.0 + 0.0 is +0.0, inf - inf, 0 * inf and 0 / 0 are NaN, x / 0 is an infinity). Operands
the C kernels do not take (other dtypes, non-contiguous layouts, Python numbers, shapes
that broadcast in more than three groups) reach NumPy's ufuncs through the chooser, with
the same results; shapes that broadcast in up to three groups take the C forms name3."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember import native
from ember.ops import binary
from ember.ops.binary import add_fn, div_fn, mul_fn, sub_fn
from native._differential import (
    ONE_VALUES,
    assert_bits,
    layouts,
    one_value,
    threads,
    with_specials,
)

from helpers import rand_array

pytestmark = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")
TWINS = native.twins(add_fn)
OPS = {"add": (add_fn, np.add), "sub": (sub_fn, np.subtract), "mul": (mul_fn, np.multiply),
       "div": (div_fn, np.true_divide)}


@pytest.fixture(autouse=True)
def _small_arrays_native_too(monkeypatch):
    """Eager calls send arrays under `_BINARY_NATIVE_MIN` elements to NumPy; here the C
    kernels take every size."""
    monkeypatch.setattr(binary, "_BINARY_NATIVE_MIN", 0)
    with np.errstate(invalid="ignore", divide="ignore"):  # (as ember's ops never warn)
        yield


def _operands(shape, dtype):
    a = with_specials(rand_array(shape, np.float64, low=-3, high=3).astype(dtype))
    b = rand_array(shape, np.float64, seed=1, low=-3, high=3).astype(dtype)[::-1].copy()
    flat_a, flat_b = a.reshape(-1), b.reshape(-1)
    # -0.0 + -0.0, -0.0 + 0.0, inf + -inf, a NaN in b, 0 * inf, x / 0, 0 / 0
    for i, (u, v) in enumerate([(-0.0, -0.0), (-0.0, 0.0), (np.inf, -np.inf), (1.0, np.nan),
                                (0.0, np.inf), (2.0, 0.0), (0.0, -0.0)]):
        if 4 + i < flat_a.size:
            flat_a[4 + i], flat_b[4 + i] = u, v
    return a, b


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("shape", [(0,), (1,), (7, 9), (3, 1000), (4, 65, 257)], ids=str)
def test_each_op_is_numpys_bit_for_bit(shape, dtype, n_threads, op):
    fn, ufunc = OPS[op]
    a0, b0 = _operands(shape, dtype)
    want = ufunc(a0, b0)
    with threads(n_threads):
        got = native.twins(fn)[1](native.library("binary"), a0, b0)
    assert got is not NotImplemented
    assert_bits(got, want)
    assert got.flags.c_contiguous
    for a in layouts(a0).values():  # (other layouts: NumPy's, through the chooser)
        for b in (b0, np.asfortranarray(b0)):
            with threads(n_threads):
                assert_bits(fn.kernel(a, b), want)
                assert_bits(fn.kernel(b, a), ufunc(b0, a0))


BROADCASTS = [((7, 9), (9,)), ((7, 9), (7, 1)), ((7, 9), ()), ((2, 3, 4, 5), (3, 1, 1)),
              ((2, 3, 4, 5), (1, 3, 4, 5)), ((2, 1, 33), (2, 5, 33)), ((3, 1, 70), (1, 5, 1)),
              ((4, 300), (1, 300)), ((1,), (5, 1)), ((6, 0), (6, 1))]


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_broadcast_forms_are_numpys_bit_for_bit(dtype, n_threads):
    """A row, a column, a middle (C, 1, 1) bias, a scalar, an outer product's two sides,
    each operand first and second; a pattern of more than three groups stays NumPy's."""
    lib = native.library("binary")
    for sa, sb in BROADCASTS:
        a = _operands(sa, dtype)[0]
        b = rand_array(sb, np.float64, seed=2, low=-3, high=3).astype(dtype)
        b.reshape(-1)[:2] = [-0.0, np.nan][: b.size]
        for op, (fn, ufunc) in OPS.items():
            for x, y in ((a, b), (b, a)):
                with threads(n_threads):
                    got = native.twins(fn)[1](lib, x, y)
                if 0 in x.shape or 0 in y.shape:
                    assert got is NotImplemented
                    continue
                assert got is not NotImplemented, (sa, sb, op)
                assert_bits(got, ufunc(x, y))
    four = rand_array((2, 3, 4, 5)), rand_array((2, 1, 4, 1))
    assert binary._rows3(four[0].shape, four[1].shape) is None
    assert TWINS[1](lib, *four) is NotImplemented
    assert_bits(add_fn.kernel(*four), np.add(*four))


def test_other_operands_stay_on_numpy():
    lib = native.library("binary")
    a = rand_array((4, 5))
    add = TWINS[1]
    assert add(lib, a, a.astype(np.float64)) is NotImplemented  # mixed dtypes
    h = a.astype(np.float16)  # (16-bit floats: through float32, NumPy's bits: test_casts.py)
    assert_bits(add(lib, h, h[::-1].copy()), np.add(h, h[::-1]))
    assert add(lib, np.arange(6), np.arange(6)) is NotImplemented  # integers
    assert add(lib, a.T, a.T) is NotImplemented  # not C-contiguous
    assert add(lib, a, 1.5) is NotImplemented and add(lib, 2, a) is NotImplemented
    # through the chooser: a Python number first is NumPy's (the size gate reads no .size)
    assert_bits(add_fn.kernel(2.0, a), np.add(2.0, a))
    assert_bits(add_fn.kernel(a, np.float32(2.5)), np.add(a, np.float32(2.5)))


@pytest.mark.parametrize("mode", ["native", "numpy"])
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64], ids=["float32", "float64"])
def test_residual_sum_and_its_gradients_as_torch(dtype, n_threads, mode):
    """A residual connection's sum forward, and two gradients of one tensor meeting in
    backward (the engine adds them), equal to torch's bit for bit (the gate at its default:
    these are 64K elements and more)."""
    tdtype = {ember.float32: torch.float32, ember.float64: torch.float64}[dtype]
    x = rand_array((4, 8, 48, 48), np.float64, low=-2, high=2)
    w = rand_array((4, 8, 48, 48), np.float64, seed=2)
    xt = torch.tensor(x).to(tdtype).requires_grad_()
    yt = xt + xt.relu()
    (yt * torch.tensor(w).to(tdtype)).sum().backward()
    with native.use(mode), threads(n_threads):
        xe = ember.tensor(x).to(dtype).requires_grad_()
        ye = xe + ember.nn.functional.relu(xe)
        (ye * ember.tensor(w).to(dtype)).sum().backward()
    assert_bits(ye.detach().numpy(), yt.detach().numpy())
    assert_bits(xe.grad.numpy(), xt.grad.numpy())


@pytest.mark.parametrize("mode", ["native", "numpy"])
def test_in_place_add_still_writes_in_place(mode):
    """`a += b` and `add_` take the NumPy ufunc's in-place path past the chooser (no new
    array and copy), with torch's values."""
    x0 = rand_array((3, 70000), np.float32)
    y0 = rand_array((3, 70000), np.float32, seed=4)
    with native.use(mode):
        a, b = ember.tensor(x0), ember.tensor(y0)
        at = a.data_ptr()
        a += b
        assert a.data_ptr() == at
        assert_bits(a.numpy(), x0 + y0)
        a.add_(b, alpha=2)
        v = ember.tensor(x0.reshape(-1))
        with pytest.raises(RuntimeError, match="single memory location"):
            v[1:] += v[:-1]  # (a partial overlap: refused, as torch refuses it)
        v[1:] += v[:-1].clone()
    t = torch.tensor(x0) + torch.tensor(y0)
    t.add_(torch.tensor(y0), alpha=2)
    tv = torch.tensor(x0.reshape(-1))
    tv[1:] += tv[:-1].clone()
    assert_bits(a.numpy(), t.numpy())
    assert_bits(v.numpy(), tv.numpy())


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("shape", [(1,), (7, 9), (3, 40000), (2, 65, 257)], ids=str)
def test_one_value_operand_is_spread_by_the_c_kernel(shape, dtype, n_threads, op):
    """An operand of one value broadcast over the other's shape (every stride 0: the
    gradient of a sum, `x * tensor(2.)` expanded) takes the broadcast C form, its work
    split by elements over the threads (a single long row too), and gives NumPy's bits,
    either side."""
    fn, ufunc = OPS[op]
    a0, _ = _operands(shape, dtype)
    lib = native.library("binary")
    for value in ONE_VALUES:
        b = one_value(value, shape, dtype)
        for x, y in ((a0, b), (b, a0)):
            with threads(n_threads):
                got = native.twins(fn)[1](lib, x, y)
            assert got is not NotImplemented
            assert_bits(got, ufunc(x, y))


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("n_threads", [1, 2])
def test_expanded_operands_are_spread_from_their_compact_arrays(op, n_threads):
    """Views broadcast along some dims (a reduction's result expanded back: a per-row or a
    per-column value) take the broadcast C form from the array they spread; two such views
    whose compact arrays would spread to less than the result stay whole (NumPy's)."""
    fn, ufunc = OPS[op]
    a0, _ = _operands((64, 1030), np.float32)
    rows = rand_array((64, 1), np.float32, seed=2)
    cols = rand_array((1, 1030), np.float32, seed=3)
    lib = native.library("binary")
    cases = [(a0, np.broadcast_to(rows, a0.shape)), (np.broadcast_to(cols, a0.shape), a0),
             (np.broadcast_to(rows, a0.shape), np.broadcast_to(cols, a0.shape))]
    for x, y in cases:
        with threads(n_threads):
            got = native.twins(fn)[1](lib, x, y)
        assert got is not NotImplemented
        assert_bits(got, ufunc(x, y))
    for x, y in [(np.broadcast_to(rows, a0.shape),) * 2,
                 (one_value(2.5, a0.shape, np.float32), np.broadcast_to(rows, a0.shape)),
                 (one_value(1.5, a0.shape, np.float32), one_value(-0.0, a0.shape, np.float32))]:
        got = native.twins(fn)[1](lib, x, y)
        assert got is NotImplemented or (got.shape == a0.shape and
                                         np.array_equal(got, ufunc(x, y), equal_nan=True))
        assert fn.kernel(x, y).shape == a0.shape
