"""MLX's reshape target: one -1 inferred from the array's size, and MLX's errors (its
messages, and its arithmetic: the known dimensions multiply as an unsigned 64-bit count,
so a negative one never matches a size)."""

from __future__ import annotations

_WORD = 1 << 64


def reshape_target(size: int, shape) -> tuple:
    """The shape an array of `size` elements takes for `reshape(shape)`, or MLX's error."""
    shape = [int(d) for d in shape]
    known, infer = 1, None
    for i, d in enumerate(shape):
        if d == -1:
            if infer is not None:
                raise ValueError("[reshape] Reshape can only infer one dimension.")
            infer = i
        else:
            known = known * d % _WORD
    if infer is not None:
        if known == 0:
            raise ValueError("[reshape] Cannot infer the shape of an empty array")
        shape[infer] = size // known
        known = known * shape[infer] % _WORD
    if known != size:
        text = "(" + ",".join(map(str, shape)) + ")"
        raise ValueError(f"[reshape] Cannot reshape array of size {size} into shape {text}.")
    return tuple(shape)
