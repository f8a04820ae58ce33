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
from collections.abc import Mapping

import numpy as np

from .. import _tensor as T
from .._core.dispatch import current_interpreter, run_quiet
from .._core.ranges import ranges
from . import grad_mode
from .graph import MISSING, AccumulateGrad, Node, _anomaly, edge_of, retain_grad

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


def _unpack(node: Node, create_graph: bool):
    """The node's saved inputs and output, checked against their versions at save time."""
    saved = node._saved
    if saved is None:
        raise retain_graph_error()
    out = node._out
    versions = node._versions
    n = len(saved)
    for i, v in enumerate(versions):
        if v is None:
            continue
        if i < n:
            s = saved[i]
            if s._vc[0] != v:
                fn = s._grad_fn
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
                fn = s._grad_fn
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
        t = T._alias(o)
        if o._dtype.is_floating_point or o._dtype.is_complex:  # indices stay constants
            t._grad_fn = node
            t._requires_grad = True
            if i:
                ag_meta(t).output_nr = i
        return t

    if isinstance(out, tuple):
        return tuple(one(o, i) for i, o in enumerate(out))
    return one(out, 0)


_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
               "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor",
               "complex64": "ComplexFloatTensor", "complex128": "ComplexDoubleTensor"}


def _type_name(t) -> str:
    return "torch." + _TYPE_NAMES.get(t._dtype.name, "Tensor")


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
            if g.is_sparse or var.is_sparse:
                from ..ops.creation import empty_like

                var._grad = empty_like(g).copy_(g)
            else:
                var._grad = _grad_buffer(g, var).copy_(g)
        elif owned and g._dtype is var._dtype and g._shape == var._shape \
                and g._np is not None and g._np.flags.c_contiguous and var.is_contiguous():
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
    if arr is None or not arr.flags.owndata:
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
    from .._view import contiguous_strides, is_non_overlapping_and_dense
    from ..ops.creation import empty_strided

    shape = var._shape
    stride = contiguous_strides(shape) if var.is_contiguous() else var.stride()
    if not is_non_overlapping_and_dense(shape, stride):
        stride = contiguous_strides(shape)
    return empty_strided(shape, stride, dtype=g._dtype, device=g.device)


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
    # (a plain Tensor is never sparse: the property asked of subclasses only)
    if (g.__class__ is not T.Tensor and g.is_sparse) or (
            var.__class__ is not T.Tensor and var.is_sparse):
        return g.clone()
    return _clone_contiguous(g) if var.is_contiguous() else _grad_buffer(g, var).copy_(g)


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
            if (needed is not None and node not in needed) or not _any_grad(grads) \
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
                f"error:\n{node._anomaly}", UserWarning, stacklevel=3)
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
                buf[nr] = _sum(buf[nr], g)
                if nxt.__class__ is AccumulateGrad:
                    owned.add(nxt)
        d = deps[nxt] - 1
        deps[nxt] = d
        if d == 0:
            heapq.heappush(ready, (-nxt._seq, next(order), nxt))


def _has_hooks(leaf) -> bool:
    ag = leaf._ag
    return ag is not None and bool(ag.hooks)


def _any_grad(grads: list) -> bool:
    for g in grads:  # (not `list.count`: Tensor == is elementwise)
        if g is not None:
            return True
    return False


def _call(node: Node, grads: list, create_graph: bool) -> list:
    """Node pre-hooks, the node itself, its post-hooks, and the anomaly NaN check."""
    if node._pre_hooks is None and node._post_hooks is None and not _anomaly.enabled:
        return node.apply(grads, create_graph)
    if node._pre_hooks:
        for fn in list(node._pre_hooks.values()):
            r = fn(tuple(grads))
            if r is not None:
                grads = list(r)
    in_grads = node.apply(grads, create_graph)
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
    if isinstance(node, AccumulateGrad):
        ag = node.variable._ag
        if ag is not None and ag.hooks and grads[0] is not None:
            for fn in list(ag.hooks.values()):
                r = fn(grads[0])
                if r is not None:
                    grads = [r]
        return grads
    hooks = node._tensor_hooks
    if hooks:
        for nr, fn in list(hooks.values()):
            if grads[nr] is not None:
                r = fn(grads[nr])
                if r is not None:
                    grads = list(grads)
                    grads[nr] = r
    if node._retained:
        for nr, ref in node._retained:
            t = ref()
            g = grads[nr]
            if t is None or g is None or t._grad_fn is not node:
                continue
            if t._grad is None:
                t._grad = g if _state.enabled else g.detach().clone()
            else:
                t._grad = _sum(t._grad, g)
    return grads


def _check_nan(node: Node, grads: list) -> None:
    for i, g in enumerate(grads):
        if g is not None and g.device.type != "meta" and bool(g.isnan().any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


# --- public entry points -----------------------------------------------------

def _ones_like(o):
    """The implicit seed of a scalar output (imported on first use: ops import autograd)."""
    global _ones_like
    from ..ops.creation import ones_like

    _ones_like = ones_like
    return ones_like(o)


def _make_root_grads(outputs, grad_tensors, is_grads_batched=False):
    out = []
    for i, o in enumerate(outputs):
        g = grad_tensors[i] if grad_tensors is not None and i < len(grad_tensors) else None
        if g is None:
            if o.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not o._dtype.is_floating_point:
                raise RuntimeError(
                    "grad can be implicitly created only for real scalar outputs but got "
                    f"{o._dtype!r}"
                )
            top = current_interpreter()
            s = o._storage
            if (top is None or top.runs_factories) and (o.__class__ is T.Tensor or o._is_lazy) \
                    and (s is None or s.device.type == "cpu"):
                g = T._wrap(np.ones(o._shape, o._dtype.np), o._dtype)  # (ones_like's result)
            else:
                g = _ones_like(o)
        elif not isinstance(g, T.Tensor):
            raise TypeError(
                f"grad_tensors must be Tensors or None, but got {type(g).__name__}"
            )
        else:
            shape = g._shape[1:] if is_grads_batched else g._shape
            if shape != o._shape:
                gs = "grad_output" if not is_grads_batched else "grad_output (without batch dim)"
                raise RuntimeError(
                    f"Mismatch in shape: {gs}[{i}] has a shape of {T.Size(shape)} and "
                    f"output[{i}] has a shape of {T.Size(o._shape)}."
                )
            if o._dtype.is_complex != g._dtype.is_complex:
                raise RuntimeError(
                    "For complex Tensors, both grad_output and output are required to have the "
                    f"same dtype. Mismatch in dtype: grad_output[{i}] has a dtype of "
                    f"{g._dtype!r} and output[{i}] has a dtype of {o._dtype!r}."
                )
            if g._dtype is not o._dtype:
                g = g.to(o._dtype)
        out.append(g)
    return out


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, T.Tensor):
        return (x,)
    return tuple(x)


def _check_outputs(outputs) -> None:
    for i, t in enumerate(outputs):
        if not isinstance(t, T.Tensor):
            raise TypeError(f"expected a Tensor as element {i} of tensors, got "
                            f"{type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None) -> None:
    """Compute gradients of `tensors` and accumulate them into the leaves' `.grad`.

    With `inputs`, only those tensors (leaves or not) receive gradients.
    """
    tensors = _as_tuple(tensors)
    if not tensors:
        raise RuntimeError("backward() got no tensors to differentiate")
    grad_tensors = _as_tuple(grad_tensors if grad_tensors is not None else grad_variables)
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    _check_outputs(tensors)
    grads = _make_root_grads(tensors, grad_tensors)
    if create_graph:
        warnings.warn(
            "Using backward() with create_graph=True will create a reference cycle between the "
            "parameter and its gradient which can cause a memory leak. We recommend using "
            "autograd.grad when creating the graph to avoid this. If you have to use this "
            "function, make sure to reset the .grad fields of your parameters to None after use "
            "to break the cycle and avoid the leak.", UserWarning, stacklevel=3)
    roots = [edge_of(t) for t in tensors]
    if inputs is None:
        run(roots, grads, retain_graph, create_graph)
        return
    for t in inputs:
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        if t._grad_fn is not None:
            retain_grad(t)  # as in PyTorch, a non-leaf input keeps its .grad from now on
    keys = [edge_of(t) for t in inputs]
    captured = run(roots, grads, retain_graph, create_graph, dict.fromkeys(keys),
                   accumulate_leaves=False)
    for t, key in zip(inputs, keys):
        g = captured.get(key)
        if g is not None and t._grad_fn is None:
            accumulate(t, g, create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False,
         materialize_grads=False):
    """Gradients of `outputs` with respect to `inputs`, returned rather than accumulated.

    The argument checks run in PyTorch's order, with its types and messages: the flags, an
    empty `inputs`, then each grad_output against its output (`_make_grads`), then what
    PyTorch's engine checks (the counts, each output, each input)."""
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but "
            "got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = (outputs,) if isinstance(outputs, T.Tensor) else tuple(outputs)
    if isinstance(inputs, T.Tensor):
        inputs_tuple = (inputs,)
    elif type(inputs) is dict:
        inputs_tuple = tuple(inputs.values())
    elif isinstance(inputs, Mapping):
        raise TypeError(f"`inputs` argument to `grad()` must be a dict, not "
                        f"{type(inputs).__name__}. Other Mapping types are not supported.")
    else:
        inputs_tuple = tuple(inputs)
    if not inputs_tuple:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if not only_inputs:
        warnings.warn(
            "only_inputs argument is deprecated and is ignored now (defaults to True). To "
            "accumulate gradient for other parts of the graph, please use "
            "torch.autograd.backward.", FutureWarning, stacklevel=2)
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    elif isinstance(grad_outputs, T.Tensor):
        grad_outputs = (grad_outputs,)
    else:
        grad_outputs = tuple(grad_outputs)
    grad_outputs = _make_grads(outputs, grad_outputs, is_grads_batched)
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        result = _batched_grad(outputs, inputs_tuple, grad_outputs, retain_graph, create_graph,
                               allow_unused)
    else:
        result = _run_grad(outputs, inputs_tuple, grad_outputs, retain_graph, create_graph,
                           allow_unused)
    if materialize_grads:
        from ..ops.creation import zeros_like

        result = tuple(zeros_like(t, requires_grad=create_graph) if g is None else g
                       for g, t in zip(result, inputs_tuple))
    if type(inputs) is dict:
        return dict(zip(inputs.keys(), result))
    return result


def _make_grads(outputs: tuple, grads: tuple, is_grads_batched: bool) -> tuple:
    """PyTorch's `_make_grads`: each grad_output checked against its output (pairs past the
    shorter sequence are left to the engine's count check), a missing one made as ones for
    a scalar output that requires grad. Like PyTorch, it names a mismatched pair by
    `grads.index(grad)` / `outputs.index(out)`, which compare tensors with `==`: an earlier
    entry of another shape makes that comparison raise instead."""
    new = []
    for out, g in zip(outputs, grads):
        if not isinstance(out, T.Tensor):
            raise AssertionError("Expected output to be a torch.Tensor")
        if isinstance(g, T.Tensor):
            first = g[0] if is_grads_batched else g
            if first._shape != out._shape:
                grad_shape = T.Size(first._shape[1:] if is_grads_batched else first._shape)
                where = (f"grad_output[{grads.index(g)}] has a shape of {grad_shape} and "
                         f"output[{outputs.index(out)}] has a shape of {out.shape}.")
                if is_grads_batched:
                    raise RuntimeError(
                        "If `is_grads_batched=True`, we interpret the first dimension of each "
                        "grad_output as the batch dimension. The sizes of the remaining "
                        "dimensions are expected to match the shape of corresponding output, "
                        f"but a mismatch was detected: {where} If you only want some tensors "
                        "in `grad_output` to be considered batched, consider using vmap.")
                raise RuntimeError(f"Mismatch in shape: {where}")
            if out._dtype.is_complex != g._dtype.is_complex:
                raise RuntimeError(
                    "For complex Tensors, both grad_output and output are required to have the "
                    f"same dtype. Mismatch in dtype: grad_output[{grads.index(g)}] has a dtype "
                    f"of {g._dtype!r} and output[{outputs.index(out)}] has a dtype of "
                    f"{out._dtype!r}.")
            # (PyTorch's engine casts a gradient to its output's dtype)
            new.append(g if g._dtype is out._dtype else g.to(out._dtype))
        elif g is None:
            new.append(_make_root_grads((out,), None)[0] if out._requires_grad else None)
        else:
            raise TypeError(
                f"gradients can be either Tensors or None, but got {type(g).__name__}")
    return tuple(new)


def _check_engine_args(outputs: tuple, inputs: tuple, grad_outputs: tuple) -> None:
    """What PyTorch's engine (`run_backward`) checks, in its order."""
    if len(outputs) != len(grad_outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grad_outputs)} gradients")
    _check_outputs(outputs)
    for t in inputs:
        if not isinstance(t, T.Tensor):
            raise RuntimeError("all inputs have to be Tensors or GradientEdges, but got "
                               f"{type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")


def _run_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused):
    """One backward pass from `outputs` seeded with the checked `grad_outputs`; the gradient
    reaching each input (None where none does, if `allow_unused`)."""
    _check_engine_args(outputs, inputs, grad_outputs)
    roots = [edge_of(t) for t in outputs]
    keys = [edge_of(t) for t in inputs]
    captured = run(roots, list(grad_outputs), retain_graph, create_graph, dict.fromkeys(keys),
                   accumulate_leaves=False)
    result = []
    for i, key in enumerate(keys):
        g = captured.get(key)
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior."
                )
        elif not create_graph and g._requires_grad:  # (a grad_output passed through)
            g = g.detach()
        result.append(g)
    return tuple(result)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused):
    """`is_grads_batched=True`: one backward per row of the batched grad_outputs, stacked
    (PyTorch vmaps its engine call over dim 0 of every grad_output, with vmap's checks)."""
    from ..ops.creation import zeros_like
    from ..ops.join import stack

    batched = [g for g in grad_outputs if g is not None]
    for g in batched:
        if g.ndim == 0:
            raise ValueError(
                "vmap(vjp, in_dims=0, ...)(<inputs>): Got in_dim=0 for some input, but that "
                "input is a Tensor of dimensionality 0 so expected in_dim to satisfy "
                "0 <= in_dim < 0.")
    sizes = [g._shape[0] for g in batched]
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    n = sizes[0]  # (an IndexError with nothing to batch over, as in PyTorch)
    rows = [_run_grad(outputs, inputs, tuple(None if g is None else g[b] for g in grad_outputs),
                      True if b < n - 1 else retain_graph, create_graph, allow_unused)
            for b in range(n)]
    result = []
    for i, t in enumerate(inputs):
        col = [r[i] for r in rows]
        if all(c is None for c in col):
            result.append(None)
            continue
        result.append(stack([c if c is not None else zeros_like(t) for c in col]))
    return tuple(result)


T._run_backward = backward  # (Tensor.backward calls it without an import per call)
