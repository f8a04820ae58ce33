"""fused_moving_avg_obs_fake_quant against torch: the running min / max, the scale and zero
point it chooses (in place), the fake-quantised output, its gradient and the errors."""

import numpy as np
import pytest
import torch

import ember

from helpers import raised

INF = float("inf")


def _state(lib, n=1, zp_dtype=None):
    if n == 0:
        return [lib.tensor([]), lib.tensor([]), lib.tensor([]), lib.tensor([], dtype=lib.int32)]
    return [lib.full((n,), INF), lib.full((n,), -INF), lib.ones(n),
            lib.zeros(n, dtype=zp_dtype or lib.int32)]


def assert_bits(e, t):
    # exact: the running stats are float32 steps in torch's order, the parameters are
    # PyTorch's double/float arithmetic replayed, and fake quantisation is exact
    a, b = e.detach().double().numpy(), t.detach().double().numpy()
    assert a.shape == b.shape
    # (the sign of a NaN is not compared: it is no number's sign)
    same_sign = (np.signbit(a) == np.signbit(b)) | np.isnan(a)
    assert np.array_equal(a, b, equal_nan=True) and same_sign.all()


def _rows(seed, n=3000):
    """Row ranges of every kind: mixed signs, one-signed, tiny (the 6.1e-5 floor), zero,
    huge, and equal ends."""
    rng = np.random.default_rng(seed)
    centre = rng.standard_normal(n) * 10.0 ** rng.integers(-7, 4, n)
    width = np.abs(rng.standard_normal(n)) * 10.0 ** rng.integers(-8, 3, n)
    x = np.stack([centre - width, centre + width * rng.uniform(0, 2, n), centre], 1)
    x[:20] = 0.0
    x[20:40] = x[20:40, :1]
    return x.astype(np.float32)


@pytest.mark.parametrize("symmetric", [False, True])
@pytest.mark.parametrize("qmin,qmax", [(0, 255), (-128, 127), (-8, 7), (0, 15), (-1, 0)])
def test_per_row_qparams_like_torch(symmetric, qmin, qmax):
    x = _rows(abs(qmin) + 7 * qmax + symmetric)
    got, want = _state(ember, 0), _state(torch, 0)
    errors = []
    for lib, st in ((ember, got), (torch, want)):
        try:  # (a NaN range gives a zero point out of range, which fake quantisation refuses)
            st.append(lib.fused_moving_avg_obs_fake_quant(
                lib.tensor(x), lib.tensor([1]), lib.tensor([1]), *st, 0.01, qmin, qmax, 0, True,
                symmetric))
        except RuntimeError as e:
            errors.append(str(e))
    assert len(errors) in (0, 2) and len(set(errors)) < 2
    for a, b in zip(got, want):
        assert_bits(a, b)


@pytest.mark.parametrize("symmetric", [False, True])
def test_per_tensor_moving_average_like_torch(symmetric):
    rng = np.random.default_rng(1)
    got, want = _state(ember), _state(torch)
    for step in range(12):
        x = (rng.standard_normal((8, 5)) * (1 + step) + step * 0.3).astype(np.float32)
        observe, fq = int(step % 5 != 3), int(step % 4 != 2)
        outs = []
        for lib, st in ((ember, got), (torch, want)):
            xt = lib.tensor(x, requires_grad=True)
            y = lib.fused_moving_avg_obs_fake_quant(
                xt, lib.tensor([observe]), lib.tensor([fq]), *st, 0.037, -128, 127, 0, False,
                symmetric)
            (y * lib.arange(5.0)).sum().backward()
            outs.append((y, xt.grad, y.grad_fn.name() if lib is torch else
                         type(y.grad_fn).__name__))
        for a, b in zip(got, want):
            assert_bits(a, b)
        assert_bits(outs[0][0], outs[1][0])
        assert_bits(outs[0][1], outs[1][1])
        assert outs[0][2] == outs[1][2]


def test_per_row_other_axis_layouts_like_torch():
    x = np.random.default_rng(2).standard_normal((3, 4, 5)).astype(np.float32)
    got, want = _state(ember, 0), _state(torch, 0)
    for lib, st in ((ember, got), (torch, want)):
        for _ in range(3):
            y = lib.fused_moving_avg_obs_fake_quant(
                lib.tensor(x), lib.tensor([1]), lib.tensor([1]), *st, 0.2, -8, 7, 0, True)
        st.append(y)
    for a, b in zip(got, want):
        assert_bits(a, b)


def test_edge_ranges_like_torch():
    # a constant zero input (scale 0 -> 0.1), NaN, the first call with observing off
    # (running min/max still +-inf), and quant_min == quant_max
    cases = [([0.0, 0.0], 1, 0, 255), ([np.nan, 1.0], 1, 0, 255), ([1.0, 2.0], 0, 0, 255),
             ([-1e-4, 2e-5], 1, 0, 255), ([1e-4, 2e-4], 1, -128, 127), ([-1.0, 3.0], 1, 5, 5)]
    for x, observe, qmin, qmax in cases:
        got, want = _state(ember), _state(torch)
        for lib, st in ((ember, got), (torch, want)):
            st.append(lib.fused_moving_avg_obs_fake_quant(
                lib.tensor(x), lib.tensor([observe]), lib.tensor([1]), *st, 0.01, qmin, qmax,
                0))
        for a, b in zip(got, want):
            assert_bits(a, b)


def test_empty_input_is_copied_untouched():
    st = [ember.tensor([-1.0]), ember.tensor([2.0]), ember.tensor([1.0]),
          ember.tensor([0], dtype=ember.int32)]
    out = ember.fused_moving_avg_obs_fake_quant(ember.empty(0, 3), ember.tensor([1]),
                                                ember.tensor([1]), *st, 0.01, 0, 255, 0, True)
    assert tuple(out.shape) == (0, 3)
    assert [t.tolist() for t in st] == [[-1.0], [2.0], [1.0], [0]]


def _errors(lib):
    x = lib.ones(4, 5)
    on = lib.tensor([1])

    def call(*st, x=x, qmin=0, qmax=255, axis=0, per_row=False, on=on):
        return lambda: lib.fused_moving_avg_obs_fake_quant(x, on, lib.tensor([1]), *st, 0.01,
                                                           qmin, qmax, axis, per_row)

    return [
        call(*_state(lib), axis=2),
        call(*_state(lib, 0), axis=1, per_row=True),
        call(*_state(lib), qmin=255, qmax=0),
        call(*_state(lib), x=x.double()),
        call(lib.tensor([INF], dtype=lib.float64), *_state(lib)[1:]),
        call(*_state(lib), on=1),
        call(*_state(lib, 0), x=lib.ones(3), per_row=True),
        call(*_state(lib, 3), per_row=True),
    ]


@pytest.mark.parametrize("i", range(len(_errors(torch))))
def test_errors_like_torch(i):
    want = raised(_errors(torch)[i])
    assert want is not None and raised(_errors(ember)[i]) == want
