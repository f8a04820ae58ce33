"""A whole model saved with its `nn.utils` hook objects (pruning methods, weight norm,
spectral norm) loads back with `weights_only=False`, as in torch: the same state_dict
keys, the same hooks, the same outputs. Those objects are rebuilt from their saved state
like modules are, never by calling their constructors."""

import io
import warnings

import pytest
import torch
import torch.nn.utils.prune

import ember
import ember.nn.utils.prune
from ember.serialization import UnpicklingError


def _pruned(L):
    m = L.nn.Sequential(L.nn.Linear(4, 4), L.nn.Linear(4, 2))
    L.nn.utils.prune.l1_unstructured(m[0], "weight", amount=0.5)
    L.nn.utils.prune.ln_structured(m[0], "weight", amount=1, n=2, dim=0)  # a container
    L.nn.utils.prune.custom_from_mask(m[1], "bias", L.tensor([1.0, 0.0]))
    return m


def _weight_norm(L):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # (the deprecated, hook-based one)
        return L.nn.utils.weight_norm(L.nn.Linear(4, 2), dim=1)


def _spectral_norm(L):
    return L.nn.utils.spectral_norm(L.nn.Linear(4, 2)).eval()


def _hooks(m):
    return [type(h).__name__ for mod in m.modules() for h in mod._forward_pre_hooks.values()]


@pytest.mark.parametrize("make", [_pruned, _weight_norm, _spectral_norm])
def test_whole_model_with_hook_objects_round_trips(make):
    seen = {}
    for L in (torch, ember):
        L.manual_seed(0)
        model = make(L)
        buf = io.BytesIO()
        L.save(model, buf)
        buf.seek(0)
        back = L.load(buf, weights_only=False)
        x = L.ones(3, 4)
        seen[L.__name__] = (list(back.state_dict()), _hooks(back),
                            L.equal(back(x), model(x)))
    assert seen["ember"] == seen["torch"]
    assert seen["torch"][2] and seen["torch"][1]


def test_hook_objects_stay_refused_by_a_weights_only_load():
    buf = io.BytesIO()
    ember.save(_pruned(ember), buf)
    buf.seek(0)
    with pytest.raises(UnpicklingError, match="Weights only load failed") as e:
        ember.load(buf)
    assert "Unsupported global: GLOBAL ember.nn.modules.container.Sequential" in str(e.value)
