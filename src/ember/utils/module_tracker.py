"""`ModuleTracker`: which modules are running now, in the forward and in the backward.

PyTorch's `torch.utils.module_tracker`: global module hooks add a module's name to
`parents` when its forward starts and take it out when it ends; gradient hooks on its
outputs put it back when the backward reaches them, and hooks on its inputs take it out
when their gradients are done. A module is named by its class (the outermost one seen) and
then by its path below that (`Net.fc1`), the names `get_flop_counts` is keyed by.

When a backward pass ends, `parents` is `{"Global"}` again (PyTorch queues a callback on
its engine for this; ember's engine runs one pass at a time in the caller's thread, so the
reset happens the first time `parents` is read after that pass).
"""

from __future__ import annotations

import weakref

from ..autograd import engine
from ..autograd.multi_grad_hook import register_multi_grad_hook
from ..nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook
from ._pytree import tree_flatten

__all__ = ["ModuleTracker"]


def _grad_tensors(tree) -> list:
    from .._tensor import Tensor

    leaves, _ = tree_flatten(tree)
    return [t for t in leaves if isinstance(t, Tensor) and t.requires_grad]


class ModuleTracker:
    """A context manager whose `parents` names every module running now (and "Global")."""

    def __init__(self) -> None:
        self._parents: set[str] = {"Global"}
        self._known: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._seen: weakref.WeakSet = weakref.WeakSet()
        self._bw_task = None  # the backward pass that added names, reset when it ends
        self._hooks: list = []
        self._handles: tuple = ()

    @property
    def parents(self) -> set[str]:
        """The fully qualified names of the modules running now, "Global" always among
        them."""
        task = self._bw_task
        if task is not None and task not in engine._tasks:
            self._parents = {"Global"}
            self._bw_task = None
        return self._parents

    @parents.setter
    def parents(self, value: set[str]) -> None:
        self._parents = value

    @property
    def is_bw(self) -> bool:
        """Whether a backward pass is running now."""
        return engine.current_graph_task() is not None

    def _name(self, mod) -> str:
        name = self._known.get(mod)
        if name is None:
            name = self._known[mod] = type(mod).__name__
        if mod not in self._seen:
            for child_name, child in mod.named_children():
                self._known[child] = f"{name}.{child_name}"
                self._name(child)
            self._seen.add(mod)
        return name

    def _enter_fn(self, name: str, is_bw: bool):
        def fn(*args) -> None:
            parents = self.parents
            if is_bw and self._bw_task is None:
                self._bw_task = engine.current_graph_task()
            parents.add(name)
        return fn

    def _exit_fn(self, name: str):
        def fn(*args) -> None:
            self.parents.discard(name)
        return fn

    def _pre_hook(self, mod, inputs) -> None:
        name = self._name(mod)
        self._enter_fn(name, False)()
        tensors = _grad_tensors(inputs)
        if tensors:
            self._hooks.append(register_multi_grad_hook(tensors, self._exit_fn(name)))

    def _post_hook(self, mod, inputs, output) -> None:
        name = self._name(mod)
        self._exit_fn(name)()
        tensors = _grad_tensors(output)
        if tensors:
            self._hooks.append(register_multi_grad_hook(tensors, self._enter_fn(name, True)))

    def __enter__(self) -> ModuleTracker:
        self._handles = (register_module_forward_pre_hook(self._pre_hook),
                         register_module_forward_hook(self._post_hook))
        return self

    def __exit__(self, *exc) -> None:
        for h in self._handles:
            h.remove()
        self._handles = ()
        for h in self._hooks:
            h.remove()
        self._hooks.clear()
