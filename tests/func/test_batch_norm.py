"""`func.replace_all_batch_norm_modules_` against torch's: every BatchNorm module in the
tree stops tracking running statistics (InstanceNorm keeps its), so vmap can run it."""

from __future__ import annotations

import torch

import ember

from helpers import assert_same, rand_array


def _tree(m):
    m.manual_seed(0)
    return m.nn.Sequential(m.nn.Conv2d(1, 2, 3), m.nn.BatchNorm2d(2),
                           m.nn.Sequential(m.nn.BatchNorm1d(3, affine=False)),
                           m.nn.InstanceNorm1d(3, track_running_stats=True))


def _state(tree):
    return [(type(mod).__name__, mod.track_running_stats, mod.running_mean is None,
             mod.num_batches_tracked is None, list(dict(mod.named_buffers())),
             list(mod.state_dict()), repr(mod))
            for mod in tree.modules() if hasattr(mod, "track_running_stats")]


def test_the_tree_loses_its_batch_norm_buffers_in_place():
    def run(m):
        tree = _tree(m)
        assert m.func.replace_all_batch_norm_modules_(tree) is tree
        return _state(tree)

    assert run(ember) == run(torch)


def test_the_module_itself_is_replaced_and_then_vmaps():
    def run(m):
        bn = m.nn.BatchNorm2d(4)
        m.func.replace_all_batch_norm_modules_(bn)
        bn.eval()  # (without buffers, eval mode normalises by the batch too)
        return bn.training, m.func.vmap(bn)(m.tensor(rand_array((3, 2, 4, 5, 5))))

    (t_e, out_e), (t_t, out_t) = run(ember), run(torch)
    assert t_e == t_t
    # (per-channel means and variances: vectorised reductions, so a float32 tolerance)
    assert_same(out_e, out_t, rtol=1e-5, atol=1e-6)
