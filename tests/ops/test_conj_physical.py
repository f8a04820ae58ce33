"""`conj_physical` / `conj_physical_` against torch: a new conjugate with its own node."""

from __future__ import annotations

import numpy as np

import ember

from helpers import assert_same, same_result


def test_conj_physical_of_complex_copies_and_differentiates():
    z = np.array([1 + 2j, 3 - 1j, -0.5j], dtype=np.complex64)

    def call(L):
        x = L.tensor(z, requires_grad=True)
        y = L.conj_physical(x)
        (y * L.tensor([1j, 2.0, -1.0])).real.sum().backward()
        return y, x.grad, type(y.grad_fn).__name__, y.is_conj()
    e, t = call(ember), call(__import__("torch"))
    assert_same(e[0], t[0])
    assert_same(e[1], t[1])
    assert e[2:] == t[2:]


def test_conj_physical_of_real_is_the_tensor_and_in_place_writes():
    import torch

    for L in (ember, torch):
        r = L.tensor([1.0, -2.0])
        assert L.conj_physical(r) is r and r.conj_physical_() is r
    same_result(lambda L: L.tensor([1 + 2j, -1j]).conj_physical_())
    same_result(lambda L: L.conj_physical(L.tensor([1.0, 2.0]), out=L.empty(2)))
    same_result(lambda L: L.conj_physical(L.tensor([1 - 1j]), out=L.empty(1, dtype=L.complex64)))
