"""mlx.utils' tree functions against MLX's."""

import pytest

import ember.mlx.nn as nn
from ember.mlx import utils

mlx_utils = pytest.importorskip("mlx.utils")


@pytest.mark.parametrize("flat", [[], {}, [("a", 1), ("b.0", 2), ("b.1", 3)],
                                  [("0.w", 1), ("2.w", 2)], [("", 5)]])
def test_tree_unflatten_matches_mlx(flat):
    assert utils.tree_unflatten(flat) == mlx_utils.tree_unflatten(flat)


def test_a_module_without_parameters_updates_from_an_empty_flat_list():
    # (MLX programs load weights so: model.update(tree_unflatten(list(weights.items()))))
    act = nn.ReLU()
    act.update(utils.tree_unflatten([]))
    assert act.parameters() == {}
