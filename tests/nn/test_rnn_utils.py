"""PackedSequence and pack / pad / unpad helpers against torch: values, types, grad_fns,
errors."""

import numpy as np
import pytest
import torch
from torch.nn.utils import rnn as trn

import ember
from ember.nn.utils import rnn as ern

from helpers import assert_same, graph_outline


def both(fn):
    """`fn(torch_or_ember, rnn_utils)` on both libraries: same result."""
    e, t = fn(ember, ern), fn(torch, trn)
    assert_same(e, t)
    return e, t


def raises_alike(fn, exc=RuntimeError):
    with pytest.raises(exc) as t:
        fn(torch, trn)
    with pytest.raises(exc) as e:
        fn(ember, ern)
    assert str(e.value) == str(t.value)


X = np.arange(24.0).reshape(3, 4, 2)


@pytest.mark.parametrize("method,dtype", [
    ("double", "float64"), ("float", "float32"), ("half", "float16"), ("long", "int64"),
    ("int", "int32"), ("short", "int16"), ("char", "int8"), ("byte", "uint8"),
    ("cpu", "float64")])
def test_packed_sequence_conversions_change_data_only(method, dtype):
    def run(lib, rnn):
        p = rnn.pack_padded_sequence(lib.tensor(X), [4, 2, 3], batch_first=True,
                                     enforce_sorted=False)
        q = getattr(p, method)()
        assert type(q) is type(p) and str(q.data.dtype).endswith(dtype)
        assert q.batch_sizes.dtype == lib.int64 and q.sorted_indices.dtype == lib.int64
        return tuple(q)
    both(run)


def test_packed_sequence_cuda_pin_memory_is_pinned():
    for name in ("cuda", "pin_memory"):
        raises_alike(lambda lib, rnn, n=name: getattr(
            rnn.pack_sequence([lib.ones(2, 1), lib.ones(1, 1)]), n)(),
            AssertionError if name == "cuda" else RuntimeError)
    p = ern.pack_sequence([ember.ones(2, 1), ember.ones(1, 1)])
    assert p.is_pinned() is False and p.cpu() is p and p.double().to(ember.float64) is not p


@pytest.mark.parametrize("fn", [
    lambda lib, rnn: rnn.pack_padded_sequence(lib.zeros(3, 4, 2), [4, 3], batch_first=True),
    lambda lib, rnn: rnn.pack_padded_sequence(lib.zeros(3, 2), lib.tensor([[3], [2]])),
    lambda lib, rnn: rnn.pack_padded_sequence(lib.zeros(3, 2), [2, 3]),
    lambda lib, rnn: rnn.pack_padded_sequence(lib.zeros(3, 2), [2, 0]),
    lambda lib, rnn: rnn.pack_padded_sequence(lib.zeros(0, 2), [0, 0]),
    lambda lib, rnn: rnn.pack_sequence([]),
    lambda lib, rnn: rnn.pad_sequence([]),
    lambda lib, rnn: rnn.pad_sequence([lib.zeros(2, 3), lib.zeros(2, 4)]),
    lambda lib, rnn: rnn.pad_sequence([lib.zeros(2, 3), lib.zeros(1, 4)], batch_first=True),
    lambda lib, rnn: rnn.pad_sequence(3),
])
def test_pack_and_pad_errors_match_torch(fn):
    raises_alike(fn)


def test_unpad_errors_match_torch():
    raises_alike(lambda lib, rnn: rnn.unpad_sequence(lib.zeros(5, 3, 2), lib.tensor([3, 5])),
                 ValueError)


def test_pad_sequence_broadcasts_and_casts_like_torch():
    both(lambda lib, rnn: rnn.pad_sequence([lib.ones(2, 3), lib.full((3, 1), 2)],
                                           padding_value=-1))
    both(lambda lib, rnn: rnn.pad_sequence([lib.ones(2, 3), lib.ones(1, 3)], batch_first=True,
                                           padding_side="left"))


def test_unpad_sequence_transposes_the_input_in_place_like_torch():
    for batch_first in (False, True):
        def run(lib, rnn, bf=batch_first):
            y = lib.arange(30.0).reshape((3, 5, 2) if bf else (5, 3, 2))
            out = rnn.unpad_sequence(y, lib.tensor([3, 5, 2]), batch_first=bf)
            return [y, *out]
        both(run)
    both(lambda lib, rnn: rnn.unpack_sequence(rnn.pack_sequence(
        [lib.ones(3, 2), lib.zeros(1, 2), lib.ones(2, 2)], enforce_sorted=False)))


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted", [False, True])
def test_pad_packed_sequence_values_grads_and_grad_fn(batch_first, enforce_sorted):
    lens = [4, 3, 1] if enforce_sorted else [3, 4, 1]

    def run(lib, rnn):
        x = lib.tensor(X, requires_grad=True)
        p = rnn.pack_padded_sequence(x, lens, batch_first=True, enforce_sorted=enforce_sorted)
        out, n = rnn.pad_packed_sequence(p, batch_first=batch_first, total_length=5,
                                         padding_value=-2.0)
        (out * lib.arange(2.0)).sum().backward()
        return out, n, x.grad, type(out.grad_fn).__name__
    (e, *_, en), (t, *_, tn) = both(run)
    assert en == tn


@pytest.mark.parametrize("enforce_sorted", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_packed_data_grad_fn_is_torchs(batch_first, enforce_sorted):
    lens = [4, 3, 1] if enforce_sorted else [3, 4, 1]

    def run(lib, rnn):
        x = lib.tensor(X if batch_first else X.transpose(1, 0, 2).copy(), requires_grad=True)
        p = rnn.pack_padded_sequence(x, lens, batch_first=batch_first,
                                     enforce_sorted=enforce_sorted)
        (p.data * lib.arange(1.0, 3.0)).sum().backward()
        seq = rnn.pack_sequence([lib.ones(2, requires_grad=True), lib.ones(3)],
                               enforce_sorted=False)
        return (p.data, x.grad, type(p.data.grad_fn).__name__,
                type(seq.data.grad_fn).__name__)
    e, t = run(ember, ern), run(torch, trn)
    assert e[2:] == t[2:] == ("PackPaddedSequenceBackward0",) * 2
    assert_same(e[0], t[0])
    assert_same(e[1], t[1])


def test_packed_data_without_grad_has_no_node():
    p = ern.pack_padded_sequence(ember.tensor(X), [4, 3, 1], batch_first=True)
    assert p.data.grad_fn is None


@pytest.mark.parametrize("enforce_sorted", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("source", ["leaf", "product", "transposed"])
def test_packed_data_node_has_one_edge_to_the_input_as_passed(source, batch_first,
                                                              enforce_sorted):
    # ATen packs in one op: its node's only edge goes to the input the caller passed
    # (AccumulateGrad, MulBackward0, TransposeBackward0, or IndexSelectBackward0 after the
    # unsorted case's reordering), not to one slice per time step.
    lens = [4, 3, 1] if enforce_sorted else [3, 4, 1]

    def run(lib, rnn):
        if source == "transposed":  # a batch-major leaf, made time-major by a view
            x = lib.tensor(X, requires_grad=True)
            y = x if batch_first else x.transpose(0, 1)
            y = y.transpose(0, 1).transpose(0, 1)
        else:
            x = lib.tensor(X if batch_first else X.transpose(1, 0, 2).copy(),
                           requires_grad=True)
            y = x if source == "leaf" else x * 2
        p = rnn.pack_padded_sequence(y, lens, batch_first=batch_first,
                                     enforce_sorted=enforce_sorted)
        edges = [(type(f).__name__, i) for f, i in p.data.grad_fn.next_functions]
        p.data.sum().backward()
        return edges, p.data, x.grad
    e, t = run(ember, ern), run(torch, trn)
    assert e[0] == [(n.replace("torch::autograd::", ""), i) for n, i in t[0]]
    assert_same(e[1], t[1])
    assert_same(e[2], t[2])


@pytest.mark.parametrize("lens", [[4, 3, 1], [4, 4, 2], [2, 2, 2], [4, 2, 1]])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pad_packed_sequence_graph_is_torchs(batch_first, lens):
    # ATen copies each run of steps with one batch size at once, from a view of its rows of
    # `data`: CopySlices -> ViewBackward0 -> SliceBackward0 -> PackPaddedSequenceBackward0.
    def run(lib, rnn):
        x = lib.tensor(X, requires_grad=True)
        p = rnn.pack_padded_sequence(x * 1, lens, batch_first=True)
        out = rnn.pad_packed_sequence(p, batch_first=batch_first)[0]
        (out * lib.arange(1.0, 3.0)).sum().backward()
        return graph_outline(out, 9), out, x.grad
    e, t = run(ember, ern), run(torch, trn)
    assert e[0] == t[0]
    assert_same(e[1], t[1])
    assert_same(e[2], t[2])
