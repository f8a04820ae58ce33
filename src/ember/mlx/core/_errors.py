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
