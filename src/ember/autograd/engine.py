"""The backward engine: walk the graph once in reverse and apply each node's VJP.

`run` counts, for every node reachable from the roots, how many edges point
at it; a node runs once all its gradients have arrived (summed where paths
meet). Ready nodes run newest first, as PyTorch orders them. The walk uses an
explicit stack and a heap, never recursion, so deep graphs are fine.
"""

from __future__ import annotations

import heapq

from .. import _tensor as T
from . import grad_mode
from .graph import AccumulateGrad, Node, _anomaly

_state = grad_mode.state


def _retain_graph_error() -> RuntimeError:
    return RuntimeError(
        "Trying to backward through the graph a second time (or directly access saved tensors "
        "after they have already been freed). Saved intermediate values of the graph are freed "
        "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
        "backward through the graph a second time or if you need to access saved tensors after "
        "calling backward."
    )


def _unpack(node: Node, create_graph: bool):
    """The node's saved inputs and output, checked against their versions at save time."""
    saved = node._saved
    if saved is None:
        raise _retain_graph_error()
    out = node._out
    checked = saved
    if out is not None:
        checked = saved + (out if isinstance(out, tuple) else (out,))
    for i, (s, v) in enumerate(zip(checked, node._versions)):
        if v is not None and s._vc[0] != v:
            which = f"input {i}" if i < len(saved) else f"output {i - len(saved)}"
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [{_type_name(s)} {list(s._shape)}], which is {which} of "
                f"{node.name()}, is at version {s._vc[0]}; expected version {v} instead. Hint: "
                "enable anomaly detection to find the operation that failed to compute its "
                "gradient, with torch.autograd.set_detect_anomaly(True)."
            )
    if out is not None and create_graph:
        out = _reattach(node, out)
    return saved, out


def _reattach(node: Node, out):
    """Saved outputs, given back their grad_fn so that double backward sees through them."""
    def one(o, i):
        t = T._alias(o)
        t._grad_fn = node
        t._requires_grad = True
        if i:
            from .graph import ag_meta

            ag_meta(t).output_nr = i
        return t

    if isinstance(out, tuple):
        return tuple(one(o, i) for i, o in enumerate(out))
    return one(out, 0)


def _type_name(t) -> str:
    names = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
             "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor",
             "complex64": "ComplexFloatTensor", "complex128": "ComplexDoubleTensor"}
    return "torch." + names.get(t._dtype.name, "Tensor")


def run_vjp(node: Node, grads: list, create_graph: bool) -> list:
    """Gradients for each input edge of `node`, given gradients for its outputs."""
    from ..ops.registry import vjp_rules

    prim = node.prim
    rule = vjp_rules.get(prim)
    if rule is None:
        raise RuntimeError(
            f"no VJP registered for primitive {prim.name} (inputs "
            f"{[m[0] if m else None for m in node._in_meta]})"
        )
    saved, out = _unpack(node, create_graph)
    if prim.n_outputs == 1:
        g = grads[0]
    else:
        g = tuple(gi if gi is not None else _zeros_for(o) for gi, o in
                  zip(grads, out if out is not None else (None,) * len(grads)))
    params = node._params
    fns = rule.fns
    result = []
    for i, need in enumerate(node._needs):
        if not need:
            result.append(None)
            continue
        gi = fns[i](g, out, *saved, **params)
        if gi is not None:
            shape, dtype = node._in_meta[i]
            gi = _fit(gi, shape, dtype)
        result.append(gi)
    return result


def _zeros_for(o):
    from ..ops.creation import zeros_like

    return None if o is None else zeros_like(o)


def _fit(g, shape, dtype):
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


def accumulate(var, g, create_graph: bool) -> None:
    """Add `g` into `var.grad` (a leaf), running its tensor hooks first."""
    if g is None:
        return
    ag = var._ag
    if ag is not None and ag.hooks:
        for hook in list(ag.hooks.values()):
            r = hook(g)
            if r is not None:
                g = r
    cur = var._grad
    if cur is None:
        if create_graph:
            var._grad = g
        else:
            # NOTE: cloned because `g` may be shared (add's VJP passes one tensor to both
            # inputs); PyTorch avoids the copy by checking reference counts.
            with grad_mode.no_grad():
                var._grad = g.detach().clone()
    elif create_graph or cur._requires_grad:
        var._grad = cur + g
    else:
        with grad_mode.no_grad():
            if cur._shape == g._shape:
                cur.add_(g)
            else:
                var._grad = cur + g
    if ag is not None and ag.post_acc_hooks:
        for hook in list(ag.post_acc_hooks.values()):
            hook(var)


def _collect(roots: list) -> dict:
    """In-degree of every node reachable from `roots` (an explicit-stack DFS)."""
    deps: dict = {}
    stack = [n for n in roots if n is not None]
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


def _needed(roots: list, targets: set) -> set:
    """Nodes from which some target node can be reached (post-order, no recursion)."""
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
            for nxt, _ in it:
                if nxt is not None and nxt not in visited:
                    visited.add(nxt)
                    stack.append((nxt, iter(nxt._edges)))
                    advanced = True
                    break
            if advanced:
                continue
            stack.pop()
            if node in targets or any(n in needed for n, _ in node._edges if n is not None):
                needed.add(node)
    return needed


def run(roots: list, root_grads: list, retain_graph: bool, create_graph: bool,
        capture: dict | None = None, accumulate_leaves: bool = True) -> dict:
    """Run backward from `roots` (pairs of node and output index) seeded with `root_grads`.

    `capture` maps (node, output_nr) to a slot to fill with the gradient that
    reaches it, for `autograd.grad`; with `accumulate_leaves=False` no `.grad` is
    written.
    """
    root_nodes = [n for n, _ in roots]
    deps = _collect(root_nodes)
    needed = None
    if capture is not None and not accumulate_leaves:
        needed = _needed(root_nodes, {n for n, _ in capture})
    buffers: dict = {}
    for (node, nr), g in zip(roots, root_grads):
        if node is None:
            continue
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node.n_outputs
        buf[nr] = g if buf[nr] is None else buf[nr] + g
    ready = []
    for node in dict.fromkeys(n for n in root_nodes if n is not None):
        if deps.get(node, 0) == 0:
            heapq.heappush(ready, (-node._seq, id(node), node))
    captured = {}
    prev_enabled = _state.enabled
    _state.enabled = create_graph
    try:
        while ready:
            _, _, node = heapq.heappop(ready)
            grads = buffers.pop(node, None) or [None] * node.n_outputs
            grads = _pre_hooks(node, grads)
            if capture is not None:
                for nr, g in enumerate(grads):
                    key = (node, nr)
                    if key in capture:
                        captured[key] = g if key not in captured else captured[key] + g
            skip = (needed is not None and node not in needed) or (
                isinstance(node, AccumulateGrad) and not accumulate_leaves)
            if skip or all(g is None for g in grads):
                in_grads = [None] * len(node._edges)
            else:
                in_grads = node.apply(grads, create_graph)
                if node._post_hooks:
                    for hook in list(node._post_hooks.values()):
                        r = hook(tuple(in_grads), tuple(grads))
                        if r is not None:
                            in_grads = list(r)
                if _anomaly.enabled and _anomaly.check_nan:
                    _check_nan(node, in_grads)
                if not retain_graph and not isinstance(node, AccumulateGrad):
                    node._saved = None
                    node._out = None
            for (nxt, nr), g in zip(node._edges, in_grads):
                if nxt is None:
                    continue
                if g is not None:
                    buf = buffers.get(nxt)
                    if buf is None:
                        buf = buffers[nxt] = [None] * nxt.n_outputs
                    buf[nr] = g if buf[nr] is None else buf[nr] + g
                d = deps[nxt] - 1
                deps[nxt] = d
                if d == 0:
                    heapq.heappush(ready, (-nxt._seq, id(nxt), nxt))
    except Exception as e:
        if _anomaly.enabled and getattr(node, "_anomaly", None):
            import warnings

            warnings.warn(
                f"Error detected in {node.name()}. Traceback of forward call that caused the "
                f"error:\n{node._anomaly}", stacklevel=2)
        raise e
    finally:
        _state.enabled = prev_enabled
    return captured


def _pre_hooks(node: Node, grads: list) -> list:
    """Tensor hooks (per output) and node pre-hooks; also fills retained grads."""
    hooks = node._pre_hooks
    if hooks:
        for key, fn in list(hooks.values()):
            if key == "node":
                r = fn(tuple(grads))
                if r is not None:
                    grads = list(r)
            elif grads[key] is not None:
                r = fn(grads[key])
                if r is not None:
                    grads = list(grads)
                    grads[key] = r
    if node._retained:
        for nr, ref in node._retained:
            t = ref()
            g = grads[nr]
            if t is None or g is None:
                continue
            if t._grad is None:
                t._grad = g.detach().clone() if not _state.enabled else g
            else:
                t._grad = t._grad + g
    return grads


def _check_nan(node: Node, grads: list) -> None:
    for i, g in enumerate(grads):
        if g is not None and bool(g.isnan().any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


# --- public entry points -----------------------------------------------------

def _make_root_grads(outputs, grad_tensors, is_grads_batched=False):
    Tensor = T.Tensor
    out = []
    for i, o in enumerate(outputs):
        g = grad_tensors[i] if grad_tensors is not None else None
        if g is None:
            if not o._requires_grad:
                out.append(None)
                continue
            if o.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not o._dtype.is_floating_point and not o._dtype.is_complex:
                raise RuntimeError(
                    f"grad can be implicitly created only for real scalar outputs but got "
                    f"{o._dtype!r}"
                )
            from ..ops.creation import ones_like

            g = ones_like(o)
        elif not isinstance(g, Tensor):
            from ..ops.creation import tensor as make

            g = make(g, dtype=o._dtype)
        elif g._shape != o._shape and not is_grads_batched:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {T.Size(g._shape)} and "
                f"output[{i}] has a shape of {T.Size(o._shape)}."
            )
        out.append(g)
    return out


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, T.Tensor):
        return (x,)
    return tuple(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None) -> None:
    """Compute gradients of `tensors` and accumulate them into the leaves' `.grad`."""
    tensors = _as_tuple(tensors)
    grad_tensors = _as_tuple(grad_tensors if grad_tensors is not None else grad_variables)
    if retain_graph is None:
        retain_graph = create_graph
    for t in tensors:
        if not t._requires_grad:
            raise RuntimeError(
                "element 0 of tensors does not require grad and does not have a grad_fn"
            )
    grads = _make_root_grads(tensors, grad_tensors)
    from .graph import edge_of

    roots = [edge_of(t) for t in tensors]
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
        capture = {edge_of(t): None for t in inputs}
        captured = run(roots, grads, retain_graph, create_graph, capture, accumulate_leaves=False)
        for t in inputs:
            g = captured.get(edge_of(t))
            if g is not None:
                accumulate(t, g, create_graph) if t._grad_fn is None else _acc_nonleaf(t, g)
        return
    run(roots, grads, retain_graph, create_graph)


def _acc_nonleaf(t, g) -> None:
    t._grad = g if t._grad is None else t._grad + g


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False,
         materialize_grads=False):
    """Gradients of `outputs` with respect to `inputs`, returned rather than accumulated."""
    outputs = _as_tuple(outputs)
    single = isinstance(inputs, T.Tensor)
    inputs = _as_tuple(inputs)
    grad_outputs = _as_tuple(grad_outputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    if retain_graph is None:
        retain_graph = create_graph
    for t in inputs:
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    for o in outputs:
        if not o._requires_grad:
            raise RuntimeError(
                "element 0 of tensors does not require grad and does not have a grad_fn"
            )
    grads = _make_root_grads(outputs, grad_outputs)
    from .graph import edge_of

    roots = [edge_of(t) for t in outputs]
    capture = {edge_of(t): None for t in inputs}
    captured = run(roots, grads, retain_graph, create_graph, capture, accumulate_leaves=False)
    result = []
    for t in inputs:
        g = captured.get(edge_of(t))
        if g is None:
            if materialize_grads:
                from ..ops.creation import zeros_like

                g = zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(
                    "One of the differentiated Tensors appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior."
                )
        elif not create_graph:
            g = g.detach()
        result.append(g)
    del single
    return tuple(result)
