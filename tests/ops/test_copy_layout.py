"""The layout of a new result made from an expanded (stride-0) or size-1-strided input,
against torch: PyTorch lays a preserve_format copy out as `empty_like` does (a dense input's
strides kept, else dense in the input's dim order with a broadcast dim in its row-major
place), where NumPy's order "K" puts a stride-0 dim innermost. Covers the casts (`to`,
`type`, `.half()` ...), pointwise results (unary, binary, where) and the copies in
flip / sort / index_fill / index_put, and `repeat`, which is always row-major."""

import torch

import ember

from helpers import assert_same

LAYOUTS = {
    "expand_last": lambda L: L.arange(3.0).expand(2, 3),
    "expand_mid": lambda L: L.arange(8.0).reshape(2, 1, 4).expand(2, 3, 4),
    "expand_permuted": lambda L: L.arange(12.0).reshape(3, 4).expand(2, 3, 4).permute(2, 0, 1),
    "expand_diagonal": lambda L: L.arange(16.0).reshape(4, 4).diagonal().unsqueeze(0)
    .expand(3, 4),
    "permuted": lambda L: L.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1),
    "size_one_strides": lambda L: L.arange(6.0).reshape(6, 1).t(),
}

OPS = {
    "to_float64": lambda L, x: x.to(L.float64),
    "to_copy": lambda L, x: x.to(L.float32, copy=True),
    "to_int32": lambda L, x: x.to(L.int32),
    "half": lambda L, x: x.half(),
    "bool": lambda L, x: x.bool(),
    "complex64": lambda L, x: x.to(L.complex64),
    "type": lambda L, x: x.type(L.float64),
    "clone": lambda L, x: x.clone(),
    "empty_like": lambda L, x: L.zeros_like(x, dtype=L.float64),
    "exp": lambda L, x: x.exp(),
    "neg": lambda L, x: -x,
    "sigmoid": lambda L, x: x.sigmoid(),
    "isnan": lambda L, x: x.isnan(),
    "add_scalar": lambda L, x: x + 1,
    "eq_scalar": lambda L, x: x == 3,
    "where_scalar": lambda L, x: L.where(x > 3, x, 0.0),
    "flip": lambda L, x: x.flip(0),
    "sort": lambda L, x: x.sort(-1)[0],
    "index_fill": lambda L, x: x.index_fill(-1, L.tensor([0]), -1.0),
    "index_put": lambda L, x: x.index_put((L.tensor([0]),), L.tensor(-1.0)),
    "repeat": lambda L, x: x.repeat(*[1] * x.ndim),
}

# Size-1 dims' strides (which address nothing) are PyTorch's in the casts, clone and
# *_like; elsewhere ember's are row-major there. (TensorIterator keeps them for a binary op
# with a number, makes them row-major for a unary op; flip / sort / index_fill / index_put
# keep them.)
SIZE_ONE_OTHERWISE = {"add_scalar", "eq_scalar", "where_scalar", "flip", "sort", "index_fill",
                      "index_put"}


def test_copies_are_laid_out_as_torchs():
    for lname, make in LAYOUTS.items():
        for oname, op in OPS.items():
            if lname == "size_one_strides" and oname in SIZE_ONE_OTHERWISE:
                continue
            got, want = op(ember, make(ember)), op(torch, make(torch))
            assert got.stride() == want.stride(), (lname, oname, got.stride(), want.stride())
            assert_same(got, want)
