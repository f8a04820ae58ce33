"""ember.testing: `assert_close` with PyTorch's default tolerances and failure messages.

Tensors are compared attribute by attribute (shape, device, dtype, optionally stride),
then value by value with `|actual - expected| <= atol + rtol * |expected|` computed in
the tensors' own dtype, as `torch.testing.assert_close` does. Numbers, sequences and
mappings are compared recursively; a failure inside one names the item it occurred for.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from . import _dtype as dt
from ._tensor import Tensor

# (rtol, atol) by dtype; every other dtype compares exactly.
_PRECISION = {
    dt.float16: (1e-3, 1e-5), dt.bfloat16: (1.6e-2, 1e-5), dt.float32: (1.3e-6, 1e-5),
    dt.float64: (1e-7, 1e-7), dt.complex64: (1.3e-6, 1e-5), dt.complex128: (1e-7, 1e-7),
}


class _Mismatch(Exception):
    """A failed comparison: the exception type to raise and its message."""

    def __init__(self, kind: type, msg: str) -> None:
        super().__init__(msg)
        self.kind = kind
        self.msg = msg


def _tolerances(dtypes, rtol, atol) -> tuple[float, float]:
    if (rtol is None) != (atol is None):
        raise ValueError("Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {'rtol' if rtol is None else 'atol'}.")
    if rtol is not None:
        return rtol, atol
    pairs = [_PRECISION.get(d, (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _diff_lines(abs_diff, rel_diff, atol, rtol, abs_at=None, rel_at=None) -> str:
    exact = rtol == 0 and atol == 0
    lines = []
    for kind, diff, at, tol in (("absolute", abs_diff, abs_at, atol),
                                ("relative", rel_diff, rel_at, rtol)):
        line = (f"{kind.title()} difference: {diff}" if at is None
                else f"Greatest {kind} difference: {diff} at index {at}")
        lines.append(line if exact else f"{line} (up to {tol} allowed)")
    return "\n".join(lines)


def _header(what: str, rtol: float, atol: float) -> str:
    return f"{what} are not {'equal' if rtol == 0 and atol == 0 else 'close'}!\n\n"


def _compare_numbers(actual, expected, rtol, atol, equal_nan, check_dtype) -> None:
    if check_dtype and type(actual) is not type(expected):
        raise _Mismatch(AssertionError, "The (d)types do not match: "
                        f"{type(actual)} != {type(expected)}.")
    if isinstance(actual, bool) or isinstance(expected, bool):
        rtol, atol = (0.0, 0.0) if rtol is None else (rtol, atol)
    else:
        rtol, atol = _tolerances([dt.float64], rtol, atol)
    if actual == expected or equal_nan and _isnan(actual) and _isnan(expected):
        return
    diff = abs(actual - expected)
    if diff <= atol + rtol * abs(expected):
        return
    rel = float("inf") if expected == 0 else diff / abs(expected)
    raise _Mismatch(AssertionError, _header("Scalars", rtol, atol)
                    + f"Expected {expected} but got {actual}.\n"
                    + _diff_lines(diff, rel, atol, rtol))


def _isnan(x) -> bool:
    return isinstance(x, float) and math.isnan(x) or isinstance(x, complex) and (
        math.isnan(x.real) or math.isnan(x.imag))


def _check_attributes(a: Tensor, b: Tensor, check_device, check_dtype, check_stride) -> None:
    checks = [("shape", a.shape, b.shape, True), ("device", a.device, b.device, check_device),
              ("dtype", a.dtype, b.dtype, check_dtype),
              ("stride()", a.stride(), b.stride(), check_stride)]
    for name, x, y, on in checks:
        if on and x != y:
            raise _Mismatch(AssertionError,
                            f"The values for attribute '{name}' do not match: {x} != {y}.")


def _compare_tensors(a: Tensor, b: Tensor, rtol, atol, equal_nan, check_device, check_dtype,
                     check_stride) -> None:
    _check_attributes(a, b, check_device, check_dtype, check_stride)
    rtol, atol = _tolerances([a.dtype, b.dtype], rtol, atol)
    a, b = a.detach().cpu(), b.detach().cpu()
    if a.dtype is not b.dtype:
        common = dt.promote_types(a.dtype, b.dtype)
        a, b = a.to(common), b.to(common)
    if a.dtype.is_floating_point or a.dtype.is_complex:
        diff = (a - b).abs()
        ok = diff <= atol + rtol * b.abs()
        if equal_nan:
            ok = ok | (a.isnan() & b.isnan())
        ok = ok | (a == b)  # equal infinities
    else:
        a, b = a.to(dt.int64), b.to(dt.int64)
        diff = (a - b).abs()
        ok = diff <= atol + rtol * b.abs()
    if bool(ok.all()):
        return
    if a.ndim == 0:
        e, g = b.item(), a.item()
        d = abs(g - e)
        rel = float("inf") if e == 0 else d / abs(e)
        raise _Mismatch(AssertionError, _header("Scalars", rtol, atol)
                        + f"Expected {e} but got {g}.\n" + _diff_lines(d, rel, atol, rtol))
    bad = ok.logical_not()
    n_bad, total = int(bad.sum().item()), ok.numel()
    abs_flat = diff.flatten().masked_fill(ok.flatten(), 0)
    rel_flat = (abs_flat / b.abs().flatten()).masked_fill(ok.flatten(), 0)
    ia, ir = int(abs_flat.argmax().item()), int(rel_flat.argmax().item())
    at = lambda i: tuple(int(v) for v in np.unravel_index(i, tuple(a.shape)))  # noqa: E731
    raise _Mismatch(AssertionError, _header("Tensor-likes", rtol, atol)
                    + f"Mismatched elements: {n_bad} / {total} ({n_bad / total:.1%})\n"
                    + _diff_lines(abs_flat[ia].item(), rel_flat[ir].item(), atol, rtol,
                                  at(ia), at(ir)))


def _compare(actual, expected, kw: dict) -> None:
    if isinstance(actual, np.ndarray) and isinstance(expected, np.ndarray):
        from .ops.creation import from_numpy

        actual, expected = from_numpy(actual), from_numpy(expected)
    if isinstance(actual, Tensor) and isinstance(expected, Tensor):
        return _compare_tensors(actual, expected, **kw)
    numbers = (bool, int, float, complex)
    if isinstance(actual, numbers) and isinstance(expected, numbers):
        return _compare_numbers(actual, expected, kw["rtol"], kw["atol"], kw["equal_nan"],
                                kw["check_dtype"])
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            raise _Mismatch(AssertionError, "The keys of the mappings do not match:\n"
                            f"Missing keys in the actual mapping: "
                            f"{sorted(set(expected) - set(actual), key=repr)}\n"
                            f"Additional keys in the actual mapping: "
                            f"{sorted(set(actual) - set(expected), key=repr)}")
        for k in expected:
            _compare(actual[k], expected[k], kw)
        return None
    if isinstance(actual, Sequence) and isinstance(expected, Sequence) and not isinstance(
            actual, str) and not isinstance(expected, str):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError, "The length of the sequences mismatch: "
                            f"{len(actual)} != {len(expected)}")
        for x, y in zip(actual, expected):
            _compare(x, y, kw)
        return None
    if actual == expected and type(actual) is type(expected):
        return None
    raise _Mismatch(TypeError, "No comparison pair was able to handle inputs of type "
                    f"{type(actual)} and {type(expected)}.")


def assert_close(actual, expected, *, allow_subclasses: bool = True, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True,
                 check_stride: bool = False, msg: str | Callable | None = None) -> None:
    """Raise AssertionError unless `actual` and `expected` are close (PyTorch's rules)."""
    if (rtol is None) != (atol is None):
        _tolerances([], rtol, atol)  # raises the ValueError
    kw = dict(rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device,
              check_dtype=check_dtype, check_stride=check_stride)
    try:
        _compare(actual, expected, kw)
    except _Mismatch as m:
        text = m.msg
        if m.kind is AssertionError and isinstance(msg, str):
            text = msg
        elif callable(msg):
            text = msg(text)
        where = _failed_at(actual, expected, kw)
        if where and text is m.msg:
            text += f"\n\nThe failure occurred for item {where}"
        raise m.kind(text) from None


def _failed_at(actual, expected, kw) -> str:
    """The `[i]['key']` path of the first failing item inside containers ('' at the top)."""
    if isinstance(actual, Mapping) and isinstance(expected, Mapping) and \
            set(actual) == set(expected):
        for k in expected:
            if _fails(actual[k], expected[k], kw):
                return f"[{k!r}]" + _failed_at(actual[k], expected[k], kw)
    elif isinstance(actual, (list, tuple)) and isinstance(expected, (list, tuple)) and \
            len(actual) == len(expected):
        for i, (x, y) in enumerate(zip(actual, expected)):
            if _fails(x, y, kw):
                return f"[{i}]" + _failed_at(x, y, kw)
    return ""


def _fails(x, y, kw) -> bool:
    try:
        _compare(x, y, kw)
    except _Mismatch:
        return True
    return False


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg="") -> None:
    """The deprecated spelling: assert_close without dtype checks, NaNs equal by default."""
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=False,
                 msg=msg or None)


def __getattr__(name: str):
    from .compat import missing

    raise missing(__name__, name)


__all__ = ["assert_close", "assert_allclose"]
