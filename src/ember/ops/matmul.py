"""Matrix products: matmul / @ with PyTorch's rank rules, mm bmm mv dot vdot, the fused
`add*` family (addmm addmv baddbmm addbmm addr). The contractions built on them (inner outer
tensordot kron) are in `contractions.py`.

Every product runs one `np.matmul` (BLAS for float32/64/complex). float16 / bfloat16
operands are multiplied in float32 and rounded once, as PyTorch's CPU kernels do.
The `add*` kernels write `beta * input` into the fresh product in place, so
`addmm` (what `nn.Linear` calls) costs one BLAS call and no extra temporaries.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode
from .._core import dispatch as _dispatch
from .._tensor import Tensor
from .._view import broadcast_shapes, numel
from ..amp.autocast_mode import cast_for
from . import sparse_compressed_ops, sparse_matmul
from ._arg_parser_text import method_aware
from ._batching import batch_size, batched, front
from ._common import type_name, write_out
from ._parallel import blas
from .inplace_movement import rename_inplace_node
from .matmul_checks import (
    _addmm_dtypes,
    _batch_mismatch,
    _batch_shapes,
    _check_batches,
    _check_expand,
    _check_matmul,
    _check_operands,
    _check_scalars,
    _check_vectors,
    _cname,
    _inner_mismatch,
    _mat_mismatch,
    _mm_dtypes,
    _mv_mismatch,
    _no_bool,
    bmm_dtypes,
    check_anchor_device,
    dot_out_dtype,
    mv_dtypes,
    need_add_operands,
    need_operands,
    out_dtype,
    vmap_addprod,
    vmap_dtypes,
    vmap_mixed,
)
from .movement import unsafe_view
from .registry import Primitive, apply, apply_, bind, defbatch, defjvp, defvjp
from .sparse_compressed import CompressedTensor
from .sparse_tensor import SparseTensor

_LOW = (np.dtype(np.float16), dt.bfloat16.np)
_grad_state = _grad_mode.state


def _up(a):
    """float16 / bfloat16 arrays as float32 (the accumulation dtype); others unchanged."""
    return a.astype(np.float32) if a.dtype in _LOW else a


def _flops(a, b) -> int:
    """Flops of one matrix product of the (possibly batched) operands."""
    k = a.shape[-1]
    return 2 * k * (a.shape[-2] if a.ndim > 1 else 1) * (b.shape[-1] if b.ndim > 1 else 1)


def _matmul_kernel(a, b, conj=False):
    if conj:  # vdot: sum(conj(a) * b) of two vectors
        return np.asarray(np.vdot(_up(a), _up(b))).astype(a.dtype)
    if a.ndim == b.ndim > 2 and a.shape[:-2] == b.shape[:-2] and b.size and a.size \
            and not any(b.strides[:-2]):
        # a batch of matrices times one matrix broadcast over the batch (vmap's
        # per-example weights): one product with the batch folded into the rows
        out = _matmul_kernel(a.reshape(-1, a.shape[-1]), b[(0,) * (b.ndim - 2)])
        return out.reshape(a.shape[:-1] + out.shape[-1:])
    if a.dtype in _LOW:
        return np.asarray(blas(np.matmul, _up(a), _up(b), _flops(a, b))).astype(a.dtype)
    return np.asarray(blas(np.matmul, a, b, _flops(a, b)))


def _matmul_shape(sa, sb) -> tuple[int, ...]:
    """Result shape of matmul for operand shapes `sa`, `sb` (both at least 1-D)."""
    if len(sa) == 1 and len(sb) == 1:
        return ()
    ma = sa if len(sa) > 1 else (1,) + tuple(sa)
    mb = sb if len(sb) > 1 else tuple(sb) + (1,)
    shape = broadcast_shapes(ma[:-2], mb[:-2]) + (ma[-2], mb[-1])
    if len(sa) == 1:
        shape = shape[:-2] + shape[-1:]
    if len(sb) == 1:
        shape = shape[:-1]
    return shape


def _matmul_meta(a, b, conj=False):
    return _matmul_shape(a._shape, b._shape), a._dtype


def _cj(x: Tensor) -> Tensor:
    return x.conj() if x._dtype.is_complex else x


def _times(x: Tensor, y: Tensor) -> Tensor:
    """x @ y inside a VJP: two matrices go straight to `mm`, two stacks of as many matrices
    to `bmm` (operands are known good; PyTorch's MmBackward0 / BmmBackward0 call mm / bmm).
    A stack with a size-1 dim takes matmul's path, whose reshapes may restride that dim
    (the product's kernel then sees other strides)."""
    sx, sy = x._shape, y._shape
    if len(sx) == 2 and len(sy) == 2 or len(sx) == 3 and len(sy) == 3 and sx[0] == sy[0] \
            and 1 not in sx and 1 not in sy:
        return apply(matmul_p, x, y)
    return x @ y


def _grad_a(g, out, a, b, conj=False):
    if conj:
        return _cj(g) * b
    bc = _cj(b)
    if a.ndim == 1 and b.ndim == 1:
        return g * bc
    if b.ndim == 1:
        return g.unsqueeze(-1) * bc
    if a.ndim == 1:
        return (g.unsqueeze(-2) @ bc.mT).squeeze(-2)
    return _times(g, bc.mT)


def _grad_b(g, out, a, b, conj=False):
    if conj:
        return g * a
    ac = _cj(a)
    if a.ndim == 1 and b.ndim == 1:
        return g * ac
    if a.ndim == 1:
        return ac.unsqueeze(-1) * g.unsqueeze(-2)
    if b.ndim == 1:
        return (ac.mT @ g.unsqueeze(-1)).squeeze(-1)
    return _grad_like(ac, g, b)


_LARGE = 1 << 15  # elements: below this a transposing copy costs less than two more views


def _transposed(m: Tensor) -> bool:
    """A large matrix stored column by column (`w.t()` of a contiguous w)."""
    shape = m._shape
    if len(shape) != 2 or shape[0] * shape[1] < _LARGE:
        return False
    st = m._stride
    return st is not None and st[0] == 1 and st[1] == shape[0]


def _grad_like(m1c: Tensor, g: Tensor, m2: Tensor) -> Tensor:
    """m1^T @ g, the gradient of the second operand, laid out as that operand is: for
    `x @ w.t()` (a linear layer) with a large w it is computed as (g^T @ x)^T, so the
    weight's gradient, transposed back by the view's VJP, is w's own row-major layout (a
    plain copy into `.grad`, not a transposing one)."""
    if _transposed(m2) and len(g._shape) == 2 and len(m1c._shape) == 2:
        return apply(matmul_p, g.mT, m1c).mT
    return _times(m1c.mT, g)


def _product_name(args, params) -> str:
    """PyTorch's node for a product, which it names by the kernel the operands' ranks pick:
    dot (1-D, 1-D), mv (2-D, 1-D), mm (2-D, 2-D), bmm (3-D, 3-D, one batch), else matmul;
    vdot (`conj=True`) is its own."""
    if params:
        return "VdotBackward0"
    sa, sb = args[0]._shape, args[1]._shape
    ranks = (len(sa), len(sb))
    if ranks == (2, 2):
        return "MmBackward0"
    if ranks == (3, 3) and sa[0] == sb[0]:
        return "BmmBackward0"
    return _RANK_NAMES.get(ranks, "MatmulBackward0")


_RANK_NAMES = {(1, 1): "DotBackward0", (2, 1): "MvBackward0"}

# mm, bmm, mv, dot and matmul are one product (one np.matmul); the node name follows the
# ranks. vdot is the same product with the first operand conjugated (`conj=True`).
matmul_p = Primitive("matmul", _matmul_kernel, _matmul_meta, grad_name=_product_name)
# Each rule reads the other operand, and its own one's shape and strides (MmBackward0's)
defvjp(matmul_p, _grad_a, _grad_b, reads=((1,), (0,)), metadata=((0,), (1,)))


def _matmul_jvp(primals, tangents, out, conj=False):
    """Bilinear: d(a @ b) = da @ b + a @ db (vdot likewise, conjugating the first)."""
    (a, b), (ta, tb) = primals, tangents
    p = {"conj": True} if conj else {}
    t = None if ta is None else bind(matmul_p, ta, b, **p)
    if tb is not None:
        u = bind(matmul_p, a, tb, **p)
        t = u if t is None else t + u
    return t


def _matmul_batch(args, dims, conj=False):
    """Vectors made matrices, the batch put in front with size-1 axes after it so that
    it lines up with the batch of the other operand (or broadcasts over an unbatched
    one), one product, and the vector axes squeezed out again."""
    a, b = args
    if conj:
        a = _cj(a)
    ra, rb = (x.ndim - (d is not None) for x, d in zip(args, dims))
    a, b = front(a, dims[0]), front(b, dims[1])
    if dims[1] is None and rb == 2 and not conj:
        # a batch of rows (or of matrices) times one matrix: one product with the batch
        # folded into the rows, not a broadcast product per example
        lead = a._shape[:-1]
        if len(lead) == 1:  # already rows
            return bind(matmul_p, a, b), 0
        out = bind(matmul_p, a.reshape(-1, a._shape[-1]), b)
        return out.reshape(lead + out._shape[-1:]), 0
    if ra == 1:
        a = a.unsqueeze(-2)
    if rb == 1:
        b = b.unsqueeze(-1)
    top = max(ra, rb, 2)
    a, b = (_pad_batch(x, d, top) for x, d in ((a, dims[0]), (b, dims[1])))
    out = bind(matmul_p, a, b)
    if ra == 1:
        out = out.squeeze(-2)
    if rb == 1:
        out = out.squeeze(-1)
    return out, 0


def _pad_batch(x: Tensor, d, rank: int) -> Tensor:
    """A batch-first `x` given size-1 axes after the batch up to logical rank `rank`."""
    if d is None or x.ndim - 1 >= rank:
        return x
    return x.reshape((x._shape[0],) + (1,) * (rank - x.ndim + 1) + tuple(x._shape[1:]))


defjvp(matmul_p, _matmul_jvp)
defbatch(matmul_p, _matmul_batch)



# --- matmul / mm / bmm / mv / dot / vdot --------------------------------------------------

def _sparse(a, b) -> bool:
    return a.__class__ is SparseTensor or b.__class__ is SparseTensor


def _sparse_products(a, b):
    """The module that multiplies with a sparse operand (COO or CSR / CSC), or None: one
    test of both classes on the dense path."""
    ca, cb = a.__class__, b.__class__
    if ca is Tensor and cb is Tensor:
        return None
    if ca is CompressedTensor or cb is CompressedTensor:
        return sparse_compressed_ops
    if ca is SparseTensor or cb is SparseTensor:
        return sparse_matmul
    return None


@method_aware
def matmul(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """Matrix product with PyTorch's rules for 1-D operands and broadcast batch dims."""
    products = _sparse_products(input, other)
    if products is not None:
        return products.matmul(input, other, out=out)
    input, other = cast_for("lower", input, other)
    _check_operands(input, other, "matmul")
    dot = input.ndim == 1 and other.ndim == 1
    if dot:
        _check_matmul(input, other, out)  # (dot compares dtypes before sizes)
    k_b = other._shape[0] if other.ndim == 1 else other._shape[-2]
    if input._shape[-1] != k_b:
        raise _inner_mismatch(input, other)
    if (input.ndim > 2 or other.ndim > 2) and (out is not None or
                                               input._dtype is not other._dtype):
        # batch dims must broadcast before a dtype or out= error is raised (otherwise the
        # product itself refuses them, with the same words)
        _matmul_shape(input._shape, other._shape)
    if not dot:
        _check_matmul(input, other, out)  # (the others compare dtypes after the sizes)
    if out is not None:
        return write_out(apply(matmul_p, input, other), out)
    return _matmul(input, other)


def _matmul(a: Tensor, b: Tensor) -> Tensor:
    """PyTorch's `_matmul_impl` step by step (its graph nodes, and its BLAS calls): dot, mv,
    mm; an N-D operand times a 1-D or 2-D one folded into one mm / mv when `_should_fold`;
    else both expanded to the common batch and one bmm."""
    na, nb = a.ndim, b.ndim
    if na <= 2 and nb <= 2:
        if na == 1 and nb == 2:
            # PyTorch's `a.unsqueeze(0).mm(b).squeeze_(0)`: its node SqueezeBackward4 (out of
            # place here, renamed: a forward-mode level sees an ordinary squeeze)
            r = apply(matmul_p, a.unsqueeze(0), b).squeeze(0)
            if r._grad_fn is not None:
                rename_inplace_node(r._grad_fn)
            return r
        return apply(matmul_p, a, b)
    if _should_fold(a, b):
        transpose = nb > na
        t1 = b.mT if transpose else a
        t2 = (a.t() if na == 2 else a) if transpose else b
        shape = t1._shape[:-1]
        # (the row count is explicit: -1 is ambiguous when the inner size is 0)
        folded = t1.reshape(numel(shape), t1._shape[-1])
        if t2.ndim == 1:
            return unsafe_view(apply(matmul_p, folded, t2), shape)
        r = unsafe_view(apply(matmul_p, folded, t2), shape + (t2._shape[1],))
        return r.mT.contiguous() if transpose else r
    sa, sb = a._shape, b._shape
    if na == 3 and nb == 3 and sa[0] == sb[0] and not _dispatch._pushed[0] and \
            not (_grad_state.enabled and (a._requires_grad or b._requires_grad)) and \
            1 not in sa and 1 not in sb:
        # NOTE: no graph to record and no interpreter to see the steps: the expand and
        # reshape below would be views of the same strides, so the product alone (bmm)
        return apply(matmul_p, a, b)
    if na == 3 and nb == 3 and sa[0] != sb[0]:
        # a batch of one that requires grad takes the folding path (a smaller gradient)
        if sa[0] == 1 and a.requires_grad:
            return _matmul(a.squeeze(0), b)
        if sb[0] == 1 and b.requires_grad:
            return _matmul(a, b.squeeze(0))
    n = sa[-2] if na > 1 else 1
    m2, p = (sb[-2], sb[-1]) if nb > 1 else (sb[0], 1)
    batch = broadcast_shapes(sa[:-2], sb[:-2])
    size = numel(batch)
    a3 = a.expand(batch + (n, sa[-1])).reshape(size, n, sa[-1])
    if nb == 1:
        b3 = b.expand(batch + (m2,)).reshape(size, m2).unsqueeze(2)
    else:
        b3 = b.expand(batch + (m2, p)).reshape(size, m2, p)
    shape = batch + ((n,) if na > 1 else ()) + ((p,) if nb > 1 else ())
    r = apply(matmul_p, a3, b3)
    return unsafe_view(r.squeeze(-1) if nb == 1 else r, shape)


def _should_fold(a: Tensor, b: Tensor) -> bool:
    """PyTorch's `should_fold`: an N-D (N >= 3) operand times a 1-D or 2-D one becomes one mm
    / mv over the N-D one's rows when the small operand requires grad (its gradient is then
    one product, not a batch summed) or when the rows are a view (no copy)."""
    a_larger = a.ndim >= b.ndim
    t1 = a if a_larger else b.mT
    if not (t1.ndim >= 3 and (b.ndim if a_larger else a.ndim) <= 2):
        return False
    if (b if a_larger else a).requires_grad:
        return True
    if a.ndim == 2:
        return False
    if numel(t1._shape) == 0:
        return True
    shape, st = t1._shape, t1.stride()
    return all(st[i] == st[i + 1] * shape[i + 1] for i in range(t1.ndim - 2))


@method_aware
def mm(input: Tensor, mat2: Tensor, *, out=None) -> Tensor:
    """Product of two matrices (no broadcasting)."""
    products = _sparse_products(input, mat2)
    if products is not None:
        return products.mm(input, mat2, out=out)
    input, mat2 = cast_for("lower", input, mat2)
    _check_operands(input, mat2, "mm")
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"{'self' if input.ndim != 2 else 'mat2'} must be a matrix")
    if input._shape[1] != mat2._shape[0]:
        raise _mat_mismatch(input._shape, mat2._shape)
    out_dtype(out, input._dtype)
    vmap_dtypes(input, mat2)
    _mm_dtypes(input, mat2, "addmm_impl_cpu_")
    return write_out(apply(matmul_p, input, mat2), out)


@method_aware
def bmm(input: Tensor, mat2: Tensor, *, out=None) -> Tensor:
    """Batched product of (b, n, m) and (b, m, p) tensors (no broadcasting)."""
    input, mat2 = cast_for("lower", input, mat2)
    need_operands(input, mat2, "bmm")
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if input.ndim != 3 else
                           "batch2 must be a 3D tensor")
    if input._shape[0] != mat2._shape[0] or input._shape[2] != mat2._shape[1]:
        raise _batch_mismatch(input._shape[0], input._shape[2], mat2._shape)
    out_dtype(out, mat2._dtype)  # (PyTorch's bmm gives its result mat2's dtype)
    bmm_dtypes(input, mat2)  # (its kernel compares the dtypes after the shapes)
    return write_out(apply(matmul_p, input, mat2), out)


@method_aware
def mv(input: Tensor, vec: Tensor, *, out=None) -> Tensor:
    """Matrix-vector product."""
    products = _sparse_products(input, vec)
    if products is not None:
        return products.mv(input, vec, out=out)
    need_operands(input, vec, "mv")
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}"
        )
    if input._shape[1] != vec._shape[0]:
        raise _mv_mismatch(input._shape[0], input._shape, vec._shape[0])
    vmap_dtypes(input, vec)
    mv_dtypes(input, vec, out)  # (PyTorch's kernel compares dtypes after the shapes)
    return write_out(apply(matmul_p, input, vec), out)


@method_aware
def dot(input: Tensor, tensor: Tensor, *, out=None) -> Tensor:
    """Inner product of two 1-D tensors (no conjugation)."""
    need_operands(input, tensor, "dot")
    dot_out_dtype(out, input._dtype)
    if input.ndim == 1 and tensor.ndim == 1:
        vmap_dtypes(input, tensor)
    _check_vectors(input, tensor, "dot")
    return write_out(apply(matmul_p, input, tensor), out)


@method_aware
def vdot(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """sum(conj(input) * other) over two 1-D tensors."""
    need_operands(input, other, "vdot")
    dot_out_dtype(out, input._dtype)
    _check_vectors(input, other, "dot")
    return write_out(apply(matmul_p, input, other, conj=True), out)


# --- the fused add* family: beta * input + alpha * product ------------------------------

_np_matmul, _outer = np.matmul, np.multiply.outer


def _addmm_kernel(inp, m1, m2, *, beta, alpha, batch_sum=False):
    low = m1.dtype in _LOW
    # the product: a sum of batch products (addbmm), an outer product of two vectors
    # (addr), else matmul (addmm, addmv, baddbmm)
    product = _sum_bmm if batch_sum else _np_matmul if m1.ndim > 1 else _outer
    r = blas(product, _up(m1), _up(m2), _flops(m1, m2))  # fresh: the one BLAS call
    if alpha != 1:
        np.multiply(r, alpha, out=r, casting="unsafe")
    if beta != 0:
        src = _up(inp) if low else inp
        if beta == 1:
            np.add(r, src, out=r, casting="unsafe")
        else:
            np.add(r, np.multiply(src, beta), out=r, casting="unsafe")
    return r.astype(m1.dtype) if low else r


def _sum_bmm(b1, b2):
    """sum over the batch of b1[i] @ b2[i], as one matmul over a (batch * k) inner dim."""
    n_batch, n, k = b1.shape
    p = b2.shape[2]
    left = np.moveaxis(b1, 0, 1).reshape(n, n_batch * k)
    return np.asarray(np.matmul(left, b2.reshape(n_batch * k, p)))


def _addmm_shape(sa, sb, batch_sum: bool = False) -> tuple[int, ...]:
    if batch_sum:
        return (sa[1], sb[2])
    if len(sa) == 1:
        return (sa[0], sb[0])
    return _matmul_shape(sa, sb)


def _addmm_meta(inp, m1, m2, *, beta, alpha, batch_sum=False):
    return _addmm_shape(m1._shape, m2._shape, batch_sum), m1._dtype


def _scaled(x: Tensor, s) -> Tensor:
    if s == 1:
        return x
    return x * (s.conjugate() if isinstance(s, complex) else s)


def _addmm_grad1(g, m2, batch_sum):
    if len(m2._shape) == 1:
        if len(g._shape) == 2:  # addr: g @ conj(v2)
            return g @ _cj(m2)
        return g.unsqueeze(-1) * _cj(m2)  # addmv: m2 is the vector
    if batch_sum:  # addbmm
        return g.unsqueeze(0) @ _cj(m2).mT
    return _times(g, _cj(m2).mT)


def _addmm_grad2(g, m1, m2, batch_sum):
    if batch_sum:
        return _cj(m1).mT @ g
    if len(m1._shape) == 1:  # addr
        return g.mT @ _cj(m1)
    return _grad_like(_cj(m1), g, m2)  # (a matrix-vector or batched product when not 2-D)


# addmm, addmv, baddbmm, addbmm and addr are one fused primitive: beta * input + alpha *
# product, the product picked by the operands' ranks (and `batch_sum` for addbmm, which
# sums baddbmm's batch); the ranks name the node as PyTorch does.
def _addmm_name(args, params) -> str:
    """The node PyTorch's kernel for these operand ranks makes: a vector first is addr, a
    vector second addmv, two matrices addmm, anything batched baddbmm. (Under vmap the
    operands are the batched ones the batch rule binds, of any rank.)"""
    if "batch_sum" in params:
        return "AddbmmBackward0"
    r1, r2 = len(args[1]._shape), len(args[2]._shape)
    if r1 == 1:
        return "AddrBackward0"
    if r2 == 1:
        return "AddmvBackward0"
    return "AddmmBackward0" if r1 == r2 == 2 else "BaddbmmBackward0"


addmm_p = Primitive("addmm", _addmm_kernel, _addmm_meta, grad_name=_addmm_name)
defvjp(
    addmm_p,
    lambda g, out, inp, m1, m2, *, beta, alpha, batch_sum=False: _scaled(g, beta),
    lambda g, out, inp, m1, m2, *, beta, alpha, batch_sum=False: _scaled(
        _addmm_grad1(g, m2, batch_sum), alpha),
    lambda g, out, inp, m1, m2, *, beta, alpha, batch_sum=False: _scaled(
        _addmm_grad2(g, m1, m2, batch_sum), alpha),
    # mat1's gradient reads mat2; mat2's reads mat1, and mat2's shape and strides only (which
    # way its gradient is laid out): as AddmmBackward0, the node keeps mat2 only when mat1
    # wants a gradient (and the operands' shapes alone when only the input does)
    reads=((), (2,), (1,)), metadata=((1, 2), (), (2,)),
)


def _addmm_jvp(primals, tangents, out, *, beta, alpha, batch_sum=False):
    """Linear in input, bilinear in (m1, m2): each product term is one more addmm, the
    input's tangent riding on the first (beta = 0 where it has none: the input, detached,
    only gives the shape, so the tangent does not depend on it, as in PyTorch)."""
    inp, m1, m2 = primals
    ti, t1, t2 = tangents
    t = None
    for x1, x2 in ((t1, m2), (m1, t2)):
        if x1 is None or x2 is None:
            continue
        u = bind(addmm_p, inp.detach() if ti is None else ti, x1, x2,
                 beta=0 if ti is None else beta, alpha=alpha,
                 **({"batch_sum": True} if batch_sum else {}))
        ti = None
        t = u if t is None else t + u
    if ti is not None:
        u = (ti if beta == 1 else ti * beta).expand(out._shape)
        t = u if t is None else t + u
    return t


def _addmm_batch(args, dims, *, beta, alpha, batch_sum=False):
    """Every form lifted to a batched matrix product (an outer product as a (n, 1) @ (1, p)
    one, a matrix-vector product with the vector a column, addbmm's sum as one product over
    a batch * k inner dim) with the batch in front, then one addmm."""
    inp, m1, m2 = args
    di, d1, d2 = dims
    size = batch_size(args, dims)
    r1, r2 = m1.ndim - (d1 is not None), m2.ndim - (d2 is not None)
    ri = inp.ndim - (di is not None)
    m1, m2, inp = front(m1, d1), front(m2, d2), front(inp, di)
    if batch_sum:  # (b, n, k), (b, k, p) -> (n, b k), (b k, p)
        nb, n, k = m1._shape[-3:]
        m1 = m1.movedim(-3, -2).reshape(tuple(m1._shape[:-3]) + (n, nb * k))
        m2 = m2.reshape(tuple(m2._shape[:-3]) + (nb * k, m2._shape[-1]))
        r1 = r2 = 2
    elif r1 == 1:  # addr: the outer product of a column and a row
        m1, m2 = m1.unsqueeze(-1), m2.unsqueeze(-2)
        r1 = r2 = 2
    vector = r2 == 1
    if vector:  # addmv: the vector a column, the input too
        m2 = m2.unsqueeze(-1)
        if ri:
            inp = inp.unsqueeze(-1)
            ri += 1
    if d1 is None and d2 is None:
        m1, d1 = batched(m1, None, size), 0
    # NOTE: under nested vmap an operand's logical rank can pass 2 (a lower level's batch
    # axes in front); size-1 axes after each batch keep batch aligned with batch
    top = max(r1, r2, 2)
    inp, m1, m2 = (_pad_batch(x, d, top) for x, d in ((inp, di), (m1, d1), (m2, d2)))
    out = bind(addmm_p, inp, m1, m2, beta=beta, alpha=alpha)
    return (out.squeeze(-1) if vector else out), 0


defjvp(addmm_p, _addmm_jvp)
defbatch(addmm_p, _addmm_batch)


def _run_addprod(inp, m1, m2, beta, alpha, out, inplace: bool, shape=None, **params):
    _check_scalars(m1._dtype, beta, alpha)
    if m1._dtype._kind < 2:
        beta, alpha = int(beta), int(alpha)
    if shape is None:
        shape = _addmm_shape(m1._shape, m2._shape, **params)
    if inplace:
        if inp._shape != shape:
            raise RuntimeError(
                f"Bad in-place call: input tensor size {list(inp._shape)} and output tensor size "
                f"{list(shape)} should match"
            )
        return apply_(addmm_p, inp, m1, m2, beta=beta, alpha=alpha, **params)
    _check_expand(inp, shape)
    return write_out(apply(addmm_p, inp, m1, m2, beta=beta, alpha=alpha, **params), out)


def _addmm(input, mat1, mat2, beta, alpha, out, inplace):
    need_add_operands("addmm", input, mat1, mat2, inplace)
    for name, t in (("mat1", mat1), ("mat2", mat2)):
        if t.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {t.ndim}-D tensor")
    check_anchor_device(mat1, input, mat2)
    if out is None and not inplace and vmap_mixed(input, mat1, mat2):
        return vmap_addprod(input, mm(mat1, mat2), beta, alpha, addmm=True)
    _addmm_dtypes(input, mat1, mat2)
    if mat1._shape[1] != mat2._shape[0]:
        raise _mat_mismatch(mat1._shape, mat2._shape)
    _no_bool(mat1, "addmm_impl_cpu_")
    out_dtype(out, mat1._dtype)
    return _run_addprod(input, mat1, mat2, beta, alpha, out, inplace,
                        (mat1._shape[0], mat2._shape[1]))


@method_aware
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1, out=None) -> Tensor:
    """beta * input + alpha * (mat1 @ mat2), one fused primitive (AddmmBackward0)."""
    # (_sparse's test inline: every nn.Linear call of a 2-d batch comes here)
    if input.__class__ is SparseTensor or mat1.__class__ is SparseTensor \
            or mat2.__class__ is SparseTensor:
        return sparse_matmul.addmm(input, mat1, mat2, beta=beta, alpha=alpha, out=out)
    if mat1.__class__ is CompressedTensor:
        return sparse_compressed_ops.addmm(input, mat1, mat2, beta=beta, alpha=alpha, out=out)
    input, mat1, mat2 = cast_for("lower", input, mat1, mat2)
    return _addmm(input, mat1, mat2, beta, alpha, out, False)


def addmm_(self: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    if _sparse(self, mat1) or mat2.__class__ is SparseTensor:
        return sparse_matmul.addmm_(self, mat1, mat2, beta=beta, alpha=alpha)
    return _addmm(self, mat1, mat2, beta, alpha, None, True)


def _addmv(input, mat, vec, beta, alpha, out, inplace):
    need_add_operands("addmv", input, mat, vec, inplace)
    if mat.ndim != 2 or vec.ndim != 1 or input.ndim > 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, {vec.ndim}"
        )
    check_anchor_device(mat, input, vec)
    if out is None and not inplace and vmap_mixed(input, mat, vec):
        return vmap_addprod(input, mv(mat, vec), beta, alpha)
    if not (input._dtype is mat._dtype is vec._dtype):
        raise RuntimeError(
            "addmv input tensors must have the same dtype, but got "
            f"{type_name(input._dtype)}, {type_name(mat._dtype)}, and {type_name(vec._dtype)}"
        )
    _no_bool(mat, "addmv_impl_cpu")
    if mat._shape[1] != vec._shape[0] or (input.ndim and input._shape[0] not in (1,
                                                                               mat._shape[0])):
        raise _mv_mismatch(input._shape[0] if input.ndim else 1, mat._shape, vec._shape[0])
    out_dtype(out, mat._dtype)
    return _run_addprod(input, mat, vec, beta, alpha, out, inplace)


@method_aware
def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1, out=None) -> Tensor:
    """beta * input + alpha * (mat @ vec)."""
    return _addmv(input, mat, vec, beta, alpha, out, False)


def addmv_(self: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:
    return _addmv(self, mat, vec, beta, alpha, None, True)


def _baddbmm(input, batch1, batch2, beta, alpha, out, inplace):
    # PyTorch's order: input against batch1's dtype, the shapes, bool, then batch2's dtype
    _check_batches(batch1, batch2)
    if out is None and not inplace and vmap_mixed(input, batch1, batch2):
        return vmap_addprod(input, bmm(batch1, batch2), beta, alpha)
    if input._dtype is not batch1._dtype:
        raise RuntimeError(
            f"Input dtypes must be the same, got: input {_cname(input)}, batch1: "
            f"{_cname(batch1)}, batch2: {_cname(batch2)}")
    _batch_shapes(batch1, batch2)
    _no_bool(batch1, "baddbmm")
    if batch2._dtype is not batch1._dtype:
        raise RuntimeError(f"expected scalar type {type_name(batch1._dtype)} but found "
                           f"{type_name(batch2._dtype)}")
    out_dtype(out, batch1._dtype)
    return _run_addprod(input, batch1, batch2, beta, alpha, out, inplace)


@method_aware
def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1,
            out=None) -> Tensor:
    """beta * input + alpha * bmm(batch1, batch2)."""
    need_add_operands("baddbmm", input, batch1, batch2, False)
    input, batch1, batch2 = cast_for("lower", input, batch1, batch2)
    return _baddbmm(input, batch1, batch2, beta, alpha, out, False)


def baddbmm_(self: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    need_add_operands("baddbmm", self, batch1, batch2, True)
    return _baddbmm(self, batch1, batch2, beta, alpha, None, True)


def _addbmm(input, batch1, batch2, beta, alpha, out, inplace):
    if batch1.ndim == 3 and batch2.ndim == 3 and batch1._shape[0] != batch2._shape[0]:
        raise RuntimeError(
            f"batch1 and batch2 must have same number of batches, got {batch1._shape[0]} and "
            f"{batch2._shape[0]}"
        )
    _check_batches(batch1, batch2)
    if out is None and not inplace and vmap_mixed(input, batch1, batch2):
        return vmap_addprod(input, bmm(batch1, batch2).sum(0), beta, alpha)
    _addmm_dtypes(input, batch1, batch2)  # (PyTorch's addbmm runs addmm's checks)
    _no_bool(batch1, "addmm_impl_cpu_")
    _batch_shapes(batch1, batch2)
    if isinstance(out, Tensor) and out._dtype is not batch2._dtype:
        # (PyTorch's addbmm with out= runs addmm into `out`, as its `self`)
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{type_name(out._dtype)} and {type_name(batch2._dtype)}")
    return _run_addprod(input, batch1, batch2, beta, alpha, out, inplace, batch_sum=True)


@method_aware
def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1,
           out=None) -> Tensor:
    """beta * input + alpha * sum_i batch1[i] @ batch2[i]."""
    need_add_operands("addbmm", input, batch1, batch2, False)
    input, batch1, batch2 = cast_for("lower", input, batch1, batch2)
    return _addbmm(input, batch1, batch2, beta, alpha, out, False)


def addbmm_(self: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    need_add_operands("addbmm", self, batch1, batch2, True)
    return _addbmm(self, batch1, batch2, beta, alpha, None, True)


# --- addr: beta * input + alpha * outer(vec1, vec2) -----------------------------------

def _addr(input, vec1, vec2, beta, alpha, out, inplace):
    need_add_operands("addr", input, vec1, vec2, inplace)
    for name, t in (("vec1", vec1), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {t.ndim}-D")
    d = dt.promote_types(dt.result_type(vec1, vec2), input._dtype)
    if inplace and d is not input._dtype:
        d = input._dtype
    vec1, vec2 = vec1.to(d), vec2.to(d)
    return _run_addprod(input if inplace else input.to(d), vec1, vec2, beta, alpha, out,
                        inplace)


@method_aware
def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1, out=None) -> Tensor:
    """beta * input + alpha * outer(vec1, vec2) (dtypes promote)."""
    return _addr(input, vec1, vec2, beta, alpha, out, False)


def addr_(self: Tensor, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1) -> Tensor:
    return _addr(self, vec1, vec2, beta, alpha, None, True)


# --- Tensor methods -------------------------------------------------------------------

def _rmatmul(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(other, self)


def _forward_matmul(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(self, other)


TENSOR_METHODS = {
    "matmul": matmul, "mm": mm, "bmm": bmm, "mv": mv, "dot": dot, "vdot": vdot,
    "addmm": addmm, "addmm_": addmm_, "addmv": addmv, "addmv_": addmv_,
    "baddbmm": baddbmm, "baddbmm_": baddbmm_, "addbmm": addbmm, "addbmm_": addbmm_,
    "addr": addr, "addr_": addr_,
    "__matmul__": _forward_matmul, "__rmatmul__": _rmatmul,
}

__all__ = [
    "matmul", "mm", "bmm", "mv", "dot", "vdot", "addmm", "addmv", "addmv_", "baddbmm", "addbmm",
    "addr",
]

