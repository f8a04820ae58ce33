"""The autograd's public entry points, `backward` and `grad`: their arguments checked in
PyTorch's order and words, the root gradients made (an implicit one for a scalar output,
batched ones for `is_grads_batched`), then the engine (engine.py `run`) walks the graph."""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np

from .. import _tensor as T
from .._core.dispatch import current_interpreter
from .._user_warnings import user_stacklevel
from . import grad_mode
from .engine import accumulate, run
from .graph import GradientEdge, edge_of, retain_grad

_state = grad_mode.state


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
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
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
            "to break the cycle and avoid the leak.", UserWarning, stacklevel=user_stacklevel())
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
    if isinstance(inputs, T.Tensor | GradientEdge):
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
            "torch.autograd.backward.", FutureWarning, stacklevel=user_stacklevel())
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
        if isinstance(t, GradientEdge):
            continue  # (a place in the graph: nothing to check)
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
    keys = [(t.node, t.output_nr) if isinstance(t, GradientEdge) else edge_of(t) for t in inputs]
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
