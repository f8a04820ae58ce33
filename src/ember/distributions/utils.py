"""Helpers shared by the distributions: parameter broadcasting, the probs <-> logits maps,
`lazy_property` (a parameter computed from the other one on first use), `delegated` (an
attribute read from an inner distribution) and the packing of lower triangles."""

from __future__ import annotations

import numbers

from .. import _dtype as dt
from .. import _names
from .._tensor import Tensor
from ..ops.creation import tensor

__all__ = ["broadcast_all", "clamp_probs", "delegated", "lazy_property", "logits_to_probs",
           "probs_to_logits"]

# The Euler-Mascheroni constant (PyTorch's module attribute of the same name)
euler_constant = 0.57721566490153286060


def broadcast_all(*values):
    """Numbers and tensors as tensors of one broadcast shape (numbers take the dtype of the
    first tensor, or the default dtype when all are numbers)."""
    from ..ops.join import broadcast_tensors

    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         f"{_names.prefix}.Tensor or objects implementing __torch_function__.")
    if all(isinstance(v, Tensor) for v in values):
        return broadcast_tensors(*values)
    like = next((v for v in values if isinstance(v, Tensor)), None)
    kw = ({"dtype": dt.get_default_dtype()} if like is None
          else {"dtype": like.dtype, "device": like.device})
    values = [v if isinstance(v, Tensor) else tensor(v, **kw) for v in values]
    return broadcast_tensors(*values)


def clamp_probs(probs: Tensor) -> Tensor:
    """Probabilities kept eps away from 0 and 1, so their logs stay finite."""
    eps = dt.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    p = clamp_probs(probs)
    return p.log() - (-p).log1p() if is_binary else p.log()


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    from ..nn.functional import softmax

    return logits.sigmoid() if is_binary else softmax(logits, dim=-1)


class lazy_property:
    """A read-only attribute computed once, on first access, then stored on the instance
    (under grad mode, so that gradients flow to the parameter it was computed from)."""

    def __init__(self, fn) -> None:
        self.wrapped = fn
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        from ..autograd.grad_mode import enable_grad

        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def delegated(holder: str, name: str) -> property:
    """A read-only property that is `self.<holder>.<name>` (LogNormal's loc is its base
    Normal's, Multinomial's probs its Categorical's)."""
    return property(lambda self: getattr(getattr(self, holder), name),
                    doc=f"`{holder}.{name}`")


def _tril_mask(n: int, diag: int, device):
    from ..ops.creation import arange

    a = arange(n, device=device)
    return a < a.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The lower triangle (below diagonal `diag`) of `mat`'s last two dims, in row order."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag, mat.device)]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The inverse of tril_matrix_to_vec: a D x D lower-triangular matrix from its entries."""
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1]
                            + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > dt.finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be "
                         "expressed as the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    mat[..., _tril_mask(n, diag, vec.device)] = vec
    return mat
