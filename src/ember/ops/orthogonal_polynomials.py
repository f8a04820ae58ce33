"""The classical orthogonal polynomials of `torch.special`: Chebyshev T, U, V, W (plain on
[-1, 1] and shifted to [0, 1]), Hermite H (physicists') and He (probabilists'), Laguerre L
and Legendre P, each `f(x, n)` evaluated elementwise.

Each is a member of the `binary` family with no derivative (PyTorch records no graph for
them). The kernels follow PyTorch's scheme, in the inputs' own dtype so that float32 rounds
as there: the degree is truncated to an integer (a non-finite degree counts as negative),
a negative degree gives 0, the endpoints have closed forms, Chebyshev polynomials of high
degree inside (-1, 1) use their trigonometric forms (T_n(cos t) = cos(n t) ...), and
everything else runs the three-term recurrence, which stops once it reaches NaN.

NOTE: PyTorch's CPU kernels are compiled with multiply-add contraction, and each
recurrence step `a * q - b * p` comes out as fma(a, q, -(b * p)); the steps here are
written so (with `_fma.fma`), which makes them agree bit for bit in float32 and float64.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor
from ._arg_parser_text import invalid_combination
from ._common import write_out
from ._fma import fma
from .binary import binary_p, member
from .registry import apply, nondifferentiable
from .unary import not_implemented


def _degree(n: np.ndarray) -> np.ndarray:
    """The integer degree: truncated; NaN, +-inf and values past int64 count as -1."""
    ok = np.isfinite(n) & (np.abs(n) < 2.0 ** 63)
    return np.where(ok, np.trunc(np.where(ok, n, 0)), -1).astype(np.int64)


def _recurrence(n, q0, q1, step, *, stop_at_nan: bool = True):
    """q_n elementwise, where q_j = step(j, q_{j-1}, q_{j-2}) for j = 2 .. n (callers mask
    the elements with n < 2); with `stop_at_nan`, an element stops once its value is NaN."""
    p, q = q0, q1
    top = int(n.max()) if n.size else 0
    for j in range(2, top + 1):
        live = n >= j
        if stop_at_nan:
            live &= ~np.isnan(q)
        if not live.any():
            break
        r = step(j, q, p)
        p, q = np.where(live, q, p), np.where(live, r, q)
    return q


def _rounded(fn):
    """`fn` correctly rounded for float32 (through float64, as glibc's float functions that
    PyTorch calls are; NumPy's own float32 loops are not)."""
    def f(a):
        return fn(a.astype(np.float64)).astype(a.dtype) if a.dtype.itemsize == 4 else fn(a)

    return f


_cos, _sin, _acos = _rounded(np.cos), _rounded(np.sin), _rounded(np.arccos)


def _by_parity(n, even, odd):
    return np.where(n % 2 == 0, even, odd)


# The four Chebyshev kinds, on y in [-1, 1]: (value at y = 1, value at y = -1, the
# trigonometric form used for large degree inside (-1, 1), the degree-1 polynomial).
def _t_trig(y, n, t):
    return _cos(n * t)


def _u_trig(y, n, t):
    s = _sin(t)
    safe = np.where(s != 0, s, 1)
    return np.where(s != 0, _sin((n + 1) * t) / safe, (n + 1) * _cos((n + 1) * t) / y)


def _v_trig(y, n, t):
    half = t / 2
    return np.where(_sin(half) != 1, _cos((n + 0.5) * t) / _cos(half),
                    _by_parity(n, 2 * n + 1, -(2 * n + 1)))


def _w_trig(y, n, t):
    half = t / 2
    c = _cos(half) != 1
    edge = np.where(y > 0, 2 * n + 1, _by_parity(n, 1, -1))
    return np.where(c, _sin((n + 0.5) * t) / np.where(c, _sin(half), 1), edge)


_KINDS = {
    "t": (lambda n: 1, lambda n: _by_parity(n, 1, -1), _t_trig, lambda y: y),
    "u": (lambda n: n + 1, lambda n: _by_parity(n, n + 1, -(n + 1)), _u_trig, lambda y: y + y),
    "v": (lambda n: 1, lambda n: _by_parity(n, 2 * n + 1, -(2 * n + 1)), _v_trig,
          lambda y: y + y - 1),
    "w": (lambda n: 2 * n + 1, lambda n: _by_parity(n, 1, -1), _w_trig, lambda y: y + y + 1),
}


def _chebyshev(x, n, kind: str, trig_from: int, shifted: bool):
    """Chebyshev polynomial of `kind` at x (at 2x - 1 when `shifted`); degrees above
    `trig_from` inside (-1, 1) take the trigonometric form."""
    at_one, at_minus_one, trig, first = _KINDS[kind]
    d = x.dtype
    y = x + x - d.type(1) if shifted else x
    top, bottom = (x == 1, x == 0) if shifted else (y == 1, y == -1)
    out = _recurrence(n, np.ones_like(y), first(y), lambda j, q, p: fma(y + y, q, -p))
    out = np.where(n == 1, first(y), out)
    out = np.where(n == 0, 1, out)
    inside = (n > trig_from) & (np.abs(y) < 1)
    if inside.any():
        t = _acos(np.where(inside, y, 0))
        out = np.where(inside, trig(y, n.astype(d), t), out)
    out = np.where(bottom, at_minus_one(n), out)
    out = np.where(top, at_one(n), out)
    return np.where(n < 0, 0, out)


def _hermite(x, n, physicists: bool):
    limit = 128 if x.dtype.itemsize == 4 else 512
    d = x.dtype
    if physicists:  # H_j = 2x H_{j-1} - 2(j-1) H_{j-2}
        first = x + x
        out = _recurrence(n, np.ones_like(x), first,
                          lambda j, q, p: fma(x + x, q, -(d.type(2 * (j - 1)) * p)),
                          stop_at_nan=False)
    else:  # He_j = x He_{j-1} - (j-1) He_{j-2}
        first = x
        out = _recurrence(n, np.ones_like(x), first,
                          lambda j, q, p: fma(x, q, -(d.type(j - 1) * p)), stop_at_nan=False)
    out = np.where(n > limit, np.nan, out)
    out = np.where(n == 1, first, out)
    out = np.where(n == 0, 1, out)
    return np.where(n < 0, 0, out)


def _laguerre(x, n):
    d = x.dtype
    one = d.type(1)
    # (j) L_j = (2(j-1) + 1 - x) L_{j-1} - (j-1) L_{j-2}
    out = _recurrence(n, np.ones_like(x), one - x,
                      lambda j, q, p: fma(d.type(2 * (j - 1)) + (one - x), q,
                                          -(d.type(j - 1) * p)) / d.type(j))
    out = np.where(n == 1, one - x, out)
    out = np.where((n == 0) | (x == 0), 1, out)
    return np.where(n < 0, 0, out)


def _legendre(x, n):
    d = x.dtype
    # (j) P_j = (2j - 1) x P_{j-1} - (j-1) P_{j-2}
    out = _recurrence(n, np.ones_like(x), x,
                      lambda j, q, p: fma(d.type(2 * j - 1) * x, q, -(d.type(j - 1) * p))
                      / d.type(j))
    out = np.where(n == 1, x, out)
    out = np.where(n == 0, 1, out)
    out = np.where(np.abs(x) == 1, _by_parity(n, 1, np.where(x > 0, 1, -1)), out)
    return np.where(n < 0, 0, out)


def _kernel(fn, **params):
    """A (x, n) kernel over arrays of one float dtype, computing in that dtype."""
    def kernel(x, n):
        shape = np.broadcast_shapes(np.shape(x), np.shape(n))
        d = np.asarray(x).dtype
        xa, na = np.broadcast_arrays(np.atleast_1d(np.asarray(x, d)),
                                     np.atleast_1d(np.asarray(n, d)))
        with np.errstate(all="ignore"):
            out = fn(np.ascontiguousarray(xa), _degree(na), **params)
        return np.asarray(out, d).reshape(shape)

    kernel.__name__ = fn.__name__
    return kernel


_SPECS = {  # name: (kernel, params)
    "chebyshev_polynomial_t": (_chebyshev, dict(kind="t", trig_from=6, shifted=False)),
    "chebyshev_polynomial_u": (_chebyshev, dict(kind="u", trig_from=8, shifted=False)),
    "chebyshev_polynomial_v": (_chebyshev, dict(kind="v", trig_from=8, shifted=False)),
    "chebyshev_polynomial_w": (_chebyshev, dict(kind="w", trig_from=8, shifted=False)),
    "shifted_chebyshev_polynomial_t": (_chebyshev, dict(kind="t", trig_from=6, shifted=True)),
    "shifted_chebyshev_polynomial_u": (_chebyshev, dict(kind="u", trig_from=6, shifted=True)),
    "shifted_chebyshev_polynomial_v": (_chebyshev, dict(kind="v", trig_from=6, shifted=True)),
    "shifted_chebyshev_polynomial_w": (_chebyshev, dict(kind="w", trig_from=4, shifted=True)),
    "hermite_polynomial_h": (_hermite, dict(physicists=True)),
    "hermite_polynomial_he": (_hermite, dict(physicists=False)),
    "laguerre_polynomial_l": (_laguerre, {}),
    "legendre_polynomial_p": (_legendre, {}),
}


def _operands(name: str, x, n):
    """x and n as tensors of their common float dtype (integers and bool: the default
    float), with PyTorch's refusals."""
    from .creation import scalar_tensor

    if not isinstance(x, Tensor) and not isinstance(n, Tensor) or not all(
            isinstance(v, (Tensor, bool, int, float, np.number)) for v in (x, n)):
        sigs = ("(Tensor x, Tensor n, *, Tensor out = None)",
                "(Number x, Tensor n, *, Tensor out = None)",
                "(Tensor x, Number n, *, Tensor out = None)")
        raise invalid_combination(f"special_{name}", sigs, (x, n), {})
    like = x if isinstance(x, Tensor) else n
    d = dt.result_type(x, n)
    if d._kind < 2:
        d = dt.get_default_dtype()
    if d.is_complex or d.itemsize == 2:
        raise not_implemented(f"{name}_cpu", d)
    x = x.to(d) if isinstance(x, Tensor) else scalar_tensor(x, dtype=d, device=like.device)
    n = n.to(d) if isinstance(n, Tensor) else scalar_tensor(n, dtype=d, device=like.device)
    return x, n


def _public(name: str):
    fn, params = _SPECS[name]
    m = member(f"special_{name}", _kernel(fn, **params))
    nondifferentiable(m)  # PyTorch records no graph for these

    def op(x, n, *, out=None) -> Tensor:
        a, b = _operands(name, x, n)
        return write_out(apply(binary_p, a, b, fn=m), out)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"torch.special.{name}(x, n): the polynomial of degree n at x, elementwise."
    return op


chebyshev_polynomial_t = _public("chebyshev_polynomial_t")
chebyshev_polynomial_u = _public("chebyshev_polynomial_u")
chebyshev_polynomial_v = _public("chebyshev_polynomial_v")
chebyshev_polynomial_w = _public("chebyshev_polynomial_w")
shifted_chebyshev_polynomial_t = _public("shifted_chebyshev_polynomial_t")
shifted_chebyshev_polynomial_u = _public("shifted_chebyshev_polynomial_u")
shifted_chebyshev_polynomial_v = _public("shifted_chebyshev_polynomial_v")
shifted_chebyshev_polynomial_w = _public("shifted_chebyshev_polynomial_w")
hermite_polynomial_h = _public("hermite_polynomial_h")
hermite_polynomial_he = _public("hermite_polynomial_he")
laguerre_polynomial_l = _public("laguerre_polynomial_l")
legendre_polynomial_p = _public("legendre_polynomial_p")

__all__ = list(_SPECS)
