"""The shapes of pooling, shared by max and average pooling: output sizes, adaptive
bins, and PyTorch's checks of an adaptive pooling's sizes."""

from __future__ import annotations

from .._tensor import Tensor
from ._size_args import int_list


def pool_out(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    span = size + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def as_tuple(v, nd: int) -> tuple[int, ...]:
    if isinstance(v, int):
        return (v,) * nd
    v = tuple(int(i) for i in v)
    return v * nd if len(v) == 1 else v


def bins(size: int, out: int) -> list[tuple[int, int]]:
    """The [start, end) of each of `out` adaptive bins over `size` (they may overlap)."""
    return [((o * size) // out, -(-((o + 1) * size) // out)) for o in range(out)]


def adaptive_sizes(nd: int, input: Tensor, output_size) -> tuple:
    """The output size, a None entry taking the input's size. torch.nn.functional reads a
    sequence against the input's dims first (a ValueError when it has too few)."""
    if isinstance(output_size, int) or output_size is None:
        return (output_size,) * nd if nd == 1 or input.ndim <= nd else \
            tuple(input.shape[-nd + i] if output_size is None else output_size
                  for i in range(nd))
    sizes = tuple(output_size)
    if nd > 1 and input.ndim <= len(sizes):
        raise ValueError(f"Input dimension should be at least {len(sizes) + 1}")
    if len(sizes) != nd:
        return sizes
    return tuple(input.shape[-nd + i] if sizes[i] is None else sizes[i] for i in range(nd))


def adaptive_checks(kind: str, nd: int, input: Tensor, sizes: tuple) -> None:
    """PyTorch's checks of a 2-d or 3-d adaptive pooling's input (kind: "avg" or "max")."""
    name = f"adaptive_{kind}_pool{nd}d"
    if input.ndim not in (nd + 1, nd + 2):
        sep = ": " if kind == "max" else " "
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but "
                           f"got{sep}{list(input.shape)}")
    if len(sizes) != nd:
        raise RuntimeError(f"{name}: output_size must be {nd}" if kind == "avg" else
                           f"{name}(): internal error: output_size.size() must be {nd}")
    if kind == "avg" and any(s < 0 for s in sizes):
        shown = ", ".join(str(s) for s in sizes[:2]) + "".join(f",{s}" for s in sizes[2:])
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal "
                           f"to 0 but received {{{shown}}}")
    # (2-d average pooling looks at the two pooled dims only; the others at every dim but
    # the first, a batched input's channels and an unbatched input's pooled dims too)
    first = input.ndim - 2 if kind == "avg" and nd == 2 else 1
    for d in range(first, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(
                f"{name}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {list(input.shape)} with dimension {d} being empty")


def _wrong_dims(kind: str, nd: int, input: Tensor) -> None:
    """PyTorch's refusal of an input with the wrong number of dims, in each kernel's words
    (2-d average pooling reads the channel dim first: an IndexError below three dims)."""
    n, shape = input.ndim, list(input.shape)
    if kind == "avg" and nd == 1:
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {n}-dimensional tensor for "
                           "argument #1 'self' (while checking arguments for avg_pool1d)")
    if kind == "avg" and nd == 2:
        if n < 3:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-max(n, 1)}, {max(n, 1) - 1}], but got -3)")
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{shape}")
    if kind == "max" and nd == 1:
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{shape}")
    raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for "
                       "input")


def adaptive_1d_size(kind: str, input: Tensor, output_size) -> int:
    """The one output size of a 1-d adaptive pooling after PyTorch's checks, in its order and
    words: the parser's reading of its int[1] (a lone int or a sequence of ints), the input's
    two or three dims, exactly one size, and (max) no empty dim but the first. The rest is
    checked by the 2-d pooling it runs on the input unsqueezed."""
    name = f"adaptive_{kind}_pool1d"
    sizes = int_list((output_size,), name, "output_size", 2, method=False, lone_int=True)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional "
                           f"tensor for argument #1 'self' (while checking arguments for {name})")
    if len(sizes) != 1:
        raise RuntimeError(f"{name}() argument 'output_size' should contain one int (got "
                           f"{len(sizes)})")
    for d in range(1, input.ndim if kind == "max" else 1):
        if input.shape[d] == 0:
            raise RuntimeError(
                f"{name}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {list(input.shape)} with dimension {d} being empty")
    return sizes[0]


def _empty_dims(kind: str, nd: int, input: Tensor) -> None:
    """PyTorch's refusal of an empty dim other than a batched input's batch dim, in each
    kernel's words (1-d average pooling runs the 2-d kernel on the input unsqueezed)."""
    first = 1 if input.ndim == nd + 2 else 0
    if all(input.shape[d] for d in range(first, input.ndim)):
        return
    shape = list(input.shape)
    if nd == 3:
        # NOTE: PyTorch prints the empty dim's size (always 0) where it means its index
        fn = "avg_pool3d()" if kind == "avg" else "max_pool3d_with_indices_out_cpu_template()"
        raise RuntimeError(f"{fn}: Expected input's non-batch dimensions to have positive "
                           f"length, but input has a shape of {shape} and non-batch dimension "
                           "0 has length zero!")
    if kind == "avg" and nd == 1:
        shape.insert(len(shape) - 1, 1)
    own = kind == "max" and nd == 1  # (max_pool1d's own check; else the 2-d kernel's)
    raise RuntimeError(f"{'max_pool1d: Expected 2D or 3D' if own else 'Expected 3D or 4D'} "
                       f"(batch mode) tensor with optional 0 dim batch size for input, but "
                       f"got:{shape}")


def window_args(kind: str, nd: int, input: Tensor, kernel_size, stride, padding,
                dilation=1) -> tuple:
    """(kernel, stride, padding, dilation) of an nd pooling ("avg" or "max") as tuples,
    after PyTorch's checks of the input's dims and of those sizes, in its order and words:
    a zero stride, a negative pad, a kernel or stride below one, a pad past half the
    kernel."""
    fname = f"{kind}_pool{nd}d"
    for pos, (arg, v) in enumerate((("kernel_size", kernel_size), ("stride", stride),
                                    ("padding", padding), ("dilation", dilation)), 2):
        if v.__class__ is not int and v.__class__ is not tuple and not (v is None and
                                                                     arg == "stride"):
            int_list((v,), fname, arg, pos, method=False, lone_int=True)  # (its TypeErrors)
    kernel = as_tuple(kernel_size, nd)
    stride = kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) \
        else as_tuple(stride, nd)
    padding, dilation = as_tuple(padding, nd), as_tuple(dilation, nd)
    # (2-d average pooling checks the sizes before a surplus of dims)
    late = kind == "avg" and nd == 2 and input.ndim > nd + 2
    if input.ndim not in (nd + 1, nd + 2) and not late:
        _wrong_dims(kind, nd, input)
    if kind == "max" and nd == 1:  # (max_pool1d refuses empty dims with its dims check)
        _empty_dims(kind, nd, input)
    if kind == "max" and nd == 1:  # (max_pool1d has checks of its own)
        for what, v, least in (("kernel_size", kernel[0], 1), ("stride", stride[0], 1),
                               ("padding", padding[0], 0), ("dilation", dilation[0], 1)):
            if v < least:
                raise RuntimeError(f"max_pool1d() {what} must be "
                                   f"{'non-negative' if least == 0 else 'greater than zero'}"
                                   f", but got {v}")
    else:
        # (1-d average pooling runs PyTorch's 2-d kernel with a height of one)
        names = ("T", "H", "W")[3 - max(nd, 2):]
        shown = ((1,) if nd == 1 else ())
        for s, p in zip(stride, padding):
            if s == 0:
                raise RuntimeError("stride should not be zero")
            if p < 0:
                raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        for letter, values in (("k", kernel), ("d", stride)):
            if any(v <= 0 for v in values):
                what = "kernel size" if letter == "k" else "stride"
                got = " ".join(f"{letter}{n}: {v}" for n, v in zip(names, shown + values))
                raise RuntimeError(f"{what} should be greater than zero, but got {got}")
    for i in range(nd):
        if padding[i] > kernel[i] // 2 and kind == "max" and nd == 1:
            raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, "
                               f"but got padding={padding[0]} and kernel_size={kernel[0]}")
        if padding[i] > kernel[i] // 2:  # (PyTorch's test: of the kernel, not dilated)
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={padding[i]}, kernel_size={kernel[i]} and dilation="
                               f"{dilation[i]}")
    if late:
        _wrong_dims(kind, nd, input)
    _empty_dims(kind, nd, input)
    return kernel, stride, padding, dilation
