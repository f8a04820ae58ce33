"""`ember.compile` of functions whose results are their arguments or aliases of them
(`detach`, `.data`, views, the argument itself): each call's results follow that call's
arguments, static or dynamic shapes, and writing into a result reaches the argument as
in torch 2.13."""

import pytest
import torch

import ember

FUNS = {
    "detach": lambda a: (a.detach(), a * 2),
    "detach twice": lambda a: (a.detach().detach(), a + 1),
    "the argument": lambda a: (a, a * 2),
    "view": lambda a: (a.view(a.shape), a * 2),
    "ellipsis": lambda a: (a[...], a * 2),
    "slice": lambda a: (a[1:], a + 1),
    "data": lambda a: (a.data, a + 1),
    "detach alone": lambda a: (a.detach(), a.detach()),
}


def _runs(T, f, dynamic) -> list:
    c = T.compile(f, dynamic=dynamic)
    out = []
    for v in ([1.0, 2.0], [5.0, 6.0], [7.0, 8.0, 9.0]):
        x = T.tensor(v)
        r, s = c(x)
        r.add_(100)  # (a view or alias of x: the write reaches x)
        out.append((r.tolist(), s.tolist(), x.tolist(), r.requires_grad))
    return out


@pytest.mark.parametrize("dynamic", [None, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("name", list(FUNS))
def test_aliases_of_the_arguments_follow_each_call(name, dynamic):
    # (the functions use only ops exact in float32 on these small integers: equal values)
    got = _runs(ember, FUNS[name], dynamic)
    assert got == _runs(torch, FUNS[name], dynamic)
    assert got[1][0][-1] == 106.0 and got[1][2][-1] == 106.0  # (x = [5, 6], plus 100)
