"""`mx.fast.rope`'s argument checks (ember.mlx.core._rope_checks) and its offset vectors,
against MLX 0.32.4: the same exception type and message for each refused call, in MLX's
order, and one position offset per batch entry where the offset is a vector."""

import numpy as np
import pytest

import ember.mlx.core as mx

mlx = pytest.importorskip("mlx.core")
from mlx_oracle import outcome  # noqa: E402

X = np.random.default_rng(5).standard_normal((2, 3, 4, 8)).astype(np.float32)
SETUP = "x = mx.zeros((2, 3, 2, 4)); xi = x.astype(mx.int32)"


def _rope(a: str, dims: int, offset: str = "0", base: str = "1.0", freqs: str = "None"):
    return (f"mx.fast.rope({a}, {dims}, traditional=False, base={base}, scale=1.0, "
            f"offset={offset}, freqs={freqs}).shape")


@pytest.mark.parametrize("expr", [
    _rope("x", 4, freqs="mx.ones(2)"),                     # base and freqs
    _rope("x", 4, base="None"),                            # neither
    _rope("x[0, 0]", 3),                                   # 2-D input, before odd dims
    _rope("xi", 3),                                        # integer input, before odd dims
    _rope("x", 0),
    _rope("x", -3),
    _rope("x", 8),                                         # more dims than features
    _rope("x", 3, "1.5"),                                  # a float offset, before odd dims
    _rope("x", 4, "True"),
    _rope("x", 4, "mx.array([[1]])"),
    _rope("x", 8, "mx.array([1, 2, 3])"),                  # neither 1 nor B entries
    _rope("x", 4, "mx.array([1.5, 2.0])"),
    _rope("x", 4, "mx.array([1, 2], mx.uint8)"),
    _rope("x", 4, "mx.array(3, mx.int64)"),
    _rope("x", 4, base="None", freqs="mx.ones(3)"),
    _rope("x", 4, base="None", freqs="mx.ones((1, 2))"),
    _rope("x", 4, "'a'"),
])
def test_rope_refuses_as_mlx(expr):
    assert outcome(expr, mx, SETUP) == outcome(expr, mlx, SETUP)


@pytest.mark.parametrize("traditional", [False, True])
@pytest.mark.parametrize("shape", [(2, 3, 4, 8), (2, 4, 8)])
def test_an_offset_vector_gives_each_batch_entry_its_own(traditional, shape):
    x = X.reshape(-1)[:np.prod(shape)].reshape(shape)

    def run(m):
        return m.fast.rope(m.array(x), 6, traditional=traditional, base=100.0, scale=0.5,
                           offset=m.array([3, 7]))

    # NOTE: cos/sin of the positions differ from MLX's by an ulp or two
    np.testing.assert_allclose(np.array(run(mx)), np.array(run(mlx)), rtol=1e-5, atol=1e-6)


def test_a_one_entry_offset_vector_is_a_scalar():
    def run(m):
        return m.fast.rope(m.array(X), 8, traditional=False, base=10000.0, scale=1.0,
                           offset=m.array([5]))

    np.testing.assert_allclose(np.array(run(mx)), np.array(run(mlx)), rtol=1e-5, atol=1e-6)
