"""nn.init against torch.nn.init: the same seed gives the same weights, and the same errors."""

import math

import pytest
import torch

import ember
from ember import nn

from helpers import assert_same

SHAPES = [(5, 4), (6, 3, 2, 2)]

INITS = [
    ("uniform_", lambda i, t: i.uniform_(t, -0.3, 0.7)),
    ("normal_", lambda i, t: i.normal_(t, 0.5, 2.0)),
    ("trunc_normal_", lambda i, t: i.trunc_normal_(t, 0.1, 1.0, -1.5, 2.0)),
    ("trunc_normal_narrow", lambda i, t: i.trunc_normal_(t, 0.0, 1.0, 1.0, 1.5)),
    ("constant_", lambda i, t: i.constant_(t, 0.25)),
    ("ones_", lambda i, t: i.ones_(t)),
    ("zeros_", lambda i, t: i.zeros_(t)),
    ("xavier_uniform_", lambda i, t: i.xavier_uniform_(t, gain=i.calculate_gain("tanh"))),
    ("xavier_normal_", lambda i, t: i.xavier_normal_(t)),
    ("kaiming_uniform_", lambda i, t: i.kaiming_uniform_(t, a=math.sqrt(5))),
    ("kaiming_uniform_fan_out_relu", lambda i, t: i.kaiming_uniform_(t, mode="fan_out",
                                                                     nonlinearity="relu")),
    ("kaiming_normal_", lambda i, t: i.kaiming_normal_(t, a=0.1)),
    ("orthogonal_", lambda i, t: i.orthogonal_(t, gain=2.0)),
]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("case", INITS, ids=[c[0] for c in INITS])
def test_initialiser_matches_torch_under_the_same_seed(case, shape):
    _, fn = case
    ember.manual_seed(123)
    torch.manual_seed(123)
    e = fn(nn.init, ember.empty(shape))
    t = fn(torch.nn.init, torch.empty(shape))
    assert_same(e, t, rtol=1e-5, atol=1e-6)
    # Parameters are filled in place without recording a graph.
    p = nn.Parameter(ember.empty(shape))
    out = fn(nn.init, p)
    assert out is p and p.grad_fn is None and p.requires_grad


def test_orthogonal_rows_are_orthonormal():
    w = nn.init.orthogonal_(ember.empty(3, 7)).numpy()
    import numpy as np

    np.testing.assert_allclose(w @ w.T, np.eye(3), atol=1e-5)


def test_eye_dirac_sparse_match_torch():
    assert_same(nn.init.eye_(ember.empty(3, 5)), torch.nn.init.eye_(torch.empty(3, 5)))
    for shape, groups in (((4, 2, 3), 1), ((6, 2, 3, 3), 2), ((2, 2, 3, 3, 3), 1)):
        assert_same(nn.init.dirac_(ember.empty(shape), groups),
                    torch.nn.init.dirac_(torch.empty(shape), groups))
    ember.manual_seed(1)
    torch.manual_seed(1)
    assert_same(nn.init.sparse_(ember.empty(6, 4), 0.5),
                torch.nn.init.sparse_(torch.empty(6, 4), 0.5))


def test_calculate_gain_and_fans_match_torch():
    for name, param in (("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None),
                        ("relu", None), ("leaky_relu", None), ("leaky_relu", 0.3),
                        ("selu", None)):
        assert nn.init.calculate_gain(name, param) == torch.nn.init.calculate_gain(name, param)
    assert nn.init._calculate_fan_in_and_fan_out(ember.empty(4, 3, 2, 5)) == \
        torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(4, 3, 2, 5))


def test_init_errors_match_torch():
    cases = [
        lambda i, lib: i.calculate_gain("swish"),
        lambda i, lib: i.calculate_gain("leaky_relu", True),
        lambda i, lib: i.xavier_uniform_(lib.empty(3)),
        lambda i, lib: i.kaiming_normal_(lib.empty(3, 2), mode="fan_avg"),
        lambda i, lib: i.eye_(lib.empty(2, 2, 2)),
        lambda i, lib: i.dirac_(lib.empty(3, 3)),
        lambda i, lib: i.orthogonal_(lib.empty(3)),
    ]
    for case in cases:
        with pytest.raises(ValueError) as ee:
            case(nn.init, ember)
        with pytest.raises(ValueError) as et:
            case(torch.nn.init, torch)
        assert str(ee.value) == str(et.value)
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        nn.init.kaiming_uniform_(ember.empty(0, 3))


def test_meta_tensors_are_left_alone():
    t = ember.empty(4, 4, device="meta")
    for fn in (nn.init.normal_, nn.init.trunc_normal_, nn.init.orthogonal_,
               nn.init.xavier_uniform_):
        assert fn(t) is t


def test_orthogonal_refuses_complex_after_drawing_like_torch():
    # torch draws the normal matrix, then its phase fix takes sign() of R's diagonal, which
    # refuses complex numbers: the same error, and the generator advanced by the same draw
    msgs, after = [], []
    for lib in (ember, torch):
        lib.manual_seed(3)
        with pytest.raises(NotImplementedError) as info:
            lib.nn.init.orthogonal_(lib.empty(3, 4, dtype=lib.complex64))
        msgs.append(str(info.value))
        after.append(lib.randn(4).tolist())
    assert msgs[0] == msgs[1] and "torch.sgn" in msgs[0]
    assert after[0] == after[1]
