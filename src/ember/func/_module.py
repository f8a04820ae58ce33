"""Calling a module with other tensors in place of its parameters and buffers.

`functional_call(model, {"fc.weight": w, ...}, args)` runs `model(*args)` as if those
tensors were its state, then puts the module back as it was: the function transforms
need a model to be a function of its weights.
"""

from __future__ import annotations

from contextlib import contextmanager

from .._tensor import Tensor
from ..nn.modules.module import Module
from ..ops.join import stack


def _owner(module: Module, name: str, value) -> tuple[Module, str]:
    """The submodule holding `name` and the name's last part, with PyTorch's refusals (in
    its order): a path through a missing attribute or a non-module, then a value that is
    not a tensor (or None), then an empty name."""
    *path, leaf = name.split(".")
    for i, p in enumerate(path):
        try:
            sub = getattr(module, p)
        except AttributeError as exc:
            raise AttributeError(f"{module._get_name()} has no attribute `{p}`") from exc
        if not isinstance(sub, Module):
            raise TypeError(f"submodule `{'.'.join(path[:i + 1])}`: {sub} is not an instance "
                            "of torch.nn.Module")
        module = sub
    if value is not None and not isinstance(value, Tensor):
        raise TypeError(f"{value} is not an instance of torch.Tensor")
    if leaf == "":
        raise KeyError('tensor name can\'t be empty string ""')
    return module, leaf


def _slot(module: Module, leaf: str) -> dict | None:
    if leaf in module._parameters:
        return module._parameters
    if leaf in module._buffers:
        return module._buffers
    return None


@contextmanager
def _swapped(module: Module, tensors: dict, *, tie_weights: bool, strict: bool,
             write_back: dict | None = None):
    """`module` holding `tensors` in place of its state for the `with` block. On the way
    out, each key of `write_back` gets the tensor the module then holds under that name (a
    forward that reassigns a buffer, `self.steps = self.steps + 1`, updates the caller's
    dict, as PyTorch's does), and the module gets its own tensors back. (`strict` checks
    the names after a tied entry's name has been given its twins, as PyTorch does.)"""
    state = dict(module.named_parameters(remove_duplicate=False))
    state.update(module.named_buffers(remove_duplicate=False))
    tensors = dict(tensors)
    if tie_weights:  # a name given for one of several tied entries serves them all
        by_id: dict = {}
        for name, t in state.items():
            by_id.setdefault(id(t), []).append(name)
        for names in by_id.values():
            given = [n for n in names if n in tensors]
            if len(given) > 1 and len({id(tensors[n]) for n in given}) > 1:
                raise ValueError(f"functional_call got multiple values for keys {given}, "
                                 "which are tied. Consider using tie_weights=False")
            if given:
                for n in names:
                    tensors.setdefault(n, tensors[given[0]])
    if strict:
        missing = sorted(set(state) - set(tensors))
        unexpected = sorted(set(tensors) - set(state))
        if missing or unexpected:
            parts = []
            if unexpected:
                parts.append("Unexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected))
            if missing:
                parts.append("Missing key(s): " + ", ".join(f"'{k}'" for k in missing))
            raise RuntimeError("Error(s) in reparametrizing for " + type(module).__name__ +
                               ":\n\t" + ".\n\t".join(parts) + ".")
    saved = []
    try:
        for name, t in tensors.items():
            mod, leaf = _owner(module, name, t)
            slot = _slot(mod, leaf)
            if slot is None:
                old = getattr(mod, leaf, None)
                if old is not None and not isinstance(old, Tensor):
                    raise TypeError(f"attribute `{leaf}`: {old} is not an instance of "
                                    "torch.Tensor")
                saved.append((mod, leaf, None, mod.__dict__.get(leaf, _ABSENT)))
                object.__setattr__(mod, leaf, t)
            else:
                saved.append((mod, leaf, slot, slot[leaf]))
                slot[leaf] = t
        yield
    finally:
        if write_back is not None:
            held = {name: (slot.get(leaf) if slot is not None else getattr(mod, leaf, None))
                    for name, (mod, leaf, slot, _) in zip(tensors, saved)}
            write_back.update({k: held[k] for k in write_back if k in held})
        for mod, leaf, slot, old in reversed(saved):
            if slot is not None:
                slot[leaf] = old
            elif old is _ABSENT:
                mod.__dict__.pop(leaf, None)
            else:
                mod.__dict__[leaf] = old


_ABSENT = object()


def functional_call(module: Module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """`module(*args, **kwargs)` with the named tensors in place of its parameters and
    buffers (one dict, or a sequence of dicts with distinct keys). A tensor the forward
    assigns to one of those names is written back into a single dict given (a sequence's
    dicts are merged into a new one first, so they are left as they were, as in PyTorch)."""
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, dict):
        merged = dict(dicts)
    else:
        if not all(isinstance(d, dict) for d in dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        counts: dict = {}
        for d in dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:  # (every repeated key, listed, as PyTorch words it)
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             "functional call is ambiguous")
        merged = {k: v for d in dicts for k, v in d.items()}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, merged, tie_weights=tie_weights, strict=strict,
                  write_back=dicts if isinstance(dicts, dict) else None):
        return module(*args, **(kwargs or {}))


def stack_module_state(models) -> tuple[dict, dict]:
    """`(params, buffers)`: each model's parameters and buffers stacked along a new first
    axis, by name (the models must share one structure). Stacked parameters are new leaves
    that require grad where the originals did."""
    if len(models) == 0:  # (a sized sequence, as PyTorch asks: not a generator)
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/"
                           "eval mode.")
    first = type(models[0])
    if not all(type(m) is first for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    all_buffers = [dict(m.named_buffers()) for m in models]
    params = {k: _stacked_leaf([d[k] for d in all_params], k) for k in all_params[0]}
    buffers = {k: _stacked_leaf([d[k] for d in all_buffers], k) for k in all_buffers[0]}
    return params, buffers


def _stacked_leaf(tensors: list, name: str):
    """The models' tensors of one name stacked: a new leaf that requires grad when they all
    do; a mix of frozen and trainable is refused, in PyTorch's words."""
    flags = {t.requires_grad for t in tensors}
    if len(flags) > 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    out = stack(tensors)
    return out.detach().requires_grad_() if True in flags else out
