"""Complex kernels on NumPy arrays where NumPy's answer differs from PyTorch's CPU kernels.

NumPy and PyTorch agree on complex values almost everywhere, but not on how they reach
some of them: NumPy's reciprocal is conj(z) / |z|^2 and its integer powers multiply
repeatedly, while PyTorch divides by Smith's algorithm and takes other powers as
exp(e * log(z)) (C's cpow). The results differ in the signs of zeros, at zero and infinite
inputs, and in the last bits of integer powers; these kernels follow PyTorch.

Where PyTorch's AVX2 loop body and its scalar loop (small tensors, and the tail of large
ones) disagree on the sign of a zero, these follow the scalar loop: small tensors are the
ones that get printed. Multiplication and division (`mul_kernel`, `div_kernel`, addcmul,
addcdiv) follow both: each element is rounded as the part of PyTorch's loop it falls in
(`_loop_places`).
"""

from __future__ import annotations

import numpy as np

from ._fma import fma
from ._rng_kernels import avx2


def _fused() -> bool:
    """Does the reproduced PyTorch build contract a * b + c into one FMA (its AVX2 build
    does, its scalar 'default' build does not)?"""
    return avx2()


def _mul_add(x: np.ndarray, y: np.ndarray, z: np.ndarray, fused: bool) -> np.ndarray:
    """x * y + z, rounded once when `fused` (as the C compiler contracts it)."""
    return fma(x, y, z) if fused else x * y + z


def reciprocal(a: np.ndarray) -> np.ndarray:
    """1 / a for complex `a` by Smith's scaled division of 1 + 0j, as PyTorch computes it.

    NOTE: NumPy gives 1 / (1+0j) = 1-0j and 1 / (-1j) = +0+1j; Smith's algorithm (scale by
    the larger of |re|, |im|) gives 1+0j and -0+1j, and 1 / 0j is inf+nanj.
    """
    return divide(np.ones((), a.dtype), a)


def divide(n, d, fused: bool | None = None, fused_parts: bool | None = None) -> np.ndarray:
    """n / d for complex arrays by Smith's algorithm, as PyTorch's c10::complex division
    (with the multiply-adds its AVX2 build fuses; `fused=False` rounds every product,
    `fused_parts=False` those of the numerator's parts only)."""
    dtype = np.result_type(n, d)
    n, d = np.asarray(n, dtype), np.asarray(d, dtype)
    a, b, c, e = n.real, n.imag, d.real, d.imag
    fused = _fused() if fused is None else fused
    parts = fused if fused_parts is None else fused_parts
    with np.errstate(all="ignore"):
        wide = np.abs(c) >= np.abs(e)
        rat = np.where(wide, e / c, c / e)
        scl = 1 / np.where(wide, _mul_add(e, rat, c, fused), _mul_add(c, rat, e, fused))
        re = np.where(wide, _mul_add(b, rat, a, parts), _mul_add(a, rat, b, parts)) * scl
        im = np.where(wide, _mul_add(-a, rat, b, parts), _mul_add(b, rat, -a, parts)) * scl
        both_zero = (c == 0) & (e == 0)
        if both_zero.any():  # (a zero divisor: each part over |0|, inf or nan)
            re = np.where(both_zero, a / np.abs(c), re)
            im = np.where(both_zero, b / np.abs(e), im)
    return _parts(re, im, dtype)


def multiply(x, y, fused: bool | None = None) -> np.ndarray:
    """x * y for complex arrays as PyTorch's scalar loop: (ac - bd) + (ad + bc)i, where its
    AVX2 build fuses ac (and ad) into the sum with the rounded bd (and bc). NumPy's SIMD
    loop fuses others and PyTorch's vectorized body none; `fused=False` rounds every
    product, as C's complex `*` in the C library's cpow."""
    dtype = np.result_type(x, y)
    x, y = np.asarray(x, dtype), np.asarray(y, dtype)
    a, b, c, d = x.real, x.imag, y.real, y.imag
    fused = _fused() if fused is None else fused
    with np.errstate(all="ignore"):
        return _parts(_mul_add(a, c, -(b * d), fused), _mul_add(a, d, b * c, fused), dtype)


_GRAIN = 32768  # (ATen's GRAIN_SIZE: elements below which a kernel runs on one thread)


def mul_kernel(x, y) -> np.ndarray:
    """x * y for complex operands, each element rounded as PyTorch's CPU mul kernel rounds it.

    NOTE: which of `multiply`'s two roundings an element gets depends on where it falls in
    PyTorch's loop (`_loop_places`), as its AVX2 build was compiled: the vectorized body
    rounds every product (blocks of 8 complex64 / 4 complex128 elements); the scalar
    remainder fuses ac and ad into the sums, except in complex64 a lone last element,
    and beside a broadcast number all but a middle block of 4. Its scalar ('default')
    build rounds every product. Measured against torch 2.13 on x86-64.
    """
    x, y = _common(x, y)
    plain = multiply(x, y, fused=False)
    if not _fused() or plain.size == 0:
        return plain
    body, at, rest, beside_number = _loop_places((x, y), plain.shape)
    if x.dtype == np.complex64:
        if beside_number:
            body |= (at < 1) | (at >= 1 + (rest - 1) // 4 * 4)
        else:
            body |= (rest % 2 == 1) & (at == rest - 1)
    return np.where(body, plain, multiply(x, y, fused=True))


def div_kernel(n, d, inplace: bool = False) -> np.ndarray:
    """n / d for complex operands, each element rounded as PyTorch's CPU div kernel rounds it
    (`inplace`: into `n`, as `div_`).

    NOTE: PyTorch's AVX2 build fuses all of Smith's multiply-adds, in its vectorized body
    and its scalar remainder alike, but in complex64 a lone last element of the remainder
    (every remainder element, in place) fuses only the divisor's (`_loop_places`).
    """
    n, d = _common(n, d)
    out = divide(n, d)
    if not _fused() or out.size == 0 or n.dtype != np.complex64:
        return out
    body, at, rest, _ = _loop_places((n, d), out.shape)
    partial = ~body if inplace else ~body & (rest % 2 == 1) & (at == rest - 1)
    if not partial.any():
        return out
    return np.where(partial, divide(n, d, fused=True, fused_parts=False), out)


def div_into(dst: np.ndarray, d) -> bool:
    """`dst /= d` for complex `dst` as PyTorch's `div_` rounds it (see `div_kernel`)."""
    np.copyto(dst, div_kernel(dst, d, inplace=True), casting="unsafe")
    return True


def addcmul_kernel(x, t1, t2, value) -> np.ndarray:
    """x + value * t1 * t2 for a complex result, rounded as PyTorch's addcmul kernel: the
    value times t1 (every product rounded), times t2, plus x.

    NOTE: its AVX2 build fuses the second product's multiply-adds in the scalar remainder
    only, and in complex64 only in its leading blocks of 4 (`_loop_places`).
    """
    dtype = np.result_type(x, t1, t2, value)
    x, t1, t2 = (np.asarray(a).astype(dtype, copy=False) for a in (x, t1, t2))
    scaled = multiply(np.asarray(value, dtype), t1, fused=False)
    plain = multiply(scaled, t2, fused=False)
    if not _fused() or plain.size == 0:
        return _plus(x, plain)
    shape = np.broadcast_shapes(x.shape, plain.shape)
    body, at, rest, _ = _loop_places((x, t1, t2), shape)
    if dtype == np.complex64:
        body |= at >= rest // 4 * 4
    return _plus(x, np.where(body, plain, multiply(scaled, t2, fused=True)))


def addcdiv_kernel(x, t1, t2, value) -> np.ndarray:
    """x + value * t1 / t2 for a complex result, as PyTorch's addcdiv kernel: the value
    times t1 (every product rounded), over t2 (`divide`, fused throughout), plus x."""
    dtype = np.result_type(x, t1, t2, value)
    x, t1, t2 = (np.asarray(a).astype(dtype, copy=False) for a in (x, t1, t2))
    return _plus(x, divide(multiply(np.asarray(value, dtype), t1, fused=False), t2))


def _plus(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.add(x, y)


def _common(x, y) -> tuple[np.ndarray, np.ndarray]:
    """Both operands as arrays of their complex result dtype (a number as a 0-d array)."""
    dtype = np.result_type(x, y)
    return np.asarray(x).astype(dtype, copy=False), np.asarray(y).astype(dtype, copy=False)


def _iteration_order(arrays, shape) -> list:
    """The dimensions of `shape` from fastest to slowest as PyTorch's TensorIterator walks
    them (its `reorder_dimensions`: by the operands' strides, a broadcast dimension
    ignored, equal strides ordered by size)."""
    strides = [np.broadcast_to(a, shape).strides for a in arrays]

    def should_swap(d0: int, d1: int) -> int:
        for s in strides:
            s0, s1 = s[d0], s[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(len(shape)))[::-1]
    for i in range(1, len(perm)):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm


def _inner_run(arrays, shape, perm) -> tuple[int, list]:
    """(length of the innermost run PyTorch's loop gets after coalescing dimensions, each
    operand's stride in elements along it)."""
    strides = [[s // a.itemsize for s in np.broadcast_to(a, shape).strides] for a in arrays]
    run, inner = 1, [0] * len(arrays)
    for d in perm:
        n = shape[d]
        if n == 1:
            continue
        if run > 1 and any(st[d] != inner[k] * run for k, st in enumerate(strides)):
            break
        if run == 1:
            inner = [st[d] for st in strides]
        run *= n
    return run, inner


def _loop_places(arrays, shape) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """Where each element of `shape` falls in PyTorch's AVX2 loop over `arrays`: (in a
    vectorized block, its place in its scalar remainder, that remainder's length, whether
    an operand is a number broadcast along the innermost run).

    The loop walks the operands' memory order, split into one chunk per thread from
    ATen's grain size up, and each chunk's rows of the coalesced innermost dimension
    into blocks of 2 vectors (8 complex64 / 4 complex128) plus a scalar remainder; rows
    with an operand neither contiguous nor a broadcast number are all remainder.
    """
    from ._parallel import workers  # (torch.get_num_threads())

    perm = _iteration_order(arrays, shape) if len(shape) > 1 else list(range(len(shape)))
    run, inner = _inner_run(arrays, shape, perm)
    total = int(np.prod(shape))
    walk = [shape[d] for d in reversed(perm)]
    step = np.arange(total).reshape(walk).transpose(np.argsort(list(reversed(perm))))
    threads = workers()
    chunk = total
    if total >= _GRAIN and threads > 1:
        chunk = -(-total // min(threads, -(-total // _GRAIN)))
    lo = np.maximum(step // run * run, step // chunk * chunk)
    length = np.minimum((step // run + 1) * run, (step // chunk + 1) * chunk) - lo
    at = step - lo
    numbers = sum(s == 0 for s in inner)
    width = 8 if arrays[0].dtype == np.complex64 else 4
    if (numbers == 1 and all(s in (0, 1) for s in inner)) or all(s == 1 for s in inner):
        vector = length - length % width
        return at < vector, at - vector, length - vector, numbers > 0
    return np.zeros(shape, bool), at, length, numbers > 0


def cpow(a, b, dtype=None) -> np.ndarray:
    """a ** b for complex operands as C's cpow: exp(b * log(a)), with no integer shortcut.

    NOTE: NumPy multiplies repeatedly for small integer exponents and returns 0 for a zero
    base; PyTorch calls std::pow, so (-1+0j) ** 4 in complex64 is 1+3.5e-07j there and
    0j ** 4 is 0-0j.
    """
    dtype = np.result_type(a, b) if dtype is None else np.dtype(dtype)
    a = np.asarray(a).astype(dtype, copy=False)
    b = np.asarray(b, dtype)
    with np.errstate(all="ignore"):
        return np.exp(multiply(b, np.log(a), fused=False)).astype(dtype, copy=False)


def pow_scalar(a: np.ndarray, e) -> np.ndarray:
    """`a` to the number `e` (one of them complex), with PyTorch's shortcuts for common
    exponents, in `a`'s precision."""
    a = a.astype(np.result_type(a.dtype, np.complex64), copy=False)
    if e == 0.5:
        return np.sqrt(a)
    if e == -0.5:
        with np.errstate(all="ignore"):
            return 1 / np.sqrt(a)
    if e == -1:
        return reciprocal(a)
    if e == 1:
        return a.copy()
    if e == 2:
        return multiply(a, a)
    if e == 3:
        return multiply(multiply(a, a), a)
    if e == -2:
        return reciprocal(multiply(a, a))
    if e == 0:
        return np.ones_like(a)
    return cpow(a, e, a.dtype)


def _parts(re: np.ndarray, im: np.ndarray, dtype) -> np.ndarray:
    """A complex array of `dtype` from its real and imaginary parts."""
    out = np.empty(np.shape(re), dtype)
    out.real, out.imag = re, im
    return out


def _real_of(dtype) -> np.dtype:
    return np.dtype(np.float32 if np.dtype(dtype) == np.complex64 else np.float64)


def modulus(a: np.ndarray) -> np.ndarray:
    """|z| as C's hypot(re, im), which PyTorch's abs calls.

    NOTE: NumPy's complex absolute runs its own SIMD loop, an ulp from hypot in about a
    third of the elements; np.hypot gives the C library's (correctly rounded) bits.
    """
    return np.hypot(a.real, a.imag)


def sgn(a: np.ndarray) -> np.ndarray:
    """z / |z| (0 at 0): PyTorch's scalar kernel divides by |z| + 0j with Smith's algorithm.

    NOTE: PyTorch's AVX2 loop body divides each part by |z| instead, so in tensors of 16 or
    more elements sgn(-2-0j) may be -1-0j there (-1+0j here and in small tensors).
    """
    mag = modulus(a)
    return np.where(mag == 0, np.zeros((), a.dtype), divide(a, mag.astype(a.dtype)))


def exp2(a: np.ndarray) -> np.ndarray:
    """2 ** z as exp(ln 2 * z), the real ln 2 scaling each part (PyTorch's identity)."""
    ln2 = _real_of(a.dtype).type(np.log(2.0))
    with np.errstate(all="ignore"):
        return np.exp(_parts(a.real * ln2, a.imag * ln2, a.dtype))


def log_base(a: np.ndarray, base: float) -> np.ndarray:
    """log(z) / ln(base), each part divided by the real constant (PyTorch's vectorized
    log2 and both of its log10 kernels; its scalar log2 multiplies by 1 / ln 2, an ulp
    away at most)."""
    ln = _real_of(a.dtype).type(np.log(base))
    with np.errstate(all="ignore"):
        w = np.log(a)
    return _parts(w.real / ln, w.imag / ln, a.dtype)


def _in64(fn, x: np.ndarray, *more: np.ndarray) -> np.ndarray:
    """`fn` of float32 arguments computed in float64 and rounded once, as a correctly
    rounded C float function would give; float64 arguments directly."""
    if x.dtype == np.float32:
        return fn(x.astype(np.float64), *(m.astype(np.float64) for m in more)).astype(np.float32)
    return fn(x, *more)


def log1p(a: np.ndarray) -> np.ndarray:
    """log(1 + z) accurate near 0, by the rounding-error correction PyTorch's CPU uses.

    u = 1 + z is rounded; log(u) * z / (u - 1) rescales log(u) by how far the rounded u
    moved from 1 + z (Kahan's trick, as in NumPy PR 22611). u == 1 gives z itself.
    """
    with np.errstate(all="ignore"):
        # (real-only +1 and -1, as C++'s z + T(1): an imaginary -0 keeps its sign)
        u = _parts(a.real + 1, a.imag, a.dtype)
        du = _parts(u.real - 1, u.imag, a.dtype)
        log_u = np.log(u)
        scaled = log_u * divide(a, du)
        out = np.where(du == a, log_u, scaled)
        return np.where(u == 1, a, out).astype(a.dtype, copy=False)


def expm1(a: np.ndarray) -> np.ndarray:
    """exp(z) - 1 accurate near 0: expm1(x) cos(y) - 2 sin(y/2)^2 + i e^x sin(y)."""
    x, y = a.real, a.imag
    two = x.dtype.type(2)
    with np.errstate(all="ignore"):
        s = _in64(np.sin, y / two)
        re = _in64(np.expm1, x) * _in64(np.cos, y) - two * s * s
        im = _in64(np.exp, x) * _in64(np.sin, y)
    return _parts(re, im, a.dtype)
