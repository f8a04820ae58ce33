"""ember.special: the `torch.special` functions ember has, under their special-module names."""

from __future__ import annotations

from . import Tensor, erf, erfc, erfinv, exp2, expm1, log1p, logit, logsumexp, sigmoid
from . import round as _round
from ._aliases import with_aliases
from .nn.functional import log_softmax, softmax
from .ops.composite_math import sinc, xlogy
from .ops.orthogonal_polynomials import (
    chebyshev_polynomial_t,
    chebyshev_polynomial_u,
    chebyshev_polynomial_v,
    chebyshev_polynomial_w,
    hermite_polynomial_h,
    hermite_polynomial_he,
    laguerre_polynomial_l,
    legendre_polynomial_p,
    shifted_chebyshev_polynomial_t,
    shifted_chebyshev_polynomial_u,
    shifted_chebyshev_polynomial_v,
    shifted_chebyshev_polynomial_w,
)
from .ops.special_ops import (
    airy_ai,
    bessel_j0,
    bessel_j1,
    bessel_y0,
    bessel_y1,
    digamma,
    entr,
    erfcx,
    i0,
    i0e,
    i1,
    i1e,
    log_ndtr,
    modified_bessel_i0,
    modified_bessel_i1,
    modified_bessel_k0,
    modified_bessel_k1,
    ndtr,
    ndtri,
    polygamma,
    scaled_modified_bessel_k0,
    scaled_modified_bessel_k1,
    spherical_bessel_j0,
    xlog1py,
    zeta,
)
from .ops.special_ops import igamma as gammainc
from .ops.special_ops import igammac as gammaincc
from .ops.special_ops import lgamma as gammaln
from .ops.special_ops import mvlgamma as multigammaln
from .ops.unary_math import round_decimals as _round_decimals

expit = sigmoid


def round(input: Tensor, *, decimals: int = 0, out=None) -> Tensor:  # noqa: A001
    """torch.special.round: always the decimals form of round (so integers are refused)."""
    _round_decimals(input, decimals, "special_round")
    return _round(input, decimals=decimals, out=out)


psi = digamma
# torch.special's softmax and log_softmax take `axis=` (torch.nn.functional's do not).
log_softmax = with_aliases(log_softmax, "log_softmax", module=__name__)
softmax = with_aliases(softmax, "softmax", module=__name__)
# (bound again so that its errors name it as torch's parser does: special_logsumexp())
logsumexp = with_aliases(logsumexp.__wrapped__, "logsumexp", module=__name__)

__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
           "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
           "chebyshev_polynomial_w", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv",
           "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
           "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e",
           "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr",
           "log_softmax", "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1",
           "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri",
           "polygamma", "psi", "round", "scaled_modified_bessel_k0",
           "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
           "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0",
           "xlog1py", "xlogy", "zeta"]


def __getattr__(name: str):
    from .compat import missing

    raise missing(__name__, name)
