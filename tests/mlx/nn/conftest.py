"""Helpers shared by the `ember.mlx.nn` tests: moving MLX's parameters into ember's
layers and comparing arrays of the two."""

import zlib

import numpy as np
import pytest


@pytest.fixture(autouse=True)
def _data_by_test(request):
    """A test module's `RNG` starts afresh for each test, seeded by the test's name: the
    data a test draws does not depend on which tests ran before it in its worker."""
    if hasattr(request.module, "RNG"):
        request.module.RNG = np.random.default_rng(zlib.crc32(request.node.name.encode()))


@pytest.fixture
def mlx():
    return pytest.importorskip("mlx.core")


@pytest.fixture
def mlx_nn():
    return pytest.importorskip("mlx.nn")


@pytest.fixture
def copy_params():
    """`copy_params(mlx_layer, ours)`: give our layer MLX's parameters (all of them,
    running statistics included), through NumPy, and return it."""
    import ember.mlx.core as mx
    from ember.mlx.utils import tree_flatten

    def copy(theirs, ours):
        flat = [(k, mx.array(np.array(v))) for k, v in tree_flatten(theirs.parameters())]
        return ours.load_weights(flat)  # strict: the same names and shapes

    return copy


@pytest.fixture
def close():
    """`close(ours, theirs, rtol, atol)`: equal shapes and values (trees allowed)."""
    from ember.mlx.utils import tree_flatten

    def check(ours, theirs, rtol=1e-5, atol=1e-6):
        a, b = tree_flatten(ours), tree_flatten(theirs)
        assert [k for k, _ in a] == [k for k, _ in b]
        for (k, x), (_, y) in zip(a, b):
            x, y = np.array(x), np.array(y)
            assert x.shape == y.shape, k
            np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, err_msg=k)

    return check
