"""`torch.frobenius_norm` and `torch.nuclear_norm`: the matrix norms the torch namespace
kept from before `torch.linalg`, as thin forms of `norm` and `linalg.matrix_norm` with
their own argument rules (and, for the Frobenius norm, its own graph node name)."""

from __future__ import annotations

from .._dtype import SCALAR_TYPE_NAMES
from .._tensor import Tensor
from .registry import rename_node


def frobenius_norm(input: Tensor, dim, keepdim: bool = False, *, out=None) -> Tensor:
    """sqrt of the sum of squares over `dim` (at most two dims; () means all)."""
    from .stats import norm

    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {SCALAR_TYPE_NAMES[input.dtype.name]} instead.")
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions "
                           "instead.")
    result = norm(input, 2, dims if dims else None, keepdim, out=out)
    if result.grad_fn is not None:
        rename_node(result.grad_fn, "NormBackward1")  # (torch runs at::norm, not linalg's)
    return result


def nuclear_norm(input: Tensor, dim=None, keepdim: bool = False, *, out=None) -> Tensor:
    """The sum of singular values over the matrices of `dim` (the last two by default)."""
    from ..linalg.norms import matrix_norm

    if isinstance(dim, bool):
        dim, keepdim = None, dim  # nuclear_norm(input, keepdim)
    if dim is None:
        dim = (-2, -1)
    elif isinstance(dim, int):
        dim = (dim, dim)  # (the parser fills an int into both places of IntArrayRef[2])
    return matrix_norm(input, "nuc", tuple(dim), keepdim, out=out)


__all__ = ["frobenius_norm", "nuclear_norm"]

TENSOR_METHODS: dict = {}
