"""Special functions: the gamma family (lgamma, digamma, polygamma, mvlgamma, Hurwitz zeta,
regularised incomplete gamma), Bessel J0/J1/Y0/Y1, modified Bessel I0/I1/K0/K1 (plain and
exp-scaled), spherical j0, Airy Ai, the normal distribution (ndtr, ndtri, log_ndtr), erfcx,
xlog1py and entr; and heaviside's primitive (so that its backward refuses, as PyTorch's does).

The kernels, built from the math because NumPy has none of these, are in `_special_math.py`
(float64, rounded once) and, where they replay PyTorch's Cephes algorithms in the input's
dtype, `_cephes_bessel*.py`, `_cephes_airy.py` and `_cephes_igamma.py`. Each one-input
function is a member of the `unary` family (`unary.py`), each two-input one a primitive;
the VJP (written in ember ops, so it differentiates again) and the JVP are beside each.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .. import native
from .._tensor import Tensor
from ..native import calls
from . import _cephes_airy as cephes_airy
from . import _cephes_bessel as cephes
from . import _cephes_bessel_jy as cephes_jy
from . import _cephes_bessel_k as cephes_k
from . import _cephes_erfcx as cephes_erfcx
from . import _cephes_igamma as cephes_igamma
from . import _cephes_zeta as cephes_zeta
from ._arg_parser_text import need_tensors, wrong_type
from ._common import MEMBER_LAYOUT, binary_operands, type_name, write_out
from ._in_float64 import _via64
from ._pointwise import shaped, tangent_sum
from ._rng_kernels import avx2
from ._special_math import (
    _B2K,
    _LG1,
    _LOG2PI,
    _SQRTPI,
    _digamma64,
    _entr64,
    _lgamma64,
    _mvlgamma64,
    _polygamma64,
    _xlog1py64,
)
from .binary import binary_p, member
from .registry import (
    Member,
    Primitive,
    apply,
    apply_,
    defjvp,
    defvjp,
    derivative_not_implemented,
    nondifferentiable,
)
from .unary import COMPLEX_K, defjvp1, not_implemented, unary, unary_api, unary_p
from .unary_math import erf_p

_grad_state = grad_mode.state

# --- lgamma, digamma, polygamma ---------------------------------------------------------

_REAL = (COMPLEX_K,)

lgamma_p = unary("lgamma", _via64(_lgamma64))
digamma_p = unary("digamma", _via64(_digamma64))


def _c_operands(a):
    """(the C functions' suffix, `a` C-contiguous, its result array) for a float32 /
    float64 `a`, or None for another dtype."""
    sfx = calls.SUFFIX.get(a.dtype)
    if sfx is None:
        return None
    a = np.asarray(a)  # (0-d stays 0-d, which np.ascontiguousarray would make 1-d)
    if not a.flags.c_contiguous:
        a = a.copy(order="C")
    return sfx, a, np.empty_like(a)


def _digamma_native(lib, a):
    """digamma of float32 / float64 in C (csrc/gamma.c: the NumPy kernel's steps, the same
    bits), one pass over the pool against the NumPy kernel's masked passes."""
    got = _c_operands(a)
    if got is None:
        return NotImplemented
    sfx, a, out = got
    calls.entry(lib, f"ember_digamma_{sfx}", [calls.P, calls.P, calls.I64, calls.INT])(
        calls.ptr(a), calls.ptr(out), a.size, int(avx2()))
    return out


_LGAMMA_TABLES = (np.array(_LG1[:0:-1]), np.array([_B2K[k - 1] / (2 * k * (2 * k - 1))
                                                   for k in range(8, 0, -1)]))


def _lgamma_native(lib, a):
    """lgamma of float32 / float64 in C (csrc/gamma.c: `_lgamma64`'s steps with the C
    library's log, log1p and sin where NumPy's are taken: float64 within a few ulps of the
    NumPy kernel, float32 nearly always its bits)."""
    got = _c_operands(a)
    if got is None:
        return NotImplemented
    sfx, a, out = got
    taylor, stirling = _LGAMMA_TABLES
    calls.entry(lib, f"ember_lgamma_{sfx}",
                [calls.P, calls.P, calls.I64, calls.P, calls.I64, calls.P, calls.F64])(
        calls.ptr(a), calls.ptr(out), a.size, calls.ptr(taylor), taylor.size,
        calls.ptr(stirling), 0.5 * _LOG2PI)
    return out


native.register(digamma_p, "gamma", _digamma_native)
native.register(lgamma_p, "gamma", _lgamma_native)
polygamma_p = unary("polygamma", _via64(_polygamma64))


def _f(member: Member, x: Tensor, **params) -> Tensor:
    """Member `member` of the `unary` family applied to `x` (no dtype checks: for rules)."""
    return apply(unary_p, x, fn=member, **params)


for _m, _d in ((lgamma_p, lambda t, out, x: t * _f(digamma_p, x)),
               (digamma_p, lambda t, out, x: t * _f(polygamma_p, x, n=1)),
               (polygamma_p, lambda t, out, x, n: t * _f(polygamma_p, x, n=n + 1))):
    defvjp(_m, _d)  # (real functions: the VJP and the JVP are the same product)
    defjvp1(_m, _d)
mvlgamma_p = unary("mvlgamma", _via64(_mvlgamma64))
# (PyTorch's mvlgamma is a sum over a new last dim of its terms: a row-major result)
MEMBER_LAYOUT["mvlgamma"] = "contiguous"


def _mvlgamma_grad(g, out, x, p):
    from .creation import arange

    shifts = arange(p, dtype=x.dtype, device=x.device) * -0.5
    return g * _f(digamma_p, x.unsqueeze(-1) + shifts).sum(-1)


defvjp(mvlgamma_p, _mvlgamma_grad)
defjvp1(mvlgamma_p, _mvlgamma_grad)


# --- modified Bessel functions I0, I1 ---------------------------------------------------

i0_p = unary("i0", _via64(cephes.i0))
i0e_p = unary("special_i0e", _via64(cephes.i0e), grad_name="SpecialI0EBackward0")
i1_p = unary("special_i1", _via64(cephes.i1), grad_name="SpecialI1Backward0")
i1e_p = unary("special_i1e", _via64(cephes.i1e), grad_name="SpecialI1EBackward0")


def _where(cond, a, b):
    from .ternary import where

    return where(cond, a, b)


def _i1_grad(g, out, x):
    # I1' = I0 - I1 / x, and 1/2 at 0.
    safe = _where(x == 0, 1.0, x)
    return g * _where(x == 0, 0.5, _f(i0_p, x) - out / safe)


def _i1e_grad(g, out, x):
    safe = _where(x == 0, 1.0, x)
    return g * _where(x == 0, 0.5, _f(i0e_p, x) - out * (x.sign() + 1 / safe))


def _i0_grad(g, out, x):
    return g * _f(i1_p, x)


def _i0e_grad(g, out, x):
    return g * (_f(i1e_p, x) - x.sign() * out)


defvjp(i0_p, _i0_grad)
defvjp(i0e_p, _i0e_grad, save_output=True)
defvjp(i1_p, _i1_grad, save_output=True)
defvjp(i1e_p, _i1e_grad, save_output=True)
for _m, _d in ((i0_p, _i0_grad), (i0e_p, _i0e_grad), (i1_p, _i1_grad), (i1e_p, _i1e_grad)):
    defjvp1(_m, _d)


# --- Bessel functions of the first kind J0, J1 -------------------------------------------

def _nondiff(name: str, fn) -> Member:
    prim = unary(name, _via64(fn))
    nondifferentiable(prim)  # PyTorch records no graph for these
    return prim


bessel_j0_p = _nondiff("special_bessel_j0", cephes_jy.j0)
bessel_j1_p = _nondiff("special_bessel_j1", cephes_jy.j1)
modified_bessel_i0_p = _nondiff("special_modified_bessel_i0", cephes.modified_i0)
modified_bessel_i1_p = _nondiff("special_modified_bessel_i1", cephes.modified_i1)
spherical_bessel_j0_p = _nondiff("special_spherical_bessel_j0", cephes_jy.spherical_j0)
bessel_y0_p = _nondiff("special_bessel_y0", cephes_jy.y0)
bessel_y1_p = _nondiff("special_bessel_y1", cephes_jy.y1)
modified_bessel_k0_p = _nondiff("special_modified_bessel_k0", cephes_k.k0)
modified_bessel_k1_p = _nondiff("special_modified_bessel_k1", cephes_k.k1)
scaled_modified_bessel_k0_p = _nondiff("special_scaled_modified_bessel_k0", cephes_k.k0e)
scaled_modified_bessel_k1_p = _nondiff("special_scaled_modified_bessel_k1", cephes_k.k1e)


airy_ai_p = unary("special_airy_ai", _via64(cephes_airy.airy_ai))
nondifferentiable(airy_ai_p)


# --- erfcx and the normal distribution -----------------------------------------------------

erfcx_p = unary("special_erfcx", _via64(cephes_erfcx.erfcx), grad_name="SpecialErfcxBackward0")
_F32 = np.dtype(np.float32)
_SQRT1_2 = math.sqrt(0.5)  # M_SQRT1_2, correctly rounded


def _ndtr_kernel(a: np.ndarray) -> np.ndarray:
    """ndtr as PyTorch computes it: the composite (1 + erf(x / sqrt 2)) / 2, each step rounded
    to the input's dtype (float16 and bfloat16 computing each step in float32).

    NOTE: this cancels in the left tail (float32 ndtr(-5) is 2**-22, not 2.87e-7), and
    PyTorch's value is the cancelled one; an accurate erfc form would differ from it by
    percents there."""
    d = a.dtype
    w = _F32 if d.itemsize == 2 else d
    t = (a.astype(w) * w.type(_SQRT1_2)).astype(d)
    e = erf_p.kernel(t).astype(w)  # (torch.erf's own kernel: native where it runs)
    return np.asarray((w.type(1) + e).astype(d).astype(w) * w.type(0.5)).astype(d)


ndtr_p = unary("special_ndtr", _ndtr_kernel, grad_name="MulBackward1")
ndtri_p = unary("special_ndtri", _via64(cephes.ndtri), grad_name="SpecialNdtriBackward0")
log_ndtr_p = unary("special_log_ndtr", _via64(cephes_erfcx.log_ndtr),
                   grad_name="SpecialLogNdtrBackward0")
_INV_SQRT2PI = 1 / math.sqrt(2 * math.pi)
_NORMAL_GRADS = (
    (erfcx_p, lambda g, out, x: g * (2 * x * out - 2 / _SQRTPI), dict(save_output=True)),
    (ndtr_p, lambda g, out, x: g * _INV_SQRT2PI * (-x * x / 2).exp(), {}),
    (ndtri_p, lambda g, out, x: g * math.sqrt(2 * math.pi) * (out * out / 2).exp(),
     dict(reads=((),), save_output=True)),
    (log_ndtr_p, lambda g, out, x: g * _INV_SQRT2PI * (-(out + x * x / 2)).exp(),
     dict(save_output=True)),
)
for _m, _d, _how in _NORMAL_GRADS:
    defvjp(_m, _d, **_how)
    defjvp1(_m, _d)


# --- entr, xlog1py ------------------------------------------------------------------------

entr_p = unary("special_entr", _via64(_entr64), grad_name="SpecialEntrBackward0")
defvjp(entr_p, lambda g, out, x: g * -(x.log() + 1))
defjvp1(entr_p, lambda t, out, x: t * -(x.log() + 1))


def _binary(name: str, fn, grad_name: str) -> Member:
    return member(name, _via64(fn), grad_name)


def _rounded_log_times(log, kernel):
    """x * log(y) (`log`: np.log or np.log1p), 0 where x is 0 unless y is NaN: `kernel` for
    most dtypes; float16 / bfloat16 round twice, as PyTorch's kernels do (the log to the
    dtype, then the product, each computed in float32)."""
    def low16(x, y):
        d = (x if isinstance(x, np.ndarray) or not isinstance(y, np.ndarray) else y)
        d = np.asarray(d).dtype  # (the array operand's: a number beside it is weak)
        if d.itemsize != 2 or d.kind not in "fV":
            return kernel(x, y)
        # a number is read in the tensor's dtype, through float32 as PyTorch converts it
        x32, y32 = (np.asarray(v, np.float32) if np.asarray(v).dtype == d else
                    np.asarray(v, np.float32).astype(d).astype(np.float32) for v in (x, y))
        with np.errstate(divide="ignore", invalid="ignore"):
            ly = log(y32).astype(d).astype(np.float32)
            out = np.multiply(x32, ly)
        return np.where((x32 == 0) & ~np.isnan(y32), np.float32(0), out).astype(d)

    low16.__name__ = getattr(kernel, "__name__", "kernel")
    return low16


xlog1py_fn = member("special_xlog1py", _rounded_log_times(np.log1p, _via64(_xlog1py64)),
                    "SpecialXlog1PyBackward0")


def _xlog1py_dx(t, x, y):
    """d/dx xlog1py(x, y) = log1p(y) times `t`, 0 only where x == 0 and y <= -1 (as
    PyTorch)."""
    return _where((x == 0) & (y <= -1), 0.0, apply(binary_p, t, y, fn=xlog1py_fn))


defvjp(xlog1py_fn, lambda g, out, x, y: _xlog1py_dx(g, x, y),
       lambda g, out, x, y: g * x / (y + 1))
defjvp(xlog1py_fn, lambda primals, tangents, out: shaped(tangent_sum(
    None if tangents[0] is None else _xlog1py_dx(tangents[0], *primals),
    None if tangents[1] is None else tangents[1] * primals[0] / (primals[1] + 1)), out))


# xlogy's own member (composed, xlogy(0, +inf) came out 0 * inf = NaN): x log(y) in the
# inputs' dtype, as PyTorch computes it, and 0 where x is 0 unless y is NaN.
def _xlogy_kernel(x, y):
    out = np.multiply(x, np.log(y))
    return np.where((x == 0) & ~np.isnan(y), 0, out)


xlogy_fn = member("xlogy", _rounded_log_times(np.log, _xlogy_kernel), "XlogyBackward0")


def _xlogy_dx(t, x, y):
    """d/dx xlogy(x, y) = log(y) times `t` (as xlogy(t, y)), 0 where x == 0 and y <= 0 (as
    PyTorch)."""
    return _where((x == 0) & (y <= 0), 0.0, apply(binary_p, t, y, fn=xlogy_fn))


defvjp(xlogy_fn, lambda g, out, x, y: _xlogy_dx(g, x, y), lambda g, out, x, y: g * x / y)
defjvp(xlogy_fn, lambda primals, tangents, out: shaped(tangent_sum(
    None if tangents[0] is None else _xlogy_dx(tangents[0], *primals),
    None if tangents[1] is None else tangents[1] * primals[0] / primals[1]), out))


def _no_derivative(what: str):
    def rule(g, out, *inputs):
        raise NotImplementedError(f"the derivative for '{what}' is not implemented.")

    return rule


def _second_only(what: str, d_second):
    """The JVP of a function differentiable only in its second input (PyTorch refuses the
    first): `d_second(a, b, out)` is d out / d b."""
    def jvp(primals, tangents, out):
        if tangents[0] is not None:
            raise NotImplementedError(f"the derivative for '{what}' is not implemented.")
        return None if tangents[1] is None else shaped(tangents[1] * d_second(*primals), out)

    return jvp


zeta_fn = _binary("special_zeta", cephes_zeta.zeta, "SpecialZetaBackward0")
defvjp(zeta_fn, _no_derivative("zeta"),
       lambda g, out, s, q: g * -s * apply(binary_p, s + 1, q, fn=zeta_fn))
defjvp(zeta_fn, _second_only("zeta", lambda s, q: -s * apply(binary_p, s + 1, q, fn=zeta_fn)))


# --- regularised incomplete gamma ----------------------------------------------------------

def _igam_density(a, x):
    """d/dx P(a, x) = x^(a-1) e^-x / Gamma(a), in ember ops."""
    return ((a - 1) * x.log() - x - a.lgamma()).exp()


igamma_fn = member("igamma", cephes_igamma.igamma, "IgammaBackward0")
igammac_fn = member("igammac", cephes_igamma.igammac, "IgammacBackward0")
defvjp(igamma_fn, _no_derivative("igamma: input"),
       lambda g, out, a, x: g * _igam_density(a, x))
defvjp(igammac_fn, _no_derivative("igammac: input"),
       lambda g, out, a, x: -g * _igam_density(a, x))
defjvp(igamma_fn, _second_only("igamma: input", _igam_density))
defjvp(igammac_fn, _second_only("igammac: input", lambda a, x: -_igam_density(a, x)))


# --- heaviside (a member only so that its backward refuses, as PyTorch's does) -------------

def _heaviside_kernel(x, v):
    return np.where(x == 0, v, (x > 0).astype(x.dtype)).astype(x.dtype)


heaviside_fn = member("heaviside", _heaviside_kernel)
derivative_not_implemented(heaviside_fn, "heaviside", (True, True))


# --- public functions ------------------------------------------------------------------

lgamma, lgamma_ = unary_api(lgamma_p, "log |Gamma(x)|.", reject=_REAL, kname="lgamma_vml_cpu")
digamma, digamma_ = unary_api(digamma_p, "The digamma function, d/dx lgamma(x).",
                              reject=_REAL, kname="digamma")
i0, i0_ = unary_api(i0_p, "Modified Bessel function of the first kind, order 0.",
                    reject=_REAL, kname="i0_vml_cpu")
i0e, _ = unary_api(i0e_p, "exp(-|x|) I0(x), which does not overflow.", reject=_REAL,
                   kname="i0e_cpu")
i1, _ = unary_api(i1_p, "Modified Bessel function of the first kind, order 1.",
                  reject=_REAL, kname="i1_cpu")
i1e, _ = unary_api(i1e_p, "exp(-|x|) I1(x), which does not overflow.", reject=_REAL,
                   kname="i1e_cpu")
_erfcx, _ = unary_api(erfcx_p, "exp(x^2) erfc(x), without overflow or cancellation.",
                      reject=_REAL, kname="erfcx_cpu")
_ndtr, _ = unary_api(ndtr_p, "The standard normal CDF.", reject=_REAL, kname="ndtr_cpu")
_ndtri, _ = unary_api(ndtri_p, "The inverse of the standard normal CDF.", reject=_REAL,
                      kname="ndtri_cpu")
_log_ndtr, _ = unary_api(log_ndtr_p, "log of the standard normal CDF, accurate in the tails.",
                         reject=_REAL, kname="log_ndtr_cpu")
entr, _ = unary_api(entr_p, "-x log(x), 0 at 0 and -inf below.", reject=_REAL,
                    kname="entr_cpu")
# (PyTorch's mvlgamma sums over an arange in the input's dtype: that kernel refuses first)
_mvlgamma, _mvlgamma_ = unary_api(mvlgamma_p, "mvlgamma", reject=_REAL, kname="arange_cpu")
_polygamma, _polygamma_ = unary_api(polygamma_p, "polygamma", reject=_REAL,
                                    kname="polygamma")


def _no_half(x, kname: str) -> None:
    """PyTorch has no float16 / bfloat16 kernel for these: NotImplementedError, as there."""
    if isinstance(x, Tensor) and x._dtype._kind == 2 and x._dtype.itemsize == 2:
        raise not_implemented(kname, x._dtype)


def erfcx(input: Tensor, *, out=None) -> Tensor:
    """exp(x^2) erfc(x), without overflow or cancellation."""
    _no_half(input, "erfcx_cpu")
    return _erfcx(input, out=out)


def ndtr(input: Tensor, *, out=None) -> Tensor:
    """The standard normal CDF."""
    if isinstance(input, Tensor) and input._requires_grad and _grad_state.enabled:
        # NOTE: PyTorch composes ndtr as (1 + erf(x / sqrt 2)) / 2, whose erf node saves the
        # scaled copy of x, not x: an in-place op on x afterwards trains. The primitive's
        # rule reads its input, so it is given a copy of its own.
        input = input.clone()
    return _ndtr(input, out=out)


def ndtri(input: Tensor, *, out=None) -> Tensor:
    """The inverse of the standard normal CDF."""
    _no_half(input, "ndtri_cpu")
    return _ndtri(input, out=out)


def log_ndtr(input: Tensor, *, out=None) -> Tensor:
    """log of the standard normal CDF, accurate in the tails."""
    _no_half(input, "log_ndtr_cpu")
    return _log_ndtr(input, out=out)


def _full_precision_only(prim: Primitive, kname: str, doc: str):
    """A special function PyTorch has no float16 / bfloat16 kernel for."""
    fn, _ = unary_api(prim, doc, reject=_REAL, kname=kname)

    def op(input: Tensor, *, out=None) -> Tensor:
        _no_half(input, kname)
        return fn(input, out=out)

    op.__name__, op.__doc__ = prim.name.removeprefix("special_"), doc
    return op


bessel_j0 = _full_precision_only(bessel_j0_p, "bessel_j0_cpu",
                                 "Bessel function of the first kind, order 0.")
bessel_j1 = _full_precision_only(bessel_j1_p, "bessel_j1_cpu",
                                 "Bessel function of the first kind, order 1.")
modified_bessel_i0 = _full_precision_only(
    modified_bessel_i0_p, "modified_bessel_i0_cpu",
    "I0(x), as i0, with no derivative (as PyTorch's modified_bessel_i0).")
modified_bessel_i1 = _full_precision_only(
    modified_bessel_i1_p, "modified_bessel_i1_cpu",
    "I1(x), as i1, with no derivative (as PyTorch's modified_bessel_i1).")
spherical_bessel_j0 = _full_precision_only(spherical_bessel_j0_p, "spherical_bessel_j0_cpu",
                                           "sin(x) / x, the spherical Bessel function j0.")
bessel_y0 = _full_precision_only(bessel_y0_p, "bessel_y0_cpu",
                                 "Bessel function of the second kind, order 0.")
bessel_y1 = _full_precision_only(bessel_y1_p, "bessel_y1_cpu",
                                 "Bessel function of the second kind, order 1.")
modified_bessel_k0 = _full_precision_only(modified_bessel_k0_p, "modified_bessel_k0_cpu",
                                          "Modified Bessel function of the second kind, order 0.")
modified_bessel_k1 = _full_precision_only(modified_bessel_k1_p, "modified_bessel_k1_cpu",
                                          "Modified Bessel function of the second kind, order 1.")
scaled_modified_bessel_k0 = _full_precision_only(
    scaled_modified_bessel_k0_p, "scaled_modified_bessel_k0_cpu", "exp(x) K0(x).")
scaled_modified_bessel_k1 = _full_precision_only(
    scaled_modified_bessel_k1_p, "scaled_modified_bessel_k1_cpu", "exp(x) K1(x).")
airy_ai = _full_precision_only(airy_ai_p, "airy_ai_cpu", "The Airy function Ai(x).")


def _check_n(n) -> int:
    if isinstance(n, Tensor) or not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise wrong_type("polygamma", "n", 1, "int", n)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return int(n)


def _polygamma_kernel_check(n: int, x) -> int:
    """`n`, checked; PyTorch's polygamma runs digamma's kernel for n = 0 and trigamma's for
    n = 1, so a complex input is refused in their names."""
    n = _check_n(n)
    if isinstance(x, Tensor) and x._dtype.is_complex:
        raise not_implemented({0: "digamma", 1: "trigamma"}.get(n, "polygamma"), x._dtype)
    return n


def polygamma(n: int, input: Tensor, *, out=None) -> Tensor:
    """The n-th derivative of digamma."""
    return _polygamma(input, n=_polygamma_kernel_check(n, input), out=out)


def _polygamma_method(self: Tensor, n: int) -> Tensor:
    return polygamma(n, self)


def polygamma_(self: Tensor, n: int) -> Tensor:
    return _polygamma_(self, n=_polygamma_kernel_check(n, self))


def mvlgamma(input: Tensor, p: int, *, out=None) -> Tensor:
    """Log of the multivariate gamma function of dimension p."""
    return _mvlgamma(input, p=_check_p(p, input), out=out)


def mvlgamma_(self: Tensor, p: int) -> Tensor:
    return _mvlgamma_(self, p=_check_p(p, self))


def _check_p(p, x: Tensor | None = None) -> int:
    if x is not None and x.dtype is dt.bool_:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    return int(p)


def _two_operands(name: str, kname: str, a, b, *, ints: bool = True):
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise TypeError(f"{name}(): expected at least one Tensor argument")
    from .creation import scalar_tensor

    like = a if isinstance(a, Tensor) else b
    raw = (a, b)
    a, b, d = binary_operands(a, b)
    # Each operand goes to `d` from its own value: binary_operands may have wrapped a
    # number or a 0-d tensor into the other's integer dtype, where -2 becomes 254 in uint8.
    a, b = raw
    if d._kind in (COMPLEX_K,) or (not ints and d._kind <= 1):
        raise not_implemented(kname, d)
    if d._kind < 2:
        d = dt.get_default_dtype()
    # numbers become 0-d tensors of the common dtype (the kernels take arrays)
    a = a.to(d) if isinstance(a, Tensor) else scalar_tensor(a, dtype=d, device=like.device)
    b = b.to(d) if isinstance(b, Tensor) else scalar_tensor(b, dtype=d, device=like.device)
    return a, b


def xlog1py(input, other, *, out=None) -> Tensor:
    """input * log1p(other), and 0 where input is 0 (unless other is NaN)."""
    a, b = _two_operands("xlog1py", "xlog1py_cpu", input, other)
    return write_out(apply(binary_p, a, b, fn=xlog1py_fn), out)


def zeta(input, other, *, out=None) -> Tensor:
    """The Hurwitz zeta function sum_k (other + k)^-input."""
    a, b = _two_operands("zeta", "zeta_cpu", input, other)
    _no_half(a, "zeta_cpu")
    return write_out(apply(binary_p, a, b, fn=zeta_fn), out)


def _tensor_pair(name: str, a, b) -> None:
    need_tensors(name, ("input", 1, a), ("other", 2, b))


def igamma(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """The regularised lower incomplete gamma function P(input, other)."""
    _tensor_pair("igamma", input, other)
    a, b = _two_operands("igamma", "igamma_cpu", input, other, ints=False)
    return write_out(apply(binary_p, a, b, fn=igamma_fn), out)


def igammac(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """The regularised upper incomplete gamma function Q(input, other) = 1 - P."""
    _tensor_pair("igammac", input, other)
    a, b = _two_operands("igammac", "igammac_cpu", input, other, ints=False)
    return write_out(apply(binary_p, a, b, fn=igammac_fn), out)


def _igamma_inplace(fn: Member, name: str, self: Tensor, other: Tensor) -> Tensor:
    from .._view import broadcast_shapes

    _tensor_pair(name, self, other)
    # PyTorch's order: the output's shape, then whether the result type fits, then dtypes.
    shape = broadcast_shapes(self.shape, other.shape)
    if tuple(shape) != tuple(self.shape):
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast "
                           f"shape {list(shape)}")
    common = dt.promote_types(self._dtype, other._dtype)
    if not dt.can_cast(common, self._dtype):
        raise RuntimeError(f"result type {type_name(common)} can't be cast to the desired "
                           f"output type {type_name(self._dtype)}")
    a, b = _two_operands(name, name.rstrip("_") + "_cpu", self, other, ints=False)
    if self._dtype._kind < 2:  # (the result is floating: it cannot go into an integer tensor)
        raise RuntimeError(f"result type {type_name(a._dtype)} can't be cast to the desired "
                           f"output type {type_name(self._dtype)}")
    return apply_(binary_p, self, b.to(self._dtype), fn=fn)


def igamma_(self: Tensor, other: Tensor) -> Tensor:
    return _igamma_inplace(igamma_fn, "igamma_", self, other)


def igammac_(self: Tensor, other: Tensor) -> Tensor:
    return _igamma_inplace(igammac_fn, "igammac_", self, other)


def heaviside_values(input: Tensor, values: Tensor, inplace: bool = False) -> Tensor:
    """heaviside's kernel (checks are the caller's): `values` at 0, else 0 or 1; written
    into `input` with `inplace`."""
    return (apply_ if inplace else apply)(binary_p, input, values, fn=heaviside_fn)


TENSOR_METHODS = {
    "lgamma": lgamma, "lgamma_": lgamma_, "digamma": digamma, "digamma_": digamma_,
    "polygamma": _polygamma_method, "polygamma_": polygamma_, "mvlgamma": mvlgamma,
    "mvlgamma_": mvlgamma_, "i0": i0, "i0_": i0_, "igamma": igamma, "igamma_": igamma_,
    "igammac": igammac, "igammac_": igammac_,
}

__all__ = ["lgamma", "digamma", "polygamma", "mvlgamma", "i0", "i0_", "igamma", "igammac"]
