"""vmap's `randomness=` against torch.func.vmap: 'different' draws once per example, 'same'
shares one draw across the batch, 'error' refuses.

PyTorch draws the whole batch at once for a random op under 'different' (a factory as if the
batch dim were in front; an op on a batched tensor on the batch's own memory), and ember's
generator is bit-exact with PyTorch's, so with the same seed the values are compared bit for
bit, and the generator's state afterwards too (the next draw after the vmap is compared).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, rand_array, same_error

B = 4


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (loop fallbacks announce themselves)
        yield


def _x(m, shape, low=0.1, high=0.9, seed=0):
    return m.tensor(rand_array(shape, np.float32, low, high, seed=seed))


def seeded(call, seed: int = 0):
    """`call(m)` for ember and torch from the same seed: the results and the next draw
    after it (so the generator advanced as PyTorch's did) are equal, bit for bit."""
    out = {}
    for m in (ember, torch):
        m.manual_seed(seed)
        res = call(m)
        out[m.__name__] = (res, m.rand(2, dtype=m.float64))
    assert_same(out["ember"][0], out["torch"][0], 0, 0)
    assert_same(out["ember"][1], out["torch"][1], 0, 0)
    return out["ember"][0]


def _rows_differ(t) -> bool:
    """Not every example equals the first (0/1 draws of a few values may repeat one)."""
    return not _rows_equal(t)


def _rows_equal(t) -> bool:
    a = t.numpy().reshape(t.shape[0], -1)
    return all(np.array_equal(a[0], a[i]) for i in range(1, len(a)))


FACTORIES = {
    "rand": lambda m: m.rand(3, dtype=m.float64),
    "rand_complex": lambda m: m.rand(2, dtype=m.complex64),
    "randn": lambda m: m.randn(5),  # the batch is 20 values: PyTorch's block-of-16 path
    "randn_serial": lambda m: m.randn(3),
    "randint": lambda m: m.randint(0, 10, (3,)),
    "randperm": lambda m: m.randperm(5),  # a permutation per example, drawn in turn
    "normal_size": lambda m: m.normal(1.0, 2.0, (3,)),
    "bernoulli_p": lambda m: m.bernoulli(m.full((3,), 0.5)),
}


@pytest.mark.parametrize("name", FACTORIES)
def test_a_factory_draws_once_per_example_under_different(name):
    make = FACTORIES[name]
    out = seeded(lambda m: m.vmap(lambda x: make(m), randomness="different")(_x(m, (B, 2))))
    assert out.shape[0] == B and _rows_differ(out)


@pytest.mark.parametrize("name", FACTORIES)
def test_a_factory_draws_once_for_the_batch_under_same(name):
    make = FACTORIES[name]
    out = seeded(lambda m: m.vmap(lambda x: make(m), randomness="same")(_x(m, (B, 2))))
    assert out.shape[0] == B and _rows_equal(out)


INPLACE = {
    "uniform_": lambda x: x.uniform_(-1, 2),
    "normal_": lambda x: x.normal_(1.0, 0.5),
    "bernoulli_": lambda x: x.bernoulli_(0.3),
    "exponential_": lambda x: x.exponential_(2.0),
    "random_": lambda x: x.random_(0, 100),
    "cauchy_": lambda x: x.cauchy_(),
    "geometric_": lambda x: x.geometric_(0.4),
    "log_normal_": lambda x: x.log_normal_(),
}


@pytest.mark.parametrize("name", INPLACE)
@pytest.mark.parametrize("in_dim", [0, 1])
def test_an_inplace_sampler_on_a_batched_tensor_fills_each_example(name, in_dim):
    """The batch is filled as one tensor, in its memory order (in_dim=1: the examples
    interleave), as PyTorch fills it."""
    fill = INPLACE[name]
    shape = (B, 6) if in_dim == 0 else (6, B)
    out = seeded(lambda m: m.vmap(fill, in_dims=in_dim, randomness="different")(
        m.zeros(shape)))
    assert out.shape == (B, 6) and _rows_differ(out)
    out = seeded(lambda m: m.vmap(fill, in_dims=in_dim, randomness="same")(m.zeros(shape)))
    assert _rows_equal(out)


def test_normal_fills_a_contiguous_batch_by_blocks_of_16():
    # 2 x 10 values: the batch is contiguous with 20 >= 16 elements, one example is not
    seeded(lambda m: m.vmap(lambda x: x.normal_(), randomness="different")(m.zeros(2, 10)))
    seeded(lambda m: m.vmap(lambda x: x.normal_(), in_dims=1, randomness="different")(
        m.zeros(10, 2)))


def test_an_inplace_sampler_on_an_unbatched_tensor_raises_under_different():
    def call(m):
        return m.vmap(lambda x: m.zeros(3).uniform_() + x, randomness="different")(
            m.zeros(B, 3))

    assert same_error(call) is RuntimeError
    with pytest.raises(RuntimeError, match="different inplace randomness on an unbatched"):
        call(ember)
    # under 'same' it is one draw, written once and shared
    out = seeded(lambda m: m.vmap(lambda x: m.zeros(3).uniform_() + x, randomness="same")(
        m.zeros(B, 3)))
    assert _rows_equal(out)


LIKE = {
    "rand_like": lambda m, x: m.rand_like(x),
    "randn_like": lambda m, x: m.randn_like(x),
    "randint_like": lambda m, x: m.randint_like(x, 3, 9),
}


@pytest.mark.parametrize("name", LIKE)
@pytest.mark.parametrize("in_dim", [0, 1])
def test_a_like_factory_of_a_batched_tensor_draws_like_the_batch(name, in_dim):
    like = LIKE[name]
    shape = (B, 5) if in_dim == 0 else (5, B)
    for r, check in (("different", _rows_differ), ("same", _rows_equal)):
        out = seeded(lambda m, r=r: m.vmap(lambda x: like(m, x), in_dims=in_dim,
                                           randomness=r)(m.zeros(shape)))
        assert out.shape == (B, 5) and check(out)


def test_a_like_factory_of_a_transposed_batch_draws_in_its_memory_order():
    for r in ("different", "same"):
        seeded(lambda m, r=r: m.vmap(lambda x: m.randn_like(x.t()), randomness=r)(
            m.zeros(B, 5, 4)))
        seeded(lambda m, r=r: m.vmap(lambda x: m.randn_like(x), in_dims=2, randomness=r)(
            m.zeros(5, 4, B)))


@pytest.mark.parametrize("name", LIKE)
def test_a_like_factory_of_an_unbatched_tensor_still_draws_per_example(name):
    like = LIKE[name]
    out = seeded(lambda m: m.vmap(lambda x: like(m, m.zeros(5)) + x, randomness="different")(
        m.zeros(B, 5)))
    assert _rows_differ(out)
    # a transposed one keeps its layout per example, the batch outermost (as PyTorch)
    out = seeded(lambda m: m.vmap(lambda x: like(m, m.zeros(3, 5).t()) + x,
                                  randomness="different")(m.zeros(B, 5, 3)))
    assert _rows_differ(out)


SAMPLERS = {
    "dropout": lambda m, x: m.nn.functional.dropout(x, 0.4),
    "dropout_inplace": lambda m, x: m.nn.functional.dropout(x * 1, 0.4, inplace=True),
    "alpha_dropout": lambda m, x: m.nn.functional.alpha_dropout(x, 0.3, training=True),
    "dropout1d": lambda m, x: m.nn.functional.dropout1d(x.reshape(3, 4), 0.5),
    "bernoulli": lambda m, x: m.bernoulli(x),
    "bernoulli_p_tensor": lambda m, x: (x * 0).bernoulli_(x),
    "multinomial": lambda m, x: m.multinomial(x, 5),
    "multinomial_2d": lambda m, x: m.multinomial(x.reshape(3, 4), 2),
    "multinomial_replacement": lambda m, x: m.multinomial(x, 7, replacement=True),
    "normal_mean": lambda m, x: m.normal(x, 2.0),
    "normal_std": lambda m, x: m.normal(1.0, x),
    "normal_both": lambda m, x: m.normal(x, x * 2),
    "poisson": lambda m, x: m.poisson(x * 10),
}


@pytest.mark.parametrize("name", SAMPLERS)
def test_a_sampler_of_a_batched_tensor_draws_per_example_under_different(name):
    fn = SAMPLERS[name]
    out = seeded(lambda m: m.vmap(lambda x: fn(m, x), randomness="different")(_x(m, (B, 12))))
    assert _rows_differ(out)


@pytest.mark.parametrize("name", ["bernoulli", "multinomial", "normal_std", "poisson"])
def test_a_sampler_of_a_batched_tensor_raises_under_same_as_torch(name):
    fn = SAMPLERS[name]

    def call(m):
        return m.vmap(lambda x: fn(m, x), randomness="same")(_x(m, (B, 12)))

    assert same_error(call) is RuntimeError
    with pytest.raises(RuntimeError, match="same randomness with a batched tensor input"):
        call(ember)


def test_dropout_under_same_shares_one_mask():
    out = seeded(lambda m: m.vmap(lambda x: m.nn.functional.dropout(x, 0.5),
                                  randomness="same")(m.ones(B, 12)))
    assert _rows_equal(out) and set(np.unique(out.numpy())) == {0.0, 2.0}


def test_a_batched_negative_std_raises_as_torch():
    def call(m):
        return m.vmap(lambda s: m.normal(0.0, s), randomness="different")(-m.ones(B, 3))

    assert same_error(call) is RuntimeError
    # eager: checked before the draw, so the generator has not moved
    for m in (ember, torch):
        m.manual_seed(0)
        with pytest.raises(RuntimeError, match="std >= 0.0"):
            m.normal(m.zeros(3), -m.ones(3))
    assert ember.rand(1).item() == torch.rand(1).item()


@pytest.mark.parametrize("outer", ["different", "same"])
@pytest.mark.parametrize("inner", ["different", "same"])
def test_nested_vmaps_each_follow_their_own_randomness(outer, inner):
    def call(m):
        f = m.vmap(lambda x: m.rand(2) + x, randomness=inner)
        return m.vmap(f, randomness=outer)(m.zeros(3, B, 2))

    out = seeded(call)
    a = out.numpy()
    assert np.array_equal(a[0], a[1]) == (outer == "same")
    assert np.array_equal(a[:, 0], a[:, 1]) == (inner == "same")


def test_nested_inplace_draws_on_the_inner_batch_only():
    def call(m):
        f = m.vmap(lambda x: x.uniform_(), randomness="different")
        return m.vmap(f, randomness="same")(m.zeros(3, B))

    out = seeded(call)
    assert _rows_equal(out) and len(set(out.numpy()[0].tolist())) == B


@pytest.mark.parametrize("outer,inner", [("error", "different"), ("different", "error"),
                                         ("error", "same"), ("same", "error")])
def test_error_at_any_level_refuses_a_draw(outer, inner):
    def call(m):
        f = m.vmap(lambda x: m.rand(2) + x, randomness=inner)
        return m.vmap(f, randomness=outer)(m.zeros(3, B, 2))

    assert same_error(call) is RuntimeError
    with pytest.raises(RuntimeError, match="randomness error mode"):
        call(ember)


@pytest.mark.parametrize("randomness", ["different", "same"])
def test_chunks_draw_in_turn_under_different_and_repeat_the_draw_under_same(randomness):
    """PyTorch's rules: 'different' chunks draw one after another (the values are those of
    one unchunked call); 'same' restores the default generator before each chunk, so every
    chunk draws what the first did and the generator ends one chunk's draw on."""
    def call(m, chunk_size, draw):
        return m.vmap(lambda x: draw(m) + x, randomness=randomness,
                      chunk_size=chunk_size)(m.zeros(5, 3))

    for draw in (lambda m: m.rand(3), lambda m: m.randn(3), lambda m: m.rand(3) < 0.5):
        out = seeded(lambda m, draw=draw: call(m, 2, draw))
        assert _rows_equal(out) == (randomness == "same")
    if randomness == "different":  # (uniforms: one word each, so the chunks' draws join)
        out = seeded(lambda m: call(m, 2, lambda m: m.rand(3)))
        ember.manual_seed(0)
        np.testing.assert_array_equal(call(ember, None, lambda m: m.rand(3)).numpy(),
                                      out.numpy())


def test_different_draws_have_the_distributions_moments():
    """Many examples of a small draw: the batch's per-position mean and variance are those
    of the distribution (a check that does not lean on PyTorch's order)."""
    ember.manual_seed(1)
    n = 4000
    u = ember.vmap(lambda x: ember.rand(3, dtype=ember.float64) + x,
                   randomness="different")(ember.zeros(n, 3)).numpy()
    z = ember.vmap(lambda x: x.normal_(2.0, 3.0), randomness="different")(
        ember.zeros(n, 3, dtype=ember.float64)).numpy()
    k = ember.vmap(lambda x: ember.nn.functional.dropout(x, 0.25),
                   randomness="different")(ember.ones(n, 3, dtype=ember.float64)).numpy()
    for a, mean, var in ((u, 0.5, 1 / 12), (z, 2.0, 9.0), (k, 1.0, 1 / 3)):
        se = np.sqrt(var / n)
        assert np.all(np.abs(a.mean(0) - mean) < 5 * se), (a.mean(0), mean)
        assert np.all(np.abs(a.var(0) / var - 1) < 0.15)
    # examples are independent: neighbouring examples are uncorrelated
    assert abs(np.corrcoef(u[:-1, 0], u[1:, 0])[0, 1]) < 0.1


def test_different_composes_with_grad():
    def loss(w, x):
        return (ember.nn.functional.dropout(x * w, 0.5) ** 2).sum()

    def loss_t(w, x):
        return (torch.nn.functional.dropout(x * w, 0.5) ** 2).sum()

    out = {}
    for m, f in ((ember, loss), (torch, loss_t)):
        m.manual_seed(0)
        w = m.tensor([1.0, 2.0, 3.0])
        out[m.__name__] = m.vmap(m.func.grad(f), in_dims=(None, 0), randomness="different")(
            w, m.ones(B, 3))
    assert_same(out["ember"], out["torch"], 0, 0)
    assert _rows_differ(out["ember"])
