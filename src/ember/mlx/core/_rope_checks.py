"""MLX's argument checks for `mx.fast.rope`, in MLX's order and with its messages. Without
them ember would rotate integer inputs, a 2-D input or more features than it has, read a
float offset as a fractional position, and broadcast an offset vector against the
positions instead of giving each batch entry its own."""

from __future__ import annotations

from ._array import array
from ._binding import bad_call
from ._indexing import shape_text

_NAME = "[rope]"
SIGNATURE = ("rope(a: array, dims: int, *, traditional: bool, base: float | None, scale: float, "
             "offset: int | array, freqs: array | None = None, stream: StreamOrDevice = None) "
             "-> array")


def _offset_type(x) -> tuple[str, str]:
    """The dtype (kind, name) of an offset; a Python scalar becomes an array first."""
    if isinstance(x, array):
        return x.dtype.kind, x.dtype.name
    if isinstance(x, bool):
        return "b", "bool"
    return ("i", "int32") if isinstance(x, int) else ("f", "float32")


def check_rope(a: array, dims: int, traditional, base, scale, offset, freqs) -> None:
    """Raise MLX's error for the first argument of `mx.fast.rope` it refuses: the
    binding's type checks, then its C++ checks (offsets before dims)."""
    if offset is None:
        kwargs = {"traditional": traditional, "base": base, "scale": scale, "offset": offset}
        if freqs is not None:
            kwargs["freqs"] = freqs
        raise bad_call("rope", SIGNATURE, (a, dims), kwargs)
    if not isinstance(offset, int | float | array):
        raise ValueError(f"Invalid type {type(offset).__name__} received in array "
                         "initialization.")
    if base is not None and freqs is not None:
        raise ValueError(f"{_NAME} Only one of base or freqs can have a value.")
    if base is None and freqs is None:
        raise ValueError(f"{_NAME} Neither base nor freqs has a value.")
    if a.ndim < 3:
        raise ValueError(f"{_NAME} Input must have at least 3 dimensions but got input with "
                         f"{a.ndim} dimensions.")
    if a.dtype.kind != "f":
        raise ValueError(f"{_NAME} Input must be a floating type but got {a.dtype.name}.")
    if isinstance(offset, array):
        if offset.ndim > 1:
            raise ValueError(f"{_NAME} offset must have at most one dimension but has shape "
                             f"{shape_text(offset.shape)}.")
        if offset.ndim == 1 and offset.size not in (1, a.shape[0]):
            raise ValueError(f"{_NAME} offset must be a scalar or vector with {a.shape[0]} "
                             f"elements but has shape {shape_text(offset.shape)}.")
    kind, name = _offset_type(offset)
    if kind not in ("i", "u"):
        raise ValueError(f"{_NAME} offset must be an integer but got type {name}.")
    if dims <= 0:
        raise ValueError(f"{_NAME} dims must be positive but got {dims}.")
    if dims % 2:
        raise ValueError(f"{_NAME} dims must be even but got {dims}.")
    if dims > a.shape[-1]:
        raise ValueError(f"{_NAME} dims must not exceed the input's last dimension "
                         f"({a.shape[-1]}) but got {dims}.")
    if freqs is not None and (freqs.ndim != 1 or freqs.size != dims // 2):
        raise ValueError(f"{_NAME} freqs must be one dimensional with size {dims // 2} but "
                         f"got shape {shape_text(freqs.shape)}.")
