"""`torch._foreach_*`: one op over a list of tensors at a time (EMA updates, optimizers).

PyTorch's CPU build runs each of these as its per-tensor op, tensor by tensor (its fused
multi-tensor kernels are CUDA's), so each one here is that op applied along the list(s):
values, dtypes, promotion, in-place rules and per-tensor errors are the per-tensor op's.
What is the list op's own is checked here, in PyTorch's words: the lists' lengths, which
overload the second operand selects (a tensor list, a number, a list of numbers, a 0-dim
tensor), and the results: a tuple of new tensors, or the `self` list itself for `_` forms.
"""

from __future__ import annotations

from collections.abc import Callable

from .._tensor import Tensor
from ._common import is_scalar, type_name
from .binary_math import maximum_, minimum_
from .power import pow as _pow
from .stats import vector_norm

# the per-tensor op of each list op with a second operand, and the overloads it has:
# "list" (a tensor list, elementwise), "scalar", "scalars" (a number per tensor) and
# "tensor" (one 0-dim tensor for all; elsewhere a 0-dim tensor passes as a number)
_BINARY = {
    "add": ("add", ("list", "scalar", "scalars", "tensor")),
    "sub": ("sub", ("list", "scalar", "scalars")),
    "mul": ("mul", ("list", "scalar", "scalars", "tensor")),
    "div": ("div", ("list", "scalar", "scalars", "tensor")),
    "clamp_min": ("clamp_min", ("list", "scalar", "scalars")),
    "clamp_max": ("clamp_max", ("list", "scalar", "scalars")),
    "maximum": ("clamp_min", ("list", "scalar", "scalars")),
    "minimum": ("clamp_max", ("list", "scalar", "scalars")),
    "pow": ("pow", ("list", "scalar", "scalars")),
}
# with a list operand, maximum / minimum are the elementwise ops, not clamps (their in-place
# forms are no Tensor methods, so they are named here as functions)
_LIST_METHOD = {"maximum": "maximum", "minimum": "minimum"}
_LIST_INPLACE = {"maximum": maximum_, "minimum": minimum_}
_ALPHA = ("add", "sub")  # the ops whose list and tensor overloads take `alpha`

_UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1",
          "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal",
          "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc")


# --- argument checks ------------------------------------------------------------------------

def _arg_types(args: tuple, kwargs: dict) -> str:
    names = [type(a).__name__ for a in args]
    names += [f"{k}={type(v).__name__}" for k, v in kwargs.items() if v is not None]
    return ", ".join(names)


def _bad_combination(fname: str, args: tuple, kwargs: dict | None = None) -> TypeError:
    return TypeError(f"{fname}() received an invalid combination of arguments - got "
                     f"({_arg_types(args, kwargs or {})}), but expected one of:")


def _tensor_list(fname: str, arg, position: int = 0) -> list:
    """`arg` as a non-empty list of tensors, checked as PyTorch's parser checks it."""
    if not isinstance(arg, (list, tuple)):
        raise TypeError(f"{fname}(): argument 'self' (position {position + 1}) must be tuple "
                        f"of Tensors, not {type(arg).__name__}")
    for i, t in enumerate(arg):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument {position}, but got "
                            f"{type(t).__name__}")
    if position == 0 and not arg:
        raise RuntimeError("Tensor list must have at least one tensor.")
    return list(arg)


def _overloaded_list(fname: str, self, *args) -> list:
    """`self` of an op with several overloads: a wrong type matches none of them."""
    if not isinstance(self, (list, tuple)):
        raise _bad_combination(fname, (self, *args))
    return _tensor_list(fname, self)


def _same_length(self: list, other: list) -> list:
    if len(other) != len(self):
        raise RuntimeError(f"Tensor lists must have the same number of tensors, got "
                           f"{len(self)} and {len(other)}")
    return other


def _scalar_list(self: list, scalars) -> list:
    if len(scalars) != len(self):
        raise RuntimeError("Tensor list must have same number of elements as scalar list.")
    return list(scalars)


def _operands(fname: str, self: list, other, position: int = 1) -> tuple[str, list]:
    """Which overload `other` selects ("list", "scalar", "scalars" or "tensor") and its
    value for each tensor of `self`."""
    if isinstance(other, Tensor):
        return "tensor", [other] * len(self)
    if isinstance(other, (list, tuple)):
        if any(isinstance(o, Tensor) for o in other):
            return "list", _same_length(self, _tensor_list(fname, other, position))
        for i, s in enumerate(other):
            if not is_scalar(s):
                raise TypeError(f"expected Tensor as element {i} in argument {position}, but "
                                f"got {type(s).__name__}")
        return "scalars", _scalar_list(self, other)
    if is_scalar(other):
        return "scalar", [other] * len(self)
    raise _bad_combination(fname, (self, other))


def _done(self, results: list, inplace: bool):
    """The `_` forms hand back the list they updated; the others a tuple of results."""
    return self if inplace else tuple(results)


# --- ops with a second operand --------------------------------------------------------------

def _binary(name: str, inplace: bool) -> Callable:
    method, overloads = _BINARY[name]
    fname = f"_foreach_{name}{'_' if inplace else ''}"

    def op(self, positional=None, /, other=None, *, alpha=None, scalar=None, scalars=None):
        given = (positional, other, scalar, scalars)
        other = next((o for o in given if o is not None), None)
        tensors = _overloaded_list(fname, self, other)
        kind, others = _operands(fname, tensors, other)
        # NOTE: PyTorch's parser reads a 0-dim tensor as a number where the op has no tensor
        # overload, and for add given positionally without alpha (its number overload comes
        # first): then a float64 one does not promote an int or float32 list
        if kind == "tensor" and "tensor" not in overloads and other.dim() != 0:
            raise _bad_combination(fname, (self, other), {"alpha": alpha})
        if kind == "tensor" and other.dim() == 0 and ("tensor" not in overloads or (
                name == "add" and positional is not None and alpha is None)):
            kind, others = "scalar", [other.item()] * len(tensors)
        if kind == "tensor" and other.dim() != 0:
            raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {other.dim()} "
                               f"dimensions and {other.numel()} elements.")
        if alpha is not None and (name not in _ALPHA or kind in ("scalar", "scalars")):
            raise _bad_combination(fname, (self, other), {"alpha": alpha})
        fn = _LIST_METHOD.get(name, method) if kind == "list" else method
        kw = {} if alpha is None else {"alpha": alpha}
        if inplace and kind == "list" and name in _LIST_INPLACE:
            results = [_LIST_INPLACE[name](t, o) for t, o in zip(tensors, others)]
        else:
            results = [getattr(t, fn + ("_" if inplace else ""))(o, **kw)
                       for t, o in zip(tensors, others)]
        return _done(self, results, inplace)

    op.__name__ = op.__qualname__ = fname
    op.__doc__ = f"`{method}` of each tensor with a tensor, a number or a number per tensor."
    return op


def _pow_scalar_first(fname: str) -> Callable:
    """pow also takes a number first: number ** each tensor of the list."""
    binary = _binary("pow", False)

    def op(self, exponent=None):
        if is_scalar(self):
            tensors = _tensor_list(fname, exponent, 1)
            if not tensors:
                raise RuntimeError("Tensor list must have at least one tensor.")
            return tuple(_pow(self, t) for t in tensors)
        return binary(self, exponent)

    op.__name__ = op.__qualname__ = fname
    op.__doc__ = "Each tensor to a power, or a number to each tensor's power."
    return op


def _lerp(inplace: bool) -> Callable:
    fname = f"_foreach_lerp{'_' if inplace else ''}"

    def op(self, tensors1, weight=None, *, weights=None):
        weight = weight if weights is None else weights
        tensors = _overloaded_list(fname, self, tensors1, weight)
        ends = _same_length(tensors, _tensor_list(fname, tensors1, 1))
        kind, ws = _operands(fname, tensors, weight, 2)
        if kind == "tensor":  # (a 0-dim tensor is read as a number; no other tensor fits)
            if weight.dim() != 0:
                raise _bad_combination(fname, (self, tensors1, weight))
            ws = [weight.item()] * len(tensors)
        fn = "lerp_" if inplace else "lerp"
        results = [getattr(t, fn)(e, w) for t, e, w in zip(tensors, ends, ws)]
        return _done(self, results, inplace)

    op.__name__ = op.__qualname__ = fname
    op.__doc__ = "self + weight * (tensors1 - self), per tensor (one weight, or one each)."
    return op


def _addc(name: str, inplace: bool) -> Callable:
    fname = f"_foreach_{name}{'_' if inplace else ''}"

    def op(self, tensor1, tensor2, positional=None, /, *, value=None, scalars=None):
        tensors = _overloaded_list(fname, self, tensor1, tensor2)
        t1 = _same_length(tensors, _tensor_list(fname, tensor1, 1))
        t2 = _same_length(tensors, _tensor_list(fname, tensor2, 2))
        if isinstance(value, Tensor):  # (value= reads a 0-dim tensor as a number)
            value = value.item()
        values = next((v for v in (positional, scalars, value) if v is not None), 1)
        if isinstance(values, Tensor):  # a packed 1-dim tensor of one value per tensor
            if values.dim() != 1:
                raise RuntimeError("Expected packed scalar Tensor to be of dimension 1. Got "
                                   f"{values.dim()} instead.")
            if values.numel() != len(tensors):
                raise RuntimeError(f"Expected length of scalars to match input of length "
                                   f"{len(tensors)} but got {values.numel()} instead.")
            values = values.tolist()
        elif isinstance(values, (list, tuple)):
            values = _scalar_list(tensors, values)
        else:
            values = [values] * len(tensors)
        fn = name + ("_" if inplace else "")
        results = [getattr(t, fn)(a, b, value=v) for t, a, b, v in zip(tensors, t1, t2, values)]
        return _done(self, results, inplace)

    op.__name__ = op.__qualname__ = fname
    op.__doc__ = f"`{name}` per tensor, with one value or one value per tensor."
    return op


# --- ops of one list ------------------------------------------------------------------------

def _unary(name: str, inplace: bool) -> Callable:
    fname = f"_foreach_{name}{'_' if inplace else ''}"
    method = name + ("_" if inplace else "")

    def op(self):
        results = [getattr(t, method)() for t in _tensor_list(fname, self)]
        return _done(self, results, inplace)

    op.__name__ = op.__qualname__ = fname
    op.__doc__ = f"`{name}` of each tensor."
    return op


def _foreach_zero_(self):
    """Zero every tensor in place."""
    for t in _tensor_list("_foreach_zero_", self):
        t.zero_()
    return self


def _foreach_copy_(self, src, non_blocking: bool = False):
    """Copy each tensor of `src` into the matching tensor of `self`."""
    tensors = _tensor_list("_foreach_copy_", self)
    for t, s in zip(tensors, _same_length(tensors, _tensor_list("_foreach_copy_", src, 1))):
        t.copy_(s, non_blocking=non_blocking)
    return self


def _foreach_clone(self):
    """A copy of each tensor."""
    return tuple(t.clone() for t in _tensor_list("_foreach_clone", self))


def _foreach_norm(self, ord=2, dtype=None):
    """The vector norm of each tensor (all its elements), a 0-dim tensor each."""
    return tuple(vector_norm(t, ord, dtype=dtype) for t in _tensor_list("_foreach_norm", self))


def _foreach_powsum(self, ord=2, dtype=None):
    """sum(|x| ** ord) of each tensor: the norm before its root (0 ** 0 counts as 1)."""
    out = []
    for t in _tensor_list("_foreach_powsum", self):
        if t._dtype._kind < 2:
            raise NotImplementedError(
                f"\"powsum_cpu\" not implemented for '{type_name(t._dtype)}'")
        x = t if dtype is None else t.to(dtype)
        out.append(x.abs().pow(ord).sum())
    return tuple(out)


def _foreach_max(self):
    """The largest element of each tensor."""
    out = []
    for t in _tensor_list("_foreach_max", self):
        if t.numel() == 0:
            raise RuntimeError("_foreach_max cannot compute the maximum of an empty tensor; "
                               "max over zero elements is undefined.")
        out.append(t.max())
    return tuple(out)


def _foreach_mm(self, mat2):
    """The matrix product of each pair."""
    tensors = _tensor_list("_foreach_mm", self)
    mats = _tensor_list("_foreach_mm", mat2, 1)
    if len(mats) != len(tensors):
        raise RuntimeError("_foreach_mm: self and mat2 must have the same number of tensors")
    return tuple(a.mm(b) for a, b in zip(tensors, mats))


# --- the table bound into `ember` ----------------------------------------------------------
# (every name is `_foreach_<op>` and `_foreach_<op>_` for the ops named in the tables above)

_OPS: dict[str, Callable] = {}
for _name in _BINARY:
    _OPS[f"_foreach_{_name}"] = _binary(_name, False)
    _OPS[f"_foreach_{_name}_"] = _binary(_name, True)
_OPS["_foreach_pow"] = _pow_scalar_first("_foreach_pow")
for _name in _UNARY:
    _OPS[f"_foreach_{_name}"] = _unary(_name, False)
    _OPS[f"_foreach_{_name}_"] = _unary(_name, True)
for _inplace in (False, True):
    _OPS[f"_foreach_lerp{'_' if _inplace else ''}"] = _lerp(_inplace)
    for _name in ("addcmul", "addcdiv"):
        _OPS[f"_foreach_{_name}{'_' if _inplace else ''}"] = _addc(_name, _inplace)
for _fn in (_foreach_zero_, _foreach_copy_, _foreach_clone, _foreach_norm, _foreach_powsum,
            _foreach_max, _foreach_mm):
    _OPS[_fn.__name__] = _fn
globals().update(_OPS)
del _name, _inplace, _fn

TENSOR_METHODS: dict = {}

__all__ = sorted(_OPS)
