"""In-place ops under autograd: the result is computed out of place, then written back.

`x.op_()` on a tensor in the graph becomes `y = op(x)`; `y`'s values are copied
into `x`'s memory and `x` takes over `y`'s node, so later uses of `x` see the
new values and backward flows through the op. When `x` is a view, its base's
history is rewritten as well (`CopySlices`, as PyTorch does): the base becomes
`copy_slices(old_base, y)` and the view a fresh strided view of that new base.
Other views of the same base notice the version change and refresh their own
node when next used (`graph.refresh_view`).
"""

from __future__ import annotations

from .. import _tensor as T
from .._core import vjp_rules
from .._core.primitive import mark_inplace
from . import grad_mode
from .graph import record, refresh_view, take_node


def inplace_with_grad(prim, self, args, params):
    """`self.op_(*args)` when the result must be recorded in the graph."""
    from ..ops.copy import clone
    from ..ops.registry import apply, bump_version, write_into

    base = self._base
    if base is not None and not self._requires_grad and base._requires_grad:
        refresh_view(self)  # a view taken before its base joined the graph
    result = apply(prim, self, *args, **params)
    if result.__class__ is tuple:
        raise RuntimeError(f"in-place {prim.name} with several outputs is not supported")
    if result._shape != self._shape:
        raise RuntimeError(
            f"output with shape {list(self._shape)} doesn't match the broadcast shape "
            f"{list(result._shape)}"
        )
    if result._dtype is not self._dtype:
        result = result.to(self._dtype)
    node = result._grad_fn
    mark_inplace(node)
    if node is not None and node._saved:
        _protect_saved(node, self, clone)
    if self.device.type != "meta":
        write_into(self, result)
    bump_version(self)
    if base is not None:
        rebase_view(self, result)
    elif node is not None:
        take_node(self, node, result.output_nr)
        share_saved_output(node, self)
    else:  # the op has no derivative: what is in `self` now is a constant
        self._grad_fn = None
        self._requires_grad = False
    return self


def share_saved_output(node, self) -> None:
    """PyTorch's in-place op outputs `self` itself, so an output its derivative saves is
    `self`, and a later write into `self` makes backward refuse. Ours was computed out of
    place: its saved output takes `self`'s version counter, at `self`'s version now."""
    out = node._out
    n = len(node._saved)
    versions = list(node._versions)
    if out is None or out.__class__ is tuple or len(versions) <= n or versions[n] is None:
        return
    out._vc = self._vc
    versions[n] = self._vc[0]
    node._versions = tuple(versions)


def _protect_saved(node, self, clone) -> None:
    """The node may have saved `self`, which is about to be overwritten: save a copy.

    The copy is made with grad on, so a double backward still reaches `self`'s
    old history through it.
    """
    saved = list(node._saved)
    versions = list(node._versions)
    copy = None
    for i, s in enumerate(saved):
        if s is self:
            if copy is None:
                with grad_mode.enable_grad():
                    copy = clone(self)
            saved[i] = copy
            versions[i] = copy._vc[0] if copy._vc is not None else None
    node._saved = tuple(saved)
    node._versions = tuple(versions)


def rebase_view(view, result) -> None:
    """`view` of `base` was overwritten with `result`: rewrite both histories.

    The base takes a CopySlices node (old base outside the region, `result`
    inside), recorded directly: its values are already in memory. The view then
    becomes a strided view of the new base.
    """
    from ..ops.dtype_views import view_as_complex, view_as_real
    from ..ops.inplace_view import copy_slices_p, geometry

    base = view._base
    if not (base._requires_grad or result._requires_grad):
        view._grad_fn = None
        view._requires_grad = False
        return
    # A real view of a complex base (`.real`, `.imag`) counts its strides in real elements:
    # the region is replaced in the base's real view, which the base is then seen through.
    real = view._dtype is not base._dtype
    if real:
        with grad_mode.enable_grad():
            whole = view_as_real(base)
    else:
        whole = base
    holder = T._alias(whole)
    record(copy_slices_p, vjp_rules[copy_slices_p], (whole, result),
           {"base_geom": geometry(whole), "view_geom": geometry(view)}, holder)
    if real:
        with grad_mode.enable_grad():
            holder = view_as_complex(holder)
    take_node(base, holder._grad_fn, 0)
    refresh_view(view)
