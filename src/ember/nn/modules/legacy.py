"""Two layers PyTorch keeps for old programs: `CrossMapLRN2d` (Lua Torch's cross-channel
response normalisation, with its own forward and backward) and `NLLLoss2d` (deprecated:
NLLLoss under another name)."""

from __future__ import annotations

import warnings

import ember as E

from ..._tensor import Tensor
from ..._user_warnings import user_stacklevel
from ...autograd.function import Function
from .loss import NLLLoss
from .normalization import _ResponseNorm

__all__ = ["CrossMapLRN2d", "NLLLoss2d"]


class CrossMapLRN2d(Function):  # (named as PyTorch's: its node is CrossMapLRN2dBackward)
    """Lua Torch's SpatialCrossMapLRN, step for step as PyTorch runs it.

    # NOTE: PyTorch's running window never drops channel 0 (its loop subtracts only past
    # `pre_pad`), and its backward is the textbook LRN formula over a window shifted by
    # `size - (size - 1) // 2`, not the derivative of that forward; both are kept, so the
    # numbers and gradients are PyTorch's.
    """

    @staticmethod
    def forward(ctx, input: Tensor, size: int, alpha: float, beta: float, k: float) -> Tensor:
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             f"instead.")
        channels = input.shape[1]
        sq = input * input
        pre_pad = int((size - 1) / 2 + 1)
        scales = [sq[:, :min(pre_pad, channels)].sum(1)]
        for c in range(1, channels):
            s = scales[-1]
            if c < channels - pre_pad + 1:
                s = s + sq[:, c + pre_pad - 1]
            if c > pre_pad:
                s = s - sq[:, c - pre_pad]
            scales.append(s)
        scale = E.stack(scales, 1) * (alpha / size) + k
        output = scale.pow(-beta) * input
        ctx.save_for_backward(input, output)
        ctx.scale, ctx.size, ctx.alpha, ctx.beta = scale, size, alpha, beta
        return output

    @staticmethod
    def backward(ctx, grad_output: Tensor):
        input, output = ctx.saved_tensors
        size, channels = ctx.size, input.shape[1]
        lead = int(size - (size - 1) / 2)
        ratio = grad_output * output / ctx.scale
        padded = E.cat([ratio.new_zeros((input.shape[0], lead) + tuple(input.shape[2:])),
                        ratio,
                        ratio.new_zeros((input.shape[0], size - 1 - lead)
                                        + tuple(input.shape[2:]))], 1)
        accum = E.stack([padded[:, c:c + size].sum(1) for c in range(channels)], 1)
        grad = ctx.scale.pow(-ctx.beta) * grad_output
        grad = grad - (2 * ctx.alpha * ctx.beta / size) * input * accum
        return grad, None, None, None, None


_CrossMapLRN2d = CrossMapLRN2d


class CrossMapLRN2d(_ResponseNorm):
    """Cross-channel local response normalisation of 4-D input, Lua Torch's variant."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__(size, alpha, beta, k)

    def forward(self, input: Tensor) -> Tensor:
        return _CrossMapLRN2d.apply(input, self.size, self.alpha, self.beta, self.k)


class NLLLoss2d(NLLLoss):
    """Deprecated: NLLLoss (which takes (N, C, H, W) input itself)."""

    def __init__(self, weight: Tensor | None = None, size_average=None, ignore_index: int = -100,
                 reduce=None, reduction: str = "mean") -> None:
        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a "
                      "drop-in replacement and see "
                      "https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more details.",
                      FutureWarning, stacklevel=user_stacklevel())
        super().__init__(weight, size_average, ignore_index, reduce, reduction)
