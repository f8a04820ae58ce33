"""ember.random: PyTorch's generator, its seeding rules and its 5,056-byte state layout."""

import copy
import pickle
import struct

import numpy as np
import pytest
import torch

import ember


def ember_state() -> bytes:
    return ember.get_rng_state().numpy().tobytes()


def torch_state() -> bytes:
    return torch.get_rng_state().numpy().tobytes()


def test_the_tutorial_values():
    ember.manual_seed(0)
    x = ember.randn(2, 3)
    torch.manual_seed(0)
    assert np.array_equal(x.numpy(), torch.randn(2, 3).numpy())
    np.testing.assert_allclose(x.numpy(), [[1.5410, -0.2934, -2.1788],
                                           [0.5684, -1.0845, -1.3986]], atol=5e-5)
    assert repr(x) == ("tensor([[ 1.5410, -0.2934, -2.1788],\n"
                       "        [ 0.5684, -1.0845, -1.3986]])")


@pytest.mark.parametrize("seed", [0, 1, 42, 2**32 - 1, 2**40 + 3, 2**64 - 1, -1, -(2**63)])
def test_seeding_gives_torchs_state(seed):
    assert ember.manual_seed(seed) is ember.default_generator
    torch.manual_seed(seed)
    assert ember_state() == torch_state()
    assert ember.initial_seed() == torch.initial_seed()
    ember.rand(5)
    torch.rand(5)
    assert ember_state() == torch_state()


def test_only_the_low_32_bits_reach_the_stream():
    a = ember.Generator().manual_seed(3)
    b = ember.Generator().manual_seed(2**40 + 3)
    assert a.initial_seed() != b.initial_seed()
    assert ember.rand(4, generator=a).equal(ember.rand(4, generator=b))


@pytest.mark.parametrize("seed", [2**64, -(2**63) - 1])
def test_out_of_range_seeds_are_refused_as_in_torch(seed):
    with pytest.raises(ValueError):
        torch.manual_seed(seed)
    with pytest.raises(ValueError):
        ember.manual_seed(seed)


def test_default_generator_starts_at_torchs_default_seed():
    assert ember.Generator().initial_seed() == torch.Generator().initial_seed() == 67280421310721
    a = ember.Generator().get_state().numpy().tobytes()
    assert a == torch.Generator().get_state().numpy().tobytes()


def test_state_layout_records_the_cached_normal():
    ember.manual_seed(5)
    torch.manual_seed(5)
    ember.randn(1)  # draws a pair, uses the cosine, caches the sine
    torch.randn(1)
    raw = ember_state()
    assert raw == torch_state() and len(raw) == 5056
    seed, left, seeded, nxt = struct.unpack_from("<QiiQ", raw)
    assert (seed, left, seeded, nxt) == (5, 621, 1, 4)
    cached, valid = struct.unpack_from("<d", raw, 5024)[0], struct.unpack_from("<i", raw, 5040)
    assert valid == (1,) and cached != 0.0


def test_torch_state_continues_in_ember_and_back():
    torch.manual_seed(9)
    torch.randn(3)  # leaves a cached normal sample
    torch.rand(700)  # crosses a twist
    ember.set_rng_state(ember.from_numpy(torch.get_rng_state().numpy().copy()))
    assert ember.randn(5).numpy().tobytes() == torch.randn(5).numpy().tobytes()
    ember.randn(7, dtype=ember.float64)
    torch.set_rng_state(torch.from_numpy(ember.get_rng_state().numpy().copy()))
    assert torch.randn(40).numpy().tobytes() == ember.randn(40).numpy().tobytes()
    assert ember_state() == torch_state()


@pytest.mark.parametrize("bad", [
    np.zeros(100, np.uint8),  # wrong size
    np.zeros(5048, np.uint8),  # the pre-1.5 layout, which torch 2.13 refuses too
    np.zeros(5056, np.uint8),  # seeded = 0, left = 0
])
def test_invalid_states_are_refused(bad):
    with pytest.raises(RuntimeError):
        torch.set_rng_state(torch.from_numpy(bad.copy()))
    with pytest.raises(RuntimeError):
        ember.set_rng_state(ember.from_numpy(bad.copy()))


@pytest.mark.parametrize("dtype", ["float32", "bool", "int64"])
def test_state_must_be_a_byte_tensor(dtype):
    # torch 2.13 refuses another dtype before reading the state: TypeError, its words
    with pytest.raises(TypeError) as t:
        torch.set_rng_state(torch.zeros(5056, dtype=getattr(torch, dtype)))
    for set_state in (ember.set_rng_state, ember.Generator().set_state):
        with pytest.raises(TypeError) as e:
            set_state(ember.zeros(5056, dtype=getattr(ember, dtype)))
        assert str(e.value) == str(t.value)


def test_generators_are_independent_objects():
    g = ember.Generator()
    assert g.manual_seed(1) is g and g.device == ember.device("cpu")
    state = g.get_state()
    a = ember.rand(3, generator=g)
    g.set_state(state)
    assert ember.rand(3, generator=g).equal(a)
    s = g.seed()
    assert g.initial_seed() == s and 0 <= s < 2**64


def test_generators_pickle_and_copy_with_their_stream():
    g = ember.Generator().manual_seed(7)
    ember.randn(1, generator=g)  # pending cached normal travels too
    for clone in (pickle.loads(pickle.dumps(g)), copy.deepcopy(g)):
        assert clone.get_state().equal(g.get_state())
    h = pickle.loads(pickle.dumps(g))
    assert ember.randn(9, generator=h).equal(ember.randn(9, generator=g))


def test_fork_rng_restores_the_default_generator():
    ember.manual_seed(2)
    before = ember_state()
    with ember.random.fork_rng():
        ember.randn(100)
        ember.manual_seed(77)
    assert ember_state() == before
    with ember.random.fork_rng(enabled=False):
        ember.rand(2)
    assert ember_state() != before


def test_module_level_functions_match_torch_random():
    ember.random.manual_seed(12)
    torch.random.manual_seed(12)
    assert ember.random.initial_seed() == torch.random.initial_seed() == 12
    assert ember.random.get_rng_state().numpy().tobytes() == \
        torch.random.get_rng_state().numpy().tobytes()
    assert isinstance(ember.seed(), int)


def test_kernel_profile_switch():
    previous = ember.random.get_kernel_profile()
    assert previous in ("avx2", "default")
    with pytest.raises(ValueError):
        ember.random.set_kernel_profile("sse9")
    ember.random.set_kernel_profile("default")
    try:
        assert ember.random.get_kernel_profile() == "default"
    finally:
        ember.random.set_kernel_profile(previous)


def _train_mlp(lib):
    """A seeded run touching every random stream of a training loop: data, Linear init,
    dropout masks and the DataLoader's shuffle, then Adam."""
    lib.manual_seed(0)
    x, y = lib.randn(64, 10), lib.randint(0, 3, (64,))
    model = lib.nn.Sequential(lib.nn.Linear(10, 32), lib.nn.ReLU(), lib.nn.Dropout(0.2),
                              lib.nn.Linear(32, 3))
    opt = lib.optim.Adam(model.parameters(), lr=1e-2)
    loader = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(x, y), batch_size=16,
                                       shuffle=True)
    losses = []
    for _ in range(3):
        for xb, yb in loader:
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            losses.append(loss.item())
    return losses


def test_seeded_mlp_training_matches_torch_step_by_step():
    ours, theirs = _train_mlp(ember), _train_mlp(torch)
    assert len(ours) == len(theirs) == 12
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-5)
    assert ember_state() == torch_state()


@pytest.mark.parametrize("name, args, kwargs", [
    ("Linear", (8, 5), {}), ("Bilinear", (3, 4, 5), {}), ("Conv1d", (3, 4, 3), {}),
    ("Conv2d", (3, 4, 3), {}), ("ConvTranspose2d", (3, 4, 3), {}), ("Embedding", (10, 4), {}),
    ("LSTM", (4, 5), {"num_layers": 2}), ("GRU", (4, 5), {"bidirectional": True}),
    ("MultiheadAttention", (8, 2), {}),
    ("TransformerEncoderLayer", (8, 2), {"dim_feedforward": 16}),
])
def test_default_layer_initialisation_draws_torchs_numbers(name, args, kwargs):
    ember.manual_seed(0)
    torch.manual_seed(0)
    ours = getattr(ember.nn, name)(*args, **kwargs).state_dict()
    theirs = getattr(torch.nn, name)(*args, **kwargs).state_dict()
    assert list(ours) == list(theirs)
    for k in theirs:
        assert np.array_equal(ours[k].numpy(), theirs[k].numpy()), k
    assert ember_state() == torch_state()


def test_generator_repr_is_torchs_default_object_repr():
    e, t = repr(ember.Generator()), repr(torch.Generator())
    assert e.split(" at 0x")[0] == t.split(" at 0x")[0].replace("torch", "ember", 1)


@pytest.mark.parametrize("seed", [1.5, 3.0, "3", True, None, np.int64(3), np.float64(2.0),
                                  np.bool_(True), 7, -1, 2**63])
def test_generator_manual_seed_takes_python_ints_only(seed):
    # Generator.manual_seed is C++ in torch: a float, a bool, a str or a tensor is refused
    # (a NumPy integer with CPython's words); torch.manual_seed first calls int() on it.
    def outcome(lib, call):  # (`lib` picks the framework; the seed is the same object)
        try:
            return "ok", call(lib, seed).initial_seed()
        except Exception as exc:  # noqa: BLE001 - the type and words are compared
            return type(exc).__name__, str(exc)

    for call in (lambda lib, s: lib.Generator().manual_seed(s),
                 lambda lib, s: lib.manual_seed(s)):
        assert outcome(ember, call) == outcome(torch, call)


def test_generator_manual_seed_refuses_a_tensor_global_takes_it():
    assert ember.manual_seed(ember.tensor(5)).initial_seed() == 5
    with pytest.raises(RuntimeError, match="manual_seed expected a long, but got Tensor"):
        ember.Generator().manual_seed(ember.tensor(5))
    with pytest.raises(ValueError, match="invalid literal for int"):
        ember.manual_seed("3x")
