"""The names `mlx.optimizers` re-exports (tree functions, its submodules) exist on ember."""

import pytest

import ember.mlx.nn as nn
import ember.mlx.optimizers as optim
from ember.mlx import utils

mlx_optim = pytest.importorskip("mlx.optimizers")

TYPING = {"Callable", "List", "Optional", "Tuple", "Union"}


def test_every_name_mlx_optimizers_exports_but_typing_ones_exists():
    theirs = {n for n in dir(mlx_optim) if not n.startswith("_")} - TYPING
    ours = {n for n in dir(optim) if not n.startswith("_")}
    assert theirs - ours == set()


def test_the_reexports_are_the_tree_functions_module_and_submodules():
    for name in ("tree_map", "tree_flatten", "tree_unflatten", "tree_merge", "tree_reduce"):
        assert getattr(optim, name) is getattr(utils, name)
    assert optim.Module is nn.Module
    assert optim.optimizers.Adam is optim.Adam
    assert optim.optimizers.clip_grad_norm is optim.clip_grad_norm
    assert optim.schedulers.cosine_decay is optim.cosine_decay


@pytest.mark.parametrize("sub", ["optimizers", "schedulers"])
def test_submodules_export_what_mlx_s_do(sub):
    theirs = {n for n in dir(getattr(mlx_optim, sub)) if not n.startswith("_")} - TYPING
    ours = {n for n in dir(getattr(optim, sub)) if not n.startswith("_")}
    assert theirs - ours == set()


def test_a_schedule_from_the_schedulers_module_gives_mlx_s_values():
    ours = optim.schedulers.step_decay(1.0, 0.5, 2)
    theirs = mlx_optim.schedulers.step_decay(1.0, 0.5, 2)
    # step_decay is init * decay ** (step // steps), a Python float for an int step: exact
    assert [ours(s) for s in range(6)] == [theirs(s) for s in range(6)]
