"""torch.lstm_cell / gru_cell / rnn_tanh_cell / rnn_relu_cell against torch 2.13."""

import numpy as np
import pytest
import torch

import ember

# NOTE: float64, so matmul blocking order cannot matter beyond 1e-12.
TOL = dict(rtol=1e-12, atol=1e-12)
CELLS = {"lstm_cell": 4, "gru_cell": 3, "rnn_tanh_cell": 1, "rnn_relu_cell": 1}


def E(t, grad=False):
    return ember.tensor(t.detach().numpy(), requires_grad=grad)


def _args(name, bias, seed=0):
    g = torch.Generator().manual_seed(seed)
    k = CELLS[name]
    x = torch.randn(3, 4, generator=g, dtype=torch.float64, requires_grad=True)
    h = torch.randn(3, 5, generator=g, dtype=torch.float64, requires_grad=True)
    c = torch.randn(3, 5, generator=g, dtype=torch.float64, requires_grad=True)
    ws = [torch.randn(k * 5, n, generator=g, dtype=torch.float64, requires_grad=True)
          for n in (4, 5)]
    bs = [torch.randn(k * 5, generator=g, dtype=torch.float64, requires_grad=True)
          for _ in range(2)] if bias else []
    hx = (h, c) if name == "lstm_cell" else h
    leaves = [x, h, c, *ws, *bs] if name == "lstm_cell" else [x, h, *ws, *bs]
    return x, hx, ws, bs, leaves


def _ember(x, hx, ws, bs):
    ex = E(x, True)
    ehx = tuple(E(t, True) for t in hx) if isinstance(hx, tuple) else E(hx, True)
    ews, ebs = [E(w, True) for w in ws], [E(b, True) for b in bs]
    leaves = [ex, *(ehx if isinstance(ehx, tuple) else [ehx]), *ews, *ebs]
    return ex, ehx, ews, ebs, leaves


@pytest.mark.parametrize("name", list(CELLS))
@pytest.mark.parametrize("bias", [True, False])
def test_cell_values_nodes_and_grads(name, bias):
    x, hx, ws, bs, leaves = _args(name, bias)
    ex, ehx, ews, ebs, eleaves = _ember(x, hx, ws, bs)
    t = getattr(torch, name)(x, hx, *ws, *bs)
    e = getattr(ember, name)(ex, ehx, *ews, *ebs)
    ts, es = (t, e) if isinstance(t, tuple) else ((t,), (e,))
    assert isinstance(e, tuple) == isinstance(t, tuple)
    for a, b in zip(es, ts):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **TOL)
        assert type(a.grad_fn).__name__ == type(b.grad_fn).__name__
    sum((u * u).sum() for u in ts).backward()
    sum((u * u).sum() for u in es).backward()
    for a, b in zip(eleaves, leaves):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), **TOL)


@pytest.mark.parametrize("name", list(CELLS))
def test_cell_matches_module(name):
    mod = {"lstm_cell": "LSTMCell", "gru_cell": "GRUCell", "rnn_tanh_cell": "RNNCell",
           "rnn_relu_cell": "RNNCell"}[name]
    kw = {"nonlinearity": "relu"} if name == "rnn_relu_cell" else {}
    cell = getattr(ember.nn, mod)(4, 5, **kw)
    x = ember.randn(2, 4)
    hx = (ember.randn(2, 5), ember.randn(2, 5)) if name == "lstm_cell" else ember.randn(2, 5)
    a = cell(x, hx)
    b = getattr(ember, name)(x, hx, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)
    for u, v in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
        np.testing.assert_array_equal(u.detach().numpy(), v.detach().numpy())


def _bad_cases():
    x, h, c = torch.randn(3, 4), torch.randn(3, 5), torch.randn(3, 5)
    wi, wh = torch.randn(20, 4), torch.randn(20, 5)
    return [
        ("lstm_cell", (x, (h, c), wi[:15], wh[:15])),
        ("lstm_cell", (x, (h, c), wi[:15], wh)),
        ("lstm_cell", (x, (h,), wi, wh)),
        ("lstm_cell", (x[:, :3], (h, c), wi, wh)),
        ("lstm_cell", (x[:2], (h, c), wi, wh)),
        ("lstm_cell", (x, (h, c[:, :4]), wi, wh)),
        ("lstm_cell", (x, h, wi, wh)),
        ("lstm_cell", (x[0], (h, c), wi, wh)),
        ("gru_cell", (x, h, wi[:15], wh)),
        ("rnn_tanh_cell", (x, h, wi[:6], wh[:5])),
        ("rnn_relu_cell", (x, h, wi[:5], wh[:6])),
        ("rnn_relu_cell", (x[None], h, wi[:5], wh[:5])),
        ("rnn_tanh_cell", (torch.tensor(1.0), h, wi[:5], wh[:5])),
    ]


def _to_ember(a):
    if isinstance(a, tuple):
        return tuple(_to_ember(t) for t in a)
    return E(a)


@pytest.mark.parametrize("name,args", _bad_cases())
def test_cell_errors(name, args):
    with pytest.raises(Exception) as want:
        getattr(torch, name)(*args)
    with pytest.raises(type(want.value)) as got:
        getattr(ember, name)(*(_to_ember(a) for a in args))
    assert str(got.value) == str(want.value)


# --- torch.lstm / gru / rnn_tanh / rnn_relu with flat weight lists ------------------------

SEQ = [  # module, mode, kwargs
    ("LSTM", "lstm", dict(num_layers=2, bidirectional=True)),
    ("LSTM", "lstm", dict(num_layers=2, proj_size=2, bias=False)),
    ("LSTM", "lstm", dict(num_layers=1, batch_first=True)),
    ("GRU", "gru", dict(num_layers=2, bidirectional=True, bias=False)),
    ("RNN", "rnn_tanh", dict(num_layers=3)),
    ("RNN", "rnn_relu", dict(num_layers=2, nonlinearity="relu", bidirectional=True)),
]


@pytest.mark.parametrize("mod,mode,kw", SEQ)
@pytest.mark.parametrize("dropout", [0.0, 0.4])
def test_sequence_forms(mod, mode, kw, dropout):
    torch.manual_seed(0)
    m = getattr(torch.nn, mod)(3, 4, dropout=dropout, **kw).double()
    x = torch.randn(5, 2, 3, dtype=torch.float64, requires_grad=True)
    dirs = 2 if kw.get("bidirectional") else 1
    layers = kw["num_layers"]
    out_size = kw.get("proj_size") or 4
    h0 = torch.randn(layers * dirs, 2 if not kw.get("batch_first") else 5, out_size,
                     dtype=torch.float64)
    if kw.get("batch_first"):
        h0 = torch.randn(layers * dirs, 5, out_size, dtype=torch.float64)
    c0 = torch.randn(layers * dirs, h0.shape[1], 4, dtype=torch.float64)
    hx = (h0, c0) if mode == "lstm" else h0
    flat = [p.detach().clone().requires_grad_(True) for p in m._flat_weights]
    args = (bool(kw.get("bias", True)), layers, dropout, True, dirs == 2,
            bool(kw.get("batch_first")))
    torch.manual_seed(3)
    t = getattr(torch, mode)(x, hx, flat, *args)
    ember.manual_seed(3)
    eflat = [E(p, True) for p in flat]
    ex = E(x, True)
    ehx = tuple(E(h) for h in hx) if mode == "lstm" else E(hx)
    e = getattr(ember, mode)(ex, ehx, eflat, *args)
    assert len(e) == len(t)
    for a, b in zip(e, t):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **TOL)
    sum((u * u).sum() for u in t).backward()
    sum((u * u).sum() for u in e).backward()
    np.testing.assert_allclose(ex.grad.numpy(), x.grad.numpy(), rtol=1e-10, atol=1e-10)
    for a, b in zip(eflat, flat):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_sequence_form_errors():
    x, h = torch.randn(5, 2, 3), torch.zeros(1, 2, 4)
    g = torch.nn.GRU(3, 4, bias=False)
    w = list(g._flat_weights)
    for name, args in (("gru", (x, h, w, True, 1, 0.0, False, False, False)),
                       ("lstm", (x, (h,), w, False, 1, 0.0, False, False, False))):
        with pytest.raises(RuntimeError) as want:
            getattr(torch, name)(*args)
        eargs = [_to_ember(a) if isinstance(a, (torch.Tensor, tuple)) else
                 [E(p) for p in a] if isinstance(a, list) else a for a in args]
        with pytest.raises(RuntimeError) as got:
            getattr(ember, name)(*eargs)
        assert str(got.value) == str(want.value)
