"""MLX's argument checks for its products (`matmul`, `addmm`, `tensordot`), in MLX's order
and with its messages: ember's core would raise PyTorch's (`mat1 and mat2 shapes cannot
be multiplied ...`) or NumPy's, and would accept what MLX refuses."""

from __future__ import annotations

from . import _dtypes as D
from ._dtypes import Dtype
from ._errors import check_broadcast
from ._indexing import shape_text


def as_matrices(a_shape: tuple, b_shape: tuple) -> tuple[tuple, tuple]:
    """The shapes MLX multiplies: a vector `a` as one row (1, k), a vector `b` as one
    column (k, 1)."""
    a_shape, b_shape = tuple(a_shape), tuple(b_shape)
    return (((1, *a_shape) if len(a_shape) == 1 else a_shape),
            ((*b_shape, 1) if len(b_shape) == 1 else b_shape))


def check_operands(op: str, a_shape: tuple, b_shape: tuple) -> tuple[tuple, tuple]:
    """The first checks of `op` ("matmul" or "addmm"): no 0-d operand, and `a`'s last
    axis as long as `b`'s second to last. Returns the shapes as matrices."""
    if not a_shape or not b_shape:
        raise ValueError(f"[{op}] Got 0 dimension input. Inputs must have at least one "
                         "dimension.")
    a_shape, b_shape = as_matrices(a_shape, b_shape)
    if a_shape[-1] != b_shape[-2]:
        raise ValueError(f"[{op}] Last dimension of first input with shape "
                         f"{shape_text(a_shape)} must match second to last dimension of "
                         f"second input with shape {shape_text(b_shape)}.")
    return a_shape, b_shape


def batch_shape(a_shape: tuple, b_shape: tuple) -> tuple:
    """The broadcast of two matrices' batch axes (MLX's error where they do not), then
    the product's rows and columns."""
    a_batch, b_batch = a_shape[:-2], b_shape[:-2]
    check_broadcast(a_batch, b_batch)
    n = max(len(a_batch), len(b_batch))
    a_batch = (1,) * (n - len(a_batch)) + a_batch
    b_batch = (1,) * (n - len(b_batch)) + b_batch
    batch = tuple(y if x == 1 else x for x, y in zip(a_batch, b_batch, strict=True))
    return (*batch, a_shape[-2], b_shape[-1])


def addmm_dtype(c: Dtype, a: Dtype, b: Dtype) -> Dtype:
    """The type `addmm` computes in: the three operands' promotion, which must be inexact
    (integer `a` and `b` are fine beside a float `c`; complex passes, whatever the message
    says)."""
    dt = D.promote_types(D.promote_types(c, a), b)
    if dt.kind not in "fc":
        raise ValueError(f"[addmm] Only real floating point types are supported but {c.name}, "
                         f"{a.name} and {b.name} were provided which results in {dt.name}, "
                         "which is not a real floating point type.")
    return dt


def check_addmm_bias(c_shape: tuple, out_shape: tuple) -> None:
    """`c` must broadcast to the product's shape without adding axes to it."""
    check_broadcast(tuple(c_shape), tuple(out_shape))
    if len(c_shape) > len(out_shape) or any(
            x != 1 and y == 1 for x, y in zip(reversed(c_shape), reversed(out_shape))):
        raise ValueError("[addmm] input c must broadcast to the output shape")


def tensordot_axes(axes, a_shape: tuple, b_shape: tuple) -> tuple[list, list]:
    """`tensordot`'s `axes` (a count of trailing / leading axes, or two lists) as the two
    lists of contracted axes, checked as MLX checks them."""
    if isinstance(axes, int):
        if axes < 0:
            raise ValueError("[tensordot] axis must be greater or equal to 0.")
        if axes > len(a_shape) or axes > len(b_shape):
            raise ValueError("[tensordot] axis must be less than the number of dimensions "
                             "of a and b.")
        first = list(range(len(a_shape) - axes, len(a_shape)))
        second = list(range(axes))
    else:
        if len(axes) != 2:
            raise ValueError("[tensordot] axes must be a list of two lists.")
        first, second = (list(x) if not isinstance(x, int) else [x] for x in axes)
        if len(first) != len(second):
            raise ValueError("[tensordot] axes must have the same size.")
    if any(not -len(a_shape) <= i < len(a_shape) for i in first) or \
            any(not -len(b_shape) <= j < len(b_shape) for j in second):
        raise IndexError("SmallVector out of range.")  # (MLX's container, unchecked)
    if any(a_shape[i] != b_shape[j] for i, j in zip(first, second)):
        raise ValueError("[tensordot] a and b must have the same shape on the contracted "
                         "axes.")
    return first, second
