"""The matrix products' argument checks, with PyTorch's messages: operand types and ranks,
dtypes (per the kernel the ranks pick: dot, mv, mm or bmm), the size mismatches worded as
the product PyTorch folds the operands into reports them, and the fused add* family's checks
(scalars, dtypes, batches, the input's broadcast)."""

from __future__ import annotations

from .. import _dtype as dt
from .._tensor import Tensor
from .._view import broadcast_shapes, numel
from ._arg_parser_text import need_tensors
from ._common import c_type_name, type_name


def _cname(t: Tensor) -> str:
    return c_type_name(t._dtype)


def _mm_dtypes(a, b, kernel: str) -> None:
    """mm's dtype errors: the dtypes compared first, then a bool refused."""
    if a._dtype is not b._dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {_cname(a)} != {_cname(b)}"
        )
    _no_bool(a, kernel)


# the name PyTorch's signatures give each product's second operand
_SECOND = {"matmul": "other", "mm": "mat2", "bmm": "mat2", "mv": "vec", "dot": "tensor",
           "vdot": "other", "outer": "vec2", "ger": "vec2"}


def need_operands(a, b, name: str) -> None:
    """The parser's TypeError for a product's operand that is not a tensor."""
    need_tensors(name, ("input", 1, a), (_SECOND.get(name, "other"), 2, b))


# the names PyTorch's signatures give the two factors of each `input + product` op
_FACTORS = {"addmm": ("mat1", "mat2"), "addmv": ("mat", "vec"), "baddbmm": ("batch1", "batch2"),
            "addbmm": ("batch1", "batch2"), "addr": ("vec1", "vec2")}


def need_add_operands(name: str, input, a, b, inplace: bool) -> None:
    """The parser's TypeError for an operand of addmm / addmv / baddbmm / addbmm / addr (or
    their in-place methods, `inplace`) that is not a tensor."""
    if not (isinstance(input, Tensor) and isinstance(a, Tensor) and isinstance(b, Tensor)):
        first, second = _FACTORS[name]
        need_tensors(name + "_" if inplace else name, ("input", 1, input), (first, 2, a),
                     (second, 3, b), method=True if inplace else None)


def _check_operands(a, b, name: str) -> None:
    """Both tensors (TypeError), neither 0-d."""
    need_operands(a, b, name)
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(
            f"both arguments to {name} need to be at least 1D, but they are {a.ndim}D and "
            f"{b.ndim}D"
        )


def _check_matmul(a, b, out=None) -> None:
    """matmul's dtype errors (of `out`, then of the operands) as PyTorch raises them on the
    product its ranks go to: dot (1-D @ 1-D), mv (@ 1-D), mm (@ 2-D, a batch folded into
    the rows) or bmm. The shapes are checked before, but for dot's."""
    na, nb = a.ndim, b.ndim
    if out is None:
        vmap_dtypes(a, b)
    if na == 1 and nb == 1:
        dot_out_dtype(out, a._dtype)
        _check_vectors(a, b, "dot")
    elif nb == 1:
        mv_dtypes(a, b, out)
    elif nb == 2:
        out_dtype(out, a._dtype)
        _mm_dtypes(a, b, "addmm_impl_cpu_")
    else:
        out_dtype(out, b._dtype)
        bmm_dtypes(a, b)


def out_dtype(out, expected: dt.dtype) -> None:
    """The `out=` check of PyTorch's structured products (mm, bmm, addmm, addmv, baddbmm):
    they write only into an out of the dtype they compute, where other ops cast."""
    if isinstance(out, Tensor) and out._dtype is not expected:
        raise RuntimeError(f"Expected out tensor to have dtype {c_type_name(expected)}, but "
                           f"got {c_type_name(out._dtype)} instead")


def dot_out_dtype(out, expected: dt.dtype) -> None:
    """dot's and vdot's `out=` check (made before any on the operands)."""
    if isinstance(out, Tensor) and out._dtype is not expected:
        raise RuntimeError(f"result dtype {type_name(out._dtype)} does not match input dtype "
                           f"{type_name(expected)}")


def mv_dtypes(mat: Tensor, vec: Tensor, out=None) -> None:
    """The dtype errors of PyTorch's matrix-vector kernel (addmv, which mv and matmul's
    `@ 1-D` reach): the result's dtype (`out`'s, else the vector's), the matrix's, the
    vector's."""
    r = out._dtype if isinstance(out, Tensor) else vec._dtype
    if not (r is mat._dtype is vec._dtype):
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{type_name(r)}, {type_name(mat._dtype)}, and "
                           f"{type_name(vec._dtype)}")
    _no_bool(mat, "addmv_impl_cpu")


def bmm_dtypes(a: Tensor, b: Tensor) -> None:
    """The dtype errors of PyTorch's batched kernel (bmm, and matmul past 2-D): a bool first
    operand, then the second's dtype against the first's."""
    _no_bool(a, "bmm")
    if a._dtype is not b._dtype:
        raise RuntimeError(f"expected scalar type {type_name(a._dtype)} but found "
                           f"{type_name(b._dtype)}")


def _no_bool(t: Tensor, kernel: str) -> None:
    if t._dtype is dt.bool_:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _mat_mismatch(a_shape, b_shape) -> RuntimeError:
    return RuntimeError(
        f"mat1 and mat2 shapes cannot be multiplied ({a_shape[0]}x{a_shape[1]} and "
        f"{b_shape[0]}x{b_shape[1]})"
    )


def _vec_mismatch(n: int, m: int) -> RuntimeError:
    return RuntimeError(
        f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same number "
        f"of elements, but got {n} and {m} elements respectively"
    )


def _mv_mismatch(rows: int, mat_shape, vec_n: int) -> RuntimeError:
    return RuntimeError(
        f"size mismatch, got input ({rows}), mat ({mat_shape[0]}x{mat_shape[1]}), vec ({vec_n})"
    )


def _batch_mismatch(batch: int, k: int, got) -> RuntimeError:
    return RuntimeError(
        f"Expected size for first two dimensions of batch2 tensor to be: [{batch}, {k}] but got: "
        f"[{got[0]}, {got[1]}]."
    )


def _inner_mismatch(a: Tensor, b: Tensor) -> RuntimeError:
    """The error PyTorch's matmul gives for these ranks, after the product it folds them into."""
    sa, sb = a._shape, b._shape
    if a.ndim == 1 and b.ndim == 1:
        return _vec_mismatch(sa[0], sb[0])
    if b.ndim == 1:  # the batch dims fold into the rows of one mv
        rows = numel(sa[:-1])
        return _mv_mismatch(rows, (rows, sa[-1]), sb[0])
    if a.ndim == 1 and b.ndim > 2 and b.mT.is_contiguous():
        # computed as b^T @ a with b's batch dims folded likewise, when that is a view
        rows = numel(sb[:-2]) * sb[-1]
        return _mv_mismatch(rows, (rows, sb[-2]), sa[0])
    if b.ndim == 2:  # a row, a matrix, or a's batch dims folded into rows: one mm
        return _mat_mismatch((numel(sa[:-1]), sa[-1]), sb)
    batch = numel(broadcast_shapes(sa[:-2], sb[:-2]))  # a clash of batch dims comes first
    if a.ndim == 1:
        sa = (1,) + sa
    return _batch_mismatch(batch, sa[-1], (batch, sb[-2]))


def _check_vectors(a: Tensor, b: Tensor, name: str) -> None:
    need_operands(a, b, name)
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a._dtype is not b._dtype:
        raise RuntimeError(
            f"{name} : expected both vectors to have same dtype, but found "
            f"{type_name(a._dtype)} and {type_name(b._dtype)}"
        )
    _no_bool(a, name)
    if a._shape[0] != b._shape[0]:
        raise _vec_mismatch(a._shape[0], b._shape[0])


def check_anchor_device(anchor: Tensor, *others: Tensor) -> None:
    """NOTE: PyTorch's addmm / addmv kernels run on the device of the matrix operand (the
    second argument), so a meta tensor beside CPU ones is refused naming that matrix's device
    as the expected one, not the bias's; a CPU 0-d input may join meta matrices."""
    dev = anchor.device
    for t in others:  # (devices are shared objects: the common case is decided by identity)
        if t.device is not dev:
            break
    else:
        return
    if all(t.device == dev for t in others):
        return
    for t in others:
        if t.device != dev and {t.device.type, dev.type} == {"cpu", "meta"} \
                and (t._shape or t.device.type != "cpu"):
            raise RuntimeError(f"Tensor on device {t.device} is not on the expected device {dev}!")


def vmap_mixed(*ts: Tensor) -> bool:
    """Inside vmap (an operand is one example of a batch) with operands of two dtypes."""
    for t in ts:
        if t._is_wrapper:
            return len({t._dtype for t in ts}) > 1
    return False


def vmap_dtypes(a: Tensor, b: Tensor) -> None:
    """NOTE: inside vmap PyTorch's batch rules run a product of two dtypes as another
    product, whose words the error takes: bmm's when the right operand is a batched matrix
    (or both are batched), mm's when it is a batched vector or the left one a batched matrix,
    addmv's when only the left is batched and the right is a vector."""
    if not (a._is_wrapper or b._is_wrapper) or a._dtype is b._dtype:
        return
    if b._is_wrapper and (a._is_wrapper or b.ndim > 1):
        bmm_dtypes(a, b)
    elif b._is_wrapper or b.ndim > 1:
        _mm_dtypes(a, b, "addmm_impl_cpu_")
    mv_dtypes(a, b)


def vmap_addprod(inp: Tensor, product: Tensor, beta, alpha, addmm: bool = False) -> Tensor:
    """NOTE: inside vmap PyTorch runs the fused add* products as their decompositions
    (`beta * input + alpha * product`), so the input's dtype promotes with the product's
    where the fused kernel refuses it; addmm keeps `input * 0` when beta is 0, the others
    drop the input then."""
    if addmm:
        return inp * beta + alpha * product
    if alpha != 1:
        product = alpha * product
    return product if beta == 0 else beta * inp + product


# --- the fused add* family (addmm addmv baddbmm addbmm addr) ----------------------------

def _check_scalars(dtype: dt.dtype, beta, alpha) -> None:
    for v in (beta, alpha):
        if isinstance(v, complex) and not dtype.is_complex:
            raise RuntimeError(f"value cannot be converted to type {_cname_d(dtype)} without "
                               "overflow")


def _cname_d(d: dt.dtype) -> str:
    return {"float32": "float", "float64": "double"}.get(d.name, d.name)


def _check_expand(inp: Tensor, shape) -> None:
    """`inp` must broadcast *to* `shape` (it is expanded, never the other way)."""
    if inp._shape == shape or inp._shape == shape[-1:]:  # a full input, or a bias row
        return
    ok = inp.ndim <= len(shape) and all(
        s in (1, n) for s, n in zip(inp._shape[::-1], shape[::-1]))
    if not ok:
        lead = len(shape) - inp.ndim
        bad = next((i for i, (s, n) in enumerate(zip(inp._shape, shape[lead:]))
                    if s not in (1, n)), 0)
        raise RuntimeError(
            f"The expanded size of the tensor ({shape[bad + lead]}) must match the existing size "
            f"({inp._shape[bad]}) at non-singleton dimension {bad + lead}.  Target sizes: "
            f"{list(shape)}.  Tensor sizes: {list(inp._shape)}"
        )


def _addmm_dtypes(inp: Tensor, m1: Tensor, m2: Tensor) -> None:
    """addmm's (and addbmm's) dtype checks, in PyTorch's order: self against mat2, then
    mat1 against mat2."""
    for name, t in (("self", inp), ("mat1", m1)):
        if t._dtype is not m2._dtype:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got "
                               f"{type_name(t._dtype)} and {type_name(m2._dtype)}")


def _check_batches(b1: Tensor, b2: Tensor) -> None:
    if b1.ndim != 3 or b2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if b1.ndim != 3 else
                           "batch2 must be a 3D tensor")


def _batch_shapes(b1: Tensor, b2: Tensor) -> None:
    if b1._shape[0] != b2._shape[0] or b1._shape[2] != b2._shape[1]:
        raise _batch_mismatch(b1._shape[0], b1._shape[2], b2._shape)
