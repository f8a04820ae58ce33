"""The rejection samplers (gamma, Dirichlet, Poisson, binomial) on large batches: they read
the stream drawn ahead and move the generator on by exactly what they used, so samples
and the generator's state after (its cached normal included) equal PyTorch's bit for bit.
Also the concentrations Marsaglia-Tsang cannot use (NaN, negative) give PyTorch's tiny,
and torch._standard_gamma / torch._sample_dirichlet with their dtype errors."""

import warnings

import numpy as np
import pytest
import torch

import ember

NAN, INF = float("nan"), float("inf")


def _same_state() -> bool:
    return torch.get_rng_state().numpy().tobytes() == ember.get_rng_state().numpy().tobytes()


def _run(fn_torch, fn_ember, seed: int, cached_normal: bool):
    """Both libraries from the same seed (optionally with a cached double normal pending);
    the outputs, then a check that the streams continue alike."""
    torch.manual_seed(seed)
    ember.manual_seed(seed)
    if cached_normal:  # a serial randn of one element leaves the sine half cached
        torch.randn(1, dtype=torch.float64)
        ember.randn(1, dtype=ember.float64)
    t, e = fn_torch(), fn_ember()
    assert _same_state()
    assert np.array_equal(torch.randn(3, dtype=torch.float64).numpy(),
                          ember.randn(3, dtype=ember.float64).numpy())
    return t.detach().numpy(), e.detach().numpy()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("cached_normal", [False, True])
def test_standard_gamma_large_batch_bit_for_bit(dtype, cached_normal):
    conc = np.tile([0.05, 0.5, 1.0, 4.0, 0.0, 150.0], 2000)
    t, e = _run(lambda: torch._standard_gamma(torch.tensor(conc, dtype=getattr(torch, dtype))),
                lambda: ember._standard_gamma(ember.tensor(conc, dtype=getattr(ember, dtype))),
                7, cached_normal)
    assert np.array_equal(t, e)


def test_gamma_distribution_sample_bit_for_bit():
    mk = [lambda m: m.distributions.Gamma(m.tensor([0.5, 4.0]), m.tensor([2.0, 0.5]))]
    t, e = _run(lambda: mk[0](torch).sample((5000,)), lambda: mk[0](ember).sample((5000,)),
                0, False)
    assert np.array_equal(t, e)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gamma_unusable_concentrations_give_tiny(dtype):
    # torch's `do ... while (y <= 0)` lets a NaN through, and max(tiny, NaN) is tiny
    conc = [-0.5, -1.0, -3.0, INF, NAN, 2.0, -2.0 / 3.0, 1e-40]
    t, e = _run(lambda: torch._standard_gamma(torch.tensor(conc, dtype=getattr(torch, dtype))),
                lambda: ember._standard_gamma(ember.tensor(conc, dtype=getattr(ember, dtype))),
                3, False)
    assert np.array_equal(t, e, equal_nan=True)
    assert e[1] == np.finfo(dtype).tiny and e[3] == np.inf


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sample_dirichlet_large_batch(dtype):
    conc = np.tile([[0.3, 1.0, 5.0]], (3000, 1))
    t, e = _run(lambda: torch._sample_dirichlet(torch.tensor(conc, dtype=getattr(torch, dtype))),
                lambda: ember._sample_dirichlet(ember.tensor(conc, dtype=getattr(ember, dtype))),
                5, True)
    # the gammas are PyTorch's bit for bit; the normalising sum over the last dim may add
    # in another order than PyTorch's vectorised reduction (an ulp of the total)
    np.testing.assert_allclose(e, t, rtol=4 * np.finfo(dtype).eps, atol=0)


def test_sample_dirichlet_infinite_gamma_gives_tiny():
    conc = [[-0.5, -1.0, INF, 2.0]]
    t, e = _run(lambda: torch._sample_dirichlet(torch.tensor(conc)),
                lambda: ember._sample_dirichlet(ember.tensor(conc)), 3, False)
    assert np.array_equal(t, e)  # inf / inf is NaN, clamped to tiny


def test_generator_argument_and_gradient():
    gt, ge = torch.Generator().manual_seed(1), ember.Generator().manual_seed(1)
    assert np.array_equal(torch._standard_gamma(torch.tensor([1.0, 2.0]), generator=gt).numpy(),
                          ember._standard_gamma(ember.tensor([1.0, 2.0]), generator=ge).numpy())
    assert np.array_equal(torch._sample_dirichlet(torch.tensor([1.0, 2.0]), generator=gt).numpy(),
                          ember._sample_dirichlet(ember.tensor([1.0, 2.0]), generator=ge).numpy())
    torch.manual_seed(2)
    ember.manual_seed(2)
    at, ae = torch.tensor([0.7, 3.0], requires_grad=True), ember.tensor([0.7, 3.0],
                                                                       requires_grad=True)
    torch._standard_gamma(at).sum().backward()
    ember._standard_gamma(ae).sum().backward()
    # the implicit gradient is PyTorch's formula, evaluated in NumPy (a last-bit difference)
    np.testing.assert_allclose(ae.grad.numpy(), at.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("fn", ["_standard_gamma", "_sample_dirichlet"])
@pytest.mark.parametrize("dtype", ["int64", "float16", "bfloat16"])
def test_non_float_dtypes_refused(fn, dtype):
    with pytest.raises(NotImplementedError) as te:
        getattr(torch, fn)(torch.tensor([1, 2]).to(getattr(torch, dtype)))
    with pytest.raises(NotImplementedError) as ee:
        getattr(ember, fn)(ember.tensor([1, 2]).to(getattr(ember, dtype)))
    assert str(ee.value) == str(te.value)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_poisson_large_batch_bit_for_bit(dtype):
    rates = np.tile([0.0, 0.1, 4.0, 9.99, 10.0, 40.0, 1e4], 1500)
    t, e = _run(lambda: torch.poisson(torch.tensor(rates, dtype=getattr(torch, dtype))),
                lambda: ember.poisson(ember.tensor(rates, dtype=getattr(ember, dtype))),
                11, True)
    assert np.array_equal(t, e)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binomial_large_batch_bit_for_bit(dtype):
    count = np.tile([5.0, 100.0, 1000.0, 0.0, 3.0, 1e6], 1500)
    prob = np.tile([0.3, 0.4, 0.9, 0.5, 1.0, 0.999], 1500)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t, e = _run(lambda: torch.binomial(torch.tensor(count, dtype=getattr(torch, dtype)),
                                           torch.tensor(prob, dtype=getattr(torch, dtype))),
                    lambda: ember.binomial(ember.tensor(count, dtype=getattr(ember, dtype)),
                                           ember.tensor(prob, dtype=getattr(ember, dtype))),
                    13, True)
    assert np.array_equal(t, e)


def test_state_put_back_through_numpy_where_struct_unreadable(monkeypatch):
    # the draw-ahead snapshot falls back on NumPy's state tuple: the same stream
    from ember.ops import _rng_kernels

    monkeypatch.setattr(_rng_kernels, "_struct_readable", lambda: False)
    rates = np.tile([0.5, 4.0, 25.0], 400)
    t, e = _run(lambda: torch.poisson(torch.tensor(rates)),
                lambda: ember.poisson(ember.tensor(rates)), 17, False)
    assert np.array_equal(t, e)


@pytest.mark.parametrize("cached_normal", [False, True])
def test_gamma_tries_resume_where_the_stream_drawn_ahead_ran_out(monkeypatch, cached_normal):
    # the native loop (csrc/rejection.c) undoes an element whose tries outrun the doubles
    # drawn ahead and resumes after more are drawn: 64 ahead at first makes it do so often
    from ember.distributions import gamma as gamma_module

    class Short(gamma_module._Ahead):
        def __init__(self, g, guess, arrays=False):
            super().__init__(g, 64, arrays)

    monkeypatch.setattr(gamma_module, "_Ahead", Short)
    conc = np.tile([0.05, 0.5, 1.0, 4.0, 0.0, 150.0, 0.3], 300)
    t, e = _run(lambda: torch._standard_gamma(torch.tensor(conc)),
                lambda: ember._standard_gamma(ember.tensor(conc)), 5, cached_normal)
    np.testing.assert_array_equal(e, t)
