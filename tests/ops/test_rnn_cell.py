"""The fused LSTM step (`ops/rnn_cell.py`): nn.LSTM with it gives bit for bit what the composite
step gives (outputs, final states, every gradient; a second derivative to rounding), and
torch's numbers and graph names."""

import numpy as np
import pytest
import torch

import ember
from ember.nn.modules import rnn as ember_rnn
from ember.ops import rnn_cell

from helpers import assert_same


def _run(lib, mod, x, hx, lens, loss_states):
    """Output and gradients of a loss of `mod`'s outputs (and of its final states)."""
    if lens is not None:
        seq = lib.nn.utils.rnn.pack_padded_sequence(x, lens, batch_first=mod.batch_first,
                                                    enforce_sorted=False)
        out, (h, c) = mod(seq, hx)
        out = lib.nn.utils.rnn.pad_packed_sequence(out, batch_first=mod.batch_first)[0]
    else:
        out, (h, c) = mod(x, hx)
    w = lib.linspace(-1, 1, out.numel()).reshape(out.shape)
    loss = (out * w).sum()
    if loss_states == "both":
        loss = loss + (h * h).sum() + (c * 0.5).sum()
    elif loss_states == "c":
        loss = (c * c).sum()
    leaves = [x] + list(mod.parameters()) + ([] if hx is None else list(hx))
    grads = lib.autograd.grad(loss, leaves, allow_unused=True)
    return [out, h, c] + [g for g in grads if g is not None]


# (name, LSTM kwargs, input shape, initial state given, packed lengths, loss of states)
CASES = [
    ("plain", {}, (5, 2, 3), False, None, None),
    ("one_row_one_unit", {}, (3, 1, 2), False, None, "both"),
    ("two_layers_bidir", {"num_layers": 2, "bidirectional": True}, (4, 3, 3), True, None,
     "both"),
    ("batch_first_odd_hidden", {"batch_first": True}, (3, 4, 2), True, None, "c"),
    ("packed", {"batch_first": True, "num_layers": 2}, (4, 5, 3), False, [5, 3, 3, 1],
     "both"),
    ("one_step", {}, (1, 2, 3), True, None, "both"),
]
HIDDEN = {"one_row_one_unit": 1, "batch_first_odd_hidden": 5}


def _case(lib, name, kw, shape, given, lens, seed=0):
    rng = np.random.default_rng(seed)
    lib.manual_seed(3)
    mod = lib.nn.LSTM(shape[-1], HIDDEN.get(name, 4), **kw)
    x = rng.standard_normal(shape).astype(np.float32)
    x = lib.tensor(np.asfortranarray(x))  # (a non-contiguous input)
    x.requires_grad_(True)
    hx = None
    if given:
        dirs = 2 if kw.get("bidirectional") else 1
        b = shape[0] if kw.get("batch_first") else shape[1]
        size = (kw.get("num_layers", 1) * dirs, b, HIDDEN.get(name, 4))
        hx = tuple(lib.tensor(rng.standard_normal(size).astype(np.float32),
                              requires_grad=True) for _ in range(2))
    return mod, x, hx, None if lens is None else lib.tensor(lens)


def test_fused_lstm_step_is_the_composite_bit_for_bit_and_torchs(monkeypatch):
    for name, kw, shape, given, lens, states in CASES:
        fused = _run(ember, *_case(ember, name, kw, shape, given, lens), states)
        assert fused[0].grad_fn is not None
        with monkeypatch.context() as m:
            m.setattr(ember_rnn, "fused_lstm_cell", lambda gates, c: False)
            composite = _run(ember, *_case(ember, name, kw, shape, given, lens), states)
        assert len(fused) == len(composite), name
        for a, b in zip(fused, composite):
            assert a.shape == b.shape, name
            assert np.array_equal(a.detach().numpy(), b.detach().numpy()), name
        expected = _run(torch, *_case(torch, name, kw, shape, given, lens), states)
        for a, b in zip(fused, expected):
            # NOTE: torch's oneDNN layer sums and multiplies in its own order (float32)
            assert_same(a.detach(), b.detach(), rtol=1e-4, atol=1e-5)


@pytest.mark.filterwarnings("ignore:TF32 acceleration")
def test_the_step_node_is_torchs_and_the_fallbacks_stay_composite():
    ember.manual_seed(0)
    torch.manual_seed(0)
    names = []
    for lib in (ember, torch):
        out, (h, c) = lib.nn.LSTM(3, 4)(lib.randn(3, 2, 3))
        names.append([n.name() for n, _ in h.grad_fn.next_functions + c.grad_fn.next_functions])
    assert names[0] == names[1] == ["MkldnnRnnLayerBackward0"] * 2
    # float64 (no oneDNN layer in torch: its composite's nodes), and oneDNN off
    out, (h, c) = ember.nn.LSTM(3, 4, dtype=ember.float64)(ember.randn(3, 2, 3).double())
    assert h.grad_fn.next_functions[0][0].name() == "MulBackward0"
    with ember.backends.mkldnn.flags(enabled=False):
        out, (h, c) = ember.nn.LSTM(3, 4)(ember.randn(3, 2, 3))
    assert c.grad_fn.next_functions[0][0].name() == "AddBackward0"


def test_double_backward_through_the_fused_step_is_the_composites(monkeypatch):
    def grads(fused: bool):
        ember.manual_seed(1)
        mod = ember.nn.LSTM(2, 3)
        x = ember.randn(4, 2, 2, requires_grad=True)
        with monkeypatch.context() as m:
            if not fused:
                m.setattr(ember_rnn, "fused_lstm_cell", lambda gates, c: False)
            out, (h, c) = mod(x)
            (gx,) = ember.autograd.grad((out.tanh().sum() + c.sum()), x, create_graph=True)
            (ggx,) = ember.autograd.grad((gx * gx).sum(), x)
        return gx, ggx

    (gx, ggx), (gx_ref, ggx_ref) = grads(True), grads(False)
    assert np.array_equal(gx.detach().numpy(), gx_ref.detach().numpy())
    assert gx.grad_fn.name() == gx_ref.grad_fn.name()
    # NOTE: the second derivative's graph is the composite's, but built during backward, so
    # the engine sums its contributions in another order: float32 rounding apart
    np.testing.assert_allclose(ggx.numpy(), ggx_ref.numpy(), rtol=1e-6, atol=1e-7)


def test_backward_under_a_profiler_takes_the_ops_path_with_the_same_bits(monkeypatch):
    def grads(fused: bool):
        ember.manual_seed(2)
        mod = ember.nn.LSTM(3, 4, num_layers=2)
        x = ember.randn(5, 2, 3, requires_grad=True)
        with monkeypatch.context() as m:
            if not fused:
                m.setattr(ember_rnn, "fused_lstm_cell", lambda gates, c: False)
            out, (h, c) = mod(x)
        with ember.profiler.profile():  # (an interpreter pushed after the forward)
            loss = (out * out).sum() + c.sum()
            return ember.autograd.grad(loss, [x] + list(mod.parameters()))

    for a, b in zip(grads(True), grads(False)):
        assert np.array_equal(a.numpy(), b.numpy())


def test_lstm_cell_primitive_edge_shapes_and_missing_gradients():
    rng = np.random.default_rng(2)
    for rows, n in ((0, 3), (1, 1), (3, 5)):
        gates = ember.tensor(rng.standard_normal((rows, 4 * n)).astype(np.float32),
                             requires_grad=True)
        c = ember.tensor(rng.standard_normal((rows, n)).astype(np.float32), requires_grad=True)
        assert ember_rnn.fused_lstm_cell(gates, c)
        h2, c2 = rnn_cell.lstm_cell(gates, c)
        i, f, g, o = gates.unsafe_chunk(4, -1)
        c_ref = f.sigmoid() * c + i.sigmoid() * g.tanh()
        h_ref = o.sigmoid() * c_ref.tanh()
        assert np.array_equal(h2.detach().numpy(), h_ref.detach().numpy())
        assert np.array_equal(c2.detach().numpy(), c_ref.detach().numpy())
        for pick in ((h2,), (c2,), (h2, c2)):  # only h, only c (o's block gets zeros), both
            refs = {id(h2): h_ref, id(c2): c_ref}
            got = ember.autograd.grad([p.sum() for p in pick], (gates, c), retain_graph=True)
            want = ember.autograd.grad([refs[id(p)].sum() for p in pick], (gates, c),
                                       retain_graph=True)
            for a, b in zip(got, want):
                assert np.array_equal(a.detach().numpy(), b.detach().numpy())
    # not taken: float64, a wrong shape, under an interpreter
    x64 = ember.zeros(2, 8, dtype=ember.float64)
    assert not ember_rnn.fused_lstm_cell(x64, ember.zeros(2, 2, dtype=ember.float64))
    assert not ember_rnn.fused_lstm_cell(ember.zeros(2, 7), ember.zeros(2, 2))
    seen = []

    def probe(x):
        seen.append(ember_rnn.fused_lstm_cell(x.reshape(2, 4), x[:2].reshape(2, 1) * 0))
        return x

    ember.func.vmap(probe)(ember.zeros(3, 8))
    assert seen == [False]


def test_forward_mode_and_vmap_rules_match_the_composite():
    def composite(gates, c):
        i, f, g, o = gates.unsafe_chunk(4, -1)
        c2 = f.sigmoid() * c + i.sigmoid() * g.tanh()
        return o.sigmoid() * c2.tanh(), c2

    rng = np.random.default_rng(5)

    def r(*shape):
        return ember.tensor(rng.standard_normal(shape))

    gates, c, t_gates, t_c = r(3, 8), r(3, 2), r(3, 8), r(3, 2)
    for tangents in ((t_gates, t_c), (t_gates, ember.zeros(3, 2)), (ember.zeros(3, 8), t_c)):
        _, got = ember.func.jvp(rnn_cell.lstm_cell, (gates, c), tangents)
        _, want = ember.func.jvp(composite, (gates, c), tangents)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-14)
    # vmap: both operands batched (batch on another axis), and an unbatched cell state
    batch_g, batch_c = r(3, 4, 8), r(3, 2, 4)
    got = ember.func.vmap(rnn_cell.lstm_cell, in_dims=(1, 2))(batch_g, batch_c)
    for k in range(4):
        want = rnn_cell.lstm_cell(batch_g[:, k], batch_c[:, :, k])
        for a, b in zip(got, want):
            assert np.array_equal(a[k].numpy(), b.numpy())
    c4 = r(4, 2)
    got = ember.func.vmap(rnn_cell.lstm_cell, in_dims=(0, None))(batch_g, c4)
    for k in range(3):
        for a, b in zip(got, rnn_cell.lstm_cell(batch_g[k], c4)):
            assert np.array_equal(a[k].numpy(), b.numpy())
