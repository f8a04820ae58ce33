"""`mx.custom_function` and `mx.checkpoint`: functions with their own transform rules.

A `custom_function` with a rule attached runs, when a transform is watching (an input
requires grad, or a jvp / vmap level is on the stack), as one ember `autograd.Function`:
its forward calls the Python function on arrays, its backward calls the `.vjp` rule
(`vjp(primals, cotangents, outputs)`), its forward-mode rule calls `.jvp`
(`jvp(primals, tangents)`), and its batch rule calls `.vmap` (`vmap(inputs, axes) ->
(outputs, out_axes)`). A transform without a rule of its own differentiates or maps the
function itself, as MLX does. As in MLX, primals, tangents and axes are the positional
arguments as a tuple, or the argument itself when there is one.

`checkpoint(fun)` is a custom function whose vjp runs `fun` again: the forward pass
keeps only the inputs, and the backward recomputes the rest.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import ember as E

from ..._core.dispatch import transform_active
from ..._core.primitive import defbatch
from . import _trees
from ._array import _wrap, array
from ._binding import bad_call


def _arrays(tree) -> list:
    return [x for x in _trees.leaves(tree) if isinstance(x, array)]


def _refill(tree, new: list):
    """`tree` with its arrays replaced, in order, by `new`."""
    it = iter(new)
    return _trees.tree_map(lambda x: next(it) if isinstance(x, array) else x, tree)


def _as_arrays(tensors, dtypes) -> list:
    return [_wrap(t, d) for t, d in zip(tensors, dtypes)]


class _Call:
    """One call of a custom function: its arguments' structure, its inputs' dtypes, and
    (once the forward ran) its output's structure and dtypes."""

    __slots__ = ("args", "kwargs", "dtypes", "out", "out_dtypes")

    def __init__(self, args: tuple, kwargs: dict, flat: list) -> None:
        self.args, self.kwargs = args, kwargs
        self.dtypes = [a._dtype for a in flat]
        self.out = None
        self.out_dtypes: list = []

    def rebuild(self, arrays: list) -> tuple:
        """(args, kwargs) with these arrays in place of the call's."""
        return _refill((self.args, self.kwargs), arrays)

    def primals(self, arrays: list):
        """The positional arguments as MLX's rules get them: a tuple, or the one argument."""
        args, _ = self.rebuild(arrays)
        return args[0] if len(args) == 1 else tuple(args)


class custom_function:  # noqa: N801  (MLX's name)
    """`fun` with transform rules attached by `.vjp`, `.jvp` and `.vmap` (see the module
    docstring); with none attached it is `fun`."""

    def __init__(self, fun: Callable) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self._vjp: Callable | None = None
        self._jvp: Callable | None = None
        self._vmap: Callable | None = None
        self._fn = _function_of(self)

    def vjp(self, rule: Callable) -> custom_function:
        """Attach `rule(primals, cotangents, outputs)` -> the primals' cotangents."""
        self._vjp = rule
        return self

    def jvp(self, rule: Callable) -> custom_function:
        """Attach `rule(primals, tangents)` -> the outputs' tangents."""
        self._jvp = rule
        return self

    def vmap(self, rule: Callable) -> custom_function:
        """Attach `rule(inputs, axes)` -> `(outputs, out_axes)`."""
        self._vmap = rule
        return self

    def __call__(self, *args, **kwargs):
        if self._vjp is None and self._jvp is None and self._vmap is None:
            return self.fun(*args, **kwargs)
        flat = _arrays((args, kwargs))
        if not transform_active() and not any(a._t._requires_grad for a in flat):
            return self.fun(*args, **kwargs)  # (nothing to apply a rule to)
        call = _Call(args, kwargs, flat)
        outs = self._fn.apply(call, *[a._t for a in flat])
        return _refill(call.out, _as_arrays(outs, call.out_dtypes))

    # -- the rules, on tensors (what the ember Function calls) --------------------------------

    def _forward(self, call: _Call, tensors: tuple) -> tuple:
        args, kwargs = call.rebuild(_as_arrays(tensors, call.dtypes))
        out = self.fun(*args, **kwargs)
        flat = _arrays(out)
        call.out = out
        call.out_dtypes = [a._dtype for a in flat]
        return tuple(a._t for a in flat)

    def _flat_fun(self, call: _Call) -> Callable:
        """`fun` as a function of its input arrays, returning its output arrays (a list)."""
        def flat_fun(*arrays):
            args, kwargs = call.rebuild(list(arrays))
            out = self.fun(*args, **kwargs)
            flat = _arrays(out)
            call.out, call.out_dtypes = out, [a._dtype for a in flat]
            return flat
        return flat_fun

    def _backward(self, call: _Call, primals: tuple, outputs: tuple, cots: tuple) -> list:
        from ._transforms import vjp

        xs = _as_arrays(primals, call.dtypes)
        cs = _as_arrays(cots, call.out_dtypes)
        if self._vjp is None:
            return vjp(self._flat_fun(call), xs, cs)[1]
        res = self._vjp(call.primals(xs), _refill(call.out, cs),
                        _refill(call.out, _as_arrays(outputs, call.out_dtypes)), **call.kwargs)
        return _arrays(res)

    def _tangents(self, call: _Call, primals: tuple, tangents: tuple) -> list:
        from ._transforms import jvp

        xs = _as_arrays(primals, call.dtypes)
        ts = _as_arrays(tangents, call.dtypes)
        if self._jvp is None:
            return jvp(self._flat_fun(call), xs, ts)[1]
        if call.kwargs:
            raise ValueError("[custom jvp] Function should only accept positional arguments")
        return _arrays(self._jvp(call.primals(xs), call.primals(ts)))

    def _batched(self, call: _Call, tensors: tuple, dims: tuple):
        from ._transforms import vmap

        xs = _as_arrays(tensors, call.dtypes)
        if self._vmap is None:
            outs = vmap(self._flat_fun(call), in_axes=tuple(dims))(*xs)
            return tuple(a._t for a in outs), (0,) * len(outs)
        if call.kwargs:
            raise ValueError("[custom vmap] Function should only accept positional arguments")
        # (as MLX, the function runs once on one example first: its output's structure
        # is the call's, whatever containers the rule returns its arrays in)
        self._flat_fun(call)(*[_one_example(x, d) for x, d in zip(xs, dims)])
        res = self._vmap(call.primals(xs), call.primals(list(dims)))
        if not isinstance(res, tuple) or len(res) != 2:
            raise ValueError("[custom vmap] Vmap function should return a tuple with 2 items.")
        outs, axes = res
        flat = _arrays(outs)
        call.out_dtypes = [a._dtype for a in flat]
        return tuple(a._t for a in flat), tuple(_trees.leaves(axes))


def _one_example(x: array, dim: int | None) -> array:
    """Example 0 of `x` mapped along `dim` (zeros of an example's shape when there is
    none), or `x` itself when it is not mapped."""
    if dim is None:
        return x
    if x.shape[dim] == 0:
        return _wrap(E.zeros(x.shape[:dim] + x.shape[dim + 1:], dtype=x._t.dtype), x._dtype)
    return x[(slice(None),) * dim + (0,)]


def _function_of(cf: custom_function) -> type:
    """An ember `autograd.Function` running `cf`'s forward and rules (one per function)."""

    class CustomFunction(E.autograd.Function):
        @staticmethod
        def forward(call, *tensors):
            return cf._forward(call, tensors)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.call = inputs[0]
            ctx.n_in = len(inputs) - 1
            ctx.primals = inputs[1:]  # (forward mode reads them here: it saves nothing)
            ctx.save_for_backward(*inputs[1:], *output)

        @staticmethod
        def backward(ctx, *cots):
            saved = ctx.saved_tensors
            primals, outputs = saved[:ctx.n_in], saved[ctx.n_in:]
            grads = cf._backward(ctx.call, primals, outputs, cots)
            return (None, *[g._t.to(p.dtype) if g is not None else None
                            for g, p in zip(grads, primals)])

        @staticmethod
        def jvp(ctx, _call, *tangents):
            return tuple(t._t for t in cf._tangents(ctx.call, ctx.primals, tangents))

    CustomFunction.__name__ = CustomFunction.__qualname__ = getattr(
        cf.fun, "__name__", "custom_function")

    def batch_rule(args, dims, **_params):
        return cf._batched(args[0], args[1:], dims[1:])

    defbatch(CustomFunction._prim, batch_rule)
    return CustomFunction


def checkpoint(fun: Callable) -> Callable:
    """`fun`, whose backward pass runs it again instead of keeping its intermediate arrays
    (same values and gradients as `fun`)."""
    if not callable(fun):
        raise bad_call("checkpoint", "checkpoint(fun: Callable[P, R]) -> Callable[P, R]", (fun,))
    cf = custom_function(fun)

    @cf.vjp
    def recompute(primals, cotangents, outputs, **kwargs):
        from ._transforms import vjp

        args = primals if isinstance(primals, tuple) else (primals,)
        flat = _arrays((args, kwargs))

        def flat_fun(*arrays):
            a, k = _refill((args, kwargs), list(arrays))
            return _arrays(fun(*a, **k))

        return vjp(flat_fun, flat, _arrays(cotangents))[1]

    return functools.wraps(fun)(lambda *args, **kwargs: cf(*args, **kwargs))
