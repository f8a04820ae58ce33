"""ember.nn.functional: the functional form of every layer, activation and loss.

Thin bindings: activations come from `ember.ops.activation`, convolution and
pooling from `ember.ops.conv` / `ember.ops.pooling`, and the composites live in
`ember.nn._functional` (one file per family). Nothing here has a VJP of its own.
"""

from .. import _public_names
from . import grad  # noqa: F401  (torch.nn.functional.grad is torch.nn.grad)
from ._functional.activation import *  # noqa: F403
from ._functional.activation import __all__ as _act
from ._functional.attention import *  # noqa: F403
from ._functional.attention import __all__ as _attention
from ._functional.attention import _canonical_mask, _none_or_dtype  # noqa: F401
from ._functional.bilinear import *  # noqa: F403
from ._functional.bilinear import __all__ as _bilinear
from ._functional.embedding import *  # noqa: F403
from ._functional.embedding import __all__ as _embedding
from ._functional.embedding_bag import *  # noqa: F403
from ._functional.embedding_bag import __all__ as _embedding_bag
from ._functional.layers import *  # noqa: F403
from ._functional.layers import __all__ as _layers
from ._functional.linear_cross_entropy import linear_cross_entropy
from ._functional.loss import *  # noqa: F403
from ._functional.loss import __all__ as _loss
from ._functional.margin_loss import *  # noqa: F403
from ._functional.margin_loss import __all__ as _margin_loss
from ._functional.pooling import *  # noqa: F403
from ._functional.pooling import __all__ as _pooling
from ._functional.sampling import *  # noqa: F403
from ._functional.sampling import __all__ as _sampling
from ._functional.spatial import *  # noqa: F403
from ._functional.spatial import __all__ as _spatial

__all__ = [*_act, *_attention, *_bilinear, *_embedding, *_embedding_bag, *_layers, *_loss,
           *_margin_loss, *_pooling, *_sampling, *_spatial, "linear_cross_entropy"]


def __getattr__(name: str):
    from ..compat import missing

    raise missing(__name__, name)


# (PyTorch's own names for two of these: the builtin log_sigmoid and the Python _threshold;
# and its F.celu and F.selu are Python functions of their own beside torch.celu / selu)
_public_names.name_as_published(globals(), {"logsigmoid": "log_sigmoid",
                                            "threshold": "_threshold"}, own=("celu", "selu"))
