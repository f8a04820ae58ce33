"""RNN, LSTM, GRU and their cells against torch: outputs, final states and all gradients."""

import warnings

import pytest
import torch

import ember
from ember import nn

from helpers import assert_same, check_module, graph_outline, rand_array

TOL = {"rtol": 1e-4, "atol": 1e-5}

CASES = [
    ("rnn_tanh", lambda ns: ns.RNN(3, 4), (5, 2, 3)),
    ("rnn_relu_2layer", lambda ns: ns.RNN(3, 4, 2, nonlinearity="relu"), (4, 2, 3)),
    ("rnn_bidir_batch_first", lambda ns: ns.RNN(3, 4, bidirectional=True, batch_first=True),
     (2, 5, 3)),
    ("rnn_unbatched_nobias", lambda ns: ns.RNN(3, 2, bias=False), (4, 3)),
    ("lstm", lambda ns: ns.LSTM(3, 4), (5, 2, 3)),
    ("lstm_2layer_bidir", lambda ns: ns.LSTM(3, 4, num_layers=2, bidirectional=True),
     (4, 3, 3)),
    ("lstm_proj_batch_first", lambda ns: ns.LSTM(3, 5, proj_size=2, batch_first=True),
     (2, 4, 3)),
    ("lstm_unbatched", lambda ns: ns.LSTM(2, 3), (4, 2)),
    ("gru", lambda ns: ns.GRU(3, 4), (5, 2, 3)),
    ("gru_3layer_bidir", lambda ns: ns.GRU(2, 3, num_layers=3, bidirectional=True), (3, 2, 2)),
    ("rnn_cell", lambda ns: ns.RNNCell(3, 4, nonlinearity="relu"), (2, 3)),
    ("lstm_cell", lambda ns: ns.LSTMCell(3, 4), (2, 3)),
    ("gru_cell", lambda ns: ns.GRUCell(3, 4, bias=False), (3,)),
]


@pytest.mark.filterwarnings("ignore:LSTM with projections")
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_recurrent_layer_matches_torch(case):
    _, factory, shape = case
    e_mod, t_mod = factory(nn), factory(torch.nn)
    assert repr(e_mod) == repr(t_mod)
    assert [(n, tuple(p.shape)) for n, p in e_mod.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in t_mod.named_parameters()]
    check_module(e_mod, t_mod, rand_array(shape), **TOL)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_recurrent_layer_seeded_init_matches_torch(case):
    _, factory, _ = case
    ember.manual_seed(11)
    torch.manual_seed(11)
    e_mod, t_mod = factory(nn), factory(torch.nn)
    t_state = t_mod.state_dict()
    for k, v in e_mod.state_dict().items():
        assert_same(v, t_state[k])


def test_initial_states_are_used_and_differentiated():
    x = rand_array((4, 2, 3))
    h0 = rand_array((2, 2, 5), seed=1)
    c0 = rand_array((2, 2, 5), seed=2)
    lstm_e, lstm_t = nn.LSTM(3, 5, num_layers=2), torch.nn.LSTM(3, 5, num_layers=2)
    check_module(lstm_e, lstm_t, x, h0, c0, **TOL, wrap=lambda m: lambda x, h, c: m(x, (h, c)))
    check_module(nn.GRU(3, 5, num_layers=2), torch.nn.GRU(3, 5, num_layers=2), x, h0, **TOL)
    check_module(nn.LSTMCell(3, 5), torch.nn.LSTMCell(3, 5), x[0], h0[0], c0[0], **TOL,
                 wrap=lambda m: lambda x, h, c: m(x, (h, c)))


def test_dropout_between_layers_matches_torch_under_the_same_seed():
    factory = lambda ns: ns.LSTM(3, 4, num_layers=3, dropout=0.4)  # noqa: E731
    e_mod, t_mod = factory(nn), factory(torch.nn)
    ember.manual_seed(5)
    torch.manual_seed(5)
    check_module(e_mod, t_mod, rand_array((4, 2, 3)), **TOL)


def test_rnn_errors_match_torch():
    e, t = nn.GRU(3, 4), torch.nn.GRU(3, 4)
    for shape in ((2, 3, 5), (5,)):
        with pytest.raises(Exception) as ee:
            e(ember.zeros(shape))
        with pytest.raises(Exception) as et:
            t(torch.zeros(shape))
        assert type(ee.value) is type(et.value) and str(ee.value) == str(et.value)
    with pytest.raises(RuntimeError) as ee:
        e(ember.zeros(2, 2, 3), ember.zeros(1, 3, 4))
    with pytest.raises(RuntimeError) as et:
        t(torch.zeros(2, 2, 3), torch.zeros(1, 3, 4))
    assert str(ee.value) == str(et.value)
    with pytest.raises(ValueError, match="proj_size has to be smaller"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.warns(UserWarning, match="dropout option adds dropout"):
        nn.GRU(3, 4, dropout=0.5)


def test_packed_sequences_match_torch():
    from torch.nn.utils import rnn as rnn_t

    from ember.nn.utils import rnn as rnn_e

    lengths = [3, 5, 2]
    x = rand_array((5, 3, 4))
    h0 = rand_array((4, 3, 6), seed=1)
    for factory in (lambda ns: ns.GRU(4, 6, num_layers=2, bidirectional=True),
                    lambda ns: ns.LSTM(4, 6, num_layers=2, bidirectional=True)):
        e_mod, t_mod = factory(nn), factory(torch.nn)
        lstm = isinstance(e_mod, nn.LSTM)

        def run(mod, lib, utils, a, h, lstm=lstm):
            packed = utils.pack_padded_sequence(a, lengths, enforce_sorted=False)
            out, state = mod(packed, (h, h * 0.5) if lstm else h)
            padded, lens = utils.pad_packed_sequence(out, total_length=6)
            return padded, lens.to(lib.float32), state

        check_module(e_mod, t_mod, x, h0, **TOL,
                     wrap=lambda m: (lambda a, h: run(m, ember, rnn_e, a, h))
                     if isinstance(m, nn.Module) else (lambda a, h: run(m, torch, rnn_t, a, h)))


def test_sequence_utils_match_torch():
    from torch.nn.utils import rnn as rnn_t

    from ember.nn.utils import rnn as rnn_e

    seqs = [rand_array((n, 2), seed=n) for n in (2, 4, 1)]
    for kw in ({}, {"batch_first": True, "padding_value": -1.0}, {"padding_side": "left"}):
        assert_same(rnn_e.pad_sequence([ember.tensor(s) for s in seqs], **kw),
                    rnn_t.pad_sequence([torch.tensor(s) for s in seqs], **kw))
    pe = rnn_e.pack_sequence([ember.tensor(s) for s in seqs], enforce_sorted=False)
    pt = rnn_t.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=False)
    for a, b in zip(pe, pt):
        assert_same(a, b)
    for a, b in zip(rnn_e.unpack_sequence(pe), rnn_t.unpack_sequence(pt)):
        assert_same(a, b)
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        rnn_e.pack_padded_sequence(ember.zeros(4, 2, 1), [2, 4])


@pytest.mark.parametrize("kind,states", [
    ("LSTM", ((1, 1, 3), (1, 2, 3))), ("LSTM", ((1, 2, 3), (1, 1, 3))), ("GRU", (1, 2, 3)),
    ("RNN", (2, 1, 3))])
def test_wrong_initial_state_errors_name_the_state_as_torch(kind, states):
    msgs = []
    for m in (ember, torch):
        rnn = getattr(m.nn, kind)(2, 3)
        hx = tuple(m.zeros(s) for s in states) if kind == "LSTM" else m.zeros(states)
        with pytest.raises(RuntimeError) as err:
            rnn(m.zeros(4, 1, 2), hx)
        msgs.append(str(err.value))
    assert msgs[0] == msgs[1]


def _same_error(fn):
    """`fn(lib)` raises the same exception type and message in ember as in torch."""
    got = []
    for m in (ember, torch):
        with pytest.raises(Exception) as err:
            fn(m)
        got.append((type(err.value), str(err.value)))
    assert got[0] == got[1]


@pytest.mark.parametrize("call", [
    lambda m, c: c(2, 3)(m.randn(4, 2), m.randn(2, 3)),
    lambda m, c: c(2, 3)(m.randn(4, 2), m.randn(4, 5)),
    lambda m, c: c(2, 3)(m.randn(4, 5), m.randn(4, 3)),
    lambda m, c: c(2, 3)(m.randn(2), m.randn(2, 3)),
    lambda m, c: c(2, 3)(m.randn(4, 2), m.randn(4, 3, 1)),
    lambda m, c: c(2, 3)(m.randn(4, 2), m.randn(3)),
    lambda m, c: c(2, 3)(m.randn(2, 2, 2)),
])
@pytest.mark.parametrize("cell", ["RNNCell", "GRUCell", "LSTMCell"])
def test_cell_input_and_state_checks_match_torch(cell, call):
    def run(m):
        c = getattr(m.nn, cell)
        if cell != "LSTMCell":
            return call(m, c)

        class Twice:  # (an LSTM cell takes the state twice, as (h, c))
            def __init__(self, *a):
                self.cell = c(*a)

            def __call__(self, x, h=None):
                return self.cell(x, None if h is None else (h, h))
        return call(m, Twice)
    _same_error(run)


@pytest.mark.parametrize("call", [
    lambda m: m.nn.LSTMCell(2, 3)(m.randn(4, 2), (m.randn(4, 3), m.randn(2, 3))),
    lambda m: m.nn.LSTMCell(2, 3)(m.randn(4, 2), (m.randn(4, 3), m.randn(4, 5))),
    lambda m: m.nn.LSTMCell(2, 3)(m.randn(4, 2), (m.randn(4, 3), m.randn(4, 3, 1))),
    lambda m: m.nn.LSTMCell(2, 3)(m.randn(4, 2), (m.randn(4, 3),)),
    lambda m: m.nn.LSTMCell(2, 3)(m.randn(4, 2), m.randn(2, 4, 3)),
    lambda m: m.nn.LSTM(3, 4)(m.randn(5, 2, 3), m.zeros(1, 2, 4)),
    lambda m: m.nn.LSTM(3, 4)(m.randn(5, 3), (m.zeros(1, 2, 4), m.zeros(1, 2, 4))),
    lambda m: m.nn.LSTM(3, 4)(m.randn(5, 2, 3), (m.zeros(2, 4), m.zeros(1, 2, 4))),
    lambda m: m.nn.LSTM(3, 4)(m.randn(5, 3), (m.zeros(1, 4), m.zeros(1, 2, 4))),
    lambda m: m.nn.GroupNorm(3, 8),
    # a packed input's state: permuted by sorted_indices first, then only its size checked
    lambda m: m.nn.GRU(2, 3, 2)(m.nn.utils.rnn.pack_sequence(
        [m.ones(3, 2)] * 3, enforce_sorted=False), m.zeros(2, 2, 3)),
    lambda m: m.nn.GRU(2, 3, 2)(m.nn.utils.rnn.pack_sequence([m.ones(3, 2)] * 3), m.zeros(2, 3)),
])
def test_lstm_state_and_group_norm_errors_match_torch(call):
    _same_error(call)


def _node(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("kw", [{}, {"batch_first": True}, {"bidirectional": True},
                                {"bidirectional": True, "batch_first": True},
                                {"num_layers": 2}, {"proj_size": 2}],
                         ids=["plain", "batch_first", "bidir", "bidir_batch_first", "2layer",
                              "proj"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_output_grad_fn_names_are_torchs(kind, kw, dtype):
    # the node a padded output ends with: the directions' concatenation, PyTorch's oneDNN
    # LSTM layer (float32 only: its bfloat16 use depends on the CPU), GRU / RNN's in-place
    # transpose for batch_first; unbatched inputs end with the squeeze
    if "proj_size" in kw and kind != "LSTM":
        pytest.skip("proj_size is an LSTM argument")
    names = []
    for lib in (ember, torch):
        torch.manual_seed(0)
        m = getattr(lib.nn, kind)(3, 4, **kw).to(getattr(lib, dtype))
        x = lib.ones(2, 5, 3, dtype=getattr(lib, dtype), requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (torch warns: oneDNN has no projections)
            out, _ = m(x)
            single, _ = m(x[0])
        names.append((_node(out), _node(single)))
    assert names[0] == names[1]


def test_output_without_grad_has_no_node():
    with ember.no_grad():
        out, _ = nn.GRU(3, 4, bidirectional=True, batch_first=True)(ember.ones(2, 5, 3))
    assert out.grad_fn is None


def test_mkldnn_flags_decide_the_lstm_node_as_torchs():
    """backends.mkldnn.flags(enabled=False) for a block, restored after: PyTorch's LSTM then
    records its composite nodes instead of MkldnnRnnLayerBackward0."""
    import torch

    names = []
    for m in (ember, torch):
        lstm = m.nn.LSTM(3, 4)
        x = m.randn(5, 2, 3)

        def node(lstm=lstm, x=x, m=m):
            g = lstm(x)[0].grad_fn
            return type(g).__name__ if m is torch else g.name()

        row = [node()]
        with m.backends.mkldnn.flags(enabled=False):
            row += [m.backends.mkldnn.enabled, node()]
        row += [m.backends.mkldnn.enabled, m.backends.mkldnn.set_flags(None)[:2]]
        names.append(row)
    assert names[0] == names[1]


@pytest.mark.parametrize("kind", ["GRUCell", "GRU", "LSTMCell"])
def test_cell_graphs_are_atens(kind):
    # ATen's cells split their gates with unsafe_chunk (UnsafeSplitBackward0), and its GRU
    # cell ends with (h - n) * z + n, not (1 - z) * n + z * h: the same value rounded as
    # torch rounds it, in a graph of AddBackward0(MulBackward0(SubBackward0, ...), ...).
    x, h = rand_array((5, 2, 3), seed=3), rand_array((1, 2, 4), seed=4)

    def run(lib):
        lib.manual_seed(0)
        mod = getattr(lib.nn, kind)(3, 4)
        return mod, lib.tensor(x), lib.tensor(h)
    (em, ex, eh), (tm, tx, th) = run(ember), run(torch)
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    if kind == "GRU":
        eo, to = em(ex, eh)[1], tm(tx, th)[1]
    elif kind == "GRUCell":
        eo, to = em(ex[0], eh[0]), tm(tx[0], th[0])
    else:
        eo, to = em(ex[0], (eh[0], eh[0] * 0.5))[0], tm(tx[0], (th[0], th[0] * 0.5))[0]
    # (a GRU layer projects every step's input at once in ATen, then unbinds it: compared
    # down to the cell's own nodes only)
    depth = 5 if kind == "GRU" else 9
    assert graph_outline(eo, depth) == graph_outline(to, depth)
    # float32 linear layers (BLAS) and sigmoid / tanh (vector math) differ in last bits
    assert_same(eo, to, **TOL)
