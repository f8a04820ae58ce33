"""nn.utils gradient clipping and parameter/vector conversion against torch."""

import math

import pytest
import torch

import ember
from ember import nn

from helpers import assert_same, copy_module_state, rand_array


def _models_with_grads():
    e, t = nn.Sequential(nn.Linear(4, 3), nn.Linear(3, 2)), \
        torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 2))
    copy_module_state(e, t)
    x = rand_array((5, 4))
    (e(ember.tensor(x)) ** 2).sum().backward()
    (t(torch.tensor(x)) ** 2).sum().backward()
    return e, t


@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf, 3.0])
@pytest.mark.parametrize("max_norm", [0.1, 1e3])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    e, t = _models_with_grads()
    total_e = nn.utils.clip_grad_norm_(e.parameters(), max_norm, norm_type)
    total_t = torch.nn.utils.clip_grad_norm_(t.parameters(), max_norm, norm_type)
    assert_same(total_e, total_t)
    for pe, pt in zip(e.parameters(), t.parameters()):
        assert_same(pe.grad, pt.grad)


def test_clip_grad_norm_nonfinite_and_empty():
    p = nn.Parameter(ember.zeros(2))
    p.grad = ember.tensor([float("inf"), 1.0])
    with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
        nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    assert float(nn.utils.clip_grad_norm_([nn.Parameter(ember.zeros(1))], 1.0)) == 0.0


def test_clip_grad_value_matches_torch():
    e, t = _models_with_grads()
    nn.utils.clip_grad_value_(e.parameters(), 0.5)
    torch.nn.utils.clip_grad_value_(t.parameters(), 0.5)
    for pe, pt in zip(e.parameters(), t.parameters()):
        assert_same(pe.grad, pt.grad)


def test_parameters_vector_round_trip_matches_torch():
    e, t = _models_with_grads()
    v_e = nn.utils.parameters_to_vector(e.parameters())
    v_t = torch.nn.utils.parameters_to_vector(t.parameters())
    assert_same(v_e, v_t)
    nn.utils.vector_to_parameters(v_e * 2, e.parameters())
    torch.nn.utils.vector_to_parameters(v_t * 2, t.parameters())
    for pe, pt in zip(e.parameters(), t.parameters()):
        assert_same(pe, pt)
        assert isinstance(pe, nn.Parameter)
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        nn.utils.vector_to_parameters([1.0], e.parameters())


def test_deprecated_clip_grad_norm_warns_and_clips_like_torch():
    # (ember's old alias gave no FutureWarning; PyTorch's message names torch.nn.utils)
    import warnings

    res = []
    for L in (ember, torch):
        p = L.nn.Parameter(L.ones(2))
        p.grad = L.tensor([3.0, 4.0])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            total = L.nn.utils.clip_grad_norm([p], 1.0)
        assert [w.category for w in caught] == [FutureWarning]
        assert caught[0].filename == __file__  # (attributed to the caller)
        res.append((str(caught[0].message), total.item(), p.grad.tolist()))
    assert res[0] == res[1]
