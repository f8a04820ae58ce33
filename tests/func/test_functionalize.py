"""functionalize keeps a function's mutations inside it, as torch.func.functionalize does:
the same outputs, a mutated input never returned as an output but updated afterwards, and it
composes with grad and vmap."""

import pytest
import torch

import ember


def _mutate(t):
    buf = t.clone()
    buf.add_(1.0)
    buf[0] = 5.0
    return buf * 2


def _mutate_input(t):
    t.view(-1).mul_(3.0)  # a write through a view of the input
    return t


@pytest.mark.parametrize("remove", ["mutations", "mutations_and_views"])
def test_outputs_and_input_mutations_match_torch(remove):
    for L in (ember, torch):
        x = L.tensor([[1.0, -2.0], [0.5, 4.0]])
        out = L.func.functionalize(_mutate_input, remove=remove)(x)
        # exact: a product by 3 is correctly rounded on both sides
        assert x.tolist() == [[3.0, -6.0], [1.5, 12.0]]
        assert out.tolist() == x.tolist()
        assert out.data_ptr() != x.data_ptr()  # the output does not alias the input


@pytest.mark.filterwarnings("ignore:There is a performance drop")
def test_composes_with_grad_and_vmap():
    res = {}
    for L in (ember, torch):
        g = L.func.functionalize(L.func.grad(lambda t: _mutate(t).pow(2).sum()))(L.ones(3))
        v = L.func.vmap(L.func.functionalize(_mutate))(L.arange(6.0).reshape(2, 3))
        res[L.__name__] = (g.tolist(), v.tolist())
    assert res["ember"] == res["torch"]  # exact: small integers in float32


def test_invalid_remove_message():
    msgs = []
    for L in (ember, torch):
        with pytest.raises(RuntimeError) as err:
            L.func.functionalize(_mutate_input, remove="views")
        msgs.append(str(err.value))
    assert msgs[0] == msgs[1]


def test_an_input_returned_unchanged_is_itself():
    for L in (ember, torch):
        x = L.ones(3)
        assert L.func.functionalize(lambda t: t)(x) is x
        assert L.func.functionalize(lambda t: (t, t.add_(1)))(x)[0] is not x
