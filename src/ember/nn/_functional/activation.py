"""Activation functions of `ember.nn.functional`.

Most are primitives in `ember.ops.activation` (re-exported as they are); the rest
(softmax family with F's argument order, glu, prelu, softmin, gumbel_softmax,
shrinks) are composed here from ember ops.
"""

from __future__ import annotations

import math
import warnings

import ember as E

from ... import _dtype as dt
from ..._tensor import Tensor
from ..._user_warnings import user_stacklevel
from ...amp.autocast_mode import autocast_op
from ...ops._arg_parser_text import need_tensor
from ...ops._common import type_name
from ...ops._scalar_value import real_operand, scalar_value
from ...ops.activation import (
    celu,
    celu_,
    elu,
    elu_,
    functional_relu,
    gelu,
    hardsigmoid,
    hardswish,
    hardtanh,
    hardtanh_,
    leaky_relu,
    leaky_relu_,
    logsigmoid,
    mish,
    relu6,
    relu_,
    selu,
    selu_,
    silu,
    softplus,
    softsign,
    tanhshrink,
    threshold,
    threshold_,
)
from ...ops.copy import relaid
from ...ops.double_backward import double_backward
from ...ops.glu import glu_halves
from ...ops.one_node import one_node
from ...ops.registry import rename_node, shows
from ...ops.softmax import implicit_softmax_dim

relu = functional_relu  # F.relu(input, inplace=False); torch.relu takes the tensor alone

__all__ = [
    "celu", "celu_", "elu", "elu_", "gelu", "hardsigmoid", "hardswish", "hardtanh", "hardtanh_",
    "leaky_relu", "leaky_relu_", "logsigmoid", "mish", "relu", "relu6", "relu_", "selu", "selu_",
    "silu", "softplus", "softsign", "tanhshrink", "threshold", "threshold_", "sigmoid", "tanh",
    "softmax", "log_softmax", "softmin", "glu", "prelu", "hardshrink", "softshrink",
    "gumbel_softmax", "rrelu", "rrelu_",
]


def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    return input.tanh()


def _dim(name: str, dim, input, stacklevel: int) -> int:
    # (PyTorch's `_stacklevel` counts from its own helper, called by F.softmax: one frame
    # more here, this one. `input.dim()` is asked only without a dim, as there, so a
    # non-tensor fails on the attribute PyTorch's code reads first.)
    return implicit_softmax_dim(name, input.dim(), stacklevel + 1) if dim is None else dim


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype=None) -> Tensor:
    """exp(x) / sum(exp(x)) along `dim` (a primitive; numerically stable)."""
    dim = _dim("softmax", dim, input, _stacklevel)
    # (PyTorch's call, the method: its AttributeError for a non-tensor, and its parser's
    # words for a wrong `dim`, "argument 'dim' (position 1)")
    return input.softmax(dim) if dtype is None else input.softmax(dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype=None) -> Tensor:
    """log(softmax(x)) along `dim`, computed as x - logsumexp(x) (a primitive)."""
    dim = _dim("log_softmax", dim, input, _stacklevel)
    if dtype is None:
        return input.log_softmax(dim)  # (as softmax)
    return input.log_softmax(dim, dtype=dtype)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype=None) -> Tensor:
    """softmax(-x) along `dim`."""
    dim = _dim("softmin", dim, input, _stacklevel)
    # Negated before the cast, as PyTorch does (so a bool input is refused).
    x = -input
    return x.softmax(dim) if dtype is None else x.softmax(dim, dtype=dtype)  # (as softmax)


def _named(out: Tensor, node: str) -> Tensor:
    """`out` of a composite, its graph node (if any) renamed to the one PyTorch's kernel for
    the whole op makes, so `grad_fn` prints as there."""
    if out.grad_fn is not None:
        rename_node(out.grad_fn, node)
    return out


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b), where a and b are the two halves of `input` along `dim`."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    n = input.shape[dim]
    if n % 2:
        d = dim % input.dim()
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    a, b = input.chunk(2, dim)
    # (16-bit halves: PyTorch's kernels, in float and rounded once)
    out = glu_halves(a, b) if input.dtype in (E.float16, E.bfloat16) else a * b.sigmoid()
    return shows(out, "GluBackward0", dim=dim, self=input)


@autocast_op("prelu")
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """max(0, x) + weight * min(0, x), with one slope per channel (dim 1) or one overall."""
    need_tensor(input, "prelu")
    need_tensor(weight, "prelu", "weight", 2)
    w = weight
    if weight.numel() != 1:
        if input.dim() == 0 or weight.numel() != input.shape[min(1, input.dim() - 1)]:
            channels = input.shape[1] if input.dim() >= 2 else 1
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found parameter numbers ="
                f" {weight.numel()} and channel size = {channels}.")
        if input.dim() >= 2:
            w = weight.reshape((-1,) + (1,) * (input.dim() - 2))
    # (PyTorch's _prelu_kernel node keeps the input and the weight, whichever needs grad;
    # its derivative kernel takes both, so a create_graph gradient requires grad where
    # either does, with zeros as their gradients)
    # (the node shows the weight as its kernel takes it: channels along dim 1, ones beside)
    nd = input.dim()
    kernel_w = weight if nd == 1 else weight.view(
        tuple(weight.numel() if d == 1 else 1 for d in range(nd)))
    if nd == 0:  # (PyTorch's kernel reads the one slope as a 0-d weight)
        w = w.reshape(())
    # (its result is `empty_like(input)`, the kernel writing into it)
    out = relaid(E.where(input > 0, input, w * input), (input,), "like")
    return double_backward(shows(out, "PreluKernelBackward0", self=input, weight=kernel_w),
                           input, weight)


def _float_only(input: Tensor, kernel: str) -> None:
    if not input.is_floating_point():
        raise NotImplementedError(f'"{kernel}" not implemented for \'{type_name(input.dtype)}\'')


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    need_tensor(input, "hardshrink")
    _float_only(input, "hardshrink_cpu")
    lambd = float(scalar_value(lambd, input.dtype))  # (the kernel reads it as the input's type)
    # (PyTorch's node saves the input: an in-place op on it refuses backward; its
    # derivative kernel takes it: a create_graph gradient requires grad, zeros its gradient)
    # (PyTorch's one kernel over the input lays the result out: TensorIterator's)
    out = relaid(E.where((input < -lambd) | (input > lambd), input, _zero_or_nan(input)),
                 (input,))
    return double_backward(shows(out, "HardshrinkBackward0", lambd=lambd, self=input), input)


def _zero_or_nan(input: Tensor) -> Tensor:
    """+0.0, or NaN where `input` is NaN, with no gradient: the shrinks' middle as PyTorch's
    vectorised kernels compute it (a NaN passes through the forward; its gradient is 0, a
    select, as the vectorised backward's mask; their scalar loops, on a short tail or a
    strided input, give -0.0 and g)."""
    return input.detach() * 0.0 + 0.0


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    need_tensor(input, "softshrink")
    lambd = float(real_operand(lambd, dt.float64))  # (read as a double first, then checked)
    _float_only(input, "softshrink_check")
    top = float(E.finfo(input.dtype).max)
    if not 0 <= lambd <= top:  # (NaN too; the bounds printed as C++ prints a double)
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype "
                           f"{type_name(input.dtype)}, but found {lambd:g}")
    def shrink(x: Tensor) -> Tensor:
        return relaid(E.where(x > lambd, x - lambd,
                              E.where(x < -lambd, x + lambd, _zero_or_nan(x))), (x,))

    # (one node over the input, as PyTorch's kernel: its gradient, from the two branches,
    # is then that node's and is tied as hardshrink's; the composite's would be an add)
    out = one_node("SoftshrinkBackward0", shrink, input)
    return double_backward(shows(out, "SoftshrinkBackward0", lambd=lambd, self=input),
                           input)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False, *, generator=None) -> Tensor:
    """Leaky ReLU with a random slope in [lower, upper] when training, the mean slope otherwise.

    As PyTorch's kernel draws it: one double uniform per element `<= 0`, in order (a NaN
    draws none and passes through), between bounds and into a slope rounded to the compute
    dtype (float for 16-bit inputs). The gradient is the slope drawn (1 elsewhere)."""
    need_tensor(input, "rrelu_" if inplace else "rrelu")
    lower, upper = (real_operand(v, dt.float64) for v in (lower, upper))  # (read as doubles)
    for side, v in (("lower", lower), ("upper", upper)):
        if not math.isfinite(v):
            raise RuntimeError(f"rrelu: {side} bound must be finite, got {float(v)}")
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    # (PyTorch's result, in either mode, is allocated row-major)
    if not training:
        if inplace:
            return _named(leaky_relu(input, (lower + upper) / 2, True), "RreluWithNoiseBackward1")
        return _named(relaid(leaky_relu(input, (lower + upper) / 2), (input,), "contiguous"),
                      "RreluWithNoiseBackward0")
    if not input.is_floating_point():
        raise NotImplementedError(f'"rrelu_with_noise_out_cpu" not implemented for '
                                  f"'{type_name(input.dtype)}'")
    compute = E.float64 if input.dtype == E.float64 else E.float32
    with E.no_grad():
        hit = input <= 0
        u = E.rand(int(hit.sum()), dtype=E.float64, generator=generator)
        noise = E.ones(input.shape, dtype=compute)
        # (the bounds rounded to the compute dtype first, as the kernel reads them)
        lo, hi = (E.tensor(v, dtype=compute).item() for v in (lower, upper))
        noise[hit] = (u * (hi - lo) + lo).to(compute)
    if inplace:
        # (one in-place product: the gradient is the slope drawn, as out of place; a 16-bit
        # input is multiplied in float32 and rounded once, as the kernel does)
        return _named(input.mul_(noise), "RreluWithNoiseBackward1")
    out = relaid((input.to(compute) * noise).to(input.dtype), (input,), "contiguous")
    return _named(out, "RreluWithNoiseBackward0")


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False, generator=None) -> Tensor:
    """`rrelu` in place."""
    return rrelu(input, lower, upper, training, True, generator=generator)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """Samples from the Gumbel-softmax distribution; `hard=True` gives straight-through one-hots."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.",
                      stacklevel=user_stacklevel())
    need_tensor(logits, "empty_like")  # (torch's first op on logits)
    gumbels = -E.empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = E.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
