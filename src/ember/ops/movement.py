"""View ops: new shape, stride and offset over the same storage, never a copy.

The public functions check their arguments as PyTorch does and bind the one `view`
primitive (`views.py`) with the kind of view as its `fn`; reshape, flatten, movedim,
... are compositions of those views (the split family: `splitting.py`).
"""

from __future__ import annotations

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._layout import CHANNELS_LAST_RANK
from .._tensor import Tensor, _alias
from .._user_warnings import user_stacklevel
from .._view import (
    contiguous_strides,
    expand_strides,
    infer_size,
    is_contiguous,
    numel,
    storage_extent,
    view_strides,
    wrap_dim,
    wrap_dims,
)
from . import _size_args
from ._arg_parser_text import (
    called_as_method,
    invalid_combination,
    method_aware,
    need_int,
    need_tensor,
    wrong_type,
)
from ._common import has_values
from ._size_args import REQUIRED, dims_one_by_one
from .dtype_views import view_dtype
from .registry import (
    Primitive,
    bind,
    defbatch,
    keep_given,
    nondifferentiable,
)
from .views import (  # noqa: F401  (restride, view_p: re-exported for the op modules)
    alias as V_ALIAS,
)
from .views import (
    as_strided as V_AS_STRIDED,
)
from .views import (
    diagonal as V_DIAGONAL,
)
from .views import (
    expand as V_EXPAND,
)
from .views import (
    permute as V_PERMUTE,
)
from .views import (
    reshape_alias as V_RESHAPE_ALIAS,
)
from .views import (
    select as V_SELECT,
)
from .views import (
    slice_ as V_SLICE,
)
from .views import (
    squeeze as V_SQUEEZE,
)
from .views import (
    squeeze_dim as V_SQUEEZE_DIM,
)
from .views import (
    squeeze_dims as V_SQUEEZE_DIMS,
)
from .views import (
    t as V_T,
)
from .views import (
    transpose as V_TRANSPOSE,
)
from .views import (
    unfold as V_UNFOLD,
)
from .views import (
    unsafe_view as V_UNSAFE,
)
from .views import (
    unsqueeze as V_UNSQUEEZE,
)
from .views import (
    view_ as V_VIEW,
)
from .views import (
    view_p,
)

_grad_state = grad_mode.state
select_p = V_SELECT  # (index.py takes a select view with `apply_view(select_p, ...)`)


def apply_view(kind, x: Tensor, **params) -> Tensor:
    """`x` viewed through the view kind `kind` (a member of the `view` primitive)."""
    return bind(view_p, x, fn=kind, **params)


_shape_args = _size_args.shape_args  # (join.py's repeat / tile / flip read theirs too)


# --- reshaping views ---------------------------------------------------------------

def view(x: Tensor, *shape, **kwargs) -> Tensor:
    if kwargs:
        shape = _size_args.view_keyword(shape, kwargs)
    if not shape:
        raise invalid_combination("view", ("(torch.dtype dtype)", "(tuple of ints size)"), (),
                                  {})
    if len(shape) == 1 and isinstance(shape[0], dt.dtype):
        return view_dtype(x, shape[0])
    size = infer_size(_shape_args(shape, "view", "size"), numel(x._shape))
    return bind(view_p, x, fn=V_VIEW, size=size)


def alias(x: Tensor) -> Tensor:
    """A new view with exactly `x`'s geometry (what `x[()]` and `x[...]` return)."""
    return bind(view_p, x, fn=V_ALIAS)


def _eval_detach(prim, args: tuple, params: dict) -> Tensor:
    return _alias(args[0])


def _detach_meta(x: Tensor) -> tuple:
    return x._shape, x._dtype, x._stride if x._stride is not None else x._ensure_storage()


# `detach` is a primitive so that every interpreter sees where a value leaves the graph
# (a vmap or jvp level must drop its own tangent there too); no gradient flows through it.
detach_p = Primitive("detach", None, _detach_meta, impl=_eval_detach)
nondifferentiable(detach_p)
defbatch(detach_p, lambda args, dims: (bind(detach_p, args[0]), dims[0]))


def detach(x: Tensor) -> Tensor:
    """A tensor sharing `x`'s storage and version counter, outside the graph (not a view,
    as in PyTorch: it may be written in place freely)."""
    return bind(detach_p, x)


def view_as(x: Tensor, other: Tensor) -> Tensor:
    need_tensor(other, "view_as", "other", 2, method=True)
    return view(x, other._shape)


@method_aware
def reshape(x: Tensor, *shape, **kwargs) -> Tensor:
    if kwargs:
        shape = _size_args.keyword_list(shape, kwargs, "reshape", "shape")
    if not shape:
        raise TypeError('reshape() missing 1 required positional arguments: "shape"')
    size = infer_size(_shape_args(shape, "reshape", "shape"), numel(x._shape))
    stride = x.stride()
    if view_strides(x._shape, stride, size) is not None:
        # a view either way; PyTorch names the one of a non-contiguous tensor _reshape_alias
        fn = V_VIEW if stride == contiguous_strides(x._shape) or \
            is_contiguous(x._shape, stride) else V_RESHAPE_ALIAS
        return bind(view_p, x, fn=fn, size=size)
    from .copy import clone_contiguous

    return unsafe_view(clone_contiguous(x), size)


def unsafe_view(fresh: Tensor, size) -> Tensor:
    """`fresh` (a contiguous op result nothing else sees) reshaped, as a new tensor rather
    than a view (PyTorch's `_unsafe_view`, UnsafeViewBackward0)."""
    return bind(view_p, fresh, fn=V_UNSAFE, size=tuple(size))._detach_base()


def _detach_base(self: Tensor) -> Tensor:
    # reshape-by-copy returns a fresh tensor, not a view of the temporary copy
    self._base = None
    return self


def reshape_as(x: Tensor, other: Tensor) -> Tensor:
    return reshape(x, other._shape)


@method_aware
def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    need_int(start_dim, "flatten", "start_dim", 2)
    need_int(end_dim, "flatten", "end_dim", 3)
    nd = x.ndim
    if nd == 0:
        wrap_dim(start_dim, 0)  # a 0-d tensor takes dims 0 and -1 only, as in PyTorch
        wrap_dim(end_dim, 0)
        return reshape(x, (1,))
    s = wrap_dim(start_dim, nd)
    e = wrap_dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return x
    shape = x._shape[:s] + (numel(x._shape[s:e + 1]),) + x._shape[e + 1:]
    return reshape(x, shape)


@method_aware
def unflatten(x: Tensor, dim: int, sizes) -> Tensor:
    if dim.__class__ is not int:
        dim = need_int(dim, "unflatten", "dim", 2)
    if x.ndim == 0:
        raise RuntimeError(f"unflatten got an unexpected error:\nDimension specified as {dim} but "
                           "tensor has no dimensions")
    d = wrap_dim(dim, x.ndim)
    if not isinstance(sizes, (tuple, list)) or not all(type(s) is int for s in sizes):
        method = called_as_method()
        sizes = _size_args.int_list((sizes,), "unflatten", "sizes", 2 if method else 3,
                                    method=method)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    try:
        sizes = infer_size(sizes, x._shape[d])
    except RuntimeError as e:
        # PyTorch rewords the one failure a user makes most (sizes whose product is not the
        # dim's size) and passes any other on behind a fixed first line
        if "is invalid for input of size" in str(e):
            raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to "
                               f"the size of dim {d} ({x._shape[d]}) in the input tensor"
                               ) from None
        raise RuntimeError(f"unflatten got an unexpected error:\n{e}") from None
    return view(x, x._shape[:d] + sizes + x._shape[d + 1:])


def ravel(x: Tensor) -> Tensor:
    """`x` flattened: a view of `x`, or of a contiguous copy of it (PyTorch's
    `contiguous().view(-1)`: a CloneBackward0 then a ViewBackward0 node)."""
    if not x._strided:
        return reshape(x, (-1,))
    return view(contiguous(x), -1)


def layout_own(x, name: str):
    """A sparse layout's own method `name` (sparse_shape.py), which a function form hands a
    sparse tensor to, as torch dispatches by layout; None for a strided tensor (or a
    non-tensor, which the function refuses itself)."""
    if not isinstance(x, Tensor) or x._strided:
        return None
    own = getattr(type(x), name, None)
    return None if own is None or own is getattr(Tensor, name, None) else own


@method_aware
def permute(x: Tensor, *dims, **kwargs) -> Tensor:
    if kwargs:
        dims = _size_args.keyword_list(dims, kwargs, "permute", "dims")
    if not x._strided and (own := layout_own(x, "permute")) is not None:
        return own(x, *dims)
    if not dims:
        raise TypeError('permute() missing 1 required positional arguments: "dims"')
    dims = _shape_args(dims, "permute", "dims")
    if len(dims) != x.ndim:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {x.ndim} is not "
            f"equal to len(dims) = {len(dims)}"
        )
    wrapped = tuple(wrap_dim(d, x.ndim) for d in dims)
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    r = bind(view_p, x, fn=V_PERMUTE, dims=wrapped)
    if r._grad_fn is not None:
        keep_given(r, dims=dims)
    return r


@method_aware
def transpose(x: Tensor, dim0: int = REQUIRED, dim1: int = REQUIRED) -> Tensor:
    if type(dim0) is not int or type(dim1) is not int:
        dim0, dim1 = _size_args.int_args((dim0, dim1), ("dim0", "dim1"), "transpose",
                                         1 if called_as_method() else 2)
    if not x._strided and (own := layout_own(x, "transpose")) is not None:
        return own(x, dim0, dim1)
    nd = x.ndim
    r = bind(view_p, x, fn=V_TRANSPOSE, dim0=wrap_dim(dim0, nd), dim1=wrap_dim(dim1, nd))
    if r._grad_fn is not None:
        keep_given(r, dim0=dim0, dim1=dim1)
    return r


@method_aware
def swapaxes(x: Tensor, axis0: int = REQUIRED, axis1: int = REQUIRED) -> Tensor:
    """`transpose` under NumPy's name (and parameter names)."""
    if type(axis0) is not int or type(axis1) is not int:
        axis0, axis1 = _size_args.int_args((axis0, axis1), ("axis0", "axis1"), "swapaxes",
                                           1 if called_as_method() else 2)
    return transpose(x, axis0, axis1)


@method_aware
def swapdims(x: Tensor, dim0: int = REQUIRED, dim1: int = REQUIRED) -> Tensor:
    if type(dim0) is not int or type(dim1) is not int:
        dim0, dim1 = _size_args.int_args((dim0, dim1), ("dim0", "dim1"), "swapdims",
                                         1 if called_as_method() else 2)
    return transpose(x, dim0, dim1)


def t(x: Tensor) -> Tensor:
    if not x._strided and (own := layout_own(x, "t")) is not None:
        return own(x)
    if x.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    if x.ndim < 2:
        return bind(view_p, x, fn=V_T, dim0=0, dim1=0) if x.ndim == 1 else x
    return bind(view_p, x, fn=V_T, dim0=0, dim1=1)


def _identity_0d(x: Tensor, what: str, advice: str) -> Tensor:
    """A 0-d tensor through T / H / mT / mH / adjoint: PyTorch's deprecated identity."""
    import warnings

    warnings.warn(f"{what} is deprecated on 0-D tensors. {advice}", UserWarning,
                  stacklevel=user_stacklevel())
    return x


def _T(x: Tensor) -> Tensor:
    nd = x.ndim
    if nd == 0:
        return _identity_0d(x, "Tensor.T", "This function is the identity in these cases.")
    if nd != 2:
        import warnings

        warnings.warn(
            "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
            "deprecated and it will throw an error in a future release. Consider `x.mT` to "
            "transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to "
            "reverse the dimensions of a tensor.", UserWarning, stacklevel=user_stacklevel())
    return permute(x, tuple(range(nd - 1, -1, -1)))


def _mT(x: Tensor, name: str = "mT") -> Tensor:
    if x.ndim == 0:  # NOTE: still accepted on 0-d (deprecated); 1-d is refused
        return _identity_0d(x, "Tensor.mT", "This function is the identity in these cases.")
    if x.ndim < 2:
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. "
                           f"Got {x.ndim}-D tensor.")
    return transpose(x, -2, -1)


def _H(x: Tensor) -> Tensor:
    if x.ndim == 0:
        return _identity_0d(x, "Tensor.H", "Consider using x.conj().").conj()
    if x.ndim != 2:  # (PyTorch refuses, where `.T` only warns)
        batches = " For batches of matrices, consider using tensor.mH" if x.ndim > 2 else ""
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{x.ndim}-D tensor.{batches}")
    # (a transpose of the last two dims, as PyTorch's: TransposeBackward0 with dims -2, -1)
    return transpose(x, -2, -1).conj()


def _mH(x: Tensor) -> Tensor:
    if x.ndim == 0:
        return _identity_0d(x, "Tensor.mH", "Consider using x.conj().").conj()
    return _mT(x, "mH").conj()


def adjoint(x: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims (`x.mH`)."""
    if x.ndim == 0:
        return _identity_0d(x, "adjoint()", "Consider using x.conj().").conj()
    return _mT(x, "adjoint()").conj()


def _movedim_dims(dims, nd: int, name: str) -> tuple[int, ...]:
    dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    out = tuple(wrap_dim(d, nd) for d in dims)
    if len(set(out)) != len(out):
        raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(dims)})")
    return out


@method_aware
def movedim(x: Tensor, source=REQUIRED, destination=REQUIRED) -> Tensor:
    if type(source) is not int or type(destination) is not int:
        source, destination = _size_args.movedim_args(x, source, destination, "movedim",
                                                      called_as_method())
    return _movedim(x, source, destination)


@method_aware
def moveaxis(x: Tensor, source=REQUIRED, destination=REQUIRED) -> Tensor:
    """`movedim` under NumPy's name."""
    if type(source) is not int or type(destination) is not int:
        source, destination = _size_args.movedim_args(x, source, destination, "moveaxis",
                                                      called_as_method())
    return _movedim(x, source, destination)


def _movedim(x: Tensor, source, destination) -> Tensor:
    nd = x.ndim
    src = _movedim_dims(source, nd, "source")
    dst = _movedim_dims(destination, nd, "destination")
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(src)} dims) should "
            f"contain the same number of dims as destination ({list(dst)} dims)"
        )
    if nd == 0:  # dims 0 / -1 on a 0-d tensor: nothing moves
        return alias(x)
    order = [d for d in range(nd) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(x, tuple(order))


def check_expand(x: Tensor, size: tuple) -> None:
    """PyTorch's refusals of `x.expand(size)`, raised without making the view."""
    if len(size) < x.ndim:  # (PyTorch names the tensor's type and shape in this one)
        raise RuntimeError(f"expand({x.type()}{{{list(x._shape)}}}, size={list(size)}): the "
                           f"number of sizes provided ({len(size)}) must be greater or equal "
                           f"to the number of dimensions in the tensor ({x.ndim})")
    expand_strides(x._shape, x.stride(), size)


@method_aware
def expand(x: Tensor, *size, **kwargs) -> Tensor:
    """A view with size-1 dims repeated (stride 0) and new leading dims; -1 keeps a size."""
    if kwargs:
        kwargs.pop("implicit", None)  # (torch's flag for the expands autograd inserts: no-op)
        size = _size_args.keyword_list(size, kwargs, "expand", "size") if kwargs else size
    size = _shape_args(size, "expand", "size")
    check_expand(x, size)
    full = tuple(x._shape[i - (len(size) - x.ndim)] if s == -1 else s for i, s in enumerate(size))
    return bind(view_p, x, fn=V_EXPAND, size=full)


def expand_as(x: Tensor, other: Tensor) -> Tensor:
    need_tensor(other, "expand_as", "other", 2, method=True)
    return expand(x, other._shape)


def broadcast_to(x: Tensor, size) -> Tensor:
    return expand(x, _size_args.int_list((size,), "broadcast_to", "size", 2, method=False))


def _broadcast_to_method(x: Tensor, *size) -> Tensor:
    """`Tensor.broadcast_to`, which (unlike `torch.broadcast_to`) takes sizes one by one too."""
    return expand(x, _shape_args(size, "broadcast_to", "size", method=True))


def squeeze(x: Tensor, dim=REQUIRED) -> Tensor:
    """`x` without its size-1 dims (all, `dim`, or those of the list `dim`)."""
    return squeeze_dims(x, dim, "squeeze", False)


def _squeeze_method(x: Tensor, dim=REQUIRED) -> Tensor:
    return squeeze_dims(x, dim, "squeeze", True)


def squeeze_dims(x: Tensor, dim, name: str, method: bool) -> Tensor:
    """`squeeze` (or `squeeze_`, by `name`) with `dim` checked as its parser checks it."""
    nd = x.ndim
    if dim is REQUIRED:
        return bind(view_p, x, fn=V_SQUEEZE, dims=tuple(range(nd)))
    if type(dim) is not int and not (isinstance(dim, (tuple, list)) and
                                     all(type(d) is int for d in dim)):
        dim = _size_args.squeeze_dim(x, dim, name, method)
    if isinstance(dim, (tuple, list)):
        r = bind(view_p, x, fn=V_SQUEEZE_DIMS, dims=wrap_dims(dim, max(nd, 1)))
    else:
        r = bind(view_p, x, fn=V_SQUEEZE_DIM, dims=(wrap_dim(dim, max(nd, 1)),))
    if r._grad_fn is not None:
        keep_given(r, dim=dim)
    return r


@method_aware
def unsqueeze(x: Tensor, dim: int) -> Tensor:
    if not x._strided and (own := layout_own(x, "unsqueeze")) is not None:
        return own(x, dim)
    if type(dim) is not int:
        (dim,) = _size_args.int_args((dim,), ("dim",), "unsqueeze",
                                     1 if called_as_method() else 2)
    r = bind(view_p, x, fn=V_UNSQUEEZE, dim=wrap_dim(dim, x.ndim + 1))
    if r._grad_fn is not None:
        keep_given(r, dim=dim)
    return r


# --- selecting views ---------------------------------------------------------------

_INT64_MAX = (1 << 63) - 1


def _slice_args(n: int, start, stop, step: int):
    if step <= 0:
        raise ValueError("step must be greater than zero")
    start = 0 if start is None else int(start)
    stop = n if stop is None else int(stop)
    if start < 0:
        start += n
    if stop < 0:
        stop += n
    start = min(max(start, 0), n)
    stop = min(max(stop, start), n)
    return start, stop


def slice_dim(x: Tensor, dim: int, start=None, stop=None, step: int = 1) -> Tensor:
    """`x[..., start:stop:step, ...]` along `dim` (PyTorch's `slice` op)."""
    d = wrap_dim(dim, x.ndim)
    begin, end = _slice_args(x._shape[d], start, stop, step)
    r = bind(view_p, x, fn=V_SLICE, dim=d, start=begin, stop=end, step=step)
    if r._grad_fn is not None:  # (an end left out is PyTorch's INT64_MAX)
        keep_given(r, dim=dim, start=0 if start is None else start,
                   end=_INT64_MAX if stop is None else stop)
    return r


_NARROW_OVERLOADS = ("(int dim, Tensor start, int length)", "(int dim, int start, int length)")


def _is_int_arg(v) -> bool:
    """What PyTorch's parser takes for an int: an int (not bool), an integer-like object, or
    a one-element integer tensor."""
    if isinstance(v, Tensor):
        return v.numel() == 1 and v._dtype._kind == 1
    return not isinstance(v, (bool, float)) and hasattr(v, "__index__")


def narrow(x: Tensor, dim: int, start, length: int) -> Tensor:
    """The view `x[..., start:start + length, ...]` along `dim`; `start` may be negative or a
    0-d integer tensor."""
    if not (_is_int_arg(dim) and _is_int_arg(length) and
            (_is_int_arg(start) or isinstance(start, Tensor))):
        fn_form = (f"(Tensor input, {sig[1:]}" for sig in _NARROW_OVERLOADS)
        raise invalid_combination("narrow", tuple(fn_form), (x, dim, start, length), {})
    if isinstance(start, Tensor):
        if start.ndim != 0 or start._dtype._kind != 1:
            raise RuntimeError("start must be an 0-dim integral Tensor.")
    if x.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    return _narrow(x, int(dim), int(start), int(length))


def _narrow_method(self: Tensor, dim: int, start, length: int) -> Tensor:
    """Tensor.narrow: its parser lists the overloads without `input`."""
    if not (_is_int_arg(dim) and _is_int_arg(length) and
            (_is_int_arg(start) or isinstance(start, Tensor))):
        raise invalid_combination("narrow", _NARROW_OVERLOADS, (dim, start, length), {})
    return narrow(self, dim, start, length)


def _narrow(x: Tensor, dim: int, start: int, length: int) -> Tensor:
    """narrow once its arguments are ints (narrow_copy shares its range checks)."""
    if x.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, x.ndim)
    n = x._shape[d]
    if start < -n or start > n:
        raise IndexError(
            f"start out of range (expected to be in range of [{-n}, {n}], but got {start})"
        )
    if start < 0:
        start += n
    if length < 0 or start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    r = bind(view_p, x, fn=V_SLICE, dim=d, start=start, stop=start + length, step=1)
    if r._grad_fn is not None:
        keep_given(r, dim=dim)
    return r


@method_aware
def select(x: Tensor, dim: int, index: int) -> Tensor:
    if dim.__class__ is not int:
        dim = need_int(dim, "select", "dim", 2)
    if not x._strided and (own := layout_own(x, "select")) is not None:
        return own(x, dim, index)
    if x.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, x.ndim)
    n = x._shape[d]
    given = index = need_int(index, "select", "index", 3)
    if index < -n or index >= n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(x._shape)} at dimension {d}")
    if index < 0:
        index += n
    r = bind(view_p, x, fn=V_SELECT, dim=d, index=index)
    if r._grad_fn is not None:
        keep_given(r, dim=dim, index=given)
    return r


def diagonal(x: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    need_int(offset, "diagonal", "offset", 2)
    nd = x.ndim
    d1, d2 = wrap_dim(dim1, max(nd, 1)), wrap_dim(dim2, max(nd, 1))  # IndexError first
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    r = bind(view_p, x, fn=V_DIAGONAL, offset_=offset, dim1=d1, dim2=d2)
    if r._grad_fn is not None:
        keep_given(r, dim1=dim1, dim2=dim2)
    return r


def unfold(x: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """The view of all slices of `size` along `dimension`, `step` apart, in a new last dim."""
    # (the words of PyTorch's parser for the usual positional call; a 1-element integer
    # tensor is an int to it)
    for pos, (pname, v) in enumerate((("dimension", dimension), ("size", size),
                                      ("step", step)), 1):
        if not _is_int_arg(v):
            raise wrong_type("unfold", pname, pos, "int", v)
    dimension, size, step = int(dimension), int(size), int(step)
    d = wrap_dim(dimension, max(x.ndim, 1))
    n = x._shape[d] if x.ndim else 1
    if size > n:
        raise RuntimeError(
            f"maximum size for tensor at dimension {d} is {n} but size is {size}"
        )
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    r = bind(view_p, x, fn=V_UNFOLD, dim=d, size=size, step=step)
    if r._grad_fn is not None:
        keep_given(r, dimension=dimension)
    return r


def as_strided(x: Tensor, size, stride, storage_offset=None) -> Tensor:
    size = _size_args.int_list((size,), "as_strided", "size", 2, method=False)
    stride = _size_args.int_list((stride,), "as_strided", "stride", 3, method=False)
    off = x._offset if storage_offset is None else int(storage_offset)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    # (inside vmap an example has no storage of its own: the batch rule keeps each in bounds)
    storage = x._ensure_storage_obj() if has_values(x) else None
    need = storage_extent(size, stride, off) * x._dtype.itemsize
    if storage is not None and need > storage.nbytes():
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {off}, and "
            f"itemsize {x._dtype.itemsize} requiring a storage size of {need} are out of bounds "
            f"for storage of size {storage.nbytes()}"
        )
    r = bind(view_p, x, fn=V_AS_STRIDED, size=size, stride_=stride, storage_offset=off,
             in_shape=x._shape, in_stride=x.stride(), in_offset=x._offset)
    if r._grad_fn is not None:  # (PyTorch's node shows None for an offset not given)
        keep_given(r, storage_offset=storage_offset)
    return r


# --- methods ---------------------------------------------------------------------

def contiguous(x: Tensor, memory_format=None) -> Tensor:
    if getattr(memory_format, "name", "") in CHANNELS_LAST_RANK:
        if x.is_contiguous(memory_format=memory_format):
            return x
        from .copy import to_memory_format

        return to_memory_format(x, memory_format)
    if x.is_contiguous():
        return x
    from .copy import contiguous_copy

    return contiguous_copy(x)


TENSOR_METHODS = {
    "detach": detach, "view": view, "view_as": view_as, "reshape": reshape,
    "reshape_as": reshape_as, "flatten": flatten, "unflatten": unflatten, "ravel": ravel,
    "permute": permute,
    "transpose": transpose, "swapaxes": swapaxes, "swapdims": swapdims, "t": t,
    "movedim": movedim, "moveaxis": moveaxis, "expand": expand, "expand_as": expand_as,
    "broadcast_to": _broadcast_to_method, "squeeze": dims_one_by_one(_squeeze_method),
    "unsqueeze": unsqueeze,
    "narrow": _narrow_method, "select": select, "diagonal": diagonal, "unfold": unfold,
    "as_strided": as_strided, "contiguous": contiguous,
    "_detach_base": _detach_base,
    "T": property(_T), "mT": property(_mT), "H": property(_H), "mH": property(_mH),
    "adjoint": adjoint,
}

__all__ = [
    "reshape", "flatten", "unflatten", "ravel", "permute", "transpose", "swapaxes", "swapdims",
    "t", "movedim", "moveaxis", "broadcast_to", "squeeze", "unsqueeze", "narrow", "select",
    "diagonal", "unfold", "as_strided", "adjoint",
]
