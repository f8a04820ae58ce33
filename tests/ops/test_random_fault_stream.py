"""A sampler that refuses its arguments leaves the generator where PyTorch's does (it
samples up to the fault, or nothing when it checks first), and says what PyTorch says."""

import pytest
import torch

import ember


def _after(lib, fn):
    """The message of fn's error and the next 3 uniforms of the stream, seed 0."""
    lib.manual_seed(0)
    with pytest.raises(Exception) as info:
        fn(lib)
    return type(info.value).__name__, str(info.value), lib.rand(3).tolist()


CASES = {
    "bernoulli_p_tensor": lambda t: t.bernoulli(t.tensor([0.2, 0.3, 1.5])),
    "bernoulli_p_float64": lambda t: t.bernoulli(t.tensor([0.2, 0.3, 1.5], dtype=t.float64)),
    "bernoulli__broadcast": lambda t: t.empty(2, 3).bernoulli_(t.tensor([0.2, 5.0, 0.4])),
    "bernoulli__transposed": lambda t: t.empty(3, 2).t().bernoulli_(
        t.tensor([[0.2, 0.3, 0.4], [0.1, 2.0, 0.5]])),
    "poisson": lambda t: t.poisson(t.tensor([1.0, 3.0, -1.0, 2.0])),
    "multinomial_negative": lambda t: t.multinomial(t.tensor([0.2, -0.1, 0.3]), 2),
    "multinomial_zero_row": lambda t: t.multinomial(t.tensor([[1.0, 2.0], [0.0, 0.0]]), 3,
                                                    replacement=True),
    "cauchy_sigma": lambda t: t.empty(2).cauchy_(0.0, -1.0),
    "randperm_negative": lambda t: t.randperm(-3),
    "randperm_half": lambda t: t.randperm(2050, dtype=t.float16),
    "randperm_int8": lambda t: t.randperm(200, dtype=t.int8),
    "randperm_bool": lambda t: t.randperm(2, dtype=t.bool),
    "random_uint8_from": lambda t: t.empty(2, dtype=t.uint8).random_(-1, 5),
    "random_int16_to": lambda t: t.empty(2, dtype=t.int16).random_(0, 2**40),
    "random_half_to": lambda t: t.empty(2, dtype=t.float16).random_(0, 2**40),
    "randint_int32": lambda t: t.randint(0, 2**40, (2,), dtype=t.int32),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fault_message_and_stream_match_torch(name):
    # exact: integer word counts decide the uniforms, no float arithmetic differs
    assert _after(ember, CASES[name]) == _after(torch, CASES[name])


def test_random_float_beyond_exact_integers_warns_not_fails():
    with pytest.warns(UserWarning, match=r"to - 1 is out of bounds \[-\(2\^24\), 2\^24\]"):
        x = ember.empty(3).random_(0, 2**25, generator=ember.Generator().manual_seed(1))
    assert x.shape == (3,)


def test_clone_state_continues_the_stream():
    g = ember.Generator().manual_seed(5)
    ember.rand(3, generator=g)
    twin = g.clone_state()
    assert twin.initial_seed() == 5
    tg = torch.Generator().manual_seed(5)
    torch.rand(3, generator=tg)
    expect = torch.rand(4, generator=tg.clone_state()).tolist()
    assert ember.rand(4, generator=twin).tolist() == expect
    assert ember.rand(4, generator=g).tolist() == expect
