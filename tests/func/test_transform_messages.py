"""torch.func's refusals in torch 2.13's types and words: vmap's in_dims / out_dims /
size checks (with its `vmap(<fn>, in_dims=..., ...)(<inputs>):` prefix), reading values
inside vmap, randomness='error', and grad / vjp / jacrev / jacfwd / jvp argument checks."""

import collections
import functools

import pytest
import torch

import ember
from ember import _names


def f2(x, y):
    return x + y


Pair = collections.namedtuple("Pair", "a b")

CASES = {
    "vmap item": lambda m, F: F.vmap(lambda x: x.item())(m.ones(3)),
    "vmap float": lambda m, F: F.vmap(lambda x: float(x))(m.ones(3)),
    "vmap int": lambda m, F: F.vmap(lambda x: int(x))(m.ones(3)),
    "vmap complex": lambda m, F: F.vmap(lambda x: complex(x))(m.ones(3)),
    "vmap format": lambda m, F: F.vmap(lambda x: f"{x:.2f}")(m.ones(3)),
    "vmap bool": lambda m, F: F.vmap(lambda x: 1 if x > 0 else 0)(m.ones(3)),
    "vmap tolist": lambda m, F: F.vmap(lambda x: x.tolist())(m.ones(3)),
    "vmap numpy": lambda m, F: F.vmap(lambda x: x.numpy())(m.ones(3)),
    "vmap bad in_dim": lambda m, F: F.vmap(m.sin, in_dims=1)(m.ones(3)),
    "vmap bad in_dim neg": lambda m, F: F.vmap(m.sin, in_dims=-2)(m.ones(3)),
    "vmap scalar": lambda m, F: F.vmap(m.sin)(m.tensor(1.0)),
    "vmap scalar lambda": lambda m, F: F.vmap(lambda x: x * 2)(m.tensor(1.0)),
    "vmap scalar f2": lambda m, F: F.vmap(f2)(m.tensor(1.0), m.ones(3)),
    "vmap partial": lambda m, F: F.vmap(functools.partial(f2, y=1.0))(m.tensor(1.0)),
    "vmap size mismatch": lambda m, F: F.vmap(m.add)(m.ones(3), m.ones(4)),
    "vmap size mismatch3": lambda m, F: F.vmap(lambda a, b, c: a)(m.ones(3), m.ones(4),
                                                                  m.ones(5)),
    "vmap in_dims len": lambda m, F: F.vmap(f2, in_dims=(0,))(m.ones(3), m.ones(3)),
    "vmap in_dims nested": lambda m, F: F.vmap(f2, in_dims=((0, 0, 0), 0))(
        (m.ones(3), {"a": m.ones(3)}), m.ones(3)),
    "vmap in_dims dict": lambda m, F: F.vmap(lambda d: d["x"], in_dims=({"x": 0, "y": 1},))(
        {"x": m.ones(3)}),
    "vmap in_dims namedtuple": lambda m, F: F.vmap(lambda p: p.a, in_dims=((0, 0, 0),))(
        Pair(m.ones(3), m.ones(3))),
    "vmap in_dims type": lambda m, F: F.vmap(f2, in_dims="a")(m.ones(3), m.ones(3)),
    "vmap in_dims None": lambda m, F: F.vmap(f2, in_dims=None)(m.ones(3), m.ones(3)),
    "vmap in_dims float": lambda m, F: F.vmap(f2, in_dims=(0, 1.5))(m.ones(3), m.ones(3)),
    "vmap non tensor": lambda m, F: F.vmap(f2, in_dims=(0, 0))(m.ones(3), 2.0),
    "vmap no inputs": lambda m, F: F.vmap(lambda: m.ones(3))(),
    "vmap all None": lambda m, F: F.vmap(f2, in_dims=(None, None))(m.ones(3), m.ones(3)),
    "vmap out_dims bad": lambda m, F: F.vmap(m.sin, out_dims=2)(m.ones(3)),
    "vmap out_dims tuple": lambda m, F: F.vmap(m.sin, out_dims=(0, 1))(m.ones(3)),
    "vmap out_dims float": lambda m, F: F.vmap(m.sin, out_dims=1.5)(m.ones(3)),
    "vmap out_dims None batched": lambda m, F: F.vmap(m.sin, out_dims=None)(m.ones(3)),
    "vmap returns int": lambda m, F: F.vmap(lambda x: 2)(m.ones(3)),
    "vmap random": lambda m, F: F.vmap(lambda t: t + m.rand(()), randomness="error")(
        m.ones(3)),
    "vmap randn": lambda m, F: F.vmap(lambda t: t + m.randn(3))(m.ones(3)),
    "vmap bad randomness": lambda m, F: F.vmap(m.sin, randomness="foo")(m.ones(3)),
    "vmap chunk 0": lambda m, F: F.vmap(m.sin, chunk_size=0)(m.ones(3)),
    "grad ints": lambda m, F: F.grad(lambda x: x.sum())(m.tensor([1, 2])),
    "grad nonscalar": lambda m, F: F.grad(lambda x: x * 2)(m.ones(3)),
    "grad non tensor out": lambda m, F: F.grad(lambda x: 2.0)(m.ones(3)),
    "grad argnums dup": lambda m, F: F.grad(f2, argnums=(0, 0))(m.ones(3), m.ones(3)),
    "grad argnums dup wrapped": lambda m, F: F.grad(f2, argnums=(1, -1))(m.ones(3),
                                                                         m.ones(3)),
    "grad argnums oob": lambda m, F: F.grad(f2, argnums=2)(m.ones(3), m.ones(3)),
    "grad argnums str": lambda m, F: F.grad(f2, argnums="a")(m.ones(3), m.ones(3)),
    "grad argnums empty": lambda m, F: F.grad(f2, argnums=())(m.ones(3), m.ones(3)),
    "grad argnums float": lambda m, F: F.grad(f2, argnums=(0, 1.0))(m.ones(3), m.ones(3)),
    "grad non tensor arg": lambda m, F: F.grad(lambda x: x)(2.0),
    "grad has_aux not pair": lambda m, F: F.grad(lambda x: x.sum(), has_aux=True)(m.ones(3)),
    "grad aux str": lambda m, F: F.grad(lambda x: (x.sum(), "a"), has_aux=True)(m.ones(3)),
    "grad aux None": lambda m, F: F.grad(lambda x: (x.sum(), [x, None]), has_aux=True)(
        m.ones(3)),
    "grad_and_value ints": lambda m, F: F.grad_and_value(lambda x: x.sum())(m.tensor([1])),
    "jacrev dup": lambda m, F: F.jacrev(f2, argnums=(0, 0))(m.ones(3), m.ones(3)),
    "jacrev oob": lambda m, F: F.jacrev(f2, argnums=3)(m.ones(3), m.ones(3)),
    "jacrev ints": lambda m, F: F.jacrev(lambda x: x)(m.tensor([1, 2])),
    "jacrev non tensor out": lambda m, F: F.jacrev(lambda x: 2.0)(m.ones(3)),
    "jacrev has_aux": lambda m, F: F.jacrev(lambda x: x, has_aux=True)(m.ones(3)),
    "jacfwd dup": lambda m, F: F.jacfwd(f2, argnums=(0, 0))(m.ones(3), m.ones(3)),
    "jacfwd ints": lambda m, F: F.jacfwd(lambda x: x)(m.tensor([1, 2])),
    "jacfwd has_aux": lambda m, F: F.jacfwd(lambda x: x, has_aux=True)(m.ones(3)),
    "hessian ints": lambda m, F: F.hessian(lambda x: x.sum())(m.tensor([1, 2])),
    "vjp non tensor": lambda m, F: F.vjp(lambda x: x, 2.0),
    "vjp ints": lambda m, F: F.vjp(lambda x: x, m.tensor([1, 2])),
    "vjp has_aux": lambda m, F: F.vjp(lambda x: x, m.ones(3), has_aux=True),
    "vjp cotangent shape": lambda m, F: F.vjp(m.sin, m.ones(3))[1](m.ones(4)),
    "jvp size": lambda m, F: F.jvp(m.sin, (m.ones(3),), (m.ones(4),)),
    "jvp not tuple": lambda m, F: F.jvp(m.sin, m.ones(3), m.ones(3)),
    "jvp structure": lambda m, F: F.jvp(m.sin, (m.ones(3),), (m.ones(3), m.ones(3))),
    "jvp ints": lambda m, F: F.jvp(m.sin, (m.tensor([1, 2]),), (m.tensor([1, 2]),)),
    "jvp int tangent": lambda m, F: F.jvp(m.sin, (m.ones(2),), (m.tensor([1, 2]),)),
    "jvp non tensor primal": lambda m, F: F.jvp(lambda x: x, (2.0,), (1.0,)),
    "jvp non tensor out": lambda m, F: F.jvp(lambda x: 2.0, (m.ones(2),), (m.ones(2),)),
    "jvp has_aux": lambda m, F: F.jvp(m.sin, (m.ones(2),), (m.ones(2),), has_aux=True),
    # jacrev / jacfwd take real functions only: every argument (not only argnums), then
    # every output, is checked; grad seeds backward implicitly, which a complex value refuses
    "jacrev complex in": lambda m, F: F.jacrev(m.sin)(m.ones(2, dtype=m.complex64)),
    "jacrev complex other arg": lambda m, F: F.jacrev(lambda x, z: x * z.abs())(
        m.ones(2), m.ones(2, dtype=m.complex128)),
    "jacrev complex out": lambda m, F: F.jacrev(lambda t: m.exp(1j * t))(m.ones(2)),
    "jacrev complex second out": lambda m, F: F.jacrev(lambda t: (t, t * 1j))(m.ones(2)),
    "jacfwd complex in": lambda m, F: F.jacfwd(m.sin)(m.ones(2, dtype=m.complex64)),
    "jacfwd complex out": lambda m, F: F.jacfwd(lambda t: m.polar(t, t))(m.ones(2)),
    "hessian complex in": lambda m, F: F.hessian(lambda z: z.abs().sum())(
        m.ones(2, dtype=m.complex128)),
    "grad complex out": lambda m, F: F.grad(lambda z: (z * z).sum())(
        m.ones(2, dtype=m.complex128)),
    "grad_and_value complex out": lambda m, F: F.grad_and_value(lambda t: m.exp(1j * t).sum())(
        m.ones(2)),
}


def outcome(m, case):
    try:
        CASES[case](m, m.func)
    except Exception as e:  # noqa: BLE001 - the refusal is what is compared
        return type(e).__name__, str(e).split(" (Triggered")[0]
    return None


@pytest.mark.parametrize("case", list(CASES))
def test_refusal_as_torch(case):
    expected = outcome(torch, case)
    assert expected is not None
    kind, message = expected
    assert outcome(ember, case) == (kind, message.replace("torch.", f"{_names.prefix}."))


def test_complex_intermediates_of_real_functions_still_differentiate():
    # the refusals concern complex inputs and outputs only: a real function of real angles
    # through complex gates has its Jacobian and Hessian, as in torch
    def energy(m, t):
        phase = m.exp(1j * t)
        return (phase * phase.conj().roll(1)).real.sum()

    for fn in ("jacrev", "jacfwd", "hessian", "grad"):
        te = getattr(ember.func, fn)(lambda t: energy(ember, t))(ember.tensor([0.3, -1.1, 0.7],
                                                                 dtype=ember.float64))
        tt = getattr(torch.func, fn)(lambda t: energy(torch, t))(torch.tensor([0.3, -1.1, 0.7],
                                                                 dtype=torch.float64))
        # (sums of a few products of sines and cosines: within a few ulps)
        assert te.dtype == ember.float64 and tuple(te.shape) == tuple(tt.shape)
        assert te.reshape(-1).tolist() == pytest.approx(tt.reshape(-1).tolist(), rel=1e-13,
                                                        abs=1e-15)
