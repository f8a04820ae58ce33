"""The functional recurrent cells PyTorch exposes at the top level (`torch.lstm_cell`,
`torch.gru_cell`, `torch.rnn_tanh_cell`, `torch.rnn_relu_cell`): one step of the cell
with its weights passed in, the same arithmetic as nn.LSTMCell & co., with ATen's checks
(2-D input only, in its order and words)."""

from __future__ import annotations

import ember as E

from .._tensor import Tensor
from . import functional as F
from .modules.rnn import _gru_step, _lstm_step, _rnn_step

__all__ = ["lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell"]


def _check(input: Tensor, states: list, w_ih: Tensor, w_hh: Tensor, chunks: int) -> None:
    """ATen's cell checks: the input's feature size, each state's batch and hidden size,
    then both weights' first dims (chunks * hidden_size)."""
    if input.dim() == 0:
        raise IndexError("Dimension specified as 1 but tensor has no dimensions")
    if input.dim() == 1:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but "
                         "got 1)")
    if input.shape[1] != w_ih.shape[1]:
        raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected "
                           f"{w_ih.shape[1]}")
    hidden = w_hh.shape[1]
    for i, h in enumerate(states):
        if h.shape[0] != input.shape[0]:
            raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{i} "
                               f"batch size {h.shape[0]}")
        if h.shape[1] != hidden:
            raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {h.shape[1]}, "
                               f"expected {hidden}")
    for name, w in (("weight_ih", w_ih), ("weight_hh", w_hh)):
        if w.shape[0] != chunks * hidden:
            raise RuntimeError(f"{name} first dim must be {chunks} * hidden_size = "
                               f"{chunks * hidden}, but got {w.shape[0]}")


def lstm_cell(input: Tensor, hx, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
              b_hh: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """One LSTM step: (h', c') from input (N, in) and hx = (h, c), gates i, f, g, o."""
    if isinstance(hx, Tensor) or not isinstance(hx, (tuple, list)):
        raise TypeError(f"lstm_cell(): argument 'hx' (position 2) must be tuple of Tensors, "
                        f"not {type(hx).__name__}")
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    _check(input, list(hx), w_ih, w_hh, 4)
    return _lstm_step(F.linear(input, w_ih, b_ih), tuple(hx), w_hh, b_hh, None)


def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
             b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """One GRU step: h' from input (N, in) and h (N, hidden), gates r, z, n."""
    _check(input, [hx], w_ih, w_hh, 3)
    return _gru_step(F.linear(input, w_ih, b_ih), hx, w_hh, b_hh)


def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """One Elman step: tanh(input W_ih^T + b_ih + h W_hh^T + b_hh)."""
    _check(input, [hx], w_ih, w_hh, 1)
    return _rnn_step(F.linear(input, w_ih, b_ih), hx, w_hh, b_hh, False)


def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """One Elman step with relu: relu(input W_ih^T + b_ih + h W_hh^T + b_hh)."""
    _check(input, [hx], w_ih, w_hh, 1)
    return _rnn_step(F.linear(input, w_ih, b_ih), hx, w_hh, b_hh, True)


# --- whole-sequence forms with flat weight lists (torch.lstm, torch.gru, torch.rnn_*) ------

def _run_layers(mode: str, input: Tensor, states: list, params, has_biases: bool,
                num_layers: int, dropout: float, train: bool, bidirectional: bool,
                batch_first: bool):
    """Every layer and direction over (T, B, F) input (B, T, F with batch_first), from
    `states[k]` for layer k // dirs, direction k % dirs; returns (output, final states).
    `params` holds per layer and direction w_ih, w_hh[, b_ih, b_hh][, w_hr]."""
    dirs = 2 if bidirectional else 1
    params = list(params)
    per = (4 if has_biases else 2) + (1 if mode == "lstm" and _projected(states) else 0)
    if len(params) != per * num_layers * dirs:
        raise RuntimeError("got an incorrect number of RNN parameters")
    x = input.transpose(0, 1) if batch_first else input
    steps = list(x.unbind(0))
    finals = []
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            w = params[k * per:(k + 1) * per]
            b_ih, b_hh = (w[2], w[3]) if has_biases else (None, None)
            w_hr = w[-1] if per in (3, 5) else None
            state = states[k]
            seq = [None] * len(steps)
            order = range(len(steps) - 1, -1, -1) if d == 1 else range(len(steps))
            for t in order:
                xw = F.linear(steps[t], w[0], b_ih)
                if mode == "lstm":
                    state = _lstm_step(xw, state, w[1], b_hh, w_hr)
                    seq[t] = state[0]
                elif mode == "gru":
                    state = seq[t] = _gru_step(xw, state, w[1], b_hh)
                else:
                    state = seq[t] = _rnn_step(xw, state, w[1], b_hh, mode == "rnn_relu")
            outs.append(seq)
            finals.append(state)
        steps = outs[0] if dirs == 1 else [E.cat(pair, -1) for pair in zip(*outs)]
        if dropout and train and layer < num_layers - 1:
            steps = list(F.dropout(E.stack(steps), dropout, True).unbind(0))
    out = E.stack(steps)
    return (out.transpose(0, 1) if batch_first else out), finals


def _projected(states: list) -> bool:
    h, c = states[0]
    return h.shape[-1] != c.shape[-1]


def lstm(input: Tensor, hx, params, has_biases: bool, num_layers: int, dropout: float,
         train: bool, bidirectional: bool, batch_first: bool) -> tuple[Tensor, Tensor, Tensor]:
    """A whole (multi-layer, maybe bidirectional) LSTM over a padded batch, weights given
    as one flat list: (output, h_n, c_n)."""
    if len(hx) != 2:
        raise RuntimeError("lstm expects two hidden states")
    states = list(zip(hx[0].unbind(0), hx[1].unbind(0)))
    out, finals = _run_layers("lstm", input, states, params, has_biases, num_layers, dropout,
                              train, bidirectional, batch_first)
    return out, E.stack([h for h, _ in finals]), E.stack([c for _, c in finals])


def _single_state(mode: str):
    def run(input: Tensor, hx: Tensor, params, has_biases: bool, num_layers: int,
            dropout: float, train: bool, bidirectional: bool,
            batch_first: bool) -> tuple[Tensor, Tensor]:
        out, finals = _run_layers(mode, input, list(hx.unbind(0)), params, has_biases,
                                  num_layers, dropout, train, bidirectional, batch_first)
        return out, E.stack(finals)

    run.__name__ = run.__qualname__ = mode
    run.__doc__ = (f"A whole {mode.upper().replace('_', ' ')} over a padded batch, weights "
                   f"given as one flat list: (output, h_n).")
    return run


gru = _single_state("gru")
rnn_tanh = _single_state("rnn_tanh")
rnn_relu = _single_state("rnn_relu")

__all__ += ["lstm", "gru", "rnn_tanh", "rnn_relu"]
