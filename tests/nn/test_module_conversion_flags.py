"""`torch.__future__`'s module-conversion switches and `nn.utils.stateless`, against torch
(__future__.py, nn/modules/_conversion.py `_apply`, nn/utils/stateless.py)."""

import warnings

import pytest
import torch

import ember


def _convert(L, overwrite, swap):
    L.__future__.set_overwrite_module_params_on_conversion(overwrite)
    L.__future__.set_swap_module_params_on_conversion(swap)
    try:
        m = L.nn.Linear(2, 2)
        m(L.ones(1, 2)).sum().backward()
        w, g = m.weight, m.weight.grad
        m.double()
        flags = (L.__future__.get_overwrite_module_params_on_conversion(),
                 L.__future__.get_swap_module_params_on_conversion())
    finally:
        L.__future__.set_overwrite_module_params_on_conversion(False)
        L.__future__.set_swap_module_params_on_conversion(False)
    return (flags, m.weight is w, str(w.dtype)[-7:], str(m.weight.dtype)[-7:],
            type(m.weight).__name__, m.weight.requires_grad, m.weight.is_leaf,
            str(m.weight.grad.dtype)[-7:], m.weight.grad is g)


@pytest.mark.parametrize("overwrite,swap", [(False, False), (True, False), (True, True),
                                            (False, True)])
def test_conversion_switches_as_torch(overwrite, swap):
    assert _convert(ember, overwrite, swap) == _convert(torch, overwrite, swap)


def test_switches_default_off():
    assert ember.__future__.get_overwrite_module_params_on_conversion() is False
    assert ember.__future__.get_swap_module_params_on_conversion() is False


def test_stateless_functional_call_warns_and_calls():
    got = []
    for L in (ember, torch):
        net = L.nn.Linear(2, 1)
        params = {"weight": L.ones(1, 2), "bias": L.zeros(1)}
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = L.nn.utils.stateless.functional_call(net, params, (L.full((3, 2), 2.0),))
        got.append((out.tolist(), [(x.category, str(x.message)) for x in w]))
    assert got[0] == got[1]
    assert got[0][1][0][0] is FutureWarning
