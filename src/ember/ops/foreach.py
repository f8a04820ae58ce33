"""`torch._foreach_*`: one op over a list of tensors at a time (EMA updates, optimizers).

PyTorch's CPU build runs each of these as its per-tensor op, tensor by tensor (its fused
multi-tensor kernels are CUDA's), so each one here is that op applied along the list(s):
values, dtypes, promotion, in-place rules and per-tensor errors are the per-tensor op's.
What is the list op's own is checked here, in PyTorch's words: the lists' lengths, which
overload the second operand selects (a tensor list, a number, a list of numbers, a 0-dim
tensor), and the results: a tuple of new tensors, or the `self` list itself for `_` forms;
under autograd, one node for the whole list, named per overload (`foreach_graph`).
"""

from __future__ import annotations

from collections.abc import Callable

from .._tensor import Tensor
from ._arg_parser_text import invalid_combination, wrong_type
from ._common import is_scalar, type_name
from .binary_math import maximum_, minimum_
from .foreach_graph import list_node, node_name, rename_inplace, wants_graph
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

# the overloads PyTorch's parser lists, in its order, when a call fits none of them
_L, _S, _N = "tuple of Tensors self", "tuple of Scalars scalars", "Number scalar"
_ONE_LIST = (f"({_L}, {_N})", f"({_L}, {_S})", f"({_L}, tuple of Tensors other)")
_MUL = (f"({_L}, {_S})", f"({_L}, Tensor other)", f"({_L}, tuple of Tensors other)",
        f"({_L}, {_N})")
_T12 = f"{_L}, tuple of Tensors tensor1, tuple of Tensors tensor2"
_ADDC = (f"({_T12}, tuple of Scalars scalars)", f"({_T12}, Tensor scalars)",
         f"({_T12}, Number value = 1)")
_LERP = tuple(f"({_L}, tuple of Tensors tensors1, {w})" for w in (
    "Number weight", "tuple of Scalars weight", "tuple of Tensors weights"))
_SIGNATURES = {
    "add": (f"({_L}, {_N})", f"({_L}, {_S})", f"({_L}, Tensor other, *, Number alpha = 1)",
            f"({_L}, tuple of Tensors other, *, Number alpha = 1)"),
    "sub": (f"({_L}, {_N})", f"({_L}, {_S})",
            f"({_L}, tuple of Tensors other, *, Number alpha = 1)"),
    "mul": _MUL, "div": _MUL,
    **dict.fromkeys(("clamp_min", "clamp_max", "maximum", "minimum"), _ONE_LIST),
    "pow": ("(Number self, tuple of Tensors exponent)", f"({_L}, Number exponent)",
            f"({_L}, tuple of Scalars exponent)", f"({_L}, tuple of Tensors exponent)"),
    "lerp": _LERP, "addcmul": _ADDC, "addcdiv": _ADDC,
}
# NOTE: the parser's note under each overload marks every argument as the wrong type
# (`(!list of [Tensor]!, !str!)`), a list of tensors and a fitting number too
_NONE_FIT = {"Tensor": (), "tuple": (), "Number": ()}
_NOARG = object()  # an argument not passed (None is one a caller may pass)


def _bad_combination(fname: str, args: tuple, kwargs: dict | None = None) -> TypeError:
    """The parser's TypeError for a call of list op `fname` that fits none of its
    overloads, listing them (arguments given as None are left out, as never passed)."""
    kwargs = {k: v for k, v in (kwargs or {}).items() if v is not None}
    args = tuple(a for a in args if a is not _NOARG)
    return invalid_combination(fname, _SIGNATURES[fname[9:].rstrip("_")], args, kwargs,
                               _NONE_FIT)


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


def _overloaded_list(fname: str, self, *args, **kwargs) -> list:
    """`self` of an op with several overloads: a wrong type matches none of them."""
    if not isinstance(self, (list, tuple)):
        raise _bad_combination(fname, (self, *args), kwargs)
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
    """Which overload `other` selects ("list", "scalar", "scalars" or "tensor"; "" for none)
    and its value for each tensor of `self`."""
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
    return "", []  # (no overload takes it: the caller raises, naming the call's arguments)


def _graphed(results: list, op: str, kind: str, *inputs) -> tuple:
    """The results of an out-of-place list op, as the outputs of one node named for `op`
    and its overload `kind` when a tensor of `inputs` (lists, or one tensor) needs grad."""
    flat = []
    for x in inputs:
        if isinstance(x, Tensor):
            flat.append(x)
        else:
            flat.extend(x)
    if not wants_graph(flat):
        return tuple(results)
    return list_node(node_name(op, kind), flat, results, f"_foreach_{op}")


# --- ops with a second operand --------------------------------------------------------------

def _binary(name: str, inplace: bool) -> Callable:
    method, overloads = _BINARY[name]
    fname = f"_foreach_{name}{'_' if inplace else ''}"

    def op(self=_NOARG, positional=_NOARG, /, *more, other=None, alpha=None, scalar=None,
           scalars=None, **unknown):
        given = (positional, other, scalar, scalars)
        operand = next((o for o in given if o is not None and o is not _NOARG), None)
        if operand is None or unknown or more or sum(
                o is not None and o is not _NOARG for o in given) > 1:
            raise _bad_combination(fname, (self, positional, *more), {
                "other": other, "alpha": alpha, "scalar": scalar, "scalars": scalars,
                **unknown})
        called = (self, *((positional,) if positional is not _NOARG else ()))
        kw = {"other": other, "scalar": scalar, "scalars": scalars, "alpha": alpha}
        other = operand
        tensors = _overloaded_list(fname, self, *called[1:], **kw)
        if alpha is not None and isinstance(other, (list, tuple)) and other \
                and not any(isinstance(o, Tensor) for o in other):
            # (alpha leaves only the tensor overloads: a list of numbers fails as a list of
            # tensors)
            raise TypeError(f"expected Tensor as element 0 in argument 1, but got "
                            f"{type(other[0]).__name__}")
        kind, others = _operands(fname, tensors, other)
        if not kind:
            raise _bad_combination(fname, called, kw)
        # NOTE: PyTorch's parser reads a 0-dim tensor as a number where the op has no tensor
        # overload, and for add given positionally without alpha (its number overload comes
        # first): then a float64 one does not promote an int or float32 list
        if kind == "tensor" and "tensor" not in overloads and other.dim() != 0:
            raise _bad_combination(fname, called, kw)
        if kind == "tensor" and other.dim() == 0 and ("tensor" not in overloads or (
                name == "add" and positional is not _NOARG and alpha is None)):
            kind, others = "scalar", [other.item()] * len(tensors)
        if kind == "tensor" and other.dim() != 0:
            raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {other.dim()} "
                               f"dimensions and {other.numel()} elements.")
        if alpha is not None and (name not in _ALPHA or kind in ("scalar", "scalars")):
            raise _bad_combination(fname, called, kw)
        fn = _LIST_METHOD.get(name, method) if kind == "list" else method
        kw = {} if alpha is None else {"alpha": alpha}
        if inplace and kind == "list" and name in _LIST_INPLACE:
            results = [_LIST_INPLACE[name](t, o) for t, o in zip(tensors, others)]
        else:
            results = [getattr(t, fn + ("_" if inplace else ""))(o, **kw)
                       for t, o in zip(tensors, others)]
        if inplace:
            rename_inplace(name, kind, results)
            return self
        if name in _LIST_METHOD and kind != "list" and wants_graph(tensors):
            # NOTE: a number's maximum / minimum has clamp's values but maximum's derivative,
            # which splits a tie in half (clamp gives it all to self)
            results = [getattr(t, name)(t.new_full((), o)) if t._requires_grad else r
                       for t, o, r in zip(tensors, others, results)]
        return _graphed(results, name, kind, tensors, *(
            (others,) if kind == "list" else (other,) if kind == "tensor" else ()))

    op.__name__ = op.__qualname__ = fname
    op.__doc__ = f"`{method}` of each tensor with a tensor, a number or a number per tensor."
    return op


def _pow_scalar_first(fname: str) -> Callable:
    """pow also takes a number first: number ** each tensor of the list."""
    binary = _binary("pow", False)

    def op(self=_NOARG, exponent=_NOARG, /, *more, **kwargs):
        if "exponent" in kwargs and exponent is _NOARG:
            exponent = kwargs.pop("exponent")
        if is_scalar(self) and not more and not kwargs:
            tensors = _tensor_list(fname, exponent, 1)
            if not tensors:
                raise RuntimeError("Tensor list must have at least one tensor.")
            return _graphed([_pow(self, t) for t in tensors], "pow", "number_first", tensors)
        return binary(self, exponent, *more, **kwargs)

    op.__name__ = op.__qualname__ = fname
    op.__doc__ = "Each tensor to a power, or a number to each tensor's power."
    return op


def _lerp(inplace: bool) -> Callable:
    fname = f"_foreach_lerp{'_' if inplace else ''}"

    def op(self, tensors1, weight=_NOARG, *, weights=None):
        called = (self, tensors1, weight)
        weight = weight if weights is None else weights
        tensors = _overloaded_list(fname, *called, weights=weights)
        ends = _same_length(tensors, _tensor_list(fname, tensors1, 1))
        kind, ws = _operands(fname, tensors, weight, 2)
        if not kind or kind == "tensor" and weight.dim() != 0:
            # (a 0-dim tensor is read as a number; no other tensor fits)
            raise _bad_combination(fname, called, {"weights": weights})
        if kind == "tensor":
            ws = [weight.item()] * len(tensors)
        fn = "lerp_" if inplace else "lerp"
        results = [getattr(t, fn)(e, w) for t, e, w in zip(tensors, ends, ws)]
        if inplace:
            return self
        return _graphed(results, "lerp", kind, tensors, ends, *((ws,) if kind == "list" else ()))

    op.__name__ = op.__qualname__ = fname
    op.__doc__ = "self + weight * (tensors1 - self), per tensor (one weight, or one each)."
    return op


def _addc(name: str, inplace: bool) -> Callable:
    fname = f"_foreach_{name}{'_' if inplace else ''}"

    def op(self, tensor1, tensor2, positional=_NOARG, /, *, value=None, scalars=None):
        called = (self, tensor1, tensor2, positional)
        given = {"value": value, "scalars": scalars}
        if positional is _NOARG and value is None and scalars is None:
            tensors = _tensor_list(fname, self)  # (one overload takes three arguments)
        else:
            tensors = _overloaded_list(fname, *called, **given)
        t1 = _same_length(tensors, _tensor_list(fname, tensor1, 1))
        t2 = _same_length(tensors, _tensor_list(fname, tensor2, 2))
        if isinstance(value, Tensor):  # (value= reads a 0-dim tensor as a number)
            value = value.item()
        values = next((v for v in (positional, scalars, value)
                       if v is not None and v is not _NOARG), 1)
        if not (is_scalar(values) or isinstance(values, (Tensor, list, tuple))):
            raise _bad_combination(fname, called, given)
        kind = "tensor" if isinstance(values, Tensor) else \
            "scalars" if isinstance(values, (list, tuple)) else "scalar"
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
        return self if inplace else _graphed(results, name, kind, tensors, t1, t2)

    op.__name__ = op.__qualname__ = fname
    op.__doc__ = f"`{name}` per tensor, with one value or one value per tensor."
    return op


# --- ops of one list ------------------------------------------------------------------------

def _unary(name: str, inplace: bool) -> Callable:
    fname = f"_foreach_{name}{'_' if inplace else ''}"
    method = name + ("_" if inplace else "")

    def op(self):
        tensors = _tensor_list(fname, self)
        results = [getattr(t, method)() for t in tensors]
        return self if inplace else _graphed(results, name, "", tensors)

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
    tensors = _tensor_list("_foreach_clone", self)
    return _graphed([t.clone() for t in tensors], "clone", "", tensors)


def _foreach_norm(self, ord=2, dtype=None):
    """The vector norm of each tensor (all its elements), a 0-dim tensor each."""
    tensors = _tensor_list("_foreach_norm", self)
    if not is_scalar(ord):
        raise wrong_type("_foreach_norm", "ord", 2, "Number", ord)
    if dtype is not None and not isinstance(dtype, type(tensors[0].dtype)):
        raise TypeError(f"_foreach_norm(): argument 'dtype' (position 3) must be torch.dtype, "
                        f"not {type(dtype).__name__}")
    return _graphed([vector_norm(t, ord, dtype=dtype) for t in tensors], "norm", "", tensors)


def _foreach_powsum(self, ord=2, dtype=None):
    """sum(|x| ** ord) of each tensor: the norm before its root (0 ** 0 counts as 1)."""
    out = []
    for t in _tensor_list("_foreach_powsum", self):
        if t._dtype._kind < 2:
            raise NotImplementedError(
                f"\"powsum_cpu\" not implemented for '{type_name(t._dtype)}'")
        x = t if dtype is None else t.to(dtype)
        out.append(x.abs().pow(ord).sum())
    return _graphed(out, "powsum", "", self)


def _foreach_max(self):
    """The largest element of each tensor."""
    out = []
    for t in _tensor_list("_foreach_max", self):
        if t.numel() == 0:
            raise RuntimeError("_foreach_max cannot compute the maximum of an empty tensor; "
                               "max over zero elements is undefined.")
        out.append(t.max())
    return _graphed(out, "max", "", self)


def _foreach_mm(self, mat2):
    """The matrix product of each pair."""
    tensors = _tensor_list("_foreach_mm", self)
    mats = _tensor_list("_foreach_mm", mat2, 1)
    if len(mats) != len(tensors):
        raise RuntimeError("_foreach_mm: self and mat2 must have the same number of tensors")
    return _graphed([a.mm(b) for a, b in zip(tensors, mats)], "mm", "", tensors, mats)


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
