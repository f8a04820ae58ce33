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
import operator
import threading
from collections.abc import Callable, Sequence

import ember as E

from ..._core import dispatch
from . import _lazy, _trees
from . import _vmap_axes as _axes
from ._array import _wrap, array
from ._binding import bad_call

_func = E.func


def _is_array(x) -> bool:
    return isinstance(x, array)


def _array_like(t, like: array) -> array:
    return _wrap(t, like._dtype if t.dtype is like._t.dtype else None)


def _scalar_loss(out, who: str):
    """The array to differentiate in what a differentiated function returned: the array
    itself, or for `value_and_grad` the first of a tuple (not a list: MLX refuses one)."""
    if isinstance(out, array):
        loss = out
    elif who == "grad":
        raise ValueError(
            "[grad] The return value of the function whose gradient we want to compute "
            f"should be a scalar array; but {type(out).__name__} was returned.")
    elif isinstance(out, tuple) and not out:
        raise ValueError(
            f"[{who}] The return value of the function whose gradient we want to compute "
            "should be either a scalar array or a non-empty tuple. The first value should be "
            "a scalar array and the rest can be anything. Instead, we got an empty tuple.")
    elif isinstance(out, tuple) and isinstance(out[0], array):
        loss = out[0]
    else:
        got = (f"it was a tuple with the first value being of type {type(out[0]).__name__} "
               if isinstance(out, tuple) else f"{type(out).__name__} was returned")
        raise ValueError(
            f"[{who}] The return value of the function whose gradient we want to compute "
            "should be either a scalar array or a tuple with the first value being a scalar "
            f"array (Union[array, tuple[array, Any, ...]]); but {got}.")
    if loss.ndim:  # (MLX pulls a 0-d cotangent back through the loss)
        raise _cotangent_mismatch(loss.shape, (), alone=True)
    return loss


def _shape_text(shape) -> str:
    return "(" + ",".join(str(d) for d in shape) + ")"


def _cotangent_mismatch(out_shape, cot_shape, alone: bool) -> ValueError:
    """MLX's refusal of a cotangent shaped otherwise than its output (`alone`: the only
    output, where a one-element one hints at grad's scalar loss)."""
    hint = (" If you are using grad your function must return a scalar."
            if alone and _size(out_shape) == 1 else "")
    return ValueError(f"[vjp] Output shape {_shape_text(out_shape)} does not match cotangent "
                      f"shape {_shape_text(cot_shape)}.{hint}")


def _size(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _argnums(argnums, argnames: list, who: str) -> list:
    """The positions to differentiate, checked as MLX checks them when the transform is
    made: none negative, none twice, and something to differentiate."""
    if argnums is None:
        argnums = [] if argnames else 0
    nums = [argnums] if isinstance(argnums, int) else list(argnums)
    for i in nums:
        if i < 0:
            raise ValueError(f"[{who}] Can't compute the gradient of negative argument index "
                             f"{i}")
    if len(set(nums)) != len(nums):  # (MLX names the smallest index, repeated or not)
        raise ValueError(f"[{who}] Duplicate argument index {min(nums)} is not allowed.")
    if not nums and not argnames:
        raise ValueError(f"[{who}] Gradient wrt no argument requested")
    return nums


def _value_and_grad(fun: Callable, argnums, argnames, who: str) -> Callable:
    argnames = [argnames] if isinstance(argnames, str) else list(argnames)
    nums = _argnums(argnums, argnames, who)
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
                                 "keyword arguments {" + "".join(f"{k}," for k in kwargs)
                                 + "}")
        trees = [args[i] for i in nums] + [kwargs[n] for n in argnames]
        flat = _axes.strict_leaves(trees, _is_array)
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
            t = _scalar_loss(out, who)._t.reshape(())
            # (a complex loss is pulled back with cotangent 1, as MLX does: that is the
            # gradient of its real part, which autograd's real-scalar seed can take)
            return (E.real(t) if t.dtype.is_complex else t), out

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
        grads, out = _lazy.eager(lambda: _eager_gradients(inner, tensors))
        if not nested and not dispatch.forward_mode_active():
            # (under `compile`'s tracer or a vmap, the outermost gradient of a function
            # that takes a gradient itself comes back on the tape (second order): MLX's
            # are plain arrays, and an update made from them must not tie the next step
            # to this one's freed graph. A jvp around keeps them: detach drops tangents)
            grads = [g.detach() if g.requires_grad else g for g in grads]
            out = _detached(out)
        return grads, out
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


_GRAD = ("{0}(fun: Callable[P, R], argnums: int | Sequence[int] | None = None, "
         "argnames: str | Sequence[str] = []) -> Callable[P, {1}]")


def _grad_args(who: str, result: str, args: tuple, kwargs: dict) -> tuple:
    """(fun, argnums, argnames) of a `grad` / `value_and_grad` call, refused as MLX's
    binding refuses it (a TypeError naming the types given): `fun` callable, `argnums`
    None, an int or a sequence of ints, `argnames` a str or a sequence of strs."""
    names = ("fun", "argnums", "argnames")
    bound = dict(zip(names, args))
    ok = len(args) <= 3 and set(kwargs) <= set(names) and not set(kwargs) & set(bound)
    bound.update(kwargs)
    fun, nums = bound.get("fun"), bound.get("argnums")
    argnames = bound.get("argnames", ())

    def index(v):  # (an int, or what converts to one as nanobind's int does: np.int64)
        try:
            return operator.index(v)
        except TypeError:
            return None

    def ints(v):
        if index(v) is not None:
            return index(v)
        if isinstance(v, Sequence) and not isinstance(v, str):
            got = [index(i) for i in v]
            return None if None in got else got
        return None

    def strs(v) -> bool:
        return isinstance(v, str) or (isinstance(v, Sequence)
                                      and all(isinstance(n, str) for n in v))

    ok = ok and callable(fun) and strs(argnames)
    if nums is not None:
        nums = ints(nums)
        ok = ok and nums is not None
    if not ok:
        raise bad_call(who, _GRAD.format(who, result), args, kwargs)
    return fun, nums, argnames


def value_and_grad(*args, **kwargs) -> Callable:
    """A function returning `(fun(*args), gradients)` (see the module docstring):
    `value_and_grad(fun, argnums=None, argnames=[])`."""
    fun, argnums, argnames = _grad_args("value_and_grad", "tuple[R, Any]", args, kwargs)
    return _value_and_grad(fun, argnums, argnames, "value_and_grad")


def grad(*args, **kwargs) -> Callable:
    """A function returning the gradient of scalar-valued `fun`:
    `grad(fun, argnums=None, argnames=[])`."""
    fun, argnums, argnames = _grad_args("grad", "Any", args, kwargs)
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
    # (MLX's C++ casts the output to arrays and lets the failed cast's message through)
    raise RuntimeError("std::bad_cast")


_SIGNATURE = ("{0}(fun: Callable, primals: list[array], {1}: list[array]) -> "
              "tuple[list[array], list[array]]")


def _array_lists(who: str, fun, primals, others, name: str) -> None:
    """Refuse, as MLX's binding does, primals or co/tangents that are not all arrays."""
    if not all(_is_array(x) for x in [*primals, *others]):
        raise bad_call(who, _SIGNATURE.format(who, name), (fun, primals, others))


def vjp(fun: Callable, primals: list, cotangents: list) -> tuple:
    """`(outputs, vjps)`: `fun(*primals)` as a list, and the cotangents pulled back onto
    each primal."""
    return _lazy.eager(_vjp, fun, primals, cotangents)


def _vjp(fun: Callable, primals: list, cotangents: list) -> tuple:
    _array_lists("vjp", fun, primals, cotangents, "cotangents")
    prim, cots = list(primals), list(cotangents)
    box: dict = {}

    def inner(*tensors):
        # (a reverse pass runs around `fun`: a gradient taken inside is nested in it and
        # keeps its graph, or the pullback of a grad would see none and give zeros)
        _depth.n += 1
        try:
            outs = _outputs(fun(*[_array_like(t, p) for t, p in zip(tensors, prim)]))
        finally:
            _depth.n -= 1
        box["outs"] = outs
        return tuple(o._t for o in outs)

    w = _lazy.recording()
    if w is not None and _depth.n > 0 and any(c._t.requires_grad for c in cots):
        # (inside another reverse pass, cotangents on its graph: the pullback runs on the
        # tape, so the outer gradient reaches them through it, as MLX's does)
        return _vjp_on_tape(w, inner, prim, cots, box)
    # (primals not cut from an outer pass's graph: `grad` of a vjp is a second derivative)
    outs_t, pull = _func.vjp(inner, *[p._t for p in prim])
    outs = box["outs"]
    _check_cotangents(outs, cots)
    grads = pull(tuple(_first_cotangents(outs, cots)))
    # (inside another reverse pass the outputs stay on its graph, as the gradients do:
    # an outer `grad` differentiates through both, as MLX's does)
    nested = _depth.n > 0
    return ([_wrap(t if nested else t.detach(), o._dtype) for t, o in zip(outs_t, outs)],
            [_wrap(g, p._dtype) for g, p in zip(grads, prim)])


def _check_cotangents(outs: list, cots: list) -> None:
    for o, c in zip(outs, cots):
        if o.shape != c.shape:
            raise _cotangent_mismatch(o.shape, c.shape, alone=len(outs) == 1)
    if len(cots) < len(outs):  # (MLX leaves cotangents past the outputs unread)
        raise ValueError(f"[vjp] Number of outputs to compute gradients for ({len(outs)}) "
                         f"does not match number of cotangents ({len(cots)}).")


def _vjp_on_tape(w, inner: Callable, prim: list, cots: list, box: dict) -> tuple:
    """`_vjp` by autograd's tape of the session `w`, graphs kept (create_graph)."""
    with _lazy.inside(w), E.enable_grad():
        leaves = [p._t if p._t.requires_grad else p._t.detach().requires_grad_()
                  for p in prim]
        outs_t = inner(*leaves)
        outs = box["outs"]
        _check_cotangents(outs, cots)
        pairs = [(o, c) for o, c in zip(outs_t, _first_cotangents(outs, cots))
                 if o.requires_grad]
        grads = (E.autograd.grad([o for o, _ in pairs], leaves, [c for _, c in pairs],
                                 allow_unused=True, create_graph=True)
                 if pairs else [None] * len(leaves))
    grads = [E.zeros_like(x) if g is None else g for g, x in zip(grads, leaves)]
    return ([_wrap(t, o._dtype) for t, o in zip(outs_t, outs)],
            [_wrap(g, p._dtype) for g, p in zip(grads, prim)])


def _first_cotangents(outs: list, cots: list) -> list:
    """The cotangent tensors to pull back: an array returned more than once takes the
    cotangent of its first place only (MLX keys cotangents by array and keeps the first one
    inserted), so the later places get zeros instead of adding up."""
    seen: list = []
    tensors = []
    for o, c in zip(outs, cots):
        t = c._t.to(o._t.dtype)
        tensors.append(E.zeros_like(t) if any(o is s for s in seen) else t)
        seen.append(o)
    return tensors


def jvp(fun: Callable, primals: list, tangents: list) -> tuple:
    """`(outputs, jvps)`: `fun(*primals)` as a list, and its derivative along `tangents`."""
    return _lazy.eager(_jvp, fun, primals, tangents)


def _jvp(fun: Callable, primals: list, tangents: list) -> tuple:
    _array_lists("jvp", fun, primals, tangents, "tangents")
    prim, tans = list(primals), list(tangents)
    if len(prim) != len(tans):
        raise ValueError("[jvp] Number of inputs does not match number of tangents.")
    if any(p.shape != t.shape for p, t in zip(prim, tans)):
        raise ValueError("[jvp] Input shape does not match shape of tangent.")
    box: dict = {}

    def inner(*tensors):
        outs = _outputs(fun(*[_array_like(t, p) for t, p in zip(tensors, prim)]))
        box["outs"] = outs
        return tuple(o._t for o in outs)

    outs_t, tan_t = _func.jvp(inner, tuple(p._t for p in prim),
                              tuple(t._t.to(p._t.dtype) for t, p in zip(tans, prim)))
    outs = box["outs"]
    return ([_wrap(t, o._dtype) for t, o in zip(outs_t, outs)],
            [_wrap(t, o._dtype) for t, o in zip(tan_t, outs)])


_VMAP = "vmap(fun: Callable[P, R], in_axes: object = 0, out_axes: object = 0) -> Callable[P, R]"


def vmap(*args, **kwargs) -> Callable:
    """`fun` of one example mapped over axis `in_axes` of its inputs (per argument, `None`
    for an argument shared by every example); results stacked along `out_axes`. Both are
    prefixes of the arguments' (outputs') trees, read as MLX reads them (`_vmap_axes`):
    `vmap(fun, in_axes=0, out_axes=0)`. A bare `None` for either is refused by MLX's
    binding (a TypeError), as it is inside a tuple only by the mapping (a ValueError)."""
    if any(a is None for a in args[1:]) or any(v is None for v in kwargs.values()):
        raise bad_call("vmap", _VMAP, args, kwargs)
    return _vmap(*args, **kwargs)


def _vmap(fun: Callable, in_axes=0, out_axes=0) -> Callable:

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        if kwargs:
            raise TypeError("[vmap] Keyword arguments are not supported.")
        return _lazy.eager(mapped, *args)

    def mapped(*args):
        tree = args[0] if len(args) == 1 else args
        flat_args = _axes.strict_leaves(tree, _is_array)
        dims = _axes.flat_axes(tree, in_axes, _is_array)
        if _axes.mapped_size(flat_args, dims) is None:
            _axes.strict_leaves(fun(*args), _is_array)
            raise _axes.nothing_mapped()
        box: dict = {}

        def inner(*tensors):
            inside = iter(_array_like(t, x) for t, x in zip(tensors, flat_args))
            out = fun(*_trees.rebuild(list(args), inside))
            outs = _axes.strict_leaves(out, _is_array)
            box["out"], box["like"] = out, outs
            box["axes"] = _axes.flat_axes(out, out_axes, _is_array, output=True)
            return tuple(o._t for o in outs)

        outs = _func.vmap(inner, in_dims=tuple(dims), out_dims=0)(*[x._t for x in flat_args])
        placed = []
        for t, o, ax in zip(outs, box["like"], box["axes"]):
            # TODO(transforms_linalg): MLX refuses None for an output that depends on the
            # mapped inputs, as here, but broadcasts one that does not (mapped axis last)
            if ax is None:
                raise ValueError(f"[vmap] Axis -1 invalid for output with {o.ndim + 1} "
                                 "dimensions.")
            placed.append(_wrap(t if ax == 0 else t.movedim(0, ax), o._dtype))
        return _trees.rebuild(box["out"], iter(placed))

    return wrapped
