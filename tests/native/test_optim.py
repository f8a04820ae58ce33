"""csrc/optim.c against the NumPy update kernels of optim/sgd.py, optim/adam.py and
optim/rmsprop.py (Adadelta, RMSprop, Adagrad): the
same operations in the same order, each rounded once, so bit for bit equal (specials,
sizes that split over threads, every flag), and whole trajectories the same either way."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember import native
from ember.optim.adam import adam_step_p
from ember.optim.optimizer import native_update
from ember.optim.rmsprop import adadelta_step_p, rms_step_p
from ember.optim.sgd import sgd_step_p
from native._differential import assert_bits, threads, with_specials

pytestmark = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")
DTYPES = [np.float32, np.float64]
SIZES = [1, 15, 17, 1001, 50_001]


def _arrays(n, dtype, k, seed=0):
    rng = np.random.default_rng(seed)
    out = [rng.standard_normal(n).astype(dtype) for _ in range(k)]
    out[1] = with_specials(out[1])  # NaN, inf, -inf, -0.0 in the gradient
    return out


@pytest.fixture(autouse=True)
def _small_arrays_native_too(monkeypatch):
    """Eager updates send tensors under `native_update["min_size"]` elements to NumPy; here
    the C kernels take every size."""
    monkeypatch.setitem(native_update, "min_size", 0)


SGD_FLAGS = [dict(momentum=0.9, dampening=0.0, weight_decay=0.01, nesterov=True),
             dict(momentum=0.9, dampening=0.1, weight_decay=0.0, nesterov=False),
             dict(momentum=0.0, dampening=0.0, weight_decay=0.05, nesterov=False)]


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("maximize", [False, True])
@pytest.mark.parametrize("flags", SGD_FLAGS, ids=["nesterov-wd", "dampening", "plain-wd"])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_sgd_step_is_numpys_bit_for_bit(dtype, n, flags, maximize, n_threads):
    p0, g, b0 = _arrays(n, dtype, 3)
    numpy_k, native_k = native.twins(sgd_step_p)
    kw = dict(lr=0.1, maximize=maximize, **flags)
    buf = b0 if flags["momentum"] else None
    p1, b1 = p0.copy(), None if buf is None else buf.copy()
    numpy_k(p1, g, b1, **kw)
    p2, b2 = p0.copy(), None if buf is None else buf.copy()
    with threads(n_threads):
        assert native_k(native.library("optim"), p2, g, b2, **kw) is None
    assert_bits(p2, p1)
    if buf is not None:
        assert_bits(b2, b1)


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("amsgrad", [False, True])
@pytest.mark.parametrize("decoupled, wd, maximize, beta1",
                         [(True, 0.01, False, 0.9), (False, 0.1, True, 0.3),
                          (False, 0.0, False, 0.5)])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_adam_step_is_numpys_bit_for_bit(dtype, n, decoupled, wd, maximize, beta1, amsgrad,
                                         n_threads):
    p0, g, m0, v0, x0 = _arrays(n, dtype, 5)
    v0, x0 = np.abs(v0), np.abs(x0)
    numpy_k, native_k = native.twins(adam_step_p)
    kw = dict(lr=1e-3, beta1=beta1, beta2=0.999, eps=1e-8, weight_decay=wd,
              decoupled=decoupled, maximize=maximize)
    results = []
    for run in (lambda *a: numpy_k(*a, **kw),
                lambda *a: native_k(native.library("optim"), *a, **kw)):
        p, m, v, x, step = p0.copy(), m0.copy(), v0.copy(), x0.copy(), np.array(6.0, dtype)
        with threads(n_threads):
            run(p, g, m, v, x if amsgrad else None, step)
        results.append((p, m, v, x, step))
    for got, want in zip(results[1], results[0]):
        assert_bits(np.asarray(got), np.asarray(want))


def _both(prim, arrays, n_threads, **kw):
    """`prim`'s NumPy and native kernels on copies of `arrays` (None stays None): the
    arrays each leaves, NumPy's first."""
    numpy_k, native_k = native.twins(prim)
    results = []
    for run in (lambda *a: numpy_k(*a, **kw),
                lambda *a: native_k(native.library("optim"), *a, **kw)):
        copies = [None if a is None else a.copy() for a in arrays]
        with threads(n_threads):
            assert run(*copies) is None
        results.append([a for a in copies if a is not None])
    return results


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("wd, maximize, rho, lr", [(0.0, False, 0.9, 1.0), (0.01, True, 0.3, 0.5),
                                                   (0.1, False, 0.95, 1e-2)])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_adadelta_step_is_numpys_bit_for_bit(dtype, n, wd, maximize, rho, lr, n_threads):
    p, g, v, u = _arrays(n, dtype, 4)
    v, u = np.abs(v), np.abs(u)
    numpy_res, native_res = _both(adadelta_step_p, [p, g, v, u, np.ones(1, dtype)], n_threads,
                                  lr=lr, rho=rho, eps=1e-6, weight_decay=wd, maximize=maximize)
    for got, want in zip(native_res, numpy_res):
        assert_bits(got, want)


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("centered", [False, True])
@pytest.mark.parametrize("momentum", [0.0, 0.9])
@pytest.mark.parametrize("wd, maximize, alpha", [(0.0, False, 0.99), (0.01, True, 0.3),
                                                 (0.1, False, 0.6)])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_rmsprop_step_is_numpys_bit_for_bit(dtype, n, wd, maximize, alpha, momentum, centered,
                                            n_threads):
    # (alpha 0.3 and 0.6: the lerp of the centered average takes each of its two formulas)
    p, g, v, m, b = _arrays(n, dtype, 5)
    arrays = [p, g, np.abs(v) + 1, m if centered else None, b if momentum else None,
              np.zeros(1, dtype)]
    numpy_res, native_res = _both(rms_step_p, arrays, n_threads, lr=1e-2, alpha=alpha,
                                  lr_decay=0.0, eps=1e-8, weight_decay=wd, momentum=momentum,
                                  maximize=maximize)
    for got, want in zip(native_res, numpy_res):
        assert_bits(got, want)


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("wd, maximize, lr_decay, step",
                         [(0.0, False, 0.0, 0), (0.01, True, 1e-3, 7), (0.1, False, 0.5, 2)])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_adagrad_step_is_numpys_bit_for_bit(dtype, n, wd, maximize, lr_decay, step,
                                            n_threads):
    p, g, s = _arrays(n, dtype, 3)
    numpy_res, native_res = _both(rms_step_p, [p, g, np.abs(s), None, None,
                                               np.full(1, step, dtype)],
                                  n_threads, lr=0.1, alpha=None, lr_decay=lr_decay, eps=1e-10,
                                  weight_decay=wd, momentum=0.0, maximize=maximize)
    for got, want in zip(native_res, numpy_res):
        assert_bits(got, want)


def test_strided_and_mixed_arrays_are_left_to_numpy():
    p, g, b = (np.zeros(8, np.float32) for _ in range(3))
    _, native_k = native.twins(sgd_step_p)
    lib = native.library("optim")
    kw = dict(lr=0.1, momentum=0.9, dampening=0.0, weight_decay=0.0, nesterov=False,
              maximize=False)
    assert native_k(lib, p[::2], g[::2], b[::2], **kw) is NotImplemented
    assert native_k(lib, p, g.astype(np.float64), b, **kw) is NotImplemented


@pytest.mark.parametrize("make", [
    lambda ps: ember.optim.SGD(ps, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3),
    lambda ps: ember.optim.Adam(ps, lr=1e-2, amsgrad=True),
    lambda ps: ember.optim.AdamW(ps, lr=1e-2, weight_decay=0.1),
    lambda ps: ember.optim.Adadelta(ps, lr=1.0, weight_decay=1e-3),
    lambda ps: ember.optim.RMSprop(ps, lr=1e-2, centered=True, momentum=0.9),
    lambda ps: ember.optim.Adagrad(ps, lr=0.1, lr_decay=1e-2)],
    ids=["sgd", "adam", "adamw", "adadelta", "rmsprop", "adagrad"])
def test_trajectories_are_the_same_with_native_kernels_or_without(make):
    def run(mode):
        with native.use(mode):
            ember.manual_seed(0)
            model = ember.nn.Sequential(ember.nn.Linear(6, 16), ember.nn.Tanh(),
                                        ember.nn.Linear(16, 2))
            opt = make(model.parameters())
            x, y = ember.randn(32, 6), ember.randn(32, 2)
            for _ in range(15):
                opt.zero_grad()
                ember.nn.functional.mse_loss(model(x), y).backward()
                opt.step()
            return [p.detach().numpy().copy() for p in model.parameters()]

    for a, b in zip(run("native"), run("numpy")):
        assert_bits(a, b)
