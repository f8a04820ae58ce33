"""Variable-length sequences for the recurrent layers: PackedSequence and its helpers.

A PackedSequence stores the steps of a batch of sequences (sorted longest first)
time-major and without padding: `data` holds, for each time step t, the rows of the
`batch_sizes[t]` sequences still running. RNN, LSTM and GRU accept one directly.
"""

from __future__ import annotations

from collections import namedtuple

import ember as E

from ..._tensor import Tensor
from ...ops.registry import rename_node

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
        """`data` converted as by Tensor.to (the indices follow its device; `batch_sizes`
        stays on the CPU); `self` when nothing changes."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        sorted_indices, unsorted_indices = (
            None if t is None else t.to(data.device)
            for t in (self.sorted_indices, self.unsorted_indices))
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def cuda(self, *args, **kwargs) -> PackedSequence:
        ex = E.tensor((), dtype=self.data.dtype, device=self.data.device).to(*args, **kwargs)
        if ex.is_cuda:
            return self.to(*args, **kwargs)
        return self.to(*args, **{**kwargs, "device": "cuda"})

    def cpu(self, *args, **kwargs) -> PackedSequence:
        ex = E.tensor((), dtype=self.data.dtype, device=self.data.device).to(*args, **kwargs)
        if ex.device.type == "cpu":
            return self.to(*args, **kwargs)
        return self.to(*args, **{**kwargs, "device": "cpu"})

    def pin_memory(self) -> PackedSequence:
        pin = [None if t is None else t.pin_memory()
               for t in (self.sorted_indices, self.unsorted_indices)]
        return type(self)(self.data.pin_memory(), self.batch_sizes, *pin)

    def double(self) -> PackedSequence:
        return self.to(dtype=E.double)

    def float(self) -> PackedSequence:
        return self.to(dtype=E.float)

    def half(self) -> PackedSequence:
        return self.to(dtype=E.half)

    def long(self) -> PackedSequence:
        return self.to(dtype=E.long)

    def int(self) -> PackedSequence:
        return self.to(dtype=E.int)

    def short(self) -> PackedSequence:
        return self.to(dtype=E.short)

    def char(self) -> PackedSequence:
        return self.to(dtype=E.int8)

    def byte(self) -> PackedSequence:
        return self.to(dtype=E.uint8)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        return self.data.is_pinned()


def _lengths(lengths) -> Tensor:
    if isinstance(lengths, Tensor):
        return lengths.to(E.int64)
    return E.as_tensor(lengths, dtype=E.int64, device="cpu")


def pack_padded_sequence(input: Tensor, lengths, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded (L, B, *) batch (or (B, L, *) with batch_first) of sequences."""
    lengths = _lengths(lengths)
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = E.sort(lengths, descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    # the checks of ATen's _pack_padded_sequence, in its order
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if lengths.ndim != 1 or lengths.device.type != "cpu":
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{lengths.ndim}D {lengths.device.type} Long tensor")
    input.size(1)  # (IndexError in torch's words if 1-D, whichever dim holds the batch)
    lens, batch = lengths.tolist(), input.size(0 if batch_first else 1)
    if len(lens) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lens)} (batch_size={batch})")
    if lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element "
                           "in 'lengths' that is <= 0")
    if any(a < b for a, b in zip(lens, lens[1:])):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    sizes = [sum(1 for n in lens if n > t) for t in range(lens[0])]
    # One gather of the (t, b) rows still running, time-major: like ATen's single op, the
    # node's one edge goes to `input` as the caller passed it.
    steps = E.tensor([t for t, b in enumerate(sizes) for _ in range(b)], dtype=E.int64)
    rows = E.tensor([i for b in sizes for i in range(b)], dtype=E.int64)
    if input.device.type != "cpu":
        steps, rows = steps.to(input.device), rows.to(input.device)
    data = input[rows, steps] if batch_first else input[steps, rows]
    if data.grad_fn is not None:
        rename_node(data.grad_fn, "PackPaddedSequenceBackward0")
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
    # NOTE: as ATen's _pad_packed_sequence: each step copied into a filled (T, B, *) tensor,
    # then transposed for batch_first (so the grad_fns are CopySlices / TransposeBackward0).
    padded = E.full((max_len, batch) + tuple(data.shape[1:]), padding_value, dtype=data.dtype,
                    device=data.device)
    # (as ATen: one copy per run of steps with the same batch size, its rows of `data`
    # viewed as (steps, batch, *), so the graph reads CopySlices -> ViewBackward0 -> ...)
    start, rest, t = 0, tuple(data.shape[1:]), 0
    while t < len(sizes):
        b, t1 = sizes[t], t
        while t1 < len(sizes) and sizes[t1] == b:
            t1 += 1
        n = (t1 - t) * b
        padded[t:t1, :b].copy_(data[start:start + n].view((t1 - t, b) + rest))
        start, t = start + n, t1
    if batch_first:
        padded = padded.transpose(0, 1)
    lengths = E.tensor([sum(1 for b in sizes if b > i) for i in range(batch)], dtype=E.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices]
    return padded, lengths


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack variable-length sequences (each (L_i, *)) into one padded batch."""
    from collections.abc import Iterable

    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg of "
                           f"type: {type(sequences)}")
    sequences = tuple(sequences)
    if any(isinstance(t, Tensor) and t._is_wrapper for t in sequences):  # (under vmap)
        raise RuntimeError("Batching rule not implemented for aten::pad_sequence. We could not "
                           "generate a fallback.")
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    # NOTE: as ATen's pad_sequence: a filled tensor shaped by the first sequence, each
    # sequence copied in (so others broadcast, or fail as copy_ does).
    first = sequences[0]
    if first.ndim == 0:  # (ATen slices the first one's trailing sizes before any length)
        raise RuntimeError("ArrayRef: invalid slice, N = 1; size = 0")
    if any(s.ndim == 0 for s in sequences):
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    max_len = max(s.shape[0] for s in sequences)
    out = E.full((len(sequences), max_len) + tuple(first.shape[1:]) if batch_first
                 else (max_len, len(sequences)) + tuple(first.shape[1:]),
                 padding_value, dtype=first.dtype, device=first.device)
    for i, s in enumerate(sequences):
        n = s.shape[0]
        start = 0 if padding_side == "right" else max_len - n
        if batch_first:
            out[i].narrow(0, start, n).copy_(s)
        else:
            out.narrow(0, start, n).select(1, i).copy_(s)
    return out


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    lengths = E.as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False) -> list:
    """The sequences of a padded batch, each cut to its length. As in PyTorch, a time-major
    batch is transposed in place (the caller's tensor becomes batch-major)."""
    if not batch_first:
        padded_sequences.transpose_(0, 1)
    idx = E.arange(padded_sequences.shape[1], device=lengths.device)
    return [seq[idx < length] for seq, length in zip(padded_sequences, lengths, strict=True)]


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
