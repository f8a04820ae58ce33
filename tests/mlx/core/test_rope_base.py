"""`mx.fast.rope` (and `nn.RoPE`) at bases MLX takes without complaint: zero and negative
bases give NaN frequencies (C's log), infinity a NaN first frequency and zero others, and
tiny or unit bases finite rotations; ember gives the same, against MLX 0.32.4."""

import math

import numpy as np
import pytest

import ember.mlx.core as mx
import ember.mlx.nn as nn

mlx = pytest.importorskip("mlx.core")
mlx_nn = pytest.importorskip("mlx.nn")

X = np.random.default_rng(11).standard_normal((2, 3, 4, 8)).astype(np.float32)
BASES = [0.0, -0.0, -1.0, -0.5, math.inf, -math.inf, math.nan, 1e-30, 1.0]


def _same(ours, theirs):
    # NOTE: cos/sin of the finite angles differ from MLX's by an ulp or two
    np.testing.assert_allclose(np.array(ours), np.array(theirs), rtol=1e-5, atol=1e-6,
                               equal_nan=True)


@pytest.mark.parametrize("traditional", [False, True])
@pytest.mark.parametrize("base", BASES)
def test_rope_base_as_mlx(base, traditional):
    def run(m):
        return m.fast.rope(m.array(X), 6, traditional=traditional, base=base, scale=0.5,
                           offset=3)

    _same(run(mx), run(mlx))


@pytest.mark.parametrize("base", [0.0, -2.0])
def test_rope_layer_base_as_mlx(base):
    ours = nn.RoPE(8, base=base)(mx.array(X), offset=mx.array([1, 4]))
    theirs = mlx_nn.RoPE(8, base=base)(mlx.array(X), offset=mlx.array([1, 4]))
    _same(ours, theirs)
    assert np.isnan(np.array(ours)[..., :8]).all()  # every rotated feature, as MLX
