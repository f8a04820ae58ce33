"""MLX's products beyond `_ops`: kron, vecdot, 1-D convolution and the Walsh-Hadamard
transform (the gathered / segmented / block-masked matmuls, re-exported here, live in
`_structured_mm`). Each is composed from `mx` ops, so each has MLX's dtype rules and
ember's derivatives."""

from __future__ import annotations

import math

import numpy as np

import ember as E

from . import _dtypes as D
from . import _ops as O
from ._array import _wrap, array, cast
from ._structured_mm import block_masked_mm, gather_mm, segmented_mm


def _arr(x) -> array:
    return x if isinstance(x, array) else array(x)


def kron(a, b, /) -> array:
    """The Kronecker product (the lower-rank operand gets leading 1s)."""
    a, b = _arr(a), _arr(b)
    n = max(a.ndim, b.ndim)
    sa = (1,) * (n - a.ndim) + a.shape
    sb = (1,) * (n - b.ndim) + b.shape
    ea = O.reshape(a, [x for d in sa for x in (d, 1)])
    eb = O.reshape(b, [x for d in sb for x in (1, d)])
    return O.reshape(O.multiply(ea, eb), [x * y for x, y in zip(sa, sb)])


def vecdot(a, b, /, *, axis: int = -1) -> array:
    """sum(conj(a) * b) along `axis` (read against `a`'s dimensions)."""
    a, b = _arr(a), _arr(b)
    if not -a.ndim <= axis < a.ndim:
        raise IndexError("[vecdot] axis is out of bounds.")
    if axis % a.ndim >= b.ndim:
        raise ValueError("[vecdot] axis is out of bounds.")
    if a._dtype.kind == "c":
        a = _wrap(E.conj(a._t).resolve_conj(), a._dtype)
    return O.sum(O.multiply(a, b), axis)


def convolve(a, v, /, mode: str = "full") -> array:
    """The discrete convolution of two 1-D float arrays ("full", "same" or "valid"); the
    longer one is the signal."""
    a, v = _arr(a), _arr(v)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError("[convolve] Inputs must be 1D.")
    if a.size == 0 or v.size == 0:
        raise ValueError("[convolve] Inputs cannot be empty.")
    if v.size > a.size:
        a, v = v, a
    n, m = a.size, v.size
    pad = {"full": m - 1, "same": None, "valid": 0}.get(mode, -1)
    if pad == -1:
        raise ValueError("[convolve] Invalid mode.")
    dt = D.promote_types(a._dtype, v._dtype)
    if a._dtype.kind != "f" or dt.kind != "f":  # (the signal's own type, before promotion)
        bad = a._dtype if a._dtype.kind != "f" else dt
        raise ValueError(f"[conv] Invalid input array with type {bad.name}. Convolution "
                         "currently only supports floating point types")
    x = a.astype(dt)._t.reshape(1, 1, n)
    w = E.flip(v.astype(dt)._t, (0,)).reshape(1, 1, m)
    if mode == "same":
        lo = (m - 1) // 2
        x = E.nn.functional.pad(x, [m - 1 - lo, lo])
        pad = 0
    return _wrap(E.nn.functional.conv1d(x, w, padding=pad).reshape(-1), dt)


# MLX's base Hadamard matrices for n = m * 2^k (mlx/backend/common/hadamard.h, from N. J. A.
# Sloane's library; the same as the 0.32.4 wheel's transform of the identity): row j holds
# the signs with which the inputs enter output j. Only the 12 x 12 one is symmetric.
_BASES = {
    12: "+-++++++++++ --+-+-+-+-+- +++-++----++ +---+--+-++- +++++-++---- +-+---+--+-+ "
        "++--+++-++-- +--++---+--+ ++----+++-++ +--+-++---+- ++++----+++- +-+--+-++---",
    20: "+----+----++--++-++- -+----+---+++---+-++ --+----+---+++-+-+-+ "
        "---+----+---+++++-+- ----+----++--++-++-+ -+++++-----+--+++--+ "
        "+-+++-+---+-+--+++-- ++-++--+---+-+--+++- +++-+---+---+-+--+++ "
        "++++-----++--+-+--++ --++-+-++-+-----++++ ---++-+-++-+---+-+++ "
        "+---++-+-+--+--++-++ ++---++-+----+-+++-+ -++---++-+----+++++- "
        "-+--+--++-+----+---- +-+-----++-+----+--- -+-+-+---+--+----+-- "
        "--+-+++------+----+- +--+--++------+----+",
    28: "+------++----++-+--+-+--++-- -+-----+++-----+-+--+-+--++- "
        "--+-----+++---+-+-+----+--++ ---+-----+++---+-+-+-+--+--+ "
        "----+-----+++---+-+-+++--+-- -----+-----++++--+-+--++--+- "
        "------++----++-+--+-+--++--+ --++++-+-------++--+++-+--+- "
        "---++++-+-----+-++--+-+-+--+ +---+++--+----++-++--+-+-+-- "
        "++---++---+----++-++--+-+-+- +++---+----+----++-++--+-+-+ "
        "++++--------+-+--++-++--+-+- -++++--------+++--++--+--+-+ "
        "-+-++-++--++--+--------++++- +-+-++--+--++--+--------++++ "
        "-+-+-++--+--++--+----+---+++ +-+-+-++--+--+---+---++---++ "
        "++-+-+-++--+------+--+++---+ -++-+-+-++--+------+-++++--- "
        "+-++-+---++--+------+-++++-- -++--++-+-++-+++----++------ "
        "+-++--++-+-++-+++-----+----- ++-++---+-+-++-+++-----+---- "
        "-++-++-+-+-+-+--+++-----+--- --++-++++-+-+----+++-----+-- "
        "+--++-+-++-+-+----+++-----+- ++--++-+-++-+-+----++------+",
}
_SIGNS: dict = {}


def _signs(m: int):
    """The m x m base matrix as a float32 tensor of +-1 (made once)."""
    if m not in _SIGNS:
        rows = [[1.0 if c == "+" else -1.0 for c in row] for row in _BASES[m].split()]
        _SIGNS[m] = E.tensor(rows, dtype=E.float32)
    return _SIGNS[m]


def _decompose(n: int) -> tuple:
    """(m, 2^k) with n = m * 2^k, m in (1, 12, 20, 28), as MLX's CPU kernel splits n."""
    m = next((f for f in (12, 20, 28) if n % f == 0), 1) if n & (n - 1) else 1
    p = n // m
    if p & (p - 1):
        # NOTE: MLX takes the first m dividing n without checking that n / m is a power of
        # two; its butterflies then run on that remainder (n = 36: on blocks of 3), giving
        # numbers of no meaning or reading out of bounds. Such n are refused here.
        raise ValueError("[hadamard] Only supports n = m*2^k where m in (1, 12, 20, 28).")
    if p > 1 << 26:
        raise ValueError("[hadamard] Only supports n = m*2^k where k <= 26")
    return m, p


def hadamard_transform(a, scale: float | None = None) -> array:
    """The Walsh-Hadamard transform along the last axis, times `scale` (1/sqrt(n) by
    default), for n = m * 2^k: the matrix is the Kronecker product of MLX's m x m base
    (m in 12, 20, 28; none for m = 1) and Sylvester's 2^k one. Integer inputs become
    float32.

    The operations are MLX's CPU kernel's, in its order, so values are MLX's bit for bit:
    the butterflies in the input's dtype, lowest bit first, the scale applied in float32
    in the last one; with a base matrix, each output's +-sum over the m blocks in float32,
    from 0, block by block, then the scale."""
    a = _arr(a)
    if a.size == 0:
        raise ValueError("[hadamard_transform] Does not support empty arrays.")
    n = a.shape[-1] if a.ndim else 1
    scale = float(np.float32(1.0 / math.sqrt(n) if scale is None else scale))
    dt = a._dtype if a._dtype.kind == "f" else D.float32
    if n == 1:
        return a if scale == 1.0 else O.multiply(a, array(scale, dt))
    m, p = _decompose(n)
    if dt is D.float64:
        raise ValueError("[hadamard] Unsupported type.")
    lead, k = a.shape[:-1], p.bit_length() - 1
    # (a complex input keeps its real part, as MLX's cast to float32 does)
    t = E.real(a._t) if a._dtype.kind == "c" else cast(a._t, a._dtype, dt)
    t = t.reshape(*lead, m, *([2] * k))
    for j in reversed(range(k)):
        d = len(lead) + 1 + j
        x0, x1 = E.select(t, d, 0), E.select(t, d, 1)
        t = E.stack([x0 + x1, x0 - x1], dim=d)
    t = t.reshape(*lead, m, p)
    if m == 1:
        t = (t.to(E.float32) * scale).to(dt.carrier)
    else:
        # NOTE: the derivative is the transposed matrix's transform, where MLX's VJP is the
        # transform itself: the same for 2^k and m = 12 (symmetric), not for m = 20, 28,
        # whose MLX gradients are wrong (its JVP is right).
        x, signs = t.to(E.float32), _signs(m)
        acc = E.zeros(*lead, m, p, dtype=E.float32)
        for c in range(m):
            acc = acc + signs[:, c:c + 1] * E.narrow(x, -2, c, 1)
        t = (acc * scale).to(dt.carrier)
    return _wrap(t.reshape(a.shape), dt)


__all__ = ["block_masked_mm", "convolve", "gather_mm", "hadamard_transform", "kron",
           "segmented_mm", "vecdot"]
