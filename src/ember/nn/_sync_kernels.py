"""The kernels SyncBatchNorm composes, under PyTorch's names: per-process statistics
(`batch_norm_stats`), combining every process's statistics (`batch_norm_gather_stats`,
`..._with_counts`), normalising with given statistics (`batch_norm_elemt`), the two backward
halves (`batch_norm_backward_reduce`, `batch_norm_backward_elemt`) and the running-statistics
update (`batch_norm_update_stats`).

They are `torch.*` functions; they live beside nn.SyncBatchNorm because their results hang off
autograd nodes (a layer above the ops). PyTorch's CPU build runs only
`batch_norm_update_stats`; the others are CUDA kernels there.
ember's SyncBatchNorm syncs CPU processes (over MPI), so ember runs all seven on the CPU, with
the CUDA kernels' arithmetic. Each computes on NumPy arrays in float64 and rounds once to its
result dtype (the float32 "accumulate" type for float16 / bfloat16 statistics). PyTorch has
no derivative for any of them: results of inputs that require grad hang off a
`NotImplemented` node whose backward raises.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor
from .._view import wrap_dim
from ..autograd import Function
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..ops._common import type_name
from ..ops.creation import from_numpy

_LOW = (dt.float16, dt.bfloat16)


def _acc(d: dt.dtype) -> dt.dtype:
    return dt.float32 if d in _LOW else d


def _f64(t: Tensor | None) -> np.ndarray | None:
    return None if t is None else np.asarray(t.detach().numpy(), dtype=np.float64)


def _rows(x: Tensor) -> np.ndarray:
    """`x` (N, C, *) as (C, N * prod(*)) float64: one row per channel."""
    a = _f64(x)
    return np.moveaxis(a, 1, 0).reshape(a.shape[1], -1)


def _per_channel(v: np.ndarray, ndim: int) -> np.ndarray:
    return v.reshape((1, -1) + (1,) * (ndim - 2))


def _out(a: np.ndarray, d: dt.dtype) -> Tensor:
    return from_numpy(np.ascontiguousarray(a.astype(d.np)))


class _NoDerivative(Function):
    """Carries the results of `compute` under one node whose backward raises, as PyTorch's
    `NotImplemented` node for an op with no derivative formula."""

    @staticmethod
    def forward(ctx, name, compute, *tensors):
        ctx.aten = name
        return compute()

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(f"derivative for aten::{ctx.aten} is not implemented")


_not_implemented_cls: list = []


def _run(name: str, compute, *inputs):
    """`compute()` (a tuple of results), recorded as a no-derivative node when an input
    requires grad."""
    tensors = [t for t in inputs if isinstance(t, Tensor)]
    if not (is_grad_enabled() and any(t.requires_grad for t in tensors)):
        with no_grad():
            return compute()
    outs = _NoDerivative.apply(name, compute, *tensors)
    outs = outs if isinstance(outs, tuple) else (outs,)
    node = next(o.grad_fn for o in outs if o is not None and o.grad_fn is not None)
    if not _not_implemented_cls or _not_implemented_cls[0].__bases__[0] is not type(node):
        _not_implemented_cls[:] = [type("NotImplemented", (type(node),), {
            "__slots__": (), "name": lambda self: "torch::autograd::NotImplemented"})]
    node.__class__ = _not_implemented_cls[0]
    return outs


def _check_float(x: Tensor, kernel: str) -> None:
    if x._dtype._kind < 2 or x._dtype._kind > 2:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{type_name(x._dtype)}\'')


def _check_input(x: Tensor, kernel: str) -> None:
    wrap_dim(1, x.dim())  # (PyTorch's IndexError for a 0-d or 1-d input)
    if x.numel() == 0:
        raise RuntimeError("input tensor must have at least one element, but got input_sizes "
                           f"= {list(x.shape)}")
    _check_float(x, kernel)


def _stat_dtype(x: Tensor, *params: Tensor | None) -> dt.dtype:
    """The statistics' dtype: the parameters' (PyTorch's mixed-dtype rule: float16 / bfloat16
    input with float32 parameters), else the input's."""
    given = [p for p in params if p is not None]
    if not given:
        return x._dtype
    d = given[0]._dtype
    if d != x._dtype and not (x._dtype in _LOW and d == dt.float32):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of "
                           f"{type_name(x._dtype)}")
    return d


def _update_running(running_mean, running_var, mean, var_n, count, momentum) -> None:
    """running = (1 - momentum) running + momentum * batch value (the unbiased variance)."""
    with no_grad():
        if running_mean is not None:
            new = (1 - momentum) * _f64(running_mean) + momentum * mean
            running_mean.copy_(from_numpy(new))
        if running_var is not None:
            with np.errstate(divide="ignore", invalid="ignore"):
                unbiased = var_n / (count - 1)
            new = (1 - momentum) * _f64(running_var) + momentum * unbiased
            running_var.copy_(from_numpy(new))


def batch_norm_update_stats(input: Tensor, running_mean: Tensor | None,
                            running_var: Tensor | None, momentum: float):
    """(mean, biased variance) per channel of `input` (N, C, *); updates the running
    statistics in place with the unbiased variance."""
    _check_input(input, "batch_norm_update_stats_cpu")
    d = _stat_dtype(input, running_mean, running_var)
    rows = _rows(input)
    mean, var = rows.mean(1), rows.var(1)

    def compute():
        return _out(mean, d), _out(var, d)

    outs = _run("batch_norm_update_stats", compute, input, running_mean, running_var)
    _update_running(running_mean, running_var, mean, var * rows.shape[1], rows.shape[1],
                    momentum)
    return outs


def batch_norm_stats(input: Tensor, eps: float):
    """(mean, invstd) per channel of `input` (N, C, *), invstd = 1 / sqrt(var + eps) with
    the biased variance: one process's share of SyncBatchNorm's statistics."""
    _check_input(input, "batch_norm_stats")
    rows = _rows(input)
    mean, var = rows.mean(1), rows.var(1)

    def compute():
        with np.errstate(divide="ignore"):
            invstd = np.where((var == 0) & (eps == 0), 0.0, 1.0 / np.sqrt(var + eps))
        return _out(mean, _acc(input._dtype)), _out(invstd, _acc(input._dtype))

    return _run("batch_norm_stats", compute, input)


def batch_norm_gather_stats_with_counts(input: Tensor, mean: Tensor, invstd: Tensor,
                                        running_mean: Tensor | None,
                                        running_var: Tensor | None, momentum: float,
                                        eps: float, counts: Tensor):
    """Every process's (mean, invstd) rows (world, C) and batch counts (world,) combined
    into the whole batch's (mean, invstd); updates the running statistics in place."""
    m, inv, c = _f64(mean), _f64(invstd), _f64(counts).reshape(-1, 1)
    total = c.sum()
    mean_all = (c * m).sum(0) / total
    with np.errstate(divide="ignore"):
        var_parts = np.where(inv == 0, 0.0, 1.0 / (inv * inv) - eps)
    var_n = (c * (var_parts + (m - mean_all) ** 2)).sum(0)
    d = mean._dtype

    def compute():
        invstd_all = 1.0 / np.sqrt(var_n / total + eps)
        return _out(mean_all, d), _out(invstd_all, d)

    outs = _run("batch_norm_gather_stats_with_counts", compute, input, mean, invstd,
                running_mean, running_var, counts)
    _update_running(running_mean, running_var, mean_all, var_n, total, momentum)
    return outs


def batch_norm_gather_stats(input: Tensor, mean: Tensor, invstd: Tensor,
                            running_mean: Tensor | None, running_var: Tensor | None,
                            momentum: float, eps: float, count: int):
    """`batch_norm_gather_stats_with_counts` with every process holding `count` values."""
    counts = from_numpy(np.full(mean.shape[0], float(count)))
    return batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var,
                                               momentum, eps, counts)


def batch_norm_elemt(input: Tensor, weight: Tensor | None, bias: Tensor | None, mean: Tensor,
                     invstd: Tensor, eps: float) -> Tensor:
    """(input - mean) * invstd * weight + bias, with statistics given per channel."""
    n = input.dim()
    y = (_f64(input) - _per_channel(_f64(mean), n)) * _per_channel(_f64(invstd), n)
    if weight is not None:
        y = y * _per_channel(_f64(weight), n)
    if bias is not None:
        y = y + _per_channel(_f64(bias), n)
    return _run("batch_norm_elemt", lambda: (_out(y, input._dtype),), input, weight, bias,
                mean, invstd)[0]


def batch_norm_backward_reduce(grad_out: Tensor, input: Tensor, mean: Tensor, invstd: Tensor,
                               weight: Tensor | None, input_g: bool, weight_g: bool,
                               bias_g: bool):
    """(sum_dy, sum_dy_xmu, grad_weight, grad_bias) per channel: the sums the input gradient
    needs (all-reduced across processes by SyncBatchNorm) and the local parameter gradients.
    A result not asked for (`input_g`, `weight_g`, `bias_g` False) is None."""
    dy, xmu = _rows(grad_out), _rows(input) - _f64(mean).reshape(-1, 1)
    sum_dy, sum_dy_xmu = dy.sum(1), (dy * xmu).sum(1)
    d = mean._dtype
    pd = weight._dtype if weight is not None else d

    def compute():
        return (_out(sum_dy, d) if input_g else None,
                _out(sum_dy_xmu, d) if input_g else None,
                _out(sum_dy_xmu * _f64(invstd), pd) if weight_g else None,
                _out(sum_dy, pd) if bias_g else None)

    return _run("batch_norm_backward_reduce", compute, grad_out, input, mean, invstd, weight)


def batch_norm_backward_elemt(grad_out: Tensor, input: Tensor, mean: Tensor, invstd: Tensor,
                              weight: Tensor | None, sum_dy: Tensor, sum_dy_xmu: Tensor,
                              count: Tensor) -> Tensor:
    """The input gradient from the world's sums: (dy - mean(dy) - (x - mean) invstd^2
    mean(dy (x - mean))) invstd weight, the means over all `count.sum()` values."""
    n, total = input.dim(), float(_f64(count).sum())
    inv = _per_channel(_f64(invstd), n)
    xmu = _f64(input) - _per_channel(_f64(mean), n)
    g = (_f64(grad_out) - _per_channel(_f64(sum_dy), n) / total
         - xmu * inv * inv * _per_channel(_f64(sum_dy_xmu), n) / total) * inv
    if weight is not None:
        g = g * _per_channel(_f64(weight), n)
    return _run("batch_norm_backward_elemt", lambda: (_out(g, input._dtype),), grad_out,
                input, mean, invstd, weight, sum_dy, sum_dy_xmu, count)[0]


__all__ = ["batch_norm_stats", "batch_norm_elemt", "batch_norm_gather_stats",
           "batch_norm_gather_stats_with_counts", "batch_norm_backward_reduce",
           "batch_norm_backward_elemt", "batch_norm_update_stats"]
