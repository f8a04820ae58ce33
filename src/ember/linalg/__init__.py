"""`ember.linalg`: PyTorch's `torch.linalg` namespace.

solvers.py        inv det slogdet solve solve_triangular pinv lstsq (primitives + VJPs)
decompositions.py cholesky qr svd svdvals eigh eigvalsh (primitives + VJPs)
norms.py          norm vector_norm matrix_norm matrix_rank
products.py       multi_dot (cheapest bracketing) vecdot matrix_power, aliases
"""

from ..ops.matmul import matmul
from ._common import LinAlgError
from .decompositions import cholesky, eigh, eigvalsh, qr, svd, svdvals
from .norms import matrix_norm, matrix_rank, norm, vector_norm
from .products import cross, diagonal, matrix_power, multi_dot, vecdot
from .solvers import det, inv, lstsq, pinv, slogdet, solve, solve_triangular

__all__ = [
    "LinAlgError", "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "lstsq",
    "matmul", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr",
    "slogdet", "solve", "solve_triangular", "svd", "svdvals", "vecdot", "vector_norm",
]
