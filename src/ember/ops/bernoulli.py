"""Bernoulli draws and dropout's masks, bit for bit as PyTorch's CPU kernels draw them
(see random_ops.py for how every draw here is an op, and the plumbing this module shares).

bernoulli_(p float): one double uniform per element (2 words), u < p.
bernoulli_(p tensor) / bernoulli(probs): u < p with a double uniform if p is float64,
else a float uniform (1 word). Dropout's mask is `empty_like(x).bernoulli_(1 - p)` scaled
by 1 / (1 - p), as PyTorch's CPU kernel draws it.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor, _meta
from .._view import dense_order
from . import _rng_kernels as K
from . import _rng_native as R
from ._common import check_failed, type_name
from .draws import draw_like, like_strides
from .fill import fill_p
from .movement import check_expand
from .random_ops import (
    _DRAWS,
    _check_no_overlap,
    _fmt,
    _gen,
    _inplace,
    _like_result,
    _result,
    drawn_from,
    sample_p,
)
from .registry import Member, apply, apply_, check_grad_write, check_inplace, nondifferentiable

f32, f64 = np.float32, np.float64



def _bernoulli_values(g, n: int, p: float, one, zero, d: dt.dtype) -> np.ndarray:
    """n values of dtype d: `one` where the next double uniform is below p, else `zero`
    (one and zero already in d's math type); in C for large float32/float64 draws."""
    out = R.bernoulli(g, n, p, one, zero, d.np)
    if out is not None:
        return out
    u = g._doubles(n) < p
    return K.to_dtype(u if (one, zero) == (1, 0) else np.where(u, one, zero), d)


def _check_p(p: float) -> None:
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_fmt(p)}")


def _bernoulli_tensor_kernel(u, p, *, dtype):
    if not ((p >= 0) & (p <= 1)).all():
        raise check_failed("p_in >= 0 && p_in <= 1")
    return K.to_dtype(u < (p if u.dtype == f64 else p.astype(f32)), dtype)


# u < p, elementwise: the uniforms `u` (doubles for float64 probabilities, else floats)
# are drawn before the op (`draw_like`), in the filled tensor's memory order: its input.
BERNOULLI = Member(sample_p, "bernoulli_tensor", _bernoulli_tensor_kernel,
                   lambda u, p, *, dtype: (u._shape, dtype))
nondifferentiable(BERNOULLI)


def _valid_before_fault(self: Tensor, p: Tensor) -> int | None:
    """How many elements PyTorch fills (one draw each, in self's memory order) before it
    meets a probability outside [0, 1], or None when all are valid."""
    pv = np.asarray(p.detach().numpy())
    if ((pv >= 0) & (pv <= 1)).all():
        return None
    order = dense_order(like_strides(self))
    flat = np.broadcast_to(pv, self._shape).transpose(order).reshape(-1)
    return int(np.argmax(~((flat >= 0) & (flat <= 1))))


def _bernoulli_tensor_(self: Tensor, g, p: Tensor) -> Tensor:
    # (a leaf's refusal comes first, sparing the draw, as in PyTorch; an inference tensor's
    # after it: PyTorch even writes that one before refusing. On meta nothing else is
    # checked; on the CPU p is expanded to self (that op's refusal, in its words), then its
    # dtype checked)
    check_grad_write(self)
    if self.device.type == "meta":
        check_inplace(self)
        return self
    check_expand(p, self._shape)
    if not p._dtype.is_floating_point:
        raise NotImplementedError(
            f'"bernoulli_tensor_cpu_p_" not implemented for \'{type_name(p._dtype)}\'')
    _check_no_overlap(self._shape, self.stride())
    ud = dt.float64 if p._dtype is dt.float64 else dt.float32
    before = g._mark()  # (the kernel reads p after the draw; see the except)
    u = draw_like(self, (lambda n, c: g._doubles(n)) if ud is dt.float64 else
                  (lambda n, c: g._floats(n)), ud, dense=False)
    try:
        values = apply(sample_p, u, p.detach(), fn=BERNOULLI, dtype=self._dtype)
    except RuntimeError:
        try:
            k = _valid_before_fault(self, p)
        except RuntimeError:  # (a batched or pending input has no values to read)
            k = None
        if k is not None:  # PyTorch draws up to the fault
            g._rewind(before)
            g._doubles(k) if ud is dt.float64 else g._floats(k)
        raise
    return apply_(fill_p, self, values, fn=_DRAWS["BernoulliBackward1"])


def bernoulli_(self: Tensor, p=0.5, *, generator=None) -> Tensor:
    """Fill with 0/1 draws: 1 with probability p (a float or a broadcastable tensor)."""
    g = _gen(generator, "bernoulli_")
    d = self._dtype
    if d.is_complex:
        kname = "bernoulli_tensor_cpu_self_" if isinstance(p, Tensor) else "bernoulli_scalar_cpu_"
        raise NotImplementedError(f'"{kname}" not implemented for \'{type_name(d)}\'')
    if isinstance(p, Tensor):
        return _bernoulli_tensor_(self, g, p)
    p = float(p)
    _check_p(p)
    return _inplace(self, "BernoulliBackward2", lambda n, c: _bernoulli_values(g, n, p, 1, 0, d))


def bernoulli(input: Tensor, p=None, *, generator=None, out=None) -> Tensor:
    """0/1 draws with probabilities `input` (or a float `p`), in input's dtype."""
    from .. import _grad_mode as grad_mode

    g = _gen(generator, "bernoulli", (input,) if p is None else (input, p), {"out": out})
    if out is not None:
        return _bernoulli_out(input, p, g, out, generator is not None)
    d = input._dtype
    res = _result(lambda n, c: np.empty(n, d.np), input._shape, None, d, input.device, False)
    with grad_mode.no_grad():
        bernoulli_(res, input if p is None else float(p), generator=g)
    if p is None:
        # PyTorch's draw is an op of the probabilities with a zero gradient (BernoulliBackward0)
        return drawn_from(res, "BernoulliBackward0", input)
    return res


def _bernoulli_out(input: Tensor, p, g, out: Tensor, with_generator: bool) -> Tensor:
    """bernoulli(probs, out=t): `t`, of any dtype, resized to probs' shape (without the
    resize warning of other out= ops) and filled as `t.bernoulli_(probs)` fills it."""
    from .. import _grad_mode as grad_mode

    if p is not None:  # (PyTorch has no out= form of the float-p overload)
        kw = ", generator=torch._C.Generator" if with_generator else ""
        raise TypeError(f"bernoulli() received an invalid combination of arguments - got "
                        f"(Tensor, {type(p).__name__}, out=Tensor{kw}), but expected one of:")
    if grad_mode.is_grad_enabled() and (input.requires_grad or out.requires_grad):
        raise RuntimeError("bernoulli(): functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires grad.")
    if out._shape != input._shape:
        out.resize_(input._shape)
    with grad_mode.no_grad():
        bernoulli_(out, input, generator=g)
    return out


def bernoulli_noise(input: Tensor, q: float, *, feature: bool = False,
                    generator=None) -> Tensor:
    """1 with probability q, else 0, in `input`'s dtype and layout, drawn as
    `empty_like(input).bernoulli_(q)` draws it (`feature`: one per (N, C) channel, shaped
    (N, C, 1, ...)). The noise of dropout, drawn like `input`, so vmap sees whose batch
    it belongs to."""
    g = _gen(generator, "bernoulli_")
    d = input._dtype
    if d.is_complex:
        raise NotImplementedError(
            f'"bernoulli_scalar_cpu_" not implemented for \'{type_name(d)}\'')
    if input.device.type == "meta":
        shape = input._shape[:2] + (1,) * (input.ndim - 2) if feature else input._shape
        return _meta(shape, d)

    def make(n, c):
        return _bernoulli_values(g, n, q, 1, 0, d)

    if feature:
        shape = input._shape[:2] + (1,) * (input.ndim - 2)
        return _result(make, shape, None, d, input.device, False)
    return _like_result(input, make, d, input.device, False)


def dropout_mask(input: Tensor, p: float, *, feature: bool = False,
                 generator=None) -> Tensor | None:
    """The tensor F.dropout multiplies `input` by in training, drawn as PyTorch's CPU
    kernel draws it: `empty_like(input).bernoulli_(1 - p).div_(1 - p)`.

    Returns None when PyTorch skips the draw (p == 0 or an empty input) and zeros,
    without drawing, for p == 1. `feature=True` gives the (N, C, 1, ...) mask of
    dropout2d / dropout3d / feature dropout.
    """
    if p == 1:
        return input.new_zeros(())
    if p == 0 or input.numel() == 0:
        return None
    g = _gen(generator, "dropout")
    d = input._dtype
    q = 1.0 - p
    # NOTE: PyTorch divides by (1 - p) cast to the op's math type: float for
    # float/half/bfloat16 (then rounded), double for double.
    if d is dt.float64:
        scale, zero = 1.0 / q, 0.0
    else:
        scale, zero = f32(1) / f32(q), f32(0)

    def make(n, c):
        return _bernoulli_values(g, n, q, scale, zero, d)

    if feature:
        shape = input._shape[:2] + (1,) * (input.ndim - 2)
        return _result(make, shape, None, d, input.device, False)
    return _like_result(input, make, d, input.device, False)


def _bernoulli_method(self: Tensor, p=None, *, generator=None) -> Tensor:
    return bernoulli(self, p, generator=generator)


TENSOR_METHODS = {"bernoulli_": bernoulli_, "bernoulli": _bernoulli_method}

__all__ = ["bernoulli"]
