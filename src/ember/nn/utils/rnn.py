"""Variable-length sequences for the recurrent layers: PackedSequence and its helpers.

A PackedSequence stores the steps of a batch of sequences (sorted longest first)
time-major and without padding: `data` holds, for each time step t, the rows of the
`batch_sizes[t]` sequences still running. RNN, LSTM and GRU accept one directly.
"""

from __future__ import annotations

from collections import namedtuple

import ember as E

from ..._tensor import Tensor

__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "pack_sequence", "unpad_sequence", "unpack_sequence", "invert_permutation"]


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    if permutation is None:
        return None
    out = E.empty_like(permutation)
    out[permutation] = E.arange(permutation.numel(), dtype=permutation.dtype)
    return out


class PackedSequence(namedtuple("PackedSequence",
                                ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """(data, batch_sizes, sorted_indices, unsorted_indices), as in PyTorch."""

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs) -> PackedSequence:
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        return False


def _lengths(lengths) -> Tensor:
    if isinstance(lengths, Tensor):
        return lengths.to(E.int64)
    return E.tensor(list(lengths), dtype=E.int64)


def pack_padded_sequence(input: Tensor, lengths, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded (L, B, *) batch (or (B, L, *) with batch_first) of sequences."""
    lengths = _lengths(lengths)
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = E.sort(lengths, descending=True)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    lens = lengths.tolist()
    if any(n <= 0 for n in lens):
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element "
                           "in 'lengths' that is <= 0")
    if any(a < b for a, b in zip(lens, lens[1:])):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    sizes = [sum(1 for n in lens if n > t) for t in range(lens[0])]
    data = E.cat([input[t, :b] for t, b in enumerate(sizes)])
    return PackedSequence(data, E.tensor(sizes, dtype=E.int64), sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length: int | None = None):
    """The inverse of pack_padded_sequence: (padded batch, lengths) in the original order."""
    sizes = sequence.batch_sizes.tolist()
    max_len = len(sizes)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {max_len}")
        max_len = total_length
    batch = sizes[0]
    data = sequence.data
    steps, start = [], 0
    for b in sizes:
        step = data[start:start + b]
        if b < batch:
            filler = E.full((batch - b,) + tuple(data.shape[1:]), padding_value,
                            dtype=data.dtype)
            step = E.cat([step, filler])
        steps.append(step)
        start += b
    for _ in range(max_len - len(sizes)):
        steps.append(E.full((batch,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype))
    padded = E.stack(steps, 1 if batch_first else 0)
    lengths = E.tensor([sum(1 for b in sizes if b > i) for i in range(batch)], dtype=E.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices]
    return padded, lengths


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack variable-length sequences (each (L_i, *)) into one padded batch."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    sequences = list(sequences)
    max_len = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        extra = max_len - s.shape[0]
        if extra:
            filler = E.full((extra,) + tuple(s.shape[1:]), padding_value, dtype=s.dtype)
            s = E.cat([s, filler] if padding_side == "right" else [filler, s])
        padded.append(s)
    return E.stack(padded, 0 if batch_first else 1)


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences: Tensor, lengths, batch_first: bool = False) -> list:
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(n)] for seq, n in zip(padded_sequences, _lengths(lengths).tolist())]


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
