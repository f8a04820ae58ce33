"""Batch norm in evaluation and group norm end in the node PyTorch's one kernel makes
(`NativeBatchNormBackward0`, `NativeGroupNormBackward0`), as programs print grad_fn
(nn/_functional/layers.py)."""

import pytest
import torch

import ember


def _grad_fn_name(L, make, train):
    m = make(L).train(train)
    L.manual_seed(0)
    return type(m(L.randn(3, 2, 4, requires_grad=True)).grad_fn).__name__


@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("make", [
    lambda L: L.nn.BatchNorm1d(2), lambda L: L.nn.BatchNorm1d(2, affine=False),
    lambda L: L.nn.GroupNorm(1, 2), lambda L: L.nn.GroupNorm(2, 2, affine=False),
], ids=["bn", "bn_no_affine", "gn", "gn_no_affine"])
def test_norm_node_names_as_torch(make, train):
    assert _grad_fn_name(ember, make, train) == _grad_fn_name(torch, make, train)


def test_eval_batch_norm_gradients_unchanged_by_the_name():
    got = []
    for L in (ember, torch):
        L.manual_seed(0)
        bn = L.nn.BatchNorm1d(2).eval()
        with L.no_grad():
            bn.running_mean.copy_(L.tensor([0.5, -1.0]))
            bn.running_var.copy_(L.tensor([2.0, 0.25]))
        x = L.tensor([[1.0, 2.0], [3.0, -4.0]], requires_grad=True)
        (bn(x) * L.tensor([1.0, 3.0])).sum().backward()
        got.append(x.grad.flatten().tolist() + bn.weight.grad.tolist() + bn.bias.grad.tolist())
    # float32 products of rsqrt(var + eps): rsqrt's last bit may differ between libraries
    assert got[0] == pytest.approx(got[1], rel=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_batch_norm_eval_of_16_bit_input_with_float_statistics_is_torchs(dtype):
    """Computed in float32 and rounded once to the input's dtype, as PyTorch's mixed kernel:
    the same bits and the input's dtype (ember returned float32)."""
    import numpy as np
    import torch

    rng = np.random.default_rng(0)
    xs = rng.standard_normal((8, 3, 50)).astype(np.float32)
    stats = [rng.standard_normal(3).astype(np.float32), rng.uniform(0.5, 2, 3).astype(np.float32),
             rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32)]
    outs = []
    for m in (ember, torch):
        x = m.tensor(xs).to(getattr(m, dtype))
        rm, rv, w, b = (m.tensor(a) for a in stats)
        y = m.nn.functional.batch_norm(x, rm, rv, w, b, training=False)
        assert y.dtype == getattr(m, dtype)
        outs.append(y.float().numpy())
    np.testing.assert_array_equal(outs[0], outs[1])
