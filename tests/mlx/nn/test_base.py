"""nn.Module against MLX's: the parameter tree, freezing, update's strictness, walks over
submodules, modes, repr and weight files."""

import numpy as np
import pytest

import ember.mlx.core as mx
import ember.mlx.nn as nn
from ember.mlx.utils import tree_flatten


def Block(nn_):
    """A module with an array, a constant, a list of layers and a dict of arrays, built on
    ember's nn or on MLX's."""
    mx_ = mx if nn_ is nn else pytest.importorskip("mlx.core")

    class Block(nn_.Module):
        def __init__(self):
            super().__init__()
            self.scale = mx_.ones((2,))
            self._constant = self.scale * 2
            self.layers = [nn_.Linear(2, 3), nn_.ReLU(), nn_.Linear(3, 1, bias=False)]
            self.extra = {"a": self.scale, "b": [self.scale]}
            self.name = "block"

        def __call__(self, x):
            for layer in self.layers:
                x = layer(x)
            return x * self.extra["a"][0]

    return Block()


def _shapes(tree):
    return [(k, tuple(v.shape)) for k, v in tree_flatten(tree)]


def test_parameter_tree_matches_mlx(mlx_nn):
    ours, theirs = Block(nn), Block(mlx_nn)
    assert _shapes(ours.parameters()) == _shapes(theirs.parameters())
    assert "_constant" not in ours.parameters()
    assert ours.parameters()["layers"][1] == {}
    assert isinstance(ours, dict) and ours["layers"] is ours.layers
    assert ours.name == "block" and "name" not in ours


def test_children_and_leaf_modules_match_mlx(mlx_nn):
    ours, theirs = Block(nn), Block(mlx_nn)
    assert [k for k, _ in tree_flatten(ours.children(), is_leaf=nn.Module.is_module)] == \
        [k for k, _ in tree_flatten(theirs.children(), is_leaf=mlx_nn.Module.is_module)]
    assert [k for k, _ in ours.named_modules()] == [k for k, _ in theirs.named_modules()]
    assert len(ours.modules()) == 4
    assert [k for k, _ in tree_flatten(ours.leaf_modules(), is_leaf=nn.Module.is_module)] \
        == ["layers.0", "layers.1", "layers.2"]


def test_freeze_and_unfreeze_match_mlx(mlx_nn):
    for kwargs in [{}, {"keys": "bias"}, {"recurse": False}, {"keys": ["weight"]}]:
        ours, theirs = Block(nn).freeze(**kwargs), Block(mlx_nn).freeze(**kwargs)
        assert _shapes(ours.trainable_parameters()) == _shapes(theirs.trainable_parameters())
        assert _shapes(ours.parameters()) == _shapes(theirs.parameters())
    ours, theirs = Block(nn).freeze(), Block(mlx_nn).freeze()
    ours.unfreeze(keys="bias")
    theirs.unfreeze(keys="bias")
    assert _shapes(ours.trainable_parameters()) == _shapes(theirs.trainable_parameters())
    assert _shapes(ours.unfreeze().trainable_parameters()) == _shapes(ours.parameters())


def test_freeze_strict_rejects_unknown_keys(mlx_nn):
    for nn_ in (nn, mlx_nn):
        with pytest.raises(KeyError, match="Module doesn't contain member nope."):
            Block(nn_).freeze(keys="nope", strict=True)


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001  (the exception is what is compared)
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("tree", [
    {"nope": 1},
    {"layers": [{"weight": 1}]},
    {"layers": [{}, {}, {}, {}]},
    {"scale": [1]},
    {"layers": 3},
])
def test_update_strictness_matches_mlx(mlx, mlx_nn, tree):
    ours, theirs = Block(nn), Block(mlx_nn)
    assert _error(lambda: ours.update(tree)) == _error(lambda: theirs.update(tree))
    assert _error(lambda: ours.update(tree)) is not None
    ours.update(tree, strict=False)  # non-strict ignores what it cannot place


def test_update_replaces_arrays_and_accepts_other_shapes():
    m = nn.Linear(2, 3)
    m.update({"bias": mx.zeros((7,))})
    assert m.bias.shape == (7,)


def test_update_modules(mlx_nn):
    ours = Block(nn)
    ours.update_modules({"layers": [{}, nn.GELU(), {}]})
    assert isinstance(ours.layers[1], nn.GELU)
    with pytest.raises(ValueError, match='Module does not have sub-module named "x".'):
        ours.update_modules({"x": nn.GELU()})


def test_apply_and_set_dtype():
    m = Block(nn)
    m.set_dtype(mx.float16)
    assert {v.dtype for _, v in tree_flatten(m.parameters())} == {mx.float16}
    m.apply(lambda x: x * 0)
    assert all(np.all(np.array(v) == 0) for _, v in tree_flatten(m.parameters()))


def test_train_eval_reaches_submodules():
    m = Block(nn)
    assert m.training
    m.eval()
    assert not m.layers[0].training
    m.train()
    assert m.layers[2].training


def test_repr_matches_mlx(mlx_nn):
    assert repr(Block(nn)) == repr(Block(mlx_nn))
    assert repr(nn.Sequential(nn.Linear(2, 3), nn.GELU())) == \
        repr(mlx_nn.Sequential(mlx_nn.Linear(2, 3), mlx_nn.GELU()))


def test_state_is_the_module_itself():
    m = nn.Linear(2, 2)
    assert m.state is m


def test_missing_super_init_names_the_fix():
    class Broken(nn.Module):
        def __init__(self):
            self.w = mx.ones((2,))

    with pytest.raises(AttributeError, match="super\\(\\).__init__\\(\\)"):
        Broken().freeze()


def test_setting_a_plain_value_removes_the_array():
    m = nn.Linear(2, 2)
    m.bias = None
    assert "bias" not in m.parameters()


@pytest.mark.parametrize("suffix", [".npz", ".safetensors"])
def test_weights_round_trip_with_mlx_files(tmp_path, mlx_nn, copy_params, close, suffix):
    theirs = Block(mlx_nn)
    path = str(tmp_path / f"w{suffix}")
    theirs.save_weights(path)
    ours = Block(nn).load_weights(path)
    close(ours.parameters(), theirs.parameters(), rtol=0, atol=0)
    back = str(tmp_path / f"back{suffix}")
    ours.save_weights(back)
    again = Block(mlx_nn).load_weights(back)
    close(again.parameters(), theirs.parameters(), rtol=0, atol=0)


def test_load_weights_strictness_matches_mlx(mlx, mlx_nn):
    ours, theirs = nn.Linear(2, 3), mlx_nn.Linear(2, 3)
    cases = [
        ([("weight", mx.zeros((3, 2)))], [("weight", mlx.zeros((3, 2)))]),
        ([("weight", mx.zeros((3, 2))), ("bias", mx.zeros((3,))), ("x", mx.zeros(1))],
         [("weight", mlx.zeros((3, 2))), ("bias", mlx.zeros((3,))), ("x", mlx.zeros(1))]),
        ([("weight", mx.zeros((2, 2))), ("bias", mx.zeros((3,)))],
         [("weight", mlx.zeros((2, 2))), ("bias", mlx.zeros((3,)))]),
    ]
    for a, b in cases:
        err = _error(lambda a=a: ours.load_weights(a))
        assert err is not None and err == _error(lambda b=b: theirs.load_weights(b))
    ours.load_weights([("weight", mx.zeros((3, 2)))], strict=False)
    assert np.all(np.array(ours.weight) == 0)


def test_save_weights_rejects_other_suffixes(tmp_path):
    with pytest.raises(ValueError, match="Unsupported file extension"):
        nn.Linear(2, 2).save_weights(str(tmp_path / "w.bin"))


@pytest.mark.parametrize("strict", [True, False])
def test_load_weights_takes_a_dict_of_flat_paths_as_mlx(mlx, mlx_nn, strict):
    # (what mx.load returns can be passed as it is, without .items())
    ours, theirs = Block(nn), Block(mlx_nn)
    flat = {k: np.full(v.shape, i, np.float32)
            for i, (k, v) in enumerate(tree_flatten(theirs.parameters()))}
    ours.load_weights({k: mx.array(v) for k, v in flat.items()}, strict=strict)
    theirs.load_weights({k: mlx.array(v) for k, v in flat.items()}, strict=strict)
    for (k, a), (_, b) in zip(tree_flatten(ours.parameters()),
                              tree_flatten(theirs.parameters()), strict=True):
        assert np.array_equal(np.array(a), np.array(b)) and np.all(np.array(a) == flat[k]), k
