"""An LSTM's hidden state is a pair: torch reads hx[0] and hx[1], and its kernel refuses a
longer tuple unless torch rebuilt the pair first (an unbatched input's unsqueeze, or a
packed batch's permutation)."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, copy_module_state, same_message, same_messages

X = np.random.default_rng(0).standard_normal((5, 3, 2)).astype(np.float32)


@pytest.mark.parametrize("batch_first", [False, True])
def test_three_states_are_refused_for_a_batched_input(batch_first):
    msg = same_message(lambda L: L.nn.LSTM(2, 3, batch_first=batch_first)(
        L.tensor(X), (L.zeros(1, 3 if not batch_first else 5, 3),) * 3))
    assert msg == "lstm expects two hidden states"


def test_sorted_packed_batch_refuses_three_states():
    def call(L):
        packed = L.nn.utils.rnn.pack_padded_sequence(L.tensor(X), [5, 4, 2])
        return L.nn.LSTM(2, 3)(packed, (L.zeros(1, 3, 3),) * 3)

    same_message(call)


@pytest.mark.parametrize("case", ["unbatched", "unsorted_packed"])
def test_rebuilt_pairs_ignore_a_third_state(case):
    t_lstm = torch.nn.LSTM(2, 3)
    e_lstm = ember.nn.LSTM(2, 3)
    copy_module_state(e_lstm, t_lstm)

    def run(L, lstm):
        h = L.tensor(np.linspace(-1, 1, 9, dtype=np.float32).reshape(1, 3, 3))
        if case == "unbatched":
            out, (hn, cn) = lstm(L.tensor(X[:, 0]), (h[:, 0], h[:, 1], h[:, 2]))
            return out, hn, cn
        packed = L.nn.utils.rnn.pack_padded_sequence(L.tensor(X), [2, 5, 4],
                                                     enforce_sorted=False)
        out, (hn, cn) = lstm(packed, (h, h * 0.5, h))
        return out.data, hn, cn

    # (matrix products through BLAS and tanh/sigmoid: float32's last bits vary by kernel)
    for e, t in zip(run(ember, e_lstm), run(torch, t_lstm)):
        assert_same(e, t, rtol=1e-5, atol=1e-6)


def test_parameters_and_hidden_states_on_another_device_are_refused_in_torchs_words():
    # The kernel's check, after the shape checks: the parameters, then the hidden states,
    # against the input's device (a meta tensor beside CPU ones stands for a second device).
    def calls(L):
        m = L.empty(2, 1, 3, device="meta")
        for kind in ("LSTM", "GRU", "RNN"):
            mod = getattr(L.nn, kind)

            def hidden(n, size=4, lstm=kind == "LSTM"):
                h = L.zeros(n, 1, size, device="meta")
                return (h, h) if lstm else h

            yield kind + " input", lambda mod=mod: mod(3, 4)(m)
            yield kind + " hidden", lambda mod=mod, h=hidden: mod(3, 4)(L.ones(2, 1, 3), h(1))
            yield kind + " hidden shape", lambda mod=mod, h=hidden: mod(3, 4)(
                L.ones(2, 1, 3), h(3))
            yield kind + " parameters", lambda mod=mod: mod(3, 4).to("meta")(L.ones(2, 1, 3))

    same_messages(calls)
