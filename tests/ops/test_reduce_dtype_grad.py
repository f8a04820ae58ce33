"""A reduction or scan asked for an integer or bool `dtype` on an input that requires grad:
PyTorch records the op and its autograd refuses the result's dtype; without grad (or for a
floating `dtype`) the cast result is returned as usual."""

import numpy as np
import pytest
import torch

import ember

CALLS = {
    "sum": lambda L, x, d: x.sum(1, dtype=d),
    "sum all": lambda L, x, d: L.sum(x, dtype=d),
    "sum dims": lambda L, x, d: L.sum(x, (0, 1), False, dtype=d),
    "nansum": lambda L, x, d: x.nansum(1, dtype=d),
    "prod": lambda L, x, d: x.prod(1, dtype=d),
    "prod all": lambda L, x, d: x.prod(dtype=d),
    "cumsum": lambda L, x, d: x.cumsum(1, dtype=d),
    "cumprod": lambda L, x, d: L.cumprod(x, 0, dtype=d),
}
VALUES = [[1.5, 3.0, 3.0], [2.0, 0.0, -1.0]]


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool", "uint8"])
@pytest.mark.parametrize("name", CALLS)
def test_integer_dtype_of_a_grad_input_is_refused(name, dtype):
    msgs = []
    for L in (torch, ember):
        x = L.tensor(VALUES, requires_grad=True)
        with pytest.raises(RuntimeError) as err:
            CALLS[name](L, x, getattr(L, dtype))
        msgs.append((type(err.value), str(err.value)))
    assert msgs[0] == msgs[1]
    # (the scans have no bool kernel: that refusal comes first)
    refusal = "not implemented for 'Bool'" if dtype == "bool" and "cum" in name else \
        "Autograd not support dtype: "
    assert refusal in msgs[0][1]


@pytest.mark.parametrize("name", CALLS)
def test_without_grad_or_with_a_float_dtype_it_casts(name):
    for grad, dtype in ((False, "int64"), (True, "float64")):
        got = []
        for L in (torch, ember):
            x = L.tensor(VALUES, requires_grad=grad)
            with L.no_grad() if dtype == "int64" and name.startswith("cum") else _null():
                r = CALLS[name](L, x, getattr(L, dtype))
            got.append((str(r.dtype).split(".")[-1], r.requires_grad, r.detach().tolist()))
        # NOTE: a few small integers or float64 sums of them: exact
        assert got[0] == got[1]
    x = ember.tensor(VALUES, requires_grad=True)
    with ember.no_grad():
        np.testing.assert_array_equal(CALLS[name](ember, x, ember.int32).numpy(),
                                      CALLS[name](torch, torch.tensor(VALUES), torch.int32))


class _null:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


OUT_CALLS = {
    "sum": lambda L, x, out: L.sum(x, 1, out=out),
    "nansum": lambda L, x, out: L.nansum(x, 1, out=out),
    "prod": lambda L, x, out: L.prod(x, 1, out=out),
    "cumsum": lambda L, x, out: L.cumsum(x, 0, out=out),
}


@pytest.mark.parametrize("dtype", ["int64", "float64"])
@pytest.mark.parametrize("name", OUT_CALLS)
def test_an_out_of_another_dtype_is_refused_as_out_before_the_dtype(name, dtype):
    # PyTorch refuses `out=` under autograd before it looks at the dtype `out` asks for
    msgs = []
    for L in (torch, ember):
        x = L.tensor(VALUES, requires_grad=True)
        out = L.empty(0, dtype=getattr(L, dtype))
        with pytest.raises(RuntimeError) as err:
            OUT_CALLS[name](L, x, out)
        msgs.append(str(err.value))
    assert msgs[0] == msgs[1] == (f"{name}(): functions with out=... arguments don't support "
                                  "automatic differentiation, but one of the arguments "
                                  "requires grad.")
