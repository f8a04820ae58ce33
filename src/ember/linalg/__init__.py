"""`ember.linalg`: PyTorch's `torch.linalg` namespace.

solvers.py        inv det slogdet solve solve_triangular (primitives + VJPs, jvp and batch
                  rules), inv_ex solve_ex
least_squares.py  pinv lstsq (one primitive + rules)
decompositions.py cholesky qr svd svdvals eigh eigvalsh (primitives + rules), cholesky_ex
norms.py          norm vector_norm matrix_norm cond matrix_rank
lu.py             lu_factor lu_factor_ex lu lu_unpack (one getrf primitive + VJP), lu_solve
tensor_solvers.py tensorinv tensorsolve (reshape to a matrix, then inv / solve)
eig.py            eig eigvals (geev primitive + VJP)
ldl.py            ldl_factor ldl_factor_ex ldl_solve (sytrf / sytrs kernels, no derivative)
products.py       multi_dot (cheapest bracketing) vecdot matrix_power vander, aliases
matrix_functions.py matrix_exp householder_product (composites)
lowrank.py        svd_lowrank pca_lowrank (randomized; exported as torch.svd_lowrank etc.)
_zero_det.py      the sign of a zero det / slogdet (PyTorch's product of LU pivots)
"""

from ..ops.matmul import matmul
from ._common import LinAlgError
from .decompositions import cholesky, cholesky_ex, eigh, eigvalsh, qr, svd, svdvals
from .eig import eig, eigvals
from .ldl import ldl_factor, ldl_factor_ex, ldl_solve
from .least_squares import lstsq, pinv
from .lu import lu, lu_factor, lu_factor_ex, lu_solve
from .matrix_functions import householder_product, matrix_exp
from .norms import cond, matrix_norm, matrix_rank, norm, vector_norm
from .products import cross, diagonal, matrix_power, multi_dot, vander, vecdot
from .solvers import det, inv, inv_ex, slogdet, solve, solve_ex, solve_triangular
from .tensor_solvers import tensorinv, tensorsolve

__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig", "eigh",
    "eigvals", "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor",
    "ldl_factor_ex", "ldl_solve", "lstsq", "lu", "lu_factor",
    "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_norm", "matrix_power",
    "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex",
    "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot",
    "vector_norm",
]

# NumPy's `axis=` / `keepdims=` spellings, which PyTorch's linalg functions also take.
from .._aliases import with_aliases as _with_aliases  # noqa: E402
from ._common import refuses_non_tensor as _refuses_non_tensor  # noqa: E402

# (matmul is ember's own parsed op; multi_dot, pinv and matrix_rank word their own
# TypeErrors)
_WORDED = ("multi_dot", "pinv", "matrix_rank")
for _name in __all__:
    _fn = globals()[_name]
    if _name not in ("LinAlgError", "matmul"):
        _fn = _refuses_non_tensor(_fn, _name, parses_operand=_name not in _WORDED)
    globals()[_name] = _with_aliases(_fn, _name, module=__name__, python_level=frozenset())
del _name, _fn


def __getattr__(name: str):
    from ..compat import submodule_or_missing

    return submodule_or_missing(__name__, name)
