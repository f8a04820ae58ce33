"""Saved-tensor hooks: user functions that pack what backward keeps, and unpack it later.

`saved_tensors_hooks(pack, unpack)` is active while its `with` block runs: every tensor a
node saves in that block is replaced by `pack(tensor)`, and backward calls `unpack` on
that object each time it needs the tensor. `save_on_cpu` is the pair that keeps saved
tensors on the CPU; `allow_mutation_on_saved_tensors` the pair that lets a saved tensor be
changed in place before backward.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from .. import _tensor as T

# the active (pack, unpack) pairs, innermost last
_stack: list = []
_disabled: list = [None]  # the message of the innermost disable_saved_tensors_hooks, or None


class Packed:
    """What a node keeps in place of a tensor its hooks packed."""

    __slots__ = ("obj", "unpack", "_vc")

    def __init__(self, obj: Any, unpack: Callable) -> None:
        self.obj = obj
        self.unpack = unpack
        self._vc = None  # (written by an in-place op that shares its counter; not checked)

    def get(self) -> Any:
        t = self.unpack(self.obj)
        if not isinstance(t, T.Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but "
                            f"got result of type {type(t).__name__}")
        return t


class saved_tensors_hooks:
    """Context manager: saved tensors go through `pack_hook` and come back through
    `unpack_hook`."""

    def __init__(self, pack_hook: Callable[[Any], Any], unpack_hook: Callable[[Any], Any]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> saved_tensors_hooks:
        if _disabled[-1] is not None:
            raise RuntimeError(_disabled[-1])
        _stack.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc) -> None:
        _stack.pop()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU and moved back to their device for backward."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack(t):
            return (t.device, t.cpu())

        def unpack(packed):
            device, t = packed
            return t.to(device)

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Context manager (also a decorator): entering `saved_tensors_hooks` inside it raises
    RuntimeError(error_message); so does entering it while such hooks are active."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        if _stack:
            raise RuntimeError(self.error_message)
        _disabled.append(self.error_message)

    def __exit__(self, *exc) -> None:
        _disabled.pop()

    def __call__(self, fn: Callable) -> Callable:
        def wrapped(*args, **kwargs):
            with disable_saved_tensors_hooks(self.error_message):
                return fn(*args, **kwargs)

        return wrapped


class _AllowMutationOnSavedContext:
    """What `allow_mutation_on_saved_tensors` yields: the tensors saved in its block (with
    their versions and copies), cleared when the block ends."""

    def __init__(self) -> None:
        self.saved: list = []

    def clear(self) -> None:
        self.saved.clear()


_mutation_ctx: list = [None]  # the active allow_mutation_on_saved_tensors context, or None
_OUTSIDE = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' contextin "
            "which the graph was originally recorded.")  # (PyTorch's words, its missing space)


@contextlib.contextmanager
def allow_mutation_on_saved_tensors() -> Iterator[_AllowMutationOnSavedContext]:
    """Tensors saved for backward in this block may be changed in place before backward,
    which then reads the values they had when saved. Run the backward inside the block too.

    NOTE: PyTorch copies a saved tensor when an in-place op is about to change it; here each
    is copied when saved (more memory, the same values), and backward reads the copy once the
    tensor's version has moved on."""
    if _mutation_ctx[0] is not None:
        raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
    ctx = _AllowMutationOnSavedContext()

    def pack(t):
        entry = (t, t._version, t.detach().clone())
        ctx.saved.append(entry)
        return entry

    def unpack(entry):
        if _mutation_ctx[0] is not ctx or not ctx.saved:
            raise AssertionError(_OUTSIDE)
        t, version, copy = entry
        return t if t._version == version else copy

    _mutation_ctx[0] = ctx
    try:
        with saved_tensors_hooks(pack, unpack):
            yield ctx
    finally:
        ctx.clear()
        _mutation_ctx[0] = None


def active() -> bool:
    return bool(_stack)


def pack(items: tuple) -> tuple:
    """`items` with every tensor replaced by what the innermost pack hook makes of it."""
    pack_hook, unpack_hook = _stack[-1]
    out = []
    for t in items:
        if isinstance(t, T.Tensor):
            obj = pack_hook(t)
            t = Packed(obj, unpack_hook)
        out.append(t)
    return tuple(out)


def unpack(items):
    """`items` (a tuple, or a single entry) with each packed entry unpacked."""
    if items.__class__ is tuple:
        return tuple(p.get() if p.__class__ is Packed else p for p in items)
    return items.get() if items.__class__ is Packed else items
