"""tril_indices / triu_indices (ops/composite.py), built row by row: against PyTorch over
shapes and offsets that cut no row, some rows or every row, and the dtypes it takes."""

import numpy as np
import pytest
import torch

import ember


def test_indices_match_pytorch_over_shapes_and_offsets():
    for row in (0, 1, 2, 5, 17):
        for col in (0, 1, 3, 9):
            for offset in (-20, -4, -1, 0, 1, 3, 20):
                for name in ("tril_indices", "triu_indices"):
                    for dtype in ("int64", "int32"):
                        got = getattr(ember, name)(row, col, offset, dtype=getattr(ember, dtype))
                        want = getattr(torch, name)(row, col, offset, dtype=getattr(torch, dtype))
                        assert got.dtype == getattr(ember, dtype)
                        assert got.shape == tuple(want.shape), (name, row, col, offset)
                        assert np.array_equal(got.numpy(), want.numpy()), (name, row, col, offset)


@pytest.mark.parametrize("dtype", ["int16", "uint8", "float32", "bool"])
def test_dtypes_pytorch_refuses(dtype):
    for name in ("tril_indices", "triu_indices"):
        with pytest.raises(NotImplementedError) as want:
            getattr(torch, name)(3, 3, dtype=getattr(torch, dtype))
        with pytest.raises(NotImplementedError, match=str(want.value).replace('"', '.')):
            getattr(ember, name)(3, 3, dtype=getattr(ember, dtype))
