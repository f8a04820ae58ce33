"""Muon: the bfloat16 Newton-Schulz orthogonalisation and the update as PyTorch's, step by
step, with its argument checks and refusals."""

import numpy as np
import pytest
import torch

import ember
from ember.optim.muon import _newton_schulz

CASES = [
    dict(lr=0.02),
    dict(lr=0.02, nesterov=False, momentum=0.9, weight_decay=0.0),
    dict(lr=0.01, adjust_lr_fn="match_rms_adamw", ns_steps=3),
    dict(lr=0.01, adjust_lr_fn="original", ns_coefficients=(2.0, -1.5, 0.5)),
]


def _run(lib, kwargs, steps=10):
    rng = np.random.default_rng(0)
    # a tall and a wide weight: the iteration runs on the wide orientation of each
    init = [rng.standard_normal(s).astype(np.float32) * 0.5 for s in [(6, 4), (6, 9)]]
    x = lib.tensor(rng.standard_normal((8, 4)).astype(np.float32))
    params = [lib.tensor(a, requires_grad=True) for a in init]
    opt = lib.optim.Muon(params, **kwargs)
    for _ in range(steps):
        opt.zero_grad()
        w1, w2 = params
        ((x @ w1.T).tanh() @ w2).square().mean().backward()
        opt.step()
    return params, opt


def test_newton_schulz_is_torch_bit_for_bit():
    # bfloat16 products of a few terms each, rounded once: exact on both sides
    rng = np.random.default_rng(1)
    for shape in [(6, 4), (3, 7), (5, 5)]:
        g = rng.standard_normal(shape).astype(np.float32)
        from torch.optim._muon import _zeropower_via_newtonschulz as reference

        want = reference(torch.tensor(g), (3.4445, -4.7750, 2.0315), 5, 1e-7)
        got = _newton_schulz(ember.tensor(g), (3.4445, -4.7750, 2.0315), 5, 1e-7)
        assert str(got.dtype) == "ember.bfloat16" and tuple(got.shape) == shape
        np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


@pytest.mark.parametrize("kwargs", CASES, ids=[str(c) for c in CASES])
def test_trajectory_matches_torch(kwargs):
    pe, oe = _run(ember, kwargs)
    pt, ot = _run(torch, kwargs)
    # the gradients' float32 products reduce in another order (an ulp), which can move a
    # bfloat16 rounding inside the iteration: one bfloat16 ulp of lr-sized updates
    for a, b in zip(pe, pt):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=0,
                                   atol=kwargs["lr"] * 2 ** -7)
    assert oe.state_dict()["param_groups"] == ot.state_dict()["param_groups"]
    assert [sorted(v) for v in oe.state_dict()["state"].values()] == \
        [sorted(v) for v in ot.state_dict()["state"].values()]


def test_defaults_and_repr_match_torch():
    assert repr(ember.optim.Muon([ember.zeros(2, 2, requires_grad=True)])) == \
        repr(torch.optim.Muon([torch.zeros(2, 2, requires_grad=True)]))


@pytest.mark.parametrize("kwargs", [dict(lr=-1.0), dict(momentum=-0.5),
                                    dict(weight_decay=-1.0), dict(adjust_lr_fn="bogus"),
                                    dict(shape=(3,)), dict(shape=(2, 2, 2))])
def test_bad_arguments_raise_torch_value_error(kwargs):
    shape = kwargs.pop("shape", (2, 2))

    def message(lib):
        with pytest.raises(ValueError) as e:
            lib.optim.Muon([lib.zeros(shape, requires_grad=True)], **kwargs)
        return str(e.value).replace("ember.Size", "torch.Size")

    assert message(ember) == message(torch)


def test_complex_sparse_and_long_iterations_refused_like_torch():
    def messages(lib):
        out = []
        p = lib.zeros(2, 2, dtype=lib.complex64, requires_grad=True)
        p.grad = lib.ones(2, 2, dtype=lib.complex64)
        emb = lib.nn.Embedding(4, 2, sparse=True)
        emb(lib.tensor([1, 2])).sum().backward()
        q = lib.zeros(2, 2, requires_grad=True)
        q.grad = lib.ones(2, 2)
        for opt, err in [(lib.optim.Muon([p]), RuntimeError),
                         (lib.optim.Muon(emb.parameters()), RuntimeError),
                         (lib.optim.Muon([q], ns_steps=100), ValueError)]:
            with pytest.raises(err) as e:
                opt.step()
            out.append(str(e.value))
        return out

    assert messages(ember) == messages(torch)
