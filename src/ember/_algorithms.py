"""Process-wide choices of algorithm that kernels read: whether deterministic algorithms
are required (`torch.use_deterministic_algorithms`; set through `ember._runtime`, kept here,
below the op layer, so that kernels may read it), the float32 matmul precision, and whether
memory handed out without values is then filled
(`torch.utils.deterministic.fill_uninitialized_memory`)."""

from __future__ import annotations

import numpy as np

deterministic = {"on": False, "warn_only": False, "fill": True}
# float32 matmul precision ("highest", "high", "medium"): `set_float32_matmul_precision`
# and `backends.cuda.matmul.allow_tf32` (True is "high") are two faces of it, as in PyTorch
matmul_precision = ["highest"]


def deterministic_only() -> bool:
    """Whether kernels must run their reference algorithm (no Winograd products)."""
    return deterministic["on"]


def fills_uninitialized() -> bool:
    """Whether `empty`-like memory gets a known value (deterministic mode and the fill flag)."""
    return deterministic["on"] and deterministic["fill"]


def uninitialized(shape, np_dtype) -> np.ndarray:
    """Memory for values not yet written (`np.empty`). Under deterministic algorithms with
    the fill flag, PyTorch fills it so that reading it is reproducible: NaN for floating and
    complex dtypes, the largest value for integers (True for bool); so does ember."""
    if not fills_uninitialized():
        return np.empty(shape, np_dtype)
    return np.full(shape, fill_value(np_dtype), np_dtype)


def fill_value(np_dtype):
    """The value PyTorch writes into uninitialised memory of `np_dtype`."""
    np_dtype = np.dtype(np_dtype)
    if np_dtype == np.bool_:
        return True
    if np.issubdtype(np_dtype, np.integer):
        return np.iinfo(np_dtype).max
    return np.nan  # (floats, complex, and ml_dtypes' bfloat16)
