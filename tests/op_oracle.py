"""Oracle helpers for the reduction / scan / softmax tests (built on tests/helpers.py).

- `oracle(fn, *arrays)`: run `fn` in torch first; if torch raises, ember must raise the
  same exception type, otherwise compare outputs and gradients with `check_op`.
- `meta_same(fn, shape, dtype)`: `fn` on meta tensors reports torch's shape, dtype, strides.
- `check_double(fn, array)`: first and second derivatives (create_graph=True) vs torch.
- `array(shape, dtype)`: seeded test data of an ember dtype.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

from helpers import E2T, assert_same, check_op, rand_array, to_torch


def array(shape, dtype=ember.float32, seed: int = 0, low: float = -2.0, high: float = 2.0):
    """Seeded data of ember dtype `dtype` as a NumPy array (bfloat16 via ml_dtypes)."""
    return rand_array(shape, dtype.np, low=low, high=high, seed=seed)


def _tensors(arrays):
    es = [ember.tensor(a) if isinstance(a, np.ndarray) else a for a in arrays]
    ts = [to_torch(e) if isinstance(e, ember.Tensor) else e for e in es]
    return es, ts


def oracle(fn, *arrays, fn_t=None, grad: bool = True, **kw):
    """Compare `fn` in ember and torch (`fn_t`, default `fn`) on `arrays`, errors included."""
    fn_t = fn_t or fn
    es, ts = _tensors(arrays)
    try:
        fn_t(*ts)
    except Exception as exc:  # torch refuses: ember must refuse with the same type
        with pytest.raises(Exception) as info:
            fn(*es)
        assert type(info.value) is type(exc), (
            f"ember raised {type(info.value).__name__}: {info.value}; torch raised "
            f"{type(exc).__name__}: {exc}")
        return None
    return check_op(fn, fn_t, *arrays, grad=grad, **kw)


def raises_like(fn, *arrays, fn_t=None):
    """Both frameworks raise, with the same exception type."""
    fn_t = fn_t or fn
    es, ts = _tensors(arrays)
    with pytest.raises(Exception) as t_info:
        fn_t(*ts)
    with pytest.raises(Exception) as e_info:
        fn(*es)
    assert type(e_info.value) is type(t_info.value), (
        f"ember raised {type(e_info.value).__name__}: {e_info.value}; torch raised "
        f"{type(t_info.value).__name__}: {t_info.value}")


def meta_same(fn, shape, dtype=ember.float32, fn_t=None, transpose: bool = False):
    """`fn` on meta tensors: same shapes, dtypes and strides as torch on meta."""
    fn_t = fn_t or fn
    e = ember.empty(shape, dtype=dtype, device="meta")
    t = torch.empty(shape, dtype=E2T[dtype], device="meta")
    if transpose:
        e, t = e.transpose(0, -1), t.transpose(0, -1)
    out_e, out_t = fn(e), fn_t(t)
    outs_e = out_e if isinstance(out_e, tuple) else (out_e,)
    outs_t = out_t if isinstance(out_t, tuple) else (out_t,)
    assert len(outs_e) == len(outs_t)
    for oe, ot in zip(outs_e, outs_t):
        assert oe.device.type == "meta"
        assert_same(oe, ot, check_stride=True)


def check_double(fn, a, fn_t=None, seed: int = 3, rtol: float = 1e-7, atol: float = 1e-9):
    """d/dx and d2/dx2 (through create_graph=True) of `fn` match torch, in float64."""
    fn_t = fn_t or fn
    rng = np.random.default_rng(seed)
    a = np.asarray(a, dtype=np.float64)
    xe = ember.tensor(a, requires_grad=True)
    xt = torch.tensor(a, requires_grad=True)
    out_t = fn_t(xt)
    v = rng.standard_normal(tuple(out_t.shape))
    w = rng.standard_normal(a.shape)
    (gt,) = torch.autograd.grad((out_t * torch.tensor(v)).sum(), xt, create_graph=True)
    (gg_t,) = torch.autograd.grad((gt * torch.tensor(w)).sum(), xt)
    (ge,) = ember.autograd.grad((fn(xe) * ember.tensor(v)).sum(), xe, create_graph=True)
    (gg_e,) = ember.autograd.grad((ge * ember.tensor(w)).sum(), xe)
    assert_same(ge, gt, rtol, atol)
    assert_same(gg_e, gg_t, rtol, atol)
