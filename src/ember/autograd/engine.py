"""The backward engine: walk the graph once in reverse and apply each node's VJP.

`run` counts, for every node reachable from the roots, how many edges point
at it; a node runs once all its gradients have arrived (summed where paths
meet). Ready nodes run newest first, as PyTorch orders them (AccumulateGrad
first of all). The walk uses an explicit stack and a heap, never recursion, so
deep graphs are fine.

Before a node runs, its hooks see the incoming gradients in PyTorch's order:
tensor hooks, then retained grads, then node pre-hooks; node post-hooks see
what it produced.
"""

from __future__ import annotations

import heapq
import itertools
import re
import warnings

from .. import _tensor as T
from .._core.dispatch import run_quiet
from .._core.ranges import ranges
from .._dtype import cpu_type_text
from .._layout import contiguous_format
from .._user_warnings import user_stacklevel
from .._view import contiguous_strides, is_contiguous, is_non_overlapping_and_dense
from . import grad_mode
from .double_nodes import tie
from .graph import MISSING, SAME_DTYPE, AccumulateGrad, Node, _anomaly
from .saved_hooks import unpack as unpack_saved

_state = grad_mode.state


def retain_graph_error() -> RuntimeError:
    return RuntimeError(
        "Trying to backward through the graph a second time (or directly access saved tensors "
        "after they have already been freed). Saved intermediate values of the graph are freed "
        "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
        "backward through the graph a second time or if you need to access saved tensors after "
        "calling backward."
    )


def _short_name(node) -> str:
    # PyTorch's message names the op without the "Backward0" suffix ("output 0 of Mul").
    return re.sub(r"Backward\d*$", "", node.name())


def version_error(t, expected: int, node=None, output_nr: int = 0) -> RuntimeError:
    """PyTorch's error for a saved tensor modified in place before backward used it."""
    which = ""
    if node is not None:
        which = f", which is output {output_nr} of {_short_name(node)},"
    hint = (" Hint: the backtrace further above shows the operation that failed to compute its "
            "gradient. The variable in question was changed in there or anywhere later. Good "
            "luck!") if _anomaly.enabled else (
        " Hint: enable anomaly detection to find the operation that failed to compute its "
        "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{_type_name(t)} {list(t._shape)}]{which} is at version {t._vc[0]}; "
        f"expected version {expected} instead.{hint}"
    )


def _current_fn(t):
    """`t.grad_fn` as PyTorch reads it for the message: a view whose base was since changed
    in place gets its regenerated node (AsStridedBackward0), as `t.grad_fn` would give."""
    fn = t._grad_fn
    if fn is not None and t._base is not None:
        from .graph import edge_of

        fresh = edge_of(t)[0]
        if fresh.__class__ is not AccumulateGrad:
            fn = fresh
    return fn


def _unpack(node: Node, create_graph: bool):
    """The node's saved inputs and output, checked against their versions at save time."""
    saved = node._saved
    if saved is None:
        raise retain_graph_error()
    out = node._out
    versions = node._versions
    if node._packed:
        # NOTE: PyTorch checks no version of a tensor a saved_tensors_hooks pair packed
        saved, out = unpack_saved(saved), None if out is None else unpack_saved(out)
        versions = ()
    n = len(saved)
    for i, v in enumerate(versions):
        if v is None:
            continue
        if i < n:
            s = saved[i]
            if s._vc[0] != v:
                fn = _current_fn(s)
                raise version_error(s, v, fn, s.output_nr if fn is not None else 0)
        else:
            s = out[i - n] if isinstance(out, tuple) else out
            if s._vc[0] != v:
                if node._rule.cache_output:  # a shortcut the rule can do without
                    out = None
                    continue
                raise version_error(s, v, node, i - n)
    kept = node._kept
    if kept is not None:
        for s, v, nr in kept:
            if s._vc[0] != v:
                if nr is not None:  # one of this node's outputs
                    raise version_error(s, v, node, nr)
                fn = _current_fn(s)
                raise version_error(s, v, fn, s.output_nr if fn is not None else 0)
    if out is not None and create_graph:
        out = _reattach(node, out)
    return saved, out


def _reattach(node: Node, out):
    """Saved outputs, given back their grad_fn so that double backward sees through them."""
    from .graph import ag_meta

    def one(o, i):
        if o is None:  # an output the rule does not read was not saved
            return None
        # (a captured graph's pending output is aliased as another pending value: asking
        # for its storage would run the graph, a break in a compiled second-order step)
        t = T._alias(o, storage=not o._is_lazy)
        if o._dtype.is_floating_point or o._dtype.is_complex:  # indices stay constants
            t._grad_fn = node
            t._requires_grad = True
            if i:
                ag_meta(t).output_nr = i
        return t

    if isinstance(out, tuple):
        return tuple(one(o, i) for i, o in enumerate(out))
    return one(out, 0)


def _type_name(t) -> str:
    return cpu_type_text(t._dtype)


def run_vjp(node: Node, grads: list, create_graph: bool) -> list:
    """Gradients for each input edge of `node`, given gradients for its outputs."""
    prim = node.prim
    rule = node._rule  # (a family's: its member's, resolved when the node was recorded)
    params = node._params
    if rule is MISSING or rule is None:
        raise RuntimeError(
            f"no VJP registered for primitive {prim.name} (inputs "
            f"{[m[0] if m else None for m in node._in_meta]})"
        )
    saved, out = _unpack(node, create_graph)
    # An output no path reached has cotangent None: the rule sees that (and may skip its
    # terms) rather than a tensor of zeros it would have to read to recognise.
    g = grads[0] if prim.n_outputs == 1 else tuple(grads)
    if rule.in_shape is not None:
        meta = node._in_meta[rule.in_shape]
        params = {**params, "in_shape": meta[0] if meta is not None else None}
    needs = node._needs
    if rule.joint is not None:
        joint = rule.joint(g, out, *saved, needs=needs, **params)
    fns = rule.fns
    result = []
    for i, need in enumerate(needs):
        if not need:
            result.append(None)
            continue
        gi = joint[i] if rule.joint is not None else fns[i](g, out, *saved, **params)
        if gi is not None:
            shape, dtype = node._in_meta[i]
            if gi._shape != shape or gi._dtype is not dtype:
                gi = fit(gi, shape, dtype)
        result.append(gi)
    if create_graph and "_tie" in node.__dict__:  # (double_nodes.link marked the node)
        result = tie(node, result)  # (PyTorch's double-backward node takes the op's input)
    return result


def fit(g, shape, dtype):
    """Sum a broadcast gradient back to its input's shape and cast it to the input's dtype.

    This is the one place broadcasting is undone in backward.
    """
    if g._shape != shape:
        g = g.sum_to_size(shape)
    if g._dtype is not dtype:
        if g._dtype.is_complex and not dtype.is_complex:
            g = g.real
        g = g.to(dtype)
    return g


def accumulate(var, g, create_graph: bool, owned: bool = False) -> None:
    """Add `g` into leaf `var`'s `.grad` (its tensor hooks already ran), then post hooks.

    `owned` says the engine holds the only reference to `g` (see `_fresh`): then, as in
    PyTorch, `g` itself becomes `.grad` when it is laid out as `var`; otherwise it is copied,
    so `.grad` never aliases a gradient that another path, a hook or the caller holds."""
    if g is None:
        return
    cur = var._grad
    if cur is None:
        if g.__class__ is not T.Tensor and g.is_sparse and not create_graph:
            var._grad = _sparse_grad(g)
        elif create_graph:
            # NOTE: a fresh buffer copied from `g` with the graph kept (CopyBackwards, as in
            # PyTorch), so `.grad` never aliases a gradient that other paths share.
            if g.__class__ is not T.Tensor and g.is_sparse:
                var._grad = g.clone()
            elif g.is_sparse or var.is_sparse:
                from ..ops.creation import empty_like

                var._grad = empty_like(g).copy_(g)
            else:
                var._grad = _grad_buffer(g, var).copy_(g)
        elif owned and g._dtype is var._dtype and g._shape == var._shape \
                and g._np is not None and _obeys_layout(g, var):
            var._grad = g
        else:
            var._grad = _grad_copy(g, var)
    elif create_graph or cur._requires_grad or cur.is_sparse is not g.is_sparse:
        var._grad = _sum(cur, g)
    else:
        with grad_mode.no_grad():
            if cur._shape == g._shape:
                cur.add_(g)
            else:
                var._grad = cur + g
    ag = var._ag
    if ag is not None and ag.post_acc_hooks:
        for hook in list(ag.post_acc_hooks.values()):
            hook(var)


def _fresh(g, i: int, in_grads: list, grads: list, node) -> bool:
    """Whether input gradient `i` of `node` is a tensor the engine alone holds: made by the
    node's VJP into memory of its own (no storage shared with a view, no NumPy base), not
    handed to two edges, not one of the node's incoming `grads` passed through, not a
    tensor the node saved, and no post-hook of the node has seen it."""
    if g._storage is not None or g._base is not None or g._requires_grad \
            or g.__class__ is not T.Tensor or node._post_hooks is not None:
        return False
    arr = g._np
    # (an empty result holds no memory to share, whatever NumPy's flags say of its base)
    if arr is None or not (arr.flags.owndata or not arr.size):
        return False
    for j, h in enumerate(in_grads):
        if h is g and j != i:
            return False
    for h in grads:
        if h is g:
            return False
    saved = node._saved
    if saved:
        for h in saved:
            if h is g:
                return False
    out = node._out
    return out is not g and not (isinstance(out, tuple) and any(o is g for o in out))


def _sum(a, b):
    """a + b, two gradients of one tensor. A sparse and a dense one sum to a dense tensor,
    as in PyTorch's engine (the dense one first: sparse + dense is refused in user code)."""
    if a.__class__ is not b.__class__ and a.is_sparse and not b.is_sparse:
        return b + a
    return a + b


def _buffer_sum(old, new):
    """`old` + `new`, two gradients of one node input met in the engine's buffer.

    NOTE: PyTorch's InputBuffer puts the newer gradient first when the buffered one is
    sparse and grad mode is off (`new + old`): for two sparse COO gradients that decides
    the order of their concatenated indices, so a weight used twice in one graph gets its
    earliest use's rows first (the engine runs later nodes first)."""
    if not _state.enabled and old.__class__ is not T.Tensor and old.is_sparse:
        return new + old
    total = _sum(old, new)
    if _state.enabled or old is new or old.__class__ is not T.Tensor \
            or total.__class__ is not T.Tensor or total._shape != old._shape:
        return total
    # NOTE: with grad mode off PyTorch adds in place into the buffered gradient when it is
    # dense and held there alone: the sum keeps its strides, a size-1 dim's too, where
    # TensorIterator's `old + new` is row-major ((x * x).sum() of `ones(4, 1).t()`: x.grad
    # strides (1, 1)). Ember adds out of place, then lays the sum out so: only strides.
    st = T.layout_strides(old)
    if total._dtype is not old._dtype or T.layout_strides(total) == st \
            or not is_non_overlapping_and_dense(old._shape, st):
        return total
    return _restrided(total, st)


def _restrided(x, st):
    """ops.copy's restrided (imported on first use, as `_clone_contiguous`)."""
    global _restrided
    from ..ops.copy import restrided

    _restrided = restrided
    return restrided(x, st)


def _sparse_grad(g):
    """A sparse gradient as a leaf's first `.grad`: a new sparse tensor over its indices
    and values, not flagged coalesced (even when `g` is).

    NOTE: PyTorch's AccumulateGrad re-wraps a sparse gradient it alone holds this way
    (`_sparse_coo_tensor_unsafe`, which sets no flag), so the `.grad` of a leaf reached
    by `to_dense` or `sparse.mm` reports uncoalesced while `autograd.grad` gives the
    coalesced gradient itself. (A gradient it shares is cloned, flag and all; which ones
    are shared follows its reference counts, not modelled here.)"""
    from ..ops.sparse_tensor import make_sparse

    # (its values laid out contiguously, as PyTorch's accumulation leaves them: that decides
    # how a later sparse gradient is added to it, see ops/sparse_functions.add)
    return make_sparse(g._sp_indices, g._sp_values.detach().contiguous(), g._shape, False)


def _grad_buffer(g, var):
    """An empty tensor of `g`'s dtype laid out by PyTorch's gradient layout contract: with
    `var`'s strides when `var` covers its memory densely once (a transposed weight), else
    contiguous; whatever the layout of `g` (an expanded sum's gradient, say)."""
    from ..ops.creation import empty_strided

    shape = var._shape
    stride = var.stride()
    if not is_non_overlapping_and_dense(shape, stride):
        stride = contiguous_strides(shape)
    return empty_strided(shape, stride, dtype=g._dtype, device=g.device)


def _obeys_layout(g, var) -> bool:
    """Whether gradient `g` already has the layout `var.grad` must have, so that it can
    become `.grad` itself (PyTorch's `obeys_layout_contract`): for a dense `var`, its
    strides on every dim of more than one element (and no 0 stride on the others); for
    any other `var`, contiguous."""
    shape, gs = g._shape, T.layout_strides(g)
    vs = var.stride()
    if not is_non_overlapping_and_dense(shape, vs):
        return is_contiguous(shape, gs)
    for n, a, b in zip(shape, gs, vs):
        if (n != 1 and a != b) or (n == 1 and a == 0):
            return False
    return True


def _clone_contiguous(g):
    """ops.copy's clone_contiguous (imported on first use, as `_ones_like`)."""
    global _clone_contiguous
    from ..ops.copy import clone_contiguous

    _clone_contiguous = clone_contiguous
    return clone_contiguous(g)


def _grad_copy(g, var):
    """A copy of `g` to become `var.grad`, laid out by the layout contract (`_grad_buffer`)."""
    if g._requires_grad:
        g = T._alias(g)
    # (a plain Tensor is never sparse: the property asked of subclasses only; a sparse
    # leaf, COO or CSR / CSC, has no strides to lay its gradient out by)
    if (g.__class__ is not T.Tensor and g.is_sparse) or not var._strided:
        return g.clone()
    if var.stride() == contiguous_strides(var._shape):
        return _clone_contiguous(g)
    return _grad_buffer(g, var).copy_(g)  # (`var`'s strides, a size-1 dim's too)


def _collect(roots: list) -> dict:
    """In-degree of every node reachable from `roots` (an explicit-stack DFS)."""
    deps: dict = {}
    stack = list(dict.fromkeys(n for n in roots if n is not None))  # (two outputs of a node)
    seen = set(stack)
    while stack:
        node = stack.pop()
        for nxt, _ in node._edges:
            if nxt is None:
                continue
            deps[nxt] = deps.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return deps


def _needed(roots: list, targets: set) -> tuple[dict, set]:
    """`_collect`'s in-degrees, and the nodes that must run so gradients reach some target,
    in one post-order walk (no recursion)."""
    deps: dict = {}
    needed: set = set()
    visited: set = set()
    for root in roots:
        if root is None or root in visited:
            continue
        stack = [(root, iter(root._edges))]
        visited.add(root)
        while stack:
            node, it = stack[-1]
            advanced = False
            for nxt, _ in it:  # (each edge is taken from its iterator once)
                if nxt is None:
                    continue
                deps[nxt] = deps.get(nxt, 0) + 1
                if nxt not in visited:
                    visited.add(nxt)
                    stack.append((nxt, iter(nxt._edges)))
                    advanced = True
                    break
            if advanced:
                continue
            stack.pop()
            if any(n in targets or n in needed for n, _ in node._edges if n is not None):
                needed.add(node)
    return deps, needed


class _Hooks:
    """Set from above (ember.graph), else None: `captured(roots)` is a context manager under
    which a backward pass through a compiled forward is itself captured and compiled;
    `recording(roots, root_grads, retain_graph, engine)` runs a plain backward pass bound
    while a graph is being recorded (replaying the one recorded there before, or calling
    `engine()`), or answers NotImplemented when no graph is."""

    captured = None
    recording = None


hooks = _Hooks()


def run(roots: list, root_grads: list, retain_graph: bool, create_graph: bool,
        capture: dict | None = None, accumulate_leaves: bool = True) -> dict:
    """`_run` with NumPy's floating-point warnings off: the engine's own gradient
    arithmetic (sums where paths meet, VJPs on arrays) is ember's, and PyTorch never warns."""
    captured = hooks.captured
    if captured is not None:
        plain = capture is None and accumulate_leaves and not create_graph
        if plain:
            done = hooks.recording(roots, root_grads, retain_graph, lambda: run_quiet(
                _run, roots, root_grads, retain_graph, False))
            if done is not NotImplemented:
                return done
        with captured(roots):
            if plain:  # (a pass through a compiled forward, from outside it: replayable too)
                done = hooks.recording(roots, root_grads, retain_graph, lambda: run_quiet(
                    _run, roots, root_grads, retain_graph, False))
                if done is not NotImplemented:
                    return done
            return run_quiet(_run, roots, root_grads, retain_graph, create_graph, capture,
                             accumulate_leaves)
    return run_quiet(_run, roots, root_grads, retain_graph, create_graph, capture,
                     accumulate_leaves)


def _run(roots: list, root_grads: list, retain_graph: bool, create_graph: bool,
         capture: dict | None = None, accumulate_leaves: bool = True) -> dict:
    """Run backward from `roots` (pairs of node and output index) seeded with `root_grads`.

    `capture` holds the (node, output_nr) pairs whose incoming gradient to return,
    for `autograd.grad`; with `accumulate_leaves=False` no `.grad` is written and
    only nodes on a path to a captured pair run.
    """
    root_nodes = [n for n, _ in roots]
    needed = None
    if capture is not None and not accumulate_leaves:
        deps, needed = _needed(root_nodes, {n for n, _ in capture})
    else:
        deps = _collect(root_nodes)
    task = _GraphTask(next(_task_ids), root_nodes, deps, needed,
                      None if needed is None else {n for n, _ in capture})
    _tasks.append(task)
    try:
        return _run_task(roots, root_grads, retain_graph, create_graph, capture,
                         accumulate_leaves, deps, needed)
    finally:
        _tasks.pop()


class _GraphTask:
    """One backward pass in progress: which nodes it will run (for multi-grad hooks)."""

    __slots__ = ("id", "roots", "deps", "needed", "targets")

    def __init__(self, id: int, roots: list, deps: dict, needed, targets=None) -> None:
        self.id, self.roots, self.deps, self.needed = id, roots, deps, needed
        self.targets = targets  # (autograd.grad: the nodes whose incoming gradient it returns)

    def will_execute(self, node) -> bool:
        """PyTorch's `_will_engine_execute_node`: a node the pass runs, or (autograd.grad)
        one whose incoming gradient it captures."""
        if self.needed is not None:
            return node in self.needed or node in self.targets
        return node in self.deps or node in self.roots


_tasks: list = []  # the backward passes running now, innermost last
_task_ids = itertools.count()


def current_graph_task():
    """The innermost backward pass running now, or None."""
    return _tasks[-1] if _tasks else None


def _run_task(roots, root_grads, retain_graph, create_graph, capture, accumulate_leaves,
              deps, needed) -> dict:
    root_nodes = [n for n, _ in roots]
    buffers: dict = {}
    for (node, nr), g in zip(roots, root_grads):
        if node is None or g is None:
            continue
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node.n_outputs
        buf[nr] = g if buf[nr] is None else _sum(buf[nr], g)
    ready = []
    # ties (leaves' AccumulateGrad share one sequence number) go in the order they became
    # ready: the same every run, so a captured backward records the same graph every time
    order = itertools.count()
    for node in dict.fromkeys(n for n in root_nodes if n is not None):
        if deps.get(node, 0) == 0:
            heapq.heappush(ready, (-node._seq, next(order), node))
    captured: dict = {}
    owned: set = set()  # AccumulateGrad nodes whose buffered gradient only the engine holds
    recorder = ranges.recorder  # a profiler recording: each node runs inside its ranges
    prev_enabled = _state.enabled
    _state.enabled = create_graph
    node = None
    try:
        while ready:
            node = heapq.heappop(ready)[2]
            grads = buffers.pop(node, None) or [None] * node.n_outputs
            if node.__class__ is AccumulateGrad and node.variable._ag is not None \
                    and node.variable._ag.grad_dtype is not SAME_DTYPE:
                grads = _as_grad_dtype(node.variable, grads)
            if node._tensor_hooks or node._retained or (
                    node.__class__ is AccumulateGrad and _has_hooks(node.variable)):
                grads = _tensor_pre_hooks(node, grads)
                owned.discard(node)  # a hook has seen (and may keep) the gradient
            if capture is not None:
                for nr, g in enumerate(grads):
                    key = (node, nr)
                    if key in capture and g is not None:
                        captured[key] = g if key not in captured else _sum(captured[key], g)
                        owned.discard(node)
            if (needed is not None and node not in needed) \
                    or (not _any_grad(grads) and not _runs_undefined(node)) \
                    or (not accumulate_leaves and node.__class__ is AccumulateGrad):
                _route(node, None, (), buffers, deps, ready, owned, order)
            elif node.__class__ is AccumulateGrad and node._pre_hooks is None \
                    and node._post_hooks is None:
                if recorder is None:
                    accumulate(node.variable, grads[0], create_graph, node in owned)
                else:
                    _in_ranges(recorder, node, grads, accumulate, node.variable, grads[0],
                               create_graph, node in owned)
            else:
                in_grads = _call(node, grads, create_graph) if recorder is None else \
                    _in_ranges(recorder, node, grads, _call, node, grads, create_graph)
                _route(node, in_grads, grads, buffers, deps, ready, owned, order)
                if not retain_graph:
                    node._release()
    except Exception:
        if _anomaly.enabled and node is not None and node._anomaly:
            warnings.warn(
                f"Error detected in {node.name()}. Traceback of forward call that caused the "
                f"error:\n{node._anomaly}", UserWarning, stacklevel=user_stacklevel())
        raise
    finally:
        _state.enabled = prev_enabled
    return captured


def _route(node, in_grads, grads, buffers: dict, deps: dict, ready: list, owned: set,
           order) -> None:
    """Add `node`'s input gradients into the buffers of the nodes they flow to; queue those
    whose gradients are now complete. A leaf's buffer is marked `owned` when the engine
    alone holds it: a fresh VJP result (`_fresh`) or a sum the engine made."""
    for i, (nxt, nr) in enumerate(node._edges):
        if nxt is None:
            continue
        g = None if in_grads is None else in_grads[i]
        if g is not None:
            buf = buffers.get(nxt)
            if buf is None:
                buf = buffers[nxt] = [None] * nxt.n_outputs
            if buf[nr] is None:
                buf[nr] = g
                if nxt.__class__ is AccumulateGrad and _fresh(g, i, in_grads, grads, node):
                    owned.add(nxt)
            else:
                buf[nr] = _buffer_sum(buf[nr], g)
                if nxt.__class__ is AccumulateGrad:
                    owned.add(nxt)
        d = deps[nxt] - 1
        deps[nxt] = d
        if d == 0:
            heapq.heappush(ready, (-nxt._seq, next(order), nxt))


def _as_grad_dtype(leaf, grads: list) -> list:
    """A leaf's incoming gradient cast to the leaf's `grad_dtype` when one is set (before
    its hooks, `.grad` and `autograd.grad` see it, as PyTorch casts at the edge)."""
    want = leaf._ag.grad_dtype
    g = grads[0]
    if want is None or g is None or g._dtype is want:
        return grads
    if not (want.is_floating_point or want.is_complex):
        raise RuntimeError(
            f"a gradient of dtype {want} cannot flow into a leaf: its grad_dtype must be a "
            "floating point or complex dtype (or None)")
    return [g.to(want)]


def _has_hooks(leaf) -> bool:
    ag = leaf._ag
    return ag is not None and bool(ag.hooks)


def _runs_undefined(node) -> bool:
    """Whether `node` runs although no gradient reached it (all None, "undefined" in
    PyTorch): a custom Function's node does (its backward sees zeros, or None without
    materialized grads), and a node with pre- or post-hooks does (they see None); a
    built-in VJP's result would be None, so the others are skipped."""
    if node.__class__ is AccumulateGrad:
        return False
    return getattr(node, "_fn_cls", None) is not None or node._pre_hooks is not None \
        or node._post_hooks is not None


def _any_grad(grads: list) -> bool:
    for g in grads:  # (not `list.count`: Tensor == is elementwise)
        if g is not None:
            return True
    return False


def _call(node: Node, grads: list, create_graph: bool) -> list:
    """Node pre-hooks, the node itself, its post-hooks, and the anomaly NaN check."""
    if node._pre_hooks is None and node._post_hooks is None and not _anomaly.enabled:
        return node.apply(grads, create_graph)
    # NOTE: hooks see the gradients of the differentiable outputs only (max(dim)'s values,
    # not its indices), as PyTorch's node has no others; `rest` pads them back for the VJP.
    k = node._n_diff
    rest = [] if k is None else grads[k:]
    if k is not None:
        grads = grads[:k]
    if node._pre_hooks:
        for fn in list(node._pre_hooks.values()):
            r = fn(tuple(grads))
            if r is not None:
                grads = list(r)
    if _any_grad(grads) or getattr(node, "_fn_cls", None) is not None:
        in_grads = node.apply(grads + rest, create_graph)
    else:  # (a built-in VJP of no gradient at all: None for every input)
        in_grads = [None] * len(node._edges)
    if node._post_hooks:
        for fn in list(node._post_hooks.values()):
            r = fn(tuple(in_grads), tuple(grads))
            if r is not None:
                in_grads = list(r)
    if _anomaly.enabled and _anomaly.check_nan:
        _check_nan(node, in_grads)
    return in_grads


def _in_ranges(recorder, node: Node, grads: list, fn, *args):
    """`fn(*args)` inside the two ranges PyTorch's profiler shows for a node it evaluates:
    `autograd::engine::evaluate_function: MulBackward0` around the node's own `MulBackward0`
    (whose input shapes are the incoming gradients')."""
    name = node.name()
    outer = recorder.enter("autograd::engine::evaluate_function: " + name)
    inner = recorder.enter(name, grads)
    try:
        return fn(*args)
    finally:
        recorder.exit(inner)
        recorder.exit(outer)


def _tensor_pre_hooks(node: Node, grads: list) -> list:
    """Tensor hooks on the node's outputs (or on a leaf), then retained grads."""
    # NOTE: as in PyTorch, a hook runs for a gradient that never arrived too, and sees None
    if isinstance(node, AccumulateGrad):
        ag = node.variable._ag
        if ag is not None and ag.hooks:
            for fn in list(ag.hooks.values()):
                r = fn(grads[0])
                if r is not None:
                    _check_hook_result(grads[0], r, fn)
                    grads = [r]
        return grads
    hooks = node._tensor_hooks
    if hooks:
        for nr, fn in list(hooks.values()):
            r = fn(grads[nr])
            if r is not None:
                _check_hook_result(grads[nr], r, fn)
                grads = list(grads)
                grads[nr] = r
    if node._retained:
        for nr, ref in node._retained:
            t = ref()
            g = grads[nr]
            if t is None or g is None or t._grad_fn is not node:
                continue
            if t._grad is None:
                # a contiguous copy, as torch keeps it (with create_graph: CloneBackward0)
                src = g if _state.enabled else g.detach()
                t._grad = src.clone(memory_format=contiguous_format)
            else:
                t._grad = _sum(t._grad, g)
    return grads


def _check_hook_result(old, new, hook) -> None:
    """A tensor hook may replace a gradient only by a tensor of the same type and size."""
    if old is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not isinstance(new, T.Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
    name = getattr(hook, "__name__", "<unknown>")
    if new._dtype is not old._dtype or new.device != old.device:
        raise RuntimeError(f"hook '{name}' has changed the type of value (was "
                           f"{_type_name(old)} got {_type_name(new)})")
    if tuple(new._shape) != tuple(old._shape):
        raise RuntimeError(f"hook '{name}' has changed the size of value")


def _check_nan(node: Node, grads: list) -> None:
    for i, g in enumerate(grads):
        if g is not None and g.device.type != "meta" and bool(g.isnan().any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


# (the public entry points, `backward` and `grad`, live in entry_points.py; these names are
# where the rest of ember has always imported them from)
from .entry_points import backward, grad  # noqa: E402, F401
