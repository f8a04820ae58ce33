"""Flatten parameters into one vector and write a vector back into parameters."""

from __future__ import annotations

import ember as E

from ..._tensor import Tensor
from ..modules.module import _typename

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_device(param: Tensor, old):
    if old is not None and param.device != old:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")
    return param.device


def parameters_to_vector(parameters) -> Tensor:
    """All parameters, flattened and concatenated in iteration order."""
    device = None
    vec = []
    for p in parameters:
        device = _check_device(p, device)
        vec.append(p.view(-1))
    return E.cat(vec)


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Copy consecutive slices of `vec` into the parameters' data."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    device = None
    pointer = 0
    for p in parameters:
        device = _check_device(p, device)
        n = p.numel()
        p.data = vec[pointer:pointer + n].view_as(p).data
        pointer += n
