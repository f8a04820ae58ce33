"""Writing a kernel's result into an existing array (a tensor's storage view), safely.

NumPy's ufuncs are meant to handle `out=` aliasing an input, but some releases get it
wrong: NumPy 2.2-2.4 computes `np.negative(v, out=v)` for a view `v` whose step is
16 bytes of float32 as if `v` were contiguous, so an in-place op on a column silently
writes wrong values. Rather than trust every ufunc, dtype and stride, the rule here is
safe by construction:

- the direct `kernel(..., out=dst)` runs only when `dst` is C-contiguous and every
  array input either does not touch `dst`'s memory or is exactly `dst` (same start,
  shape and strides): an elementwise loop then reads each element before writing it;
- anything else computes into a fresh contiguous array of `dst`'s dtype (the same loop
  and the same cast as the direct call) and copies it back with `np.copyto`, which
  never reads what it writes.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._core import Family, kernels
from ..native.calls import ptr

_cpu_kernels = kernels["cpu"]
_ndarray = np.ndarray
_may_share = np.may_share_memory
_ufunc = np.ufunc
_SCALARS = (int, float, complex, np.generic)


def _same_view(a: np.ndarray, dst: np.ndarray) -> bool:
    """True when `a` is exactly the memory `dst` is (same start, shape and strides)."""
    return (a.shape == dst.shape and a.strides == dst.strides
            and ptr(a) == ptr(dst))


def _owner(a: np.ndarray):
    """The object owning `a`'s memory as NumPy records it (NumPy collapses view chains)."""
    b = a.base
    return a if b is None else b


def _disjoint(a: np.ndarray, dst: np.ndarray, dst_owner) -> bool:
    """True when `a` provably shares no memory with `dst` (cheap test first)."""
    owner = _owner(a)
    if owner is not dst_owner and owner.__class__ is _ndarray and owner.base is None \
            and dst_owner.__class__ is _ndarray and dst_owner.base is None:
        return True  # two different NumPy allocations
    return not _may_share(a, dst)


def direct_ok(dst: np.ndarray, arrays) -> bool:
    """Whether `ufunc(*arrays, out=dst)` is known to be right without a temporary."""
    if not dst.flags.c_contiguous:
        return False
    dst_owner = _owner(dst)
    for a in arrays:
        if a.__class__ is _ndarray and a is not dst and not _disjoint(a, dst, dst_owner) \
                and not _same_view(a, dst):
            return False
    return True


def ufunc_into(ufunc: np.ufunc, dst: np.ndarray, arrays, params: dict) -> None:
    """`dst[...] = ufunc(*arrays)` cast unsafely to `dst`'s dtype, whatever `dst`'s layout
    and however the inputs alias it."""
    if direct_ok(dst, arrays):
        ufunc(*arrays, out=dst, casting="unsafe", **params)
        return
    tmp = np.empty(dst.shape, dst.dtype)
    ufunc(*arrays, out=tmp, casting="unsafe", **params)
    np.copyto(dst, tmp, casting="unsafe")


def result_into(dst: np.ndarray, res) -> None:
    """Copy a kernel's result into `dst` (cast unsafely), copying it first when it is a view
    overlapping `dst` in some other way than being `dst` itself."""
    if res.__class__ is _ndarray and not _disjoint(res, dst, _owner(dst)):
        if _same_view(res, dst):
            if res.dtype == dst.dtype:
                return
        res = res.copy()
    np.copyto(dst, res, casting="unsafe")


def writes_into(kernel: Callable, into: Callable) -> Callable:
    """Give a (non-ufunc) kernel its in-place form: `into(dst, *arrays, **params)` writes
    what `kernel(dst, *arrays, **params)` would return into `dst` itself and returns True,
    or returns False (nothing written) to have `run_inplace` compute out of place and copy,
    e.g. when an input overlaps `dst`. A write that touches only some elements (a masked
    fill) then costs neither a result array nor a copy of it."""
    kernel.into = into
    return kernel


def disjoint_or_same(a: np.ndarray, dst: np.ndarray) -> bool:
    """Whether `a` shares no memory with `dst`, or is exactly `dst`'s memory, so that an
    elementwise write into `dst` reading `a` reads each element before writing it."""
    return _disjoint(a, dst, _owner(dst)) or _same_view(a, dst)


def run_inplace(prim, self, dst: np.ndarray, arrays: list, params: dict,
                check_shape: Callable) -> None:
    """Run `prim`'s kernel on `dst` (the storage view of tensor `self`) and `arrays`, writing
    the result into `dst`. `check_shape(prim, self, arrays)` raises when a result of that
    shape cannot be written into `self`; it is skipped when every operand is a scalar or an
    array of `dst`'s shape, which it would accept."""
    kernel = _cpu_kernels[prim]
    if prim.__class__ is Family:  # the member's own kernel (a ufunc may write in place)
        params = dict(params)
        kernel = params.pop("fn").kernel
        if getattr(kernel, "numpy", None).__class__ is _ufunc:  # (a native twin's chooser:
            kernel = kernel.numpy  # its ufunc writes in place, as before the twin)
    shape = dst.shape
    if kernel.__class__ is not _ufunc:
        into = getattr(kernel, "into", None)
        if into is not None:  # the kernel's own in-place form (see `writes_into`)
            for a in arrays:
                if a.__class__ is _ndarray and a.shape != shape:
                    check_shape(prim, self, arrays)
                    break
            if into(dst, *arrays, **params):
                return
        res = kernel(dst, *arrays, **params)
        if res.__class__ is not _ndarray:
            if np.shape(res) != shape:
                check_shape(prim, self, [res])
        elif res.shape != shape:
            check_shape(prim, self, [res])
        if res.base is not None or res is dst or res is dst.base:  # maybe overlapping dst
            result_into(dst, res)
        else:
            np.copyto(dst, res, casting="unsafe")
        return
    # One pass over the operands for the shape check and `direct_ok(dst, [dst, *arrays])`,
    # inlined: this is every in-place op's hot path.
    check = False
    direct = dst.flags.c_contiguous
    dst_owner = None
    for a in arrays:
        if a.__class__ is not _ndarray:
            if not isinstance(a, _SCALARS):
                check = True
            continue
        if a.shape != shape:
            check = True
        if not direct:
            continue
        owner = a.base
        if owner is None:
            owner = a
        if dst_owner is None:
            dst_owner = dst.base
            if dst_owner is None:
                dst_owner = dst
            plain = dst_owner.__class__ is _ndarray and dst_owner.base is None
        if plain and owner is not dst_owner and owner.__class__ is _ndarray \
                and owner.base is None:
            continue  # two different NumPy allocations
        if _may_share(a, dst) and not _same_view(a, dst):
            direct = False
    if check:
        check_shape(prim, self, arrays)
    if direct:
        kernel(dst, *arrays, out=dst, casting="unsafe", **params)
        return
    tmp = np.empty(shape, dst.dtype)
    kernel(dst, *arrays, out=tmp, casting="unsafe", **params)
    np.copyto(dst, tmp, casting="unsafe")
