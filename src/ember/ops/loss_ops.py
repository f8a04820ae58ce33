"""Pointwise losses as one fused primitive family: mse, smooth L1, Huber, BCE, BCE with
logits, soft margin.

# NOTE: these are listed exceptions to "composites get no VJP": `pointwise_loss` is one
# primitive whose member (`fn=`) is the loss; it computes the elementwise loss and its
# reduction in one pass (no chain of temporaries and graph nodes), and the result's
# grad_fn is the node PyTorch shows (`MseLossBackward0` ...), which programs print with
# every loss.

Each kernel returns the reduced loss for reduction "mean" / "sum", or the elementwise
loss for "none"; each VJP is written with ember ops, so double backward works. Each
member also has its elementwise partial derivatives in both operands (`_partials`), from
which its forward-mode rule is built (the target's too, where PyTorch gives it no VJP:
forward mode differentiates whatever varies).
"""

from __future__ import annotations

import numpy as np

from .. import native
from .._view import broadcast_shapes, numel
from ..native import calls
from . import _math_loops
from ._common import broadcast_errors, layout_like, select, tensoriterator_family
from .registry import Family, Member, apply, bind, defbatch, defjvp, defvjp, rename_node
from .unary import lowp, named_vjp

pointwise_loss_p = Family("pointwise_loss")
tensoriterator_family(pointwise_loss_p)  # (reduction="none": TensorIterator's layout)


def _reduce_array(loss: np.ndarray, reduction: str) -> np.ndarray:
    if reduction == "none":
        return loss
    total = loss.sum(dtype=np.float32 if loss.dtype.itemsize == 2 else loss.dtype)
    if reduction == "mean":
        total = total / max(loss.size, 1) if loss.size else np.array(np.nan, loss.dtype)
    return np.asarray(total).astype(loss.dtype)


def _loss_meta(name: str):
    """The meta rule of loss `name`: a 0-d result when reduced, else the elementwise loss
    laid out as TensorIterator's (`_common.laid_meta` lays out a member's own way)."""
    def meta(a, b, *, reduction, **_):
        if reduction != "none":
            return (), a._dtype
        shape = broadcast_shapes(a._shape, b._shape)
        return shape, a._dtype, layout_like([a, b], shape)

    return meta


def _scale(g, a, b, reduction: str):
    """The incoming gradient spread over the elements the loss reduced."""
    if reduction == "mean":
        n = numel(broadcast_shapes(a._shape, b._shape))
        return g / n if n else g
    return g


def _norm(a, b, reduction: str, factor: float = 1.0) -> float:
    """PyTorch's backward kernels' `norm`: factor / numel for "mean" (one number, rounded
    to the gradient's dtype where it multiplies), else factor."""
    if reduction == "mean":
        n = numel(broadcast_shapes(a._shape, b._shape))
        return factor / n if n else float("inf")
    return factor


def _named_vjps(member: Member, grad) -> None:
    """`grad(g, out, a, b, ...)` as the VJP of both operands (the target's with them
    swapped), each named as PyTorch's one backward kernel (`MseLossBackwardBackward0`): what
    a create_graph gradient's grad_fn shows."""
    name = member.grad_name.replace("Backward0", "BackwardBackward0")
    defvjp(member, named_vjp(name, grad),
           named_vjp(name, lambda g, out, a, b, **kw: grad(g, out, b, a, **kw)))


def _partials_jvp(partials):
    """The forward rule of a loss whose elementwise partials are `partials(a, b, **params)`:
    the tangent is sum_i d_i * t_i, reduced as the loss is."""
    def jvp(primals, tangents, out, *, reduction, **params):
        a, b = primals
        da, db = partials(a, b, **params)
        t = None
        for d, ti in ((da, tangents[0]), (db, tangents[1])):
            if ti is not None:
                t = d * ti if t is None else t + d * ti
        if t is None:
            return None
        shape = broadcast_shapes(a._shape, b._shape)
        if reduction == "none":
            return t.expand(shape) if t._shape != shape else t
        total = t.sum() if t._shape == shape else t.expand(shape).sum()
        return total / numel(shape) if reduction == "mean" else total

    return jvp


def _loss_member(name: str, elementwise, grad_name: str, partials, loops=(),
                 param: str | None = None) -> Member:
    """The loss `name` of `elementwise(a, b, **params)`, reduced. With `loops` (dtypes),
    `elementwise` is a body `(m, a, b, **params)` over a `_math_loops` Loops, with a native
    twin for inputs of those dtypes; with `param` (the loss's parameter, or "" for none),
    csrc/pointwise_loss.c's one pass is its twin."""
    body = elementwise
    if loops:
        elementwise = _math_loops.on_numpy(body)

    @broadcast_errors
    def kernel(a, b, *, reduction, **params):
        return _reduce_array(np.asarray(elementwise(a, b, **params)), reduction)

    member = Member(pointwise_loss_p, name, kernel, _loss_meta(name), grad_name=grad_name)
    defjvp(member, _partials_jvp(partials))
    if loops:
        _register_twin(member, "math_maps", _math_loops.twin(body, loops),
                       (_math_loops.NATIVE_MIN, "n"))
    elif param is not None:
        _register_twin(member, "pointwise_loss", _pointwise_twin(name, param),
                       (_POINTWISE_MIN, name))
    return member


def _register_twin(member: Member, family: str, twin, min_size: tuple) -> None:
    """`twin(lib, a, b, **params)`, the elementwise loss in C, as `member`'s native kernel
    (the reduction after it NumPy's, as the NumPy kernel's)."""
    @broadcast_errors
    def native_kernel(lib, a, b, *, reduction, **params):
        got = twin(lib, a, b, **params)
        return got if got is NotImplemented else _reduce_array(np.asarray(got), reduction)

    native.register(member, family, native_kernel, min_size=min_size)


# csrc/pointwise_loss.c's kinds (its EMBER_LOSS_* enum, in order)
_POINTWISE = {"mse_loss": 0, "smooth_l1_loss": 1, "huber_loss": 2}
# The fewest elements each is tried for (the same bits as the NumPy kernel either way): MSE's
# two NumPy passes cost less than the call below 16K elements (measured, one thread: 4.1 us
# against 5.6 at 4K, equal at 16K, 26.7 against 21.4 at 64K); smooth L1's and Huber's five
# to seven cost more at any size (640 elements: 14.2 -> 12.3 us)
_POINTWISE_MIN = {"mse_loss": 1 << 14, "smooth_l1_loss": 1, "huber_loss": 1}


def _pointwise_twin(name: str, param: str):
    """The elementwise loss `name` in one C pass, for float32 / float64 operands of one shape
    and a parameter that is a Python number (NumPy rounds such a number to the array's
    type, as the C kernel does; a NumPy float64 would widen the NumPy kernel's arithmetic)."""
    kind = _POINTWISE[name]

    def twin(lib, a, b, **params):
        value = params.get(param, 0.0) if param else 0.0
        sfx = calls.suffix(a, b)
        if sfx is None or a.shape != b.shape or type(value) not in (int, float):
            return NotImplemented
        a, b = calls.c_order(a), calls.c_order(b)
        out = np.empty(a.shape, a.dtype)
        calls.entry(lib, f"pointwise_loss_{sfx}", [calls.P] * 3 + [calls.I64, calls.INT,
                                                                   calls.F64], calls.INT)(
            calls.ptr(a), calls.ptr(b), calls.ptr(out), a.size, kind, float(value))
        return out

    twin.__name__ = f"_{name}_native"
    return twin


# --- mse -----------------------------------------------------------------------------

def _mse(a, b):
    # NOTE: asarray: NumPy returns a scalar, not an array, for two 0-d operands
    d = np.asarray(np.subtract(a, b))
    np.multiply(d, d, out=d)
    return d


def _mse_partials(a, b):
    d = 2 * (a - b)
    return d, -d


mse_loss_p = _loss_member("mse_loss", _mse, "MseLossBackward0", _mse_partials, param="")


# NOTE (mse, smooth L1, Huber): each VJP is PyTorch's backward kernel, norm * slope * grad in
# that order, and the target's is the same kernel with the operands swapped (so an equal
# input and target give +0 to both, and the last bits are torch's).

def _mse_grad(g, out, a, b, *, reduction):
    return _norm(a, b, reduction, 2.0) * (a - b) * g


_named_vjps(mse_loss_p, _mse_grad)


# --- smooth L1 and Huber ----------------------------------------------------------------

def _smooth_l1(a, b, *, beta):
    d = np.abs(np.subtract(a, b))
    return select(d < beta, 0.5 * d * d / beta, d - 0.5 * beta).astype(d.dtype, copy=False)


def _smooth_l1_slope(a, b, beta):
    from .ternary import where

    d = a - b
    return where(d.abs() < beta, d / beta, d.sign())


def _smooth_l1_grad(g, out, a, b, *, reduction, beta):
    return _norm(a, b, reduction) * _smooth_l1_slope(a, b, beta) * g


def _smooth_l1_partials(a, b, *, beta):
    s = _smooth_l1_slope(a, b, beta)
    return s, -s


smooth_l1_loss_p = _loss_member("smooth_l1_loss", _smooth_l1, "SmoothL1LossBackward0",
                                _smooth_l1_partials, param="beta")
_named_vjps(smooth_l1_loss_p, _smooth_l1_grad)


def _huber(a, b, *, delta):
    d = np.abs(np.subtract(a, b))
    return select(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)).astype(d.dtype, copy=False)


def _huber_grad(g, out, a, b, *, reduction, delta):
    return _norm(a, b, reduction) * (a - b).clamp(-delta, delta) * g


def _huber_partials(a, b, *, delta):
    s = (a - b).clamp(-delta, delta)
    return s, -s


huber_loss_p = _loss_member("huber_loss", _huber, "HuberLossBackward0", _huber_partials,
                            param="delta")
_named_vjps(huber_loss_p, _huber_grad)


# --- binary cross-entropy -------------------------------------------------------------------

def _bce(m, x, t):
    # NOTE: each log is clamped at -100, as PyTorch does, so x = 0 or 1 stays finite.
    with np.errstate(divide="ignore"):
        log_x = np.maximum(np.log(x), -100)
        log_1mx = np.maximum(m.log1p(-x), -100)
    return -(t * log_x + (1 - t) * log_1mx)


def _bce_slope(x, t):
    # d/dx = (x - t) / (x (1 - x)), with x(1-x) floored like PyTorch's EPSILON (1e-12)
    return (x - t) / (x * (1 - x)).clamp_min(1e-12)


def _bce_target_slope(x, t):
    return (1 - x).log().clamp_min(-100) - x.log().clamp_min(-100)


def _mean_after(grad, x, t, reduction: str):
    """PyTorch's BCE backwards divide by numel last (`grad_input.div_(numel)`: the
    Tensor-by-Scalar node, DivBackward1)."""
    if reduction == "mean":
        n = numel(broadcast_shapes(x._shape, t._shape))
        if n:
            grad = grad / n
            if grad.grad_fn is not None:
                rename_node(grad.grad_fn, "DivBackward1")
    return grad


def _bce_grad_input(g, out, x, t, *, reduction):
    # g (x - t) / max((1 - x) x, 1e-12), as PyTorch's kernel orders it
    return _mean_after(g * (x - t) / ((1 - x) * x).clamp_min(1e-12), x, t, reduction)


def _bce_grad_target(g, out, x, t, *, reduction):
    # -logit(x) g: unclamped, so x = 0 or 1 gives an infinite slope, as in PyTorch
    return _mean_after(-x.logit() * g, x, t, reduction)


bce_p = _loss_member("binary_cross_entropy", _bce, "BinaryCrossEntropyBackward0",
                     lambda x, t: (_bce_slope(x, t), _bce_target_slope(x, t)),
                     loops=(np.float32,))  # (float64: NumPy's log1p is torch's, the same bits)
defvjp(bce_p, named_vjp("BinaryCrossEntropyBackwardBackward0", _bce_grad_input),
       _bce_grad_target)


def _bce_logits(m, x, t):
    # (1 - t) x - logsigmoid(x), PyTorch's steps (np.logaddexp(0, -x) is one libm call per
    # element here: 20x slower); a 16-bit x's logsigmoid in float32, as its own kernel's
    from .activation import logsigmoid_body

    return (1 - t) * x - lowp(lambda a: logsigmoid_body(m, a))(x)


def _bce_logits_grad_input(g, out, x, t, *, reduction):
    return _mean_after((x.sigmoid() - t) * g, x, t, reduction)


def _bce_logits_grad_target(g, out, x, t, *, reduction):
    return _mean_after(-x * g, x, t, reduction)


bce_logits_p = _loss_member("binary_cross_entropy_with_logits", _bce_logits,
                            "BinaryCrossEntropyWithLogitsBackward0",
                            lambda x, t: (x.sigmoid() - t, -x), loops=(np.float32, np.float64))
defvjp(bce_logits_p, _bce_logits_grad_input, _bce_logits_grad_target)


# NOTE: soft margin is PyTorch's log1p(exp(-x * t)), not a stable softplus: like torch it
# overflows to inf (and its gradient to NaN) where -x * t passes the dtype's exp range, and
# the backward is torch's kernel in its order, (t * z) * -norm / (z + 1) * g, z = exp(-t x).

def _soft_margin(x, t):
    z = np.asarray(np.multiply(np.negative(x), t))
    # (float32's exp and log1p each evaluated in float64 and rounded, as torch rounds each
    # step: NumPy's own float32 log1p is off by up to 2 ulp, log1p(exp(-1)) among them)
    wide = np.float64 if z.dtype == np.float32 else z.dtype
    with np.errstate(over="ignore"):
        z = np.exp(z, dtype=wide).astype(z.dtype)
    return np.log1p(z, dtype=wide).astype(z.dtype)


def _soft_margin_grad_input(g, out, x, t, *, reduction):
    z = (-t * x).exp()
    return t * z * -_norm(x, t, reduction) / (z + 1) * g


def _soft_margin_partials(x, t):
    s = (-t * x).sigmoid()
    return -t * s, -x * s


soft_margin_p = _loss_member("soft_margin_loss", _soft_margin, "SoftMarginLossBackward0",
                             _soft_margin_partials)
# NOTE: not differentiable in the target, as in PyTorch (forward mode still follows it).
defvjp(soft_margin_p, named_vjp("SoftMarginLossBackwardBackward0", _soft_margin_grad_input),
       None)


# --- vmap: one rule for every member ----------------------------------------------------------

def _loss_batch(args, dims, *, fn, reduction, **params):
    """Both operands with the batch first and their logical ranks padded alike, the
    elementwise loss, then the reduction over all but the batch axis."""
    from ._batching import aligned

    a, b = aligned(args, dims)
    out = bind(pointwise_loss_p, a, b, fn=fn, reduction="none", **params)
    if reduction == "none":
        return out, 0
    rest = tuple(range(1, out.ndim))
    if reduction == "sum":
        return out.sum(rest) if rest else out, 0
    return out.mean(rest) if rest else out, 0


defbatch(pointwise_loss_p, _loss_batch)


def pointwise_loss(loss: Member, input, target, reduction: str, **params):
    """Run one of the losses above (the public functions live in nn.functional)."""
    return apply(pointwise_loss_p, input, target, fn=loss, reduction=reduction, **params)


TENSOR_METHODS: dict = {}

__all__: list = []
