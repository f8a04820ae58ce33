"""The draw ops: new tensors of values taken from a generator, the draw made in the op.

`draw` (a factory) and `draw_like` (values laid out like a tensor, read for its shape and
strides only) call the draw, `make(n, contiguous)`, in their kernel: n values in memory
order, `contiguous` picking PyTorch's kernel path where it has two (normal). Because the
draw happens inside the op, an interpreter decides how much is drawn: vmap with
`randomness="different"` draws the whole batch at once, as PyTorch does. Every random op
in random_ops.py and bernoulli.py draws through one of them.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .._core import mark_random
from .._device import CPU
from .._storage import Storage
from .._tensor import Tensor, _make, _wrap
from .._view import contiguous_strides, is_contiguous, numel
from .._view import like_strides as _like_strides
from .registry import Primitive, batch_by_loop, bind, defbatch, nondifferentiable
from .views import move_to_front


def like_strides(x: Tensor, memory_format=None) -> tuple[int, ...]:
    """The strides `empty_like(x, memory_format=...)` gives: by default (preserve_format) x's
    own when dense, else dense in x's dim order, a stride-0 (expanded) dim keeping its
    row-major place; a named format's own strides otherwise."""
    return _like_strides(x._shape, x.stride(), memory_format)


def _draw_layout(args: tuple, params: dict):
    """The shape, strides and contiguity a draw fills: a factory's own, or those of the tensor
    it is drawn like (`dense`: the fresh layout `empty_like` gives it; else its own, for an
    in-place fill, whose contiguity picks PyTorch's kernel path)."""
    if not args:
        shape, stride = params["shape"], params["stride"]
        return shape, stride, stride is None or is_contiguous(shape, stride)
    like = args[0]
    shape, stride = like._shape, like_strides(like, params.get("memory_format"))
    own = stride if params["dense"] else like.stride()
    return shape, stride, is_contiguous(shape, own)


def _draw_meta(*args, **params):
    shape, stride, _ = _draw_layout(args, params)
    return shape, params["dtype"], stride


def _eval_draw(prim, args: tuple, params: dict) -> Tensor:
    """Eager evaluation of a draw: `make(n, contiguous)` takes n values from the generator
    (memory order), laid out as a new CPU tensor of the draw's shape and strides."""
    shape, stride, contiguous = _draw_layout(args, params)
    d = params["dtype"]
    with np.errstate(all="ignore"):  # (inf/nan parameters give inf/nan silently, as in C)
        flat = params["make"](numel(shape), contiguous)
    if d.is_complex and flat.dtype != d.np:
        flat = np.ascontiguousarray(flat).view(d.np)
    shape = tuple(shape)
    if stride is None or tuple(stride) == contiguous_strides(shape):
        return _wrap(flat.reshape(shape), d)
    return _make(Storage(flat, flat.nbytes, CPU), shape, tuple(stride), 0, d)


# A new tensor of values drawn from a generator: `make(n, contiguous)` is the draw (the
# generator and the distribution's parameters are in it), n the number of elements, filled in
# memory order. Because the draw happens in the op, an interpreter can change how much is
# drawn: vmap with randomness="different" draws one batch of B examples at once (a batch is
# B times the elements, so `make` must treat n elements as n draws of one each, or, like
# randperm, as n / size consecutive draws of the whole).
# `draw`: a factory, params `shape`, `stride` (None: contiguous), `dtype`, `make`.
draw_p = Primitive("draw", None, _draw_meta, impl=_eval_draw)
nondifferentiable(draw_p)
mark_random(draw_p)
batch_by_loop(draw_p, "a factory has no batched input; vmap's randomness= decides whether "
                      "the batch shares one draw or draws once per example")
# `draw_like`: values laid out like its one input (read for its shape and strides only),
# params `dtype`, `make`, `dense` (see _draw_layout). The noise of in-place samplers and of
# samplers fed by noise (bernoulli with tensor p, multinomial), and the *_like factories.
draw_like_p = Primitive("draw_like", None, _draw_meta, impl=_eval_draw)
nondifferentiable(draw_like_p)
mark_random(draw_like_p)


def _draw_like_batch(args, dims, /, **params):
    """One draw per example (vmap, randomness="different"): the whole batch drawn at once, as
    PyTorch does, like the batch with its batch dim moved in front (a view: the memory order
    is the batch's own, and so is the contiguity that picks normal's path)."""
    return bind(draw_like_p, move_to_front(args[0], dims[0]), **params), 0


defbatch(draw_like_p, _draw_like_batch)


def draw(make, shape, stride, d: dt.dtype) -> Tensor:
    """`make`'s values as a new tensor of `shape` (dense `stride`, None: contiguous)."""
    return bind(draw_p, shape=tuple(shape), stride=None if stride is None else tuple(stride),
                dtype=d, make=make)


def draw_like(like: Tensor, make, d: dt.dtype, *, dense: bool = True,
              memory_format=None) -> Tensor:
    """`make`'s values as a new tensor laid out like `like` (see _draw_layout for `dense`), or
    in `memory_format` (a *_like factory's argument) when one is named."""
    if memory_format is None:
        return bind(draw_like_p, like, dtype=d, make=make, dense=dense)
    return bind(draw_like_p, like, dtype=d, make=make, dense=dense,
                memory_format=memory_format)


__all__ = ["draw", "draw_like", "draw_like_p", "draw_p", "like_strides"]
