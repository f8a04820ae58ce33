"""torch.binomial: the same counts as PyTorch for the same seed (integers drawn from the
same generator words, so compared exactly), its broadcasting, errors and autograd node."""

import warnings

import numpy as np
import pytest
import torch

import ember

# inversion (count * p < 10), BTRS (count * p >= 10), p above 1/2 (drawn as count minus a
# draw at 1 - p), and the edges that draw nothing (count 0, p 0, p 1)
COUNTS = [0.0, 1.0, 5.0, 20.0, 100.0, 1000.0, 7.0, 3e4, 50.0, 12.0, 9.0]
PROBS = [0.5, 0.3, 0.9, 0.6, 0.5, 0.01, 0.999, 0.2, 1.0, 0.0, 0.75]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_same_counts_as_torch(dtype, seed):
    torch.manual_seed(seed)
    ember.manual_seed(seed)
    tc = torch.tensor(COUNTS, dtype=getattr(torch, dtype))
    tp = torch.tensor(PROBS, dtype=getattr(torch, dtype))
    ec = ember.tensor(COUNTS, dtype=getattr(ember, dtype))
    ep = ember.tensor(PROBS, dtype=getattr(ember, dtype))
    for _ in range(3):
        a, b = torch.binomial(tc, tp), ember.binomial(ec, ep)
        assert b.dtype == getattr(ember, dtype)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    # the generator is left where PyTorch leaves it
    assert torch.rand(1).item() == ember.rand(1).item()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("native", [True, False], ids=["native", "numpy"])
def test_large_batches_as_torch_with_the_stream_drawn_ahead_grown(dtype, native):
    # 20,000 draws in C (csrc/rejection.c) or in Python: many inversions near count * p = 10
    # outrun the 4 doubles a draw drawn ahead, so the C loop undoes and resumes often
    rng = np.random.default_rng(0)
    c = rng.integers(0, 300, 20000).astype(np.float64)
    p = rng.random(20000)
    p[::97], p[::89], c[::83], p[::101] = 0.5, 1e-9, 1e6, np.nan
    torch.manual_seed(2)
    ember.manual_seed(2)
    t = torch.binomial(torch.tensor(c, dtype=getattr(torch, dtype)),
                       torch.tensor(p, dtype=getattr(torch, dtype)))
    with ember.native.use("native" if native else "numpy"):
        e = ember.binomial(ember.tensor(c, dtype=getattr(ember, dtype)),
                           ember.tensor(p, dtype=getattr(ember, dtype)))
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    assert torch.rand(1).item() == ember.rand(1).item()


def test_generator_argument_positional_and_keyword():
    c, p = [5.0, 20.0, 100.0], [0.3, 0.6, 0.5]
    a = torch.binomial(torch.tensor(c), torch.tensor(p), torch.Generator().manual_seed(1))
    b = ember.binomial(ember.tensor(c), ember.tensor(p), ember.Generator().manual_seed(1))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    g1, g2 = torch.Generator().manual_seed(4), ember.Generator().manual_seed(4)
    a = torch.binomial(count=torch.tensor(c), prob=torch.tensor(p), generator=g1)
    b = ember.binomial(count=ember.tensor(c), prob=ember.tensor(p), generator=g2)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_broadcast_and_layout_fill_row_major():
    m = [[3.0, 40.0], [7.0, 90.0]]
    q = [[0.2, 0.5], [0.7, 0.4]]
    torch.manual_seed(0)
    ember.manual_seed(0)
    a = torch.binomial(torch.tensor(m).t(), torch.tensor(q).t())
    b = ember.binomial(ember.tensor(m).t(), ember.tensor(q).t())
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert b.is_contiguous()
    a = torch.binomial(torch.full((2, 3), 30.0), torch.tensor([0.1, 0.5, 0.9]))
    b = ember.binomial(ember.full((2, 3), 30.0), ember.tensor([0.1, 0.5, 0.9]))
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_count_resized_to_broadcast_shape_warns():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        b = ember.binomial(ember.tensor([5.0, 20.0, 100.0]), ember.tensor([[0.5], [0.2]]))
    assert b.shape == (2, 3)
    assert "was resized since it had shape [3]" in str(w[0].message)


def test_nan_prob_gives_nan_and_draws_nothing():
    ember.manual_seed(0)
    torch.manual_seed(0)
    b = ember.binomial(ember.tensor([4.0, 4.0]), ember.tensor([float("nan"), 0.5]))
    a = torch.binomial(torch.tensor([4.0, 4.0]), torch.tensor([float("nan"), 0.5]))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    # a NaN count loops forever in PyTorch (its inversion waits for a sum above NaN); ember
    # gives NaN instead
    assert ember.binomial(ember.tensor([float("nan")]), ember.tensor([0.5])).isnan().all()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("native", [True, False], ids=["native", "numpy"])
def test_infinite_count_runs_btrs_as_torch(dtype, native):
    # (BTRS's tries at count = inf give inf where the uniform is above 1/2 and NaN = inf - inf
    # below it; p above 1/2 is inf minus such a draw: NaN; -inf is at most 0: 0)
    inf = float("inf")
    c = [inf, 5.0, inf, 30.0, inf, -inf, inf, 12.0] * 4
    p = [0.5, 0.5, 0.3, 0.6, 0.8, 0.5, 1e-6, 0.9] * 4
    for seed in range(3):
        torch.manual_seed(seed)
        ember.manual_seed(seed)
        a = torch.binomial(torch.tensor(c, dtype=getattr(torch, dtype)),
                           torch.tensor(p, dtype=getattr(torch, dtype)))
        with ember.native.use("native" if native else "numpy"):
            b = ember.binomial(ember.tensor(c, dtype=getattr(ember, dtype)),
                               ember.tensor(p, dtype=getattr(ember, dtype)))
        np.testing.assert_array_equal(b.numpy(), a.numpy())
        assert torch.rand(1).item() == ember.rand(1).item()


@pytest.mark.parametrize("make, exc, words", [
    (lambda m: m.binomial(m.tensor([5, 6]), m.tensor([0.5, 0.5])), ValueError,
     "binomial only supports floating-point dtypes for count, got: Long"),
    (lambda m: m.binomial(m.tensor([5.0]), m.tensor([1])), ValueError,
     "binomial only supports floating-point dtypes for prob, got: Long"),
    (lambda m: m.binomial(m.tensor([5.0]), m.tensor([0.5], dtype=m.float64)), RuntimeError,
     "Found dtype Double but expected Float"),
    (lambda m: m.binomial(m.tensor([5.0], dtype=m.float16), m.tensor([0.5])), RuntimeError,
     "Found dtype Float but expected Half"),
    (lambda m: m.binomial(m.tensor([5.0], dtype=m.bfloat16),
                          m.tensor([0.5], dtype=m.bfloat16)), NotImplementedError,
     "\"binomial_cpu\" not implemented for 'BFloat16'"),
    (lambda m: m.binomial(m.tensor([5.0]), 0.5), TypeError,
     "binomial(): argument 'prob' (position 2) must be Tensor, not float"),
    (lambda m: m.binomial(m.tensor([5.0]), m.tensor([0.5]), generator=3), TypeError,
     "binomial(): argument 'generator' must be torch.Generator, not int"),
    (lambda m: m.binomial(m.tensor([5.0, 6.0]), m.tensor([0.1, 0.2, 0.3])), RuntimeError,
     "The size of tensor a (2) must match the size of tensor b (3)"),
    (lambda m: m.binomial(m.tensor([5.0], device="meta"), m.tensor([0.5], device="meta")),
     NotImplementedError, "aten::binomial: attempted to run this operator with Meta tensors"),
])
def test_errors_match_torch(make, exc, words):
    for mod in (torch, ember):
        with pytest.raises(exc) as info:
            make(mod)
        assert words in str(info.value)


def test_autograd_node_is_not_implemented():
    for mod in (torch, ember):
        c = mod.tensor([5.0, 20.0]).requires_grad_()
        out = mod.binomial(c, mod.tensor([0.3, 0.6]))
        assert out.requires_grad and type(out.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::binomial is not implemented"):
            out.sum().backward()
        with mod.no_grad():
            assert mod.binomial(c, mod.tensor([0.3, 0.6])).grad_fn is None


def test_vmap_different_randomness_matches_torch():
    torch.manual_seed(3)
    ember.manual_seed(3)
    p = [0.3, 0.6]
    a = torch.func.vmap(lambda c: torch.binomial(c, torch.tensor(p)), randomness="different")(
        torch.tensor([5.0, 20.0]).expand(3, 2))
    b = ember.func.vmap(lambda c: ember.binomial(c, ember.tensor(p)), randomness="different")(
        ember.tensor([5.0, 20.0]).expand(3, 2))
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_transforms_refuse_in_torch_words():
    p = [0.3, 0.6]
    for mod in (torch, ember):
        with pytest.raises(NotImplementedError, match="forward AD with aten::binomial"):
            mod.func.jvp(lambda c, mod=mod: mod.binomial(c, mod.tensor(p)),
                         (mod.tensor([5.0, 20.0]),), (mod.ones(2),))
        with pytest.raises(RuntimeError, match="derivative for aten::binomial"):
            mod.func.grad(lambda c, mod=mod: mod.binomial(c, mod.tensor(p)).sum())(
                mod.tensor([5.0, 20.0]))
