"""Twin runs: one optimizer built the same way from `ember.mlx.optimizers` and from
`mlx.optimizers`, fed the same parameters and gradients (NumPy, fixed seed), compared
after every step: parameters, and the whole state tree (keys, dtypes, shapes, values).

Tests get the helpers as fixtures: `twin_run`, `assert_same_tree`, `same_error`.
"""

from __future__ import annotations

import numpy as np
import pytest

import ember.mlx.core as mx
import ember.mlx.optimizers as optim

mlx_core = pytest.importorskip("mlx.core")
mlx_opt = pytest.importorskip("mlx.optimizers")

SHAPES = {"w": (4, 5), "b": (5,), "layers": [{"w": (3, 4)}, {"w": (2, 3, 4), "s": ()}]}


def numpy_tree(shapes, rng: np.random.Generator, dtype):
    if isinstance(shapes, dict):
        return {k: numpy_tree(v, rng, dtype) for k, v in shapes.items()}
    if isinstance(shapes, list):
        return [numpy_tree(v, rng, dtype) for v in shapes]
    return rng.standard_normal(shapes).astype(dtype)


def convert(tree, make):
    """`tree` (NumPy leaves) with each leaf made into one side's array by `make`."""
    if isinstance(tree, dict):
        return {k: convert(v, make) for k, v in tree.items()}
    if isinstance(tree, list | tuple):
        return type(tree)(convert(v, make) for v in tree)
    return make(tree)


def _assert_same_tree(ours, theirs, rtol: float = 1e-6, path: str = "",
                      atol: float = 0.0) -> None:
    """Same structure (dict keys, list lengths), and at each leaf the same
    dtype, shape and values (to `rtol`; no absolute slack unless `atol` is given)."""
    if isinstance(theirs, dict):
        assert isinstance(ours, dict), path
        # the same keys; not their order: MLX's tree_merge (MultiOptimizer's result) orders
        # keys by a set union, which changes from run to run (layout tests check order)
        assert sorted(ours) == sorted(theirs), path
        for k in theirs:
            _assert_same_tree(ours[k], theirs[k], rtol, f"{path}.{k}", atol)
    elif isinstance(theirs, list | tuple):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), path
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _assert_same_tree(a, b, rtol, f"{path}.{i}", atol)
    elif isinstance(theirs, mlx_core.array):
        assert isinstance(ours, mx.array), path
        assert str(ours.dtype) == str(theirs.dtype), path
        assert ours.shape == theirs.shape, path
        # (through tolist: exact for every float dtype here, bfloat16 included)
        actual, expected = np.array(ours.tolist()), np.array(theirs.tolist())
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=path)
    else:
        assert ours == theirs, path


def _twin_run(build, steps: int = 20, rtol: float = 1e-6, dtype=np.float32, shapes=None,
              seed: int = 0, atol: float = 0.0):
    """Run `build(optim module)` on both sides for `steps` steps; compare after each.

    Returns the two optimizers and final parameter trees."""
    rng = np.random.default_rng(seed)
    shapes = SHAPES if shapes is None else shapes
    params = numpy_tree(shapes, rng, dtype)
    grads = [numpy_tree(shapes, rng, dtype) for _ in range(steps)]
    ours, theirs = build(optim), build(mlx_opt)
    p_ours, p_theirs = convert(params, mx.array), convert(params, mlx_core.array)
    for i, g in enumerate(grads):
        p_ours = ours.apply_gradients(convert(g, mx.array), p_ours)
        p_theirs = theirs.apply_gradients(convert(g, mlx_core.array), p_theirs)
        _assert_same_tree(p_ours, p_theirs, rtol, f"params after step {i + 1}", atol)
        _assert_same_tree(ours.state, theirs.state, rtol, f"state after step {i + 1}", atol)
    return ours, theirs, p_ours, p_theirs


def _same_error(fn) -> Exception:
    """`fn(optim module)` raises the same exception type and message on both sides."""
    with pytest.raises(Exception) as theirs:
        fn(mlx_opt)
    with pytest.raises(type(theirs.value)) as ours:
        fn(optim)
    assert str(ours.value) == str(theirs.value)
    return ours.value


@pytest.fixture
def twin_run():
    return _twin_run


@pytest.fixture
def assert_same_tree():
    return _assert_same_tree


@pytest.fixture
def same_error():
    return _same_error
