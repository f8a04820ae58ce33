"""The block-sparse mask format of flex attention: `BlockMask` and the conversions between
a dense (rows x cols) block grid and its ordered form (blocks per row + column indices).

The ordered form is what PyTorch's kernels read: for each row of query blocks, how many
key/value blocks it visits (`kv_num_blocks`) and which ones, listed first
(`kv_indices`, the rest of the row in unspecified order). Blocks every element of which
is kept are listed apart (`full_kv_*`), so a kernel can skip the mask there; the
transposed tables (`q_*`) serve the backward. All tables are int32, as PyTorch's.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import ember as E

from ..._tensor import Tensor

_DEFAULT_SPARSE_BLOCK_SIZE = 128
_LARGE_SPARSE_BLOCK_SIZE = 1 << 30


def noop_mask(batch: Tensor, head: Tensor, token_q: Tensor, token_kv: Tensor) -> Tensor:
    """The mask_mod that keeps every score (a 0-d True)."""
    return batch.new_ones(size=(), dtype=E.bool, device=batch.device)


def _sliced_mask_mod_error(batch: Tensor, head: Tensor, token_q: Tensor,
                           token_kv: Tensor) -> Tensor:
    """The mask_mod a sliced BlockMask carries: slicing drops the original mask_mod, and
    using it raises with the fix (take mask_mod from the unsliced mask), as PyTorch's."""
    raise RuntimeError(
        "Cannot use mask_mod from a sliced BlockMask. When you slice a BlockMask using [], "
        "the mask_mod attribute is reset. You must set it from the original BlockMask's "
        "mask_mod.\n\nIncorrect usage:\n  base_mask = create_block_mask(my_mask_fn, ...)\n"
        "  sliced_mask = base_mask[:, :, block_idx]\n"
        "  sliced_mask.mask_mod = apply_offset(sliced_mask.mask_mod, offset)  # WRONG!\n\n"
        "Correct usage:\n  base_mask = create_block_mask(my_mask_fn, ...)\n"
        "  sliced_mask = base_mask[:, :, block_idx]\n"
        "  sliced_mask.mask_mod = apply_offset(base_mask.mask_mod, offset)  # Use base_mask!")


def _ordered_to_dense(num_blocks: Tensor, indices: Tensor, num_cols: int) -> Tensor:
    """The int32 0/1 block grid (..., rows, num_cols) that an ordered table describes: the
    first num_blocks[r] entries of indices[r] are set."""
    max_entries = indices.shape[-1]
    listed = E.arange(max_entries, dtype=E.int32) < num_blocks.unsqueeze(-1)
    # entries past the count go to one spare column, cut off at the end
    cols = E.where(listed, indices, num_cols).long()
    dense = E.zeros(*indices.shape[:-1], num_cols + 1, dtype=E.int32)
    dense.scatter_(-1, cols, 1)
    return dense[..., :num_cols].contiguous()


def _dense_to_ordered(dense: Tensor) -> tuple[Tensor, Tensor]:
    """The ordered table of a block grid: blocks per row, and the column indices with the
    set ones first, each group in ascending order (a stable descending sort)."""
    dense = dense.to(E.int32)
    num_blocks = dense.sum(dim=-1).to(E.int32).contiguous()
    indices = E.argsort(dense, dim=-1, descending=True, stable=True).to(E.int32).contiguous()
    return num_blocks, indices


def _transpose_ordered(num_blocks: Tensor, indices: Tensor) -> tuple[Tensor, Tensor]:
    """The ordered table along the other axis (query blocks per key/value block)."""
    dense = _ordered_to_dense(num_blocks, indices, indices.shape[-1])
    return _dense_to_ordered(dense.transpose(-2, -1))


def _adjust_num_blocks_and_indices(num_blocks: Tensor, indices: Tensor, rows: int,
                                   cols: int) -> tuple[Tensor, Tensor]:
    """An ordered table cropped to its first `rows` x `cols` blocks."""
    indices = indices[:, :, :rows, :cols]
    num_blocks = num_blocks[:, :, :rows]
    num_blocks = E.where(num_blocks < cols, num_blocks, cols)
    num_blocks = E.sum(indices < num_blocks[:, :, :, None], dim=-1).to(E.int32)
    return num_blocks, indices


def _shape_name(x: Tensor | None):
    return x.shape if x is not None else None


class BlockMask:
    """A block-sparse attention mask: per (batch, head), the key/value blocks each row of
    query blocks attends to (`kv_num_blocks`, `kv_indices`), the fully kept ones apart
    (`full_kv_*`), their transposes (`q_*`), the block size (Q, KV) and the element-wise
    `mask_mod` that decides inside partial blocks."""

    _TENSOR_ATTRS = ["kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices",
                     "q_num_blocks", "q_indices", "full_q_num_blocks", "full_q_indices",
                     "dq_write_order", "dq_write_order_full", "dq_kv_order"]

    def __init__(self, seq_lengths: tuple[int, int], kv_num_blocks: Tensor,
                 kv_indices: Tensor, full_kv_num_blocks: Tensor | None,
                 full_kv_indices: Tensor | None, q_num_blocks: Tensor | None,
                 q_indices: Tensor | None, full_q_num_blocks: Tensor | None,
                 full_q_indices: Tensor | None,
                 BLOCK_SIZE: tuple[int, int] = (_DEFAULT_SPARSE_BLOCK_SIZE,
                                                _DEFAULT_SPARSE_BLOCK_SIZE),
                 mask_mod: Callable = noop_mask, *, dq_write_order: Tensor | None = None,
                 dq_write_order_full: Tensor | None = None,
                 dq_kv_order: Tensor | None = None,
                 dq_kv_order_spt: bool | None = None) -> None:
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError("full_kv_num_blocks and full_kv_indices must be both "
                                 "provided or omitted")
        if (full_q_num_blocks is None) != (full_q_indices is None):
            raise AssertionError("full_q_num_blocks and full_q_indices must be both "
                                 "provided or omitted")
        if dq_write_order_full is not None and dq_write_order is None:
            raise ValueError("dq_write_order_full requires dq_write_order")
        self.seq_lengths = seq_lengths
        self.kv_num_blocks, self.kv_indices = kv_num_blocks, kv_indices
        self.full_kv_num_blocks, self.full_kv_indices = full_kv_num_blocks, full_kv_indices
        self.q_num_blocks, self.q_indices = q_num_blocks, q_indices
        self.full_q_num_blocks, self.full_q_indices = full_q_num_blocks, full_q_indices
        self.dq_write_order, self.dq_write_order_full = dq_write_order, dq_write_order_full
        self.dq_kv_order, self.dq_kv_order_spt = dq_kv_order, dq_kv_order_spt
        self.BLOCK_SIZE = BLOCK_SIZE
        self.mask_mod = mask_mod

    @classmethod
    def from_kv_blocks(cls, kv_num_blocks: Tensor, kv_indices: Tensor,
                       full_kv_num_blocks: Tensor | None = None,
                       full_kv_indices: Tensor | None = None,
                       BLOCK_SIZE: int | tuple[int, int] = _DEFAULT_SPARSE_BLOCK_SIZE,
                       mask_mod: Callable | None = None,
                       seq_lengths: tuple[int, int] | None = None,
                       compute_q_blocks: bool = True, *,
                       dq_write_order: Tensor | None = None,
                       dq_write_order_full: Tensor | None = None,
                       dq_kv_order: Tensor | bool | None = None) -> BlockMask:
        """A BlockMask from its key/value tables, deriving the query-side (transposed)
        ones; seq_lengths default to the block counts times the block size."""
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError("full_kv_num_blocks and full_kv_indices must be both "
                                 "provided or omitted")
        q_num = q_idx = full_q_num = full_q_idx = None
        if compute_q_blocks:
            q_num, q_idx = _transpose_ordered(kv_num_blocks, kv_indices)
            if full_kv_num_blocks is not None:
                full_q_num, full_q_idx = _transpose_ordered(full_kv_num_blocks,
                                                            full_kv_indices)
        if isinstance(BLOCK_SIZE, int):
            BLOCK_SIZE = (BLOCK_SIZE, BLOCK_SIZE)
        if seq_lengths is None:
            seq_lengths = (kv_indices.shape[-2] * BLOCK_SIZE[0],
                           kv_indices.shape[-1] * BLOCK_SIZE[1])
        if dq_kv_order is not None and not isinstance(dq_kv_order, (bool, Tensor)):
            raise ValueError("dq_kv_order must be a bool, Tensor, or None")
        return cls(seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks,
                   full_kv_indices, q_num, q_idx, full_q_num, full_q_idx,
                   BLOCK_SIZE=BLOCK_SIZE,
                   mask_mod=mask_mod if mask_mod is not None else noop_mask,
                   dq_write_order=dq_write_order, dq_write_order_full=dq_write_order_full,
                   dq_kv_order=dq_kv_order if isinstance(dq_kv_order, Tensor) else None,
                   dq_kv_order_spt=dq_kv_order if isinstance(dq_kv_order, bool) else None)

    def as_tuple(self, flatten: bool = True) -> tuple:
        """The fields in PyTorch's order (seq lengths, the tables, block size, mask_mod);
        flatten spreads the two pairs into four ints."""
        block = tuple(self.BLOCK_SIZE) if flatten else (self.BLOCK_SIZE,)
        seq = tuple(self.seq_lengths) if flatten else (self.seq_lengths,)
        tables = tuple(getattr(self, a) for a in self._TENSOR_ATTRS)
        return (*seq, *tables, self.dq_kv_order_spt, *block, self.mask_mod)

    @property
    def shape(self) -> tuple[int, ...]:
        """(*batch dims of the tables, Q_LEN, KV_LEN)."""
        return tuple(self.kv_indices.shape[:-2]) + tuple(self.seq_lengths)

    def numel(self) -> int:
        """The element count of the mask (sparsity not counted)."""
        return math.prod(self.shape)

    def sparsity(self) -> float:
        """The percentage of the mask's elements in blocks that are skipped."""
        computed = self.kv_num_blocks.sum()
        if self.full_kv_num_blocks is not None:
            computed += self.full_kv_num_blocks.sum()
        size = computed.item() * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1]
        return 100 * (1 - size / self.numel())

    def to_dense(self) -> Tensor:
        """The int32 0/1 grid of visited blocks (partial or full)."""
        dense = _ordered_to_dense(self.kv_num_blocks, self.kv_indices,
                                  self.kv_indices.shape[-1])
        if self.full_kv_num_blocks is not None:
            dense = dense | _ordered_to_dense(self.full_kv_num_blocks, self.full_kv_indices,
                                              self.full_kv_indices.shape[-1])
        return dense

    def to_string(self, grid_size: int | tuple[int, int] = (20, 20), limit: int = 4) -> str:
        """A picture of the block grid per (batch, head), each cell two characters: full
        '█', partly visited '░' (when cells are merged to fit grid_size), empty ' '."""
        dense = self.to_dense()
        *batch_dims, rows, cols = dense.shape
        if isinstance(grid_size, int):
            max_rows = max_cols = grid_size
        elif grid_size == -1:
            max_rows, max_cols = rows, cols
        else:
            max_rows, max_cols = grid_size
        row_step = max(1, -(-rows // max_rows))
        col_step = max(1, -(-cols // max_cols))

        def picture(*idx: int) -> str:
            grid = dense
            for i in idx:
                grid = grid[i]
            text = f"{idx}\n"
            for r in range(0, rows, row_step):
                for c in range(0, cols, col_step):
                    share = grid[r:r + row_step, c:c + col_step].float().mean().item()
                    text += ("█" if share == 1 else " " if share == 0 else "░") * 2
                text += "\n"
            return text

        parts = []
        for n, idx in enumerate(itertools.product(*[range(d) for d in batch_dims])):
            if n == limit:
                parts += ["...", "To print out more, set BlockMask.to_string(limit=N)",
                          "You can also index (BlockMask[batch, head]) to choose a "
                          "specific batch or head"]
                break
            parts.append(picture(*idx))
        return "\n".join(parts)

    def __str__(self) -> str:
        return (f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, \n"
                f"{self.to_string().strip()}\n)")

    def __repr__(self) -> str:
        name = getattr(self.mask_mod, "__name__", self.mask_mod)
        return ("BlockMask(\n"
                f"    kv_num_blocks={self.kv_num_blocks.shape},\n"
                f"    kv_indices={self.kv_indices.shape},\n"
                f"    full_kv_num_blocks={_shape_name(self.full_kv_num_blocks)},\n"
                f"    full_kv_indices={_shape_name(self.full_kv_indices)},\n"
                f"    q_num_blocks={_shape_name(self.q_num_blocks)},\n"
                f"    q_indices={_shape_name(self.q_indices)},\n"
                f"    full_q_num_blocks={_shape_name(self.full_q_num_blocks)},\n"
                f"    full_q_indices={_shape_name(self.full_q_indices)},\n"
                f"    BLOCK_SIZE={self.BLOCK_SIZE},\n"
                f"    shape={self.shape},\n"
                f"    sparsity={self.sparsity():.2f}%,\n"
                f"    mask_mod={name}\n)")

    def __getitem__(self, index) -> BlockMask:
        """The mask of some batches / heads / query-block rows; an int keeps its dim (as
        PyTorch's), and the result's mask_mod raises if used (see _sliced_mask_mod_error)."""
        if self.dq_kv_order is not None:
            raise NotImplementedError(
                "Slicing BlockMask with tensor dq_kv_order is not supported yet. Construct "
                "a new BlockMask with matching precomputed dq_write_order metadata.")
        index = index if isinstance(index, tuple) else (index,)
        padded = (*index, slice(None), slice(None), slice(None))[:3]
        sizes = self.kv_num_blocks.shape[:3]
        index = tuple((slice(i + n, i + n + 1) if -n <= i < 0 else slice(i, i + 1))
                      if isinstance(i, int) else i for i, n in zip(padded, sizes))
        full_num = full_idx = None
        if self.full_kv_num_blocks is not None:
            full_num, full_idx = self.full_kv_num_blocks[index], self.full_kv_indices[index]
        out = BlockMask.from_kv_blocks(
            self.kv_num_blocks[index], self.kv_indices[index], full_num, full_idx,
            BLOCK_SIZE=self.BLOCK_SIZE, mask_mod=_sliced_mask_mod_error,
            seq_lengths=self.seq_lengths, compute_q_blocks=self.q_indices is not None)
        out.dq_kv_order_spt = self.dq_kv_order_spt
        return out

    def _adjust(self, new_q_len: int, new_kv_len: int) -> BlockMask:
        """The mask cropped to its upper-left new_q_len x new_kv_len corner."""
        rows = -(-new_q_len // self.BLOCK_SIZE[0])
        cols = -(-new_kv_len // self.BLOCK_SIZE[1])
        num, idx = _adjust_num_blocks_and_indices(self.kv_num_blocks, self.kv_indices,
                                                  rows, cols)
        full_num = full_idx = None
        if self.full_kv_num_blocks is not None:
            full_num, full_idx = _adjust_num_blocks_and_indices(
                self.full_kv_num_blocks, self.full_kv_indices, rows, cols)
        return self.from_kv_blocks(num, idx, full_num, full_idx, BLOCK_SIZE=self.BLOCK_SIZE,
                                   mask_mod=self.mask_mod,
                                   seq_lengths=(new_q_len, new_kv_len),
                                   compute_q_blocks=self.q_indices is not None)

    def to(self, device) -> BlockMask:
        """A BlockMask with every table moved to `device`."""
        moved = {a: (None if getattr(self, a) is None else getattr(self, a).to(device))
                 for a in self._TENSOR_ATTRS}
        return BlockMask(seq_lengths=self.seq_lengths, **moved, BLOCK_SIZE=self.BLOCK_SIZE,
                         mask_mod=self.mask_mod, dq_kv_order_spt=self.dq_kv_order_spt)
