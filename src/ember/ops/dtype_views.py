"""Views that read a tensor's bytes as another dtype: `view(dtype)`, `view_as_real`,
`view_as_complex`, and the complex parts `.real` / `.imag` built on them, as in PyTorch.

All three are one kind of math, so one primitive, the `reinterpret` family (the kind a
static param, `fn=`): eager evaluation lays the member's geometry over the input's storage
(no kernel runs, any device, `meta` included) under the new dtype. A complex element is
two reals side by side, so a complex tensor of shape `s`, strides `t` and offset `o` is a
real tensor of shape `s + (2,)`, strides `2t + (1,)`, offset `2o` over the same bytes.

- `view_as_real` / `view_as_complex` are views (they share `_base` and the version
  counter) recording PyTorch's nodes, `ViewAsRealBackward0` / `ViewAsComplexBackward0`;
  each one's VJP is the other. `z.real` is `view_as_real(z).select(-1, 0)`, so writing
  into it writes into `z` and its node is `SelectBackward0` above `ViewAsRealBackward0`;
  `z.imag` selects 1.
- `view(dtype)` has no derivative and, as in PyTorch, is no view for autograd (no
  `_base`, never in the graph), though it shares the storage and the version counter.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._core.dispatch import autograd
from .._tensor import Tensor, _make, _view
from ..amp.autocast_mode import autocast_op
from ._common import type_name
from .registry import (
    MISSING,
    Family,
    Member,
    apply,
    bind,
    defbatch,
    deflinear,
    defvjp,
    nondifferentiable,
    vjp_rules,
)
from .views import move_to_front

_grad_state = grad_mode.state
_COMPLEX_OF = {dt.float32: dt.complex64, dt.float64: dt.complex128}


def _strides(x: Tensor) -> tuple:
    return x._stride if x._stride is not None else x._ensure_storage()


def _as_real_geometry(x: Tensor) -> tuple:
    """(shape, stride, offset) of complex `x` read as real pairs."""
    stride = _strides(x)
    return x._shape + (2,), tuple(2 * s for s in stride) + (1,), 2 * x._offset


def _as_complex_geometry(x: Tensor) -> tuple:
    """(shape, stride, offset) of real pairs `x` read as complex numbers."""
    stride = _strides(x)
    return x._shape[:-1], tuple(s // 2 for s in stride[:-1]), x._offset // 2


def _dtype_geometry(x: Tensor, *, dtype: dt.dtype) -> tuple:
    """(shape, stride, offset) of `x`'s bytes read as `dtype`: the last dim rescaled when the
    element sizes differ (PyTorch's checks and messages)."""
    a, b = x._dtype.itemsize, dtype.itemsize
    stride = _strides(x)
    if a == b:
        return x._shape, stride, x._offset
    what = f"to view {type_name(x._dtype)} as {type_name(dtype)} (different element sizes)"
    if x.ndim == 0:
        raise RuntimeError(f"self.dim() cannot be 0 {what}")
    if stride[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {stride[-1]}")
    if a > b:
        r = a // b
        return (x._shape[:-1] + (x._shape[-1] * r,), tuple(s * r for s in stride[:-1]) + (1,),
                x._offset * r)
    r = b // a
    if x._shape[-1] % r:
        raise RuntimeError(f"self.size(-1) must be divisible by {r} {what}, but got "
                           f"{x._shape[-1]}")
    for i, s in enumerate(stride[:-1]):
        if s % r:
            raise RuntimeError(f"self.stride({i}) must be divisible by {r} {what}, but got {s}")
    if x._offset % r:
        raise RuntimeError(f"self.storage_offset() must be divisible by {r} {what}, but got "
                           f"{x._offset}")
    return (x._shape[:-1] + (x._shape[-1] // r,), tuple(s // r for s in stride[:-1]) + (1,),
            x._offset // r)



def _eval_reinterpret(fam, args: tuple, params: dict) -> Tensor:
    x = args[0]
    fn = params["fn"]
    if fn is dtype_fn:  # (no autograd view: no `_base`, no node; storage and versions shared)
        dtype = params["dtype"]
        shape, stride, offset = _dtype_geometry(x, dtype=dtype)
        return _make(x._ensure_storage_obj(), shape, stride, offset, dtype, None, x._vc)
    shape, stride, offset = _GEOMETRY[fn](x)
    out = _view(x, shape, stride, offset)
    out._dtype = _DTYPE[fn](x._dtype)
    if x._requires_grad and _grad_state.enabled:
        autograd.record(fam, vjp_rules[fam].table.get(fn, MISSING), args, params, out)
    return out


reinterpret_p = Family("reinterpret", impl=_eval_reinterpret)


def _meta_of(geometry, dtype_of):
    def meta(x: Tensor, **params) -> tuple:
        shape, stride, _ = geometry(x, **params)
        return shape, dtype_of(x._dtype, **params), stride

    return meta


def _as_real_kernel(a: np.ndarray) -> np.ndarray:
    return np.stack([a.real, a.imag], -1)


def _as_complex_kernel(a: np.ndarray) -> np.ndarray:
    return a[..., 0] + 1j * a[..., 1]


def _dtype_kernel(a: np.ndarray, *, dtype: dt.dtype) -> np.ndarray:
    if a.ndim == 0:
        return a.reshape(1).view(dtype.np).reshape(())
    return np.ascontiguousarray(a).view(dtype.np)


def _real_of(d: dt.dtype, **params) -> dt.dtype:
    return d.to_real()


def _complex_of(d: dt.dtype, **params) -> dt.dtype:
    return _COMPLEX_OF[d]


def _given(d: dt.dtype, *, dtype: dt.dtype) -> dt.dtype:
    return dtype


as_real_fn = Member(reinterpret_p, "view_as_real", _as_real_kernel,
                    _meta_of(_as_real_geometry, _real_of))
as_complex_fn = Member(reinterpret_p, "view_as_complex", _as_complex_kernel,
                       _meta_of(_as_complex_geometry, _complex_of))
dtype_fn = Member(reinterpret_p, "view_dtype", _dtype_kernel, _meta_of(_dtype_geometry, _given))
_GEOMETRY = {as_real_fn: _as_real_geometry, as_complex_fn: _as_complex_geometry}
_DTYPE = {as_real_fn: _real_of, as_complex_fn: _complex_of}

# (PyTorch's backward formulas: each is the other view, of a contiguous gradient)
defvjp(as_real_fn, lambda g, out, x: bind(reinterpret_p, g.contiguous(), fn=as_complex_fn),
       reads=((),))
defvjp(as_complex_fn, lambda g, out, x: bind(reinterpret_p, g, fn=as_real_fn), reads=((),))
deflinear(as_real_fn)
deflinear(as_complex_fn)
nondifferentiable(dtype_fn)


def _reinterpret_batch(args, dims, /, *, fn, **params):
    """vmap: the batch moved in front, where it never touches the last dim (the one the
    pairs or a change of element size rescale); view_as_real needs no move at all."""
    x, d = args[0], dims[0]
    if d is None:
        return bind(reinterpret_p, x, fn=fn, **params), None
    if fn is as_real_fn:
        return bind(reinterpret_p, x, fn=fn), d
    x = move_to_front(x, d)
    if fn is as_complex_fn and _complex_view_error(x) is not None:
        x = x.contiguous()  # the batch axis broke the pairs' layout
    return bind(reinterpret_p, x, fn=fn, **params), 0


defbatch(reinterpret_p, _reinterpret_batch)


def _complex_view_error(x: Tensor) -> str | None:
    """Why real tensor `x` cannot be read as complex pairs in place (None: it can)."""
    if x.ndim == 0:
        return "Input tensor must have one or more dimensions"
    if x._shape[-1] != 2:
        return "Tensor must have a last dimension of size 2"
    stride = _strides(x)
    if stride[-1] != 1:
        return "Tensor must have a last dimension with stride 1"
    if any(s % 2 for s in stride[:-1]):
        return "Tensor must have a stride divisible by 2 for all but last dimension"
    if x._offset % 2:
        return "Tensor must have a storage_offset divisible by 2"
    return None


def view_as_real(input: Tensor) -> Tensor:
    """A complex tensor as real pairs in a new last dim of size 2: a view of its storage."""
    if not input._dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return apply(reinterpret_p, input, fn=as_real_fn)


@autocast_op("view_as_complex")
def view_as_complex(input: Tensor) -> Tensor:
    """Real pairs in a last dim of size 2 as one complex tensor: a view of its storage."""
    d = input._dtype
    if d is dt.float16:
        raise RuntimeError("view_as_complex: ember has no complex32, so a half tensor cannot "
                           "be viewed as complex")
    if d not in _COMPLEX_OF:
        raise RuntimeError(
            "view_as_complex is only supported for half, float and double tensors, but got a "
            f"tensor of scalar type: {type_name(d)}")
    why = _complex_view_error(input)
    if why is not None:
        raise RuntimeError(why)
    return apply(reinterpret_p, input, fn=as_complex_fn)


def view_dtype(x: Tensor, dtype: dt.dtype) -> Tensor:
    """`x`'s bytes read as `dtype` (the last dim rescaled when the element sizes differ)."""
    return bind(reinterpret_p, x, fn=dtype_fn, dtype=dtype)


def real(input: Tensor) -> Tensor:
    """The real part: a view of a complex tensor's storage; a real tensor itself."""
    if not input._dtype.is_complex:
        return input
    return view_as_real(input).select(-1, 0)


def imag(input: Tensor) -> Tensor:
    """The imaginary part of a complex tensor, a view of its storage."""
    if not input._dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return view_as_real(input).select(-1, 1)


def _set_real(self: Tensor, value) -> None:
    """`t.real = v` writes `v` into the real parts of `t` in place, as torch's setter does."""
    real(self).copy_(value)


def _set_imag(self: Tensor, value) -> None:
    """`t.imag = v` writes `v` into the imaginary parts of `t` in place."""
    imag(self).copy_(value)


TENSOR_METHODS = {"real": property(real, _set_real), "imag": property(imag, _set_imag)}

__all__ = ["view_as_real", "view_as_complex", "real", "imag"]
