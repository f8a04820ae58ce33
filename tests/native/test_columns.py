"""ops/columns.py's native kernels (the convolutions' im2col and col2im, csrc/conv.c
`unfold_columns` / `fold_columns`) against their NumPy twins (a gather of the padded image,
index_add's in-order adds): the same bits for every geometry (kernel, dilation, padding,
stride), with NaN, inf and -0.0 read or added, unbatched and batched, transposed inputs, an
empty batch, on one and two threads; and F.unfold / F.fold against torch through them."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember import native
from ember.ops.columns import col2im_p, im2col_p
from native._differential import assert_bits, threads, with_specials

pytestmark = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")

GEOMETRIES = [  # (image, k, dilation, padding, stride)
    ((7, 9), (3, 3), (1, 1), (1, 1), (1, 1)), ((8, 8), (2, 3), (2, 1), (0, 2), (2, 3)),
    ((5, 5), (1, 1), (1, 1), (0, 0), (1, 1)), ((16, 16), (3, 3), (1, 1), (1, 1), (2, 2)),
    ((6, 11), (4, 2), (1, 3), (3, 1), (1, 2)), ((1, 9), (1, 3), (1, 1), (0, 1), (1, 1))]


def _params(image, k, dl, pd, st) -> dict:
    blocks = tuple((image[i] + 2 * pd[i] - dl[i] * (k[i] - 1) - 1) // st[i] + 1
                   for i in range(2))
    return {"image": image, "k": k, "dl": dl, "pd": pd, "st": st, "blocks": blocks}


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_native_columns_are_the_numpy_twins_bits(dtype, n_threads):
    rng = np.random.default_rng(0)
    lib = native.library("conv")
    (numpy_im2col, native_im2col) = native.twins(im2col_p)
    (numpy_col2im, native_col2im) = native.twins(col2im_p)
    for geo in GEOMETRIES:
        p = _params(*geo)
        for lead in ((), (3,), (0,)):
            x = with_specials(rng.standard_normal(lead + (4,) + geo[0]).astype(dtype)) \
                if lead != (0,) else np.zeros((0, 4) + geo[0], dtype)
            for image in (x, np.swapaxes(np.swapaxes(x, -1, -2).copy(), -1, -2)):
                with threads(n_threads):
                    cols = native_im2col(lib, image, **p)
                assert_bits(cols, numpy_im2col(image, **p))
                g = with_specials(rng.standard_normal(cols.shape).astype(dtype)) \
                    if cols.size else cols
                with threads(n_threads):
                    back = native_col2im(lib, g, **p)
                assert_bits(back, numpy_col2im(g, **p))


def test_unfold_and_fold_are_torchs_through_the_native_kernels():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 7, 9)).astype(np.float32)
    x[0, 0, 2, 2], x[1, 2, 0, 0], x[0, 1, 3, 3] = np.inf, np.nan, -0.0
    got, want = [], []
    for L, out in ((ember, got), (torch, want)):
        t = L.tensor(x, requires_grad=True)
        cols = L.nn.functional.unfold(t, 3, padding=1, stride=(1, 2))
        img = L.nn.functional.fold(cols * 0.5, (7, 9), 3, padding=1, stride=(1, 2))
        img.backward(L.ones_like(img))
        out += [cols.detach().numpy(), img.detach().numpy(), t.grad.numpy(),
                type(cols.grad_fn).__name__, type(img.grad_fn).__name__]
    for e, t in zip(got, want):
        if isinstance(t, str):
            assert e == t
        else:
            assert_bits(e, t)
