"""Complex storage seen as real pairs, and back: `view_as_real`, `view_as_complex`, and the
parts `.real` / `.imag` built on them, all views, as in PyTorch.

A complex element is two reals side by side in memory, so a complex tensor of shape `s`,
strides `t` and offset `o` (in complex elements) is a real tensor of shape `s + (2,)`,
strides `2t + (1,)` and offset `2o` (in real elements) over the same bytes. Each direction
is one primitive whose eager evaluation lays that geometry over the input's storage (no
kernel runs, any device, `meta` included), sharing its version counter and `_base`, and
records the node PyTorch records (`ViewAsRealBackward0` / `ViewAsComplexBackward0`); each
one's VJP is the other. `z.real` is `view_as_real(z).select(-1, 0)` (so writing into it
writes into `z`, and its node is `SelectBackward0` above `ViewAsRealBackward0`, as in
PyTorch); `z.imag` selects 1.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._core.dispatch import autograd
from .._tensor import Tensor, _view
from .registry import MISSING, Primitive, apply, bind, defbatch, deflinear, defvjp, vjp_rules
from .views import move_to_front

_grad_state = grad_mode.state
_COMPLEX_OF = {dt.float32: dt.complex64, dt.float64: dt.complex128}


def _strides(x: Tensor) -> tuple:
    return x._stride if x._stride is not None else x._ensure_storage()


def _as_real_geometry(x: Tensor) -> tuple:
    """(shape, stride, offset, dtype) of complex `x` read as real pairs."""
    stride = _strides(x)
    return (x._shape + (2,), tuple(2 * s for s in stride) + (1,), 2 * x._offset,
            x._dtype.to_real())


def _as_complex_geometry(x: Tensor) -> tuple:
    """(shape, stride, offset, dtype) of real pairs `x` read as complex numbers."""
    stride = _strides(x)
    return (x._shape[:-1], tuple(s // 2 for s in stride[:-1]), x._offset // 2,
            _COMPLEX_OF[x._dtype])


def _eval(geometry):
    def impl(prim, args: tuple, params: dict) -> Tensor:
        x = args[0]
        shape, stride, offset, dtype = geometry(x)
        out = _view(x, shape, stride, offset)
        out._dtype = dtype
        if x._requires_grad and _grad_state.enabled:
            autograd.record(prim, vjp_rules.get(prim, MISSING), args, params, out)
        return out

    return impl


def _meta(geometry):
    def meta(x: Tensor) -> tuple:
        shape, stride, _, dtype = geometry(x)
        return shape, dtype, stride

    return meta


def _as_real_kernel(a: np.ndarray) -> np.ndarray:
    return np.stack([a.real, a.imag], -1)


def _as_complex_kernel(a: np.ndarray) -> np.ndarray:
    return a[..., 0] + 1j * a[..., 1]


view_as_real_p = Primitive("view_as_real", _as_real_kernel, _meta(_as_real_geometry),
                           impl=_eval(_as_real_geometry))
view_as_complex_p = Primitive("view_as_complex", _as_complex_kernel,
                              _meta(_as_complex_geometry), impl=_eval(_as_complex_geometry))
# (PyTorch's backward formulas: each is the other view, of a contiguous gradient)
defvjp(view_as_real_p, lambda g, out, x: bind(view_as_complex_p, g.contiguous()),
       reads=((),))
defvjp(view_as_complex_p, lambda g, out, x: bind(view_as_real_p, g), reads=((),))
deflinear(view_as_real_p)
deflinear(view_as_complex_p)


def _as_real_batch(args, dims, /):
    # (the pairs axis goes last, after the batch axis wherever that is)
    return bind(view_as_real_p, args[0]), dims[0]


def _as_complex_batch(args, dims, /):
    x, d = args[0], dims[0]
    if d is None:
        return bind(view_as_complex_p, x), None
    x = move_to_front(x, d)
    if _complex_view_error(x) is not None:  # the batch axis broke the pairs' layout
        x = x.contiguous()
    return bind(view_as_complex_p, x), 0


defbatch(view_as_real_p, _as_real_batch)
defbatch(view_as_complex_p, _as_complex_batch)


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
    return apply(view_as_real_p, input)


def view_as_complex(input: Tensor) -> Tensor:
    """Real pairs in a last dim of size 2 as one complex tensor: a view of its storage."""
    d = input._dtype
    if d is dt.float16:
        raise RuntimeError("view_as_complex: ember has no complex32, so a half tensor cannot "
                           "be viewed as complex")
    if d not in _COMPLEX_OF:
        raise RuntimeError(
            "view_as_complex is only supported for half, float and double tensors, but got a "
            f"tensor of scalar type: {d.name}")
    why = _complex_view_error(input)
    if why is not None:
        raise RuntimeError(why)
    return apply(view_as_complex_p, input)


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


TENSOR_METHODS = {"real": property(real), "imag": property(imag)}

__all__ = ["view_as_real", "view_as_complex", "real", "imag"]
