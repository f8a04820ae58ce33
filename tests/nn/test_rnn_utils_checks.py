"""pad_sequence's and pack_padded_sequence's argument checks in torch's order, types and
words: an empty list before an unknown padding_side (both RuntimeError, from torch's C++
kernel), sequences without a time dim, and a 1-D input read for its batch size as
Tensor.size(1) does."""

import pytest

from helpers import same_message


@pytest.mark.parametrize("seqs,side", [
    ("empty", "middle"), ("empty", "right"), ("two", "Left"), ("two", "both")])
def test_pad_sequence_checks(seqs, side):
    def call(L):
        items = [] if seqs == "empty" else [L.ones(3, 2), L.ones(1, 2)]
        return L.nn.utils.rnn.pad_sequence(items, padding_side=side)

    same_message(call)


@pytest.mark.parametrize("shapes, kind", [
    (((), ()), RuntimeError),  # the first one's trailing sizes are read first
    (((), (2,)), RuntimeError),
    (((2,), ()), IndexError),  # then every length
])
def test_pad_sequence_of_0d_sequences(shapes, kind):
    same_message(lambda L: L.nn.utils.rnn.pad_sequence([L.ones(s) for s in shapes]), kind)


@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_padded_sequence_of_a_1d_input(batch_first):
    msg = same_message(lambda L: L.nn.utils.rnn.pack_padded_sequence(
        L.ones(5), L.tensor([5]), batch_first=batch_first), IndexError)
    assert msg.startswith("Dimension out of range")


@pytest.mark.parametrize("batched", ["first", "second"])
def test_pad_sequence_has_no_batching_rule(batched):
    # torch's aten::pad_sequence has no vmap rule and no fallback: vmap refuses it
    def call(L):
        def f(v):
            other = L.ones(2) if batched == "first" else v[:2]
            items = [v, other] if batched == "first" else [L.ones(4), other]
            return L.nn.utils.rnn.pad_sequence(items, batch_first=True)

        return L.func.vmap(f)(L.ones(3, 4))

    same_message(call)
