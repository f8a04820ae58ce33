"""The shapes of pooling, shared by max and average pooling: output sizes, adaptive
bins, and PyTorch's checks of an adaptive pooling's sizes."""

from __future__ import annotations

from .._tensor import Tensor


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
    for d in range(input.ndim - nd, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(
                f"{name}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {list(input.shape)} with dimension {d} being empty")
