"""The elementwise op tables' machinery: one `Spec` per op, test generators that run each
spec against torch over every dtype, several shapes (0-d, empty, broadcast, transposed),
gradients (vs torch, finite differences, second order), in-place, `out=` and meta.

A test module lists its specs and calls `unary_tests(SPECS)` / `binary_tests(SPECS)`;
the returned test functions are bound to module-level names so pytest collects them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np
import pytest
import torch

import ember

from helpers import DTYPE_PAIRS, E2T, assert_same, check_grads, rand_array, to_torch

ALL_DTYPES = [e for e, _ in DTYPE_PAIRS]
FLOATS = [ember.float32, ember.float64]
UNARY_SHAPES = [(), (0,), (7,), (3, 4), (2, 3, 4)]
# (lhs shape, rhs shape): equal, broadcast both ways, 0-d with n-d, empty.
BINARY_SHAPES = [((), ()), ((3, 4), (3, 4)), ((3, 1), (1, 4)), ((2, 3, 4), (4,)),
                 ((), (2, 3)), ((4,), ()), ((0, 3), (3,))]


def np_dtype(d: ember.dtype):
    return ml_dtypes.bfloat16 if d is ember.bfloat16 else d.np


def make(shape, dtype: ember.dtype, domain=(-2.0, 2.0), seed=0, transpose=False):
    """The same random values as an ember and a torch tensor (a transposed view if asked)."""
    shape = tuple(shape)
    if transpose and len(shape) >= 2:
        shape = shape[:-2] + (shape[-1], shape[-2])
    lo, hi = domain
    if not (dtype.is_floating_point or dtype.is_complex):
        lo, hi = math.floor(lo), max(math.ceil(hi), math.floor(lo) + 1)
    arr = rand_array(shape, np_dtype(dtype), lo, hi, seed)
    e = ember.tensor(arr)
    t = to_torch(e)
    if transpose and len(shape) >= 2:
        e, t = e.transpose(-1, -2), t.transpose(-1, -2)
    return e, t


def same_outcome(e_fn, t_fn, e_args, t_args, rtol=None, atol=None, check_stride=False):
    """torch's result (value, dtype, shape) or torch's exception type, from ember too."""
    try:
        expected = t_fn(*t_args)
    except Exception as exc:  # noqa: BLE001 - any torch error must be ember's error type too
        with pytest.raises(type(exc)):
            e_fn(*e_args)
        return None
    got = e_fn(*e_args)
    assert_same(got, expected, rtol, atol, check_stride=check_stride)
    return got


@dataclass
class Spec:
    """One op: its ember and torch callables and how to feed them.

    `domains` gives each operand's value range; `grad` says whether the op is
    differentiable; `inplace` names the ember/torch method for the `_` form
    (None: no in-place form); `scalars` lets binary tests put Python numbers on
    either side; `tol` overrides the (rtol, atol) of float comparisons.
    """

    name: str
    e: object
    t: object
    domains: tuple = ((-2.0, 2.0), (-2.0, 2.0))
    grad: bool = True
    inplace: str | None = "auto"
    scalars: bool = True
    tol: tuple = (None, None)
    grad_dtypes: tuple = (ember.float32, ember.float64)
    fd: bool = True
    extra: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        return self.name


def _ids(specs):
    return [s.name for s in specs]


# --- unary ------------------------------------------------------------------------------

def unary_tests(specs):
    """Test functions for unary specs (values/dtypes/exceptions, grads, in-place, out, meta)."""
    grad_specs = [s for s in specs if s.grad]
    inplace_specs = [s for s in specs if s.inplace]

    @pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
    @pytest.mark.parametrize("spec", specs, ids=_ids(specs))
    def test_values(spec, dtype):
        for i, shape in enumerate(UNARY_SHAPES):
            e, t = make(shape, dtype, spec.domains[0], seed=i, transpose=True)
            same_outcome(spec.e, spec.t, (e,), (t,), *spec.tol)

    @pytest.mark.parametrize("spec", grad_specs, ids=_ids(grad_specs))
    def test_grad_vs_torch(spec):
        for dtype in spec.grad_dtypes:
            e, t = make((3, 4), dtype, spec.domains[0], seed=5, transpose=True)
            _grad_compare(spec, [e], [t])

    fd_specs = [s for s in grad_specs if s.fd]

    @pytest.mark.parametrize("spec", fd_specs, ids=_ids(fd_specs))
    def test_grad_finite_differences(spec):
        x = rand_array((2, 3), np.float64, *spec.domains[0], seed=7)
        check_grads(spec.e, x)

    @pytest.mark.parametrize("spec", inplace_specs, ids=_ids(inplace_specs))
    def test_inplace(spec):
        for dtype in (ember.float32, ember.int32, ember.bool, ember.complex64):
            e, t = make((3, 4), dtype, spec.domains[0], seed=3)
            got = same_outcome(*inplace_fns(spec), (e,), (t,), *spec.tol)
            if got is not None:
                assert got is e, "in-place op must return self"
                assert_same(e, t, *spec.tol)

    @pytest.mark.parametrize("spec", specs, ids=_ids(specs))
    def test_meta(spec):
        for dtype in (ember.float32, ember.int64):
            if not _torch_accepts(spec.t, torch.ones(3, 4, dtype=E2T[dtype])):
                continue  # torch's meta kernels skip dtype checks that its CPU kernels make
            e = ember.empty(4, 3, dtype=dtype, device="meta").t()
            t = torch.empty(4, 3, dtype=E2T[dtype], device="meta").t()
            same_outcome(spec.e, spec.t, (e,), (t,),
                         check_stride=spec.extra.get("meta_stride", True))

    return test_values, test_grad_vs_torch, test_grad_finite_differences, test_inplace, test_meta


def _torch_accepts(fn, *args) -> bool:
    try:
        fn(*args)
    except Exception:  # noqa: BLE001
        return False
    return True


def inplace_fns(spec):
    """The ember and torch callables of a spec's in-place form."""
    if isinstance(spec.inplace, tuple):
        return spec.inplace
    name = spec.name + "_" if spec.inplace == "auto" else spec.inplace

    def call(x, *args):
        return getattr(x, name)(*args)

    return call, call


def _plain(ts):
    """torch gradients as ordinary tensors (no ZeroTensor, no lazy conjugate bit)."""
    out = []
    for t in ts:
        if t is not None and t._is_zerotensor():
            t = torch.zeros_like(t)
        out.append(t.resolve_conj() if t is not None else None)
    return out


def _grad_compare(spec, es, ts, seed=11):
    """Gradients of sum(f(inputs) * v) vs torch, then the second-order ones (create_graph)."""
    for x in es + ts:
        if x.dtype.is_floating_point or x.dtype.is_complex:
            x.requires_grad_(True)
    ye, yt = spec.e(*es), spec.t(*ts)
    assert_same(ye, yt, *spec.tol)
    v = rand_array(tuple(yt.shape), np_dtype(ember.float64), seed=seed)
    ve = ember.tensor(v).to(ye.dtype)
    vt = to_torch(ve)
    ein = [x for x in es if x.requires_grad]
    tin = [x for x in ts if x.requires_grad]
    le, lt = (ye * ve).sum(), (yt * vt).sum()
    if lt.dtype.is_complex:
        le, lt = le.real, lt.real
    gt = torch.autograd.grad(lt, tin, create_graph=True, allow_unused=True)
    ge = ember.autograd.grad(le, ein, create_graph=True, allow_unused=True)
    rtol, atol = spec.tol
    for a, b in zip(ge, _plain(gt)):
        if b is None:
            assert a is None or not a.detach().numpy().any()
            continue
        assert_same(a, b, rtol, atol)
    # Second order: d/dx sum(grad * w).
    pairs = [(a, b) for a, b in zip(ge, gt) if b is not None and b.requires_grad]
    if not pairs or not any(a is not None and a.requires_grad for a, _ in pairs):
        return  # the first derivative is piecewise constant (relu, hardtanh ...)
    w_np = rand_array(tuple(pairs[0][1].shape), np.float64, seed=seed + 1)
    pairs = [(a, b) for a, b in pairs if a is not None and a.requires_grad]
    se = sum(((a * ember.tensor(w_np).to(a.dtype)).sum() for a, _ in pairs), ember.tensor(0.0))
    st = sum(((b * to_torch(ember.tensor(w_np).to(a.dtype))).sum() for a, b in pairs),
             torch.tensor(0.0))
    if st.dtype.is_complex:
        se, st = se.real, st.real
    try:
        gg_t = torch.autograd.grad(st, tin, allow_unused=True)
    except RuntimeError as exc:  # e.g. hardsigmoid_backward has no derivative in torch
        assert "not implemented" in str(exc)
        return
    gg_e = ember.autograd.grad(se, ein, allow_unused=True)
    for a, b in zip(gg_e, _plain(gg_t)):
        if b is None:
            assert a is None or not a.detach().numpy().any()
            continue
        assert_same(a, b, rtol if rtol is not None else 1e-4, atol if atol is not None else 1e-5)


# --- binary -------------------------------------------------------------------------------

SCALARS = [3, 2.5, True]


def binary_tests(specs):
    """Test functions for binary specs: same dtypes over broadcast shapes, scalars on either
    side, transposed operands, grads, in-place and meta."""
    grad_specs = [s for s in specs if s.grad]
    inplace_specs = [s for s in specs if s.inplace]

    @pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
    @pytest.mark.parametrize("spec", specs, ids=_ids(specs))
    def test_values(spec, dtype):
        for i, (sa, sb) in enumerate(BINARY_SHAPES):
            a = make(sa, dtype, spec.domains[0], seed=i)
            b = make(sb, dtype, spec.domains[1], seed=100 + i, transpose=True)
            same_outcome(spec.e, spec.t, (a[0], b[0]), (a[1], b[1]), *spec.tol)
        if spec.scalars:
            a = make((3, 4), dtype, spec.domains[0], seed=9, transpose=True)
            for s in SCALARS:
                same_outcome(spec.e, spec.t, (a[0], s), (a[1], s), *spec.tol)
                same_outcome(spec.e, spec.t, (s, a[0]), (s, a[1]), *spec.tol)

    @pytest.mark.parametrize("spec", grad_specs, ids=_ids(grad_specs))
    def test_grad_vs_torch(spec):
        for dtype in spec.grad_dtypes:
            for k, (sa, sb) in enumerate([((3, 4), (3, 4)), ((3, 1), (4,)), ((), (2, 3))]):
                a = make(sa, dtype, spec.domains[0], seed=20 + k, transpose=True)
                b = make(sb, dtype, spec.domains[1], seed=30 + k)
                _grad_compare(spec, [a[0], b[0]], [a[1], b[1]])

    fd_specs = [s for s in grad_specs if s.fd]

    @pytest.mark.parametrize("spec", fd_specs, ids=_ids(fd_specs))
    def test_grad_finite_differences(spec):
        a = rand_array((2, 3), np.float64, *spec.domains[0], seed=40)
        b = rand_array((3,), np.float64, *spec.domains[1], seed=41)
        check_grads(spec.e, a, b)

    @pytest.mark.parametrize("spec", inplace_specs, ids=_ids(inplace_specs))
    def test_inplace(spec):
        fe, ft = inplace_fns(spec)
        for da, db in ((ember.float32, ember.float32), (ember.float32, ember.float64),
                       (ember.int32, ember.int64), (ember.int64, ember.float32),
                       (ember.bool, ember.bool)):
            a = make((3, 4), da, spec.domains[0], seed=50)
            b = make((4,), db, spec.domains[1], seed=51)
            got = same_outcome(fe, ft, (a[0], b[0]), (a[1], b[1]), *spec.tol)
            if got is not None:
                assert got is a[0], "in-place op must return self"
        # Broadcasting the destination itself is refused.
        a, b = make((4,), ember.float32, spec.domains[0]), make((3, 4), ember.float32,
                                                                spec.domains[1])
        same_outcome(fe, ft, (a[0], b[0]), (a[1], b[1]))

    @pytest.mark.parametrize("spec", specs, ids=_ids(specs))
    def test_meta(spec):
        ones = torch.ones(3, 4)
        d = ember.float32 if _torch_accepts(spec.t, ones, ones) else ember.int64
        for shape_a, shape_b in (((4, 3), (3, 4)), ((4, 3), (4,)), ((2, 4, 3), (1, 3, 4)),
                                 ((4, 3), (4, 3)), ((2, 4, 3), (4, 1))):
            e = ember.empty(*shape_a, dtype=d, device="meta").transpose(-1, -2)
            t = torch.empty(*shape_a, dtype=E2T[d], device="meta").transpose(-1, -2)
            eb = ember.empty(*shape_b, dtype=d, device="meta")
            tb = torch.empty(*shape_b, dtype=E2T[d], device="meta")
            if len(shape_b) == len(shape_a) and shape_b == shape_a:
                eb, tb = eb.transpose(-1, -2).contiguous(), tb.transpose(-1, -2).contiguous()
            for pair_e, pair_t in (((e, eb), (t, tb)), ((eb, e), (tb, t))):
                same_outcome(spec.e, spec.t, pair_e, pair_t,
                             check_stride=spec.extra.get("meta_stride", True))

    return test_values, test_grad_vs_torch, test_grad_finite_differences, test_inplace, test_meta
