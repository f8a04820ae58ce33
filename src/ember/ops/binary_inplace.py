"""The in-place forms of the binary arithmetic and comparisons (`x.add_(y)`, `x += y`): the
operand made ready to combine into `self` (PyTorch's casting rules), then the same family
member as the out-of-place op (`binary.py`), written into `self`."""

from __future__ import annotations

from .. import _dtype as dt
from .._tensor import Tensor
from .._view import broadcast_shapes
from ._arg_parser_text import need_number, operand_error
from ._common import OperandTypeError, fit_scalar, is_scalar, type_name
from .binary import (
    _LOW16,
    _ROUNDED,
    _alpha_call,
    _check_rounded_div,
    _sub_bool_check,
    _widened,
    add_alpha_fn,
    add_fn,
    binary_p,
    compare_p,
    div_fn,
    div_wide_fn,
    eq,
    floor_divide_fn,
    ge,
    gt,
    le,
    lt,
    mul_fn,
    mul_wide_fn,
    ne,
    sub_alpha_fn,
    sub_fn,
    tensor_dtype,
)
from .power import _float_power_dtype, _negative_int_power, _pow_checks, _pow_fn
from .registry import apply_, check_overlap
from .sparse_tensor import SparseTensor


def inplace_dunder(fn):
    """`tensor <op>= other`: NotImplemented for an operand that is neither a tensor nor a
    number (as PyTorch: Python then rebinds to `tensor <op> other`, which a NumPy array
    answers through its own operator, wrapped back into a tensor)."""
    def op(self, other):
        if not isinstance(other, Tensor) and not is_scalar(other):
            return NotImplemented
        return fn(self, other)

    op.__name__ = f"__i{fn.__name__.rstrip('_')}__"
    return op


def inplace_operand(self: Tensor, other):
    """`other` ready to combine into `self` in place; RuntimeError if the result can't be cast."""
    check_overlap(self)
    if other.__class__ is Tensor and other._dtype is self._dtype:
        return other
    d = dt.result_type(self, other)
    if not dt.can_cast(d, self._dtype):
        raise RuntimeError(
            f"result type {type_name(d)} can't be cast to the desired output type "
            f"{type_name(self._dtype)}"
        )
    if isinstance(other, Tensor):
        # (to an integer `self`'s dtype too: a uint8 self and -2 divide as 254, as in PyTorch)
        if other._dtype is not d and (d is not self._dtype or d._kind < 2):
            other = other.to(d)
        return other
    if not is_scalar(other):
        raise OperandTypeError(f"expected a Tensor or a number, got {type(other).__name__}")
    return fit_scalar(other, d if d._kind >= self._dtype._kind else self._dtype)


def inplace_shape_check(self: Tensor, other, name: str) -> None:
    """What PyTorch checks of `self.<name>_(other)` before any dtype: that `other` is a tensor
    or a number (TypeError), and that the broadcast result has `self`'s shape."""
    check_overlap(self)
    if isinstance(other, Tensor):
        if other._shape != self._shape:
            shape = broadcast_shapes(self._shape, other._shape)
            if shape != self._shape:
                raise RuntimeError(f"output with shape {list(self._shape)} doesn't match the "
                                   f"broadcast shape {list(shape)}")
    elif not is_scalar(other):
        raise OperandTypeError(f"{name}_(): argument 'other' must be Tensor or Number, not "
                               f"{type(other).__name__}")


def add_(self: Tensor, other, *, alpha=1) -> Tensor:
    if alpha.__class__ is not int and alpha.__class__ is not float:
        need_number(alpha, "add_", "alpha")
    try:
        if other.__class__ is SparseTensor and not self.is_sparse:  # (a sparse gradient's step)
            return _add_sparse_into(self, other, alpha)
        _shape_into(self, other)
        if alpha != 1:
            return _alpha_call(add_alpha_fn, self, inplace_operand(self, other), alpha,
                               dt.result_type(self, other), inplace=True)
        return apply_(binary_p, self, inplace_operand(self, other), fn=add_fn)
    except OperandTypeError:
        raise operand_error("add_", (self, other), {"alpha": None if alpha == 1 else alpha},
                            method=True) from None


def _shape_into(self: Tensor, other) -> None:
    """PyTorch checks the shapes of `self.add_(other)` (and sub_ / mul_) before the dtypes:
    operands that do not broadcast fail as out of place, a broadcast larger than `self` with
    the in-place op's own message. (Equal shapes, the hot path, cost one comparison.)"""
    if other.__class__ is Tensor and other._shape != self._shape:
        inplace_shape_check(self, other, "")


def _add_sparse_into(self: Tensor, other: Tensor, alpha) -> Tensor:
    """A dense tensor plus a sparse COO one (a sparse gradient's optimizer step): each stored
    value times alpha added at its index in turn, duplicates one after another (PyTorch's
    loop over an uncoalesced tensor's entries)."""
    if tuple(self.shape) != tuple(other.shape):
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has "
                           f"size {list(self.shape)} while other has size {list(other.shape)} "
                           f"(FYI: dense-sparse addition does not currently support "
                           f"broadcasting)")
    values = other._values()
    if _fused_path(self, other, values):
        return _add_sparse_fused(self, other, values, alpha)
    if alpha != 1:
        values = values * alpha
    values, idx = values.to(self.dtype), other._indices()
    if idx.shape[0] == 1:  # (index_add: np.add.at's order, entry after entry)
        return self.index_add_(0, idx[0], values)
    return self.index_put_(tuple(idx), values, accumulate=True)


def _fused_path(self: Tensor, other: Tensor, values: Tensor) -> bool:
    """Whether PyTorch's CPU kernel adds each entry with a BLAS axpy (a fused multiply-add
    per element, entry after entry): for contiguous float32 operands whose sparse one has
    dense dims (a sparse embedding gradient) or is uncoalesced; a coalesced one without
    dense dims gets `r += alpha * v`, rounded twice, as the general path computes."""
    from .. import _grad_mode

    if self._dtype is not dt.float32 or values._dtype is not dt.float32:
        return False
    if _grad_mode.state.enabled and (self._requires_grad or other._requires_grad):
        return False
    nnz = other._nnz()
    coalesced = other.is_coalesced() or nnz == 1
    return (nnz > 0 and other.sparse_dim() > 0 and self.is_contiguous()
            and values.is_contiguous() and (other.dense_dim() > 0 or not coalesced))


def _add_sparse_fused(self: Tensor, other: Tensor, values: Tensor, alpha) -> Tensor:
    """`self += alpha * other` entry by entry, each element rounded once (PyTorch's axpy on
    an FMA CPU): exact float64 products and sums of float32 numbers, rounded to float32 after
    each entry, in rounds of distinct coordinates so duplicates follow their entry order."""
    import numpy as np

    from .._tensor import _wrap

    idx = other._indices()._array()
    vals = values._array().astype(np.float64)
    a = np.float64(np.float32(alpha))  # (PyTorch casts alpha to the values' type)
    lin = np.ravel_multi_index(tuple(idx), self._shape[:idx.shape[0]])
    uniq, first, inv = np.unique(lin, return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    order = np.argsort(inv, kind="stable")
    starts = np.searchsorted(inv[order], np.arange(len(uniq)))
    rank = np.empty(len(inv), np.int64)
    rank[order] = np.arange(len(inv)) - starts[inv[order]]
    coords = tuple(idx[:, first])
    # NOTE: a float64 sum rounded to float32 can differ from one fused rounding only when
    # it lands exactly between two float32 numbers (double rounding): not seen in practice.
    acc = self._array()[coords].astype(np.float64)
    for r in range(int(rank.max()) + 1):
        k = np.nonzero(rank == r)[0]
        acc[inv[k]] = (acc[inv[k]] + a * vals[k]).astype(np.float32)
    return self.index_put_(tuple(_wrap(np.ascontiguousarray(c)) for c in coords),
                           _wrap(acc.astype(np.float32)))


def sub_(self: Tensor, other, *, alpha=1) -> Tensor:
    if alpha.__class__ is not int and alpha.__class__ is not float:
        need_number(alpha, "sub_", "alpha")
    if not isinstance(other, Tensor) and not is_scalar(other):  # (checked before dtypes)
        raise operand_error("sub_", (self, other), method=True)
    if self._dtype is dt.bool_ or tensor_dtype(other) is dt.bool_ or isinstance(other, bool):
        _sub_bool_check(self, other)
    _shape_into(self, other)
    if alpha != 1:
        try:
            return _alpha_call(sub_alpha_fn, self, inplace_operand(self, other), alpha,
                               dt.result_type(self, other), inplace=True)
        except OperandTypeError:
            raise operand_error("sub_", (self, other), {"alpha": alpha}, method=True) from None
    return apply_(binary_p, self, inplace_operand(self, other), fn=sub_fn)


def mul_(self: Tensor, other) -> Tensor:
    if other.__class__ is SparseTensor and self.__class__ is Tensor:
        from .sparse_mul import dense_mul_

        return dense_mul_(self, other)
    try:
        _shape_into(self, other)
        b = inplace_operand(self, other)
        if self._dtype in _LOW16:
            _, b, fn = _widened(self, other, self, b, mul_fn, mul_wide_fn)
            return apply_(binary_p, self, b, fn=fn)
        return apply_(binary_p, self, b, fn=mul_fn)
    except OperandTypeError:
        raise operand_error("mul_", (self, other), None, method=True) from None


def div_(self: Tensor, other, *, rounding_mode=None) -> Tensor:
    if rounding_mode is not None and rounding_mode.__class__ is not str:
        raise operand_error("div_", (self, other), {"rounding_mode": rounding_mode},
                            "div_rounded", method=True)
    try:
        inplace_shape_check(self, other, "div")
        if rounding_mode is None:
            if self._dtype._kind < 2:
                raise RuntimeError(
                    f"result type {type_name(dt.get_default_dtype())} can't be cast to the desired "
                    f"output type {type_name(self._dtype)}"
                )
            b, fn = inplace_operand(self, other), div_fn
            if self._dtype in _LOW16:
                _, b, fn = _widened(self, other, self, b, div_fn, div_wide_fn)
            return apply_(binary_p, self, b, fn=fn)
        b = inplace_operand(self, other)
        _check_rounded_div(rounding_mode, dt.result_type(self, other), b, self)
        if self._dtype in _LOW16:
            _, b, _ = _widened(self, other, self, b, None, None)
        return apply_(binary_p, self, b, fn=_ROUNDED[rounding_mode])
    except OperandTypeError:
        raise operand_error("div_", (self, other), {"rounding_mode": rounding_mode},
                            method=True) from None


def true_divide_(self: Tensor, other) -> Tensor:
    if not (isinstance(other, Tensor) or is_scalar(other)):
        raise operand_error("true_divide_", (self, other), method=True)
    return div_(self, other)


def floor_divide_(self: Tensor, other) -> Tensor:
    try:
        inplace_shape_check(self, other, "floor_divide")
        b = inplace_operand(self, other)
        _check_rounded_div("floor", dt.result_type(self, other), b, self)
        if self._dtype in _LOW16:
            _, b, _ = _widened(self, other, self, b, None, None)
        return apply_(binary_p, self, b, fn=floor_divide_fn)
    except OperandTypeError:
        raise operand_error("floor_divide_", (self, other), None, method=True) from None


def pow_(self: Tensor, exponent) -> Tensor:
    try:
        inplace_shape_check(self, exponent, "pow")
        if self._dtype._kind < 2:  # (before the cast check: a bool self computes in int64)
            _negative_int_power(dt.int64 if self._dtype is dt.bool_ else self._dtype, exponent)
        b = inplace_operand(self, exponent)
        if self._dtype._kind < 2:
            _pow_checks(self, b, self._dtype)
        elif isinstance(b, Tensor) and b._dtype is not self._dtype:
            # computed in the common dtype, then written into self (NumPy has no bfloat16 **
            # int64 loop: an integer exponent takes self's dtype)
            b = b.to(dt.result_type(self, b))
        return apply_(binary_p, self, b, fn=_pow_fn(self, b))
    except OperandTypeError:
        raise operand_error("pow_", (self, exponent), None, method=True) from None


def _inplace_cmp(fn):
    op = fn.__name__

    def compare_(self: Tensor, other) -> Tensor:
        try:
            inplace_shape_check(self, other, op)
            fn(self, other)  # the same checks as out of place
        except OperandTypeError:
            raise operand_error(op + "_", (self, other), method=True) from None
        if isinstance(other, Tensor) and other._dtype is not self._dtype:
            other = other.to(dt.result_type(self, other))
        return apply_(compare_p, self, other, op=op)

    compare_.__name__ = op + "_"
    return compare_


eq_, ne_, lt_, le_, gt_, ge_ = (_inplace_cmp(f) for f in (eq, ne, lt, le, gt, ge))


def float_power_(self: Tensor, exponent) -> Tensor:
    target = _float_power_dtype(self, exponent)
    if self._dtype is not target:
        raise RuntimeError(f"the base given to float_power_ has dtype {type_name(self._dtype)} "
                           f"but the operation's result requires dtype {type_name(target)}")
    return pow_(self, exponent.to(target) if isinstance(exponent, Tensor) else exponent)


TENSOR_METHODS = {
    "add_": add_, "sub_": sub_, "subtract_": sub_, "mul_": mul_, "multiply_": mul_,
    "div_": div_, "divide_": div_, "true_divide_": true_divide_, "pow_": pow_,
    "floor_divide_": floor_divide_, "float_power_": float_power_, "eq_": eq_, "ne_": ne_,
    "lt_": lt_, "le_": le_, "gt_": gt_, "ge_": ge_, "not_equal_": ne_, "less_": lt_,
    "less_equal_": le_, "greater_": gt_, "greater_equal_": ge_,
    "__iadd__": inplace_dunder(add_), "__isub__": inplace_dunder(sub_),
    "__imul__": inplace_dunder(mul_), "__itruediv__": inplace_dunder(div_),
    "__ifloordiv__": inplace_dunder(floor_divide_), "__ipow__": inplace_dunder(pow_),
}

__all__: list = []
