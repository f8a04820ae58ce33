"""Complex parameters in every optimizer: PyTorch updates a complex parameter as the real
tensor of its (re, im) pairs, so the two parts are independent real parameters (Adam's
second moment holds re(g)^2 and im(g)^2, not |g|^2; amsgrad takes the maximum per part).
Each case runs several steps in ember and torch from the same values; the trajectories
agree within the tolerances of test_param_kinds.py (same reasons), and the state keeps
complex tensors of the parameter's dtype. A fused update refuses a complex parameter with
PyTorch's message."""

import numpy as np
import pytest
import torch

import ember
from optim.test_param_kinds import CASES, EPS, STEPS, ULPS, _ids

DTYPES = {"complex64": "float32", "complex128": "float64"}


def _values(seed: int, shape=(2, 3)):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1.5, 1.5, shape) + 1j * rng.uniform(-1.5, 1.5, shape)


def _grad(lib, p):
    """A gradient that is not a complex-analytic function of p, so treating re and im
    together (|g|^2) or apart (re^2, im^2) gives different updates."""
    a = p.detach().resolve_conj().numpy().astype(np.complex128)
    g = 2 * (a.real - 1) + 0.5 * np.sin(3 * a.imag) + 1j * (np.tanh(2 * a.imag) - a.real / 2)
    return lib.tensor(g).to(p.dtype)


def _trajectory(lib, name, kw, dtype, steps=STEPS):
    p = lib.tensor(_values(0)).to(getattr(lib, dtype)).requires_grad_(True)
    q = lib.tensor(np.random.default_rng(1).uniform(-1.5, 1.5, (3,))).to(
        getattr(lib, DTYPES[dtype])).requires_grad_(True)
    opt = getattr(lib.optim, name)([p, q], **kw)
    out = []
    for _ in range(steps):
        p.grad = _grad(lib, p)
        q.grad = 2 * q.detach() - 1
        opt.step()
        out.append(p.detach().resolve_conj().numpy().astype(np.complex128).copy())
    return out, opt


# (Adafactor refuses complex parameters, as PyTorch's: tests/optim/test_adafactor.py)
COMPLEX_CASES = [c for c in CASES if not c[1].get("fused") and c[0] != "Adafactor"]


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("case", COMPLEX_CASES, ids=[_ids(c) for c in COMPLEX_CASES])
def test_complex_trajectory_matches_torch(case, dtype):
    name, kw = case
    te, oe = _trajectory(ember, name, kw, dtype)
    tt, ot = _trajectory(torch, name, kw, dtype)
    real = DTYPES[dtype]
    scale = max(np.abs(np.concatenate([s.real, s.imag])).max() for s in tt)
    for k, (e, t) in enumerate(zip(te, tt)):
        for part in ("real", "imag"):
            np.testing.assert_allclose(getattr(e, part), getattr(t, part), rtol=0,
                                       atol=ULPS[real] * EPS[real] * scale,
                                       err_msg=f"{part} part after step {k + 1}")
    se, st = oe.state_dict()["state"].get(0, {}), ot.state_dict()["state"].get(0, {})
    assert list(se) == list(st)
    for key in st:
        assert isinstance(se[key], ember.Tensor) == isinstance(st[key], torch.Tensor), key
        if isinstance(st[key], torch.Tensor):
            assert _name(se[key].dtype) == _name(st[key].dtype), key
            assert tuple(se[key].shape) == tuple(st[key].shape), key


def _name(dtype) -> str:
    return str(dtype).split(".")[-1]


def test_adam_second_moment_is_per_part():
    # one step from zero state: exp_avg_sq = (1 - beta2) * (re^2 + i im^2), worked by hand
    p = ember.zeros(1, dtype=ember.complex128, requires_grad=True)
    opt = ember.optim.Adam([p], lr=0.1, amsgrad=True)
    p.grad = ember.tensor([3.0 - 4.0j], dtype=ember.complex128)
    opt.step()
    v = opt.state[p]["exp_avg_sq"]
    assert v.dtype == ember.complex128
    assert v.tolist() == [pytest.approx(0.001 * 9 + 0.001 * 16j, rel=1e-15)]
    # bias-corrected first step moves each part by lr against the sign of its gradient
    assert p.detach().tolist() == [pytest.approx(-0.1 + 0.1j, rel=1e-6)]


@pytest.mark.parametrize("name", ["Adam", "AdamW", "SGD", "Adagrad"])
def test_fused_refuses_complex(name):
    msgs = []
    for lib in (ember, torch):
        p = lib.zeros(2, dtype=lib.complex64, requires_grad=True)
        opt = getattr(lib.optim, name)([p], lr=0.1, fused=True)  # (refused at the first step)
        p.grad = lib.ones_like(p)
        with pytest.raises(RuntimeError) as info:
            opt.step()
        msgs.append(str(info.value).replace("torch.", "ember."))
        assert p.detach().tolist() == [0j, 0j]
    assert msgs[0] == msgs[1]


def _lbfgs_run(lib, line_search_fn):
    """Two L-BFGS steps on a non-holomorphic loss of a complex parameter beside a real one."""
    z = lib.tensor(_values(2, (3,))).requires_grad_(True)
    r = lib.tensor([0.5, -1.0], dtype=lib.float64, requires_grad=True)
    target = lib.tensor([1 + 2j, -1j, 0.5])
    opt = lib.optim.LBFGS([z, r], lr=0.5, max_iter=4, line_search_fn=line_search_fn)

    def closure():
        opt.zero_grad()
        loss = (z - target).abs().pow(2).sum() + 0.1 * (z.real ** 4).sum() \
            + ((r - z[:2].imag) ** 2).sum()
        loss.backward()
        return loss

    for _ in range(2):  # (short of convergence, where iterates are set by tolerances)
        loss = opt.step(closure)
    return (float(loss.detach()), z.detach().resolve_conj().numpy().copy(),
            r.detach().numpy().copy())


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_flattens_a_complex_parameter_into_its_real_pairs(line_search_fn):
    (le, ze, re_), (lt, zt, rt) = [_lbfgs_run(lib, line_search_fn) for lib in (ember, torch)]
    # (float64 sums of a few terms, then 8 iterations: agree to many digits, not bits)
    assert le == pytest.approx(lt, rel=1e-10, abs=1e-12)
    np.testing.assert_allclose(ze, zt, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(re_, rt, rtol=1e-8, atol=1e-10)
