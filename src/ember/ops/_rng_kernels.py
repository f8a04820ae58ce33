"""PyTorch 2.13's CPU random kernels: generator words in, values out, one function each.

Each function takes an `ember.Generator`, draws exactly the words PyTorch's kernel
draws, in the same order, and returns the values flat, in generation order (the
caller lays them out in memory order). Compute precision and FMA use follow the
kernel profile (`ember.random.get_kernel_profile()`): 'avx2' fuses what PyTorch's
AVX2 build fuses. Words consumed per call are noted on each kernel; the bit-level
arithmetic is in `_rng_math.py`.
"""

from __future__ import annotations

import ctypes
import math

import numpy as np

from .. import _dtype as dt
from .. import native
from ..native import calls
from . import _rng_math as M
from . import _rng_native as N
from ._rng_native import _struct_readable
from ._rng_native import randperm as native_randperm

f32, f64 = np.float32, np.float64
DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}
SMALL_PERM = (2**32 - 1) // 20  # randperm switches algorithm at this n
WIDE = ("int64", "float64", "float32", "bfloat16")  # dtypes of random_'s full 64-bit range


def avx2() -> bool:
    from ..random import get_kernel_profile

    return get_kernel_profile() == "avx2"


def to_dtype(vals: np.ndarray, d: dt.dtype) -> np.ndarray:
    """Cast kernel results to `d` as C++ `static_cast` does: double reaches float16 and
    bfloat16 through float (two roundings, like c10::Half(float))."""
    if vals.dtype == d.np:
        return vals
    if d.itemsize == 2 and d._kind == 2 and vals.dtype == f64:
        vals = vals.astype(f32)
    return vals.astype(d.np)


# --- uniform ---------------------------------------------------------------------------

def uniform(g, n: int, d: dt.dtype, low: float, high: float) -> np.ndarray:
    """uniform_(low, high) for a real floating dtype.

    float32/float16/bfloat16: one word each, x = (w mod 2^24) 2^-24 in float; float64:
    one 64-bit draw, 53 bits. Then v = x*(high-low) + low in that precision (one
    rounding on AVX2 builds), cast to d; a v equal to `high` becomes `low`.
    """
    if d is dt.float64:
        x = g._doubles(n)
        if low == 0.0 and high == 1.0:
            return x
        a, b = f64(low), f64(high)
        v = M.fma64(x, b - a, a) if avx2() else x * (b - a) + a
        v[v == b] = a
        return v
    x = g._floats(n)
    if low == 0.0 and high == 1.0 and d is dt.float32:
        return x
    a, b = f32(low), f32(high)
    v = M.fma32(x, b - a, a) if avx2() else x * (b - a) + a
    v = v.astype(d.np, copy=False)
    v[v == b.astype(d.np)] = a.astype(d.np)
    return v


# --- normal ----------------------------------------------------------------------------
# Fill path (contiguous, numel >= 16): draw n uniforms, Box-Muller each block of 16 over
# the pairs (j, j+8) with u1 = 1 - d[j]; if n % 16 != 0, draw 16 fresh uniforms for the
# last 16 positions (float32: n + 16 words; float64 twice that). float16/bfloat16 draw
# their uniforms per block (16 * ceil(n/16) words) and compute in float.
# Serial path: one double normal per element from two double uniforms (4 words per
# pair), the sine half cached in the generator for the next element.

def affine(v: np.ndarray, std, mean, fused: bool) -> np.ndarray:
    """v*std + mean in v's precision: one rounding (fma) or two."""
    t = v.dtype.type
    s, m = t(std), t(mean)
    if s == 1 and m == 0:
        return v + m  # NOTE: the fma turns -0 into +0; so does this
    if fused:
        return M.fma32(v, s, m) if t is f32 else M.fma64(v, s, m)
    return v * s + m


def box_muller_f32_scalar(u: np.ndarray) -> np.ndarray:
    """PyTorch's scalar `normal_fill_16<float>` (no FMA): libm logf, sinf, cosf."""
    u1 = f32(1) - u[:, :8]
    theta = (u[:, 8:].astype(f64) * (2.0 * math.pi)).astype(f32)
    radius = np.sqrt(M.libm_f32("logf", u1) * f32(-2))
    out = np.empty(u.shape, f32)
    out[:, :8] = radius * M.libm_f32("cosf", theta)
    out[:, 8:] = radius * M.libm_f32("sinf", theta)
    return out


def box_muller_f64(u: np.ndarray) -> np.ndarray:
    """PyTorch's `normal_fill_16<double>`: libm log, sin, cos (every build)."""
    u1 = 1.0 - u[:, :8]
    theta = u[:, 8:] * (2.0 * math.pi)
    radius = np.sqrt(-2.0 * M.libm_log(u1))
    out = np.empty(u.shape, f64)
    out[:, :8] = radius * M.libm_cos(theta)
    out[:, 8:] = radius * M.libm_sin(theta)
    return out


def normal_fill(g, n: int, d: dt.dtype, mean: float, std: float) -> np.ndarray:
    """The block-of-16 fill path, as values of dtype d."""
    fused = avx2()
    if d is dt.float64:
        u = g._doubles(n)
        tail = g._doubles(16) if n % 16 else None
        bm = box_muller_f64
    else:
        bm = M.box_muller_f32_avx2 if fused else box_muller_f32_scalar
        u = g._floats(n if d is dt.float32 else n - n % 16)
        tail = g._floats(16) if n % 16 else None
    if d is dt.float64 or fused:  # (C twins in csrc/normal.c where native kernels are on)
        bm = _native_first(bm)
    full = n - n % 16
    out = np.empty(n, u.dtype)
    out[:full] = bm(u[:full].reshape(-1, 16)).reshape(-1)
    if tail is not None:
        out[n - 16:] = bm(tail.reshape(1, 16)).reshape(-1)
    if N.affine(out, std, mean, fused) is None:
        out = affine(out, std, mean, fused)
    return to_dtype(out, d)


def _native_first(bm):
    """`bm` run by its C twin (`_rng_native.box_muller`) where that takes the blocks."""
    def run(u: np.ndarray) -> np.ndarray:
        out = N.box_muller(u)
        return bm(u) if out is None else out

    return run


def normal_serial(g, n: int, mean: float, std: float) -> np.ndarray:
    """n double normals in order, using and refilling the generator's cached sample."""
    out = np.empty(n, f64)
    k = 0
    if n and g._normal is not None:
        out[0] = g._normal
        g._normal = None
        k = 1
    m = n - k
    pairs = (m + 1) // 2
    if pairs:
        u = g._doubles(2 * pairs)
        radius = np.sqrt(-2.0 * M.libm_log1p(-u[1::2]))
        theta = (2.0 * math.pi) * u[0::2]
        vals = np.empty((pairs, 2), f64)
        vals[:, 0] = radius * M.libm_cos(theta)
        vals[:, 1] = radius * M.libm_sin(theta)
        out[k:] = vals.reshape(-1)[:m]
        if m % 2:
            g._normal = float(vals[-1, 1])
    return affine(out, std, mean, avx2())


def normal(g, n: int, d: dt.dtype, mean: float, std: float, contiguous: bool) -> np.ndarray:
    """normal_(mean, std) on n elements: the fill path for 16+ contiguous, else serial."""
    if n >= 16 and contiguous:
        return normal_fill(g, n, d, mean, std)
    return to_dtype(normal_serial(g, n, mean, std), d)


# --- integers ----------------------------------------------------------------------------
# random_(from, to): from + w mod range with one word when range < 2^28, else one 64-bit
# draw (for every dtype). random_() takes a dtype-specific modulus (see random_full).

def ints_to(vals_u64: np.ndarray, d: dt.dtype) -> np.ndarray:
    """uint64 bit patterns read as int64, then cast to `d` as C++ does."""
    v = vals_u64.view(np.int64)
    if d is dt.int64:
        return v
    if d is dt.bool_:
        return v != 0
    if d.itemsize == 2 and d._kind == 2:
        return v.astype(f32).astype(d.np)
    return v.astype(d.np)


def random_range(g, n: int, d: dt.dtype, lo: int, rng: int) -> np.ndarray:
    """Integers lo + (draw mod rng), computed in uint64 as PyTorch does, cast to d."""
    if rng >= 2**28:
        r = g._words64(n) % np.uint64(rng)
    else:
        r = g._words(n).astype(np.uint64) % np.uint64(rng)
    r += np.uint64(lo % 2**64)
    return ints_to(r, d)


def random_full(g, n: int, d: dt.dtype) -> np.ndarray:
    """random_() with no bounds: [0, 2^mantissa] for floats, [0, max] for integers."""
    if d is dt.bool_:
        return (g._words(n) & np.uint32(1)).astype(bool)
    if d is dt.int64 or d is dt.float64:
        mod = 2**63 if d is dt.int64 else 2**53 + 1
        return ints_to(g._words64(n) % np.uint64(mod), d)
    if d._kind == 2:
        mod = 2 ** DIGITS[d.name] + 1
    else:
        mod = int(np.iinfo(d.np).max) + 1
    return ints_to(g._words(n).astype(np.uint64) % np.uint64(mod), d)


def randperm(g, n: int) -> np.ndarray:
    """A permutation of 0..n-1 (int64).

    n < (2^32-1)/20: r = arange(n); for i < n-1: z = w mod (n-i); swap r[i], r[i+z]
    (n-1 words). Larger n: the "inside-out" shuffle with z = r64 mod (i+1)."""
    if n < SMALL_PERM:
        if n <= 1:
            return np.arange(n, dtype=np.int64)
        fast = native_randperm(g, n)  # the same swaps in C, for large draws
        if fast is not None:
            return fast
        z = g._words(n - 1).astype(np.int64) % np.arange(n, 1, -1, dtype=np.int64)
        return M.randperm_swaps(z, n)
    # NOTE: implemented from PyTorch's source, not checked against torch (needs 2 GB).
    r = np.empty(n, np.int64)
    for i in range(n):
        z = int(g._words64(1)[0] % np.uint64(i + 1))
        r[i] = r[z]
        r[z] = i
    return r


# --- exponential, multinomial, poisson -----------------------------------------------

def exponential(g, n: int, lambd: float) -> np.ndarray:
    """Exp(lambd) in double: (-1/lambd) * log1p(-u), one double uniform each."""
    return (-1.0 / lambd) * M.libm_log1p(-g._doubles(n))


def invalid_probs(p2: np.ndarray, replacement: bool) -> str | None:
    """PyTorch's words for the first fault in probabilities p2 (rows, categories), or None.
    Without replacement (or for one sample) every row is checked at once; with replacement
    row by row, and within a row its first bad entry names the fault (NaN fails `>= 0`
    first, so it reads as "< 0"); a row of valid entries fails only if all are zero."""
    if not replacement:
        if not (np.all(p2 >= 0) and np.all(p2 < np.inf)):
            return "probability tensor contains either `inf`, `nan` or element < 0"
        if np.any(p2.sum(-1) == 0):
            return "invalid multinomial distribution (sum of probabilities <= 0)"
        return None
    entry_bad = ~(p2 >= 0) | ~np.isfinite(p2)
    row_bad = entry_bad.any(-1) | ~(p2 > 0).any(-1)
    if not row_bad.any():
        return None
    row = int(np.argmax(row_bad))
    if not entry_bad[row].any():
        what = "sum of probabilities <= 0"
    elif p2[row, int(np.argmax(entry_bad[row]))] >= 0:
        what = "encountering probability entry = infinity or NaN"
    else:
        what = "encountering probability entry < 0"
    return f"invalid multinomial distribution ({what})"


def multinomial_with_replacement(p2: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Draws per row of probabilities p2 (rows, categories) for the double uniforms u
    (rows, k), drawn beforehand: a sequential cumulative sum in the probs' precision,
    normalised, last entry forced to 1; then per sample the first bucket with cum >= u
    (PyTorch's binary search)."""
    if (fault := invalid_probs(p2, True)) is not None:
        raise RuntimeError(fault)
    cum = np.cumsum(p2, axis=-1, dtype=p2.dtype)  # sequential, in the probs' precision
    total = cum[:, -1:].copy()
    cum /= total
    cum[:, -1] = 1
    rows, n_cat = cum.shape
    k = u.shape[1]
    # Binary search for the first bucket with cum >= u, exactly as PyTorch's loop.
    left = np.zeros((rows, k), np.int64)
    right = np.full((rows, k), n_cat, np.int64)
    r = np.arange(rows)[:, None]
    while True:
        active = right > left
        if not active.any():
            break
        mid = left + (right - left) // 2
        below = cum[r, np.minimum(mid, n_cat - 1)].astype(f64) < u
        left = np.where(active & below, mid + 1, left)
        right = np.where(active & ~below, mid, right)
    return left


_MT_BYTES = 4 * 625  # NumPy's MT19937 struct: 624 state words, then the int position


def _mt_snapshot(g):
    """The generator's twister state, cheaply: its struct's bytes where NumPy's layout is
    the expected one, else NumPy's own state tuple."""
    if _struct_readable():
        return ctypes.string_at(g._rs._bit_generator.ctypes.state_address, _MT_BYTES)
    return g._rs.get_state()


def _mt_restore(g, saved) -> None:
    if isinstance(saved, bytes):
        ctypes.memmove(g._rs._bit_generator.ctypes.state_address, saved, _MT_BYTES)
    else:
        g._rs.set_state(saved)


class DoublesAhead:
    """The generator's next double uniforms, drawn ahead, for a rejection sampler that reads
    them one by one (a list index is far cheaper than a draw per value; `arrays`: a NumPy
    array, for a native loop); `finish` puts the generator back and moves it on by exactly
    the doubles used, so the stream is the one drawing them one at a time would give."""

    def __init__(self, g, guess: int, arrays: bool = False) -> None:
        self.g, self._saved = g, (_mt_snapshot(g), g._fresh)
        self.arrays = arrays
        self.u: list[float] | np.ndarray = np.empty(0, f64) if arrays else []
        self.pos = 0  # how many `take` has handed out
        self.grow(max(guess, 64))

    def take(self) -> float:
        """The next double uniform."""
        if self.pos >= len(self.u):
            self.grow(len(self.u) + 64)
        self.pos += 1
        return self.u[self.pos - 1]

    def grow(self, n: int) -> None:
        """Draw n more doubles."""
        self.added(self.g._doubles(n))

    def added(self, fresh: np.ndarray) -> None:
        if self.arrays:
            self.u = np.concatenate([self.u, fresh])
        else:
            self.u.extend(fresh.tolist())

    def finish(self, used: int | None = None) -> None:
        """Move the real generator past the doubles used (default: those taken)."""
        used = self.pos if used is None else used
        _mt_restore(self.g, self._saved[0])
        self.g._fresh = self._saved[1]
        if used:
            self.g._doubles(used)


def _poisson_native(lib, g, lams: np.ndarray, out: np.ndarray) -> tuple:
    """`poisson_many`'s loop in C (csrc/rejection.c: the same steps, the C library's log,
    exp and lgamma) over doubles drawn ahead; (the rates done, the doubles used, `ahead`)."""
    fn = calls.entry(lib, "poisson_tries", [calls.P, calls.I64, calls.I64, calls.P, calls.I64,
                                            calls.P, calls.P], calls.I64)
    n = lams.size
    ahead = DoublesAhead(g, int(np.minimum(lams[lams == lams], 10.0).sum()) + 64, arrays=True)
    p, i = np.zeros(1, np.int64), 0
    while True:
        i = fn(calls.ptr(lams), n, i, calls.ptr(ahead.u), len(ahead.u), calls.ptr(p),
               calls.ptr(out))
        lam = float(lams[i]) if i < n else 0.0
        if i == n or math.isinf(lam):
            return i, int(p[0]), ahead
        per = 2 * min(lam, 10.0) + 2 if lam == lam else 2  # (a NaN rate takes one double)
        ahead.grow(int(per * (n - i)) + 64)


def poisson_many(g, lams: list) -> np.ndarray:
    """PyTorch's sample_poisson for each rate in order: Hormann's transformed rejection for
    lam >= 10, else a product of uniforms; one double uniform per step."""
    lib = native.library("rejection")
    if lib is None:
        return _poisson_loop(g, lams)
    out = np.zeros(len(lams), f64)
    start, used, ahead = _poisson_native(lib, g, np.asarray(lams, f64), out)
    ahead.finish(used)
    if start < len(lams):  # (an infinite rate: Python's loop goes on from it)
        out[start:] = _poisson_loop(g, lams[start:])
    return out


def _poisson_loop(g, lams: list) -> np.ndarray:
    """`poisson_many` in Python, rate after rate (the reference the C loop follows)."""
    out = np.zeros(len(lams), f64)
    ahead = DoublesAhead(g, int(sum(min(lam, 10.0) for lam in lams if lam == lam)) + 64)
    u, p, log, lgamma = ahead.u, 0, math.log, M.libm_lgamma
    try:
        for i, lam in enumerate(lams):
            if lam >= 10:
                slam, loglam = math.sqrt(lam), log(lam)
                b = 0.931 + 2.53 * slam
                a = -0.059 + 0.02483 * b
                inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
                vr = 0.9277 - 3.6224 / (b - 2)
                while True:
                    if p + 2 > len(u):
                        ahead.grow(2 * (len(lams) - i) + 64)
                    us = u[p] - 0.5
                    v = u[p + 1]
                    p += 2
                    ua = 0.5 - abs(us)
                    k = math.floor((2 * a / ua + b) * us + lam + 0.43)
                    if ua >= 0.07 and v <= vr:
                        break
                    if k < 0 or (ua < 0.013 and v > ua):
                        continue
                    lhs = log(v) + log(inv_alpha) - log(a / (ua * ua) + b)
                    if lhs <= -lam + k * loglam - lgamma(k + 1.0):
                        break
                out[i] = k
            elif lam != 0:
                enlam, x, prod = math.exp(-lam), 0, 1.0
                while True:
                    if p >= len(u):
                        ahead.grow(int(lam) * (len(lams) - i) + 64)
                    prod *= u[p]
                    p += 1
                    if prod > enlam:
                        x += 1
                    else:
                        break
                out[i] = x
    finally:  # also where a rate stops it half way: the draws made so far are used
        ahead.finish(p)
    return out


def poisson_one(g, lam: float) -> int:
    """One sample_poisson draw (see `poisson_many`)."""
    return int(poisson_many(g, [lam])[0])
