"""In-place ops under autograd: the result is computed out of place, then written back.

`x.op_()` on a tensor in the graph becomes `y = op(x)`; `y`'s values are copied
into `x`'s memory and `x` takes over `y`'s node, so later uses of `x` see the
new values and backward flows through the op. When `x` is a view, its base's
history is rewritten too (`CopySlices`), as PyTorch does.
"""

from __future__ import annotations

from .. import _tensor as T
from . import grad_mode
from .graph import ag_meta


def inplace_with_grad(prim, self, args, params):
    from ..ops.registry import apply, bump_version, write_into

    result = apply(prim, self, *args, **params)
    node = result._grad_fn
    if node is not None and node._saved is not None:
        # The VJP may read the old value of `self`, which is about to be overwritten.
        saved = list(node._saved)
        for i, s in enumerate(saved):
            if s is self:
                with grad_mode.no_grad():
                    saved[i] = self.clone()
                saved[i]._vc = [node._versions[i]]
        node._saved = tuple(saved)
    write_into(self, result)
    bump_version(self)
    if result._grad_fn is None:
        return self
    if self._base is not None:
        rebase_view(self, result)
    else:
        take_history(self, result)
    return self


def take_history(self, result) -> None:
    """Make `self` the output of `result`'s node (after its values were copied in)."""
    self._grad_fn = result._grad_fn
    self._requires_grad = True
    nr = result.output_nr
    if nr or self._ag is not None:
        ag_meta(self).output_nr = nr
    if self._ag is not None and self._ag.retains_grad:
        self._ag.retains_grad = False
        from .graph import retain_grad

        retain_grad(self)


def rebase_view(view, result) -> None:
    """`view` of `base` was overwritten by `result`: rewrite both histories."""
    from ..ops.inplace_view import copy_slices

    base = view._base
    new_base = copy_slices(base, result, view)
    take_history(base, new_base)
    with grad_mode.enable_grad():
        new_view = T._view(base, view._shape, view.stride(), view._offset)
        from ..ops.movement import as_strided

        regenerated = as_strided(base, view._shape, view.stride(), view._offset)
    del new_view
    view._grad_fn = regenerated._grad_fn
    view._requires_grad = True
