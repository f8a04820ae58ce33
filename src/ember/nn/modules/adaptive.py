"""The adaptive softmax (Grave et al., 2016): a cheap head over the frequent classes plus
one cluster token per tail, and low-rank tails for the rarer classes.

Classes must be numbered by falling frequency. The head scores the `cutoffs[0]` most
frequent classes and one extra logit per tail cluster; a class in tail i gets
log p(cluster i) + log p(class | cluster i), where the tail projects the input down to
in_features // div_value**(i + 1) features first. Only the clusters a batch's targets
fall in are evaluated, which is the point for large Zipf-shaped vocabularies.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence

import ember as E

from ..._tensor import Tensor
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


def _checked_cutoffs(cutoffs: Sequence[int], n_classes: int) -> list[int]:
    """The cutoffs as a list, refused (ValueError, PyTorch's words) unless they are unique
    positive integers in increasing order, each at most n_classes - 1."""
    cuts = list(cutoffs)
    if not cuts:
        raise ValueError("cutoffs should be a sequence of length larger than 0")
    valid = (cuts == sorted(cuts) and min(cuts) > 0 and max(cuts) <= n_classes - 1
             and len(set(cuts)) == len(cuts) and all(int(c) == c for c in cuts))
    if not valid:
        raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in "
                         "an increasing order, where each value is between 1 and n_classes-1")
    return cuts


class AdaptiveLogSoftmaxWithLoss(Module):
    """Log-probabilities of targets under an adaptive softmax, and their mean NLL.

    `forward(input, target)` returns the namedtuple (output, loss): each row's target
    log-probability and the mean of their negatives. `log_prob` gives the full
    (N, n_classes) table and `predict` the most probable class of each row."""

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int],
                 div_value: float = 4.0, head_bias: bool = False, device=None,
                 dtype=None) -> None:
        super().__init__()
        cuts = _checked_cutoffs(cutoffs, n_classes)
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cuts + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        factory = {"device": device, "dtype": dtype}
        # (created in PyTorch's order, head then each tail's two layers, so a seed gives
        # the same weights)
        self.head = Linear(in_features, self.head_size, bias=head_bias, **factory)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **factory),
                                        Linear(hidden, size, bias=False, **factory)))

    def reset_parameters(self) -> None:
        """Draw every weight again as at construction."""
        self.head.reset_parameters()
        for down, up in self.tail:
            down.reset_parameters()
            up.reset_parameters()

    def _check_shapes(self, input: Tensor, target: Tensor) -> None:
        if target.dim() == 1:
            if input.size(0) != target.size(0):
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input.dim() != 2:
                raise RuntimeError("1D target tensor expects 2D input tensors, but found "
                                   f"inputs with size {input.size()}")
        elif target.dim() == 0:
            if input.dim() != 1:
                raise RuntimeError("0D target tensor expects 1D input tensors, but found "
                                   f"inputs with size {input.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")

    def forward(self, input: Tensor, target: Tensor) -> _ASMoutput:
        """(output, loss): each row's log p(target) and the mean negative log-likelihood."""
        self._check_shapes(input, target)
        batched = target.dim() == 1
        x = input if batched else input.unsqueeze(0)
        t = target if batched else target.unsqueeze(0)
        n = t.size(0)
        output = x.new_zeros(n)
        head_index = t.new_empty(n)  # the head logit each row reads: its class or cluster
        bounds = [0] + self.cutoffs
        covered = 0
        for i in range(len(bounds) - 1):
            in_bucket = (t >= bounds[i]) & (t < bounds[i + 1])
            rows = in_bucket.nonzero().squeeze()
            if rows.numel() == 0:
                continue
            covered += rows.numel()
            if i == 0:
                head_index.index_copy_(0, rows, t[in_bucket])
                continue
            head_index.index_fill_(0, rows, self.shortlist_size + i - 1)
            logits = self.tail[i - 1](x.index_select(0, rows))
            within = (t[in_bucket] - bounds[i]).unsqueeze(1)
            picked = F.log_softmax(logits, dim=1).gather(1, within)
            output.index_copy_(0, rows, picked.squeeze(1))
        if covered != n:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{t.min().item()}, {t.max().item()}] were "
                               "found. ")
        head_logprob = F.log_softmax(self.head(x), dim=1)
        output += head_logprob.gather(1, head_index.unsqueeze(1)).squeeze()
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        """The (N, n_classes) table: head classes directly, tail classes as
        log p(cluster) + log p(class | cluster)."""
        table = input.new_empty((head_output.size(0), self.n_classes))
        head_logprob = F.log_softmax(head_output, dim=1)
        table[:, :self.shortlist_size] = head_logprob[:, :self.shortlist_size]
        for i, tail in enumerate(self.tail):
            start, stop = self.cutoffs[i], self.cutoffs[i + 1]
            cluster = head_logprob[:, self.shortlist_size + i].unsqueeze(1)
            table[:, start:stop] = F.log_softmax(tail(input), dim=1) + cluster
        return table

    def log_prob(self, input: Tensor) -> Tensor:
        """log p(c | input) for every class c: shape (N, n_classes)."""
        return self._full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:
        """The most probable class of each row, as `log_prob(input).argmax(1)`, but the
        tails are evaluated only for rows whose best head logit is a cluster."""
        head_output = self.head(input)
        best = E.argmax(head_output, dim=1)
        in_tail = best >= self.shortlist_size
        if not in_tail.any():
            return best
        if in_tail.all():
            return E.argmax(self._full_log_prob(input, head_output), dim=1)
        table = self._full_log_prob(input[in_tail], head_output[in_tail])
        best[in_tail] = E.argmax(table, dim=1)
        return best
