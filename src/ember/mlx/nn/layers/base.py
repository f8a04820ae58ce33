"""`nn.Module`: MLX's module, a dict of its members.

A module keeps its arrays, submodules, and lists or dicts of them as dict entries (so
`module["weight"]` and `module.weight` are the same thing); any other attribute is a
plain Python attribute. Public arrays anywhere in those entries are the parameters;
names starting with `_` are constants. `parameters()` returns them as a nested tree
of dicts and lists, `update(tree)` writes such a tree back, and `freeze()` marks
members that `trainable_parameters()` (and so `nn.value_and_grad`) leaves out.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Callable
from typing import Any

from ... import core as mx
from ...utils import tree_flatten, tree_unflatten

_STATE = ("_no_grad", "_training")


class Module(dict):
    """The base class of every layer and model (see the module docstring)."""

    __call__: Callable

    def __init__(self) -> None:
        self._no_grad: set = set()
        self._training = True

    # -- members: arrays and containers are dict entries, anything else an attribute ---------
    def __getattr__(self, key: str):
        value = self.get(key, None)
        if value is not None:
            return value
        if key in _STATE:
            # NOTE: MLX leaks "no attribute '_no_grad'" here (mlx #1393); name the fix.
            raise AttributeError(
                f"{type(self).__name__} has no module state: its __init__ must call "
                "super().__init__() before setting members.")
        return super().__getattribute__(key)

    def __setattr__(self, key: str, val: Any) -> None:
        if isinstance(val, mx.array | dict | list | tuple):
            if key not in self and hasattr(self, key):
                delattr(self, key)
            self[key] = val
        else:
            super().__setattr__(key, val)
            self.pop(key, None)

    def __delattr__(self, key: str) -> None:
        if self.get(key, None) is not None:
            del self[key]
        else:
            super().__delattr__(key)

    @property
    def training(self) -> bool:
        """True in training mode (see `train`)."""
        return self._training

    @property
    def state(self) -> Module:
        """The module itself: every member, parameters included, by reference (what
        `mx.compile(inputs=..., outputs=...)` is given to follow the model)."""
        return self

    # -- printing -------------------------------------------------------------------------
    def _extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        children = tree_flatten(self.children(), is_leaf=self.is_module)
        text = f"{type(self).__name__}({self._extra_repr()}"
        for k, v in children:
            text += "\n" + textwrap.indent(f"({k}): {v!r}", "  ")
        return text + ("\n)" if children else ")")

    # -- filters ---------------------------------------------------------------------------
    @staticmethod
    def is_module(value) -> bool:
        return isinstance(value, Module)

    @staticmethod
    def valid_child_filter(module: Module, key: str, value) -> bool:
        return isinstance(value, dict | list)

    @staticmethod
    def valid_parameter_filter(module: Module, key: str, value) -> bool:
        return isinstance(value, dict | list | mx.array) and not key.startswith("_")

    @staticmethod
    def trainable_parameter_filter(module: Module, key: str, value) -> bool:
        return Module.valid_parameter_filter(module, key, value) and key not in module._no_grad

    def filter_and_map(self, filter_fn: Callable, map_fn: Callable | None = None,
                       is_leaf_fn: Callable | None = None) -> dict:
        """The members kept by `filter_fn(module, key, value)`, recursively, as a tree;
        leaves (by `is_leaf_fn`, default: anything but modules, dicts and lists) pass
        through `map_fn`. Inside lists and dicts the key is the dotted path from the
        owning module ("layers.0")."""
        map_fn = map_fn or (lambda x: x)
        is_leaf_fn = is_leaf_fn or (lambda m, k, v: not isinstance(v, Module | dict | list))
        return {k: _unwrap(self, k, v, filter_fn, map_fn, is_leaf_fn)
                for k, v in self.items() if filter_fn(self, k, v)}

    def parameters(self) -> dict:
        """Every public array of the module and its submodules, as a nested tree."""
        return self.filter_and_map(self.valid_parameter_filter)

    def trainable_parameters(self) -> dict:
        """The parameters that are not frozen."""
        return self.filter_and_map(self.trainable_parameter_filter)

    def children(self) -> dict:
        """The direct submodules (inside lists and dicts too)."""
        return self.filter_and_map(self.valid_child_filter,
                                   is_leaf_fn=lambda m, k, v: isinstance(v, Module))

    def leaf_modules(self) -> dict:
        """The submodules that hold no submodule themselves, as a tree."""
        def is_leaf(m, k, v):
            return isinstance(v, Module) and not tree_flatten(v.children())

        return self.filter_and_map(self.valid_child_filter, is_leaf_fn=is_leaf)

    # -- writing parameters and submodules --------------------------------------------------
    def update(self, parameters: dict, strict: bool = True) -> Module:
        """Write a (partial) tree of parameters into the module. With `strict`, a key the
        module does not have, or a non-array where it holds an array, is a ValueError
        (shapes are not checked, as in MLX)."""
        _update(self, parameters, strict)
        return self

    def update_modules(self, modules: dict, strict: bool = True) -> Module:
        """Replace submodules by a (partial) tree of new ones, as `update` does arrays."""
        _update_modules(self, modules, strict)
        return self

    def apply(self, map_fn: Callable, filter_fn: Callable | None = None) -> Module:
        """Replace each parameter (or each member `filter_fn` keeps) by `map_fn(it)`."""
        self.update(self.filter_and_map(filter_fn or Module.valid_parameter_filter, map_fn))
        return self

    def set_dtype(self, dtype, predicate: Callable | None = lambda d: mx.issubdtype(
            d, mx.floating)) -> None:
        """Cast the parameters whose dtype `predicate` accepts (by default the floating
        ones) to `dtype`."""
        keep = predicate or (lambda d: True)
        self.apply(lambda x: x.astype(dtype) if keep(x.dtype) else x)

    # -- walking submodules ------------------------------------------------------------------
    def apply_to_modules(self, apply_fn: Callable[[str, Module], Any]) -> Module:
        """Call `apply_fn(path, module)` on this module ("") and every submodule
        ("layers.0.linear"), depth first from the last child, as MLX does."""
        stack = [("", self)]
        while stack:
            path, mod = stack.pop()
            apply_fn(path, mod)
            stack.extend(tree_flatten(mod.children(), prefix="." + path if path else "",
                                      is_leaf=self.is_module))
        return self

    def modules(self) -> list:
        """This module and all its submodules."""
        out: list = []
        self.apply_to_modules(lambda _, m: out.append(m))
        return out

    def named_modules(self) -> list:
        """`(path, module)` for this module and all its submodules."""
        out: list = []
        self.apply_to_modules(lambda k, m: out.append((k, m)))
        return out

    # -- freezing ----------------------------------------------------------------------------
    def _validate_keys(self, keys, strict: bool) -> list:
        keys = keys if isinstance(keys, list) else [keys]
        if strict:
            for k in keys:
                if k not in self:
                    raise KeyError(f"Module doesn't contain member {k}.")
        return keys

    def _validate_keys_recursive(self, keys) -> None:
        keys = keys if isinstance(keys, list) else [keys]
        mods = self.modules()
        for k in keys:
            if not any(k in m for m in mods):
                raise KeyError(f"Module doesn't contain member {k}.")

    def freeze(self, *, recurse: bool = True, keys: str | list | None = None,
               strict: bool = False) -> Module:
        """Leave parameters out of `trainable_parameters`: all of them, or the members
        named in `keys` (e.g. "bias"), in this module and (with `recurse`) below it."""
        def freeze_one(m, check):
            names = keys
            if names is None:
                own = m.filter_and_map(lambda m, k, v: not isinstance(v, Module)
                                       and m.valid_parameter_filter(m, k, v))
                names = [k for k, _ in tree_flatten(own)]
            m._no_grad.update(m._validate_keys(names, check))

        return self._each_module(freeze_one, recurse, keys, strict)

    def unfreeze(self, *, recurse: bool = True, keys: str | list | None = None,
                 strict: bool = False) -> Module:
        """Undo `freeze` for all parameters or for the members named in `keys`."""
        def unfreeze_one(m, check):
            if keys is None:
                m._no_grad.clear()
            else:
                m._no_grad.difference_update(m._validate_keys(keys, check))

        return self._each_module(unfreeze_one, recurse, keys, strict)

    def _each_module(self, fn: Callable, recurse: bool, keys, strict: bool) -> Module:
        """`fn(module, check_keys)` on this module, or (with `recurse`) on every module
        below it too; with `strict`, `keys` must name a member somewhere (checked once
        over the tree when recursing, as MLX does)."""
        check = strict
        if recurse:
            if strict and keys is not None:
                self._validate_keys_recursive(keys)
                check = False
            self.apply_to_modules(lambda _, m: fn(m, check))
        else:
            fn(self, check)
        return self

    # -- modes -------------------------------------------------------------------------------
    def _set_training_mode(self, mode: bool) -> None:
        self._training = mode

    def train(self, mode: bool = True) -> Module:
        """Put this module and every submodule in training (or, `mode=False`, eval) mode."""
        self.apply_to_modules(lambda _, m: m._set_training_mode(mode))
        return self

    def eval(self) -> Module:
        """Evaluation mode: `train(False)` (Dropout passes through, BatchNorm uses its
        running statistics)."""
        return self.train(False)

    # -- files -------------------------------------------------------------------------------
    def load_weights(self, file_or_weights, strict: bool = True) -> Module:
        """Load parameters from a `.npz` / `.safetensors` file, a list of
        `(path, array)` or a dict of them. With `strict`, the names and shapes must be exactly the
        model's; without it, only the entries the model has are loaded."""
        weights = file_or_weights
        if isinstance(weights, str | os.PathLike):
            weights = list(mx.load(os.fspath(weights)).items())
        if strict:
            new = dict(weights)
            current = tree_flatten(self.parameters(), destination={})
            if extras := new.keys() - current.keys():
                raise ValueError(f"Received {len(extras)} parameters not in model: \n"
                                 + ",\n".join(sorted(extras)) + ".")
            if missing := current.keys() - new.keys():
                raise ValueError(f"Missing {len(missing)} parameters: \n"
                                 + ",\n".join(sorted(missing)) + ".")
            for k, v in current.items():
                if not isinstance(new[k], mx.array):
                    raise ValueError(f"Expected mx.array but received {type(new[k])} for "
                                     f"parameter {k}")
                if new[k].shape != v.shape:
                    raise ValueError(f"Expected shape {v.shape} but received shape "
                                     f"{new[k].shape} for parameter {k}")
        if len(weights) != 0:  # (a dict of flat paths unflattens as the list of its items)
            flat = weights if isinstance(weights, dict) else list(weights)
            self.update(tree_unflatten(flat), strict=False)
        return self

    def save_weights(self, file: str) -> None:
        """Write the parameters, by flat path, to a `.npz` or `.safetensors` file."""
        file = os.fspath(file)
        flat = tree_flatten(self.parameters(), destination={})
        if file.endswith(".npz"):
            mx.savez(file, **flat)
        elif file.endswith(".safetensors"):
            mx.save_safetensors(file, flat)
        else:
            raise ValueError(f"Unsupported file extension for {file}. Use '.npz' or "
                             "'.safetensors'.")


def _unwrap(module: Module, key: str, value, filter_fn, map_fn, is_leaf_fn):
    if is_leaf_fn(module, key, value):
        return map_fn(value)
    if isinstance(value, Module):
        return {k: _unwrap(value, k, v, filter_fn, map_fn, is_leaf_fn)
                for k, v in value.items() if filter_fn(value, k, v)}
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            path = f"{key}.{k}"
            out[k] = (_unwrap(module, path, v, filter_fn, map_fn, is_leaf_fn)
                      if filter_fn(module, path, v) else {})
        return out
    if isinstance(value, list):
        return [_unwrap(module, f"{key}.{i}", v, filter_fn, map_fn, is_leaf_fn)
                if filter_fn(module, f"{key}.{i}", v) else {} for i, v in enumerate(value)]
    raise RuntimeError("Unexpected leaf found while traversing the module")


def _invalid(value) -> ValueError:
    return ValueError(f"Received invalid type: {type(value).__name__}.")


def _slots(dst, new, strict: bool, what: str) -> list:
    """The (key, new value) pairs of tree `new` that `dst` has places for; with `strict`,
    a key or index `dst` lacks, or a leaf where `dst` has a subtree, raises as MLX."""
    if isinstance(new, dict):
        return [(k, new[k]) for k in new if k in dst or _missing(dst, k, strict, what)]
    if isinstance(new, list):
        return [(i, v) for i, v in enumerate(new) if i < len(dst) or _out_of(dst, i, strict)]
    if strict:
        raise _invalid(new)
    return []


def _update(dst, new, strict: bool) -> None:
    """Write tree `new` into `dst` (a module, dict or list) where `dst` holds arrays."""
    for k, v in _slots(dst, new, strict, "parameter"):
        current = dst[k]
        if isinstance(current, mx.array):
            if strict and not isinstance(v, mx.array):
                raise _invalid(v)
            dst[k] = v
        else:
            _update(current, v, strict)


def _update_modules(dst, new, strict: bool) -> None:
    """Write tree `new` into `dst` where `dst` holds modules."""
    for k, v in _slots(dst, new, strict, "sub-module"):
        current = dst[k]
        if isinstance(current, Module) and isinstance(v, Module):
            dst[k] = v
        elif isinstance(current, dict | list):
            _update_modules(current, v, strict)
        elif strict and v != {}:
            raise _invalid(v)


def _missing(dst, key, strict: bool, what: str) -> bool:
    if strict:
        raise ValueError(f'Module does not have {what} named "{key}".')
    return False


def _out_of(dst, i: int, strict: bool) -> bool:
    if strict:
        raise ValueError(f"List index {i} is out of bounds for destination of length "
                         f"{len(dst)}.")
    return False
