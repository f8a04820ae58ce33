"""Public functions named as they are published: PyTorch's `torch.arccos`, `Tensor.float` and
`F.relu` are separate functions with those names, where ember often publishes one function
under two names (`arccos = acos`) or a factory's closure (`float = _as(float32)`). The name
shows in reprs, in `__name__`-keyed tables (torch.fx names a node by it) and in messages.

`name_as_published` gives each such public function a copy of its own with the public name:
the same code, globals, defaults and closure (a call costs nothing more), other attributes
shared."""

from __future__ import annotations

import types


def _renamed(fn: types.FunctionType, name: str, owner: str | None) -> types.FunctionType:
    copy = types.FunctionType(fn.__code__, fn.__globals__, name, fn.__defaults__,
                              fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__dict__.update(fn.__dict__)
    copy.__doc__, copy.__module__, copy.__annotations__ = \
        fn.__doc__, fn.__module__, fn.__annotations__
    if owner is None:  # (a module's function: where it was defined, unless made by a factory)
        owner = fn.__qualname__.rpartition(".")[0]
        owner = None if "<" in owner else owner
    copy.__qualname__ = f"{owner}.{name}" if owner else name
    return copy


def name_as_published(owner, names: dict | None = None, own: tuple = ()) -> None:
    """Rename (as copies) the public functions of `owner` (a module's globals or a class)
    whose `__name__` is not the name they are published under, or `names[name]` where
    PyTorch's own function carries another (`F.logsigmoid` is `log_sigmoid`). The functions
    named in `own`, which ember shares with another namespace where PyTorch has two
    functions (`F.celu` and `torch.celu`), get a copy of this module's."""
    space = owner if isinstance(owner, dict) else vars(owner)
    cls = None if isinstance(owner, dict) else owner.__qualname__
    names = names or {}
    for name, obj in list(space.items()):
        if name.startswith("_") or type(obj) is not types.FunctionType:
            continue
        want = names.get(name, name)
        if name in own:
            owner[name] = _renamed(obj, want, None)
            owner[name].__module__ = owner["__name__"]
        elif obj.__name__ != want:
            if cls is None:
                owner[name] = _renamed(obj, want, None)
            else:
                setattr(owner, name, _renamed(obj, want, cls))
