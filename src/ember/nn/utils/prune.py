"""Pruning: zeroing parts of a parameter through a mask, PyTorch's `torch.nn.utils.prune`.

Pruning `name` moves the parameter to `name_orig`, keeps a `name_mask` buffer of 0s and 1s,
and sets `name = name_orig * name_mask` as a plain attribute, recomputed by a forward
pre-hook (the pruning method itself) before every call. Pruning again combines the masks
through a `PruningContainer`, the new method choosing only among the entries still
unpruned. `remove` makes the pruned values the parameter for good.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

from ..._tensor import Tensor
from ...ops.creation import ones_like, zeros_like
from ...ops.random_ops import rand, rand_like
from .convert_parameters import parameters_to_vector

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured",
           "L1Unstructured", "RandomStructured", "LnStructured", "CustomFromMask", "identity",
           "random_unstructured", "l1_unstructured", "random_structured", "ln_structured",
           "global_unstructured", "custom_from_mask", "remove", "is_pruned"]


class BasePruningMethod(ABC):
    """A way of choosing a mask; also the forward pre-hook that reapplies it."""

    _tensor_name: str

    def __call__(self, module, inputs) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The new mask for `t`, given the mask already in place."""

    def apply_mask(self, module) -> Tensor:
        """`name_orig * name_mask` of `module`."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name: str, *args, importance_scores=None, **kwargs):
        """Prune `module.<name>` with a new `cls(*args, **kwargs)` (combined with any earlier
        pruning of it); entries are ranked by `importance_scores` (default: the values)."""
        method = _compose(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(
                    f"importance_scores should have the same shape as parameter {name} of "
                    f"{module}, got {importance_scores.shape} vs {orig.shape}")
        else:
            importance_scores = orig
        first = not isinstance(method, PruningContainer)
        if first:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first:  # (put the parameter back as it was)
                module.register_parameter(name, getattr(module, name + "_orig"))
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t: Tensor, default_mask: Tensor | None = None,
              importance_scores: Tensor | None = None) -> Tensor:
        """`t` with this method's mask applied (no module involved)."""
        if importance_scores is not None:
            if importance_scores.shape != t.shape:
                raise AssertionError("importance_scores should have the same shape as tensor "
                                     f"t, got {importance_scores.shape} vs {t.shape}")
        else:
            importance_scores = t
        default_mask = default_mask if default_mask is not None else ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module) -> None:
        """Make the pruned values `module.<name>`, a parameter again; drop orig and mask."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be "
                                 "removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _compose(cls, module, name: str, *args, **kwargs) -> BasePruningMethod:
    """The new method, joined to the hook already pruning `name` (which is taken off)."""
    old, keys = None, []
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            old = hook
            keys.append(k)
    if len(keys) > 1:
        raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} "
                             f"of module {module}. Use a PruningContainer.")
    for k in keys:
        del module._forward_pre_hooks[k]
    module._update_hooked()
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if isinstance(old, PruningContainer):
        old.add_pruning_method(method)
        return old
    if old is not None:
        container = PruningContainer(old)
        container.add_pruning_method(method)
        return container
    return method


class PruningContainer(BasePruningMethod):
    """The pruning methods applied one after another to one tensor."""

    def __init__(self, *args) -> None:
        self._pruning_methods: tuple = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method) -> None:
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found "
                             f"'{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The last method's mask, computed over the part of `t` still unpruned: the
        remaining entries (unstructured), the remaining channels (structured), or all."""
        method = self._pruning_methods[-1]
        mask = default_mask.to(dtype=t.dtype)
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            slc = default_mask == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to '
                                     "have the attribute `dim` defined.")
            n = t.dim()
            dim = method.dim + n if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {n}")
            keep = default_mask.sum(dim=[d for d in range(n) if d != dim]) != 0
            slc = tuple(keep if d == dim else slice(None) for d in range(n))
        elif kind == "global":
            slc = (slice(None),) * t.dim()
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        partial = method.compute_mask(t[slc], default_mask=default_mask[slc])
        mask[slc] = partial.to(dtype=mask.dtype)
        return mask


class Identity(BasePruningMethod):
    """Prunes nothing: the mask is all ones."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module, name: str):
        return super().apply(module, name)


def _check_amount(amount) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         "non-negative integer")


def _count(amount, size: int) -> int:
    """How many of `size` entries `amount` prunes (a count, or a fraction rounded)."""
    n = amount if isinstance(amount, numbers.Integral) else round(amount * size)
    if isinstance(n, numbers.Integral) and n > size:
        raise ValueError(f"amount={n} should be smaller than the number of parameters to "
                         f"prune={size}")
    return n


class _Unstructured(BasePruningMethod):
    """Prunes the `amount` entries that `_drop` picks from the flattened tensor."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount) -> None:
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        n = _count(self.amount, t.nelement())
        mask = default_mask.clone()
        if n != 0:
            mask.view(-1)[self._drop(t, n)] = 0
        return mask


class RandomUnstructured(_Unstructured):
    """Prunes `amount` entries chosen at random."""

    @staticmethod
    def _drop(t: Tensor, n: int) -> Tensor:
        return rand_like(t).view(-1).topk(n).indices

    @classmethod
    def apply(cls, module, name: str, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(_Unstructured):
    """Prunes the `amount` entries of smallest absolute value."""

    @staticmethod
    def _drop(t: Tensor, n: int) -> Tensor:
        return t.abs().view(-1).topk(n, largest=False).indices

    @classmethod
    def apply(cls, module, name: str, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


def _check_structured(t: Tensor, dim: int) -> None:
    if t.dim() <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. "
                         f"Found tensor of shape {t.shape} with {t.dim()} dims")
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _channel_mask(t: Tensor, dim: int, keep) -> Tensor:
    mask = zeros_like(t)
    mask[tuple(keep if d == dim % t.dim() else slice(None) for d in range(t.dim()))] = 1
    return mask


class _Structured(BasePruningMethod):
    """Prunes `amount` whole channels along `dim`: those `_kept` leaves out."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim: int = -1) -> None:
        _check_amount(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _check_structured(t, self.dim)
        size = t.shape[self.dim]
        n = _count(self.amount, size)
        if n == 0:
            return default_mask
        mask = _channel_mask(t, self.dim, self._kept(t, size, n))
        mask *= default_mask.to(dtype=mask.dtype)
        return mask


class RandomStructured(_Structured):
    """Prunes `amount` whole channels along `dim`, chosen at random."""

    def _kept(self, t: Tensor, size: int, n: int):
        prob = rand(size)
        return prob > prob.kthvalue(n).values

    @classmethod
    def apply(cls, module, name: str, amount, dim: int = -1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(_Structured):
    """Prunes the `amount` channels along `dim` of smallest `n`-norm."""

    def __init__(self, amount, n, dim: int = -1) -> None:
        super().__init__(amount, dim)
        self.n = n

    def _kept(self, t: Tensor, size: int, n: int):
        dims = [d for d in range(t.dim()) if d != self.dim % t.dim()]
        return t.norm(p=self.n, dim=dims).topk(size - n).indices

    @classmethod
    def apply(cls, module, name: str, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where a given mask is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match "
                                 f"self.mask shape {self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name: str, mask: Tensor):
        return super().apply(module, name, mask=mask)


def identity(module, name: str):
    """Prune nothing (but give `name` the orig / mask layout)."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name: str, amount):
    """Prune `amount` (a count, or a fraction) entries of `module.<name>` at random."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name: str, amount, importance_scores: Tensor | None = None):
    """Prune the `amount` entries of `module.<name>` of smallest |importance| (|value|)."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name: str, amount, dim: int):
    """Prune `amount` random channels of `module.<name>` along `dim`."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name: str, amount, n, dim: int,
                  importance_scores: Tensor | None = None):
    """Prune the `amount` channels along `dim` of smallest `n`-norm."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores: dict | None = None,
                        **kwargs) -> None:
    """Prune `(module, name)` pairs together: `pruning_method(**kwargs)` ranks all their
    entries at once (so layers lose different fractions)."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    parameters = list(parameters)
    scores = parameters_to_vector([importance_scores.get((m, name), getattr(m, name))
                                   for m, name in parameters])
    default_mask = parameters_to_vector([getattr(m, name + "_mask") if hasattr(m, name + "_mask")
                                         else ones_like(getattr(m, name))
                                         for m, name in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                        f"Found method {pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final = container.compute_mask(scores, default_mask)
    start = 0
    for m, name in parameters:
        param = getattr(m, name)
        custom_from_mask(m, name, mask=final[start:start + param.numel()].view_as(param))
        start += param.numel()


def custom_from_mask(module, name: str, mask: Tensor):
    """Prune `module.<name>` where `mask` is 0."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name: str):
    """Make the pruning of `module.<name>` permanent (a plain parameter again)."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            module._update_hooked()
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning "
                     "can be removed")


def is_pruned(module) -> bool:
    """Whether `module` or any module under it has a pruning hook."""
    for _, sub in module.named_modules():
        for hook in sub._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False
