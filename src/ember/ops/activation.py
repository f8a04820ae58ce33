"""Activation functions as members of the `unary` family, each with its VJP and JVP beside
it. Their fused derivative kernels are in `activation_backward.py` (threshold_backward)
and `gelu.py` (GELU's kernels and gelu_backward), re-exported here.

`ember.relu`, `selu`, `celu`, `threshold` (and their `_` forms) are exported
because `torch.<name>` exists; the others (`gelu`, `silu`, `softplus`, `mish`,
`hardtanh`, `relu6`, `leaky_relu`, `elu`, `hardsigmoid`, `hardswish`,
`logsigmoid`, `softsign`, `tanhshrink`) are module-level functions with
`torch.nn.functional`'s signatures, for `ember.nn.functional` to bind.
Kernels on float16 / bfloat16 compute in float32 and round once.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .. import native
from .._core.primitive import VJPRule
from .._tensor import Tensor
from ..native import calls
from . import _math_loops
from ._arg_parser_text import need_tensor, wrong_type
from ._common import MEMBER_LAYOUT, bounded, select
from ._piecewise_native import CLAMP, HARDSIGMOID, HARDSWISH, LEAKY, THRESHOLD, piecewise_native
from ._scalar_value import kernel_number, real_operand, scalar_value
from .activation_backward import (  # noqa: F401  (the derivative kernels: re-exported)
    activation_backward_p,
    hardsigmoid_grad,
    opmath_threshold,
    silu_backward_p,
    smooth_grad,
    threshold_backward_p,
    threshold_grad,
)
from .gelu import gelu_backward_p, gelu_p  # noqa: F401  (gelu_backward_p: re-exported)
from .registry import Member, apply, apply_, deflower, defvjp, rename_node
from .unary import (
    BOOL_K,
    COMPLEX_K,
    INT_K,
    cj,
    defjvp1,
    lowp,
    named_vjp,
    not_implemented,
    sigmoid_p,
    unary,
    unary_p,
)

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _where(cond, a, b):
    from .ternary import where

    return where(cond, a, b)


def _run(prim: Member, input: Tensor, inplace: bool, reject, kname: str, fname="", **params):
    """Check input (named `fname`/the member, `_` in place), dtype; run `prim` (into input)."""
    need_tensor(input, (fname or prim.name) + "_" * bool(inplace))
    if input._dtype._kind in reject:
        raise not_implemented(kname, input._dtype)
    params = {k: real_operand(v, input._dtype) for k, v in params.items()}  # (a complex slope)
    return (apply_ if inplace else apply)(unary_p, input, fn=prim, **params)


_FLOAT_ONLY = (BOOL_K, INT_K, COMPLEX_K)


# PyTorch's in-place leaky_relu_ / elu_ / celu_ differentiate from their result, which a
# negative (or NaN) slope leaves unable to tell the sides apart: their backward refuses.
_NEGATIVE_SLOPE = (
    "In-place {} backward calculation is triggered with a negative slope which is not "
    "supported. This is caused by calling in-place forward function with a negative slope, "
    "please call out-of-place version instead.")
_LEAKY_NEGATIVE_SLOPE = _NEGATIVE_SLOPE.format("leakyReLu") + (
    " File an issue at https://github.com/pytorch/pytorch if you do require supporting "
    "in-place leakRelu backward calculation with negative slope")
_ELU_NEGATIVE_SLOPE = _NEGATIVE_SLOPE.format("elu")


def _run_inplace_marked(prim: Member, input: Tensor, node_name: str, slope, refusal: str,
                        kname: str, fname: str = "", reject=_FLOAT_ONLY, **params) -> Tensor:
    """`_run` in place, its graph node named `node_name` (PyTorch's in-place forms are
    `...Backward1`) and, when `slope` is negative or NaN (None: never), a backward that
    raises `refusal`."""
    before = getattr(input, "_grad_fn", None)  # (a non-tensor: refused in _run)
    _run(prim, input, True, reject, kname, fname, **params)
    node = input._grad_fn
    if node is None or node is before:
        return input
    if input._base is not None:  # (a view: its base's CopySlices holds the op's node)
        node = input._base._grad_fn._edges[-1][0]
    rename_node(node, node_name)
    if slope is not None and not real_operand(slope, dt.float64) >= 0:
        rule = node._rule

        def refuse(*args, **kwargs):
            raise RuntimeError(refusal)

        node._rule = VJPRule(tuple(refuse for _ in rule.fns), rule.reads, rule.save_output)
    return input


def _number(value, fname: str, argname: str, pos: int) -> None:
    """TypeError, as PyTorch's argument parser gives, when `value` is not a number."""
    if isinstance(value, (numbers.Number, np.generic)) or (
            isinstance(value, Tensor) and value.numel() == 1):
        return
    raise wrong_type(fname, argname, pos, "Number", value)


# --- relu, hardtanh, relu6, threshold (integers allowed) ----------------------------------

def _relu_kernel(a):
    return bounded(np.maximum, a, 0)


_NATIVE_MIN = 1 << 16  # (threshold_backward's gate is activation_backward's own)


def _smooth_native(kind: int):
    """csrc/activation.c's one-pass sigmoid (kind 0) or SiLU (1) for a float32 / float64
    array (a contiguous copy's numbers for other layouts)."""
    def kernel(lib, a):
        sfx = calls.SUFFIX.get(a.dtype)
        if sfx is None:
            return NotImplemented
        a = calls.c_order(a)
        out = np.empty(a.shape, a.dtype)
        calls.entry(lib, f"smooth_{sfx}", [calls.P, calls.P, calls.I64, calls.INT], calls.INT)(
            calls.ptr(a), calls.ptr(out), a.size, kind)
        return out

    kernel.__name__ = ("_sigmoid_native", "_silu_native")[kind]
    return kernel


# (from one element: the C call costs less than NumPy's four, and a tensor's values do not
# depend on its size, as they would if small ones took NumPy's exp)
_SMOOTH_MIN = 1


def _relu_native(lib, a):
    """max(x, 0) in C (csrc/activation.c): one pass over the native pool, for contiguous
    float32 / float64 arrays of 64K elements or more; the same bits (NaN and -0.0 pass)."""
    if a.size < _NATIVE_MIN:
        return NotImplemented
    sfx = calls.SUFFIX.get(a.dtype)
    if sfx is None or not a.flags.c_contiguous:
        return NotImplemented
    out = np.empty_like(a)
    calls.entry(lib, f"relu_{sfx}", [calls.P, calls.P, calls.I64])(
        calls.ptr(a), calls.ptr(out), a.size)
    return out


relu_p = unary("relu", _relu_kernel)
native.register(relu_p, "activation", _relu_native, min_size=(globals(), "_NATIVE_MIN"))
deflower(relu_p, "({0} < 0 ? ({T})0 : {0})")  # NaN and -0.0 pass through, as np.maximum(0, x)
# NOTE: the derivative at 0 is taken as 0, as in PyTorch (threshold_backward).
defvjp(relu_p, lambda g, out, x: threshold_grad(g, out, 0), reads=((),), save_output=True)
defjvp1(relu_p, lambda t, out, x: threshold_grad(t, out, 0))

_PIECEWISE_MIN = 1 << 10  # (under it, NumPy's few passes cost less than a ctypes call)


def _as_kernel_number(value, d: np.dtype) -> float:
    """`value` rounded to float32 / float64 `d` as NumPy rounds a number next to an array
    (exactly representable as the double handed to C, which converts it back exactly)."""
    return float(kernel_number(value, d))


def _register_loops(prim: Member, body) -> None:
    """`body(m, a, **params)` over csrc/math_maps.c's loops as `prim`'s native twin, where
    NumPy's are a C-library call per element (`_math_loops`)."""
    native.register(prim, "math_maps", _math_loops.twin(body),
                    min_size=(_math_loops.NATIVE_MIN, "n"))


def _register_piecewise(prim: Member, native_kernel) -> None:
    native.register(prim, "activation", native_kernel, min_size=(globals(), "_PIECEWISE_MIN"))


def _no_bool(x, msg: str, name: str) -> None:
    need_tensor(x, name)
    if x._dtype._kind == BOOL_K:
        raise RuntimeError(msg)


def _clamp_refuses_complex(x: Tensor) -> None:
    """relu, relu6 and hardtanh are clamps, and refuse complex inputs in clamp's words."""
    if x._dtype.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")


def functional_relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0) elementwise (`nn.functional.relu`, with its `inplace` flag)."""
    # NOTE: the checks inline when they pass (no helper calls): relu is hot.
    if not isinstance(input, Tensor) or input._dtype._kind in (BOOL_K, COMPLEX_K):
        _no_bool(input, "Boolean inputs not supported for relu", "relu" + "_" * bool(inplace))
        _clamp_refuses_complex(input)
    if inplace:
        return apply_(unary_p, input, fn=relu_p)
    return apply(unary_p, input, fn=relu_p)


def relu(input: Tensor) -> Tensor:
    """max(x, 0) elementwise (`torch.relu` and `Tensor.relu` take the tensor alone)."""
    if isinstance(input, Tensor) and not input._strided and "relu" in type(input).__dict__:
        return type(input).__dict__["relu"](input)  # (sparse COO: sparse_pointwise)
    return functional_relu(input)


def relu_(input: Tensor) -> Tensor:
    return functional_relu(input, inplace=True)


def _hardtanh_kernel(a, min_val=-1.0, max_val=1.0):
    if a.dtype.kind in "iu":
        lo, hi = math.ceil(min_val), math.floor(max_val)
        return np.minimum(np.maximum(a, lo), hi).astype(a.dtype)
    return bounded(np.minimum, bounded(np.maximum, a, kernel_number(min_val, a.dtype)),
                   kernel_number(max_val, a.dtype))  # (16 bits: through float32)


hardtanh_p = unary("hardtanh", _hardtanh_kernel)


def _hardtanh_native(lib, a, min_val=-1.0, max_val=1.0):
    if a.dtype.kind != "f":
        return NotImplemented
    return piecewise_native(CLAMP, lib, a, _as_kernel_number(min_val, a.dtype),
                             _as_kernel_number(max_val, a.dtype))


_register_piecewise(hardtanh_p, _hardtanh_native)


def _hardtanh_grad(g, out, x, min_val, max_val):
    # NOTE: PyTorch's hardtanh_backward as its vectorised loop (every contiguous element but
    # a short tail) computes it: g where min < x < max, else 0, a NaN x included (its scalar
    # loop keeps g there); an infinite or NaN g outside gives 0 (a select).
    inside = (x > min_val) & (x < max_val)
    if x.requires_grad and grad_mode.state.enabled:
        # (create_graph=True: g passed through threshold_backward on x, so that the result
        # depends on x with derivative 0, as PyTorch's does, and requires grad)
        g = threshold_grad(g, x, min_val)
    return _where(inside, g, 0.0)


defvjp(hardtanh_p, named_vjp("HardtanhBackwardBackward0", _hardtanh_grad))
defjvp1(hardtanh_p, _hardtanh_grad)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False, *, _fname: str = "hardtanh") -> Tensor:
    """x clipped to [min_val, max_val]."""
    if min_val > max_val:  # (a TypeError for non-numbers, as in PyTorch)
        raise ValueError("min_val cannot be greater than max_val")
    _no_bool(input, "Bool inputs not supported for hardtanh", _fname + "_" * bool(inplace))
    _clamp_refuses_complex(input)
    # (integer limits are read as int64, uint8 refuses negatives; each must fit the C type)
    if input._dtype._kind == INT_K:
        min_val, max_val = (int(scalar_value(v, dt.int64)) for v in (min_val, max_val))
        if input._dtype is dt.uint8 and (min_val < 0 or max_val < 0):
            raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    _fits(input, min_val, max_val)
    return _run(hardtanh_p, input, inplace, (), "", min_val=min_val, max_val=max_val)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(x, 0), 6): hardtanh on [0, 6], as PyTorch computes it."""
    return hardtanh(input, 0.0, 6.0, inplace, _fname="relu6")


def _threshold_kernel(a, threshold, value):
    # NOTE: PyTorch's `x <= threshold ? value : x`, so a NaN x or threshold keeps x; the
    # threshold compared in float32 for 16-bit floats, the value converted as a Scalar is.
    return select(a <= opmath_threshold(threshold, a.dtype), kernel_number(value, a.dtype), a)


threshold_p = unary("threshold", _threshold_kernel)


def _threshold_native(lib, a, threshold, value):
    if a.dtype.kind != "f":
        return NotImplemented
    return piecewise_native(THRESHOLD, lib, a, _as_kernel_number(threshold, a.dtype),
                             _as_kernel_number(value, a.dtype))


_register_piecewise(threshold_p, _threshold_native)
defvjp(threshold_p, lambda g, out, x, threshold, value: threshold_grad(g, x, threshold))
defjvp1(threshold_p, lambda t, out, x, threshold, value: threshold_grad(t, x, threshold))


def _fits(x: Tensor, *values) -> None:
    """Numbers outside the tensor's C type are refused, as PyTorch's Scalar conversion does."""
    for v in values:
        scalar_value(v, x._dtype)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, else `value`."""
    need_tensor(input, "threshold" + "_" * bool(inplace))
    d = input._dtype
    # (PyTorch reads the threshold in the type its kernel computes in, float for 16-bit
    # floats, truncated and wrapped for integers; the value in the input's own type)
    if d._kind == INT_K:
        threshold = int(scalar_value(threshold, d))
    else:
        threshold = real_operand(threshold, d)
    _fits(input, value)
    if inplace:
        return _run_inplace_marked(threshold_p, input, "ThresholdBackward1", None, "",
                                   "threshold_cpu", reject=(BOOL_K, COMPLEX_K),
                                   threshold=threshold, value=value)
    return _run(threshold_p, input, inplace, (BOOL_K, COMPLEX_K), "threshold_cpu",
                threshold=threshold, value=value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return globals()["threshold"](input, threshold, value, inplace=True)


# --- smooth activations (GELU's kernels: gelu.py) ----------------------------------------

def gelu(input: Tensor, *, approximate: str = "none") -> Tensor:
    """x * Phi(x), or its tanh approximation with approximate='tanh'."""
    if approximate.__class__ is not str:
        raise wrong_type("gelu", "approximate", None, "str", approximate)
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _run(gelu_p, input, False, _FLOAT_ONLY, "GeluKernelImpl", approximate=approximate)


@lowp
def _silu_kernel(a):
    # x / (1 + e^-x), as PyTorch computes it: -0 where e^-x overflows (see _sigmoid_kernel);
    # in one temporary (asarray: a 0-d input gives a NumPy scalar)
    t = np.asarray(np.negative(a))
    np.exp(t, out=t)
    np.add(t, 1, out=t)
    return np.divide(a, t, out=t)


silu_p = unary("silu", _silu_kernel)
native.register(silu_p, "activation", _smooth_native(1), min_size=(globals(), "_SMOOTH_MIN"))
# (sigmoid's twin too: the same C loop; sigmoid itself is unary.py's, which loads no library)
native.register(sigmoid_p, "activation", _smooth_native(0),
                min_size=(globals(), "_SMOOTH_MIN"))


def _silu_grad(g, out, x):
    # NOTE: as PyTorch's: under create_graph its infinitely differentiable form in its
    # order, (g s) (1 + x (1 - s)), whose last node is a product; else silu_backward, one
    # fused kernel (activation_backward.py)
    if x._dtype.is_complex:
        s = x.sigmoid()
        return g * cj(s * (1 + x * (1 - s)))
    if grad_mode.state.enabled:
        s = x.sigmoid()
        return g * s * (1 + x * (1 - s))
    return smooth_grad(silu_backward_p, g, x)


defvjp(silu_p, _silu_grad)


def _silu_tangent(t, out, x):
    if x._dtype.is_complex:
        s = x.sigmoid()
        return t * (s * (1 + x * (1 - s)))
    return _silu_grad(t, out, x)


defjvp1(silu_p, _silu_tangent)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x) (also called swish)."""
    return _run(silu_p, input, inplace, (BOOL_K, INT_K), "silu_cpu")


def _softplus_body(m, a, beta=1.0, threshold=20.0):
    # NOTE: PyTorch's formula as it is written: exp(z) overflows to inf where z passes exp's
    # range (only with a threshold raised past it: softplus(x, beta=1e30, threshold=1e40)
    # is inf at x = 1 in float64), where the stable max(z, 0) + log1p(exp(-|z|)) is not.
    # (one temporary updated in place; beta = 1 skips its product and quotient, exact)
    one = beta.__class__ in (int, float) and beta == 1
    z = a if one else a * beta
    e = np.asarray(np.exp(z))  # (asarray: a 0-d input gives a NumPy scalar)
    m.log1p(e, out=e)
    if not one:
        e = np.divide(e, beta, out=e)
    return select(z > threshold, a, e)


_softplus_kernel = lowp(_math_loops.on_numpy(_softplus_body))
softplus_p = unary("softplus", _softplus_kernel)
_register_loops(softplus_p, _softplus_body)


def _softplus_grad(g, out, x, beta, threshold):
    # (PyTorch's g * e / (e + 1), e = exp(beta x): NaN where e overflows, as its is)
    z = x * beta
    e = z.exp()
    return _where(z > threshold, g, g * e / (e + 1))


defvjp(softplus_p, named_vjp("SoftplusBackwardBackward0", _softplus_grad))
defjvp1(softplus_p, _softplus_grad)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold."""
    _number(beta, "softplus", "beta", 2)
    _number(threshold, "softplus", "threshold", 3)
    return _run(softplus_p, input, False, _FLOAT_ONLY, "softplus_cpu", beta=beta,
                threshold=threshold)


def _mish_body(m, a):
    return a * m.tanh(np.maximum(a, 0) + m.log1p(np.exp(-np.abs(a))))


mish_p = unary("mish", lowp(_math_loops.on_numpy(_mish_body)))
_register_loops(mish_p, _mish_body)


def _mish_grad(g, out, x):
    t = softplus(x).tanh()
    return g * (t + x * x.sigmoid() * (1 - t * t))


defvjp(mish_p, _mish_grad)
defjvp1(mish_p, _mish_grad)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x))."""
    return _run(mish_p, input, inplace, _FLOAT_ONLY, "mish_cpu")


@lowp
def _leaky_relu_kernel(a, negative_slope=0.01):
    return select(a > 0, a, a * negative_slope)


leaky_relu_p = unary("leaky_relu", _leaky_relu_kernel)


def _leaky_relu_native(lib, a, negative_slope=0.01):
    return piecewise_native(LEAKY, lib, a, _as_kernel_number(negative_slope, a.dtype))


_register_piecewise(leaky_relu_p, _leaky_relu_native)


def _leaky_relu_grad(g, out, x, negative_slope):
    return _where(x > 0, g, g * negative_slope)


def _leaky_relu_vjp(g, out, x, negative_slope):
    if x.requires_grad and grad_mode.state.enabled:
        # (create_graph=True: the positive side's g selected by threshold_backward on x, so
        # that the result depends on x with derivative 0, as PyTorch's leaky_relu_backward)
        return _where(x > 0, threshold_grad(g, x, 0), g * negative_slope)
    return _leaky_relu_grad(g, out, x, negative_slope)


defvjp(leaky_relu_p, named_vjp("LeakyReluBackwardBackward0", _leaky_relu_vjp))
defjvp1(leaky_relu_p, _leaky_relu_grad)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x where x > 0, else negative_slope * x."""
    _number(negative_slope, "leaky_relu", "negative_slope", 2)
    if inplace:
        return _run_inplace_marked(leaky_relu_p, input, "LeakyReluBackward1", negative_slope,
                                   _LEAKY_NEGATIVE_SLOPE, "leaky_relu_cpu",
                                   negative_slope=negative_slope)
    return _run(leaky_relu_p, input, inplace, _FLOAT_ONLY, "leaky_relu_cpu",
                negative_slope=negative_slope)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return leaky_relu(input, negative_slope, inplace=True)


# --- the ELU family: scale * (x if x > 0 else alpha * (exp(x * input_scale) - 1)) ----------

def _elu_body(m, a, alpha=1.0, scale=1.0, input_scale=1.0):
    # NOTE: PyTorch's arithmetic: x * scale, or expm1(x * input_scale) * (alpha * scale) with
    # the coefficients read in the type computed in (float32 for 16-bit floats).
    # (expm1 over every x, kept where x <= 0 or NaN: elu(-0) is -0, as PyTorch's
    # expm1(-0) * alpha; a product by a constant 1 is skipped, exact)
    t = a.dtype.type
    neg = np.asarray(m.expm1(a if input_scale == 1 else a * t(input_scale)))
    coef = t(alpha) * t(scale)
    if coef != 1:
        np.multiply(neg, coef, out=neg)
    return select(a > 0, a if scale == 1 else a * t(scale), neg)


def _elu_grad(g, out, x, alpha, scale, input_scale):
    # NOTE: PyTorch's elu_backward as its vectorised loop computes it: x > 0 ? g * scale :
    # g * scale * alpha * input_scale * exp(x * input_scale), so a NaN x gives NaN (its scalar
    # loop, on a short tail or a strided input, takes the linear side). Its own derivative
    # in x is nonzero only where x < 0 (elu_double_backward's mask), so the exponential reads
    # x there only: 0 at x = 0, and no inf from the unused side (x large); a NaN x passes
    # into the exponential with no derivative of its own (the double backward's 0 there).
    neg_x = _where(x < 0, x, _where(x >= 0, 0.0, x.detach()))
    neg = g * (scale * alpha * input_scale) * (neg_x * input_scale).exp()
    return _where(x > 0, g * scale, neg)


_elu_kernel = lowp(_math_loops.on_numpy(_elu_body))

# elu, selu and celu are one ELU with its constants; PyTorch names celu's node apart
elu_p = unary("elu", _elu_kernel)
celu_p = unary("celu", _elu_kernel)
for _m in (elu_p, celu_p):  # (both differentiate with elu_backward)
    _register_loops(_m, _elu_body)
    defvjp(_m, named_vjp("EluBackwardBackward0", _elu_grad))
    defjvp1(_m, _elu_grad)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x if x > 0 else alpha * (exp(x) - 1)."""
    _number(alpha, "elu", "alpha", 2)
    if inplace:
        return _run_inplace_marked(elu_p, input, "EluBackward1", alpha, _ELU_NEGATIVE_SLOPE,
                                   "elu_cpu", alpha=alpha, scale=1.0, input_scale=1.0)
    return _run(elu_p, input, inplace, _FLOAT_ONLY, "elu_cpu", alpha=alpha, scale=1.0,
                input_scale=1.0)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return elu(input, alpha, inplace=True)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """The self-normalising ELU: scale * elu(x, alpha) with the fixed SELU constants."""
    if inplace:
        return _run_inplace_marked(elu_p, input, "EluBackward1", None, "", "elu_cpu", "selu",
                                   alpha=SELU_ALPHA, scale=SELU_SCALE, input_scale=1.0)
    return _run(elu_p, input, inplace, _FLOAT_ONLY, "elu_cpu", "selu", alpha=SELU_ALPHA,
                scale=SELU_SCALE, input_scale=1.0)


def selu_(input: Tensor) -> Tensor:
    return selu(input, inplace=True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    _number(alpha, "celu", "alpha", 2)
    alpha = real_operand(alpha, dt.float64)  # (celu reads alpha as a double first)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    if inplace:
        return _run_inplace_marked(celu_p, input, "CeluBackward1", alpha, _ELU_NEGATIVE_SLOPE,
                                   "elu_cpu", alpha=alpha, scale=1.0, input_scale=1.0 / alpha)
    return _run(celu_p, input, inplace, _FLOAT_ONLY, "elu_cpu", alpha=alpha, scale=1.0,
                input_scale=1.0 / alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return celu(input, alpha, inplace=True)


# --- hard approximations ---------------------------------------------------------------

def _relu6_of_x_plus_3(a):
    """min(max(x + 3, 0), 6) in one fresh array (x + 3 is never -0.0: no tie to order)."""
    t = np.asarray(np.add(a, 3))  # (asarray: a 0-d input gives a NumPy scalar)
    np.maximum(t, 0, out=t)
    return np.minimum(t, 6, out=t)


@lowp
def _hardsigmoid_kernel(a):
    t = _relu6_of_x_plus_3(a)
    return np.divide(t, 6, out=t)


hardsigmoid_p = unary("hardsigmoid", _hardsigmoid_kernel)
_register_piecewise(hardsigmoid_p, lambda lib, a: piecewise_native(HARDSIGMOID, lib, a))
defvjp(hardsigmoid_p, lambda g, out, x: hardsigmoid_grad(g, x))
defjvp1(hardsigmoid_p, lambda t, out, x: hardsigmoid_grad(t, x))


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """relu6(x + 3) / 6."""
    return _run(hardsigmoid_p, input, inplace, _FLOAT_ONLY, "hardsigmoid_cpu")


@lowp
def _hardswish_kernel(a):
    t = _relu6_of_x_plus_3(a)
    np.multiply(a, t, out=t)
    return np.divide(t, 6, out=t)


hardswish_p = unary("hardswish", _hardswish_kernel)
_register_piecewise(hardswish_p, lambda lib, a: piecewise_native(HARDSWISH, lib, a))


def _hardswish_grad(g, out, x):
    # NOTE: PyTorch's (2.13) backward as its vectorised loop computes it: 0 up to -3, g from
    # 3, g * (x / 3 + 0.5) between and at a NaN x (NaN; its scalar loop, on a short tail or
    # a strided input, gives g there).
    # (a NaN x with no derivative of its own: the double backward's 0 there, as PyTorch's)
    mid = _where((x > -3) & (x < 3), x, x.detach()) if (
        x.requires_grad and grad_mode.state.enabled) else x
    return _where(x <= -3, 0.0, _where(x >= 3, g, g * (mid / 3 + 0.5)))


defvjp(hardswish_p, named_vjp("HardswishBackwardBackward0", _hardswish_grad))
defjvp1(hardswish_p, _hardswish_grad)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * relu6(x + 3) / 6."""
    return _run(hardswish_p, input, inplace, _FLOAT_ONLY, "hardswish_cpu")


def logsigmoid_body(m, a):
    """log(sigmoid(a)) as min(a, 0) - log1p(exp(-|a|)), over the `Loops` m."""
    return np.minimum(a, 0) - m.log1p(np.exp(-np.abs(a)))


logsigmoid_p = unary("log_sigmoid", lowp(_math_loops.on_numpy(logsigmoid_body)),
                     grad_name="LogSigmoidBackward0")
_register_loops(logsigmoid_p, logsigmoid_body)
MEMBER_LAYOUT["log_sigmoid"] = "contiguous"  # (PyTorch's result is row-major, whatever x's)
defvjp(logsigmoid_p, named_vjp("LogSigmoidBackwardBackward0", lambda g, out, x: g * (-x).sigmoid()))
defjvp1(logsigmoid_p, lambda t, out, x: t * (-x).sigmoid())


def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x)), without overflow for large |x|."""
    return _run(logsigmoid_p, input, False, _FLOAT_ONLY, "log_sigmoid_cpu")


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|) (a composite, as in PyTorch)."""
    return input / (1 + input.abs())


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x) (a composite, as in PyTorch)."""
    return input - input.tanh()


def _method(fn):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    method.__name__ = fn.__name__
    return method


TENSOR_METHODS = {"relu": _method(relu), "relu_": relu_}

__all__ = ["relu", "relu_", "selu", "selu_", "celu", "celu_", "threshold", "threshold_"]
