"""The harness of the torch.func sweep (`test_sweep_*.py`): one `Case` per public call,
written once against a module `m` (ember or torch), run through `func.jvp`, `vmap` and
`func.vjp` in both frameworks on the same inputs and compared.

- `check_jvp`: output and tangent, in float32 (contiguous inputs), float64 (non-contiguous
  inputs: a transposed or strided view), complex64 / complex128 likewise when the case says
  torch has the complex rule, and the case's extra shapes (0-d, empty dims) in float64.
- `check_vmap`: every input batched along axis 0 (float32); the first batched along its last
  axis with the others unbatched (float64, non-contiguous); a nested vmap (inner over axis 0,
  outer over axis 1 of every input); complex128 as the first when the case allows complex.
- `check_vjp`: the output and every input's gradient under a random cotangent, in float64
  (and complex128).

Only the floating outputs of a call are differentiated (indices and masks are compared by
vmap only). Inputs are drawn per case from a seed made of its name, inside the case's domain.
"""

from __future__ import annotations

import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest
import torch

import ember

from helpers import TOL, assert_same

# real inputs by domain (uniform in the range); complex inputs have both parts in (-0.9, 0.9)
DOMAINS = {
    "any": (-2.0, 2.0),
    "pos": (0.3, 2.5),
    "unit": (-0.9, 0.9),
    "prob": (0.05, 0.95),
    "above1": (1.2, 3.5),
}

F32, F64, C64, C128 = "float32", "float64", "complex64", "complex128"


@dataclass
class Case:
    """One public call: `fn(m, *inputs)` with inputs of `shapes` (one domain name per input,
    or one for all). `extra` lists further shape sets (0-d, empty) run in float64 by jvp.
    `complex`: torch has jvp / vmap / vjp of the call for complex inputs. `nested`: run the
    nested vmap. `slack` scales the float32 tolerances (a different summation order, a
    factorisation). A transform set to a string is skipped with that reason; `xfail` maps a
    transform to the reason it is known to fail (a strict xfail: a fix makes it fail, so
    the mark is removed with the fix)."""

    name: str
    fn: Callable
    shapes: list
    domain: str | tuple = "any"
    extra: list = field(default_factory=list)
    complex: bool = False
    jvp: bool | str = True
    vmap: bool | str = True
    vjp: bool | str = True
    nested: bool = True
    slack: float = 1.0
    slack64: float = 1.0
    xfail: dict = field(default_factory=dict)


def make_tests(cases: list):
    """The three tests of a sweep file (jvp, vmap, vjp), parametrized over its cases."""
    def params(what: str) -> list:
        return [pytest.param(c, id=c.name, marks=[pytest.mark.xfail(
            strict=True, reason=c.xfail[what])] if what in c.xfail else []) for c in cases]

    @pytest.mark.parametrize("case", params("jvp"))
    def test_jvp(case):
        assert check(case, "jvp") >= 2

    @pytest.mark.parametrize("case", params("vmap"))
    def test_vmap(case):
        assert check(case, "vmap") >= 2

    @pytest.mark.parametrize("case", params("vjp"))
    def test_vjp(case):
        assert check(case, "vjp") >= 1

    return test_jvp, test_vmap, test_vjp


def _seed(name: str, k: int) -> int:
    return zlib.crc32(f"{name}/{k}".encode())


def arrays(case: Case, shapes: list, dtype: str, k: int) -> list[np.ndarray]:
    """The case's input arrays (seeded by its name and `k`) in `dtype`."""
    rng = np.random.default_rng(_seed(case.name, k))
    doms = case.domain if isinstance(case.domain, tuple) else (case.domain,) * len(shapes)
    out = []
    for s, d in zip(shapes, doms):
        if dtype.startswith("complex"):
            a = rng.uniform(-0.9, 0.9, s) + 1j * rng.uniform(-0.9, 0.9, s)
        else:
            lo, hi = DOMAINS[d]
            a = rng.uniform(lo, hi, s)
        out.append(np.asarray(a).astype(dtype))
    return out


def tensor(m, a: np.ndarray, strided: bool = False):
    """`a` as a tensor of module `m`; with `strided`, a non-contiguous view holding `a` (the
    transpose of a contiguous buffer for 2-d and up, every other element of one for 1-d)."""
    if not strided or a.ndim == 0 or a.size == 0:
        return m.tensor(a)
    if a.ndim >= 2:
        return m.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2))).transpose(-1, -2)
    return m.tensor(np.repeat(a, 2, axis=-1))[..., ::2]


def _leaves(x) -> list:
    if isinstance(x, (tuple, list)):
        return [y for v in x for y in _leaves(v)]
    return [x]


def _floating(x) -> bool:
    return x.dtype.is_floating_point or x.dtype.is_complex


def float_outputs(m, fn: Callable) -> Callable:
    """`fn(m, ...)` with its floating outputs only, as a flat tuple (what jvp and vjp
    differentiate)."""
    def f(*xs):
        return tuple(o for o in _leaves(fn(m, *xs)) if _floating(o))
    return f


def _tol(dtype: str, slack: float):
    r, a = TOL[getattr(ember, dtype)]
    r, a = r * slack, a * slack
    return r, a * 10


def _dense(t):
    """A torch result as a plain tensor (torch.func gives a ZeroTensor for a zero tangent)."""
    return torch.zeros(t.shape, dtype=t.dtype) if t._is_zerotensor() else t


def _same(e, t, dtype: str, case: Case, what: str) -> None:
    rtol, atol = _tol(dtype, case.slack if dtype in (F32, C64) else case.slack64)
    e, t = _leaves(e), [_dense(x) for x in _leaves(t)]
    assert len(e) == len(t), f"{what}: {len(e)} results != {len(t)}"
    for k, (a, b) in enumerate(zip(e, t)):
        try:
            assert_same(a, b, rtol=rtol, atol=atol)
        except AssertionError as err:
            raise AssertionError(f"{what}, result {k}: {err}") from None


def _quiet(run):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run()


def _normal(rng, shape: tuple, dtype: str) -> np.ndarray:
    """Standard normal values (both parts for a complex dtype): tangents and cotangents."""
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return np.asarray(a).astype(dtype)


def check_jvp(case: Case) -> int:
    """Compare ember.func.jvp with torch.func.jvp on the case; returns the runs compared."""
    runs = [(F32, case.shapes, False), (F64, case.shapes, True)]
    runs += [(F64, s, False) for s in case.extra]
    if case.complex:
        runs += [(C64, case.shapes, False), (C128, case.shapes, True)]
    for k, (dtype, shapes, strided) in enumerate(runs):
        xs = arrays(case, shapes, dtype, k)
        rng = np.random.default_rng(_seed(case.name, 100 + k))
        ts = [_normal(rng, s, dtype) for s in shapes]

        def run(m, xs=xs, ts=ts, strided=strided):
            p = tuple(tensor(m, a, strided) for a in xs)
            t = tuple(tensor(m, a, strided) for a in ts)
            return _quiet(lambda: m.func.jvp(float_outputs(m, case.fn), p, t))

        e, t = run(ember), run(torch)
        what = f"jvp {case.name} {dtype} shapes {shapes}{' strided' if strided else ''}"
        _same(e[0], t[0], dtype, case, what + " (output)")
        _same(e[1], t[1], dtype, case, what + " (tangent)")
    return len(runs)


def _batched(shape: tuple, dim: int, size: int = 3) -> tuple:
    return shape[:dim] + (size,) + shape[dim:]


def check_vmap(case: Case) -> int:
    """Compare ember.vmap with torch.vmap on the case (see the module docstring)."""
    n = len(case.shapes)
    runs = [(F32, (0,) * n, False, False)]
    runs.append((F64, (len(case.shapes[0]),) + (None,) * (n - 1), True, False))
    if case.nested:
        runs.append((F64, (0,) * n, False, True))
    if case.complex:
        runs.append((C128, (len(case.shapes[0]),) + (None,) * (n - 1), True, False))
    for k, (dtype, dims, strided, nested) in enumerate(runs):
        shapes = [_batched(s, d) if d is not None else s for s, d in zip(case.shapes, dims)]
        if nested:  # the outer batch (2) on axis 1 of the already batched shape
            shapes = [_batched(s, 1, 2) for s in shapes]
        xs = arrays(case, shapes, dtype, 50 + k)

        def run(m, xs=xs, dims=dims, strided=strided, nested=nested):
            f = m.vmap(lambda *a: case.fn(m, *a), in_dims=dims)
            if nested:
                f = m.vmap(f, in_dims=(1,) * n)
            return _quiet(lambda: f(*(tensor(m, a, strided) for a in xs)))

        e, t = run(ember), run(torch)
        what = f"vmap {case.name} {dtype} in_dims {dims}{' nested' if nested else ''}"
        _same(e, t, dtype, case, what)
    return len(runs)


def check_vjp(case: Case) -> int:
    """Compare ember.func.vjp with torch.func.vjp under a random cotangent."""
    runs = [F64] + ([C128] if case.complex else [])
    for k, dtype in enumerate(runs):
        xs = arrays(case, case.shapes, dtype, 80 + k)

        def run(m, xs=xs, k=k):
            f = float_outputs(m, case.fn)
            out, pull = _quiet(lambda: m.func.vjp(f, *(m.tensor(a) for a in xs)))
            rng = np.random.default_rng(_seed(case.name, 90 + k))
            cts = tuple(m.tensor(_normal(rng, tuple(o.shape), str(o.dtype).split(".")[-1]))
                        for o in out)
            return out, _quiet(lambda: pull(cts))

        e, t = run(ember), run(torch)
        _same(e[0], t[0], dtype, case, f"vjp {case.name} {dtype} (output)")
        _same(e[1], t[1], dtype, case, f"vjp {case.name} {dtype} (gradients)")
    return len(runs)



def check(case: Case, what: str) -> int:
    """Run transform `what` ("jvp", "vmap" or "vjp") on the case, or skip it with the reason
    the case gives."""
    flag = getattr(case, what)
    if isinstance(flag, str):
        pytest.skip(flag)
    if not flag:
        pytest.skip(f"{case.name}: no {what} (not differentiable)")
    return {"jvp": check_jvp, "vmap": check_vmap, "vjp": check_vjp}[what](case)
