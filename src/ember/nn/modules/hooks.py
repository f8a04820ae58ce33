"""Hook plumbing for Module: removable handles and full backward hooks.

A full backward hook needs the gradients of a module's inputs and outputs at once.
The module's tensor inputs (and its outputs) are routed through one identity node
each; the output node's pre-hook sees the output gradients, the input node's
post-hook sees the input gradients and calls `hook(module, grad_input, grad_output)`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._tensor import Tensor
from ..._user_warnings import warn_at_user
from ...autograd import grad_mode
from ...autograd.function import Function
from ...autograd.graph import RemovableHandle

if TYPE_CHECKING:
    from .module import Module


_OUTPUT_ONLY_WARNING = (
    "Full backward hook is firing when gradients are computed with respect to module outputs "
    "since no inputs require gradients. See https://docs.pytorch.org/docs/main/generated/"
    "torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more details.")


class _ModuleHookHandle(RemovableHandle):
    """A handle that also refreshes the module's "has hooks" flag when removed."""

    def __init__(self, module: Module, store: dict, extras=()) -> None:
        super().__init__(store)
        self._module = module
        self._extras = extras

    def remove(self) -> None:
        super().remove()
        for e in self._extras:
            e.pop(self.id, None)
        self._module._update_hooked()


# --- full backward hooks -----------------------------------------------------------------

class BackwardHookFunction(Function):
    """The identity on the tensors it is given, as one graph node that sees all their
    gradients at once (its hooks run a module's backward hooks). A custom Function, as
    PyTorch's: a node of the user's graph, not a primitive of ember's catalogue."""

    @staticmethod
    def forward(ctx, *args):
        ctx.set_materialize_grads(False)
        outs = tuple(a.clone() for a in args)
        return outs if len(outs) > 1 else outs[0]

    @staticmethod
    def backward(ctx, *grads):
        return grads if len(grads) > 1 else grads[0]


class _BackwardHook:
    """Routes a module's inputs and outputs through identity nodes to call backward hooks.

    The output node's pre-hook sees the gradients of the outputs (running the
    backward pre-hooks, which may replace them); the input node's post-hook sees
    the gradients of the inputs and calls `hook(module, grad_input, grad_output)`.
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
            def post(grad_inputs, grad_outputs):
                self.input_ran = True
                full = [None] * n
                for j, i in enumerate(idx):
                    full[i] = grad_outputs[j]
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
            def pre(grads):
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

            node.register_prehook(pre)

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
