"""ember.mlx: MLX's face on ember's engine (`import ember.mlx.core as mx`).

`core` is `mlx.core` (arrays, functions, transforms, random, files), `nn` and
`optimizers` MLX's layers and optimizers, `utils` its tree functions. MLX's semantics
are kept wherever they differ from PyTorch's (research notes in the repository's docs).
"""

from . import core  # noqa: F401
