"""torch.nn.attention.bias: causal masks as attention masks, against torch 2.13."""

import warnings

import numpy as np
import pytest
import torch
from torch.nn.attention import bias as TB

import ember
from ember.nn.attention import bias as EB


@pytest.mark.parametrize("size", [(3, 3), (2, 4), (4, 2), (1, 5)])
@pytest.mark.parametrize("fn", ["causal_upper_left", "causal_lower_right"])
def test_masks_and_attention(size, fn):
    with warnings.catch_warnings(record=True) as want:
        warnings.simplefilter("always")
        t = getattr(TB, fn)(*size)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        e = getattr(EB, fn)(*size)
    assert [str(w.message) for w in got] == [str(w.message) for w in want]
    assert int(e.variant) == int(t.variant) and e.variant.name == t.variant.name
    assert (e.seq_len_q, e.seq_len_kv) == (t.seq_len_q, t.seq_len_kv)
    np.testing.assert_array_equal(e._materialize().numpy(), t._materialize().numpy())
    assert type(e._materialize()) is ember.Tensor
    g = torch.Generator().manual_seed(0)
    q = torch.randn(2, 3, size[0], 4, dtype=torch.float64, generator=g)
    k = torch.randn(2, 3, size[1], 4, dtype=torch.float64, generator=g)
    v = torch.randn(2, 3, size[1], 4, dtype=torch.float64, generator=g)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ot = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=t)
    oe = ember.nn.functional.scaled_dot_product_attention(
        *(ember.tensor(a.numpy()) for a in (q, k, v)), attn_mask=e)
    if fn == "causal_lower_right" and size[0] > size[1]:
        return  # (PyTorch warns of NaN rows here; their values are its kernel's business)
    # NOTE: float64, one softmax and two matmuls in different order: 1e-12
    np.testing.assert_allclose(oe.numpy(), ot.numpy(), rtol=1e-12, atol=1e-12)


def test_only_2d_sizes():
    for fn in ("causal_upper_left", "causal_lower_right"):
        with pytest.raises(AssertionError) as want:
            getattr(TB, fn)(2)
        with pytest.raises(AssertionError) as got:
            getattr(EB, fn)(2)
        assert str(got.value) == str(want.value)
    assert [(v.name, int(v)) for v in EB.CausalVariant] == \
        [(v.name, int(v)) for v in TB.CausalVariant]


@pytest.mark.parametrize("fn", ["causal_upper_left", "causal_lower_right"])
def test_printed_as_the_plain_mask(fn):
    assert repr(getattr(EB, fn)(3, 4)) == repr(getattr(TB, fn)(3, 4))
    assert str(getattr(EB, fn)(2, 5)) == str(getattr(TB, fn)(2, 5))


def test_refused_with_the_causal_flag():
    q = torch.zeros(1, 2, 3, 4)
    with pytest.raises(ValueError) as want:
        torch.nn.functional.scaled_dot_product_attention(
            q, q, q, attn_mask=TB.causal_lower_right(3, 3), is_causal=True)
    qe = ember.zeros(1, 2, 3, 4)
    with pytest.raises(ValueError) as got:
        ember.nn.functional.scaled_dot_product_attention(
            qe, qe, qe, attn_mask=EB.causal_lower_right(3, 3), is_causal=True)
    assert str(got.value) == str(want.value)
