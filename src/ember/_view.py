"""Pure shape and stride arithmetic: contiguity, broadcasting, when `view` can avoid a copy.

Everything here works on tuples of ints and never touches data, so it serves
every device alike (the meta device is nothing but this module).
Strides are counted in elements, as PyTorch counts them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Row-major strides for `shape` (a size-0 or size-1 dim gets the stride it would have)."""
    got = _strides_of.get(shape) if shape.__class__ is tuple else None
    if got is not None:
        return got
    strides = []
    acc = 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    got = tuple(reversed(strides))
    if shape.__class__ is tuple and len(_strides_of) < 4096:
        _strides_of[shape] = got
    return got


# shapes met so far and their row-major strides (a recording asks for the same few shapes
# at every step); bounded, so a program of ever-new shapes stops adding
_strides_of: dict = {}


def is_contiguous(shape: Sequence[int], stride: Sequence[int]) -> bool:
    """True when strides equal row-major strides, ignoring dims of size 1 (PyTorch's rule).

    A tensor with no elements is always contiguous.
    """
    if 0 in shape:
        return True
    expected = 1
    for n, s in zip(reversed(shape), reversed(stride)):
        if n != 1:
            if s != expected:
                return False
            expected *= n
    return True


def numel(shape: Sequence[int]) -> int:
    return math.prod(shape)


def index_value(x) -> int | None:
    """`x` as an int through its `__index__` (a NumPy integer, a one-element integer
    tensor), or None where it has none or it refuses (several elements, floats)."""
    index = getattr(type(x), "__index__", None)
    if index is not None:
        try:
            return int(index(x))
        except TypeError:
            pass
    return None


def as_dim(dim) -> int:
    """`dim` read as PyTorch's parser reads an int (`index_value`); otherwise its TypeError,
    in its words but for the op's name, which only the op knows ("argument 'dim' must be
    int, not float")."""
    v = index_value(dim)
    if v is None:
        raise TypeError(f"argument 'dim' must be int, not {type(dim).__name__}")
    return v


def wrap_dim(dim: int, ndim: int) -> int:
    """A dim in [-ndim, ndim) made non-negative; IndexError with PyTorch's text otherwise."""
    if not isinstance(dim, int):
        dim = as_dim(dim)
    if -ndim <= dim < ndim:
        return dim + ndim if dim < 0 else dim
    if ndim == 0 and dim in (-1, 0):  # a 0-d tensor takes dim 0 or -1, as in PyTorch
        return dim
    lo, hi = (-ndim, ndim - 1) if ndim > 0 else (-1, 0)
    raise IndexError(
        f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})"
    )


def wrap_dims(dims, ndim: int) -> tuple[int, ...]:
    """Several dims wrapped; RuntimeError if one appears twice."""
    if isinstance(dims, int):
        dims = (dims,)
    out = tuple(wrap_dim(d, ndim) for d in dims)
    if len(set(out)) != len(out):
        for d in out:
            if out.count(d) > 1:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return out


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The common shape of broadcasting; RuntimeError naming the sizes that clash."""
    if len(shapes) == 2 and shapes[0] == shapes[1]:
        return tuple(shapes[0])
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        off = ndim - len(s)
        for i in reversed(range(len(s))):  # PyTorch names the last clashing dim
            n, j = s[i], off + i
            cur = out[j]
            if n == cur or n == 1:
                continue
            if cur == 1:
                out[j] = n
                continue
            raise RuntimeError(
                f"The size of tensor a ({cur}) must match the size of tensor b ({n}) at "
                f"non-singleton dimension {j}"
            )
    return tuple(out)


def expand_strides(shape, stride, new_shape) -> tuple[int, ...]:
    """Strides that view `shape` as `new_shape` with stride 0 on broadcast dims.

    A new leading dim of size 1 gets the stride it would have if contiguous with
    the dims inside it (PyTorch's `inferExpandGeometry`); -1 keeps a size.
    """
    off = len(new_shape) - len(shape)
    if off < 0:
        raise RuntimeError(
            f"expand(): the number of sizes provided ({len(new_shape)}) must be greater or "
            f"equal to the number of dimensions in the tensor ({len(shape)})"
        )
    sizes = [0] * len(new_shape)
    out = [0] * len(new_shape)
    for i in range(len(new_shape) - 1, -1, -1):
        n, j = new_shape[i], i - off
        if j < 0:
            if n < 0:
                raise RuntimeError(
                    f"The expanded size of the tensor ({n}) isn't allowed in a leading, "
                    f"non-existing dimension {i}"
                )
            inner = i + 1 < len(new_shape)
            out[i] = sizes[i + 1] * out[i + 1] if inner and n == 1 else 0
            sizes[i] = n
            continue
        have = shape[j]
        if n == -1:
            n = have
        if n == have:
            out[i] = stride[j]
        elif have == 1:
            out[i] = 0
        else:
            raise RuntimeError(
                f"The expanded size of the tensor ({n}) must match the existing size ({have}) at "
                f"non-singleton dimension {i}.  Target sizes: {list(new_shape)}.  Tensor sizes: "
                f"{list(shape)}"
            )
        sizes[i] = n
    return tuple(out)


def infer_size(shape: Sequence[int], total: int) -> tuple[int, ...]:
    """Resolve one -1 in a target shape; RuntimeError if the element count cannot match."""
    if shape.__class__ is tuple and shape and set(map(type, shape)) == _INT_ONLY and \
            min(shape) >= 0 and numel(shape) == total:
        return shape  # (the usual call: sizes that already fit)
    shape = tuple(int(s) for s in shape)
    infer = None
    known = 1
    for i, s in enumerate(shape):
        if s == -1:
            if infer is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape "
                               f"{list(shape)}")
        else:
            known *= s
    if infer is not None:
        if known == 0:
            raise RuntimeError(
                f"cannot reshape tensor of 0 elements into shape {list(shape)} because the "
                "unspecified dimension size -1 can be any value and is ambiguous"
            )
        if total % known == 0:
            return shape[:infer] + (total // known,) + shape[infer + 1:]
    elif known == total:
        return shape
    raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {total}")


_INT_ONLY = {int}


def view_strides(shape, stride, new_shape) -> tuple[int, ...] | None:
    """Strides that let `new_shape` view the same memory, or None when a copy is needed.

    A view exists when each run of input dims that gets merged or split is itself
    contiguous in memory (each stride equals the next stride times the next size).
    """
    if stride == contiguous_strides(shape) and 0 not in shape:
        return contiguous_strides(new_shape)  # (one run: the loop below finds the same)
    if numel(shape) == 0 and tuple(shape) == tuple(new_shape):
        return tuple(stride)  # NOTE: PyTorch keeps an empty tensor's strides for its own shape
    if numel(shape) == 0 or not shape:
        return contiguous_strides(new_shape)
    new_stride = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = stride[-1] if stride else 1
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[tensor_d]
        if tensor_d == 0 or (
            shape[tensor_d - 1] != 1 and stride[tensor_d - 1] != tensor_numel * chunk_base_stride
        ):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_stride[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = stride[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_stride)


def storage_extent(shape, stride, offset: int) -> int:
    """Elements of storage a view reaches: offset + 1 + sum((size-1)*stride); 0 if empty."""
    if numel(shape) == 0:
        return 0
    return offset + 1 + sum((n - 1) * s for n, s in zip(shape, stride))


def dense_order(stride: Sequence[int]) -> list[int]:
    """Dims ordered outermost first by stride, ties keeping the original order."""
    return sorted(range(len(stride)), key=lambda d: -stride[d])


def non_overlapping(shape, stride) -> bool:
    """True when no two indices of the view reach the same element (an empty view has
    none to reach)."""
    if 0 in shape:
        return True
    dims = sorted((s, n) for n, s in zip(shape, stride) if n > 1)
    reach = 1
    for s, n in dims:
        if s < reach:
            return False
        reach = s * (n - 1) + reach
    return True


def is_non_overlapping_and_dense(shape, stride) -> bool:
    """True when the view covers a block of memory exactly once, in some dim order."""
    if is_contiguous(shape, stride):
        return True
    expected = 1
    for d in sorted(range(len(shape)), key=lambda d: stride[d]):  # stable, as PyTorch sorts
        if shape[d] == 1:
            continue
        if stride[d] != expected:
            return False
        expected *= shape[d]
    return True


def dense_strides_like(shape, stride) -> tuple[int, ...]:
    """Row-major-in-the-input's-order strides for a fresh tensor (`empty_like`'s layout).

    Dims are ordered by stride, innermost first; stride-0 dims compare as ties and
    keep their place, and equal strides put the larger size outside (PyTorch's
    `infer_dense_strides`).
    """
    nd = len(shape)
    perm = pointwise_order(shape, ((shape, stride),))  # (one operand: its own order)
    out = [0] * nd
    acc = 1
    for d in perm:
        out[d] = acc
        if shape[d] > 1:
            acc *= shape[d]
    return tuple(out)


def like_strides(shape, stride, memory_format=None) -> tuple[int, ...]:
    """Strides of `*_like(x)`: x's own when dense (preserve_format), else a dense order; a
    channels-last format refuses a tensor of another rank, in PyTorch's words."""
    name = getattr(memory_format, "name", "preserve_format")
    if name == "contiguous_format":
        return contiguous_strides(shape)
    if name in ("channels_last", "channels_last_3d"):
        from ._layout import CHANNELS_LAST_RANK, channels_last_strides

        rank = CHANNELS_LAST_RANK[name]
        if len(shape) != rank:
            raise RuntimeError(f"required rank {rank} tensor to use {name} format")
        return channels_last_strides(shape)
    if is_non_overlapping_and_dense(shape, stride):
        return tuple(stride)
    return dense_strides_like(shape, stride)


def pointwise_strides(shape, operands) -> tuple[int, ...]:
    """Strides of a fresh pointwise result of `shape` computed from `operands` (each a
    (shape, strides) pair; a number PyTorch wraps as a 0-d tensor is ((), ())), as
    PyTorch's TensorIterator allocates it.

    Operands all of one shape that are all contiguous, all channels-last or all dense with
    the same strides give that layout (TensorIterator's fast setup; so one dims of size 1
    keep the input's strides). Otherwise the dims are ordered innermost first by the
    operands' strides (`pointwise_order`) and the result is dense in that order, a size-0
    dim zeroing the strides outside it; an order that is plain row-major gives row-major.
    """
    nd = len(shape)
    first = tuple(shape)
    if all(s == first for s, _ in operands):  # (a 0-d operand beside an n-d one: not this)
        if all(is_contiguous(s, st) for s, st in operands):
            return contiguous_strides(shape)
        if nd == 4 and all(_channels_last(s, st) for s, st in operands):
            return _channels_last_dense(shape)
        st0 = operands[0][1]
        if all(st == st0 for _, st in operands) and is_non_overlapping_and_dense(first, st0):
            return tuple(st0)
    if nd <= 1:
        return contiguous_strides(shape)
    perm = pointwise_order(shape, operands)
    if perm == list(range(nd - 1, -1, -1)):
        return contiguous_strides(shape)
    out = [0] * nd
    acc = 1
    for d in perm:
        out[d] = acc
        acc *= shape[d]
    return tuple(out)


def pointwise_order(shape, operands) -> list[int]:
    """The dims of a pointwise result, innermost first, as TensorIterator orders them
    (`reorder_dimensions`): an insertion sort where each pair of dims is decided by the
    first operand whose strides for the two differ (a broadcast dim abstains; equal strides
    put the larger dim outside, or pass the question on), an undecided pair staying put."""
    nd = len(shape)
    ts, st = operands[0]
    if tuple(ts) == tuple(shape) and 0 not in st and len(set(st)) == nd:
        # (the first operand decides every pair: its strides, sorted)
        return sorted(range(nd), key=st.__getitem__)
    ops = []
    for ts, st in operands:
        off = nd - len(ts)
        ops.append([0] * off + [0 if ts[i] == 1 and shape[off + i] != 1 else st[i]
                                for i in range(len(ts))])

    def should_swap(d0: int, d1: int) -> int:
        for s in ops:
            a, b = s[d0], s[d1]
            if a == 0 or b == 0:
                continue
            if a != b:
                return -1 if a < b else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(nd - 1, -1, -1))
    for i in range(1, nd):
        dim1 = i
        for dim0 in range(i - 1, -1, -1):
            c = should_swap(perm[dim0], perm[dim1])
            if c > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif c < 0:
                break
    return perm


def _channels_last(shape, stride) -> bool:
    """Whether a 4-d (shape, stride) is dense channels-last, size-1 dims ignored (PyTorch's
    `is_contiguous(memory_format=channels_last)`)."""
    expected = 1
    for d in (1, 3, 2, 0):
        if shape[d] != 1:
            if stride[d] != expected:
                return False
            expected *= shape[d]
    return True


def _channels_last_dense(shape) -> tuple[int, ...]:
    out = [0] * 4
    acc = 1
    for d in (1, 3, 2, 0):
        out[d] = acc
        acc *= max(shape[d], 1)
    return tuple(out)
