"""Products in `ember.linalg`: multi_dot (cheapest bracketing), vecdot, matrix_power,
vander (running products of x), and the aliases matmul / diagonal / cross.

`multi_dot` picks the order of a chain of matrix products with the classic
matrix-chain dynamic programme (O(n^3) in the number of matrices, exact): for
shapes (512, 512), (512, 8), (8, 512) it computes (A B) C, about 4.2 MFLOP of
multiply-adds, not A (B C), about 136 MFLOP. `chain_order` exposes the choice.
"""

from __future__ import annotations

from .. import _dtype as dt
from .._tensor import Tensor
from ..amp.autocast_mode import autocast_op
from ..ops._common import c_type_name, type_name, write_exact, write_out
from ..ops.linalg_ops import linalg_cross as cross
from ..ops.matmul import matmul, mm, vdot
from ..ops.movement import diagonal as _diagonal


def chain_order(shapes) -> tuple[object, int]:
    """Cheapest bracketing of a chain of (rows, cols) matrices, and its multiply-add count.

    The bracketing is a nested pair of indices, e.g. ((0, 1), 2) for (A B) C.
    """
    n = len(shapes)
    dims = [shapes[0][0]] + [s[1] for s in shapes]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            best = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if best is None or c < best:
                    best, split[i][j] = c, k
            cost[i][j] = best

    def tree(i: int, j: int):
        if i == j:
            return i
        k = split[i][j]
        return (tree(i, k), tree(k + 1, j))

    return tree(0, n - 1), cost[0][n - 1]


def _check_chain(tensors) -> None:
    for i, t in enumerate(tensors):  # (PyTorch's parser, on the list it takes)
        if not isinstance(t, Tensor):
            from ..ops._arg_parser_text import tp_name

            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{tp_name(t)}")
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    for i, t in enumerate(tensors):
        if i in (0, n - 1):
            if t.ndim not in (1, 2):
                which = "first" if i == 0 else "last"
                raise RuntimeError(f"multi_dot(): the {which} tensor must be 1D or 2D but got "
                                   f"{t.ndim}D")
        elif t.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
        if t._dtype is not tensors[0]._dtype:
            raise RuntimeError(
                f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                f"{c_type_name(tensors[0]._dtype)} and tensor {i} {c_type_name(t._dtype)}"
            )


def multi_dot(tensors, *, out=None) -> Tensor:
    """A chain of matrix products, bracketed to minimise work; first / last may be vectors."""
    tensors = list(tensors)
    _check_chain(tensors)
    first_vec, last_vec = tensors[0].ndim == 1, tensors[-1].ndim == 1
    mats = list(tensors)
    if first_vec:
        mats[0] = mats[0].unsqueeze(0)
    if last_vec:
        mats[-1] = mats[-1].unsqueeze(1)
    for i in range(len(mats) - 1):
        if mats[i]._shape[1] != mats[i + 1]._shape[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i} and {i + 1} with shapes {list(tensors[i]._shape)} and "
                f"{list(tensors[i + 1]._shape)} cannot be multiplied"
            )
    order, _ = chain_order([m._shape for m in mats]) if len(mats) > 2 else ((0, 1), None)

    def run(node):
        if isinstance(node, int):
            return mats[node]
        return mm(run(node[0]), run(node[1]))

    # NOTE: as PyTorch, the product of the matrices is viewed as the result's shape (its
    # grad_fn is ViewBackward0 whatever the operands)
    res = run(order)
    res = res.view(res._shape[first_vec:2 - last_vec])
    if isinstance(out, Tensor) and out._dtype is not res._dtype:  # (no casting into `out`)
        raise RuntimeError(f"multi_dot(): expected out tensor to have dtype "
                           f"{c_type_name(res._dtype)} but got {c_type_name(out._dtype)}")
    return write_out(res, out)


@autocast_op("linalg_vecdot")
def vecdot(x: Tensor, y: Tensor, *, dim: int = -1, out=None) -> Tensor:
    """sum(conj(x) * y) along `dim`, broadcasting the other dims."""
    if x._dtype._kind < 2:  # (PyTorch checks x's kind, then that y's dtype is the same)
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as "
                           f"input. Got {type_name(x._dtype)}")
    if x._dtype is not y._dtype:
        raise RuntimeError(
            f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
            f"{type_name(x._dtype)} and y of type {type_name(y._dtype)} instead"
        )
    if x.ndim == 1 and y.ndim == 1:  # (PyTorch's vdot: equal lengths, whatever `dim` says)
        return vdot(x, y, out=out)
    xc = x.conj() if x._dtype.is_complex else x
    res = (xc * y).sum(dim)
    if isinstance(out, Tensor) and out._dtype is not res._dtype:  # (no casting into `out`)
        raise RuntimeError(f"linalg.vecdot: Expected out of dtype{type_name(res._dtype)} but "
                           f"found {type_name(out._dtype)}")
    return write_out(res, out)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The diagonal of each matrix in a batch (a view), over the last two dims by default."""
    return _diagonal(A, offset, dim1, dim2)


def matrix_power(A: Tensor, n: int, *, out=None) -> Tensor:
    """A^n by repeated squaring; n = 0 gives the identity and n < 0 uses inv(A)."""
    _check_square_any(A)
    if out is not None:
        if isinstance(out, Tensor) and not dt.can_cast(A._dtype, out._dtype):
            raise RuntimeError(f"matrix_power: Expected result to be safely castable from "
                               f"{type_name(A._dtype)} dtype, but got result with dtype "
                               f"{type_name(out._dtype)}")
        # (n = 0 and 1 are copies, cast into `out` as copies are; the products cast nothing)
        res = matrix_power(A, n)
        return write_out(res, out) if n in (0, 1) else write_exact(res, out)
    if n == 0:  # the identity, written into a copy of A so the graph still reaches A
        from ..ops.creation import eye

        k = A._shape[-1]
        return A.clone().copy_(eye(k, dtype=A._dtype, device=A.device).expand(A._shape))
    if n < 0:
        from .solvers import inv

        A, n = inv(A), -n
    elif n == 1:  # a copy, never `A` itself
        return A.clone()
    if n == 3:  # (PyTorch's shortcut: (A A) A, its rounding and its graph)
        return (A @ A) @ A
    result, base = None, A
    while n:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return result


def _check_square_any(A: Tensor) -> None:
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 "
                           "dimensions.")
    if A._shape[-1] != A._shape[-2]:
        raise RuntimeError(
            f"linalg.matrix_power: A must be batches of square matrices, but they are "
            f"{A._shape[-2] if A.ndim > 1 else 1} by {A._shape[-1] if A.ndim else 1} matrices"
        )


__all__ = ["multi_dot", "vecdot", "diagonal", "matrix_power", "matmul", "cross", "chain_order"]


def vander(x: Tensor, *, N: int | None = None) -> Tensor:
    """(*, n, N) with columns x**0, x**1, ..., x**(N-1) (N defaults to n): the running product
    of x (so each power is the previous one times x, rounded as PyTorch's cumprod rounds)
    after a column of ones."""
    from ..ops.creation import ones
    from ..ops.join import cat

    if x._dtype._kind == 0:
        raise RuntimeError("linalg.vander supports floating point, complex, and integer tensors, "
                           f"but got {type_name(x._dtype)}")
    x = x.unsqueeze(-1) if x.ndim == 0 else x
    n = x._shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = x.unsqueeze(-1).expand(x._shape + (n - 1,)).cumprod(-1)
    return cat([ones(x._shape + (1,), dtype=powers._dtype, device=x.device), powers], -1)
