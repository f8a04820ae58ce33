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


TREE = {"w": [1, {"b": 2}], "c": (3,)}


@pytest.mark.parametrize("kwargs", [
    {},
    {"prefix": "model"},         # MLX drops the first character of every path ("odel.w.0")
    {"prefix": ".model"},
    {"is_leaf": lambda x: isinstance(x, list)},
    {"is_leaf": lambda x: isinstance(x, dict) and "w" in x},   # the root itself a leaf
])
def test_tree_flatten_matches_mlx(kwargs):
    assert utils.tree_flatten(TREE, **kwargs) == mlx_utils.tree_flatten(TREE, **kwargs)
    assert utils.tree_flatten(TREE, destination={}, **kwargs) == \
        mlx_utils.tree_flatten(TREE, destination={}, **kwargs)


def test_tree_flatten_refuses_another_destination():
    with pytest.raises(ValueError) as theirs:
        mlx_utils.tree_flatten(TREE, destination=set())
    with pytest.raises(ValueError) as ours:
        utils.tree_flatten(TREE, destination=set())
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("name", ["tree_map_with_path", "tree_map"])
def test_tree_maps_rebuild_namedtuples_lists_and_dicts_as_mlx(name):
    from collections import namedtuple

    point = namedtuple("Point", "x y")
    tree = {"p": point(1, [2, (3, 4)]), "q": [point(5, 6)]}
    if name == "tree_map":
        def fn(v, w):
            return (v, w)
    else:
        def fn(path, v, w):
            return (path, v, w)
    ours = getattr(utils, name)(fn, tree, tree)
    theirs = getattr(mlx_utils, name)(fn, tree, tree)
    assert ours == theirs and type(ours["p"]) is point and type(ours["q"][0]) is point
