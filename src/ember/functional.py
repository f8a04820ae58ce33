"""`torch.functional`: the module PyTorch's variadic and Python-level tensor functions live in.

Programs import from it (`from torch.functional import einsum`), so it re-exports ember's
functions under PyTorch's list; each name is the same object as `ember.<name>`. The one
function defined here is the deprecated `chain_matmul`, kept for old programs.
"""

from __future__ import annotations

# (the package's own names: `import ember.functional` always runs ember/__init__ first)
from . import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    block_diag,
    broadcast_shapes,
    broadcast_tensors,
    cartesian_prod,
    cdist,
    einsum,
    istft,
    lu,
    meshgrid,
    norm,
    split,
    stft,
    tensordot,
    unique,
    unique_consecutive,
    unravel_index,
)
from . import linalg as _linalg
from ._tensor import Tensor
from ._user_warnings import warn_at_user
from .linalg.lowrank import pca_lowrank, svd_lowrank
from .ops._arg_parser_text import tp_name

__all__ = [
    "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors",
    "cartesian_prod", "block_diag", "cdist", "chain_matmul", "einsum", "istft", "lu", "norm",
    "meshgrid", "pca_lowrank", "split", "stft", "svd_lowrank", "tensordot", "unique",
    "unique_consecutive", "unravel_index",
]

_DEPRECATED = ("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
               "release. Use torch.linalg.multi_dot instead, which accepts a list of two or "
               "more tensors rather than multiple parameters.")


def chain_matmul(*matrices: Tensor, out: Tensor | None = None) -> Tensor:
    """The product of two or more 2-D tensors (deprecated: `linalg.multi_dot` takes a list)."""
    warn_at_user(_DEPRECATED, once=True)  # (PyTorch warns once a process)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for i, m in enumerate(matrices):
        if not isinstance(m, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{tp_name(m)}")
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead.")
    if len(matrices) == 1:
        result = matrices[0].clone()
    else:
        result = _linalg.multi_dot(list(matrices))
    if out is None:
        return result
    out.resize_(result.shape).copy_(result)
    return out
