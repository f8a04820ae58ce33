"""`torch.nn.utils.stateless`: the pre-2.0 home of `functional_call` (now `func`'s)."""

from __future__ import annotations

import warnings

from ..._user_warnings import user_stacklevel

__all__ = ["functional_call"]


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """`ember.func.functional_call`, with PyTorch's FutureWarning that this name is going."""
    from ...func import functional_call as call

    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 "
                  "and will be removed in a future version of PyTorch. Please use "
                  "`torch.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=user_stacklevel())
    return call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights,
                strict=strict)
