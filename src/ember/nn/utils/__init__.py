"""ember.nn.utils: gradient clipping, parameter/vector conversion and parametrizations."""

from . import (
    clip_grad,
    convert_parameters,
    fusion,
    init,
    parametrizations,
    parametrize,
    rnn,
)
from .clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .fusion import (
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from .init import skip_init
from .rnn import PackedSequence
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm


def __getattr__(name: str):
    from ...compat import submodule_or_missing

    return submodule_or_missing(__name__, name)
