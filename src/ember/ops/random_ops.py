"""Random sampling ops, bit for bit as PyTorch's CPU kernels draw them.

Every function here takes words from an `ember.Generator` (PyTorch's MT19937)
and turns them into values with the same formulas, in the same element order
and the same compute precision as PyTorch 2.13 on a CPU, so a seeded program
draws identical numbers and leaves the generator in the identical state:

- element order is memory order (PyTorch's TensorIterator), so in-place ops on
  transposed or strided tensors fill them as PyTorch does;
- `normal_` has two paths, as PyTorch: a block-of-16 Box-Muller "fill" for
  contiguous tensors of 16+ elements, and a serial one with a cached sample;
- floating-point steps that PyTorch's AVX2 build fuses into FMAs are fused here
  (`ember.random.set_kernel_profile('default')` reproduces the scalar build).

Every draw is an op: `draw` (a factory) and `draw_like` (values laid out like a
tensor: the noise of in-place fills and samplers) call the draw, `make(n, contiguous)`,
in their kernel, so an interpreter decides how much is drawn (vmap's
`randomness="different"` draws a whole batch at once, as PyTorch does).

This module is the tensor-facing layer (argument checks, layouts, in-place
semantics, autograd); `_rng_kernels.py` holds one function per PyTorch kernel
(formulas and the words each consumes), `_rng_math.py` the bit-exact arithmetic.
"""

from __future__ import annotations

import functools
import math
import numbers

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._core import mark_random
from .._device import as_device
from .._tensor import Tensor, _meta
from .._view import (
    non_overlapping,
    numel,
)
from . import _rng_kernels as K
from . import _rng_math as M
from ._arg_parser_text import method_aware, need_dtype, need_int
from ._common import c_type_name, same_meta, type_name, write_out
from .creation import _sizes, empty
from .draws import draw, draw_like, like_strides
from .fill import fill_p, zero_tangent
from .generator_checks import checked_generator
from .multinomial_checks import check_categories, check_probs
from .randint_checks import check_randint
from .registry import (
    Family,
    Member,
    apply,
    apply_,
    batch_by_loop,
    check_grad_write,
    check_inplace,
    defjvp,
    deflinear,
    defvjp,
    nondifferentiable,
)

f32, f64 = np.float32, np.float64
_grad_state = grad_mode.state


# --- plumbing ------------------------------------------------------------------

def _gen(generator, fn: str = "random", args: tuple = (), kwargs: dict | None = None):
    """The Generator to draw from; a wrong `generator=` refused in PyTorch's parser's words
    (see generator_checks.py: `args` / `kwargs` describe the call where it has overloads)."""
    return checked_generator(fn, generator, args, kwargs)


def _fmt(x) -> str:
    """A number as PyTorch's C++ messages print it (`2`, `0.5`, `1e-07`)."""
    return f"{x:g}" if isinstance(x, float) else str(x)


def _scalar(x):
    if isinstance(x, Tensor):
        return x.item()
    return x


def _result(make, shape, stride, d: dt.dtype, device, requires_grad) -> Tensor:
    """A new tensor of drawn values (see `draw`) on `device`."""
    t = draw(make, shape, stride, d)
    dev = as_device(device)
    if dev.type != "cpu":
        t = t.to(dev)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _real(d: dt.dtype) -> dt.dtype:
    return d.to_real() if d.is_complex else d


def _check_float(d: dt.dtype, kernel: str) -> None:
    if not (d.is_floating_point or d.is_complex):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{type_name(d)}\'')


def _check_real_float(d: dt.dtype, kernel: str, only: tuple = ()) -> None:
    """A kernel's refusal of a dtype: it takes the floats, or the dtypes named in `only`."""
    if not (d.name in only if only else d.is_floating_point):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{type_name(d)}\'')


def _check_continuous(d: dt.dtype, what: str, name) -> None:
    """Refuse a non-float tensor; `name` prints the dtype (`Long`, or Cauchy's `long int`)."""
    if not d.is_floating_point:
        raise RuntimeError(f"{what} distribution is a continuous probability distribution. dtype "
                           f"must be a floating point but you specified {name(d)}")


_GEOMETRIC_DTYPES = ("int64", "int32", "int16", "int8", "uint8", "float64", "float32",
                     "float16", "bfloat16")  # (geometric_'s kernel: signed ints, uint8, floats)


def _draw_kernel(dst, values):
    return values  # (fresh from the draw: nothing else holds it)


def _draw(name: str, grad_name: str | None = None) -> Member:
    """An in-place random fill, a member of `fill`: the values are drawn by a `draw_like` op
    before it (they are its input), so the kernel only hands them on; the old values get a zero
    gradient, as in PyTorch, whose node is named after the distribution drawn from."""
    m = Member(fill_p, name, _draw_kernel, lambda dst, values: same_meta(dst),
               grad_name=grad_name)
    defvjp(m, lambda g, out, dst, values: g.new_zeros(g.shape), None, reads=((), ()))
    deflinear(m)  # (the values hold no tangent in practice: they are drawn, constants)
    mark_random(m)
    return m


# (PyTorch numbers a node after its overload: random_(from, to) / random_(to) / random_()
# are RandomBackward0 / 1 / 2, bernoulli_(tensor p) / bernoulli_(float p) BernoulliBackward1 / 2)
_DRAWS = {m.grad_name: m for m in (
    _draw("uniform"), _draw("normal"), _draw("random"), _draw("random_to", "RandomBackward1"),
    _draw("random_all", "RandomBackward2"), _draw("bernoulli_p", "BernoulliBackward1"),
    _draw("bernoulli_f", "BernoulliBackward2"),
    _draw("exponential"), _draw("cauchy"), _draw("log_normal"), _draw("geometric"))}


# The samplers: draws from a distribution whose noise (or generator) is an input, so the
# op itself is deterministic given it. One primitive, a member per distribution (below).
sample_p = Family("sample")
batch_by_loop(sample_p, "a sampler is deterministic given the noise drawn for it (vmap's "
                        "randomness= decides that draw), but has no vectorised form yet")
mark_random(sample_p)


# A draw from tensor parameters (torch.normal, torch.poisson, torch.bernoulli) is, in
# PyTorch's graph, an op of those parameters whose gradient is zero: a `drawn_*` member hands
# the values (drawn before it, not in any graph) on, linked to the parameters.
def _drawn_zero(g, out, values, *params, shapes, i):
    return g.new_zeros(shapes[i])  # (each parameter's shape: nothing of theirs is saved)


def _drawn_member(name: str, grad_name: str, n_params: int) -> Member:
    m = Member(sample_p, name, lambda values, *params, shapes: values,
               lambda values, *params, shapes: (values._shape, values._dtype),
               grad_name=grad_name)
    defvjp(m, None, *[functools.partial(_drawn_zero, i=i) for i in range(n_params)],
           reads=((),) * (n_params + 1))
    defjvp(m, zero_tangent)
    return m


_DRAWN = {"NormalBackward1": _drawn_member("drawn_normal_mean", "NormalBackward1", 1),
          "NormalBackward2": _drawn_member("drawn_normal_std", "NormalBackward2", 1),
          "NormalBackward3": _drawn_member("drawn_normal", "NormalBackward3", 2),
          "PoissonBackward0": _drawn_member("drawn_poisson", "PoissonBackward0", 1),
          "BernoulliBackward0": _drawn_member("drawn_bernoulli", "BernoulliBackward0", 1)}


def drawn_from(values: Tensor, name: str, *params) -> Tensor:
    """`values` (just drawn, not in any graph) as PyTorch's draw from `params`: a node with
    a zero gradient when a parameter requires grad and grad mode is on."""
    params = tuple(p for p in params if isinstance(p, Tensor))
    if not grad_mode.is_grad_enabled() or not any(p.requires_grad for p in params):
        return values
    return apply(sample_p, values, *params, fn=_DRAWN[name],
                 shapes=tuple(p._shape for p in params))


def _check_no_overlap(shape, stride) -> None:
    if not non_overlapping(shape, stride):
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to "
            "a single memory location. Please clone() the tensor before performing the "
            "operation."
        )


def _inplace(self: Tensor, grad_name: str, make) -> Tensor:
    """Fill `self` with `make(n, contiguous)` (values in memory order, self's dtype or,
    for complex self, its real dtype with 2n values)."""
    # (a leaf's refusal comes before the draw, which it spares, as in PyTorch; an inference
    # tensor's after it: PyTorch even writes that one before refusing)
    check_grad_write(self)
    if self.device.type == "meta":
        check_inplace(self)
        return self
    _check_no_overlap(self._shape, self.stride())
    # drawn in self's memory order (the kernel path by self's own contiguity), then written
    values = draw_like(self, make, self._dtype, dense=False)
    return apply_(fill_p, self, values, fn=_DRAWS[grad_name])


# --- uniform ---------------------------------------------------------------------

def _check_uniform(d: dt.dtype, a: float, b: float) -> None:
    """PyTorch's checks, in its order: each bound within the (real) dtype's finite range
    (so inf and nan are refused), then from <= to, then to - from representable."""
    hi = _FLOAT_MAX[_real(d).name]
    for name, v in (("from", a), ("to", b)):
        if not -hi <= v <= hi:
            raise RuntimeError(f"{name} is out of bounds for {_CPP_NAMES[_real(d).name]}")
    if not a <= b:
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from={_fmt(a)} > "
            f"to={_fmt(b)}"
        )
    info = dt.finfo(_real(d))
    if b - a > info.max:
        raise RuntimeError(
            f"uniform_ expects to-from <= std::numeric_limits<{type_name(_real(d))}>::max(), "
            f"but found to={_fmt(b)} and from={_fmt(a)} which result in to-from to exceed "
            "the limit"
        )


def uniform_(self: Tensor, a: float = 0.0, b: float = 1.0, *, generator=None,
             **kwargs) -> Tensor:
    """Fill with U[a, b) samples (PyTorch's `uniform_`, also `from=`/`to=`)."""
    a = float(_scalar(kwargs.pop("from", a)))
    b = float(_scalar(kwargs.pop("to", b)))
    if kwargs:
        raise TypeError(f"uniform_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    _check_float(self._dtype, "check_uniform_bounds")
    _check_uniform(self._dtype, a, b)
    g = _gen(generator, "uniform_")
    rd = _real(self._dtype)
    k = 2 if self._dtype.is_complex else 1
    return _inplace(self, "UniformBackward0", lambda n, c: K.uniform(g, n * k, rd, a, b))


def rand(*sizes, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad: bool = False, pin_memory: bool = False, names=None) -> Tensor:
    """Uniform samples in [0, 1): one 32-bit word each (float64: two)."""
    g = _gen(generator, "rand", sizes, dict(size=size, out=out, dtype=dtype, device=device,
                                             requires_grad=requires_grad))
    d = dt.get_default_dtype() if dtype is None else dtype
    _check_float(d, "check_uniform_bounds")
    shape = _sizes(sizes, "rand", size)
    if as_device(device).type == "meta":
        return _meta(shape, d).requires_grad_(requires_grad)
    k = 2 if d.is_complex else 1
    rd = _real(d)
    return write_out(_result(lambda n, c: K.uniform(g, n * k, rd, 0.0, 1.0), shape, None, d,
                             device, requires_grad), out)


# --- normal ----------------------------------------------------------------------

def _check_std(std: float) -> None:
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(std)}")


def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    """Fill with N(mean, std^2) samples (complex: std/sqrt(2) per part)."""
    mean, std = float(_scalar(mean)), float(_scalar(std))
    _check_float(self._dtype, "normal_kernel_cpu")
    _check_std(std)
    g = _gen(generator, "normal_")
    rd = _real(self._dtype)
    if self._dtype.is_complex:
        std = std / math.sqrt(2)
        return _inplace(self, "NormalBackward0",
                        lambda n, c: K.normal(g, 2 * n, rd, mean, std, c))
    return _inplace(self, "NormalBackward0",
                    lambda n, c: K.normal(g, n, rd, mean, std, c))


def _normal_new(shape, stride, d: dt.dtype, mean, std, g, device, requires_grad) -> Tensor:
    shape = tuple(shape)
    if as_device(device).type == "meta":
        return _meta(shape, d, stride).requires_grad_(requires_grad)
    return _result(_normal_maker(g, d, mean, std), shape, stride, d, device, requires_grad)


def _normal_maker(g, d: dt.dtype, mean: float, std: float):
    """The draw of N(mean, std^2) values of dtype d (complex: std/sqrt(2) per part)."""
    if d.is_complex:
        rd, s2 = _real(d), std / math.sqrt(2)
        return lambda n, c: K.normal(g, 2 * n, rd, mean, s2, c)
    return lambda n, c: K.normal(g, n, d, mean, std, c)


def randn(*sizes, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
           requires_grad: bool = False, pin_memory: bool = False, names=None) -> Tensor:
    """Standard normal samples (PyTorch's `normal_(0, 1)`)."""
    g = _gen(generator, "randn", sizes, dict(size=size, out=out, dtype=dtype, device=device,
                                              requires_grad=requires_grad))
    d = dt.get_default_dtype() if dtype is None else dtype
    _check_float(d, "normal_kernel_cpu")
    t = _normal_new(_sizes(sizes, "randn", size), None, d, 0.0, 1.0, g, device,
                    requires_grad)
    return write_out(t, out)


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None,
           device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """N(mean, std^2) samples; `mean` / `std` may be tensors (broadcast together).

    As PyTorch: draw N(0, 1) (or N(0, std) for a tensor mean and float std) into the
    result, then multiply by a tensor std and add the mean, as separate ops."""
    g = _gen(generator, "normal", (mean, std) + (() if size is None else (size,)),
             dict(out=out, dtype=dtype, device=device, requires_grad=requires_grad))
    tm, ts = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not tm and not ts:
        if size is None:
            raise TypeError("normal() missing required argument 'size' when mean and std "
                            "are floats")
        d = dt.get_default_dtype() if dtype is None else dtype
        _check_float(d, "normal_kernel_cpu")
        _check_std(float(std))
        t = _normal_new(_sizes((size,)), None, d, float(mean), float(std), g, device,
                        requires_grad)
        return write_out(t, out)
    from .. import _grad_mode as grad_mode
    from .._view import broadcast_shapes

    std0 = std
    if ts:  # (checked by a kernel: under vmap, std may hold one tensor per example)
        std = apply(sample_p, std.detach(), fn=STD_CHECK)
    ref = mean if tm else std
    d = ref._dtype
    _check_float(d, "normal_kernel_cpu")
    shape = broadcast_shapes(mean._shape if tm else (), std._shape if ts else ())
    with grad_mode.no_grad():
        if tm and not ts:
            _check_std(float(std))
            t = _normal_new(shape, None, d, 0.0, float(std), g, ref.device, False)
            t = t.add_(mean)
        else:
            t = _normal_new(shape, None, d, 0.0, 1.0, g, ref.device, False)
            t = t.mul_(std).add_(mean if tm else float(mean))
    if out is not None:
        return write_out(t, out)
    return drawn_from(t, "NormalBackward3" if tm and ts else "NormalBackward1" if tm else
                      "NormalBackward2", mean, std0)


def _std_check_kernel(std):
    if not np.all(std >= 0):  # (a nan std is refused too, as PyTorch's `std >= 0` check)
        raise RuntimeError("normal expects all elements of std >= 0.0")
    return std.copy()


# normal's tensor std, checked before anything is drawn (the generator is left untouched when
# it has a negative element, as PyTorch's); a member of `sample` since it guards a draw.
STD_CHECK = Member(sample_p, "normal_std", _std_check_kernel, same_meta)
nondifferentiable(STD_CHECK)


# --- integers ----------------------------------------------------------------------

def _update_from(frm: int, d: dt.dtype) -> int:
    """PyTorch's update_from: a float dtype's first representable value >= from."""
    if abs(frm + 1) > _FLOAT_MAX[d.name]:  # out of the dtype's range: the bounds check fails
        return frm
    plus1 = int(np.array(frm + 1, f64).astype(d.np).astype(f64))
    if plus1 < frm:
        n = abs(frm + 1).bit_length() - 1
        frm = plus1 + (1 << (n - K.DIGITS[d.name] + 1))
    return frm


def _update_to(to: int, d: dt.dtype) -> int:
    if abs(to - 1) > _FLOAT_MAX[d.name]:  # out of the dtype's range: the bounds check fails
        return to
    minus1 = int(np.array(to - 1, f64).astype(d.np).astype(f64))
    if minus1 >= to:
        n = abs(to - 1).bit_length() - 1
        to = minus1 - (1 << (n - K.DIGITS[d.name] + 1))
    return to


# The C++ type names PyTorch's bounds checks print (its dtype names elsewhere).
_CPP_NAMES = {"uint8": "unsigned char", "int8": "signed char", "int16": "short int",
              "int32": "int", "int64": "long int", "bool": "bool", "float16": "c10::Half",
              "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double"}
_FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38,
              "float32": 3.4028234663852886e38, "float64": 1.7976931348623157e308}


def _check_in_range(frm: int, to_inc: int, d: dt.dtype) -> None:
    """PyTorch's bounds check of random_'s range: an error outside the dtype's limits, and
    for floating dtypes a warning outside the integers they hold exactly (+-2^digits)."""
    tn = _CPP_NAMES.get(d.name, type_name(d))
    if d._kind == 2:
        hi = _FLOAT_MAX[d.name]
        lo = -hi
    elif d is dt.bool_:
        lo, hi = 0, 1
    else:
        info = np.iinfo(d.np)
        lo, hi = int(info.min), int(info.max)
    if not lo <= frm <= hi:
        raise RuntimeError(f"from is out of bounds for {tn}")
    if not lo <= to_inc <= hi:
        raise RuntimeError(f"to - 1 is out of bounds for {tn}")
    if d._kind == 2:
        digits = K.DIGITS[d.name]
        for what, v in (("from", frm), ("to - 1", to_inc)):
            if not -(2 ** digits) <= v <= 2 ** digits:
                from .._user_warnings import warn_at_user

                warn_at_user(
                    f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision "
                    f"limitations {tn} can support discrete uniform distribution only within "
                    "this range. This warning will become an error in version 1.7 release, "
                    "please fix the code in advance")


def _random_maker(g, d: dt.dtype, frm, to):
    """A `make(n)` for random_(from, to) on dtype d, after PyTorch's checks."""
    if d.is_complex:  # (with bounds, their check refuses first; without, the kernel)
        if frm is None:
            raise NotImplementedError(
                f'"random_kernel_cpu" not implemented for \'{type_name(d)}\'')
        raise RuntimeError("check_random_bounds handles only integral, floating-point and "
                           "boolean types")
    if frm is None:
        return lambda n: K.random_full(g, n, d)
    frm = int(_scalar(frm))
    if to is not None:
        to = int(_scalar(to))
        if not frm < to:
            raise RuntimeError(
                f"random_ expects 'from' to be less than 'to', but got from={frm} >= to={to}"
            )
        if d._kind == 2:
            frm, to = _update_from(frm, d), _update_to(to, d)
            if not frm < to:
                raise RuntimeError(
                    "random_ expects 'from' casted to dtype to be less than 'to' casted to "
                    f"dtype, but got from={frm} >= to={to}"
                )
        _check_in_range(frm, to - 1, d)
        return lambda n: K.random_range(g, n, d, frm, to - frm)
    if frm == -(2**63):
        if d.name not in K.WIDE:
            raise RuntimeError("random_full_64_bits_range_kernel_cpu handles only int64, "
                               "double, float and bfloat16")
        return lambda n: K.ints_to(g._words64(n), d)
    if d._kind == 2:
        to_inc = 2 ** K.DIGITS[d.name]
        frm = _update_from(frm, d)
        if not frm < to_inc:
            raise RuntimeError(
                "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' "
                f"casted to dtype, but got from={frm} > to_inc={to_inc}"
            )
    else:
        to_inc = 1 if d is dt.bool_ else int(np.iinfo(d.np).max)
    _check_in_range(frm, to_inc, d)
    return lambda n: K.random_range(g, n, d, frm, to_inc - frm + 1)


def random_(self: Tensor, *args, generator=None, **kwargs) -> Tensor:
    """random_() / random_(to) / random_(from, to): integers drawn uniformly."""
    frm, to = kwargs.pop("from", None), kwargs.pop("to", None)
    g = _gen(generator, "random_", args, {"from": frm, "to": to})
    node = "RandomBackward0" if len(args) == 2 or frm is not None else \
        "RandomBackward1" if args or to is not None else "RandomBackward2"
    if kwargs:
        raise TypeError(f"random_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if len(args) == 1:
        frm, to = 0, args[0]
    elif len(args) == 2:
        frm, to = args
    elif args:
        raise TypeError(f"random_() takes at most 2 positional arguments ({len(args)} given)")
    if frm is None and to is not None:
        frm = 0
    make = _random_maker(g, self._dtype, frm, to)
    return _inplace(self, node, lambda n, c: make(n))


def randint(*args, size=None, generator=None, out=None, dtype=None, layout=None,
            device=None, requires_grad: bool = False, pin_memory: bool = False,
            low=None, high=None) -> Tensor:
    """Integers uniform in [low, high): `randint(high, size)` / `randint(low, high, size)`."""
    check_randint(args, size, low, high, generator)
    args = list(args)
    if size is None and args and isinstance(args[-1], (tuple, list, Tensor)) and \
            not isinstance(args[-1], numbers.Number):
        size = args.pop()
    if len(args) == 2:
        low, high = args
    elif len(args) == 1:
        if high is None:
            high = args[0]
        else:
            low = args[0]
    elif args:
        raise TypeError("randint() received an invalid combination of arguments")
    if high is None or size is None:
        raise TypeError("randint() missing required arguments 'high' and 'size'")
    low = 0 if low is None else int(_scalar(low))
    high = int(_scalar(high))
    d = dt.int64 if dtype is None else dtype
    shape = _sizes((size,))
    make = _random_maker(_gen(generator, "randint"), d, low, high)
    if as_device(device).type == "meta":
        return _meta(shape, d).requires_grad_(requires_grad)
    t = _result(lambda n, c: make(n), shape, None, d, device, requires_grad)
    return write_out(t, out)


# --- randperm ----------------------------------------------------------------------

def randperm(n: int, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A random permutation of 0..n-1."""
    g = _gen(generator, "randperm", (n,), dict(out=out, dtype=dtype, device=device,
                                                requires_grad=requires_grad))
    n = need_int(n, "randperm", "n", 1)
    d = dt.int64 if dtype is None else need_dtype(dtype, "randperm")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    if d is dt.bool_:
        raise NotImplementedError("\"randperm\" not implemented for 'Bool'")
    if d is dt.float16 and n > 2049:
        raise RuntimeError("n cannot be greater than 2049 for Half type.")
    if d._kind == 2 and d is not dt.bfloat16 and n > 2 ** K.DIGITS[d.name] + 1:
        raise RuntimeError(f"n is too large for result tensor type: '{type_name(d)}'")
    if d._kind < 2 and n > int(np.iinfo(d.np).max) + 1:
        raise RuntimeError(f"value cannot be converted to type {d.name}_t without "
                           "overflow")
    if as_device(device).type == "meta":
        return _meta((n,), d).requires_grad_(requires_grad)

    def make(count, c):  # count // n permutations, one after another (a batch: one each)
        k = count // n if n else 0
        perms = [K.ints_to(K.randperm(g, n).view(np.uint64), d) for _ in range(k)]
        return np.concatenate(perms) if perms else np.empty(0, d.np)

    return write_out(_result(make, (n,), None, d, device, requires_grad), out)


# --- exponential, cauchy, log-normal, geometric (serial, double math) ------------------

def exponential_(self: Tensor, lambd: float = 1.0, *, generator=None) -> Tensor:
    """Fill with Exp(lambd) samples: -(1/lambd) log1p(-u), one double uniform each."""
    lambd = float(_scalar(lambd))
    if not lambd > 0:  # (the parameter is checked first, then the dtype, as PyTorch)
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_fmt(lambd)}")
    _check_continuous(self._dtype, "Exponential", type_name)
    g = _gen(generator, "exponential_")
    d = self._dtype
    return _inplace(self, "ExponentialBackward0",
                    lambda n, c: K.to_dtype(K.exponential(g, n, lambd), d))


def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *,
            generator=None) -> Tensor:
    """Fill with Cauchy samples: median + sigma * tan(pi (u - 1/2))."""
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_fmt(float(sigma))}")
    _check_continuous(self._dtype, "Cauchy", c_type_name)
    g = _gen(generator, "cauchy_")
    d = self._dtype

    def make(n, c):
        t = M._looped("tan", math.tan, math.pi * (g._doubles(n) - 0.5))
        v = M.fma64(f64(sigma), t, f64(median)) if K.avx2() else median + sigma * t
        return K.to_dtype(v, d)

    return _inplace(self, "CauchyBackward0", make)


def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *,
                generator=None) -> Tensor:
    """Fill with exp(N(mean, std^2)) samples (the serial normal, cache included)."""
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_fmt(float(std))}")
    _check_real_float(self._dtype, "log_normal_cpu")
    g = _gen(generator, "log_normal_")
    d = self._dtype
    return _inplace(self, "LogNormalBackward0", lambda n, c: K.to_dtype(
        M.libm_exp(K.normal_serial(g, n, float(mean), float(std))), d))


def geometric_(self: Tensor, p: float, *, generator=None) -> Tensor:
    """Fill with Geometric(p) samples: ceil(log(u) / log1p(-p))."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_fmt(float(p))}")
    _check_real_float(self._dtype, "geometric_cpu", _GEOMETRIC_DTYPES)
    g = _gen(generator, "geometric_")
    d = self._dtype
    denom = math.log1p(-p)
    return _inplace(self, "GeometricBackward0", lambda n, c: K.to_dtype(
        np.ceil(M.libm_log(g._doubles(n)) / denom), d))


# --- multinomial, poisson ----------------------------------------------------------------

@method_aware
def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator=None, out=None) -> Tensor:
    """Indices sampled from rows of (unnormalised) probabilities.

    Without replacement, or one sample: argmax / top-k of probs / q with q ~ Exp(1)
    drawn like `empty_like(probs).exponential_()`. With replacement: per row, a
    sequential cumulative sum normalised to 1 and a binary search per double uniform.
    """
    num_samples = check_probs(input, num_samples, replacement, out)
    g = _gen(generator, "multinomial")
    d = input._dtype
    rows = numel(input._shape[:-1])
    shape = input._shape[:-1] + (num_samples,)
    if isinstance(out, Tensor) and out._shape != shape:
        out.resize_(shape)  # (PyTorch resizes multinomial's `out` without a warning)
    if rows == 0:  # (no rows: nothing drawn, nothing checked)
        return write_out(empty(shape, dtype=dt.int64, device=input.device), out)
    check_categories(input, num_samples, replacement)
    before = g._mark()  # (the kernel checks the probs after the draw; see the except)
    if input.device.type == "meta":  # (nothing drawn)
        noise = _meta(input._shape, d) if not replacement or num_samples == 1 else \
            _meta((rows, num_samples), dt.float64)
    elif not replacement or num_samples == 1:
        # q ~ Exp(1), drawn like empty_like(probs).exponential_()
        noise = draw_like(input, lambda n, c: K.to_dtype(K.exponential(g, n, 1.0), d), d)
    else:
        noise = draw((lambda n, c: g._doubles(n)), (rows, num_samples), None, dt.float64)
    try:
        idx = apply(sample_p, input.detach(), noise, fn=MULTINOMIAL, num_samples=num_samples,
                    replacement=bool(replacement) and num_samples != 1)
    except RuntimeError:
        try:
            fault = _multinomial_fault(input, replacement and num_samples != 1)
        except RuntimeError:  # (a batched or pending input has no values to read)
            fault = None
        if fault is not None:  # PyTorch samples row by row up to the bad one (with
            g._rewind(before)  # replacement), or checks before drawing
            g._doubles(fault[0] * num_samples)
        raise
    return write_out(idx, out)


def _multinomial_fault(input: Tensor, replacement: bool) -> tuple[int, str] | None:
    """(rows sampled before the fault, PyTorch's words) for invalid probabilities, or None.
    Without replacement PyTorch checks all rows before drawing; with it, row by row."""
    p2 = np.asarray(input.detach().numpy()).reshape(-1, input._shape[-1])
    if (fault := K.invalid_probs(p2, replacement)) is None:
        return None
    if not replacement:
        return 0, fault
    bad = ~(p2 >= 0) | ~np.isfinite(p2)
    row_bad = bad.any(-1) | ~(p2 > 0).any(-1)
    return int(np.argmax(row_bad)), fault


def _multinomial_kernel(p, noise, *, num_samples, replacement):
    p2 = p.reshape(-1, p.shape[-1]).astype(f64 if p.dtype == f64 else f32)
    if replacement:
        idx = K.multinomial_with_replacement(p2, noise)
    else:
        if (fault := K.invalid_probs(p2, False)) is not None:
            raise RuntimeError(fault)
        s = (p2 / noise.reshape(p2.shape).astype(p2.dtype)).astype(p.dtype).astype(p2.dtype)
        if num_samples == 1:
            idx = np.argmax(s, axis=-1)[:, None]
        else:  # (PyTorch's topk of probs / q: its order for ties, zero probabilities among them)
            from .sorting import _topk_kernel

            idx = _topk_kernel(s, k=num_samples, dim=-1, largest=True, in_shape=s.shape)[1]
    idx = idx.astype(np.int64)
    return idx.reshape(-1) if p.ndim == 1 else idx


# Category indices from probabilities and the noise drawn for them beforehand (Exp(1)
# per probability without replacement, a double uniform per sample with it).
MULTINOMIAL = Member(
    sample_p, "multinomial", _multinomial_kernel,
    lambda p, noise, *, num_samples, replacement: (p._shape[:-1] + (num_samples,), dt.int64))
nondifferentiable(MULTINOMIAL)


def poisson(input: Tensor, generator=None) -> Tensor:
    """Poisson samples with rates `input` (elementwise)."""
    _check_real_float(input._dtype, "poisson_cpu")
    return drawn_from(apply(sample_p, input.detach(), fn=POISSON,
                            generator=_gen(generator, "poisson"), dtype=input._dtype),
                      "PoissonBackward0", input)


def _poisson_kernel(rates, *, generator, dtype):
    # NOTE: the result is contiguous and filled in row-major order, whatever the layout
    # of the rates (PyTorch allocates it with zeros(sizes)).
    flat = rates.astype(f64).reshape(-1)
    bad = ~(flat >= 0)
    if bad.any():  # PyTorch samples the rates before the first bad one, then stops
        K.poisson_many(generator, flat[:int(np.argmax(bad))].tolist())
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    vals = K.poisson_many(generator, flat.tolist())
    return K.to_dtype(vals, dtype).reshape(rates.shape)


# How many words each sample takes depends on its rate (rejection sampling), so the
# draws cannot be made before the op: the generator is the kernel's param.
POISSON = Member(sample_p, "poisson", _poisson_kernel,
                 lambda rates, *, generator, dtype: (rates._shape, dtype))
nondifferentiable(POISSON)


# --- *_like ------------------------------------------------------------------------------

def _like_kwargs(dtype, device, requires_grad, memory_format) -> dict:
    return dict(dtype=dtype, device=device, requires_grad=requires_grad,
                memory_format=memory_format)


def _like_args(input: Tensor, dtype, device, memory_format):
    d = input._dtype if dtype is None else dtype
    dev = input.device if device is None else as_device(device)
    return d, dev, like_strides(input, memory_format)


def rand_like(input: Tensor, *, dtype=None, layout=None, device=None,
              requires_grad: bool = False, memory_format=None, generator=None) -> Tensor:
    g = _gen(generator, "rand_like", (input,), _like_kwargs(dtype, device, requires_grad,
                                                            memory_format))
    d, dev, stride = _like_args(input, dtype, device, memory_format)
    _check_float(d, "check_uniform_bounds")
    if dev.type == "meta":
        return _meta(input._shape, d, stride).requires_grad_(requires_grad)
    k = 2 if d.is_complex else 1
    rd = _real(d)
    return _like_result(input, lambda n, c: K.uniform(g, n * k, rd, 0.0, 1.0), d, dev,
                        requires_grad, memory_format)


def randn_like(input: Tensor, *, dtype=None, layout=None, device=None,
               requires_grad: bool = False, memory_format=None, generator=None) -> Tensor:
    g = _gen(generator, "randn_like", (input,), _like_kwargs(dtype, device, requires_grad,
                                                             memory_format))
    d, dev, stride = _like_args(input, dtype, device, memory_format)
    _check_float(d, "normal_kernel_cpu")
    if dev.type == "meta":
        return _meta(input._shape, d, stride).requires_grad_(requires_grad)
    return _like_result(input, _normal_maker(g, d, 0.0, 1.0), d, dev, requires_grad,
                        memory_format)


def randint_like(input: Tensor, low=0, high=None, *, dtype=None, layout=None, device=None,
                 requires_grad: bool = False, memory_format=None, generator=None) -> Tensor:
    g = _gen(generator, "randint_like", (input, low) if high is None else (input, low, high),
             _like_kwargs(dtype, device, requires_grad, memory_format))
    if high is None:
        low, high = 0, low
    d, dev, stride = _like_args(input, dtype, device, memory_format)
    make = _random_maker(g, d, int(_scalar(low)), int(_scalar(high)))
    if dev.type == "meta":
        return _meta(input._shape, d, stride).requires_grad_(requires_grad)
    return _like_result(input, lambda n, c: make(n), d, dev, requires_grad, memory_format)


def _like_result(input: Tensor, make, d: dt.dtype, device, requires_grad: bool,
                 memory_format=None) -> Tensor:
    """A *_like draw: laid out as `empty_like(input, memory_format=...)`, on `device`."""
    t = draw_like(input, make, d, memory_format=memory_format)
    if device.type != "cpu":
        t = t.to(device)
    if requires_grad:
        t.requires_grad_(True)
    return t


TENSOR_METHODS = {
    "uniform_": uniform_, "normal_": normal_, "random_": random_,
    "exponential_": exponential_, "cauchy_": cauchy_,
    "log_normal_": log_normal_, "geometric_": geometric_, "multinomial": multinomial,
}

__all__ = [
    "rand", "randn", "randint", "randperm", "normal", "multinomial", "poisson",
    "rand_like", "randn_like", "randint_like",
]
