"""A meta tensor beside a CPU one: a CPU 0-d tensor joins the meta computation, any other
is refused in TensorIterator's words, as in torch (_core/dispatch.py `device_of`)."""

import pytest
import torch

import ember

from helpers import same_message

JOINS = {
    "meta + cpu scalar": lambda L, m, c, s: m + s,
    "cpu scalar + meta": lambda L, m, c, s: s + m,
    "mul": lambda L, m, c, s: L.mul(m, s),
    "where": lambda L, m, c, s: L.where(s > 0, m, s),
    "meta scalar + cpu scalar": lambda L, m, c, s: L.tensor(1.0, device="meta") + s,
}
REFUSED = {
    "cpu + meta": lambda L, m, c, s: c + m,
    "meta * cpu": lambda L, m, c, s: m * c,
    "where": lambda L, m, c, s: L.where(c > 0, m, c),
    "cat": lambda L, m, c, s: L.cat([m, c]),
    "cpu + meta scalar": lambda L, m, c, s: c + L.tensor(1.0, device="meta"),
    "mse_loss": lambda L, m, c, s: L.nn.functional.mse_loss(m, c),
    "matmul": lambda L, m, c, s: m @ c,
    "batch_norm": lambda L, m, c, s: L.nn.BatchNorm1d(2, device="meta")(L.ones(4, 2)),
}


def _operands(L):
    return L.empty(2, device="meta"), L.ones(2), L.tensor(2.0)


@pytest.mark.parametrize("name", list(JOINS))
def test_a_cpu_scalar_joins_a_meta_computation(name):
    got = []
    for L in (ember, torch):
        out = JOINS[name](L, *_operands(L))
        got.append((str(out.device), tuple(out.shape)))
    assert got[0] == got[1]
    assert got[0][0] == "meta"


@pytest.mark.parametrize("name", list(REFUSED))
def test_other_cpu_tensors_beside_meta_are_refused_as_torch(name):
    msg = same_message(lambda L: REFUSED[name](L, *_operands(L)))
    assert msg.startswith("Tensor on device ")
