"""`grid_sample` and `affine_grid`: warping images by a sampling grid (spatial transformers).

`grid_sample` checks its string options and binds `ember.ops.sampling`'s primitives;
`affine_grid` is a composite: a constant base grid of normalised pixel centres
times the transposed affine matrices, written out term by term with elementwise ops so
that it rounds as torch does; its gradient comes from theirs.
"""

from __future__ import annotations

import warnings

import numpy as np

import ember as E

from ..._tensor import Tensor
from ..._user_warnings import user_stacklevel, warn_at_user
from ...amp.autocast_mode import autocast_op
from ...ops._arg_parser_text import need_tensors
from ...ops._spacing import linspace_float as _linspace_float
from ...ops.sampling import MODES, PADDINGS, grid_sampler

__all__ = ["grid_sample", "affine_grid"]

_DEFAULT_CHANGED = ("Default grid_sample and affine_grid behavior has changed to "
                    "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                    "old behavior is desired. See the documentation of grid_sample for details.")


@autocast_op("grid_sampler")
def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """Read `input` at the (x, y[, z]) points in `grid`, normalised to [-1, 1]."""
    if mode not in MODES:
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in PADDINGS:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warn_at_user(_DEFAULT_CHANGED)
        align_corners = False
    if input.__class__ is not Tensor or grid.__class__ is not Tensor:
        need_tensors("grid_sampler", ("input", 1, input), ("grid", 2, grid))
    return grid_sampler(input, grid, MODES[mode], PADDINGS[padding_mode], align_corners)


def _steps(n: int, align: bool, t) -> np.ndarray:
    """n points spread over [-1, 1] as torch.linspace spreads them (in `t`), pulled in to
    the pixel centres when not aligning corners."""
    if n <= 1:  # a single point sits at the centre
        return np.zeros(max(n, 0), t)
    r = _linspace_float(-1, 1, n, t)  # torch.linspace's values, bit for bit
    if not align:
        r = (r * t(n - 1)) / t(n)
    return r.astype(t)


def _base_grid(spatial, align: bool, t) -> np.ndarray:
    """(*spatial, nd + 1): the coordinates (x, y[, z], 1) of every output point."""
    nd = len(spatial)
    out = np.ones(tuple(spatial) + (nd + 1,), t)
    for k in range(nd):  # coordinate k runs along spatial dim nd - 1 - k
        shape = [1] * nd
        shape[nd - 1 - k] = spatial[nd - 1 - k]
        out[..., k] = _steps(spatial[nd - 1 - k], align, t).reshape(shape)
    return out


def affine_grid(theta: Tensor, size, align_corners: bool | None = None) -> Tensor:
    """The sampling grid (N, *size[2:], nd) of the affine maps `theta` (N, nd, nd + 1)."""
    if align_corners is None:
        warn_at_user(_DEFAULT_CHANGED)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    # (PyTorch's Python checks print `size` as the caller passed it: tuple, list or Size)
    given, size = size, [int(s) for s in size]
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{given}. Got {theta.shape}.")
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{given}. Got {theta.shape}.")
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {given}.")
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      stacklevel=user_stacklevel())
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {given}")
    if theta.shape[0] != size[0]:
        raise RuntimeError(f"Expected theta to have batch size {size[0]}, but got "
                           f"{theta.shape[0]}")
    nd = len(spatial)
    t = theta.dtype.np.type
    base = E.tensor(_base_grid(spatial, bool(align_corners), t), dtype=theta.dtype,
                    device=theta.device).reshape(1, -1, nd + 1)
    # grid = base @ theta^T, summed term by term in coordinate order (as torch's kernel
    # rounds it); the homogeneous coordinate is 1, so its term is the translation itself
    th = theta.unsqueeze(1)  # (N, 1, nd, nd + 1)
    grid = base[..., 0:1] * th[..., 0]
    for k in range(1, nd):
        grid = grid + base[..., k:k + 1] * th[..., k]
    grid = grid + th[..., nd]
    return grid.reshape([size[0]] + spatial + [nd])
