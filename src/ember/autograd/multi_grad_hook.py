"""`register_multi_grad_hook`: one hook over the gradients of several tensors.

Each tensor gets an ordinary tensor hook; they share a buffer per backward pass. In
mode "all" the user's hook runs once every tensor that this pass reaches has its
gradient (the others are None); in mode "any" it runs on the first gradient of each pass.
As in PyTorch, the pass's roots are not counted among the tensors it reaches: a root's
gradient alone fires the hook for what has arrived so far, and a hook over roots only
never runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from . import engine
from .graph import accumulate_node


class _MultiHandle:
    """Removes the hook from every tensor at once."""

    def __init__(self, handles: tuple) -> None:
        self.handles = handles

    def remove(self) -> None:
        for h in self.handles:
            h.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def register_multi_grad_hook(tensors: Sequence, fn: Callable, *, mode: str = "all"):
    """Call `fn` with the gradients of `tensors` ("all") or with the first of them ("any")."""
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    if mode == "any":
        ran: set = set()

        def any_hook(grad):
            task = engine.current_graph_task()
            if task is not None and task.id in ran:
                return
            if task is not None:
                ran.add(task.id)
            fn(grad)

        return _MultiHandle(tuple(t.register_hook(any_hook) for t in tensors if t.requires_grad))

    nodes = [t.grad_fn if t.grad_fn is not None else accumulate_node(t) for t in tensors]
    state: dict = {}  # task id -> [gradients so far, how many arrived, how many expected]

    def hook_for(i: int):
        def inner(grad):
            task = engine.current_graph_task()
            key = None if task is None else task.id
            entry = state.get(key)
            if entry is None:
                # (as PyTorch's engine, a root of the pass is not a node it "will execute":
                # a hook over a root's gradient alone never runs)
                expected = len(nodes) if task is None else \
                    sum(1 for n in nodes if task.will_execute(n) and n not in task.roots)
                entry = state[key] = [[None] * len(tensors), 0, expected]
            entry[0][i] = grad
            entry[1] += 1
            if entry[1] == entry[2]:
                del state[key]
                fn(tuple(entry[0]))

        return inner

    return _MultiHandle(tuple(t.register_hook(hook_for(i)) for i, t in enumerate(tensors)
                              if t.requires_grad))
