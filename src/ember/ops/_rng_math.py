"""Bit-exact NumPy versions of the arithmetic inside PyTorch's CPU random kernels.

What lives here, and why each piece is written the way it is:

- `fma32` / `fma64`: fused multiply-add (one rounding). PyTorch's AVX2 build
  contracts `a*b + c` into FMA instructions; NumPy has no FMA, so float32 FMA is
  done in float64 (the product is exact there) with a check for the one case
  where rounding twice differs, and float64 FMA with Dekker's exact product.
- `log_f32` / `sincos_f32`: the 8-lane Cephes routines PyTorch's AVX2 build uses
  for float32 Box-Muller (`avx_mathfun.h`), step by step in float32, with FMA
  wherever GCC contracts one (a product whose only use is an add).
- `libm_*`: float64 log / log1p / sin / cos through the C library, as PyTorch
  calls it. NumPy's own SIMD log and log1p round differently from glibc, so they
  go through `math`; NumPy's sin / cos are used only where a probe shows they
  give the same bits as `math`.
- `randperm_swaps`: the sequential "swap r[i] with r[i + z_i]" shuffle resolved
  without a Python loop.

Everything works on whole arrays; nothing here knows about tensors or generators.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math

import numpy as np

f32 = np.float32
f64 = np.float64

# --- fused multiply-add ---------------------------------------------------------


def fma32(a, b, c) -> np.ndarray:
    """float32 fma(a, b, c) with a single rounding, for any float32 inputs."""
    a, b, c = np.asarray(a, f32), np.asarray(b, f32), np.asarray(c, f32)
    s = a.astype(f64)
    s = s * b  # exact: 24 + 24 bits fit in 53 (broadcasts if `a` is the scalar)
    s += c
    r = s.astype(f32)
    # Rounding s (already rounded once) to float32 is wrong only when s sits exactly
    # halfway between two floats (low 29 of its 52 mantissa bits are 1000...0) while
    # the exact sum was not; float32 subnormals have fewer bits, so check those too.
    low = s.view(np.uint64) & np.uint64(0x1FFFFFFF)
    suspect = low == np.uint64(0x10000000)
    suspect |= np.abs(r) < f32(2.0**-125)
    if suspect.any():
        idx = np.flatnonzero(suspect)
        shape = s.shape
        pa = np.broadcast_to(a, shape)[idx].astype(f64) * np.broadcast_to(b, shape)[idx]
        r = r.copy()
        r[idx] = _fma32_careful(pa, np.broadcast_to(c, shape)[idx].astype(f64))
    return r


def _fma32_careful(p: np.ndarray, c: np.ndarray) -> np.ndarray:
    """RN32(p + c) for an exact float64 product p: fix the double rounding on ties."""
    s = p + c
    r = s.astype(f32)
    other = np.nextafter(r, np.where(s > r, f32(np.inf), f32(-np.inf)).astype(f32))
    mid = (r.astype(f64) + other.astype(f64)) * 0.5
    bv = s - p
    err = (p - (s - bv)) + (c - bv)  # TwoSum: s + err == p + c exactly
    fix = (s == mid) & (err != 0) & np.isfinite(s)
    s2 = np.nextafter(s, np.where(err > 0, np.inf, -np.inf))
    return np.where(fix, s2.astype(f32), r)


_SPLIT = 134217729.0  # 2**27 + 1, Veltkamp's splitter


def _split(x):
    t = x * _SPLIT
    hi = t - (t - x)
    return hi, x - hi


def fma64(a, b, c) -> np.ndarray:
    """float64 fma(a, b, c): Dekker's exact product plus TwoSum, then one final rounding.

    NOTE: correct except when the residual sum itself rounds onto a midpoint, which
    needs ~2**-50 coincidences; no case was ever seen against torch."""
    a = np.asarray(a, f64)
    b = np.asarray(b, f64)
    c = np.asarray(c, f64)
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    bv = s - p
    t = (p - (s - bv)) + (c - bv)
    out = s + (t + e)
    # Infinite or NaN intermediates make the error terms meaningless.
    bad = ~np.isfinite(p) | ~np.isfinite(s)
    if np.any(bad):
        out = np.where(bad, p + c, out)
    return out


# --- Cephes float32 log and sincos (PyTorch's avx_mathfun.h, AVX2 build) -----------

_SQRTHF = f32(0.707106781186547524)
_LOG_P = [f32(v) for v in (
    7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
    -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1)]
_LOG_Q1 = f32(-2.12194440e-4)
_LOG_Q2 = f32(0.693359375)
_FOPI = f32(1.27323954473516)
_DP1 = f32(-0.78515625)
_DP2 = f32(-2.4187564849853515625e-4)
_DP3 = f32(-3.77489497744594108e-8)
_SIN_P = [f32(v) for v in (-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1)]
_COS_P = [f32(v) for v in (2.443315711809948e-5, -1.388731625493765e-3, 4.166664568298827e-2)]


class _Lanes:
    """Scratch buffers for `n` lanes, so the Cephes kernels run without allocating."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.a, self.b, self.c, self.d, self.e = (np.empty(n, f32) for _ in range(5))
        self.w64, self.x64, self.y64 = (np.empty(n, f64) for _ in range(3))
        self.u = np.empty(n, np.uint32)
        self.j = np.empty(n, np.int32)
        self.mask = np.empty(n, bool)

    def fma(self, y: np.ndarray, x64: np.ndarray, c, out: np.ndarray) -> np.ndarray:
        """out = fma(y, x, c) for float32 y, c and x given as float64, rounded through
        float64 (twice). NOTE: exact here without fma32's midpoint check: every input of
        PyTorch's float32 normal kernel was checked against torch and none hits a tie."""
        w = self.w64[: len(y)]
        np.copyto(w, y)
        np.multiply(w, x64, out=w)
        np.add(w, c, out=w)
        np.copyto(out, w, casting="same_kind")
        return out


def log_f32(x: np.ndarray, ws: _Lanes | None = None) -> np.ndarray:
    """Cephes natural log of positive normal float32 values, as PyTorch's AVX2 kernel
    (a fresh array)."""
    n = len(x)
    ws = ws or _Lanes(n)
    e, t, z, y, tmp = ws.a[:n], ws.b[:n], ws.c[:n], ws.d[:n], ws.e[:n]
    u, small, t64 = ws.u[:n], ws.mask[:n], ws.x64[:n]
    bits = x.view(np.uint32)
    np.right_shift(bits, 23, out=u)
    iu = u.view(np.int32)
    np.subtract(iu, 126, out=iu)
    np.copyto(e, iu, casting="unsafe")
    np.bitwise_and(bits, 0x807FFFFF, out=u)
    np.bitwise_or(u, 0x3F000000, out=u)
    m = u.view(f32)
    np.less(m, _SQRTHF, out=small)
    np.copyto(tmp, small)  # 1.0 where m < sqrt(1/2)
    np.subtract(e, tmp, out=e)
    # m < sqrt(1/2): t = 2m - 1, else t = m - 1 (both exact).
    np.multiply(tmp, m, out=tmp)
    np.subtract(m, f32(1), out=t)
    np.add(t, tmp, out=t)
    np.multiply(t, t, out=z)
    np.copyto(t64, t)
    np.multiply(t64, _LOG_P[0], out=ws.w64[:n])
    np.add(ws.w64[:n], _LOG_P[1], out=ws.w64[:n])
    np.copyto(y, ws.w64[:n], casting="same_kind")
    for p in _LOG_P[2:]:
        ws.fma(y, t64, p, y)
    np.multiply(y, t, out=y)
    np.multiply(e, _LOG_Q1, out=tmp)
    np.copyto(ws.y64[:n], z)
    ws.fma(y, ws.y64[:n], tmp, y)  # NOTE: GCC fuses the y*z product, not e*q1
    np.multiply(z, f32(0.5), out=tmp)
    np.subtract(y, tmp, out=y)
    np.add(y, t, out=y)
    np.multiply(e, _LOG_Q2, out=tmp)  # exact: e has <= 8 bits, q2 has 9
    return np.add(y, tmp)


def sincos_f32(x: np.ndarray, ws: _Lanes | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Cephes sin and cos of non-negative float32 values, as PyTorch's AVX2 kernel
    (fresh arrays)."""
    n = len(x)
    ws = ws or _Lanes(n)
    yf, r, z, tmp = ws.a[:n], ws.b[:n], ws.c[:n], ws.e[:n]
    j, r64, z64 = ws.j[:n], ws.x64[:n], ws.y64[:n]
    np.multiply(x, _FOPI, out=tmp)
    np.copyto(j, tmp, casting="unsafe")  # truncation toward zero
    np.add(j, 1, out=j)
    np.bitwise_and(j, ~1, out=j)
    np.copyto(yf, j, casting="unsafe")
    # Cody-Waite reduction r = x - j*pi/4 in three fused steps; the first two
    # products are exact (j has <= 4 bits, DP1 8 bits, DP2 11 bits), so plain ops.
    np.multiply(yf, _DP1, out=tmp)
    np.add(x, tmp, out=r)
    np.multiply(yf, _DP2, out=tmp)
    np.add(r, tmp, out=r)
    np.copyto(r64, yf)
    np.multiply(r64, _DP3, out=r64)
    np.add(r64, r, out=r64)
    np.copyto(r, r64, casting="same_kind")
    np.multiply(r, r, out=z)
    np.copyto(z64, z)
    # cos polynomial
    yc = np.empty(n, f32)
    np.multiply(z64, _COS_P[0], out=ws.w64[:n])
    np.add(ws.w64[:n], _COS_P[1], out=ws.w64[:n])
    np.copyto(yc, ws.w64[:n], casting="same_kind")
    ws.fma(yc, z64, _COS_P[2], yc)
    np.multiply(yc, z, out=yc)
    np.multiply(z, f32(-0.5), out=tmp)
    ws.fma(yc, z64, tmp, yc)
    np.add(yc, f32(1), out=yc)
    # sin polynomial
    ys = np.empty(n, f32)
    np.multiply(z64, _SIN_P[0], out=ws.w64[:n])
    np.add(ws.w64[:n], _SIN_P[1], out=ws.w64[:n])
    np.copyto(ys, ws.w64[:n], casting="same_kind")
    ws.fma(ys, z64, _SIN_P[2], ys)
    np.multiply(ys, z, out=ys)
    np.copyto(r64, r)
    ws.fma(ys, r64, r, ys)
    # Bit 1 of j swaps the polynomials; bit 2 gives sin's sign, bit 2 of j-2 cos's
    # (inverted). Done on the bits: a select by mask, then sign flips by xor.
    sel = ws.u[:n].view(np.int32)
    np.bitwise_and(j, 2, out=sel)
    np.left_shift(sel, 30, out=sel)
    np.right_shift(sel, 31, out=sel)  # arithmetic: all ones where bit 1 is set
    sb, cb = ys.view(np.int32), yc.view(np.int32)
    diff = np.bitwise_xor(sb, cb)
    np.bitwise_and(diff, sel, out=diff)
    np.bitwise_xor(sb, diff, out=sb)  # now sin
    np.bitwise_xor(cb, diff, out=cb)  # now cos
    np.bitwise_and(j, 4, out=sel)
    np.left_shift(sel, 29, out=sel)
    np.bitwise_xor(sb, sel, out=sb)
    np.subtract(j, 2, out=j)
    np.invert(j, out=j)
    np.bitwise_and(j, 4, out=j)
    np.left_shift(j, 29, out=j)
    np.bitwise_xor(cb, j, out=cb)
    sin, cos = ys, yc
    return sin, cos


_TWO_PI_F32 = f32(2.0 * math.pi)
_CHUNK = 8192  # blocks of 16 per pass: keeps the scratch buffers in cache


def box_muller_f32_avx2(u: np.ndarray) -> np.ndarray:
    """PyTorch's `normal_fill_16_AVX2` before its final fma, on blocks of 16 uniforms.

    `u` has shape (blocks, 16); lanes 0-7 feed the log, lanes 8-15 the angle. Returns
    r*cos in lanes 0-7 and r*sin in lanes 8-15 (a fresh array).
    """
    nb = u.shape[0]
    out = np.empty((nb, 16), f32)
    ws = _Lanes(min(nb, _CHUNK) * 8)
    u1 = np.empty(ws.n, f32)
    u2 = np.empty(ws.n, f32)
    for s in range(0, nb, _CHUNK):
        blk = u[s:s + _CHUNK]
        k = blk.shape[0] * 8
        a, b = u1[:k].reshape(-1, 8), u2[:k].reshape(-1, 8)
        np.subtract(f32(1), blk[:, :8], out=a)
        np.multiply(blk[:, 8:], _TWO_PI_F32, out=b)
        radius = log_f32(u1[:k], ws)
        np.multiply(radius, f32(-2), out=radius)
        np.sqrt(radius, out=radius)
        sin, cos = sincos_f32(u2[:k], ws)
        o = out[s:s + _CHUNK]
        np.multiply(radius.reshape(-1, 8), cos.reshape(-1, 8), out=o[:, :8])
        np.multiply(radius.reshape(-1, 8), sin.reshape(-1, 8), out=o[:, 8:])
    return out


# --- libm through Python (bit-identical to what PyTorch calls) --------------------

def _map(fn, x: np.ndarray) -> np.ndarray:
    """`fn` (a scalar libm function) over every element, in chunks to bound memory."""
    flat = x.ravel()
    out = np.empty(flat.size, f64)
    for i in range(0, flat.size, 65536):
        part = flat[i:i + 65536]
        out[i:i + part.size] = np.fromiter(map(fn, part.tolist()), f64, count=part.size)
    return out.reshape(x.shape)


def _looped(name: str, fn, x: np.ndarray) -> np.ndarray:
    """The C library's float64 `name` over `x`: its loop in C (csrc/libm_maps.c) where
    native kernels run, else `fn` (Python's math: the same C function) element by element."""
    from ._cephes_bessel import _libm_native  # (it imports this module's users)

    out = _libm_native(name, x, None) if x.dtype == f64 else None
    return _map(fn, x) if out is None else out


def libm_log(x: np.ndarray) -> np.ndarray:
    return _looped("log", math.log, x)


def libm_log1p(x: np.ndarray) -> np.ndarray:
    return _looped("log1p", math.log1p, x)


def _exp(v: float) -> float:
    try:
        return math.exp(v)
    except OverflowError:  # (C's exp gives inf past its range)
        return math.inf


def libm_exp(x: np.ndarray) -> np.ndarray:
    return _looped("exp", _exp, x)


_TRIG_OK: list[bool] = []


def _numpy_trig_matches() -> bool:
    """Does NumPy's float64 sin / cos give libm's bits here? (probed once)"""
    if not _TRIG_OK:
        x = np.random.RandomState(12345).random_sample(4096) * (2 * math.pi)
        x = np.concatenate([x, np.linspace(0, 2 * math.pi, 1001)])
        ok = np.array_equal(np.sin(x), _map(math.sin, x)) and \
            np.array_equal(np.cos(x), _map(math.cos, x))
        _TRIG_OK.append(bool(ok))
    return _TRIG_OK[0]


def libm_sin(x: np.ndarray) -> np.ndarray:
    return np.sin(x) if _numpy_trig_matches() else _looped("sin", math.sin, x)


def libm_cos(x: np.ndarray) -> np.ndarray:
    return np.cos(x) if _numpy_trig_matches() else _looped("cos", math.cos, x)


_LIBM: list = []


def _libm():
    if not _LIBM:
        name = ctypes.util.find_library("m")
        lib = None
        if name:
            try:
                lib = ctypes.CDLL(name)
                for fn in ("logf", "sinf", "cosf"):
                    getattr(lib, fn).restype = ctypes.c_float
                    getattr(lib, fn).argtypes = [ctypes.c_float]
                lib.lgamma.restype = ctypes.c_double
                lib.lgamma.argtypes = [ctypes.c_double]
            except (OSError, AttributeError):
                lib = None
        _LIBM.append(lib)
    return _LIBM[0]


def libm_f32(name: str, x: np.ndarray) -> np.ndarray:
    """A float32 libm function (`logf`, `sinf`, `cosf`) elementwise; slow, for the
    scalar ('default') kernel profile only."""
    lib = _libm()
    if lib is None:
        fn = getattr(math, name[:-1])
        return np.array([fn(v) for v in x.ravel().tolist()], f32).reshape(x.shape)
    fn = getattr(lib, name)
    return np.fromiter(map(fn, x.ravel().tolist()), f32, count=x.size).reshape(x.shape)


def libm_lgamma(v: float) -> float:
    lib = _libm()
    return lib.lgamma(v) if lib is not None else math.lgamma(v)


# --- randperm ---------------------------------------------------------------------

def randperm_swaps(z: np.ndarray, n: int) -> np.ndarray:
    """The permutation PyTorch's small-n randperm builds from offsets `z`:

        r = arange(n); for i in range(n - 1): swap(r[i], r[i + z[i]])

    Position i is final after step i, so r[i] is the value sitting at j_i = i + z_i
    just before step i. That value is whatever the last earlier step aimed at j_i
    moved there (the value at that step's own position), or j_i itself. Resolved
    with sorted lookups and pointer jumping, O(n log n) without a Python loop.
    """
    if n <= 1:
        return np.arange(n, dtype=np.int64)
    steps = n - 1
    i = np.arange(steps, dtype=np.int64)
    j = i + z.astype(np.int64)
    # prev[k]: the last step m < k with j[m] == j[k] (or -1); and last step m < k
    # with j[m] == k, which gives the value sitting at position k before step k.
    keys = j * n + i  # unique; sorted by target position, then by step
    keys.sort()
    js, is_ = np.divmod(keys, n)
    same = np.empty(steps, bool)
    same[0] = False
    same[1:] = js[1:] == js[:-1]
    prev_same = np.full(steps, -1, np.int64)
    prev_same[is_[same]] = is_[np.flatnonzero(same) - 1]
    # For position k (query "last m < k with j[m] == k"): search in the sorted keys.
    pos = np.searchsorted(keys, i * n + i, side="left") - 1
    valid = pos >= 0
    pos_c = np.where(valid, pos, 0)
    hit = valid & (js[pos_c] == i)
    into = np.where(hit, is_[pos_c], -1)  # last step that targeted position k
    # a[k] = value at position k before step k = a[into[k]] if into[k] >= 0 else k.
    link = into.copy()
    val = np.where(link < 0, i, -1)
    while True:
        pending = val < 0
        if not pending.any():
            break
        nxt = link[pending]
        resolved = val[nxt]
        done = resolved >= 0
        idx = np.flatnonzero(pending)
        val[idx[done]] = resolved[done]
        link[idx[~done]] = link[nxt[~done]]
    # r[k] = a[prev_same[k]] if that exists (the value moved into j_k), else j_k.
    out = np.empty(n, np.int64)
    has = prev_same >= 0
    out[:steps] = np.where(has, val[np.where(has, prev_same, 0)], j)
    # The last position holds whatever ended up there: the one value not yet used.
    last = n * (n - 1) // 2 - int(out[:steps].sum())
    out[steps] = last
    return out
