"""multinomial's argument checks in PyTorch's order and words (its `multinomial_out`): the
input's rank and dtype, the `out` dtype, the sample count and category count; then, for a
result with elements whose rows have no categories, the refusal of the path that samples."""

from __future__ import annotations

from .. import _dtype as dt
from .._tensor import Tensor
from ._arg_parser_text import need_int, need_tensor
from ._common import type_name


def check_probs(input: Tensor, num_samples: int, replacement: bool, out) -> int:
    """Refuse what PyTorch refuses before it resizes `out` and draws; the sample count as
    an int."""
    need_tensor(input, "multinomial")
    num_samples = need_int(num_samples, "multinomial", "num_samples", 2)
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input._dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{type_name(input._dtype)}")
    if isinstance(out, Tensor) and out._dtype is not dt.int64:
        raise RuntimeError(f"multinomial expects Long tensor out, got: {type_name(out._dtype)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n_cat = input._shape[-1]
    if not replacement and num_samples > n_cat:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if n_cat > 2**24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    return num_samples


def check_categories(input: Tensor, num_samples: int, replacement: bool) -> None:
    """Rows with no categories (and a result with elements): one sample, or none put back,
    goes through a min/max check of the probabilities, which an empty input fails; several
    samples put back find each row's sum zero."""
    if input._shape[-1] != 0:
        return
    if not replacement or num_samples == 1:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                           "operation has no identity.")
    raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
