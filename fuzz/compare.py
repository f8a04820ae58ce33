"""Comparing one call's outcome in ember and torch: results (tensors, tuples, Python values)
to within the dtype's tolerance with NaNs in the same places, or exception types."""

from __future__ import annotations

import ml_dtypes
import numpy as np

# (rtol, atol) by dtype name; loose for the half types, whose reductions accumulate
# differently in the two libraries.
TOL = {
    "float16": (2e-2, 2e-2), "bfloat16": (5e-2, 5e-2), "float32": (1e-4, 1e-5),
    "float64": (1e-9, 1e-11), "complex64": (1e-4, 1e-5), "complex128": (1e-9, 1e-11),
}


def dtype_name(dt) -> str:
    return str(dt).split(".")[-1]


def _to_numpy(x) -> np.ndarray:
    """Values of an ember or torch tensor as NumPy (bfloat16 through its bits for torch)."""
    x = x.detach()
    if type(x).__module__.startswith("torch"):
        x = x.resolve_conj().resolve_neg()
        if dtype_name(x.dtype) == "bfloat16":
            import torch
            return x.contiguous().view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return np.asarray(x.numpy())


def is_tensor(x) -> bool:
    return hasattr(x, "dtype") and hasattr(x, "shape") and hasattr(x, "detach")


def diff(e, t, path: str = "out") -> str | None:
    """None when ember's `e` matches torch's `t`; else what differs."""
    if is_tensor(t):
        if not is_tensor(e):
            return f"{path}: ember gave {type(e).__name__}, torch a tensor"
        if tuple(e.shape) != tuple(t.shape):
            return f"{path}: shape {tuple(e.shape)} != torch {tuple(t.shape)}"
        de, dt = dtype_name(e.dtype), dtype_name(t.dtype)
        if de != dt:
            return f"{path}: dtype {de} != torch {dt}"
        return _values(_to_numpy(e), _to_numpy(t), dt, path)
    if isinstance(t, (tuple, list)):
        if not isinstance(e, (tuple, list)):
            return f"{path}: ember gave {type(e).__name__}, torch a {type(t).__name__}"
        if len(e) != len(t):
            return f"{path}: length {len(e)} != torch {len(t)}"
        for k, (a, b) in enumerate(zip(e, t)):
            d = diff(a, b, f"{path}[{k}]")
            if d:
                return d
        return None
    if is_tensor(e):
        return f"{path}: ember gave a tensor, torch {type(t).__name__}"
    if type(e) is not type(t):
        return f"{path}: ember gave {type(e).__name__} {e!r}, torch {type(t).__name__} {t!r}"
    if isinstance(t, (float, complex)):
        if not np.allclose(e, t, rtol=1e-4, atol=1e-5, equal_nan=True):
            return f"{path}: {e!r} != torch {t!r}"
        return None
    return None if e == t else f"{path}: {e!r} != torch {t!r}"


def _values(a: np.ndarray, b: np.ndarray, dtype: str, path: str) -> str | None:
    if dtype in TOL:
        rtol, atol = TOL[dtype]
        wide = np.complex128 if dtype.startswith("complex") else np.float64
        a, b = a.astype(wide), b.astype(wide)
        nan_a, nan_b = np.isnan(a), np.isnan(b)
        if (nan_a != nan_b).any():
            return f"{path}: NaN positions differ ({_first(a, b, nan_a != nan_b)})"
        bad = ~np.isclose(a, b, rtol=rtol, atol=atol) & ~nan_a
        if bad.any():
            return f"{path}: values differ ({_first(a, b, bad)})"
        return None
    bad = a != b
    if bad.any():
        return f"{path}: values differ ({_first(a, b, bad)})"
    return None


def _first(a: np.ndarray, b: np.ndarray, where: np.ndarray) -> str:
    idx = tuple(int(i[0]) for i in np.nonzero(where)) if where.ndim else ()
    return f"at {idx}: ember {a[idx]!r} vs torch {b[idx]!r}, {int(where.sum())} in all"
