"""Pruning against torch.nn.utils.prune: masks, the orig / mask layout, state_dict keys,
iterative pruning, global pruning across layers, removal."""

import pytest
import torch
import torch.nn.utils.prune  # (torch does not import it with torch.nn.utils)

import ember
from ember.nn.utils import prune

from helpers import assert_same, copy_module_state, rand_array


def _pair(make):
    torch.manual_seed(0)
    t = make(torch.nn)
    e = make(ember.nn)
    copy_module_state(e, t)
    return e, t


def _same_state(e, t):
    sd_e, sd_t = e.state_dict(), t.state_dict()
    assert list(sd_e) == list(sd_t)
    for k in sd_t:
        assert_same(sd_e[k], sd_t[k], rtol=0, atol=0)


@pytest.mark.parametrize("amount", [0.3, 5, 0, 1.0])
def test_l1_unstructured_masks_the_smallest_entries_as_torch(amount):
    e, t = _pair(lambda nn: nn.Linear(4, 3))
    prune.l1_unstructured(e, "weight", amount)
    torch.nn.utils.prune.l1_unstructured(t, "weight", amount)
    _same_state(e, t)  # bias, weight_orig, weight_mask
    assert list(e.state_dict()) == ["bias", "weight_orig", "weight_mask"]
    assert_same(e.weight, t.weight, rtol=0, atol=0)
    assert "weight" not in dict(e.named_parameters()) and prune.is_pruned(e)
    x = rand_array((2, 4))
    assert_same(e(ember.tensor(x)), t(torch.tensor(x)))


def test_importance_scores_rank_instead_of_the_values():
    e, t = _pair(lambda nn: nn.Linear(3, 2))
    scores = rand_array((2, 3), seed=5)
    prune.l1_unstructured(e, "weight", 2, importance_scores=ember.tensor(scores))
    torch.nn.utils.prune.l1_unstructured(t, "weight", 2, importance_scores=torch.tensor(scores))
    _same_state(e, t)


def test_random_unstructured_draws_torchs_mask():
    e, t = _pair(lambda nn: nn.Conv2d(2, 3, 3))
    ember.manual_seed(11)
    torch.manual_seed(11)
    prune.random_unstructured(e, "weight", amount=0.4)
    torch.nn.utils.prune.random_unstructured(t, "weight", amount=0.4)
    _same_state(e, t)
    assert int((e.weight_mask == 0).sum()) == round(0.4 * 54)


def test_pruning_twice_prunes_among_the_survivors_and_training_keeps_zeros():
    e, t = _pair(lambda nn: nn.Linear(5, 4))
    for lib, m in ((ember, e), (torch, t)):
        lib.nn.utils.prune.l1_unstructured(m, "weight", 0.25)
        lib.nn.utils.prune.l1_unstructured(m, "weight", 3)
        hook = next(iter(m._forward_pre_hooks.values()))
        assert type(hook).__name__ == "PruningContainer" and len(hook) == 2
    _same_state(e, t)
    assert int((e.weight_mask == 0).sum()) == 5 + 3
    # the mask is reapplied before each forward: pruned entries stay zero after a step
    for lib, m in ((ember, e), (torch, t)):
        opt = lib.optim.SGD(m.parameters(), lr=0.5)
        m(lib.ones(2, 5)).sum().backward()
        opt.step()
        m(lib.ones(1, 5))
    assert_same(e.weight, t.weight, rtol=1e-6, atol=1e-7)
    assert not e.weight.detach().numpy()[e.weight_mask.numpy() == 0].any()


def test_global_unstructured_ranks_all_layers_together():
    def make(nn):
        return nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 2))

    e, t = _pair(make)
    for lib, m in ((ember, e), (torch, t)):
        lib.nn.utils.prune.global_unstructured(
            [(m[0], "weight"), (m[2], "weight"), (m[2], "bias")],
            pruning_method=lib.nn.utils.prune.L1Unstructured, amount=0.5)
    _same_state(e, t)
    total = sum(int((getattr(m, k) == 0).sum()) for m, k in
                [(e[0], "weight_mask"), (e[2], "weight_mask"), (e[2], "bias_mask")])
    assert total == round(0.5 * (24 + 12 + 2))


def test_ln_structured_prunes_whole_rows():
    e, t = _pair(lambda nn: nn.Conv2d(2, 4, 2))
    prune.ln_structured(e, "weight", amount=2, n=2, dim=0)
    torch.nn.utils.prune.ln_structured(t, "weight", amount=2, n=2, dim=0)
    _same_state(e, t)


def test_remove_makes_the_pruning_permanent():
    e, t = _pair(lambda nn: nn.Linear(4, 3))
    for lib, m in ((ember, e), (torch, t)):
        lib.nn.utils.prune.l1_unstructured(m, "weight", 0.5)
        lib.nn.utils.prune.remove(m, "weight")
    _same_state(e, t)
    assert list(e.state_dict()) == ["bias", "weight"]
    assert isinstance(e.weight, ember.nn.Parameter) and not prune.is_pruned(e)
    assert not e._hooked
    with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
        prune.remove(e, "weight")


def test_amount_errors_match_torch():
    m = ember.nn.Linear(2, 2)
    with pytest.raises(ValueError, match=r"amount=1.5 should either be a float in the range"):
        prune.l1_unstructured(m, "weight", 1.5)
    with pytest.raises(ValueError, match=r"amount=-1 should either be a float"):
        prune.random_unstructured(m, "weight", -1)
    with pytest.raises(TypeError, match="Invalid type for amount"):
        prune.l1_unstructured(m, "weight", "half")
    with pytest.raises(ValueError, match="should be smaller than the number of parameters"):
        prune.l1_unstructured(m, "weight", 5)
    assert "weight" in dict(m.named_parameters())  # (a failed pruning leaves it as it was)
    with pytest.raises(TypeError, match='Only "unstructured" PRUNING_TYPE'):
        prune.global_unstructured([(m, "weight")], prune.LnStructured, amount=1, n=2)
