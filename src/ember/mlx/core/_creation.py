"""MLX's creation functions beyond `_ops` (asarray, empty, the signal windows) and its
dtype queries (result_type, can_cast, isdtype). The windows are computed in float32 with
MLX's own formulas, so they round as MLX's do."""

from __future__ import annotations

import math

from . import _dtypes as D
from . import _ops as O
from ._array import array
from ._dtypes import Dtype


def asarray(a, dtype: Dtype | None = None, *, copy: bool | None = None) -> array:
    """`a` as an array (a new array object, as MLX's, sharing an array's values)."""
    return array(a, dtype)


def empty(shape, dtype: Dtype = D.float32) -> array:
    """An array of `shape` (zeros: ember does not hand out uninitialised memory)."""
    return O.zeros(shape, dtype)


def empty_like(a, /, dtype: Dtype | None = None) -> array:
    """`empty` of `a`'s shape (and dtype unless given)."""
    a = a if isinstance(a, array) else array(a)
    return O.zeros(a.shape, dtype or a._dtype)


def _window(m: int, formula) -> array:
    if m < 1:
        return array([], D.float32)
    if m == 1:
        return O.ones((1,), D.float32)
    return formula(O.arange(0, m, dtype=D.float32))


def bartlett(M: int) -> array:  # noqa: N803  (MLX's name)
    """The triangular window 1 - |2n/(M-1) - 1|."""
    return _window(M, lambda n: 1.0 - O.abs(array(2.0 / (M - 1), D.float32) * n - 1.0))


def hanning(M: int) -> array:  # noqa: N803
    """The Hann window, as sin^2(pi n / (M-1))."""
    return _window(M, lambda n: O.square(O.sin(array(math.pi / (M - 1), D.float32) * n)))


def hamming(M: int) -> array:  # noqa: N803
    """The Hamming window 0.54 - 0.46 cos(2 pi n / (M-1))."""
    return _window(M, lambda n: 0.54 - 0.46 * O.cos(array(2 * math.pi / (M - 1),
                                                          D.float32) * n))


def blackman(M: int) -> array:  # noqa: N803
    """The Blackman window, as 0.34 - 0.5 cos x + 0.16 cos^2 x (x = 2 pi n / (M-1))."""
    def formula(n: array) -> array:
        c = O.cos(array(2 * math.pi / (M - 1), D.float32) * n)
        return (0.34 - 0.5 * c) + 0.16 * O.square(c)
    return _window(M, formula)


# -- dtype queries (plain Python: nothing to record) ------------------------------------------

def result_type(*arrays_and_dtypes) -> Dtype:
    """The dtype MLX's promotion gives the arrays' and dtypes' types together."""
    if not arrays_and_dtypes:
        raise ValueError("[result_type] At least one array or dtype is required.")
    types = [x._dtype if isinstance(x, array) else x for x in arrays_and_dtypes]
    out = types[0]
    for t in types[1:]:
        out = D.promote_types(out, t)
    return out


def can_cast(from_, to: Dtype) -> bool:
    """Whether promoting `from_` with `to` gives `to`."""
    return result_type(from_, to) is to


_KINDS = {
    "bool": lambda d: d is D.bool_,
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: d.kind == "f",
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d.kind in "iufc",
}


def isdtype(dtype: Dtype, kind) -> bool:
    """Whether `dtype` is one of the dtypes or Array API kind names in `kind`."""
    for k in kind if isinstance(kind, tuple) else (kind,):
        if isinstance(k, Dtype):
            if k is dtype:
                return True
            continue
        if k not in _KINDS:
            raise ValueError(f"[isdtype] Unknown data type kind: '{k}'.")
        if _KINDS[k](dtype):
            return True
    return False


__all__ = ["asarray", "bartlett", "blackman", "empty", "empty_like", "hamming", "hanning"]
DTYPE_QUERIES = ["can_cast", "isdtype", "result_type"]
