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


def _outcome(fn, *args, **kwargs):
    """(result, None) or (None, (exception type, message)), to compare both sides."""
    try:
        return fn(*args, **kwargs), None
    except Exception as e:  # noqa: BLE001 - compared with MLX's
        return None, (type(e), str(e))


@pytest.mark.parametrize("flat", [
    [("01", "a"), ("1", "b")],          # int() makes both 1: a dict, as MLX
    [("1", "a"), ("-1", "b")],
    [("2", "c"), ("0", "a")],           # sparse and unordered indices
    [("a.01.x", 1), ("a.1.y", 2)],
    {"w.0": 1, "w.1": 2},
    5,                                  # not a sized flat list
    (p for p in [("a", 1)]),
])
def test_tree_unflatten_edge_keys_and_errors_match_mlx(flat):
    if not isinstance(flat, (list, dict, int)):
        ours, theirs = _outcome(utils.tree_unflatten, (p for p in [("a", 1)])), \
            _outcome(mlx_utils.tree_unflatten, (p for p in [("a", 1)]))
    else:
        ours, theirs = _outcome(utils.tree_unflatten, flat), \
            _outcome(mlx_utils.tree_unflatten, flat)
    assert ours == theirs


@pytest.mark.parametrize("a, b, fn", [
    ({"a": 1, "b": None, "c": [None, 2]}, {"a": None, "b": 3, "c": [4, None]}, None),
    ({"a": 1}, {"a": 2}, None),                     # same place, no merge_fn
    ({"a": 1}, {"a": 2}, lambda u, v: u + v),
    ([], {}, None),                                 # empty containers of two types
    ([], (), None),
    ((), (), None),
    ({}, [1], None),
    (None, None, None),                             # two absent leaves need merge_fn
    (None, None, lambda u, v: "both"),
    ({"d": None, "x": 1}, {"x": None}, None),
    ([1, None, [2]], [None, 3], None),
    ((1, None), [None, 2], None),
    ({"a": 1}, [1], None),
])
def test_tree_merge_matches_mlx(a, b, fn):
    assert _outcome(utils.tree_merge, a, b, fn) == _outcome(mlx_utils.tree_merge, a, b, fn)


def test_tree_merge_rebuilds_namedtuples_and_orders_keys_first_seen():
    from collections import namedtuple

    point = namedtuple("Point", "x y")
    merged = utils.tree_merge(point(1, None), point(None, [2]))
    assert merged == mlx_utils.tree_merge(point(1, None), point(None, [2])) == point(1, [2])
    # MLX's keys come in a set's order; ours in first-seen order, the same mapping
    out = utils.tree_merge({"b": 1, "a": None}, {"c": 3, "a": 2})
    assert list(out) == ["b", "a", "c"]
    assert out == mlx_utils.tree_merge({"b": 1, "a": None}, {"c": 3, "a": 2})


@pytest.mark.parametrize("tree, init, leaf", [
    ({"p": 2, "q": [3, 4]}, None, None),
    ({"p": 2, "q": [3, 4]}, 1, None),
    ([None, 2, 3], None, None),             # a None leaf: the next leaf replaces it
    ({}, None, None),
    ([], 7, None),
    (5, None, None),
    (5, 1, None),
    ({"r": [1, 2], "s": [3]}, None, "list"),
    ({"r": [1, 2], "s": [3]}, [], "list"),
])
def test_tree_reduce_matches_mlx(tree, init, leaf):
    is_leaf = (lambda v: isinstance(v, list)) if leaf == "list" else None

    def fn(acc, v):
        # lists concatenate; a None from fn restarts the fold (MLX's rule)
        return acc + v if not isinstance(v, int) or v != 3 else None

    ours = _outcome(utils.tree_reduce, fn, tree, init, is_leaf)
    theirs = _outcome(mlx_utils.tree_reduce, fn, tree, init, is_leaf)
    assert ours == theirs
