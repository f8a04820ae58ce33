"""F.unfold's and F.fold's primitives: `im2col` (an image's sliding windows as columns) and
`col2im` (columns summed back into an image), each the other's adjoint, so each one's
gradient is the other and forward mode applies the op to the tangent.

im2col of a (C, H, W) image, one per leading sample: (C kh kw, L) columns, row (channel,
tap), column the block; each value read is copied (an inf or NaN only where it is read,
-0.0 kept), zeros where a tap reads padding. col2im: each tap's columns added where they
were read, taps in order onto zeros, as PyTorch's col2im. The NumPy kernels gather the
padded image's flat positions and add them back in order (`_windows`); the native ones are
the convolutions' own im2col and col2im (`_columns_native`), the same values.
"""

from __future__ import annotations

import numpy as np

from .. import native
from ._batching import front
from ._call_plans import Plans
from ._columns_native import col2im_native, im2col_native
from .index_ops import index_copy_p
from .registry import Primitive, apply, defbatch, deflinear, defvjp

_WINDOWS = Plans()


def _windows(image: tuple, k: tuple, dl: tuple, pd: tuple, st: tuple, blocks: tuple):
    """For an image of size `image` and its columns: the flat positions in the image padded
    by `pd` that the columns read, tap by tap (row-major over the kernel), then block by
    block; the columns inside the unpadded image (None: every one) and their flat
    positions there. Made once per geometry."""
    key = (image, k, dl, pd, st, blocks)
    got = _WINDOWS.get(key)
    if got is None:
        rows = np.arange(k[0])[:, None] * dl[0] + np.arange(blocks[0]) * st[0]  # (kh, bh)
        cols = np.arange(k[1])[:, None] * dl[1] + np.arange(blocks[1]) * st[1]  # (kw, bw)
        r, c = rows[:, None, :, None], cols[None, :, None, :]  # (kh, kw, bh, bw)
        gather = (r * (image[1] + 2 * pd[1]) + c).reshape(-1)
        r, c = np.broadcast_arrays(r - pd[0], c - pd[1])
        inside = ((r >= 0) & (r < image[0]) & (c >= 0) & (c < image[1])).reshape(-1)
        target = (r * image[1] + c).reshape(-1)[inside]
        got = _WINDOWS[key] = (gather, None if inside.all() else np.flatnonzero(inside),
                               target)
    return got


def _im2col_kernel(x, *, image, k, dl, pd, st, blocks):
    lead, (c, h, w) = x.shape[:-3], x.shape[-3:]
    padded = np.zeros(lead + (c, h + 2 * pd[0], w + 2 * pd[1]), x.dtype)
    padded[..., pd[0]:pd[0] + h, pd[1]:pd[1] + w] = x
    flat = padded.reshape(lead + (c, padded.shape[-2] * padded.shape[-1]))
    cols = flat.take(_windows((h, w), k, dl, pd, st, blocks)[0], axis=-1)
    return cols.reshape(lead + (c * k[0] * k[1], blocks[0] * blocks[1]))


def _im2col_meta(x, *, image, k, dl, pd, st, blocks):
    lead, c = x._shape[:-3], x._shape[-3]
    return lead + (c * k[0] * k[1], blocks[0] * blocks[1]), x._dtype


def _col2im_kernel(cols, *, image, k, dl, pd, st, blocks):
    lead, kk = cols.shape[:-2], k[0] * k[1]
    c = cols.shape[-2] // kk
    _, source, target = _windows(image, k, dl, pd, st, blocks)
    cols = cols.reshape(lead + (c, kk * cols.shape[-1]))
    if source is not None:
        cols = cols.take(source, axis=-1)
    zeros = np.zeros(lead + (c, image[0] * image[1]), cols.dtype)
    out = index_copy_p.kernel(zeros, target, cols, dim=len(lead) + 1, accumulate=True,
                              alpha=1)
    return out.reshape(lead + (c,) + tuple(image))


def _col2im_meta(cols, *, image, k, dl, pd, st, blocks):
    lead = cols._shape[:-2]
    return lead + (cols._shape[-2] // (k[0] * k[1]),) + tuple(image), cols._dtype


im2col_p = Primitive("im2col", _im2col_kernel, _im2col_meta, grad_name="Im2ColBackward0")
col2im_p = Primitive("col2im", _col2im_kernel, _col2im_meta, grad_name="Col2ImBackward0")
# (both take one set of params, the image's size among them: each one's gradient is the other)
defvjp(im2col_p, lambda g, out, x, **p: apply(col2im_p, g, **p), reads=((),))
defvjp(col2im_p, lambda g, out, cols, **p: apply(im2col_p, g, **p), reads=((),))
deflinear(im2col_p)
deflinear(col2im_p)
native.register(im2col_p, "conv", im2col_native)
native.register(col2im_p, "conv", col2im_native)


def _batched(prim: Primitive, image_dims: int):
    """vmap of either: the batch dim in front, merged with a leading sample dim if any."""
    def rule(args, dims, **params):
        x = front(args[0], dims[0])
        b = x.shape[0]
        if x.ndim == image_dims + 1:  # (no sample dim of its own: the batch is one)
            return apply(prim, x, **params), 0
        out = apply(prim, x.reshape((b * x.shape[1],) + tuple(x.shape[2:])), **params)
        return out.reshape((b, x.shape[1]) + tuple(out.shape[1:])), 0

    return rule


defbatch(im2col_p, _batched(im2col_p, 3))
defbatch(col2im_p, _batched(col2im_p, 2))

