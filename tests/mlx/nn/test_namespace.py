"""The names `mlx.nn` and `mlx.nn.layers` export, against MLX 0.32.4: the same ones (the
distributed layers included), none added, since programs test `hasattr(nn, ...)` (the
upsample functions live in `nn.layers.upsample` only, `checkpoint` in `nn.utils` only)."""

import pytest

import ember.mlx.nn as nn

mlx_nn = pytest.importorskip("mlx.nn")

def _public(module) -> set[str]:
    return {n for n in dir(module) if not n.startswith("_")}


@pytest.mark.parametrize("path", ["", "layers"])
def test_no_names_mlx_lacks(path):
    ours, theirs = nn, mlx_nn
    for part in filter(None, path.split(".")):
        ours, theirs = getattr(ours, part), getattr(theirs, part)
    assert _public(ours) - _public(theirs) == set()


@pytest.mark.parametrize("path", ["", "layers"])
def test_every_mlx_name(path):
    ours, theirs = nn, mlx_nn
    for part in filter(None, path.split(".")):
        ours, theirs = getattr(ours, part), getattr(theirs, part)
    assert _public(theirs) - _public(ours) == set()


@pytest.mark.parametrize("name", ["upsample_nearest", "upsample_linear", "upsample_cubic",
                                  "checkpoint"])
def test_where_the_helpers_live(name):
    assert hasattr(nn, name) == hasattr(mlx_nn, name) is False
    assert hasattr(nn.layers, name) == hasattr(mlx_nn.layers, name)
    home = "utils" if name == "checkpoint" else "upsample"
    assert callable(getattr(getattr(nn, home), name))
    assert callable(getattr(getattr(mlx_nn, home), name))
