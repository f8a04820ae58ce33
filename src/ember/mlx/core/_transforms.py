"""MLX's function transforms with MLX's signatures, on ember's (`ember.func`).

`grad` / `value_and_grad` take `argnums` and `argnames` and differentiate trees of arrays;
a function returning a tuple gives `((loss, *aux), grads)` from `value_and_grad` and is
refused by `grad`. `vjp` / `jvp` take and return lists. `vmap` maps `in_axes` /
`out_axes`. Each wrapper flattens its arguments' trees, hands ember's transform the
tensors of the arrays to differentiate or map, and puts arrays back around what the
function sees and returns.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable

import ember as E

from . import _lazy, _trees
from ._array import _wrap, array

_func = E.func


def _is_array(x) -> bool:
    return isinstance(x, array)


def _array_like(t, like: array) -> array:
    return _wrap(t, like._dtype if t.dtype is like._t.dtype else None)


def _scalar_loss(out, who: str):
    """(the array to differentiate, the whole output) of a differentiated function."""
    if isinstance(out, array):
        loss = out
    elif isinstance(out, list | tuple) and out and isinstance(out[0], array):
        if who == "grad":
            raise ValueError(
                "[grad] The return value of the function whose gradient we want to compute "
                f"should be a scalar array; but {type(out).__name__} was returned.")
        loss = out[0]
    else:
        raise ValueError(
            f"[{who}] The return value of the function whose gradient we want to compute "
            "should be either a scalar array or a tuple with the first value being a scalar "
            f"array (Union[array, tuple[array, Any, ...]]); but {type(out).__name__} was "
            "returned.")
    if loss.size != 1:
        raise ValueError(f"[{who}] The function whose gradient we want to compute should "
                         f"return a scalar array; got an array of shape {loss.shape}.")
    return loss


def _value_and_grad(fun: Callable, argnums, argnames, who: str) -> Callable:
    argnames = [argnames] if isinstance(argnames, str) else list(argnames)
    if argnums is None:
        argnums = [] if argnames else 0
    nums = [argnums] if isinstance(argnums, int) else list(argnums)
    single = len(nums) == 1  # (MLX gives one gradient for `argnums=[0]` too)

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        for i in nums:
            if i >= len(args):
                raise ValueError(f"[{who}] Can't compute the gradient of argument index {i} "
                                 f"because the function is called with only {len(args)} "
                                 "positional arguments.")
        for n in argnames:
            if n not in kwargs:
                raise ValueError(f"[{who}] Can't compute the gradient of keyword argument "
                                 f"'{n}' because the function is called with the following "
                                 f"keyword arguments {list(kwargs)}")
        trees = [args[i] for i in nums] + [kwargs[n] for n in argnames]
        flat = _trees.leaves(trees)
        if not flat:
            raise ValueError(f"[{who.split('_')[-1]}] Must specify at least one argument.")
        diff = [x for x in flat if _is_array(x) and x._dtype.kind in "fc"]

        def inner(*tensors):
            it = iter(tensors)
            inside = [_array_like(next(it), x) if _is_array(x) and x._dtype.kind in "fc"
                      else x for x in flat]
            new_trees = _trees.rebuild(trees, iter(inside))
            new_args, new_kwargs = list(args), dict(kwargs)
            for i, t in zip(nums, new_trees):
                new_args[i] = t
            for n, t in zip(argnames, new_trees[len(nums):]):
                new_kwargs[n] = t
            out = fun(*new_args, **new_kwargs)
            loss = _scalar_loss(out, who)
            return loss._t.reshape(()), out

        grads, out = _gradients(inner, [x._t for x in diff]) if diff else ((), inner()[1])
        g_iter = iter(grads)
        g_flat = [_wrap(next(g_iter), x._dtype) if _is_array(x) and x._dtype.kind in "fc"
                  else (_zeros_like(x) if _is_array(x) else x) for x in flat]
        g_trees = _trees.rebuild(trees, iter(g_flat))
        pos, named = g_trees[:len(nums)], dict(zip(argnames, g_trees[len(nums):]))
        if argnames:
            g = (pos[0] if single else (tuple(pos) if pos else None), named)
        else:
            g = pos[0] if single else tuple(pos)
        return out, g

    return wrapped


class _Depth(threading.local):
    n = 0  # lazy gradients being taken on this thread (a nested one keeps its graph)


_depth = _Depth()


def _gradients(inner: Callable, tensors: list) -> tuple[list, object]:
    """(gradients of `inner(*tensors)[0]` (a 0-d tensor) with respect to each tensor, the
    output tree `inner(*tensors)[1]`).

    Where ops are recorded lazily, the forward runs under autograd's tape and the backward
    through `autograd.grad`, both into the pending graph, so a training step (forward,
    backward, update) is one graph that `mx.eval` runs, fused from its second run. A
    gradient taken inside another keeps its graph (create_graph), and so does its loss,
    so the outer one differentiates through both (MLX's `grad` of a `value_and_grad`'s
    value). Under another transform (vmap, jvp), ember.func's `grad_and_value` does the
    work on computed tensors, the output going out as its `aux` (freed from this level
    only: still a function of the outer levels' inputs)."""
    w = _lazy.recording()
    nested = _depth.n > 0
    if w is None:
        if not nested and not _lazy.transforming():
            # (a fresh start: what the function leaves behind, a model holding the
            # arrays it was given, must not tie the next step to this one's graph)
            tensors = [t.detach() for t in tensors]
        return _lazy.eager(lambda: _eager_gradients(inner, tensors))
    with _lazy.inside(w), E.enable_grad():
        leaves = [t if nested and t.requires_grad else t.detach().requires_grad_()
                  for t in tensors]
        _depth.n += 1
        try:
            loss, out = inner(*leaves)
        finally:
            _depth.n -= 1
        # (a loss that reaches no input, through stop_gradient say, has zero gradients)
        if not loss.requires_grad:
            grads = [None] * len(leaves)
        elif nested:
            grads = E.autograd.grad(loss, leaves, allow_unused=True, create_graph=True)
        else:  # (into the fresh leaves' .grad: a pass the session can replay, backward.py)
            loss.backward()
            grads = [t.grad for t in leaves]
        if not nested:  # (a model left holding them: the update records no autograd)
            for t in leaves:
                t.grad = None
                t.requires_grad_(False)
        # (C-ordered, as MLX's are: a transposed weight's gradient is otherwise a view,
        # which the fused loops of the update that reads it do not take)
        grads = [E.zeros_like(x) if g is None else g if g.is_contiguous() else g.contiguous()
                 for g, x in zip(grads, leaves)]
        return grads, (_loss_only(out) if nested else _detached(out))


def _eager_gradients(inner: Callable, tensors: list) -> tuple[list, object]:
    box: dict = {}

    def loss_and_aux(*ts):
        loss, out = inner(*ts)
        arrays = [x for x in _trees.leaves(out) if _is_array(x)]
        box["out"], box["arrays"] = out, arrays
        return loss, [x._t for x in arrays]

    _depth.n += 1
    try:
        grads, (_, aux) = _func.grad_and_value(
            loss_and_aux, argnums=tuple(range(len(tensors))), has_aux=True)(*tensors)
    finally:
        _depth.n -= 1
    kept = iter(_wrap(t, x._dtype) for t, x in zip(aux, box["arrays"]))
    out = _trees.rebuild(box["out"], iter(next(kept) if _is_array(x) else x
                                          for x in _trees.leaves(box["out"])))
    return list(grads), _loss_only(out)


def _loss_only(out):
    """A differentiated function's output with what follows the loss cut from the graph:
    an outer transform differentiates through the loss and sees zero gradient through
    the rest, as MLX's does."""
    if isinstance(out, array):
        return out
    return type(out)((out[0], *_detached(tuple(out[1:]))))


def _zeros_like(x: array) -> array:
    return _wrap(E.zeros_like(x._t), x._dtype)


def _detached(tree):
    """`tree` with its arrays cut from autograd's graph (recorded lazily where ops are:
    a detach outside the session would run the pending graph)."""
    def cut(x):
        return _wrap(x._t.detach(), x._dtype) if _is_array(x) else x

    w = _lazy.recording()
    if w is None:
        return _trees.tree_map(cut, tree)
    with _lazy.inside(w):
        return _trees.tree_map(cut, tree)


def value_and_grad(fun: Callable, argnums=None, argnames=()) -> Callable:
    """A function returning `(fun(*args), gradients)` (see the module docstring)."""
    return _value_and_grad(fun, argnums, argnames, "value_and_grad")


def grad(fun: Callable, argnums=None, argnames=()) -> Callable:
    """A function returning the gradient of scalar-valued `fun`."""
    inner = _value_and_grad(fun, argnums, argnames, "grad")

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        return inner(*args, **kwargs)[1]

    return wrapped


def _outputs(out) -> list:
    if isinstance(out, array):
        return [out]
    if isinstance(out, list | tuple) and all(isinstance(o, array) for o in out):
        return list(out)
    raise ValueError("[vjp] The function must return an array or a list/tuple of arrays.")


def vjp(fun: Callable, primals: list, cotangents: list) -> tuple:
    """`(outputs, vjps)`: `fun(*primals)` as a list, and the cotangents pulled back onto
    each primal."""
    return _lazy.eager(_vjp, fun, primals, cotangents)


def _vjp(fun: Callable, primals: list, cotangents: list) -> tuple:
    prim = [p if _is_array(p) else array(p) for p in primals]
    cots = [c if _is_array(c) else array(c) for c in cotangents]
    box: dict = {}

    def inner(*tensors):
        outs = _outputs(fun(*[_array_like(t, p) for t, p in zip(tensors, prim)]))
        box["outs"] = outs
        return tuple(o._t for o in outs)

    outs_t, pull = _func.vjp(inner, *[p._t.detach() for p in prim])
    outs = box["outs"]
    if len(cots) != len(outs):
        raise ValueError(f"[vjp] Number of outputs to compute gradients for ({len(outs)}) "
                         f"does not match number of cotangents ({len(cots)}).")
    for o, c in zip(outs, cots):
        if o.shape != c.shape:
            raise ValueError(f"[vjp] Output shape {o.shape} does not match cotangent shape "
                             f"{c.shape}.")
    grads = pull(tuple(c._t.to(o._t.dtype) for c, o in zip(cots, outs)))
    return ([_wrap(t.detach(), o._dtype) for t, o in zip(outs_t, outs)],
            [_wrap(g, p._dtype) for g, p in zip(grads, prim)])


def jvp(fun: Callable, primals: list, tangents: list) -> tuple:
    """`(outputs, jvps)`: `fun(*primals)` as a list, and its derivative along `tangents`."""
    return _lazy.eager(_jvp, fun, primals, tangents)


def _jvp(fun: Callable, primals: list, tangents: list) -> tuple:
    prim = [p if _is_array(p) else array(p) for p in primals]
    tans = [t if _is_array(t) else array(t) for t in tangents]
    if len(prim) != len(tans):
        raise ValueError(f"[jvp] Number of inputs to compute derivatives for ({len(prim)}) "
                         f"does not match number of tangents ({len(tans)}).")
    box: dict = {}

    def inner(*tensors):
        outs = _outputs(fun(*[_array_like(t, p) for t, p in zip(tensors, prim)]))
        box["outs"] = outs
        return tuple(o._t for o in outs)

    outs_t, tan_t = _func.jvp(inner, tuple(p._t.detach() for p in prim),
                              tuple(t._t.to(p._t.dtype) for t, p in zip(tans, prim)))
    outs = box["outs"]
    return ([_wrap(t, o._dtype) for t, o in zip(outs_t, outs)],
            [_wrap(t, o._dtype) for t, o in zip(tan_t, outs)])


def vmap(fun: Callable, in_axes=0, out_axes=0) -> Callable:
    """`fun` of one example mapped over axis `in_axes` of its inputs (per argument, `None`
    for an argument shared by every example); results stacked along `out_axes`."""

    @functools.wraps(fun)
    def wrapped(*args):
        return _lazy.eager(mapped, *args)

    def mapped(*args):
        axes = in_axes if isinstance(in_axes, list | tuple) else [in_axes] * len(args)
        if len(axes) != len(args):
            raise ValueError(f"[vmap] The number of in axes ({len(axes)}) must match the "
                             f"number of arguments ({len(args)}).")
        flat_args = _trees.leaves(list(args))
        box: dict = {}

        def inner(*tensors):
            it = iter(tensors)
            inside = [_array_like(next(it), x) if _is_array(x) else x for x in flat_args]
            out = fun(*_trees.rebuild(list(args), iter(inside)))
            box["out"] = out
            return tuple(o._t for o in _trees.leaves(out) if _is_array(o))

        tensors = [x._t for x in flat_args if _is_array(x)]
        dims = []
        for a, ax in zip(args, axes):
            n = len([x for x in _trees.leaves(a) if _is_array(x)])
            dims += [ax] * n if not isinstance(ax, list | tuple | dict) else \
                [d for d, x in zip(_trees.leaves(ax), _trees.leaves(a)) if _is_array(x)]
        outs = _func.vmap(inner, in_dims=tuple(dims), out_dims=out_axes
                          if isinstance(out_axes, int) or out_axes is None
                          else tuple(out_axes))(*tensors)
        like = [o for o in _trees.leaves(box["out"]) if _is_array(o)]
        it = iter(_wrap(t, o._dtype) for t, o in zip(outs, like))
        return _trees.rebuild(box["out"], it, None) if not isinstance(box["out"], array) \
            else next(it)

    return wrapped
