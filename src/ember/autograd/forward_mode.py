"""Forward-mode AD as an interpreter: each op's tangent from its primitive's `jvp` rule.

A `JVPInterpreter` is one level of forward mode. It keeps the tangent of every tensor
that carries one at its level (keyed by the tensor's identity, dropped when the tensor
dies), so a dual tensor is an ordinary tensor: its values are the primal, and the level
knows its tangent. For each op bound inside it:

- no input has a tangent: the op runs below, untouched;
- otherwise the op runs below, then the primitive's rule maps the inputs' tangents to the
  output's, with the rule's own ops bound *below* this level. An outer level therefore
  sees a tangent's arithmetic as ordinary ops and differentiates it in turn, and two
  levels never mix their tangents (no perturbation confusion).

One forward pass per level: a rule is a handful of ops on the tangent. Primitives marked
`BY_VJP` (fused backward kernels, recursions) get theirs from the VJP, transposed.
"""

from __future__ import annotations

import weakref

from .. import _tensor as T
from .._core import BY_VJP, MISSING, Interpreter, bind, jvp_rule, rule_params
from .._core.primitive import Family
from ..ops.registry import InplacePrimitive
from . import grad_mode
from .function import Function, FunctionPrimitive


def _differentiable(t) -> bool:
    return t._dtype.is_floating_point or t._dtype.is_complex


class JVPInterpreter(Interpreter):
    """One level of forward mode: `tangent(t)` is tensor t's tangent at this level."""

    carries_tangents = True

    def __init__(self, level: int) -> None:
        self.level = level
        self._tangents: dict = {}  # id(tensor) -> (weakref to it, tangent or None)
        # id(NumPy array) -> (weakref to it, tangent): an alias of a tensor made outside
        # bind (what a graph node saves of an output) shares its array, and its tangent
        self._by_array: dict = {}

    # --- the tangent map ----------------------------------------------------------------

    def tangent(self, t):
        """`t`'s tangent at this level, or None (zero)."""
        entry = self._tangents.get(id(t))
        if entry is not None and entry[0]() is t:
            return entry[1]
        arr = t._np
        if arr is not None:
            entry = self._by_array.get(id(arr))
            if entry is not None and entry[0]() is arr:
                return entry[1]
        value = getattr(t, "_value", None)  # a tensor vmap batches: its data's tangent,
        if value is not None:  # seen as one example's (the tape's gradients arrive so)
            pt = self.tangent(value)
            if pt is not None:
                return t._rebatched(pt)
        return None

    def _mark_zero(self, t) -> None:
        key = id(t)
        tangents = self._tangents

        def drop(_, key=key, tangents=tangents):
            tangents.pop(key, None)

        tangents[key] = (weakref.ref(t, drop), None)

    def set_tangent(self, t, tangent) -> None:
        key = id(t)
        if tangent is None:
            self._tangents.pop(key, None)
            return
        tangents = self._tangents

        def drop(_, key=key, tangents=tangents):
            tangents.pop(key, None)

        tangents[key] = (weakref.ref(t, drop), tangent)
        arr = t._np
        if arr is not None:
            by_array, akey = self._by_array, id(arr)

            def drop_array(_, key=akey, by_array=by_array):
                by_array.pop(key, None)

            by_array[akey] = (weakref.ref(arr, drop_array), tangent)
        value = getattr(t, "_value", None)
        if value is not None:
            # A tensor vmap batches: its data gets the tangent laid out as the data is, so
            # ops on the data itself (the tape's backward pass) carry it too.
            self.set_tangent(value, self.below(t._physical, tangent))

    # --- ops ----------------------------------------------------------------------------

    def process(self, prim, args: tuple, params: dict):
        tangents = [self.tangent(a) if isinstance(a, T.Tensor) else None for a in args]
        if not any(t is not None for t in tangents):
            return self.lower(prim, args, params)
        if isinstance(prim, InplacePrimitive):
            return self._inplace(prim, args, params, tangents)
        if prim.writes_first:  # x[key] = value
            return self._write(prim, args, params, tangents)
        if isinstance(prim, FunctionPrimitive):
            return self._custom(prim, args, params, tangents)
        out = self.lower(prim, args, params)
        self._attach(out, self._rule_tangents(prim, args, tangents, out, params))
        return out

    def _rule_tangents(self, prim, args, tangents, out, params, inplace: bool = False):
        rule = jvp_rule(prim, params)
        if rule is None:
            return None  # not differentiable: the outputs carry no tangent
        if rule is MISSING:
            name = params["fn"].name if isinstance(prim, Family) else prim.name
            raise RuntimeError(f"forward-mode AD: '{name}' has no jvp rule")
        if rule is BY_VJP:
            from .jvp_from_vjp import jvp_from_vjp

            return self.below(jvp_from_vjp, prim, args, tuple(tangents), params)
        rparams = rule_params(prim, params)
        if inplace and getattr(rule, "not_implemented", None):  # (its words name `op_`)
            rparams = {**rparams, "_inplace": True}
        return self.below(rule, args, tuple(tangents), out, **rparams)

    def _attach(self, out, t_out) -> None:
        if t_out is None:  # no tangent, said explicitly: an alias of the input (detach)
            for o in (out if isinstance(out, tuple) else (out,)):  # must not find one
                if isinstance(o, T.Tensor):
                    self._mark_zero(o)
            return
        if isinstance(out, tuple):
            for o, t in zip(out, t_out):
                if t is not None and _differentiable(o):
                    self.set_tangent(o, t)
        elif _differentiable(out):
            self.set_tangent(out, t_out)

    def _custom(self, prim, args, params, tangents):
        """A custom `autograd.Function`: its own `jvp(ctx, *tangents)`, with the `ctx` a
        forward pass filled (what it saved with `save_for_forward` is `saved_tensors`)."""
        from ..ops.creation import zeros_like

        cls = prim.fn_cls
        ctx = cls._node_cls.__new__(cls._node_cls)
        ctx.needs_input_grad = tuple(False for _ in args)

        def forward():
            with grad_mode.no_grad():
                if cls.setup_context is not Function.setup_context:
                    res = cls.forward(*args, **params)
                    cls.setup_context(ctx, args, res)
                else:
                    cls.forward(ctx, *args, **params)

        self.below(forward)
        fwd = getattr(ctx, "_to_save_fwd", None)
        ctx._saved = tuple(fwd) if fwd is not None else tuple(ctx._to_save)
        ctx._versions = (None,) * len(ctx._saved)
        out = self.lower(prim, args, params)
        ts = [t if t is not None else (self.below(zeros_like, a) if isinstance(a, T.Tensor)
                                       else None) for a, t in zip(args, tangents)]
        self._attach(out, self.below(cls.jvp, ctx, *ts))
        return out

    def _inplace(self, prim, args, params, tangents):
        """`x.op_(y)`: the functional op's tangent, computed before `x` is overwritten,
        becomes `x`'s tangent."""
        from .._core import bind

        base = prim.base
        result = self.below(bind, base, *args, **params)
        t_out = self._rule_tangents(base, args, tangents, result, params, inplace=True)
        self_ = self.lower(prim, args, params)
        if t_out is not None and t_out._dtype is not self_._dtype:
            t_out = self.below(t_out.to, self_._dtype)
        self._rewrite(self_, t_out if _differentiable(self_) else None)
        return self_

    def _write(self, prim, args, params, tangents):
        """`x[key] = value` (a primitive that writes into its first argument): x's new
        tangent is its old one (or zeros) with value's tangent (or zeros) written at key,
        by the same primitive, below this level."""
        from ..ops.creation import zeros_like

        x, value = args[0], args[1]
        self.lower(prim, args, params)
        if not _differentiable(x):
            return None

        def tangent_write():
            tx = tangents[0]
            new = zeros_like(x) if tx is None else tx.clone()
            tv = tangents[1]
            if tv is None:
                tv = zeros_like(value) if isinstance(value, T.Tensor) else 0.0
            bind(prim, new, tv, *args[2:], **params)
            return new

        self._rewrite(x, self.below(tangent_write))
        return None

    def _rewrite(self, t, tangent) -> None:
        """`t` was written in place and has `tangent` now. When `t` is a view, its base's
        tangent gets the view's region rewritten too, out of place (`copy_slices`, what
        autograd records for the same write), so the base and the views taken from it
        later see the write as their values do."""
        self.set_tangent(t, tangent)
        base = t._base
        if base is None or not _differentiable(base):
            return
        tb = self.tangent(base)
        if tangent is None and tb is None:
            return

        def rebase():  # (the geometries are the primals': the tangents' layouts may differ)
            from ..ops.creation import zeros_like
            from ..ops.inplace_view import copy_slices_geom, geometry

            return copy_slices_geom(zeros_like(base) if tb is None else tb,
                                    zeros_like(t) if tangent is None else tangent,
                                    geometry(base), geometry(t))

        self.set_tangent(base, self.below(rebase))


def _storage_numel(t) -> int:
    return t.untyped_storage().nbytes() // t.element_size()


def _same_layout(tangent, primal) -> bool:
    """Laid out alike: the same storage size and offset, and the same stride on every dim
    longer than one (PyTorch's test for keeping a tangent as it was given)."""
    return (tangent.storage_offset() == primal.storage_offset()
            and _storage_numel(tangent) == _storage_numel(primal)
            and all(a == b or n < 2 for a, b, n in
                    zip(tangent.stride(), primal.stride(), primal.shape)))


def in_primal_layout(tangent, primal):
    """`tangent` itself when it is laid out as `primal`, else a copy in `primal`'s layout
    (its strides and offset in a storage of the primal's size), as PyTorch stores it: a
    later in-place write to the given tangent then no longer reaches the dual's. (An
    expanded primal has no such layout to copy into: RuntimeError, as in PyTorch.) A
    transform's wrapper (a vmap-batched value) has no storage of its own: kept as given."""
    if tangent._is_wrapper or primal._is_wrapper or _same_layout(tangent, primal):
        return tangent
    from ..ops.creation import zeros

    new = zeros(_storage_numel(primal), dtype=tangent.dtype, device=tangent.device)
    new = new.as_strided(primal.shape, primal.stride(), primal.storage_offset())
    return new.copy_(tangent)
