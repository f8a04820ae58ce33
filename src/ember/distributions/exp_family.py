"""ExponentialFamily: the base of distributions with density exp(<t(x), theta> - F(theta) + k(x)).

A family names its natural parameters theta (`_natural_params`), its log normaliser F
(`_log_normalizer`) and the expected carrier measure E[k(x)] (`_mean_carrier_measure`). The
entropy then follows from F alone as a Bregman divergence, F(theta) - <theta, grad F(theta)>
- E[k], with grad F taken by autograd (Nielsen and Nock, "Entropies and cross-entropies of
exponential families"); kl.py registers the KL between two members of one family the same way.
"""

from __future__ import annotations

from .._tensor import Tensor
from ..autograd.entry_points import grad
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """A distribution of an exponential family: entropy (and same-family KL) from its log
    normaliser, for families that define no closed form of their own."""

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        """The natural parameters theta, one tensor each."""
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        """F(theta): the log of the density's normalising constant, per batch element."""
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float:
        """E[k(x)], the carrier measure's mean (a number)."""
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """H = F(theta) - <theta, grad F(theta)> - E[k(x)], grad F by autograd."""
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        log_norm = self._log_normalizer(*nparams)
        grads = grad(log_norm.sum(), nparams, create_graph=True)
        result = result + log_norm
        for theta, g in zip(nparams, grads):
            result = result - (theta * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
