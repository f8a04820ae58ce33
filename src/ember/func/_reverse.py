"""Reverse-mode transforms on the tape: `vjp`, `grad`, `grad_and_value`, `jacrev`.

Each call runs the function once with fresh inputs that require grad and asks the engine
for the gradients. A transform nested inside another reverse transform keeps the graph of
its gradients (`create_graph`) so the outer one can differentiate them in turn; at the top
level the results carry no graph. Forward mode around these (`jacfwd(jacrev(f))`) needs
nothing special: the backward pass is ops like any other, and a `JVPInterpreter` above
sees them.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import _grad_mode as grad_mode
from .._core import current_interpreter
from .._core.dispatch import forward_mode_active
from .._tensor import Tensor
from ..autograd.engine import grad as _engine_grad
from ..autograd.function import reverse_transforms_open
from ..ops.creation import ones_like, zeros_like
from ..utils._pytree import tree_flatten, tree_map, tree_unflatten
from ._vmap import BatchedTensor, BatchInterpreter, ForwardAboveVmap, batched

# reverse transforms running now (the inner ones keep their graphs); the same counter
# tells `Function.apply` a transform is running
_depth = reverse_transforms_open


def _fresh(x, shared: bool = False):
    """`x` as an input the tape differentiates with respect to, linked to any graph `x`
    already has (so an outer transform still reaches it). `shared`: a forward level runs
    above the vmaps around this call (see `_forward_above_vmap`). Refused in PyTorch's
    words (its `_create_differentiable`, then `requires_grad_`)."""
    if not isinstance(x, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError("only Tensors of floating point dtype can require gradients")
    if shared:
        if isinstance(x, BatchedTensor):
            raise ForwardAboveVmap(lvl for lvl, _ in _levels_of(x))
    else:
        levels = _batch_levels()
        if levels:
            return _per_example(x, levels)
    if x.requires_grad:
        return x.view_as(x)
    # (a view, not `detach()`: a forward level around this transform keeps x's tangent)
    return x.view_as(x).requires_grad_()


def _batch_levels() -> list:
    """(level, batch size) of each vmap running around this call, outermost first."""
    out = []
    it = current_interpreter()
    while it is not None:
        if isinstance(it, BatchInterpreter):
            out.append((it.level, it.size))
        it = it.parent
    return sorted(out)


def _forward_above_vmap() -> bool:
    """Whether a forward level sits above the innermost vmap running around this call
    (`hessian` = `jacfwd(jacrev(f))`). The inputs are then not copied per example: a tape
    of unbatched values (the primal computation of `hessian`) runs its backward pass
    through the whole stack, so the forward level sees it. A batched input or output
    raises `ForwardAboveVmap`."""
    from ..autograd.forward_mode import JVPInterpreter

    it = current_interpreter()
    while it is not None and not isinstance(it, BatchInterpreter):
        if isinstance(it, JVPInterpreter):
            return bool(_batch_levels())
        it = it.parent
    return False


def _check_shared(shared: bool, out_leaves) -> None:
    """A result batched by a vmap below the forward level: its per-example gradients
    would need copies the shared inputs do not have."""
    if shared:
        levels = {lvl for o in out_leaves for lvl, _ in _levels_of(o)}
        if levels:
            raise ForwardAboveVmap(levels)


def _per_example(x, levels: list):
    """`x` as a fresh input inside vmap: one entry per example at every vmap level, so each
    example's gradient is its own rather than the batch's sum. Its physical tensor is `x`
    broadcast over the levels it is not batched at (a view, no copy), built below the
    vmap levels: ops, so the interpreters under them (a forward level holding x's tangent)
    see it."""
    run = _below_batching()
    w = run.below(_fresh_front, x, levels) if run is not None else _fresh_front(x, levels)
    for lvl, _ in levels:
        w = batched(w, 0, lvl)
    return w


def _fresh_front(x, levels: list):
    """`_front(x, levels)` as a new tensor that requires grad (never x's own data object:
    the caller's tensor keeps its flags)."""
    w = _front(x, levels)
    if w is _chain(x)[0]:
        w = w.view_as(w)
    if not w.requires_grad:
        w.requires_grad_()
    return w


def _release(t, keep: bool):
    """A result handed back to the caller: without graph unless `keep`. Under a forward-mode
    interpreter (jvp) it is left as it is: `detach` would also drop the tangent it carries;
    under vmap alone it is detached, batched as it is (torch.func's value and aux)."""
    if keep or not isinstance(t, Tensor) or not t.requires_grad or forward_mode_active():
        return t
    return t.detach()


def _keeps(leaves) -> bool:
    """Whether results must stay differentiable: a reverse transform runs around this one,
    or an input is in a graph the caller may differentiate (as torch.func keeps it).
    Forward mode and vmap around this one need no graph: they see the backward pass's ops
    as they run."""
    return _depth[0] > 0 or any(isinstance(x, Tensor) and x.requires_grad for x in leaves)


def _outer_graph(outputs: list, inputs: list) -> bool:
    """Whether `outputs` depend on a tensor requiring grad from outside this call (a
    parameter the function closes over): the results then stay in the caller's graph, as
    torch.func keeps them (`jacrev(f)(x)` of `f = lambda x: x @ w` is differentiable in w)."""
    if not grad_mode.is_grad_enabled():
        return False
    from ..autograd.graph import AccumulateGrad

    mine = {id(_chain(x)[0]) for x in inputs}
    stack, seen = [], set()
    for o in outputs:
        if isinstance(o, Tensor):
            o = _chain(o)[0]
            if o.requires_grad and o.grad_fn is None and id(o) not in mine:
                return True
            if o.grad_fn is not None:
                stack.append(o.grad_fn)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            if id(node.variable) not in mine:
                return True
            continue
        stack.extend(n for n, _ in node._edges if n is not None)
    return False


def _gradients(outputs: list, inputs: list, cotangents: list, *, retain: bool,
               keep: bool) -> list:
    """d(sum <outputs, cotangents>)/d inputs, zeros for inputs the outputs do not reach;
    with `keep`, the gradients' own graph is recorded. Inside vmap the tape holds the
    batch's physical ops, so the engine runs on the physical tensors (batch axes moved to
    the front) and each gradient is re-batched as its input is."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    if not pairs:
        return [zeros_like(x) for x in inputs]
    run = _below_batching() if all(_levels_of(o) and not _extra_levels(o, c)
                                   for o, c in pairs) else None
    gs = (run.below if run is not None else _call)(_backward, pairs, inputs, retain, keep)
    return [zeros_like(x) if g is None else _rebatch(g, x) for g, x in zip(gs, inputs)]


def _backward(pairs: list, inputs: list, retain: bool, keep: bool) -> list:
    """The engine on the physical outputs, cotangents and inputs (batch axes in front): a
    list of physical gradients, None where an input is not reached."""
    outs, cts = [], []
    for o, c in pairs:
        levels = _levels_of(o)
        if not levels:  # a graph outside vmap, cotangents maybe batched (vmap of a vjp):
            outs.append(o)  # the backward pass's ops are batched as they run
            cts.append(c)
            continue
        extra = _extra_levels(o, c)
        outs.append(_front(o, levels))
        if not extra:
            cts.append(_front(c, levels))
            continue
        # (vmap of the vjp of an output computed inside vmap: vmap(jacrev(f))) the
        # cotangent's own levels stay batched, so the backward pass's ops are batched over
        # them as they run, on the tape's physical values
        if extra[0][0] < levels[-1][0]:
            raise NotImplementedError(
                "vjp: a cotangent batched by a vmap outside the one the output was computed "
                "in, that the output is not batched by, is not supported")
        ct = _front(c, sorted(levels + extra))
        for lvl, _ in extra:
            ct = batched(ct, len(levels), lvl)
        cts.append(ct)
    phys = [_chain(x)[0] for x in inputs]
    return _engine_grad(outs, phys, cts, retain_graph=retain or keep, create_graph=keep,
                        allow_unused=True)


def _extra_levels(o, c) -> list:
    """The (level, size) of vmaps that batch cotangent `c` but not output `o`."""
    have = {lvl for lvl, _ in _levels_of(o)}
    return [(lvl, n) for lvl, n in _levels_of(c) if lvl not in have]


def _call(fn, /, *args, **kwargs):
    return fn(*args, **kwargs)


def _below_batching():
    """The outermost of the vmap levels at the top of the stack, or None. A backward pass
    over physical tensors (every output computed inside vmap) runs below them: they would
    only hand each op down unbatched."""
    it, last = current_interpreter(), None
    while isinstance(it, BatchInterpreter):
        last, it = it, it.parent
    return last


def _chain(t):
    """(physical tensor, [(bdim, level, size)] innermost wrapper first) of a tensor that
    may be batched by one or more vmap levels."""
    chain = []
    while isinstance(t, BatchedTensor):
        chain.append((t._bdim, t._level, t._value.shape[t._bdim]))
        t = t._value
    return t, chain


def _levels_of(t) -> list:
    return sorted((lvl, n) for _, lvl, n in _chain(t)[1])


def _front(t, levels: list):
    """`t`'s physical data with one leading axis per vmap level in `levels` (outermost
    first), broadcast along the levels `t` is not batched at."""
    p, chain = _chain(t)
    sizes = [n for _, n in levels]
    if not chain:  # (expand adds the leading axes itself)
        return p.expand(*sizes, *p.shape)
    k = 0
    for d, _, _ in reversed(chain):  # outermost level first: its axis indexes p itself
        if d:
            p = p.movedim(d + k, k)
        k += 1
    have = [lvl for _, lvl, _ in reversed(chain)]
    for i, (lvl, _) in enumerate(levels):
        if lvl not in have:
            p = p.unsqueeze(i)
    if have == [lvl for lvl, _ in levels]:  # batched at exactly these levels already
        return p
    return p.expand(*sizes, *p.shape[len(levels):])


def _rebatch(g, like):
    """Physical gradient `g` wrapped in the same vmap levels as input `like`. A gradient
    batched by the cotangents' own levels (vmap of a vjp) keeps those as the outer ones."""
    chain = _chain(like)[1]
    extra = _levels_of(g)
    if extra:  # (extra sizes, *like's physical shape)
        g = _front(g, extra)
    for d, lvl, _ in reversed(chain):
        g = batched(g, d + len(extra), lvl)
    for lvl, _ in extra:
        g = batched(g, 0, lvl)
    return g


def _split_aux(out, has_aux: bool, where: str):
    """`(output, aux)`; `where` names the call in PyTorch's message ("vjp(f, *primals)")."""
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{where}: output of function f should be a tuple: (output, aux) "
                           "if has_aux is True")
    for a in tree_flatten(out[1])[0]:  # (aux holds tensors only, as PyTorch requires)
        if not isinstance(a, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(a)}")
    return out


def vjp(func: Callable, *primals, has_aux: bool = False):
    """`(func(*primals), vjp_fn)`; `vjp_fn(cotangents)` (cotangents shaped as the output)
    returns one gradient per primal. With `has_aux`, func returns `(output, aux)` and so
    does this, as a third item."""
    leaves, spec = tree_flatten(primals)
    keep = _keeps(leaves)
    with grad_mode.enable_grad():
        _depth[0] += 1
        try:
            shared = _forward_above_vmap()
            ins = [_fresh(x, shared) for x in leaves]
            out, aux = _split_aux(func(*tree_unflatten(ins, spec)), has_aux,
                                  "vjp(f, *primals)")
        finally:
            _depth[0] -= 1
    out_leaves, out_spec = tree_flatten(out)
    _check_shared(shared, out_leaves)
    keep_in, keep = keep, keep or _outer_graph(out_leaves, ins)
    for o in out_leaves:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"vjp(f, *primals): expected f(*primals) to return only "
                               f"tensors, got unsupported type {type(o)}")

    def vjp_fn(cotangents, *, retain_graph: bool = True):
        ct_leaves, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as "
                               f"pytree structure of outputs to the function. cotangents: "
                               f"{ct_spec!r}, primal output: {out_spec!r}")
        for i, (o, c) in enumerate(zip(out_leaves, ct_leaves)):
            if tuple(o.shape) != tuple(c.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{c.shape} and output[{i}] has a shape of {o.shape}.")
        with grad_mode.enable_grad():
            gs = _gradients(out_leaves, ins, ct_leaves, retain=retain_graph, keep=keep)
        return tree_unflatten([_release(g, keep) for g in gs], spec)

    # (each output, and each aux, keeps a graph only if it reaches one outside this call)
    result = tree_unflatten([_release(o, keep_in or _outer_graph([o], ins))
                             for o in out_leaves], out_spec)
    if not has_aux:
        return result, vjp_fn
    return result, vjp_fn, tree_map(lambda a: _release(a, keep_in or _outer_graph([a], ins)),
                                    aux)


def _argnums_inputs(args: tuple, argnums) -> tuple:
    """The positions `argnums` picks, checked in PyTorch's order and words (its
    `_slice_argnums`: the type, then each argnum, then uniqueness of the wrapped ones)."""
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    n = len(args)
    out = []
    for a in (argnums,) if isinstance(argnums, int) else argnums:
        if not isinstance(a, int):
            raise RuntimeError(f"argnum must be int, got: {type(a)}")
        if not -n <= a < n:
            raise RuntimeError(f"Got argnum={a}, but only {n} positional inputs")
        out.append(a % n)
    if isinstance(argnums, tuple):
        if not out:
            raise RuntimeError("argnums must be non-empty")
        if len(set(out)) != len(out):
            raise RuntimeError(f"argnums elements must be unique, got {tuple(out)}")
    return tuple(out)


def grad_and_value(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """A function returning `(gradient, value)` of scalar-valued `func` with respect to the
    positional arguments `argnums` (an int, or a tuple: then a tuple of gradients); each
    argument may be a pytree of tensors. With `has_aux`, value is `(output, aux)`."""
    def wrapper(*args, **kwargs):
        which = _argnums_inputs(args, argnums)
        flat = {i: tree_flatten(args[i]) for i in which}
        keep = _keeps([x for i in which for x in flat[i][0]])
        with grad_mode.enable_grad():
            _depth[0] += 1
            try:
                shared = _forward_above_vmap()
                fresh = {i: [_fresh(x, shared) for x in flat[i][0]] for i in which}
                call = tuple(tree_unflatten(fresh[i], flat[i][1]) if i in fresh else a
                             for i, a in enumerate(args))
                out, aux = _split_aux(func(*call, **kwargs), has_aux,
                                      "grad_and_value(f)(*args)")
                if not isinstance(out, Tensor):
                    raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return "
                                       f"a Tensor, got {type(out)}")
                if out.dim() != 0:
                    raise RuntimeError(
                        f"grad_and_value(f)(*args): Expected f(*args) to return a scalar "
                        f"Tensor, got tensor with {out.dim()} dims. Maybe you wanted to use "
                        "the vjp or jacrev APIs instead?")
                if out.dtype.is_complex:  # (torch seeds backward implicitly, which refuses)
                    raise RuntimeError("grad can be implicitly created only for real scalar "
                                       f"outputs but got {out.dtype}")
                _check_shared(shared, [out])
                ins = [x for i in which for x in fresh[i]]
                keep_aux = keep
                keep = keep or _outer_graph([out], ins)
                gs = _gradients([out], ins, [ones_like(out)], retain=False, keep=keep)
            finally:
                _depth[0] -= 1
        gs = iter(_release(g, keep) for g in gs)
        grads = tuple(tree_unflatten([next(gs) for _ in flat[i][0]], flat[i][1])
                      for i in which)
        grads = grads[0] if isinstance(argnums, int) else grads
        value = _release(out, keep)
        if has_aux:  # (each aux keeps a graph only if it reaches one outside this call)
            return grads, (value, tree_map(
                lambda a: _release(a, keep_aux or _outer_graph([a], ins)), aux))
        return grads, value

    return wrapper


def grad(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """The gradient of scalar-valued `func` (see `grad_and_value`); with `has_aux`,
    `(gradient, aux)`."""
    gv = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper
