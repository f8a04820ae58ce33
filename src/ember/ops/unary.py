"""Unary elementwise ops: the `unary` family, its factory, and the core math functions.

Every pointwise map of one tensor (exp, log, sin ... relu, gelu ... lgamma, i0 ...) is a
member of ONE primitive, the family `unary_p`, bound as `apply(unary_p, x, fn=exp_p)`:
the member (named `exp_p` like the primitive it once was) holds its kernel, meta rule and
PyTorch node name (`ExpBackward0`), with its VJP and JVP registered on the next lines.
The family's vmap rule is one for all of them: an elementwise map keeps the batch axis
where it is. `unary_api` turns a member into its public function and in-place method
under one of three dtype policies, the ones PyTorch's kernels follow:

- FLOAT: integer and bool inputs are cast to the default dtype first
  (`torch.tensor([1, 4]).sqrt()` is float32); in place on an integer tensor raises.
- SAME: the result keeps the input's dtype (`neg`, `floor`, `sign` ...).
- BOOL: the result is a bool tensor (`isnan`, `logical_not` ...).

Dtypes an op does not support raise NotImplementedError with PyTorch's
'"op_cpu" not implemented for ...' text. float16 / bfloat16 compute in float32
and round once (`lowp`). The rest of the unary math lives in `unary_math.py`,
the activations in `activation.py`.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode
from .._tensor import Tensor
from . import _complex_math
from ._arg_parser_text import method_aware, need_tensor
from ._common import same_meta, tensoriterator_family, to_float, type_name, write_out
from ._half_casts import cast, widen
from .registry import (
    Family,
    Member,
    apply,
    apply_,
    bind,
    check_overlap,
    defbatch,
    defjvp,
    deflinear,
    deflower,
    defvjp,
    nondifferentiable,
    rename_node,
)

FLOAT, SAME, BOOL = "float", "same", "bool"
BOOL_K, INT_K, FLOAT_K, COMPLEX_K = 0, 1, 2, 3
_F32 = np.dtype(np.float32)


def lowp(fn):
    """Run kernel `fn` in float32 for float16 / bfloat16 inputs and round the result once."""
    def kernel(a, *args, **params):
        d = a.dtype
        if d.itemsize == 2 and d.kind in "fV":
            return cast(np.asarray(fn(widen(a), *args, **params)), d)
        return fn(a, *args, **params)

    kernel.__name__ = getattr(fn, "__name__", "kernel")
    return kernel


def _same_meta(x, **params):
    return same_meta(x)


# One primitive for every pointwise map of one tensor; the function is the static param `fn`.
unary_p = Family("unary")


def _unary_batch(args, dims, **params):
    """vmap of any member: the map is elementwise, so the batch axis stays where it is."""
    return bind(unary_p, args[0], **params), dims[0]


defbatch(unary_p, _unary_batch)
tensoriterator_family(unary_p)  # (a broadcast input laid out as TensorIterator's)


def unary(name: str, kernel, *, grad_name: str | None = None, meta=_same_meta) -> Member:
    """A new member of the `unary` family (its node name defaults to `<Name>Backward0`)."""
    return Member(unary_p, name, kernel, meta, grad_name=grad_name)


def defjvp1(member: Member, fn) -> None:
    """Register a one-input member's JVP as `fn(t, out, x, **params)`: the output's tangent
    for the input's tangent `t` (never None here), `out` the primal output."""
    def rule(primals, tangents, out, **params):
        t = tangents[0]
        return None if t is None else fn(t, out, primals[0], **params)

    defjvp(member, rule)


def bool_meta(x: Tensor):
    return same_meta(x, dt.bool_)


def not_implemented(name: str, d: dt.dtype) -> NotImplementedError:
    return NotImplementedError(f'"{name}" not implemented for \'{type_name(d)}\'')


FOUND_DTYPE = "Found dtype {out} but expected {expected}"


def check_exact_out(input: Tensor, out, message: str = FOUND_DTYPE) -> None:
    """PyTorch's same-dtype unary ops (abs, neg, sign, floor ...) write only into an `out` of
    the input's own dtype, checked before their kernel is chosen. (An `out=` call that must
    record a gradient is refused first, by `write_out`, as in PyTorch.)"""
    if out is None or not isinstance(out, Tensor) or out._dtype is input._dtype:
        return
    if _grad_mode.state.enabled and (input._requires_grad or out._requires_grad):
        return
    raise RuntimeError(message.format(out=type_name(out._dtype),
                                      expected=type_name(input._dtype)))


def unary_api(prim: Member, doc: str, *, result: str = FLOAT, reject=(), kname=None,
              name: str | None = None, fixed: dict | None = None, no_complex: bool = False,
              exact_out: str | None = None):
    """The public function `op(input, *, out=None, **params)` and method `op_(self, **params)`
    binding member `prim` of the `unary` family.

    `reject` lists dtype kinds (BOOL_K ... COMPLEX_K) the kernel does not take;
    `kname` is the kernel name PyTorch's NotImplementedError quotes. `no_complex`: PyTorch
    refuses complex inputs before choosing a kernel ("floor is not supported for complex
    inputs"). Where one member serves several functions, `name` is this one's and `fixed` the
    static params it binds. `exact_out`: the message refusing an `out` of another dtype than
    the input's (`FOUND_DTYPE`), or "" where PyTorch's function takes no `out` at all.
    """
    name = name or prim.name
    kname = kname or name + "_cpu"
    reject = frozenset(reject) | ({COMPLEX_K} if no_complex else set())

    def refusal(d: dt.dtype) -> NotImplementedError:  # (the error path only)
        if no_complex and d.is_complex:
            return NotImplementedError(f"{name} is not supported for complex inputs")
        return not_implemented(kname, d)

    extra = {"fn": prim, **(fixed or {})}
    float_in = result == FLOAT

    # NOTE: the dtype checks are inline (no helper calls): exp, tanh, sigmoid ... are hot.
    def op(input: Tensor, *, out=None, **params) -> Tensor:
        if not isinstance(input, Tensor):
            need_tensor(input, name)
        if not input._strided and out is None:  # a sparse layout's own form, if it has one
            own = type(input).__dict__.get(name)  # (sparse COO: ops/sparse_pointwise.py)
            if own is not None:
                return own(input, **params)
        if exact_out is not None and out is not None:
            if not exact_out:
                raise TypeError(f"{name}() got an unexpected keyword argument 'out'")
            check_exact_out(input, out, exact_out)
        kind = input._dtype._kind
        if kind in reject:
            raise refusal(input._dtype)
        if float_in and kind < 2:
            input = to_float(input)
        res = apply(unary_p, input, fn=prim, **params) if not fixed else \
            apply(unary_p, input, **extra, **params)
        return res if out is None else write_out(res, out, (input,))

    def op_(self: Tensor, **params) -> Tensor:
        check_overlap(self)
        need_tensor(self, name)
        kind = self._dtype._kind
        if kind in reject:
            raise refusal(self._dtype)
        if float_in and kind < 2 or result == BOOL and kind:
            produced = dt.get_default_dtype() if float_in else dt.bool_
            raise RuntimeError(f"result type {type_name(produced)} can't be cast to the desired "
                               f"output type {type_name(self._dtype)}")
        return apply_(unary_p, self, **extra, **params)

    op.__name__, op_.__name__ = name, name + "_"
    op.__doc__ = op_.__doc__ = doc
    return method_aware(op), op_


def cj(t: Tensor) -> Tensor:
    """`t.conj()` for complex tensors (VJPs multiply by the conjugate derivative)."""
    return t.conj() if t._dtype.is_complex else t


def zero_grad(g, out, x, **params):
    """VJP of a piecewise-constant op (floor, sign, round ...): zeros, also where the incoming
    gradient is inf or NaN (PyTorch's `zeros_like(grad)`, not `grad * 0`)."""
    from .creation import zeros_like

    return zeros_like(g)


def zero_tangent(t, out, x, **params):
    """JVP of a piecewise-constant op: zeros (linear in `t`, as every tangent is)."""
    from .creation import zeros_like

    return zeros_like(t)


def named_vjp(name: str, rule):
    """VJP rule `rule`, its result's node renamed `name`: PyTorch differentiates these ops
    with one derivative op (tanh_backward ...), so a create_graph=True gradient's grad_fn
    is that op's node (`TanhBackwardBackward0`), not the last step of ember's composite."""
    def named(g, out, *inputs, **params):
        r = rule(g, out, *inputs, **params)
        if r is not None and r.grad_fn is not None and r is not g and all(
                r is not x for x in inputs):
            rename_node(r.grad_fn, name)
        return r

    return named


# --- the core functions, each with its derivatives ---------------------------------------
# (The JVPs multiply by f'(x) itself where the VJPs multiply by its conjugate: a
# holomorphic map's tangent is f'(z) t.)

neg_p = unary("neg", np.negative)
deflower(neg_p, "-{0}")
defvjp(neg_p, lambda g, out, x: -g, reads=((),))
deflinear(neg_p)

exp_p = unary("exp", lowp(np.exp))
deflower(exp_p, "ember_exp_t({0})", ulps=1)
defvjp(exp_p, lambda g, out, x: g * cj(out), reads=((),), save_output=True)
defjvp1(exp_p, lambda t, out, x: t * out)

log_p = unary("log", lowp(np.log))
deflower(log_p, "ember_log_t({0})", ulps=1)
defvjp(log_p, lambda g, out, x: g / cj(x))
defjvp1(log_p, lambda t, out, x: t / x)

sqrt_p = unary("sqrt", lowp(np.sqrt))
deflower(sqrt_p, "EMBER_SQRT({0})")  # correctly rounded in both
defvjp(sqrt_p, lambda g, out, x: g / (2 * cj(out)), reads=((),), save_output=True)
defjvp1(sqrt_p, lambda t, out, x: t / (2 * out))

sin_p = unary("sin", lowp(np.sin))
defvjp(sin_p, lambda g, out, x: g * cj(x.cos()))
defjvp1(sin_p, lambda t, out, x: t * x.cos())

cos_p = unary("cos", lowp(np.cos))
defvjp(cos_p, lambda g, out, x: -g * cj(x.sin()))
defjvp1(cos_p, lambda t, out, x: -t * x.sin())

def _fused_grad(name: str, composite):
    """A derivative through activation_backward.py's fused kernel `name` (PyTorch's
    tanh_backward / sigmoid_backward: one op, its node under create_graph), or for complex
    outputs `composite(g, out)` (with its conjugate)."""
    def rule(g, out, x):
        if out._dtype.is_complex:
            return composite(g, cj(out))
        from . import activation_backward as ab

        return ab.smooth_grad(getattr(ab, f"{name}_p"), g, out)

    def tangent(t, out, x):
        if out._dtype.is_complex:
            return composite(t, out)
        return rule(t, out, x)

    return named_vjp(name.title().replace("_", "") + "Backward0", rule), tangent


tanh_p = unary("tanh", lowp(np.tanh))
deflower(tanh_p, "ember_tanh_t({0})", ulps=3)
_tanh_grad, _tanh_tangent = _fused_grad("tanh_backward", lambda g, y: g * (1 - y * y))
defvjp(tanh_p, _tanh_grad, reads=((),), save_output=True)
defjvp1(tanh_p, _tanh_tangent)


@lowp
def _sigmoid_kernel(a):
    # NOTE: 1 / (1 + e^-a) in the precision computed in, as PyTorch's CPU kernels (scalar
    # and vectorised) compute it: where e^-a overflows (a < -88.72 in float32, -709.78 in
    # float64) the result is 0, not the subnormal a split at 0 would give (PyTorch's
    # sigmoid(-100.0) in float32 is 0, and binary_cross_entropy's log clamp sees it).
    if a.dtype.kind == "c":  # (1 / w by Smith's division, as PyTorch's complex kernel)
        with np.errstate(over="ignore", invalid="ignore"):
            return _complex_math.reciprocal(1 + np.exp(-a))
    return 1 / (1 + np.exp(-a))


sigmoid_p = unary("sigmoid", _sigmoid_kernel)
deflower(sigmoid_p, "ember_sigmoid_t({0})", ulps=3)
_sigmoid_grad, _sigmoid_tangent = _fused_grad("sigmoid_backward",
                                              lambda g, y: g * (y * (1 - y)))
defvjp(sigmoid_p, _sigmoid_grad, reads=((),), save_output=True)
defjvp1(sigmoid_p, _sigmoid_tangent)


def _abs_meta(x):
    return same_meta(x, x._dtype.to_real())


def _abs_tangent(t, out, x):
    # |z| is not holomorphic: its tangent is Re(conj(sgn z) t), real
    if x._dtype.is_complex:
        return (t * x.sgn().conj()).real
    return t * x.sgn()


def _abs_kernel(a):
    return _complex_math.modulus(a) if a.dtype.kind == "c" else np.abs(a)


abs_p = unary("abs", _abs_kernel, meta=_abs_meta)
deflower(abs_p, "EMBER_ABS({0})")
defvjp(abs_p, lambda g, out, x: g * x.sgn())
defjvp1(abs_p, _abs_tangent)


def _sign_kernel(a):
    if a.dtype == np.bool_:
        return a.copy()
    # NOTE: written as (a > 0) - (a < 0) so NaN gives 0, as PyTorch's sign does.
    return (np.greater(a, 0).astype(np.int8) - np.less(a, 0)).astype(a.dtype)


sign_p = unary("sign", _sign_kernel)
defvjp(sign_p, zero_grad, reads=((),))
defjvp1(sign_p, zero_tangent)


def _sgn_kernel(a):
    if a.dtype.kind != "c":
        return _sign_kernel(a)
    return _complex_math.sgn(a)


sgn_p = unary("sgn", _sgn_kernel)


def _sgn_grad(g, out, x):
    # PyTorch's sgn_backward: (g - Re(g * conj(sgn)) * sgn) / |x|, zero where x == 0.
    if not x._dtype.is_complex:
        return g * 0
    from .ternary import where

    mag = x.abs()
    proj = (g * out.conj()).real * out
    return where(mag == 0, 0j, (g - proj) / where(mag == 0, 1.0, mag))


defvjp(sgn_p, _sgn_grad, save_output=True)
# (the same projection forward: d(z / |z|) = (t - Re(t conj(sgn)) sgn) / |z|)
defjvp1(sgn_p, lambda t, out, x: _sgn_grad(t, out, x))

logical_not_p = unary("logical_not", np.logical_not, meta=lambda x: bool_meta(x))
nondifferentiable(logical_not_p)


def _bitwise_not_kernel(a):
    return np.logical_not(a) if a.dtype == np.bool_ else np.invert(a)


bitwise_not_p = unary("bitwise_not", _bitwise_not_kernel)
nondifferentiable(bitwise_not_p)

conj_p = unary("conj", np.conjugate)
defvjp(conj_p, lambda g, out, x: g.conj(), reads=((),))
deflinear(conj_p)


def conj(input: Tensor) -> Tensor:
    """Complex conjugate; the tensor itself for real dtypes."""
    need_tensor(input, "conj")
    if not input._dtype.is_complex:
        return input
    if not input._strided:  # (a sparse layout's own conjugate: ops/sparse_pointwise.py)
        own = type(input).__dict__.get("conj")
        if own is not None:
            return own(input)
    return apply(unary_p, input, fn=conj_p)


# conj_physical: the same conjugate (ember's conj is never a lazy view), under its own node
conj_physical_p = unary("conj_physical", np.conjugate)
defvjp(conj_physical_p, lambda g, out, x: conj_physical(g), reads=((),))
deflinear(conj_physical_p)
_conj_physical, _conj_physical_ = unary_api(conj_physical_p, "", result=SAME,
                                            exact_out=FOUND_DTYPE)


def conj_physical(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Complex conjugate as a new tensor; a real tensor is returned itself (or copied to `out`)."""
    if isinstance(input, Tensor) and not input._dtype.is_complex:
        check_exact_out(input, out)
        return input if out is None else write_out(input, out)
    return _conj_physical(input, out=out)


def conj_physical_(self: Tensor) -> Tensor:
    """Conjugate in place (nothing to do for a real tensor)."""
    return _conj_physical_(self) if self._dtype.is_complex else self


# --- public functions ------------------------------------------------------------

_NO_COMPLEX = (COMPLEX_K,)
exp, exp_ = unary_api(exp_p, "e to the power of each element.")
log, log_ = unary_api(log_p, "Natural logarithm of each element.")
sqrt, sqrt_ = unary_api(sqrt_p, "Square root of each element.")
sin, sin_ = unary_api(sin_p, "Sine of each element (radians).")
cos, cos_ = unary_api(cos_p, "Cosine of each element (radians).")
tanh, tanh_ = unary_api(tanh_p, "Hyperbolic tangent of each element.")
sigmoid, sigmoid_ = unary_api(sigmoid_p, "1 / (1 + exp(-x)), computed without overflow.")
abs, abs_ = unary_api(abs_p, "Absolute value (the modulus, as a real tensor, for complex).",
                      result=SAME, reject=(BOOL_K,))
sign, sign_ = unary_api(sign_p, "Sign (-1, 0, 1) of each element.", result=SAME,
                        reject=_NO_COMPLEX, exact_out=FOUND_DTYPE)
sgn, sgn_ = unary_api(sgn_p, "Sign, and z / |z| for complex inputs.", result=SAME,
                      exact_out=FOUND_DTYPE)
bitwise_not, bitwise_not_ = unary_api(bitwise_not_p, "Bitwise NOT (logical NOT for bool).",
                                      result=SAME, reject=(FLOAT_K, COMPLEX_K),
                                      exact_out=FOUND_DTYPE)
logical_not, _ = unary_api(logical_not_p, "Elementwise NOT as a bool tensor.", result=SAME)


def _sign_complex_check(x: Tensor) -> None:
    if x._dtype.is_complex:
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex "
                                  "numbers. Please use torch.sgn instead.")


_abs_raw, _abs_raw_ = abs, abs_
_sign_raw, _sign_raw_ = sign, sign_


@method_aware
def abs(input: Tensor, *, out=None) -> Tensor:  # noqa: A001
    """Absolute value (the modulus, as a real tensor, for complex inputs)."""
    if isinstance(input, Tensor) and not input._dtype.is_complex:
        check_exact_out(input, out)  # (complex abs may write into any float or complex out)
    return _abs_raw(input, out=out)


def abs_(self: Tensor) -> Tensor:
    if self._dtype.is_complex:
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    return _abs_raw_(self)


def sign(input: Tensor, *, out=None) -> Tensor:
    """Sign (-1, 0, 1) of each element; complex inputs are refused (use `sgn`)."""
    need_tensor(input, "sign")
    _sign_complex_check(input)
    return _sign_raw(input, out=out)


def sign_(self: Tensor) -> Tensor:
    _sign_complex_check(self)
    return _sign_raw_(self)


def _neg_check(x: Tensor) -> None:
    need_tensor(x, "neg")
    if x._dtype is dt.bool_:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead."
        )


def neg(input: Tensor, *, out=None) -> Tensor:
    """Negation of each element (bool tensors are refused, as in PyTorch)."""
    if input.__class__ is not Tensor or input._dtype is dt.bool_:  # (hot: `-x`)
        _neg_check(input)
        own = None if input._strided or out is not None else type(input).__dict__.get("neg")
        if own is not None:  # (a sparse layout's own negation)
            return own(input)
    if out is not None:
        check_exact_out(input, out)
    res = apply(unary_p, input, fn=neg_p)
    return res if out is None else write_out(res, out, (input,))


def neg_(self: Tensor) -> Tensor:
    _neg_check(self)
    return apply_(unary_p, self, fn=neg_p)


def logical_not_(self: Tensor) -> Tensor:
    """In-place NOT; any dtype may hold the 0 / 1 result."""
    return apply_(unary_p, self, fn=logical_not_p)


def _invert(self: Tensor) -> Tensor:
    if self._dtype._kind > INT_K:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return bitwise_not(self)


negative, negative_ = neg, neg_
absolute, absolute_ = abs, abs_

TENSOR_METHODS = {
    "exp": exp, "exp_": exp_, "log": log, "log_": log_, "sqrt": sqrt, "sqrt_": sqrt_,
    "sin": sin, "sin_": sin_, "cos": cos, "cos_": cos_, "tanh": tanh, "tanh_": tanh_,
    "sigmoid": sigmoid, "sigmoid_": sigmoid_, "neg": neg, "neg_": neg_,
    "negative": neg, "negative_": neg_, "abs": abs, "abs_": abs_,
    "absolute": abs, "absolute_": abs_, "sign": sign, "sign_": sign_, "sgn": sgn, "sgn_": sgn_,
    "logical_not": logical_not, "logical_not_": logical_not_,
    "bitwise_not": bitwise_not, "bitwise_not_": bitwise_not_,
    "__neg__": neg, "__abs__": abs, "__invert__": _invert,
    "__pos__": lambda x: x, "conj": conj, "resolve_conj": lambda x: x,
    "resolve_neg": lambda x: x, "conj_physical": conj_physical, "conj_physical_": conj_physical_,
}

__all__ = [
    "exp", "exp_", "log", "log_", "sqrt", "sqrt_", "sin", "sin_", "cos", "cos_", "tanh",
    "tanh_", "sigmoid", "sigmoid_", "neg", "neg_", "negative", "negative_", "abs", "abs_",
    "absolute", "sign", "sgn", "logical_not", "bitwise_not", "conj", "conj_physical",
    "conj_physical_",
]
