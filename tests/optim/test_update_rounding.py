"""Given the same gradients, ember's optimizer steps are torch's bit for bit.

Each step feeds both libraries the same gradient (set by hand, so no product or reduction
of a model's forward is involved): what remains is the update's own arithmetic, whose
multiply-adds PyTorch's kernels fuse (`add_(x, alpha=)`, `addcmul_`, `lerp_`: one rounding
each, ops/_fma.py). Every float32 and float64 step of SGD (all its options), Adamax, RAdam,
ASGD and Rprop is equal bit for bit. The algorithms that take a square root differ where
torch's does: its vectorised float32/float64 sqrt (from its vector math library, not
correctly rounded: about 0.2-0.7% of its results are an ulp off IEEE's, which NumPy and C
give) moves those elements by an ulp or two; bounded below.
(Before the fused rounding, 10-50% of the elements of every algorithm differed.)"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

from helpers import TORCH_VECTOR_KERNELS, torch_sqrt_off

N, STEPS = 4099, 12
EXACT = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3)),
    ("SGD", dict(lr=0.05, momentum=0.8, dampening=0.1, weight_decay=1e-2, maximize=True)),
    ("Adamax", dict(lr=1e-2, weight_decay=1e-3)),
    ("RAdam", dict(lr=1e-2)),
    ("ASGD", dict(lr=1e-2, weight_decay=1e-3)),
    ("Rprop", dict()),
]
WITH_SQRT = [
    ("Adam", dict(lr=1e-2)),
    ("Adam", dict(lr=1e-2, weight_decay=1e-2, amsgrad=True)),
    ("Adam", dict(lr=1e-2, betas=(0.3, 0.9))),  # (lerp's other side: weight >= 0.5)
    ("AdamW", dict(lr=1e-2)),
    ("NAdam", dict(lr=1e-2)),
    ("RMSprop", dict(lr=1e-2)),
    # (centered: sqrt(v - avg^2), a cancellation that magnifies an ulp of torch's sqrt)
    ("RMSprop", dict(lr=1e-2, centered=True, momentum=0.9, weight_decay=1e-3)),
    ("Adagrad", dict(lr=0.1, weight_decay=1e-3)),
    ("Adadelta", dict(lr=1.0, weight_decay=1e-3)),
]


def _ids(cases):
    return [name + "-" + ",".join(f"{k}={v}" for k, v in kw.items()) for name, kw in cases]


SQRT_IN_EXACT = {"RAdam"}  # (its rectified step divides by a square root from step 6)


def _steps(name: str, kwargs: dict, dtype: str):
    """Parameters of both libraries after each step: lists of NumPy arrays."""
    g = torch.Generator().manual_seed(0)
    p0 = torch.randn(N, generator=g, dtype=getattr(torch, dtype))
    grads = [torch.randn(N, generator=g, dtype=p0.dtype) for _ in range(STEPS)]
    tp = torch.nn.Parameter(p0.clone())
    ep = ember.nn.Parameter(ember.tensor(p0.numpy()))
    topt = getattr(torch.optim, name)([tp], **kwargs)
    eopt = getattr(ember.optim, name)([ep], **kwargs)
    out = []
    for grad in grads:
        tp.grad, ep.grad = grad.clone(), ember.tensor(grad.numpy())
        topt.step()
        eopt.step()
        out.append((tp.detach().numpy().copy(), ep.detach().numpy().copy()))
    return out


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", EXACT, ids=_ids(EXACT))
def test_steps_are_torchs_bits(case, dtype):
    if not TORCH_VECTOR_KERNELS or (case[0] in SQRT_IN_EXACT and torch_sqrt_off(dtype) > 0.01):
        # torch's scalar build does not fuse, and where its sqrt is often off IEEE's, a step
        # through one differs as the algorithms below do: their bound
        return test_steps_with_a_square_root_differ_only_where_torchs_sqrt_does(case, dtype)
    for step, (want, got) in enumerate(_steps(*case, dtype)):
        assert (want == got).all(), f"step {step}: {(want != got).sum()} of {N} differ"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", WITH_SQRT, ids=_ids(WITH_SQRT))
def test_steps_with_a_square_root_differ_only_where_torchs_sqrt_does(case, dtype):
    want, got = _steps(*case, dtype)[-1]
    if TORCH_VECTOR_KERNELS:  # (its scalar build rounds twice, as ember did: 10-50% off)
        off = torch_sqrt_off(dtype)  # (the elements torch's own sqrt moves, at most twice)
        assert (want != got).mean() < (0.03 if off < 0.01 else min(0.5, 2 * off))
    # An ulp of a step (these take steps of up to about 0.1) moves a parameter near zero by
    # many of its own ulps: the bound is a few ulps of the larger of the two.
    scale = np.maximum(np.abs(want), want.dtype.type(0.1))
    # (torch's scalar build rounds each step twice: an ulp a step, over the twelve steps)
    # (where torch's sqrt is an ulp off on many elements, as on an AMD EPYC, an element
    # collects up to about one ulp every other step: 8)
    ulps = 64 if case[1].get("centered") or not TORCH_VECTOR_KERNELS else \
        4 if torch_sqrt_off(dtype) < 0.01 else 8
    assert (np.abs(want - got) <= ulps * np.spacing(scale)).all()
