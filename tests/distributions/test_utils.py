"""ember.distributions.utils against torch.distributions.utils: broadcast_all's shapes,
dtypes and its error for a non-number, and the probs <-> logits maps at the edges."""

import numpy as np
import pytest
import torch
from torch.distributions import utils as TU

import ember
from ember import _names
from ember.distributions import utils as EU

from helpers import assert_same


@pytest.mark.parametrize("args", [
    (1.0, [1.0, 2.0], 3),
    ([[1.0], [2.0]], 0.5),
    (2, 3),
])
def test_broadcast_all_shapes_and_dtypes(args):
    def lift(L, dtype):
        return [L.tensor(a, dtype=dtype) if isinstance(a, list) else a for a in args]
    for t_dtype, e_dtype in ((torch.float64, ember.float64), (torch.float32, ember.float32)):
        want = TU.broadcast_all(*lift(torch, t_dtype))
        got = EU.broadcast_all(*lift(ember, e_dtype))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w)  # shape, dtype and values


@pytest.mark.parametrize("prefix", ["ember", "torch"])
@pytest.mark.parametrize("bad", ["a", None, [1.0]])
def test_broadcast_all_rejects_non_numbers_with_torchs_words(bad, prefix, monkeypatch):
    with pytest.raises(ValueError) as t_info:
        TU.broadcast_all(1.0, bad)
    monkeypatch.setattr(_names, "prefix", prefix)
    with pytest.raises(ValueError) as e_info:
        EU.broadcast_all(1.0, bad)
    assert str(e_info.value) == str(t_info.value).replace("torch.", f"{prefix}.")


def test_a_distribution_built_from_a_string_says_the_same():
    with pytest.raises(ValueError) as t_info:
        torch.distributions.Normal(0.0, "1")
    with pytest.raises(ValueError) as e_info:
        ember.distributions.Normal(0.0, "1")
    assert str(e_info.value) == str(t_info.value).replace("torch.", f"{_names.prefix}.")


@pytest.mark.parametrize("is_binary", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_probs_logits_round_trip_at_the_edges(is_binary, dtype):
    # assert_same's default float tolerance: a float32 log / log1p / sigmoid of torch's
    # vectorised kernels may round its last bit differently from NumPy's
    p = np.array([0.0, 1e-8, 0.3, 0.5, 1.0], dtype=dtype)
    assert_same(EU.probs_to_logits(ember.tensor(p), is_binary=is_binary),
                TU.probs_to_logits(torch.tensor(p), is_binary=is_binary))
    x = np.array([-30.0, -1.0, 0.0, 2.0, 30.0], dtype=dtype)
    assert_same(EU.logits_to_probs(ember.tensor(x), is_binary=is_binary),
                TU.logits_to_probs(torch.tensor(x), is_binary=is_binary))
    assert_same(EU.clamp_probs(ember.tensor(p)), TU.clamp_probs(torch.tensor(p)))
