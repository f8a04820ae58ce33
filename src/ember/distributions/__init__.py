"""`ember.distributions`: PyTorch's `torch.distributions` for the everyday distributions.

distribution.py          Distribution (shapes, validation, the sampling / scoring interface)
constraints.py           parameter and support constraints (PyTorch's names and reprs)
utils.py                 broadcast_all, probs <-> logits, lazy_property
normal.py uniform.py     Normal, Uniform (reparameterised: rsample carries gradients)
bernoulli.py categorical.py   Bernoulli, Categorical (probs or logits)
gamma.py beta.py dirichlet.py  Gamma, Beta, Dirichlet (PyTorch's gamma sampler, draw for draw)
transforms.py            Exp, Affine, Sigmoid, Tanh and Compose transforms
transformed_distribution.py   TransformedDistribution (a base pushed through transforms)
multivariate_normal.py   MultivariateNormal (covariance, precision or scale_tril)
independent.py           Independent (batch dims read as event dims)
kl.py                    kl_divergence and its register_kl registry
exp_family.py            ExponentialFamily (entropy and same-family KL from the log normaliser)

Sampling draws from ember's generator with PyTorch's kernels and call order, so a seeded
program gets PyTorch's samples.
"""

from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .constraint_registry import biject_to, transform_to
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .fishersnedecor import FisherSnedecor
from .gamma import Gamma
from .generalized_pareto import GeneralizedPareto
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .lkj_cholesky import LKJCholesky
from .log_normal import LogNormal
from .logistic_normal import LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .pareto import Pareto
from .poisson import Poisson
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull
from .wishart import Wishart

__all__ = [
    "AffineTransform", "Bernoulli", "Beta", "Categorical", "ComposeTransform", "Dirichlet",
    "Distribution", "ExpTransform", "Gamma", "Independent", "MultivariateNormal", "Normal",
    "SigmoidTransform", "TanhTransform", "Transform", "TransformedDistribution", "Uniform",
    "kl_divergence", "register_kl",
]
# NOTE: `constraints` and `transforms` are attributes but not in __all__, as in PyTorch: a
# `from torch.distributions import *` does not bind them.

__all__ += [
    "MixtureSameFamily", "OneHotCategorical", "OneHotCategoricalStraightThrough",
    "RelaxedBernoulli", "RelaxedOneHotCategorical",
]
__all__ += [
    "AbsTransform", "CatTransform", "CorrCholeskyTransform", "CumulativeDistributionTransform",
    "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
    "PowerTransform", "ReshapeTransform", "SoftmaxTransform", "SoftplusTransform",
    "StackTransform", "StickBreakingTransform", "biject_to", "identity_transform",
    "transform_to",
]
__all__ += ["Binomial", "Geometric", "Multinomial", "NegativeBinomial", "Poisson"]
# continuous families (laplace.py ... von_mises.py)
__all__ += [
    "Cauchy", "Chi2", "ContinuousBernoulli", "Exponential", "Gumbel", "HalfCauchy",
    "HalfNormal", "Laplace", "LogNormal", "LowRankMultivariateNormal", "Pareto", "StudentT",
    "VonMises", "Weibull"
]
__all__ += [
    "ExponentialFamily", "FisherSnedecor", "GeneralizedPareto", "InverseGamma", "Kumaraswamy",
    "LKJCholesky", "LogisticNormal", "Wishart",
]

def __getattr__(name: str):
    from ..compat import submodule_or_missing

    return submodule_or_missing(__name__, name)
