"""MLX's random number generation, bit for bit, in NumPy.

MLX draws every random number from the threefry2x32 hash (the counter-based
PRNG of JAX's JEP 263) keyed by a ``uint32[2]`` key, then turns the raw bits
into samples with a short chain of array ops. This module replays that chain
on NumPy arrays, in the same dtypes and the same order, so that the results
equal ``mlx.core.random`` on MLX's CPU backend (0.32.4, x86-64 Linux).

Two kinds of arithmetic need care to be exact:

* MLX's CPU kernels round to the output dtype after every op. float16 and
  bfloat16 ops are therefore done here in float32 and rounded once, which
  gives the same result (float32 has more than twice their precision).
* ``log`` and ``log1p`` come from the C library (glibc's ``logf`` and
  ``log1pf``), while ``exp``, ``erf`` and ``erfinv`` are MLX's own polynomial
  approximations built on ``fmaf``. All five are ported below in the same
  operation order; ``_fmaf`` emulates a single-rounding float32 fma.

Python numbers are taken as MLX's bindings take them: ``bool`` -> bool,
``int`` -> int32 (int64 when out of range), ``float`` -> float32.

The NumPy code here is the reference. Its hot kernels (the hash behind ``bits``, ``logf``,
``log1pf``, ``erfinv``) have native twins in csrc/mlx_random.c, step for step and bit for
bit, which the samplers call where native kernels run (``_words``, ``_map_f32``); the only
ember import is that native layer.
"""

from __future__ import annotations

import math

import numpy as np

from ... import native
from ...native import calls

_U32 = np.uint32
_F32 = np.float32

# The fewest values a native twin is called for (a smaller call stays in NumPy rather than
# load the library); tests lower it to reach the native code with small arrays.
NATIVE_MIN = {"elements": 4096}


def _native_lib(size: int):
    """csrc/mlx_random.c's library for a call over ``size`` values, or None (native kernels
    off or unavailable, or ``size`` under the gate)."""
    return native.library("mlx_random") if size >= NATIVE_MIN["elements"] else None


# The NumPy ports run over large arrays a block at a time: their float64 temporaries then
# stay in cache, and are reused rather than mapped (and faulted in) afresh for each op.
_BLOCK = 1 << 16


def _map_f32(name: str, port, x) -> np.ndarray:
    """``port`` (a NumPy kernel of float32 values) of ``x``, or its native twin ``name``."""
    x = np.asarray(x, dtype=_F32)
    lib = _native_lib(x.size)
    if lib is None and x.size <= _BLOCK:
        return port(x)
    flat = np.ascontiguousarray(x).reshape(-1)
    out = np.empty_like(flat)
    if lib is None:
        for lo in range(0, flat.size, _BLOCK):
            out[lo : lo + _BLOCK] = port(flat[lo : lo + _BLOCK])
    else:
        calls.entry(lib, f"{name}_f32", [calls.P, calls.P, calls.I64])(
            calls.ptr(flat), calls.ptr(out), flat.size)
    return out.reshape(x.shape)

# ---------------------------------------------------------------------------
# threefry2x32 and raw bits
# ---------------------------------------------------------------------------

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_KS_PARITY = 0x1BD11BDA


def _threefry2x32(key: np.ndarray, c0: np.ndarray, c1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hash counter pairs ``(c0, c1)`` under ``key``: 5 blocks of 4 rounds."""
    k0, k1 = _U32(key[0]), _U32(key[1])
    ks = (k0, k1, _U32(k0 ^ k1 ^ _U32(_KS_PARITY)))
    x0 = np.asarray(c0, dtype=_U32) + ks[0]
    x1 = np.asarray(c1, dtype=_U32) + ks[1]
    for block in range(5):
        for r in _ROTATIONS[block % 2]:
            x0 = x0 + x1
            x1 = (x1 << _U32(r)) | (x1 >> _U32(32 - r))
            x1 = x1 ^ x0
        x0 = x0 + ks[(block + 1) % 3]
        x1 = x1 + ks[(block + 2) % 3] + _U32(block + 1)
    return x0, x1


def key(seed: int) -> np.ndarray:
    """The key of a 64-bit seed: its high and low 32-bit halves."""
    seed = int(seed) & 0xFFFFFFFFFFFFFFFF
    return np.array([seed >> 32, seed & 0xFFFFFFFF], dtype=_U32)


_BITS_DTYPES = {4: np.uint32, 2: np.uint16, 1: np.uint8}


def bits(key: np.ndarray, shape: tuple[int, ...], width: int = 4) -> np.ndarray:
    """Raw random bits of ``shape``, as uint32/uint16/uint8 for width 4/2/1.

    MLX hashes whole 32-bit words. For ``n`` words it hashes the counter pairs
    ``(i, i + ceil(n/2))`` for ``i < n // 2`` and writes the two halves of each
    hash to word ``i`` and word ``i + ceil(n/2)``; when ``n`` is odd the middle
    word is the first half of the hash of ``(n // 2, 0)``. Narrow widths are the
    little-endian bytes of those words, cut to the requested size.
    """
    shape = tuple(int(d) for d in shape)
    if any(d < 0 for d in shape):
        raise ValueError("[bits] Negative dimensions not allowed.")
    key = np.asarray(key)
    if key.dtype != _U32:
        raise ValueError(f"[bits] Expected key type uint32 but received {key.dtype.name}.")
    if key.shape != (2,):
        raise ValueError(f"[bits] Expected key shape (2) but received {_fmt_shape(key.shape)}.")
    if width not in _BITS_DTYPES:
        raise ValueError(f"[bits] Bit width must be in {{1, 2, 4}} but got {width}.")
    size = math.prod(shape)
    words = _words(key, -(-size * width // 4))
    raw = words.astype("<u4", copy=False).view(np.uint8)
    return raw.view(_BITS_DTYPES[width])[:size].reshape(shape)


def _words(key: np.ndarray, n_words: int) -> np.ndarray:
    """The ``n_words`` uint32 words of ``bits`` (in C where native kernels run)."""
    words = np.empty(n_words, dtype=_U32)
    lib = _native_lib(n_words)
    if lib is not None:
        key = np.ascontiguousarray(key, dtype=_U32)
        calls.entry(lib, "mlx_threefry_words_f32", [calls.P, calls.P, calls.I64])(
            calls.ptr(key), calls.ptr(words), n_words)
        return words
    half, odd = divmod(n_words, 2)
    for lo in range(0, half, _BLOCK):
        counter = np.arange(lo, min(lo + _BLOCK, half), dtype=_U32)
        x0, x1 = _threefry2x32(key, counter, counter + _U32(half + odd))
        words[lo : lo + x0.size], words[half + odd + lo : half + odd + lo + x1.size] = x0, x1
    if odd:
        words[half] = _threefry2x32(key, np.array([half], _U32), np.array([0], _U32))[0][0]
    return words


def split(key: np.ndarray, num: int = 2) -> np.ndarray:
    """``num`` new keys, shape ``(num, 2)``: the bits of that shape under ``key``."""
    return bits(key, (num, 2), 4)


# ---------------------------------------------------------------------------
# Exact float32 building blocks (MLX's and glibc's arithmetic, op for op)
# ---------------------------------------------------------------------------


def _fmaf(a, b, c) -> np.ndarray:
    """float32 ``fma(a, b, c)`` with one rounding, like C's ``fmaf``, for float32 values."""
    a, b, c = (np.asarray(v, dtype=np.float64) for v in (a, b, c))
    return _fmaf64(a, b, c)


_LOW29 = np.uint64(0x1FFFFFFF)  # the double's bits below float32's last place
_HALF29 = np.uint64(0x10000000)  # ... where a float32 halfway point has them
_TINY = _F32(2.0**-126)  # below it float32 is subnormal: its last place is higher up


def _fmaf64(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``_fmaf`` of float32 values held in float64 arrays.

    ``a * b`` is exact in float64 and ``s = a * b + c`` is rounded once there; rounding
    ``s`` to float32 is then the one rounding of the exact value unless ``s`` landed exactly
    on a float32 halfway point (float32's halfway points are doubles, so rounding to double
    can reach one but never cross it) or float32 is subnormal there. Only those rare values
    are redone, by rounding to odd: if ``s`` is inexact and its last bit even, it steps one
    ulp towards the exact value, and a round-to-odd double rounds to float32 correctly.
    """
    p = a * b
    s = np.asarray(p + c)
    with np.errstate(over="ignore"):
        out = s.astype(_F32)
    suspect = (s.view(np.uint64) & _LOW29) == _HALF29
    suspect |= np.abs(out) <= _TINY  # (|s| < 2**-126, or rounded up to it)
    if suspect.any():
        p = np.broadcast_to(p, s.shape)[suspect]
        c = np.broadcast_to(c, s.shape)[suspect]
        t = s[suspect]
        bp = t - p
        err = (p - (t - bp)) + (c - bp)  # two-sum: p + c == t + err exactly
        even = (t.view(np.uint64) & np.uint64(1)) == 0
        nudge = (err != 0) & even & np.isfinite(t)
        t = np.where(nudge, np.nextafter(t, np.copysign(np.inf, err)), t)
        with np.errstate(over="ignore"):
            out[suspect] = t.astype(_F32)
    return out


# glibc 2.27+ logf (from Arm optimized-routines, MIT): log(x) = k*ln2 + log(c)
# + log1p(z/c - 1), c from a 16-entry table, log1p by a degree-4 polynomial,
# all in double; the only float rounding is the last one.
# NOTE: glibc's x86-64 FMA variant fuses some of these double ops; the unfused
# version below still gives the same float32 for every input checked (all
# positive floats below 4, plus random bit patterns), as the double-level
# differences are far below float32's rounding.
_LOGF_INVC_LOGC = np.array(
    [
        [float.fromhex(v) for v in pair.split()]
        for pair in (
            "0x1.661ec79f8f3bep+0 -0x1.57bf7808caadep-2",
            "0x1.571ed4aaf883dp+0 -0x1.2bef0a7c06ddbp-2",
            "0x1.49539f0f010bp+0 -0x1.01eae7f513a67p-2",
            "0x1.3c995b0b80385p+0 -0x1.b31d8a68224e9p-3",
            "0x1.30d190c8864a5p+0 -0x1.6574f0ac07758p-3",
            "0x1.25e227b0b8eap+0 -0x1.1aa2bc79c81p-3",
            "0x1.1bb4a4a1a343fp+0 -0x1.a4e76ce8c0e5ep-4",
            "0x1.12358f08ae5bap+0 -0x1.1973c5a611cccp-4",
            "0x1.0953f419900a7p+0 -0x1.252f438e10c1ep-5",
            "0x1p+0 0x0p+0",
            "0x1.e608cfd9a47acp-1 0x1.aa5aa5df25984p-5",
            "0x1.ca4b31f026aap-1 0x1.c5e53aa362eb4p-4",
            "0x1.b2036576afce6p-1 0x1.526e57720db08p-3",
            "0x1.9c2d163a1aa2dp-1 0x1.bc2860d22477p-3",
            "0x1.886e6037841edp-1 0x1.1058bc8a07ee1p-2",
            "0x1.767dcf5534862p-1 0x1.4043057b6ee09p-2",
        )
    ]
)
_LOGF_LN2 = float.fromhex("0x1.62e42fefa39efp-1")
_LOGF_POLY = tuple(
    float.fromhex(v)
    for v in ("-0x1.00ea348b88334p-2", "0x1.5575b0be00b6ap-2", "-0x1.ffffef20a4123p-2")
)


_LOGF_INVC = np.ascontiguousarray(_LOGF_INVC_LOGC[:, 0])
_LOGF_LOGC = np.ascontiguousarray(_LOGF_INVC_LOGC[:, 1])


def _logf(x) -> np.ndarray:
    """glibc's float32 ``logf`` (not correctly rounded: ~1% of results differ
    by one ulp from ``float32(log(float64(x)))``, so it is ported exactly)."""
    x = np.asarray(x, dtype=_F32)
    # The bits as int32 (negative floats negative): the reduction is 32-bit integer
    # arithmetic, wrapping as glibc's uint32 does.
    ix = x.view(np.int32)
    normal = (ix >= 0x00800000) & (ix < 0x7F800000)
    rest = None if normal.all() else ~normal
    if rest is not None:
        # Subnormals are scaled by 2^23 into the normal range first.
        sub = (ix > 0) & (ix < 0x00800000)
        with np.errstate(over="ignore", invalid="ignore"):
            scaled = (x * _F32(2.0**23)).view(np.int32) - np.int32(23 << 23)
        ix = np.where(sub, scaled, ix)
    with np.errstate(over="ignore"):
        tmp = ix - np.int32(0x3F330000)
    i = (tmp >> 19) & 15
    k = tmp >> 23  # (arithmetic shift)
    z = (ix - (tmp & np.int32(-(1 << 23)))).view(_F32).astype(np.float64)
    # NOTE: in the float64 steps below, only the order of each sum's two terms differs
    # from glibc's (exact: IEEE addition commutes)
    r = z * _LOGF_INVC[i]
    r -= 1.0
    y0 = k * _LOGF_LN2
    y0 += _LOGF_LOGC[i]
    r2 = r * r
    y = _LOGF_POLY[1] * r
    y += _LOGF_POLY[2]
    y += _LOGF_POLY[0] * r2
    y *= r2
    y0 += r
    y += y0
    out = np.asarray(y).astype(_F32)
    if rest is not None:
        rest &= ~sub
        with np.errstate(divide="ignore", invalid="ignore"):
            out[rest] = np.log(x[rest])  # 0, negatives, inf, NaN: -inf, NaN, inf, NaN
    return out


# glibc's log1pf (fdlibm, s_log1pf.c): pure float32 arithmetic.
_LN2_HI = _F32(6.9313812256e-01)
_LN2_LO = _F32(9.0580006145e-06)
_LP = tuple(
    _F32(v)
    for v in (
        6.6666668653e-01,
        4.0000000596e-01,
        2.8571429849e-01,
        2.2222198546e-01,
        1.8183572590e-01,
        1.5313838422e-01,
        1.4798198640e-01,
    )
)


def _log1pf(x) -> np.ndarray:
    """glibc's float32 ``log1pf`` (fdlibm's algorithm, float32 throughout).

    The common path (a reduction of 1 + x to 2**k (1 + f) and a polynomial in f) runs over
    every value; the rare ones (|f| < 2**-20, |x| < 2**-29, x <= -1, inf, NaN) are then
    redone on their own.
    """
    x = np.asarray(x, dtype=_F32)
    shape, x = x.shape, x.reshape(-1)  # (1-d: the masked writes below need arrays)
    f32, one = _F32, _F32(1)
    hx = x.view(np.int32)
    with np.errstate(all="ignore"):
        # -0.2929 < x < 0.41422: no reduction (k = 0, f = x).
        direct = (hx < 0x3ED413D7) & ((hx > 0) | (hx <= np.int32(-1097468385)))  # 0xbe95f61f
        u = one + x
        hu = u.view(np.int32)
        big = hx >= 0x5A000000  # (x >= 2**53: 1 + x is x)
        any_big = big.any()
        if any_big:
            u, hu = np.where(big, x, u), np.where(big, hx, hu)
        k = (hu >> 23) - 127
        c = np.where(k > 0, one - (u - x), x - (u - one)) / u  # (the rounding of 1 + x)
        if any_big:
            c[big] = 0
        hu = hu & 0x007FFFFF
        low = hu < 0x3504F7
        u = np.where(low, hu | 0x3F800000, hu | 0x3F000000).view(f32)
        k += ~low
        hu = np.where(low, hu, (0x00800000 - hu) >> 2)
        f = np.where(direct, x, u - one)
        k[direct] = 0
        hu[direct] = 1
        c[direct] = 0
        kf = k.astype(f32)
        hfsq = f32(0.5) * f * f

        s = f / (f32(2) + f)
        z = s * s
        poly = _LP[6]
        for coef in _LP[5::-1]:
            poly = coef + z * poly
        sr = s * (hfsq + z * poly)
        k0 = k == 0
        out = np.where(k0, f - (hfsq - sr), kf * _LN2_HI - ((hfsq - (sr + (kf * _LN2_LO + c))) - f))

        small = hu == 0  # |f| < 2**-20
        if small.any():
            f, kf, c, k0 = f[small], kf[small], c[small], k0[small]
            r = f32(0.5) * f * f * (one - f32(0.66666666666666666) * f)
            part = np.where(k0, f - r, kf * _LN2_HI - ((r - (kf * _LN2_LO + c)) - f))
            zero_f = np.where(k0, f32(0), kf * _LN2_HI + (c + kf * _LN2_LO))
            out[small] = np.where(f == 0, zero_f, part)
        ax = hx & 0x7FFFFFFF
        tiny = ax < 0x31000000  # |x| < 2**-29: x, or x - x*x/2 for |x| >= 2**-54
        if tiny.any():
            t = x[tiny]
            out[tiny] = np.where(ax[tiny] < 0x24800000, t, t - t * t * f32(0.5))
        edge = ~(x > -1) | (x == np.inf)  # x <= -1, inf, NaN: -inf / NaN / inf as libm
        if edge.any():
            out[edge] = np.log1p(x[edge])
    return out.reshape(shape)


def _expf(x) -> np.ndarray:
    """MLX's CPU ``exp``: 2**(x*log2(e)) split into an exponent and a Cephes
    polynomial of the fraction, with fma (mlx/backend/cpu/simd/math.h)."""
    x0 = np.asarray(x, dtype=_F32)
    with np.errstate(all="ignore"):
        y = x0 * _F32(1.442695)
        ipart = np.floor(y.astype(np.float64) + 0.5).astype(_F32)  # the + 0.5 is in double
        fpart = y - ipart
        p = _F32(1.535336188319500e-4)
        for coef in (
            1.339887440266574e-3,
            9.618437357674640e-3,
            5.550332471162809e-2,
            2.402264791363012e-1,
            6.931472028550421e-1,
            1.0,
        ):
            p = _fmaf(p, fpart, _F32(coef))
        ipart_i = np.where(np.isfinite(ipart), ipart, 0).astype(np.int64)
        epart = (((ipart_i + 127) << 23) & 0xFFFFFFFF).astype(np.uint32).view(_F32)
        out = epart * p
    out = np.where(np.isnan(x0), x0, out)
    out = np.where(x0 > _F32(88), _F32(np.inf), out)
    return np.where(x0 < _F32(-88), _F32(0), out).astype(_F32)


def _erff(x) -> np.ndarray:
    """MLX's CPU ``erf`` (Abramowitz-Stegun 7.1.26 with MLX's ``exp``)."""
    v = np.asarray(x, dtype=_F32)
    with np.errstate(all="ignore"):
        t = _F32(1) / _fmaf(_F32(0.3275911), np.abs(v), _F32(1))
        r = _fmaf(_F32(1.061405429), t, _F32(-1.453152027))
        for coef in (1.421413741, -0.284496736, 0.254829592):
            r = _fmaf(r, t, _F32(coef))
        e = -_expf(-(v * v))
        out = _fmaf(e * t, r, _F32(1))
    return np.where(v > 0, out, -out).astype(_F32)


_ERFINV_TAIL = (
    3.03697567e-10,
    2.93243101e-8,
    1.22150334e-6,
    2.84108955e-5,
    3.93552968e-4,
    3.02698812e-3,
    4.83185798e-3,
    -2.64646143e-1,
    8.40016484e-1,
)
_ERFINV_CENTRE = (
    5.43877832e-9,
    1.43285448e-7,
    1.22774793e-6,
    1.12963626e-7,
    -5.61530760e-5,
    -1.47697632e-4,
    2.31468678e-3,
    1.15392581e-2,
    -2.32015476e-1,
    8.86226892e-1,
)


def _horner_fma(coefs, t64: np.ndarray) -> np.ndarray:
    """Horner's rule with one ``fmaf`` per step, over float32 values ``t64`` held in float64."""
    p = np.float64(_F32(coefs[0]))
    for coef in coefs[1:-1]:
        p = _fmaf64(p, t64, np.float64(_F32(coef))).astype(np.float64)
    return _fmaf64(p, t64, np.float64(_F32(coefs[-1])))


def _erfinvf(a) -> np.ndarray:
    """MLX's CPU ``erfinv``: a * P(log(1 - a^2)), with one of two polynomials
    (Giles' single-precision approximation), split at |log(1 - a^2)| = 6.125."""
    a = np.asarray(a, dtype=_F32)
    with np.errstate(all="ignore"):
        a64 = a.astype(np.float64)
        t = _logf(_fmaf64(a64, -a64, np.float64(1)))  # (MLX's 0 - a: the same fma)
        t64 = t.astype(np.float64)
        p = _horner_fma(_ERFINV_CENTRE, t64)
        tail = np.abs(t) > _F32(6.125)  # (only for |a| above about 0.9987: rare)
        if tail.any():
            p[tail] = _horner_fma(_ERFINV_TAIL, t64[tail])
        return (a * p).astype(_F32)


def erfinv_f32(a) -> np.ndarray:
    """``_erfinvf`` of float32 values, in C (csrc/mlx_random.c) where native kernels run."""
    return _map_f32("mlx_erfinvf_map", _erfinvf, a)


def log_f32(x) -> np.ndarray:
    """``_logf`` of float32 values, in C (csrc/mlx_random.c) where native kernels run."""
    return _map_f32("mlx_logf_map", _logf, x)


def log1p_f32(x) -> np.ndarray:
    """``_log1pf`` of float32 values, in C (csrc/mlx_random.c) where native kernels run."""
    return _map_f32("mlx_log1pf_map", _log1pf, x)


# ---------------------------------------------------------------------------
# Array-op helpers with MLX's dtype rules
# ---------------------------------------------------------------------------


def _as_array(value) -> np.ndarray:
    """A parameter as the array MLX's bindings make of it (see module doc)."""
    if isinstance(value, (bool, np.bool_)):
        return np.asarray(value, dtype=np.bool_)
    if isinstance(value, int):
        in_int32 = -(2**31) <= value < 2**31
        return np.asarray(value, dtype=np.int32 if in_int32 else np.int64)
    if isinstance(value, float):
        return np.asarray(value, dtype=_F32)
    return np.asarray(value)


def _is_floating(dtype: np.dtype) -> bool:
    """MLX's ``issubdtype(dtype, floating)``: real floats, bfloat16 included."""
    return dtype.kind == "f" or dtype.name == "bfloat16"


def _compute_type(*dtypes: np.dtype) -> type:
    """The float type an MLX op computes in: float64 if any input is float64,
    float32 otherwise (float16, bfloat16, ints and uint32 all promote there
    with a float32 operand; narrow floats are rounded back by ``_in``)."""
    return np.float64 if any(d == np.float64 for d in dtypes) else _F32


def _in(dtype: np.dtype, fn, *args) -> np.ndarray:
    """``fn`` on ``args`` rounded to ``dtype``, as one MLX CPU op does it."""
    args = [np.asarray(a) for a in args]
    if len(args) == 2:
        _broadcast_shapes(args[0].shape, args[1].shape)  # MLX's error, not NumPy's
    ctype = _compute_type(dtype, *(a.dtype for a in args))
    with np.errstate(all="ignore"):
        out = fn(*(a.astype(ctype, copy=False) for a in args))
        return np.asarray(out).astype(dtype, copy=False)


def _unary_f32(fn, x: np.ndarray) -> np.ndarray:
    """A float32 math kernel applied in x's dtype: narrow floats go through
    float32 and are rounded back, as MLX's CPU kernels do."""
    return fn(x.astype(_F32)).astype(x.dtype)


def _broadcast_shapes(a, b) -> tuple[int, ...]:
    """MLX's ``broadcast_shapes`` (which lets a negative size through to ``bits``)."""
    a, b = tuple(a), tuple(b)
    n = max(len(a), len(b))
    out = []
    for x, y in zip((1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b):
        if x != y and 1 not in (x, y):
            msg = f"Shapes {_fmt_shape(a)} and {_fmt_shape(b)} cannot be broadcast."
            raise ValueError("[broadcast_shapes] " + msg)
        out.append(y if x == 1 else x)
    return tuple(out)


def _fmt_shape(shape) -> str:
    return "(" + ",".join(str(d) for d in shape) + ")"


def _below_one(dtype: np.dtype) -> np.float32:
    """The largest value below 1.0 in ``dtype``, as float32 (uniform's clamp)."""
    if dtype == np.float32:
        return np.nextafter(_F32(1), _F32(0))
    if dtype.itemsize == 2:  # float16, bfloat16: one step down in the bit pattern
        one = np.array(1, dtype=dtype).view(np.uint16)
        return (one - np.uint16(1)).view(dtype).astype(_F32)
    raise RuntimeError("[uniform] Unsupported type.")


# ---------------------------------------------------------------------------
# Samplers (mlx/random.cpp)
# ---------------------------------------------------------------------------

_NEXT_BELOW_MINUS_ONE = np.nextafter(_F32(-1), _F32(0))  # normal/laplace draw from (-1, 1)
_UINT32_MAX_F32 = _F32(4294967295.0)  # rounds to 2**32


def uniform(key: np.ndarray, low=0.0, high=1.0, shape=(), np_dtype=np.float32) -> np.ndarray:
    """Uniform samples in ``[low, high)``: ``bits / float32(2**32 - 1)``, clamped
    below 1 in ``np_dtype``, then ``low + (high - low) * u`` in ``np_dtype``."""
    dtype = np.dtype(np_dtype)
    if not _is_floating(dtype):
        raise ValueError(
            "[uniform] Can only generate uniform numbers with real floating point type."
        )
    shape = tuple(int(d) for d in shape)
    lo = _as_array(low).astype(dtype)
    hi = _as_array(high).astype(dtype)
    span = _in(dtype, np.subtract, hi, lo)
    out_shape = _broadcast_shapes(shape, span.shape)
    if out_shape != shape:
        raise ValueError(
            f"[uniform] Cannot generate random values of shape {_fmt_shape(shape)} "
            f"from broadcasted shape {_fmt_shape(out_shape)}."
        )
    upper = _below_one(dtype)
    u = bits(key, shape).astype(_F32)
    np.divide(u, _UINT32_MAX_F32, out=u)
    np.minimum(u, upper, out=u)
    u = u.astype(dtype, copy=False)
    return _in(dtype, np.add, _in(dtype, np.multiply, span, u), lo)


def normal(key: np.ndarray, shape=(), np_dtype=np.float32, loc=None, scale=None) -> np.ndarray:
    """Normal samples: ``loc + scale * sqrt(2) * erfinv(uniform(-1, 1))``, with
    the uniform and erfinv in float32 and the scaling in ``np_dtype``."""
    dtype = np.dtype(np_dtype)
    shape = tuple(int(d) for d in shape)
    if dtype == np.complex64:
        return _complex_normal(key, shape, loc, scale)
    if not _is_floating(dtype):
        raise ValueError("[normal] Only floating point and complex64 types are supported.")
    samples = uniform(key, _NEXT_BELOW_MINUS_ONE, _F32(1), shape, _F32)
    applied_scale = np.array(math.sqrt(2.0), dtype=dtype)
    if scale is not None:
        applied_scale = _in(dtype, np.multiply, applied_scale, _as_array(scale).astype(dtype))
    samples = erfinv_f32(samples).astype(dtype)
    samples = _in(dtype, np.multiply, applied_scale, samples)
    if loc is not None:
        samples = _in(dtype, np.add, _as_array(loc).astype(dtype), samples)
    return samples


def _complex_normal(key, shape, loc, scale) -> np.ndarray:
    """complex64 normal: real and imaginary parts are erfinv(uniform(-1, 1)),
    each N(0, 1/2), taken from one float32 draw of shape ``shape + (2,)``."""
    samples = erfinv_f32(uniform(key, _NEXT_BELOW_MINUS_ONE, _F32(1), (*shape, 2), _F32))
    samples = np.ascontiguousarray(samples).view(np.complex64).reshape(shape)
    with np.errstate(all="ignore"):
        if scale is not None:
            samples = (_as_array(scale) * samples).astype(np.complex64)
        if loc is not None:
            samples = (_as_array(loc) + samples).astype(np.complex64)
    return samples


def randint(key: np.ndarray, low, high, shape=(), np_dtype=np.int32) -> np.ndarray:
    """Integers in ``[low, high)``: floor of a float32 uniform, clamped to
    ``[low, high - 1]`` (``high - 1`` computed in high's own dtype)."""
    dtype = np.dtype(np_dtype)
    if dtype.kind in "fc" or dtype.name == "bfloat16":
        raise ValueError("[randint] randint only accepts integer dtypes and bool.")
    low, high = _as_array(low), _as_array(high)
    u = uniform(key, low, high, shape, _F32)
    with np.errstate(all="ignore"):
        out = np.floor(u).astype(dtype)
        one = np.array(1, dtype=high.dtype)
        top = np.subtract(high, one, dtype=high.dtype) if high.dtype != np.bool_ else high ^ one
        return np.maximum(np.minimum(out, top.astype(dtype)), low.astype(dtype))


_BERNOULLI_SCALE = np.nextafter(_UINT32_MAX_F32, _F32(np.inf))  # p >= 1 -> always true


def bernoulli(key: np.ndarray, p=0.5, shape=None) -> np.ndarray:
    """Booleans, true with probability ``p``: ``bits < p * nextafter(2**32)``
    compared in float32."""
    p = _as_array(p)
    if not _is_floating(p.dtype):
        raise ValueError("[bernoulli] bernoulli probability `p` must be a float type.")
    shape = p.shape if shape is None else tuple(int(d) for d in shape)
    raw = bits(key, shape)
    ctype = _compute_type(p.dtype)
    with np.errstate(all="ignore"):
        threshold = p.astype(ctype) * ctype(_BERNOULLI_SCALE)
    res_shape = _broadcast_shapes(shape, threshold.shape)
    if res_shape != shape:
        raise ValueError("[bernoulli] shape of `p` is incompatible with argument `shape`.")
    return raw.astype(ctype) < threshold


def truncated_normal(key: np.ndarray, lower, upper, shape=None, np_dtype=np.float32) -> np.ndarray:
    """Normal samples restricted to ``[lower, upper]`` by inverting the CDF:
    ``sqrt(2) * erfinv(uniform(erf(lower/sqrt(2)), erf(upper/sqrt(2))))``,
    then clipped (JAX's method), all in ``np_dtype``."""
    dtype = np.dtype(np_dtype)
    if not _is_floating(dtype):
        raise ValueError("[trunc_normal] trunc_normal only accepts floating point dtypes.")
    lower, upper = _as_array(lower), _as_array(upper)
    if shape is None:
        shape = _broadcast_shapes(lower.shape, upper.shape)
    sqrt2 = np.array(math.sqrt(2.0), dtype=dtype)
    lower_t, upper_t = lower.astype(dtype), upper.astype(dtype)
    a = _unary_f32(_erff, _in(dtype, np.divide, lower_t, sqrt2))
    b = _unary_f32(_erff, _in(dtype, np.divide, upper_t, sqrt2))
    u = uniform(key, a, b, shape, dtype)
    out = _in(dtype, np.multiply, sqrt2, _unary_f32(erfinv_f32, u))
    return np.maximum(np.minimum(upper_t, out), lower_t)


def gumbel(key: np.ndarray, shape=(), np_dtype=np.float32) -> np.ndarray:
    """Standard Gumbel samples: ``-log(-log(uniform(shape)))`` in ``np_dtype``."""
    dtype = np.dtype(np_dtype)
    u = uniform(key, np.array(0, dtype), np.array(1, dtype), shape, dtype)
    with np.errstate(all="ignore"):
        return -_unary_f32(log_f32, -_unary_f32(log_f32, u))


def _categorical_inverse_cdf(key, logits: np.ndarray, shape) -> np.ndarray:
    """One distribution, many samples: search a uniform draw in the CDF of
    ``exp(logits - max)`` (O(N + M) memory instead of Gumbel's O(N * M))."""
    ctype = _compute_type(logits.dtype)
    x = logits.astype(ctype)
    m = x.max()
    if np.isinf(m):  # exp(x - m) is NaN; the distribution is uniform over the maxima
        w = (x == m).astype(ctype)
    else:
        with np.errstate(all="ignore"):
            w = _expf(x - m) if ctype == _F32 else np.exp(x - m)
    csum = np.cumsum(w, dtype=ctype)  # sequential, as MLX's CPU scan and sum
    cdf = np.concatenate([np.zeros(1, ctype), csum[:-1]])
    u = uniform(key, _F32(0), _F32(1), shape, _F32).astype(ctype) * csum[-1]
    return (np.searchsorted(cdf, u, side="right").astype(np.int64) - 1).astype(_U32)


def _categorical_impl(key, logits: np.ndarray, axis: int, shape: tuple[int, ...]) -> np.ndarray:
    n = logits.shape[axis]
    if n > 0 and logits.size == n and len(shape) > 0:
        return _categorical_inverse_cdf(key, logits.reshape(n), shape)
    offset = axis + len(shape) - logits.ndim + 1
    gumbel_shape = (*shape[:offset], n, *shape[offset:])
    g = gumbel(key, gumbel_shape, _F32)
    if g.size == 0 or logits.size == 0:
        raise ValueError("[argmax] Cannot argmax reduce zero size array.")
    ctype = _compute_type(logits.dtype)
    with np.errstate(all="ignore"):
        scores = g.astype(ctype) + logits.astype(ctype)
    # MLX's argmax, like NumPy's, returns the first maximum, and the first NaN if any.
    return np.argmax(scores, axis=offset).astype(_U32)


def categorical(
    key: np.ndarray, logits, axis: int = -1, shape=None, num_samples=None
) -> np.ndarray:
    """Indices (uint32) sampled from the unnormalised ``logits`` along ``axis``.

    With ``shape``/``num_samples`` over a single distribution it uses the
    inverse CDF; otherwise the Gumbel-max trick, ``argmax(gumbel + logits)``.
    """
    logits = np.asarray(logits)
    if shape is not None and num_samples is not None:
        raise ValueError("[categorical] At most one of shape or num_samples can be specified.")
    ndim = logits.ndim
    ax = axis + ndim if axis < 0 else axis
    if ax < 0 or ax >= ndim:
        raise IndexError(f"[categorical] Invalid axis {axis} for logits with {ndim} dimensions.")
    reduced = logits.shape[:ax] + logits.shape[ax + 1 :]
    if shape is not None:
        shape = tuple(int(d) for d in shape)
        if _broadcast_shapes(shape, reduced) != shape:
            raise ValueError(
                f"[categorical] Requested shape {_fmt_shape(shape)} is not broadcast "
                f"compatible with reduced logits shape{_fmt_shape(reduced)}."
            )
        return _categorical_impl(key, logits, ax, shape)
    if num_samples is not None:
        expanded = logits[..., None]
        return _categorical_impl(key, expanded, ax, (*reduced, int(num_samples)))
    return _categorical_impl(key, logits, ax, reduced)


def permutation(key: np.ndarray, x, axis: int = 0) -> np.ndarray:
    """A random permutation of ``arange(x)`` (uint32) for an int ``x``, or ``x``
    shuffled along ``axis``: a stable argsort of fresh random bits."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return np.argsort(bits(key, (int(x),)), kind="stable").astype(_U32)
    x = np.asarray(x)
    if not -x.ndim <= axis < x.ndim:
        raise IndexError("SmallVector out of range.")
    order = permutation(key, x.shape[axis])
    return np.take(x, order, axis=axis)


def laplace(
    key: np.ndarray, shape=(), np_dtype=np.float32, loc: float = 0.0, scale: float = 1.0
) -> np.ndarray:
    """Laplace samples by the inverse CDF: ``sign(u) * log1p(-|u|)`` for
    ``u ~ uniform(-1, 1)`` in float32, then ``loc + scale * x`` in ``np_dtype``."""
    dtype = np.dtype(np_dtype)
    if not _is_floating(dtype):
        raise ValueError("[laplace] Only real floating point types are supported.")
    samples = uniform(key, _NEXT_BELOW_MINUS_ONE, _F32(1), shape, _F32)
    with np.errstate(all="ignore"):
        if dtype == np.float64:  # -1.0 in float64 promotes the log1p to double
            tail = np.log1p(-1.0 * np.abs(samples).astype(np.float64))
        else:
            tail = log1p_f32(_F32(-1) * np.abs(samples))
        samples = (np.sign(samples).astype(tail.dtype) * tail).astype(dtype)
    loc, scale = _F32(loc), _F32(scale)  # MLX's binding takes C floats
    if scale != 1:
        samples = _in(dtype, np.multiply, np.array(scale, dtype=dtype), samples)
    if loc != 0:
        samples = _in(dtype, np.add, np.array(loc, dtype=dtype), samples)
    return samples
