"""MLX's `maximum` and `minimum` on real floating arrays, as members of the MLX face's own
pointwise family (`mlx_binary`, beside ember's `binary`: a face's rules are its own
table): one node each (a fused C loop can take them in, so `relu` is one comparison in
the loop), with MLX's rules rather than PyTorch's.

MLX's values: NaN in the first argument wins, otherwise the first argument where it is
strictly larger (smaller), else the second (so a tie, `-0.0` against `0.0` included,
gives the second). MLX's derivative (mlx/primitives.cpp, Maximum::vjp): the first
argument gets the cotangent where `a > b`, the second where `a <= b`; where either is
NaN neither gets anything. PyTorch's differ: a tie splits the gradient and NaN gives it
to both.
"""

from __future__ import annotations

import numpy as np

from ...ops._common import elementwise_meta
from ...ops._pointwise import batch_pointwise, shaped, tangent_sum
from ...ops.registry import (
    Family,
    Member,
    apply,
    defbatch,
    defjvp,
    deflower,
    defvjp,
    nondifferentiable,
)

binary_p = Family("mlx_binary")
defbatch(binary_p, batch_pointwise(binary_p))


def member(name: str, kernel) -> Member:
    return Member(binary_p, name, kernel, elementwise_meta)


def _kernel(largest: bool):
    first = np.greater if largest else np.less

    def kernel(a, b):
        return np.where(np.isnan(a) | first(a, b), a, b)

    return kernel


def _mask(name: str, compare, c_op: str):
    """A comparison as a float mask of its operands' dtype (1 where it holds, else 0): in
    a derivative `g * mask` is MLX's `multiply(g, mask)` bit for bit, and both fuse into
    one C loop (a bool mask would stop it). It has no derivative of its own."""
    fn = member(name, lambda a, b: compare(a, b).astype(np.result_type(a, b)))
    nondifferentiable(fn)
    deflower(fn, f"({{0}} {c_op} {{1}}) ? ({{T}})1 : ({{T}})0")
    return lambda a, b: apply(binary_p, a, b, fn=fn)


_greater = _mask("greater_mask", np.greater, ">")
_less = _mask("less_mask", np.less, "<")
_greater_equal = _mask("greater_equal_mask", np.greater_equal, ">=")
_less_equal = _mask("less_equal_mask", np.less_equal, "<=")


def _member(name: str, largest: bool):
    fn = member(name, _kernel(largest))
    first_wins, second_wins = (_greater, _less_equal) if largest else (_less, _greater_equal)
    defvjp(fn, lambda g, out, a, b: g * first_wins(a, b),
           lambda g, out, a, b: g * second_wins(a, b), reads=((0, 1), (0, 1)))

    def jvp(primals, tangents, out):
        (a, b), (ta, tb) = primals, tangents
        return shaped(tangent_sum(None if ta is None else ta * first_wins(a, b),
                                  None if tb is None else tb * second_wins(a, b)), out)

    defjvp(fn, jvp)
    op = ">" if largest else "<"
    deflower(fn, f"(({{0}} != {{0}}) || ({{0}} {op} {{1}})) ? {{0}} : {{1}}")
    return fn


maximum_fn = _member("maximum", True)
minimum_fn = _member("minimum", False)


def maximum(ta, tb):
    """MLX's `maximum` of two operands of one real floating dtype (a tensor and a tensor
    or a Python number)."""
    return apply(binary_p, ta, tb, fn=maximum_fn)


def minimum(ta, tb):
    """MLX's `minimum` (see `maximum`)."""
    return apply(binary_p, ta, tb, fn=minimum_fn)
