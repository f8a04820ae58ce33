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

Sampling draws from ember's generator with PyTorch's kernels and call order, so a seeded
program gets PyTorch's samples.
"""

from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .categorical import Categorical
from .dirichlet import Dirichlet
from .distribution import Distribution
from .gamma import Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import (
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    SigmoidTransform,
    TanhTransform,
    Transform,
)
from .uniform import Uniform

__all__ = [
    "AffineTransform", "Bernoulli", "Beta", "Categorical", "ComposeTransform", "Dirichlet",
    "Distribution", "ExpTransform", "Gamma", "Independent", "MultivariateNormal", "Normal",
    "SigmoidTransform", "TanhTransform", "Transform", "TransformedDistribution", "Uniform",
    "constraints", "kl_divergence", "register_kl", "transforms",
]


def __getattr__(name: str):
    from ..compat import submodule_or_missing

    return submodule_or_missing(__name__, name)
