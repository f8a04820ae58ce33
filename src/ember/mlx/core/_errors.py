"""ember's exceptions as MLX's types.

ember's ops raise what PyTorch raises, and PyTorch reports bad arguments (shapes that do
not broadcast, a reshape to the wrong size, mismatched products, duplicate axes) as
`RuntimeError`. MLX reports them as `ValueError` (C++'s `invalid_argument`), so a program
that catches `ValueError` around an MLX call expects that. Every public mx function turns a
plain `RuntimeError` that ember's core raised into a `ValueError` with the same message;
the MLX face's own `RuntimeError`s (raised where MLX raises one) and other types pass as
they are.
"""

from __future__ import annotations


def from_core(e: BaseException) -> bool:
    """Whether `e` is a plain RuntimeError raised outside the MLX face (by ember's core)."""
    if e.__class__ is not RuntimeError:
        return False
    tb = e.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return not tb.tb_frame.f_globals.get("__name__", "").startswith("ember.mlx")


def as_value_error(e: RuntimeError) -> ValueError:
    out = ValueError(str(e))
    out.__traceback__ = e.__traceback__
    return out


def check_broadcast(sa: tuple, sb: tuple) -> None:
    """MLX's error for two shapes that do not broadcast (ember's core would name only the
    first axis that differs, as PyTorch does)."""
    for x, y in zip(reversed(sa), reversed(sb), strict=False):
        if x != y and x != 1 and y != 1:
            raise ValueError(f"[broadcast_shapes] Shapes ({','.join(map(str, sa))}) and "
                             f"({','.join(map(str, sb))}) cannot be broadcast.")


def check_broadcasts(*shapes) -> None:
    """`check_broadcast` over several shapes, as MLX folds them: the first two, then their
    broadcast with the next, ..."""
    out = tuple(shapes[0])
    for s in shapes[1:]:
        check_broadcast(out, tuple(s))
        n = max(len(out), len(s))
        out, s = (1,) * (n - len(out)) + out, (1,) * (n - len(s)) + tuple(s)
        out = tuple(y if x == 1 else x for x, y in zip(out, s, strict=True))
