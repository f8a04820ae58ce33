"""nn.Upsample and the upsample functions against MLX 0.32.4: values (bit-equal where the
arithmetic is the same float32 operations), dtypes, gradients, reprs, state trees and
errors, for nearest, linear and cubic modes, align_corners and antialias."""

import numpy as np
import pytest

import ember.mlx.core as mx
import ember.mlx.nn as nn

CASES = [  # (input shape, Upsample arguments)
    ((2, 5, 3), {"scale_factor": 2}),
    ((1, 4, 3, 2), {"scale_factor": 2}),
    ((1, 4, 3, 2), {"scale_factor": (1.5, 2.5)}),
    ((1, 6, 5, 2), {"scale_factor": 0.5}),
    ((1, 2, 3, 2, 1), {"scale_factor": (2, 1, 3)}),
    ((2, 5, 3), {"scale_factor": 2.5, "mode": "linear"}),
    ((1, 4, 3, 2), {"scale_factor": 2, "mode": "linear"}),
    ((1, 4, 3, 2), {"scale_factor": (1.5, 2), "mode": "linear", "align_corners": True}),
    ((1, 3, 2, 2, 1), {"scale_factor": 2, "mode": "linear"}),
    ((1, 3, 2, 2, 1), {"scale_factor": 2, "mode": "linear", "align_corners": True}),
    ((1, 4, 3, 2), {"scale_factor": 2, "mode": "cubic"}),
    ((1, 4, 5, 2), {"scale_factor": (1.5, 3), "mode": "cubic", "align_corners": True}),
    ((1, 8, 9, 2), {"scale_factor": 0.5, "mode": "linear", "antialias": True}),
    ((1, 8, 9, 2), {"scale_factor": (0.3, 1.5), "mode": "linear", "antialias": True}),
    ((1, 8, 9, 2), {"scale_factor": 0.5, "mode": "cubic", "antialias": True}),
    ((1, 6, 6, 1), {"scale_factor": 2, "mode": "cubic", "antialias": True}),
]


@pytest.mark.parametrize("shape,kwargs", CASES, ids=[str(i) for i in range(len(CASES))])
def test_upsample_matches_mlx(mlx, mlx_nn, close, shape, kwargs):
    ours, theirs = nn.Upsample(**kwargs), mlx_nn.Upsample(**kwargs)
    assert repr(ours) == repr(theirs)
    rng = np.random.default_rng(CASES.index((shape, kwargs)))  # (the same data in any order)
    x = rng.standard_normal(shape).astype(np.float32)
    a, b = ours(mx.array(x)), theirs(mlx.array(x))
    assert a.dtype.name == str(b.dtype).removeprefix("mlx.core.")
    # the taps and weights are MLX's float32 operations in MLX's order: equal to the bit
    close(a, b, rtol=0, atol=0)
    w = rng.standard_normal(b.shape).astype(np.float32)

    def g(m, layer):
        return m.grad(lambda x: m.sum(layer(x) * m.array(w)))(m.array(x))

    # NOTE: the gathers' gradients scatter-add repeated indices in another order than
    # MLX's: a few ulp of the terms apart (measured 6e-7 relative; where terms of size ~1
    # cancel, 3e-7 absolute over 300 seeds of one case: atol 1e-6)
    close(g(mx, ours), g(mlx, theirs), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("kwargs", [{"scale_factor": 2}, {"scale_factor": 1.5},
                                    {"scale_factor": 2, "mode": "linear"}])
def test_integer_and_half_inputs_keep_mlx_dtypes(mlx, mlx_nn, kwargs):
    for dtype in ("int32", "float16"):
        x = np.arange(12).reshape(1, 3, 4, 1).astype(dtype)
        a = nn.Upsample(**kwargs)(mx.array(x))
        b = mlx_nn.Upsample(**kwargs)(mlx.array(x))
        assert a.dtype.name == str(b.dtype).removeprefix("mlx.core.")
        np.testing.assert_array_equal(np.array(a), np.array(b))


def test_docstring_example_and_state_tree(mlx, mlx_nn):
    from mlx.utils import tree_flatten as theirs_flatten

    from ember.mlx.utils import tree_flatten

    x = np.arange(1, 5).reshape(1, 2, 2, 1)
    for kwargs in [{"scale_factor": 2}, {"scale_factor": 2, "mode": "linear"},
                   {"scale_factor": 2, "mode": "linear", "align_corners": True}]:
        a = nn.Upsample(**kwargs)(mx.array(x)).squeeze()
        b = mlx_nn.Upsample(**kwargs)(mlx.array(x)).squeeze()
        assert repr(a) == repr(b)
    for scale in (2, [1, 2.5]):
        ours, theirs = nn.Upsample(scale), mlx_nn.Upsample(scale)
        assert tree_flatten(ours.state) == theirs_flatten(theirs.state)


def test_functions_match_mlx(mlx, close):
    from mlx.nn.layers import upsample as theirs

    x = np.random.default_rng(11).standard_normal((1, 3, 4, 2)).astype(np.float32)
    for name, args in [("upsample_nearest", ((2.0, 3.0),)),
                       ("upsample_linear", ((2.0, 0.5), False, True)),
                       ("upsample_cubic", ((1.5, 2.0), True))]:
        close(getattr(nn.layers.upsample, name)(mx.array(x), *args),
              getattr(theirs, name)(mlx.array(x), *args), rtol=0, atol=0)
        assert getattr(nn.upsample, name) is getattr(nn.layers.upsample, name)


ERRORS = [
    lambda n, m: n.Upsample(2, mode="bilinear"),
    lambda n, m: n.Upsample(2, antialias=True),
    lambda n, m: n.Upsample(2, mode="linear", align_corners=True, antialias=True),
    lambda n, m: n.Upsample(2)(m.ones((2, 3))),
    lambda n, m: n.Upsample((2, 2))(m.ones((1, 3, 2))),
    lambda n, m: n.layers.upsample.upsample_nearest(m.ones((1, 3, 2)), (2.0, 2.0)),
    lambda n, m: n.layers.upsample.upsample_linear(m.ones((1, 3, 2)), (2.0,), True, True),
]


@pytest.mark.parametrize("make", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors_match_mlx(mlx, mlx_nn, make):
    with pytest.raises(ValueError) as theirs:
        make(mlx_nn, mlx)
    with pytest.raises(ValueError) as ours:
        make(nn, mx)
    assert str(ours.value) == str(theirs.value)
