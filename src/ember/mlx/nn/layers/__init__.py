"""MLX's layers, one file per family."""

from .activations import (
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    HardShrink,
    Hardswish,
    HardTanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    PReLU,
    ReLU,
    ReLU2,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Step,
    Tanh,
    celu,
    elu,
    gelu,
    gelu_approx,
    gelu_fast_approx,
    glu,
    hard_shrink,
    hard_tanh,
    hardswish,
    leaky_relu,
    log_sigmoid,
    log_softmax,
    mish,
    prelu,
    relu,
    relu2,
    relu6,
    selu,
    sigmoid,
    silu,
    softmax,
    softmin,
    softplus,
    softshrink,
    softsign,
    step,
    tanh,
)
from .base import Module
from .containers import Sequential
from .convolution import Conv1d, Conv2d, Conv3d
from .convolution_transpose import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .distributed import (
    AllToShardedLinear,
    FullyShardedModule,
    QuantizedAllToShardedLinear,
    QuantizedShardedToAllLinear,
    ShardedToAllLinear,
    fully_shard,
)
from .dropout import Dropout, Dropout2d, Dropout3d
from .embedding import Embedding
from .linear import Bilinear, Identity, Linear
from .normalization import BatchNorm, GroupNorm, InstanceNorm, LayerNorm, RMSNorm
from .pooling import AvgPool1d, AvgPool2d, AvgPool3d, MaxPool1d, MaxPool2d, MaxPool3d
from .positional_encoding import ALiBi, RoPE, SinusoidalPositionalEncoding
from .quantized import QQLinear, QuantizedEmbedding, QuantizedLinear, quantize
from .recurrent import GRU, LSTM, RNN
from .transformer import (
    MultiHeadAttention,
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
from .upsample import Upsample
