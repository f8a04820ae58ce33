"""Random sampling ops (placeholder streams; made PyTorch-exact later)."""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor
from .creation import _place, _sizes


def _gen(generator):
    from ..random import default_generator

    return default_generator if generator is None else generator


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False, out=None,
         layout=None, pin_memory=False) -> Tensor:
    d = dt.get_default_dtype() if dtype is None else dtype
    arr = _gen(generator)._rs.random_sample(_sizes(size)).astype(d.np)
    return _place(arr, d, device, requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False, out=None,
          layout=None, pin_memory=False) -> Tensor:
    d = dt.get_default_dtype() if dtype is None else dtype
    arr = _gen(generator)._rs.standard_normal(_sizes(size)).astype(d.np)
    return _place(arr, d, device, requires_grad)


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad=False, out=None) -> Tensor:
    if high is None:
        low, high = 0, low
    d = dt.int64 if dtype is None else dtype
    arr = _gen(generator)._rs.randint(low, high, size=tuple(size)).astype(d.np)
    return _place(arr, d, device, requires_grad)


def randperm(n: int, *, generator=None, dtype=None, device=None, requires_grad=False,
             out=None) -> Tensor:
    d = dt.int64 if dtype is None else dtype
    return _place(_gen(generator)._rs.permutation(n).astype(d.np), d, device, requires_grad)


def rand_like(input: Tensor, *, dtype=None, device=None, requires_grad=False, **kw) -> Tensor:
    return rand(input._shape, dtype=dtype or input._dtype, device=device or input.device,
                requires_grad=requires_grad)


def randn_like(input: Tensor, *, dtype=None, device=None, requires_grad=False, **kw) -> Tensor:
    return randn(input._shape, dtype=dtype or input._dtype, device=device or input.device,
                 requires_grad=requires_grad)


def uniform_(self: Tensor, a: float = 0.0, b: float = 1.0, *, generator=None) -> Tensor:
    vals = _gen(generator)._rs.uniform(a, b, self._shape)
    from ..autograd import grad_mode

    with grad_mode.no_grad():
        self.copy_(_place(np.asarray(vals).astype(self._dtype.np), self._dtype, None, False))
    return self


def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    vals = _gen(generator)._rs.normal(mean, std, self._shape)
    from ..autograd import grad_mode

    with grad_mode.no_grad():
        self.copy_(_place(np.asarray(vals).astype(self._dtype.np), self._dtype, None, False))
    return self


TENSOR_METHODS = {"uniform_": uniform_, "normal_": normal_}

__all__ = ["rand", "randn", "randint", "randperm", "rand_like", "randn_like"]
