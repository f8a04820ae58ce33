"""Checks of the forward-mode (`jvp`) and vmap (`batch`) rules of the primitives a call binds.

A test runs a public call (`ember.exp(x)`, `F.conv2d(x, w)`) under `primitive_calls`, which
records each primitive bound at the top level with its arguments and params; then for each
recorded call:

- `check_jvp`: the rule's tangent equals the central finite difference of the primitive
  itself, `(f(x + eps t) - f(x - eps t)) / 2 eps`, in float64 (so give float64 inputs,
  away from kinks);
- `check_batch`: the rule's result on inputs stacked from B perturbed copies (along a
  random axis per input; some inputs left unbatched) equals running the primitive once per
  copy and stacking.

Both read no rule table entry the primitive lacks: a missing rule fails the check.
"""

from __future__ import annotations

import numpy as np

import ember
from ember._core import (
    BY_LOOP,
    BY_VJP,
    MISSING,
    Interpreter,
    batch_rules,
    bind,
    interpret,
    jvp_rule,
    rule_params,
)
from ember.autograd.jvp_from_vjp import jvp_from_vjp
from ember.ops.registry import InplacePrimitive


class _Calls(Interpreter):
    def __init__(self) -> None:
        self.calls: list = []

    def process(self, prim, args, params):
        self.calls.append((prim, args, dict(params)))
        return self.lower(prim, args, params)


def primitive_calls(fn, *args, **kwargs) -> list:
    """`[(prim, args, params)]` for every primitive `fn(*args, **kwargs)` binds at top level
    (in-place forms are left out: their rules are their functional primitive's)."""
    rec = _Calls()
    with ember.no_grad(), interpret(rec):
        fn(*args, **kwargs)
    return [c for c in rec.calls if not isinstance(c[0], InplacePrimitive)]


def _is_float(a) -> bool:
    return isinstance(a, ember.Tensor) and (a.dtype.is_floating_point or a.dtype.is_complex)


def _outs(x) -> tuple:
    return x if isinstance(x, tuple) else (x,)


def _np(t) -> np.ndarray:
    return t.detach().cpu().numpy() if isinstance(t, ember.Tensor) else np.asarray(t)


def _name(prim, params) -> str:
    fn = params.get("fn")
    return f"{prim.name}({fn.name})" if fn is not None and hasattr(fn, "family") else prim.name


def check_jvp(fn, *args, eps: float = 1e-6, rtol: float = 1e-5, atol: float = 1e-7,
              seed: int = 0, **kwargs) -> int:
    """Check the JVP rule of every primitive `fn(*args)` binds; returns how many were checked."""
    rng = np.random.default_rng(seed)
    checked = 0
    for prim, pargs, params in primitive_calls(fn, *args, **kwargs):
        rule = jvp_rule(prim, params)
        name = _name(prim, params)
        assert rule is not MISSING, f"{name} has no jvp rule"
        if rule is None:
            continue  # not differentiable
        refuses = getattr(rule, "not_implemented", None)

        tangents = tuple(
            ember.tensor(rng.standard_normal(a.shape), dtype=a.dtype) if _is_float(a) else None
            for a in pargs)
        if all(t is None for t in tangents):
            continue
        if refuses:  # PyTorch has no derivative here: forward mode refuses, with its words
            try:
                rule(pargs, tangents, None, **rule_params(prim, params))
            except NotImplementedError as e:
                assert "forward AD with " in str(e) and refuses in str(e), str(e)
            else:
                raise AssertionError(f"{name}'s jvp rule did not refuse")
            checked += 1
            continue
        with ember.no_grad():
            out = bind(prim, *pargs, **params)
            got = _outs(jvp_from_vjp(prim, pargs, tangents, params) if rule is BY_VJP
                        else rule(pargs, tangents, out, **rule_params(prim, params)))

            hi, lo = (_outs(bind(prim, *[a + s * t if t is not None else a
                                         for a, t in zip(pargs, tangents)], **params))
                      for s in (eps, -eps))
        for k, (o, g) in enumerate(zip(_outs(out), got)):
            if not _is_float(o):
                continue
            fd = (_np(hi[k]).astype(np.complex128 if o.dtype.is_complex else np.float64)
                  - _np(lo[k])) / (2 * eps)
            g = np.zeros_like(fd) if g is None else _np(g)
            assert g.shape == fd.shape, f"{name}: tangent shape {g.shape} != {fd.shape}"
            np.testing.assert_allclose(g, fd, rtol=rtol, atol=atol,
                                       err_msg=f"jvp of {name}, output {k}")
        checked += 1
    return checked


def _perturb(a, b: int):
    if _is_float(a) and b:
        return a * (1 + 0.125 * b) + 0.0625 * b
    return a


def check_batch(fn, *args, size: int = 3, seed: int = 0, atol: float = 1e-6,
                **kwargs) -> int:
    """Check the batch rule of every primitive `fn(*args)` binds; returns how many were
    checked (a primitive marked BY_LOOP counts as checked only by the loop itself)."""
    rng = np.random.default_rng(seed)
    checked = 0
    for prim, pargs, params in primitive_calls(fn, *args, **kwargs):
        rule = batch_rules.get(prim, MISSING)
        assert rule is not MISSING, f"{prim.name} has no batch rule"
        if rule is BY_LOOP:
            continue
        name = _name(prim, params)
        tensors = [i for i, a in enumerate(pargs) if isinstance(a, ember.Tensor)]
        patterns = [set(tensors)] + [{i} for i in tensors] if len(tensors) > 1 else [
            set(tensors)]
        for batched in patterns:
            dims = tuple(int(rng.integers(0, pargs[i].dim() + 1)) if i in batched else None
                         for i in range(len(pargs)))
            with ember.no_grad():
                bargs = tuple(
                    ember.stack([_perturb(a, b) for b in range(size)], dim=d)
                    if d is not None else a for a, d in zip(pargs, dims))
                out, odim = rule(bargs, dims, **params)
                each = [_outs(bind(prim, *[_perturb(a, b) if d is not None else a
                                           for a, d in zip(pargs, dims)], **params))
                        for b in range(size)]
            odims = odim if isinstance(odim, tuple) else (odim,)
            for k, (o, od) in enumerate(zip(_outs(out), odims)):
                want = np.stack([_np(e[k]) for e in each])
                got = _np(o)
                got = np.broadcast_to(got[None], want.shape) if od is None else \
                    np.moveaxis(got, od, 0)
                assert got.shape == want.shape, \
                    f"batch of {name} (dims {dims}): shape {got.shape} != {want.shape}"
                np.testing.assert_allclose(got, want, atol=atol, rtol=1e-6,
                                           err_msg=f"batch of {name}, dims {dims}")
        checked += 1
    return checked
