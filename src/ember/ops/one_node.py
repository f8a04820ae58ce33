"""Composite ops recorded as one graph node, where PyTorch runs the op as one kernel and its
graph shows one node (`PixelShuffleBackward0`, `LogaddexpBackward0` ...).

`one_node(name, fn, *inputs)` runs the composite `fn(*inputs)` (ember ops) with grad off and
records a single node named `name` over `inputs`. Its VJP is the composite's own: it runs
`fn` again with grad on and differentiates that, so results and gradients are the
composite's, bit for bit, and a `create_graph=True` gradient is differentiable again through
the composite's ops. The price is the composite's forward once more in backward; the node
keeps the inputs (PyTorch's kernels keep `self`). With `linear=True` (a composite whose
gradient does not read its input: a pooling, a shuffle) the node saves no input: the
composite's graph, recorded in the forward on aliases of the inputs (it saves next to
nothing), is kept with the node and run by its VJP, so nothing runs twice.

Only in plain eager mode (no interpreter on the stack: a transform, a capture or forward-mode
AD sees the composite's ops, whose rules it has) and with no saved-tensor hooks (they would
see the composite's saved values again in backward).
"""

from __future__ import annotations

from .. import _grad_mode as grad_mode
from .._core import dispatch
from .._core.primitive import primitives
from .._tensor import Tensor
from .registry import Primitive, defvjp_joint

_prims: dict = {}


def _eval(prim, args: tuple, params: dict):
    box = params["box"]
    if box is not None:  # (linear: the composite's own graph, on aliases of the inputs)
        ds = tuple(None if a is None else a.detach().requires_grad_(a._requires_grad)
                   for a in args)
        with grad_mode.enable_grad():
            inner = params["fn"](*ds)
        box.extend((inner, ds))
        args_seen, out = ds, inner.detach()
        out._base = inner._base
    else:
        with grad_mode.no_grad():
            out = params["fn"](*args)
        args_seen = args
    base = out._base
    if base is not None:  # (PyTorch's kernel's result is no view)
        if any(a is not None and (base is a or base is a._base) for a in args_seen):
            with grad_mode.no_grad():
                out = out.clone()  # (a view of an input: pixel_shuffle by 1)
        else:
            out._base = None  # (a view of the composite's temporary: a tensor of its own)
    if grad_mode.state.enabled and any(a is not None and a._requires_grad for a in args):
        dispatch.autograd.record(prim, dispatch.vjp_rules[prim], args, params, out)
    return out


def _prim(name: str, kept: tuple) -> Primitive:
    key = (name, kept)
    prim = _prims.get(key)
    if prim is None:
        prim = _prims[key] = Primitive(f"one_node_{name}", None, grad_name=name, impl=_eval)
        # (eager only: no interpreter sees it, so it is no primitive transforms must know)
        primitives.remove(prim)
        # (the node saves the inputs `kept` marks; the rule reads those)
        reads = tuple(i for i, k in enumerate(kept) if k)
        defvjp_joint(prim, _vjp, (True,) * len(kept), reads=(reads,) * len(kept))
    return prim


def _vjp(g, out, *inputs, needs, fn, metas, box):
    """The composite's gradients for the inputs that want one: the composite's graph kept
    from the forward, or `fn` run again with grad on (on the inputs themselves under
    create_graph, so the result is differentiable again; on detached aliases otherwise; on
    zeros of their layout where the node kept none)."""
    from ..autograd import grad
    from ..autograd.engine import run
    from ..autograd.graph import edge_of
    from .factories import empty_strided

    create = grad_mode.state.enabled
    if box and not create:
        # (the engine on the kept graph directly: `grad`'s argument checks hold by
        # construction, and this is every call's backward)
        inner, ds = box
        keys = [edge_of(d) if need else None for d, need in zip(ds, needs)]
        got = run([edge_of(inner)], [g], True, False,
                  dict.fromkeys(k for k in keys if k is not None), accumulate_leaves=False)
        return tuple(None if k is None else got.get(k) for k in keys)
    xs = []
    for x, need, meta in zip(inputs, needs, metas):
        if x is None:
            if meta is not None:
                x = empty_strided(meta[0], meta[1], dtype=meta[2]).zero_()
        elif not create:
            x = x.detach()
        else:  # (a node of its own: its gradient is this input's alone, not also through
            x = x.view_as(x)  # another input made from it, as `x` itself would get)
        if need and x is not None and not x._requires_grad:
            x = x.detach().requires_grad_()
        xs.append(x)
    with grad_mode.enable_grad():
        o = fn(*xs)
    wanted = [x for x, need in zip(xs, needs) if need]
    got = iter(grad(o, wanted, g, create_graph=create, allow_unused=True))
    return tuple(next(got) if need else None for need in needs)


def plain_eager() -> bool:
    """Whether nothing but eager evaluation could see the composite's ops."""
    from ..autograd import saved_hooks

    return not dispatch._pushed[0] and not saved_hooks.active()


def plain_call(*inputs: Tensor | None, graph: bool = False) -> bool:
    """Whether ops on `inputs` (tensors, None for an absent one) would record no graph
    and no interpreter would see them: none pushed, no input wanting a gradient while grad
    is on (unless `graph`: a composite's body run inside its own node, which records the
    graph), each on the CPU and holding its values (no captured graph's pending one). Then
    a composite may run its kernels on the arrays: the same bits, without its dispatches."""
    if dispatch._pushed[0]:
        return False
    grad = grad_mode.state.enabled and not graph
    for t in inputs:
        if t is None:
            continue
        if t.__class__ is not Tensor and (not isinstance(t, Tensor) or t._is_lazy):
            return False
        if grad and t._requires_grad:
            return False
        s = t._storage
        if s is not None and s.device.type != "cpu":
            return False
    return True


def differentiable_grad(fn, x: Tensor, g: Tensor) -> Tensor:
    """The gradient of `fn(x)` (ember ops) for cotangent `g`, itself differentiable: what
    an eager-only node whose own backward is a kernel gives under create_graph=True."""
    from ..autograd import grad

    xs = x.view_as(x)  # (a node of its own, as in `_vjp`)
    with grad_mode.enable_grad():
        o = fn(xs)
    return grad(o, xs, g, create_graph=True)[0]


def records(*inputs: Tensor | None) -> bool:
    """Whether `one_node` over `inputs` records its one node (else it runs the composite)."""
    return grad_mode.state.enabled and plain_eager() and \
        any(x is not None and x._requires_grad for x in inputs)


def one_node(name: str, fn, *inputs: Tensor | None, linear: bool = False,
             kept: tuple | None = None):
    """`fn(*inputs)` with one graph node named `name` over `inputs` (None for an absent
    optional one), or the composite's own graph where that node would not be plain eager.
    `kept`: a flag per input, whether the node saves it (default: all, none when `linear`);
    the gradients must not read the values of those it does not (a bias): the VJP runs the
    composite on zeros in their place."""
    if not records(*inputs):
        return fn(*inputs)
    if kept is None:
        kept = (not linear,) * len(inputs)
    metas = tuple(None if x is None else (tuple(x._shape), x.stride(), x._dtype)
                  for x in inputs)
    return dispatch.bind(_prim(name, tuple(kept)), *inputs, fn=fn, metas=metas,
                         box=[] if linear else None)
