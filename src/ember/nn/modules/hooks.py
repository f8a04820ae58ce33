"""Hook plumbing for Module: removable handles and full backward hooks.

A full backward hook needs the gradients of a module's inputs and outputs at once.
The module's tensor inputs (and its outputs) are routed through one identity node
each; the output node's post-hook sees the output gradients, the input node's
post-hook sees the input gradients and calls `hook(module, grad_input, grad_output)`.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

from ..._tensor import Tensor
from ..._user_warnings import user_stacklevel, warn_at_user
from ...autograd import grad_mode
from ...autograd.function import Function
from ...autograd.graph import RemovableHandle  # noqa: F401  (re-exported: _state_dict uses it)

if TYPE_CHECKING:
    from .module import Module


_OUTPUT_ONLY_WARNING = (
    "Full backward hook is firing when gradients are computed with respect to module outputs "
    "since no inputs require gradients. See https://docs.pytorch.org/docs/main/generated/"
    "torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more details.")


# --- full backward hooks -----------------------------------------------------------------

class BackwardHookFunction(Function):
    """The identity on the tensors it is given, as one graph node that sees all their
    gradients at once (its hooks run a module's backward hooks). A custom Function, as
    PyTorch's: a node of the user's graph, not a primitive of ember's catalogue."""

    @staticmethod
    def forward(ctx, *args):
        # NOTE: grads are materialized, as in PyTorch: an input whose gradient never arrived
        # (the module ignores it) gets zeros, in grad_input and in its .grad. The output
        # node's post-hook hands on what actually arrived (None stays None).
        # (returned as-is: each output is a view of its input, as in PyTorch, so writing
        # one in place is refused as a custom Function's view)
        return args if len(args) > 1 else args[0]

    @staticmethod
    def backward(ctx, *grads):
        return grads if len(grads) > 1 else grads[0]


class _BackwardHook:
    """Routes a module's inputs and outputs through identity nodes to call backward hooks.

    The output node's post-hook sees the gradients that reached the outputs (running
    the backward pre-hooks, which may replace them) and passes them on in place of what
    the node computed; the input node's post-hook sees the gradients of the inputs and
    calls `hook(module, grad_input, grad_output)`.
    """

    def __init__(self, module: Module) -> None:
        self.module = module
        self.grad_outputs = None
        self.n_inputs = 0
        self.has_inputs = False
        self.input_ran = False

    def _wrap(self, values, on_node):
        items = values if isinstance(values, tuple) else (values,)
        idx = [i for i, v in enumerate(items) if isinstance(v, Tensor) and v.requires_grad]
        if not idx or not grad_mode.is_grad_enabled():
            return values, None
        outs = BackwardHookFunction.apply(*[items[i] for i in idx])
        if len(idx) == 1:
            outs = (outs,)
        new = list(items)
        for j, i in enumerate(idx):
            new[i] = outs[j]
        on_node(outs[0].grad_fn, idx, len(items))
        return (tuple(new) if isinstance(values, tuple) else new[0]), outs[0].grad_fn

    def setup_input(self, args: tuple) -> tuple:
        def on_node(node, idx, n):
            def post(grad_inputs, _grad_outputs):
                self.input_ran = True
                full = [None] * n
                for j, i in enumerate(idx):  # (what the identity node gave: materialized)
                    full[i] = grad_inputs[j]
                res = self._run_hooks(tuple(full))
                if res is None:
                    return None
                return tuple(res[i] for i in idx)

            node.register_hook(post)

        new_args, node = self._wrap(args, on_node)
        self.n_inputs = len(args)
        self.has_inputs = node is not None
        return new_args

    def setup_output(self, result):
        def on_node(node, idx, n):
            def post(_grad_inputs, grads):
                full = [None] * n
                for j, i in enumerate(idx):
                    full[i] = grads[j]
                full = tuple(full)
                for hook in self.module._get_backward_pre_hooks():
                    r = hook(self.module, full)
                    if r is not None:
                        full = tuple(r) if isinstance(r, (tuple, list)) else (r,)
                self.grad_outputs = full
                if not self.has_inputs:
                    self._run_output_only_hooks()
                return tuple(full[i] for i in idx)

            node.register_hook(post)

        new, _ = self._wrap(result, on_node)
        return new

    def _run_output_only_hooks(self) -> None:
        """No input needs a gradient: the hooks run when the outputs' gradients are known,
        with None for every grad_input, and may not replace them (as PyTorch, with its
        warning)."""
        warn_at_user(_OUTPUT_ONLY_WARNING)
        grad_inputs = (None,) * self.n_inputs
        for hook in self.module._get_backward_hooks():
            r = hook(self.module, grad_inputs, self.grad_outputs)
            if r is not None and not (isinstance(r, tuple) and all(g is None for g in r)):
                raise RuntimeError("Backward hook for Modules where no input requires gradient "
                                   "should always return None or None for all gradients.")

    def _run_hooks(self, grad_inputs: tuple):
        res = None
        for hook in self.module._get_backward_hooks():
            r = hook(self.module, grad_inputs, self.grad_outputs)
            if r is not None:
                if not isinstance(r, tuple):
                    r = (r,)
                if len(r) != len(grad_inputs):
                    raise RuntimeError(
                        f"Backward hook returned an invalid number of grad_input, got {len(r)}, "
                        f"but expected {len(grad_inputs)}"
                    )
                grad_inputs = r
                res = r
        return res


# --- the deprecated `register_backward_hook` -------------------------------------------------

_LEGACY = ("Using non-full backward hooks on a Module that does not {what} a single Tensor or "
           "a tuple of Tensors is deprecated and will be removed in future versions. This hook "
           "will be missing some of the grad_{part}. Please use register_full_backward_hook to "
           "get the documented behavior.")
_LEGACY_NODES = ("Using a non-full backward hook when {why} is deprecated and will be removed in "
                 "future versions. This hook will be missing some grad_{part}.")
_USE_FULL = " Please use register_full_backward_hook to get the documented behavior."


def attach_legacy_backward_hooks(module: Module, args: tuple, result, hooks: list) -> None:
    """PyTorch's non-full backward hooks: each becomes a post-hook of the one node that made
    the module's (first) output, so it sees that node's gradients, not the module's (the
    reason they are deprecated; the warnings say when the two differ, in PyTorch's words)."""
    var = result
    while not isinstance(var, Tensor):
        if isinstance(var, dict):
            var = next(v for v in var.values() if isinstance(v, Tensor))
        else:
            var = var[0]
    node = var.grad_fn
    if node is None:
        return
    for hook in hooks:
        node.register_hook(lambda gi, go, hook=hook: hook(module, gi, go))
    _warn_legacy(args, result, node)


def _warn_legacy(args: tuple, result, node) -> None:
    if isinstance(result, Tensor):
        result = (result,)
    elif not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
        warnings.warn(_LEGACY.format(what="return", part="output"), FutureWarning,
                      stacklevel=user_stacklevel())
        return
    if not all(isinstance(a, Tensor) for a in args):
        warnings.warn(_LEGACY.format(what="take as input", part="input"), FutureWarning,
                      stacklevel=user_stacklevel())
        return
    out_nodes = {r.grad_fn for r in result if r.grad_fn is not None}
    if not out_nodes or (len(out_nodes) == 1 and node not in out_nodes):
        msg = _LEGACY_NODES.format(why="outputs are nested in python data structure",
                                   part="output")
    elif len(out_nodes) > 1:
        msg = _LEGACY_NODES.format(why="outputs are generated by different autograd Nodes",
                                   part="output") + _USE_FULL
    elif {a.grad_fn for a in args if a.grad_fn is not None} != \
            {n for n, _ in node.next_functions}:
        msg = _LEGACY_NODES.format(why="the forward contains multiple autograd Nodes",
                                   part="input") + _USE_FULL
    else:
        return
    warnings.warn(msg, FutureWarning, stacklevel=user_stacklevel())
