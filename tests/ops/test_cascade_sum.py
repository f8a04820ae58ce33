"""nll_loss's cascaded 16-bit sum (ops/_cascade_sum.py) against torch's nll_loss, bit for bit.

Every step is one float32 addition of two 16-bit values rounded to 16 bits, on both sides,
so the bits agree exactly.
"""

import ml_dtypes
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
from ember.ops._cascade_sum import nll_reduce_low

_NP = {torch.float16: np.float16, torch.bfloat16: ml_dtypes.bfloat16}


def _case(seed: int, rows: int, weighted: bool, ignore: bool):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, 11, generator=g) * 3
    t = torch.randint(0, 11, (rows,), generator=g)
    if ignore:
        t[torch.rand(rows, generator=g) < 0.3] = -100
    w = torch.rand(11, generator=g) + 0.5 if weighted else None
    return x, t, w


@pytest.mark.parametrize("dt", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("rows", [1, 8, 16, 17, 33, 300, 5000])
@pytest.mark.parametrize("weighted,ignore", [(False, False), (True, False), (False, True),
                                             (True, True)])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_matches_torch_nll_loss_bits(dt, rows, weighted, ignore, reduction):
    x, t, w = _case(rows, rows, weighted, ignore)
    logp = TF.log_softmax(x.to(dt), -1)
    wl = None if w is None else w.to(dt)
    want = TF.nll_loss(logp, t, weight=wl, reduction=reduction).float().item()
    kept = np.nonzero((t != -100).numpy())[0]
    picked = logp.float().numpy()[kept, t.numpy()[kept]]
    ww = None if wl is None else wl.float().numpy()[t.numpy()[kept]]
    got = float(nll_reduce_low(picked, ww, kept, rows, reduction, _NP[dt]))
    assert got == want or (np.isnan(got) and np.isnan(want))


def test_differs_from_the_float32_sum_as_torch_does():
    # Eight bfloat16 losses: the float32 mean rounds to 2.421875, torch's cascade to 2.40625.
    torch.manual_seed(0)
    x = torch.randn(8, 10)
    t = torch.randint(0, 10, (8,))
    logp = TF.log_softmax(x.bfloat16(), -1)
    picked = logp.float().numpy()[np.arange(8), t.numpy()]
    got = float(nll_reduce_low(picked, None, np.arange(8), 8, "mean", ml_dtypes.bfloat16))
    assert got == TF.nll_loss(logp, t).item() == 2.40625
    assert float(np.float32(-picked.mean()).astype(ml_dtypes.bfloat16)) == 2.421875


def test_all_ignored_mean_is_nan():
    empty = np.zeros(0, np.float32)
    got = nll_reduce_low(empty, None, np.zeros(0, np.int64), 4, "mean", np.float16)
    assert got.dtype == np.float16 and np.isnan(got)
    assert float(nll_reduce_low(empty, None, np.zeros(0, np.int64), 4, "sum", np.float16)) == 0


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("rows", [8, 300])
def test_cross_entropy_in_16_bits_sums_as_torch(dtype, rows):
    # the reduced loss goes through the cascade: torch's bits for mean, sum, weights,
    # ignored rows and label smoothing
    def run(L):
        L.manual_seed(0)
        x = L.randn(rows, 10).to(getattr(L, dtype))
        t = L.randint(0, 10, (rows,))
        w = L.rand(10).to(getattr(L, dtype))
        F = L.nn.functional
        return [F.cross_entropy(x, t).item(), F.cross_entropy(x, t, reduction="sum").item(),
                F.nll_loss(F.log_softmax(x, 1), t, weight=w).item(),
                F.cross_entropy(x, t, ignore_index=3).item(),
                F.cross_entropy(x, t, label_smoothing=0.1).item()]

    assert run(ember) == run(torch)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("shape", [(8, 5), (40, 10), (300, 7), (10,), (6, 5, 3, 4),
                                   (20, 5, 30, 40), (9, 3, 2, 2, 5)])
def test_nll_backward_in_16_bits_rounds_as_torch(dtype, shape):
    # torch's backward rounds -(g / total_weight) to 16 bits, then the class weight times
    # it (total_weight: the forward's 16-bit sum of the weights, or the rounded count of
    # rows not ignored): every step is one correctly rounded operation, so the bits agree.
    n_classes = shape[1] if len(shape) > 1 else shape[0]
    g = torch.Generator().manual_seed(len(shape) + shape[0])
    x = torch.randn(shape, generator=g)
    t = torch.randint(0, n_classes, (shape[0],) + shape[2:] if len(shape) > 1 else (),
                      generator=g)
    if t.dim():
        t[::3] = -100
    w = torch.rand(n_classes, generator=g) + 0.2

    def grads(L, make):
        xl = make(x).to(getattr(L, dtype)).requires_grad_()
        tl, wl = make(t), make(w).to(getattr(L, dtype))
        gl = make(torch.tensor(1.3)).to(getattr(L, dtype))
        F = L.nn.functional
        out = []
        # (cross_entropy adds log_softmax's backward, whose float32 exp is within 1 ulp on
        # each side but not the same function: over 120000 elements one lands 1 16-bit ulp
        # apart, so the largest shape checks nll_loss alone)
        for fn in (F.nll_loss,) if x.numel() > 10000 else (F.nll_loss, F.cross_entropy):
            for weight in (None, wl):
                for reduction in ("mean", "sum"):
                    loss = fn(xl, tl, weight=weight, reduction=reduction)
                    out.append(loss.detach().float().numpy())
                    out.append(L.autograd.grad(loss, xl, gl)[0].float().numpy())
        return out

    for got, want in zip(grads(ember, lambda a: ember.tensor(a.numpy())),
                         grads(torch, lambda a: a.clone())):
        np.testing.assert_array_equal(got, want)
