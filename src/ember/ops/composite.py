"""Composite ops: PyTorch functions built entirely from other ops, so they need no VJP.

diff, trapezoid, cumulative_trapezoid, tril_indices / triu_indices, block_diag, cdist,
vander, complex, polar; and isin, a small non-differentiable primitive (a NumPy kernel,
bound like any op). histogram lives with histogramdd (histogram.py).
"""

from __future__ import annotations

import builtins

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._tensor import Tensor
from .._view import wrap_dim
from ..amp.autocast_mode import autocast_op
from ._arg_parser_text import (
    invalid_combination,
    need_int,
    need_tensor,
    need_tensors,
    wrong_type,
)
from ._batching import front
from ._common import member_strides, type_name
from .copy import restrided
from .creation import _place, arange, tensor, zeros
from .factories import _is_number
from .registry import (
    Primitive,
    apply,
    bind,
    defbatch,
    nondifferentiable,
    rename_node,
    saves,
)


def _diff_arg_types(n, dim, prepend, append) -> None:
    """PyTorch's parser words for diff's arguments, as the usual call passes them (by
    keyword): n and dim ints (no bool), prepend and append tensors (numbers are refused)."""
    from .movement import _is_int_arg

    for name, v in (("n", n), ("dim", dim)):
        if not _is_int_arg(v):
            raise wrong_type("diff", name, None, "int", v)
    need_tensors("diff", ("prepend", None, prepend), ("append", None, append),
                 optional=("prepend", "append"))


def diff(input: Tensor, n: int = 1, dim: int = -1, prepend=None, append=None) -> Tensor:
    """n-th forward difference along `dim` (with optional values joined on either side)."""
    from .join import cat

    _diff_arg_types(n, dim, prepend, append)
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    n = int(n)
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(dim, input.ndim)
    if any(p is not None and p.ndim != input.ndim for p in (prepend, append)):
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    for p in (prepend, append):
        for i in range(input.ndim if p is not None else 0):
            if i != d and p._shape[i] != input._shape[i]:
                raise RuntimeError(
                    "diff expects the shape of tensor to prepend or append to match that of "
                    f"input except along the differencing dimension; input.size({i}) = "
                    f"{input._shape[i]}, but got tensor.size({i}) = {p._shape[i]}")
    parts = [p for p in (prepend, input, append) if p is not None]
    x = cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        size = x.shape[d]
        if size == 0:
            break
        a, b = x.narrow(d, 1, size - 1), x.narrow(d, 0, size - 1)
        x = (a ^ b) if x.dtype is dt.bool_ else a - b
    return x


def _gradient_checks(input: Tensor, n_spacing, dims, given_dims: bool, edge_order: int):
    """PyTorch's pre_check_gradient, in its words."""
    if input._dtype is dt.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    if n_spacing is not None and not given_dims and n_spacing != input.ndim:
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
            f"equal to 'self.dim() = {input.ndim}', since dim argument was not given, but got "
            f"a list of length {n_spacing}")
    if n_spacing is not None and given_dims and n_spacing != len(dims):
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and "
            f"dim arguments to have the same length, but got a spacing argument of length "
            f"{n_spacing} and a dim argument of length {len(dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    seen = set()
    for d in dims:
        w = wrap_dim(d, input.ndim)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.add(w)
    if any(input._shape[wrap_dim(d, input.ndim)] < edge_order + 1 for d in dims):
        raise RuntimeError("torch.gradient expected each dimension size to be at least "
                           "edge_order+1")


def _gradient_uniform(f: Tensor, d: int, h, edge_order: int) -> Tensor:
    """Central differences with unit step `h` along `d`, one-sided (first or second order)
    at the two ends: PyTorch's formulas, term for term."""
    from .join import cat

    n = f._shape[d]

    def part(start, stop):
        return f.narrow(d, start, stop - start)

    center = (part(2, n) - part(0, n - 2)) / h
    if edge_order == 1:
        first = (part(1, 2) - part(0, 1)) / h
        last = (part(n - 1, n) - part(n - 2, n - 1)) / h
    else:
        first = (-1.5 * part(0, 1) + 2 * part(1, 2) - 0.5 * part(2, 3)) / h
        last = (0.5 * part(n - 3, n - 2) - 2 * part(n - 2, n - 1) + 1.5 * part(n - 1, n)) / h
    return cat([first, center / 2, last], d)


def _gradient_coordinates(f: Tensor, d: int, x: Tensor, edge_order: int) -> Tensor:
    """Second-order differences for samples at coordinates `x` (1-D) along `d`, as PyTorch
    weighs the neighbours: a f[i-1] + b f[i] + c f[i+1] from the steps either side."""
    from .join import cat

    if x.ndim != 1:
        raise RuntimeError("torch.gradient expected each element of spacing to have one "
                           f"dimension, but got an element with {x.ndim} dimensions!")
    n = f._shape[d]
    shape = [1] * f.ndim
    shape[d] = -1
    dx = diff(x)
    dx1, dx2 = dx[:-1], dx[1:]
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    center = a * f.narrow(d, 0, n - 2) + b * f.narrow(d, 1, n - 2) + c * f.narrow(d, 2, n - 2)
    h0, hl = dx[0], dx[-1]
    if edge_order == 1:  # (two samples have one step: no h1 / hm to read)
        first = (f.narrow(d, 1, 1) - f.narrow(d, 0, 1)) / h0
        last = (f.narrow(d, n - 1, 1) - f.narrow(d, n - 2, 1)) / hl
    else:
        h1, hm = dx[1], dx[-2]
        first = (-(2.0 * h0 + h1) / (h0 * (h0 + h1)) * f.narrow(d, 0, 1)
                 + (h0 + h1) / (h0 * h1) * f.narrow(d, 1, 1)
                 + (-h0) / (h1 * (h0 + h1)) * f.narrow(d, 2, 1))
        last = (hl / (hm * (hl + hm)) * f.narrow(d, n - 3, 1)
                + -(hl + hm) / (hl * hm) * f.narrow(d, n - 2, 1)
                + (2 * hl + hm) / (hl * (hl + hm)) * f.narrow(d, n - 1, 1))
    return cat([first, center, last], d)


def gradient(input: Tensor, *, spacing=None, dim=None, edge_order: int = 1) -> tuple:
    """The derivative of the samples `input` along each of `dim` (all dims when None), by
    central differences inside and one-sided ones (`edge_order` 1 or 2) at the ends; `spacing`
    is the step (a number, one per dim) or the sample coordinates (one 1-D tensor per dim)."""
    given_dims = dim is not None
    dims = list(range(input.ndim)) if dim is None else [dim] if isinstance(dim, int) \
        else list(dim)
    if spacing is None or isinstance(spacing, (int, float)) and not isinstance(spacing, bool):
        steps = [1.0 if spacing is None else spacing] * len(dims)
        n_spacing = None if spacing is None else len(dims)
    else:
        steps = list(spacing)
        n_spacing = len(steps)
        if any(isinstance(s, Tensor) for s in steps):
            for i, s in enumerate(steps):
                if not isinstance(s, Tensor):
                    raise TypeError(f"expected Tensor as element {i} in argument 1, but got "
                                    f"{type(s).__name__}")
    _gradient_checks(input, n_spacing, dims, given_dims, edge_order)
    out = []
    for d, h in zip(dims, steps):
        d = wrap_dim(d, input.ndim)
        if isinstance(h, Tensor):
            out.append(_gradient_coordinates(input, d, h, edge_order))
        else:
            out.append(_gradient_uniform(input, d, h, edge_order))
    return tuple(out)


# the overloads PyTorch's parser lists when a call fits none (trapz keeps its old order)
_WITH_X = "(Tensor y, Tensor x, *, int dim = -1)"
_WITH_DX = "(Tensor y, *, Number dx = 1, int dim = -1)"
_OVERLOADS = {"trapezoid": (_WITH_X, _WITH_DX), "cumulative_trapezoid": (_WITH_X, _WITH_DX),
              "trapz": ("(Tensor y, *, float dx = 1, int dim = -1)", _WITH_X)}


def _integral_args(name: str, y, args: tuple, kwargs: dict) -> tuple:
    """(x or None, dx or None, dim) of a trapezoid-family call, bound as PyTorch's parser
    binds it: one overload takes a tensor `x`, the other a number `dx`, never both."""
    if "axis" in kwargs and "dim" not in kwargs:  # (the parser's alias of `dim`)
        kwargs = {("dim" if k == "axis" else k): v for k, v in kwargs.items()}
    params = dict(kwargs)
    if args:
        params.setdefault("x", args[0])
    ok = isinstance(y, Tensor) and len(args) <= 1 and set(kwargs) <= {"x", "dx", "dim"} \
        and not (args and "x" in kwargs) and isinstance(params.get("dim", -1), int)
    x, dx = params.get("x"), params.get("dx")
    if x is not None:
        ok = ok and isinstance(x, Tensor) and "dx" not in params
    else:
        scalar = isinstance(dx, Tensor) and dx.ndim == 0  # a Number may be a 0-d tensor
        number = (int, float) if name == "trapz" else (int, float, builtins.complex)
        ok = ok and "x" not in params and (dx is None or scalar or isinstance(dx, number))
        dx = dx.item() if ok and scalar else dx
    if not ok:
        raise invalid_combination(name, _OVERLOADS[name], (y, *args), kwargs)
    return x, dx, params.get("dim", -1)


def _trapezoid_dim(y: Tensor, x: Tensor | None, dim: int, name: str) -> int:
    """`dim` wrapped for y, after PyTorch's checks of y's rank (trapezoid's x overload wraps
    the dim first, a 0-d y counting as 1-d, so its message names the wrapped dim)."""
    if y.ndim == 0:
        if x is not None:
            dim = wrap_dim(dim, 1)
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return wrap_dim(dim, y.ndim)


def _integral_checks(y: Tensor, x: Tensor | None, dx, d: int, name: str) -> None:
    """PyTorch's refusals of bool samples, a bool or complex `dx`, and a 1-D `x` whose length
    is not y's along `d`, in its order."""
    if x is None:
        if y.dtype is dt.bool_:
            raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not "
                               "supported")
        if isinstance(dx, (builtins.bool, builtins.complex, np.bool_, np.complexfloating)):
            raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")
        return
    if dt.bool_ in (y.dtype, x.dtype):
        raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not "
                           "supported")
    if x.ndim == 1 and x.shape[0] != y.shape[d]:
        raise RuntimeError(f"{name}: There must be one `x` value for each sample point")


def trapz(y: Tensor, *args, **kwargs) -> Tensor:
    """trapezoid under its older name (its overloads listed in their older order; its `dx`
    is a float, so a bool one is read as 0 or 1)."""
    x, dx, dim = _integral_args("trapz", y, args, kwargs)
    if x is not None:
        return trapezoid(y, x, dim=dim)
    if isinstance(dx, builtins.complex):  # (a complex 0-d tensor read as a double)
        raise RuntimeError("value cannot be converted to type double without overflow")
    return trapezoid(y, dx=1.0 if dx is None else float(dx), dim=dim)


def trapezoid(y: Tensor, *args, **kwargs) -> Tensor:
    """Integral of `y` along `dim` by the trapezoidal rule: `trapezoid(y, x, *, dim=-1)` over
    sample points `x`, or `trapezoid(y, *, dx=1, dim=-1)` over a constant spacing."""
    x, dx, dim = _integral_args("trapezoid", y, args, kwargs)
    d = _trapezoid_dim(y, x, dim, "trapezoid")
    n = y.shape[d]
    if n == 0:  # (before any other check: zeros of y's dtype, as NumPy's)
        return zeros(y.shape[:d] + y.shape[d + 1:], dtype=y.dtype, device=y.device)
    _integral_checks(y, x, dx, d, "trapezoid")
    # NOTE: PyTorch's two formulas, kept for their rounding and their infinities: over a
    # constant spacing (sum - (first + last) / 2) * dx, so an infinite end gives NaN (inf -
    # inf), as there; over points, the sum of (left + right) * spacing, halved at the end.
    if x is None:
        ends = (y.select(d, 0) + y.select(d, -1)) * 0.5
        return _scalar_node((y.sum(d) - ends) * (1.0 if dx is None else dx), "MulBackward1")
    pairs = y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)
    if x.ndim == 1:
        spacing = diff(x)
        shape = [1] * y.ndim
        shape[d] = n - 1
        spacing = spacing.reshape(shape)
    else:
        spacing = diff(x, dim=d)
    return _scalar_node((pairs * spacing).sum(d) / 2.0, "DivBackward1")


def cumulative_trapezoid(y: Tensor, *args, **kwargs) -> Tensor:
    """Running integrals of `y` along `dim` by the trapezoidal rule (overloads as
    trapezoid's)."""
    x, dx, dim = _integral_args("cumulative_trapezoid", y, args, kwargs)
    if y.dtype is dt.bool_ or (x is not None and x.dtype is dt.bool_):
        _integral_checks(y, x, dx, 0, "cumulative_trapezoid")  # (before the dim's checks)
    if y.ndim == 0 and (x is None or x.ndim != 1):
        if x is not None:  # (the x overload wraps the dim first; then both slice y)
            wrap_dim(dim, 1)
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = _trapezoid_dim(y, x, dim, "cumulative_trapezoid")
    _integral_checks(y, x, dx, d, "cumulative_trapezoid")
    n = y.shape[d]
    # (no samples: an empty result, in the dtype the formulas below give)
    pairs = y.narrow(d, min(n, 1), max(n - 1, 0)) + y.narrow(d, 0, max(n - 1, 0))
    if x is None:  # (PyTorch's order of operations: dx / 2 times each pair, then the sums)
        return ((1.0 if dx is None else dx) / 2.0 * pairs).cumsum(d)
    spacing = diff(x, dim=-1 if x.ndim == 1 else d)
    if x.ndim == 1:
        shape = [1] * y.ndim
        shape[d] = n - 1
        spacing = spacing.reshape(shape)
    return _scalar_node((pairs * spacing).cumsum(d) / 2.0, "DivBackward1")


def _scalar_node(out: Tensor, name: str) -> Tensor:
    """`out` with its node named as PyTorch's C++ `tensor * double` names it (the Scalar
    overload: MulBackward1 / DivBackward1, where Python's `t * 2.0` gives MulBackward0)."""
    if out.grad_fn is not None:
        rename_node(out.grad_fn, name)
    return out


def _isin_kernel(a, b, *, invert):
    return np.asarray(np.isin(a, b, invert=invert))


isin_p = Primitive("isin", _isin_kernel, lambda e, t, *, invert: (e._shape, dt.bool_))
nondifferentiable(isin_p)


def _isin_batch(args, bdims, *, invert):
    """vmap of isin: with one shared test set, the elements batched as they are; with a test
    set per batch element, each element compared against its own set."""
    e, t = args
    ed, td = bdims
    if td is None:
        return bind(isin_p, e, t, invert=invert), ed
    t = front(t, td)
    size = t._shape[0]
    e = front(e, ed) if ed is not None else e.expand((size,) + e._shape)
    hit = (e.reshape(size, -1, 1) == t.reshape(size, 1, -1)).any(-1).reshape(e._shape)
    return (~hit if invert else hit), 0


defbatch(isin_p, _isin_batch)


_ISIN_TAIL = "*, bool assume_unique = False, bool invert = False, Tensor out = None)"
_ISIN_OVERLOADS = (f"(Tensor elements, Tensor test_elements, {_ISIN_TAIL}",
                   f"(Number element, Tensor test_elements, {_ISIN_TAIL}",
                   f"(Tensor elements, Number test_element, {_ISIN_TAIL}")


def isin(elements, test_elements, *, assume_unique: bool = False,
         invert: bool = False) -> Tensor:
    """Whether each element of `elements` appears in `test_elements` (bool, same shape)."""
    if not (isinstance(elements, Tensor) and (isinstance(test_elements, Tensor)
                                              or _is_number(test_elements))
            or _is_number(elements) and isinstance(test_elements, Tensor)):
        flags = {k: v for k, v in (("assume_unique", assume_unique), ("invert", invert)) if v}
        raise invalid_combination("isin", _ISIN_OVERLOADS, (elements, test_elements), flags)
    for side in (elements, test_elements):  # (Python complex / bool: complex128 / bool)
        d = side._dtype if isinstance(side, Tensor) else dt.complex128 \
            if isinstance(side, builtins.complex) else dt.bool_ \
            if isinstance(side, (bool, np.bool_)) else None
        if d is not None and (d.is_complex or d is dt.bool_):
            raise RuntimeError(f"Unsupported input type encountered for isin(): {type_name(d)}")
    e = elements if isinstance(elements, Tensor) else tensor(elements)
    t = test_elements if isinstance(test_elements, Tensor) else tensor(test_elements)
    return apply(isin_p, e, t, invert=bool(invert))


def _tri_indices(row: int, col: int, offset: int, lower: bool, dtype, device) -> Tensor:
    name = "tril_indices" if lower else "triu_indices"
    row, col = need_int(row, name, "row", 1), need_int(col, name, "col", 2)
    offset = need_int(offset, name, "offset", 3)
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    if dtype is not None and dtype not in (dt.int32, dt.int64):  # (PyTorch's two)
        raise NotImplementedError(f'"{name}" not implemented for \'{type_name(dtype)}\'')
    # row by row: how many columns each keeps and the first of them; then the columns
    # count up from each row's first (no row x col grid: that is col / 2 times the work)
    r = np.arange(row, dtype=np.int64)
    if lower:
        first, counts = np.zeros_like(r), np.clip(r + offset + 1, 0, col)
    else:
        first = np.clip(r + offset, 0, col)
        counts = col - first
    n = int(counts.sum())
    idx = np.empty((2, n), (dtype or dt.int64).np)
    idx[0] = np.repeat(r, counts)
    idx[1] = np.arange(n) - np.repeat(np.cumsum(counts) - counts - first, counts)
    return _place(idx, dtype or dt.int64, device, False)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None,
                 layout=None) -> Tensor:
    """Coordinates (2 x N) of the lower triangle, row-major, as `tril` keeps them."""
    return _tri_indices(row, col, offset, True, dtype, device)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None,
                 layout=None) -> Tensor:
    """Coordinates (2 x N) of the upper triangle, row-major, as `triu` keeps them."""
    return _tri_indices(row, col, offset, False, dtype, device)


def _result_dtype(tensors) -> dt.dtype:
    """PyTorch's type promotion over several tensors (a 0-d tensor decides only a higher
    kind, and a complex one over float32 gives complex64)."""
    return dt.result_type(*tensors)


def block_diag(*tensors: Tensor) -> Tensor:
    """The tensors (0-, 1- or 2-D) placed along the diagonal of one zero matrix."""
    from .join import cat, tensor_args

    mats = []
    for t in tensor_args(tensors):
        if t.ndim > 2:
            raise RuntimeError(
                "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input "
                f"{len(mats)} has {t.ndim} dimensions"
            )
        mats.append(t.reshape(1, -1) if t.ndim < 2 else t)
    if not mats:
        return zeros(1, 0)
    d = _result_dtype(tensors)
    cols = sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        parts = [zeros(m.shape[0], left, dtype=d, device=m.device), m.to(d),
                 zeros(m.shape[0], cols - left - m.shape[1], dtype=d, device=m.device)]
        rows.append(cat(parts, 1))
        left += m.shape[1]
    return cat(rows, 0)


_CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
                "donot_use_mm_for_euclid_dist": 2}


def _nonzero_root(s: Tensor, p: float) -> Tensor:
    """`s ** (1/p)` (sqrt for p=2) with a zero gradient where `s` is 0 (the root's slope is
    infinite there, and infinity times the zero slope of what made `s` is NaN)."""
    from .ternary import where

    zero = s == 0
    safe = where(zero, 1.0, s)
    return where(zero, 0.0, safe.sqrt() if p == 2 else safe.pow(1.0 / p))


def _euclidean_dist(x1: Tensor, x2: Tensor) -> Tensor:
    """PyTorch's `_euclidean_dist`: ||x||^2 + ||y||^2 - 2 x.y as one matmul of padded rows,
    clamped at 0, then sqrt. Rounding in the matmul leaves cdist(X, X)'s diagonal nonzero,
    as PyTorch's is."""
    from .join import cat

    n1, n2 = x1.pow(2).sum(-1, keepdim=True), x2.pow(2).sum(-1, keepdim=True)
    a = cat([x1.mul(-2), n1, n1.new_ones(n1.shape)], -1)
    b = cat([x2, n2.new_ones(n2.shape), n2], -1)
    # NOTE: PyTorch's backward divides by the distance and writes 0 where it is 0
    # (_euclidean_dist_backward); the guarded root gives the same subgradient.
    out = _nonzero_root((a @ b.mT).clamp_min(0), 2)
    if out.grad_fn is not None:
        rename_node(out.grad_fn, "EuclideanDistBackward0")
    return out


def _no_graph(*xs: Tensor) -> bool:
    """Whether CPU inputs need no graph: no gradient recorded and no transform watching."""
    from .._core.dispatch import transform_active

    return not (grad_mode.state.enabled and any(x._requires_grad for x in xs)) and \
        not transform_active() and all(x.device.type == "cpu" for x in xs)


def _cdist_direct(x1: Tensor, x2: Tensor, p: float) -> Tensor:
    """The pairwise p-norm from the differences, with PyTorch's _cdist_backward's gradient:
    0 where the distance is 0 or a difference is 0, and for p=inf the sign of the difference
    at every coordinate that attains the maximum (ties each get the full gradient)."""
    from ._pair_norms import c_pow, direct_distances, in_order_sum, p_root, squared_sum
    from .ternary import where

    if p != float("inf") and _no_graph(x1, x2) and x1.numel() and x2.numel():
        q = float(np.float32(p)) if p not in (0, 1, 2) and x1.element_size() < 8 else p
        out = direct_distances(x1, x2, q)  # (what follows, the same bits, 3-10x faster)
        if out is not None:
            return out
    d = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    a = d.abs()
    if p == 0:  # a count: a zero gradient, through a graph as PyTorch's has one
        return where(d.new_ones((), dtype=dt.bool_), (d != 0).sum(-1).to(d.dtype), d.sum(-1))
    if p == 1:
        return in_order_sum(a)
    if p == 2:
        return _nonzero_root(squared_sum(d), 2)
    if p == float("inf"):
        if not a.shape[-1]:  # no coordinates: every distance is 0 (amax of nothing raises)
            return a.sum(-1)
        top = a.amax(-1)
        # NOTE: amax would split a tie; PyTorch's inf_calc gives each maximum the full
        # gradient. The added term is exactly +0 (x - x), carrying the gradient of |d| at the
        # maxima; non-finite entries are left out so they cannot turn it into NaN.
        lead = (a == top.detach().unsqueeze(-1)) & a.isfinite()
        return top.detach() + where(lead, a - a.detach(), 0.0).sum(-1)
    if d.element_size() < 8:
        p = float(np.float32(p))  # (PyTorch's kernel reads p in the input's dtype)
    zero = a == 0  # |d|^p's slope for p < 1 is infinite at 0; PyTorch's is 0 there
    powered = where(zero, 0.0, c_pow(where(zero, 1.0, a), p))
    s = in_order_sum(powered)
    zero = s == 0  # (the root's slope is infinite at 0: see _nonzero_root)
    return where(zero, 0.0, p_root(where(zero, 1.0, s), p))


def _float_p(fname: str, p, pos: int) -> float:
    """`p` of cdist / pdist as torch's parser reads a float (a bool, an integer, a NumPy
    number, a tensor's value), refused in its words otherwise (before any other check)."""
    if isinstance(p, Tensor):
        p = p.item()
    if not isinstance(p, (int, float, np.integer, np.floating)):
        raise wrong_type(fname, "p", pos, "float", p)
    return float(p)


def _check_p(fname: str, p: float) -> None:
    if not p >= 0:  # (NaN too)
        raise RuntimeError(f"{fname} only supports non-negative p values")


@autocast_op("cdist")
def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """p-norm distances between each row of `x1` and each row of `x2` (batched). For p=2
    with compute_mode 'use_mm_for_euclid_dist', or by default when either input has more
    than 25 rows, PyTorch (and so ember) computes through a matmul (`_euclidean_dist`)."""
    need_tensors("cdist", ("x1", 1, x1), ("x2", 2, x2))
    p = _float_p("cdist", p, 3)
    mode = _CDIST_MODES.get(compute_mode)
    if mode is None:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: "
            f"{x2.shape[-1]}"
        )
    for name, x in (("X1", x1), ("X2", x2)):
        if not x._dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{type_name(x._dtype)}")
    _check_p("cdist", p)
    r1, r2 = x1.shape[-2], x2.shape[-2]
    if p == 2 and x1.numel() and x2.numel() and (mode == 1 or (mode == 0 and max(r1, r2) > 25)):
        out = _euclidean_dist(x1, x2)
        out = out.view(out.shape)  # (PyTorch's cdist views _euclidean_dist's batched result)
    else:
        if x1._dtype in (dt.float16, dt.bfloat16):
            raise NotImplementedError(f"\"cdist\" not implemented for '{type_name(x1._dtype)}'")
        if x2._dtype is not x1._dtype:
            raise RuntimeError(f"expected scalar type {type_name(x1._dtype)} but found "
                               f"{type_name(x2._dtype)}")
        out = _cdist_direct(x1, x2, p)
        if out.grad_fn is not None:
            rename_node(out.grad_fn, "CdistBackward0")
    return saves(out, x1, x2, out)  # (what PyTorch's _cdist_forward node keeps)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """The p-norm distance between each pair of rows i < j of an (N, M) input, in row-major
    order of the pairs: N (N - 1) / 2 values. Through vector_norm, whose gradient is 0 where
    a distance is 0, as PyTorch's pdist's is."""
    from .pdist_euclidean import pdist2
    from .stats import vector_norm

    need_tensor(input, "pdist")
    p = _float_p("pdist", p, 2)
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input._dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    _check_p("pdist", p)
    if input._dtype in (dt.float16, dt.bfloat16):
        raise NotImplementedError(f"\"pdist\" not implemented for '{type_name(input._dtype)}'")
    out = pdist2(input) if p == 2 else None  # (one node, PyTorch's gradient)
    if out is not None:
        return saves(out, input)
    n = input._shape[0]
    i, j = triu_indices(n, n, 1, device=input.device)
    out = vector_norm(input[i] - input[j], p, -1)
    if out.grad_fn is not None:
        rename_node(out.grad_fn, "PdistBackward0")
    # (PyTorch's _pdist_forward keeps its input: an in-place write to it refuses backward)
    return saves(out, input)


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """Columns are powers of `x`: x**(N-1), ..., x**0 (or ascending)."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    powers = arange(n)
    if not increasing:
        powers = powers.flip(0)
    base = x if x.dtype.is_floating_point or x.dtype.is_complex else x.to(dt.int64)
    return base.unsqueeze(-1) ** powers.to(base.dtype)


_PART_DTYPES = (dt.float16, dt.float32, dt.float64)


def _check_parts(fname: str, first, second, names: tuple[str, str]) -> None:
    """complex()'s and polar()'s checks of their two operands, in PyTorch's order and words."""
    need_tensors(fname, (names[0], 1, first), (names[1], 2, second))
    if first.dtype not in _PART_DTYPES or second.dtype not in _PART_DTYPES:
        raise RuntimeError("Expected both inputs to be Half, Float or Double tensors but got "
                           f"{type_name(first.dtype)} and {type_name(second.dtype)}")
    if first.dtype is not second.dtype:
        raise RuntimeError(f"Expected object of scalar type {type_name(first.dtype)} but got "
                           f"scalar type {type_name(second.dtype)} for second argument")


def _from_parts(real: Tensor, imag: Tensor, operands: tuple) -> Tensor:
    """The complex tensor of parts `real` and `imag`, laid out as PyTorch's one kernel lays
    out a pointwise result of `operands` (the op's own arguments)."""
    from .dtype_views import view_as_complex
    from .join import broadcast_tensors, stack_pointwise

    part = dt.float64 if real.dtype is dt.float64 else dt.float32
    # (built from its parts: `real + imag * 1j` would make nan + nanj of 0 + nanj)
    re, im = broadcast_tensors(real.to(part), imag.to(part))
    pair = stack_pointwise([re, im], operands)
    # (parts all fresh and row-major: dispatch's fast path leaves the stack row-major)
    inner = member_strides(operands, re._shape, None)
    return view_as_complex(restrided(pair, tuple(2 * s for s in inner) + (1,)))


def complex(real: Tensor, imag: Tensor) -> Tensor:
    """real + i * imag, for float16 / float32 / float64 inputs of the same dtype."""
    _check_parts("complex", real, imag, ("real", "imag"))
    out = _from_parts(real, imag, (real, imag))
    if out.grad_fn is not None:
        rename_node(out.grad_fn, "ComplexBackward0")  # (PyTorch's one kernel for the op)
    return out


def polar(abs: Tensor, angle: Tensor) -> Tensor:
    """abs * (cos(angle) + i sin(angle))."""
    _check_parts("polar", abs, angle, ("abs", "angle"))
    if abs.dtype is dt.float16:
        raise NotImplementedError("\"polar_cpu\" not implemented for 'Half'")
    radius = abs
    if abs.requires_grad:
        # NOTE: PyTorch's backward takes abs's gradient as Re(conj(g) sgn(result)), which
        # is sign(abs) times the true derivative (flipped for a negative abs, 0 at 0): the
        # radius keeps abs's value (x - (+0.0) is x, -0.0 too) and takes its gradient
        # through |abs| (an infinite abs, whose |abs| - |abs| is NaN, gets none).
        size = abs.abs()
        zero = (size.detach() - size).masked_fill(size.isinf(), 0.0)
        radius = abs.detach() - zero
    out = _from_parts(radius * angle.cos(), radius * angle.sin(), (abs, angle))
    if out.grad_fn is not None:
        rename_node(out.grad_fn, "PolarBackward0")
    return out


TENSOR_METHODS = {"diff": diff}

__all__ = [
    "diff", "gradient", "trapezoid", "trapz", "cumulative_trapezoid", "isin", "tril_indices",
    "triu_indices", "block_diag", "cdist", "pdist", "vander", "complex", "polar",
]
