"""PyTorch's `out=` dtype checks, in each kernel family's own words.

Structured kernels (max(dim), sort, argmax, softmax...) cast nothing into `out=`: a float64
`out` for float32 values, or int32 indices, is an error rather than a silent cast. Older
kernels (cummax, logcumsumexp, amax, frexp) refuse the same with other wording; programs
print these messages, so each family keeps its own."""

from __future__ import annotations

from .. import _dtype as dt
from .._tensor import Tensor
from ._common import c_type_name, type_name, write_exact
from ._return_types import out_type


def _exact_namedtuple(result_cls, values, out):
    """A (values, indices)-style result whose `out=` tensors must have the results' dtypes.
    (Underscored: PyTorch's out= messages name the outermost public ember function.)"""
    if out is None:
        return result_cls(*values)
    return out_type(result_cls)(*write_exact(tuple(values), out))


def check_scalar_types(results, out) -> None:
    """The legacy kernels' check: "expected scalar_type Float but found Double" (`results`:
    the result tensors, or tensors of their dtypes)."""
    outs = out if isinstance(out, (tuple, list)) else (out,)
    results = results if isinstance(results, (tuple, list)) else (results,)
    for r, o in zip(results, outs):
        if isinstance(o, Tensor) and o._dtype is not r._dtype:
            raise RuntimeError(f"expected scalar_type {type_name(r._dtype)} but found "
                               f"{type_name(o._dtype)}")


def check_same_as_input(input: Tensor, out) -> None:
    """amax / amin: `out` must have the input's dtype."""
    if isinstance(out, Tensor) and out._dtype is not input._dtype:
        raise RuntimeError("Expected the dtype for input and out to match, but got "
                           f"{type_name(input._dtype)} for input's dtype and "
                           f"{type_name(out._dtype)} for out's dtype.")


def check_frexp_out(input: Tensor, out) -> None:
    """frexp: the mantissa has the input's dtype and the exponent is int32."""
    mantissa, exponent = out
    if mantissa._dtype is not input._dtype:
        raise RuntimeError(f"torch.frexp() expects mantissa to have dtype "
                           f"{c_type_name(input._dtype)} but got {c_type_name(mantissa._dtype)}")
    if exponent._dtype is not dt.int32:
        raise RuntimeError(f"torch.frexp() expects exponent to have int dtype but got "
                           f"{c_type_name(exponent._dtype)}")


def check_out_tuple(out, name: str, n: int = 2) -> None:
    """`out=` of an op with `n` results must be a tuple (or list) of `n` tensors: PyTorch's
    parser refuses anything else with a TypeError before the op runs."""
    if out is None:
        return
    if not isinstance(out, (tuple, list)):
        raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not "
                        f"{type(out).__name__}")
    if len(out) != n:
        raise TypeError(f"expected tuple of {n} elements but got {len(out)}")


def check_values_indices_out(input: Tensor, out, op: str, name: str | None = None) -> None:
    """A (values, indices) `out=` pair of kthvalue / mode / median / nanmedian (`name`, when
    it is not `op`): values in the input's dtype, indices int64, each refused in its
    kernel's own words and order."""
    if out is None:
        return
    check_out_tuple(out, name or op)
    values, indices = out
    v_bad = isinstance(values, Tensor) and values._dtype is not input._dtype
    i_bad = isinstance(indices, Tensor) and indices._dtype is not dt.int64
    if op == "median":  # (median and nanmedian: indices checked first)
        if i_bad:
            raise RuntimeError(f"Expected tensor for argument #1 'indices' to have scalar type "
                               f"Long; but got torch.{type_name(indices._dtype)}Tensor instead "
                               f"(while checking arguments for median)")
        if v_bad:
            raise RuntimeError(f"Expected tensor for 'values' to have the same type as tensor "
                               f"for argument #2 'self'; but type torch."
                               f"{type_name(values._dtype)}Tensor does not equal torch."
                               f"{type_name(input._dtype)}Tensor (while checking arguments for "
                               f"median)")
    elif op == "mode":
        for bad, t, want, what in ((v_bad, values, input._dtype, "values"),
                                   (i_bad, indices, dt.int64, "indices")):
            if bad:
                raise RuntimeError(f"expected scalar type '{type_name(want)}' but got "
                                   f"'{type_name(t._dtype)}' for {what} output")
    else:  # kthvalue
        if v_bad:
            raise RuntimeError("output values must be of same type as input")
        if i_bad:
            raise RuntimeError("output indices must be of scalar type Long")
