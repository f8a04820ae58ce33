"""Values of nn/_functional/spatial.py's ops against PyTorch, bit for bit. unfold (im2col)
and fold (col2im): gathers of the padded image's positions and their adjoint adds (copies,
and sums of each position's columns in tap order from zero, as PyTorch's col2im adds them):
an inf or NaN reaches only the columns that read it, a zero keeps its sign. Pixel
(un)shuffle: copies, on the array directly where no graph is recorded."""

import itertools

import numpy as np
import torch

import ember

_KWARGS = [dict(kernel_size=3, padding=1), dict(kernel_size=(2, 3), stride=2, dilation=(1, 2),
                                                padding=(1, 0)),
           dict(kernel_size=2), dict(kernel_size=(3, 1), stride=(1, 2), padding=(1, 0))]


def _bits(t) -> tuple:
    a = np.ascontiguousarray(t.detach().numpy())
    return a.dtype.str, a.shape, t.stride(), a.tobytes()


def test_unfold_and_fold_are_torchs_bits_values_and_gradients():
    r = np.random.default_rng(0)
    for kw, dtype, batched in itertools.product(_KWARGS, (np.float32, np.float64), (True, False)):
        a = r.standard_normal((2, 3, 5, 6)).astype(dtype)
        a[0, 0, 2, 2], a[1, 1, 1, 1], a[1, 2, 3, 3] = np.inf, -0.0, np.nan
        if not batched:
            a = a[1]
        e, t = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        ye, yt = ember.nn.functional.unfold(e, **kw), torch.nn.functional.unfold(t, **kw)
        what = (kw, dtype, batched)
        assert _bits(ye) == _bits(yt), what
        assert ye.grad_fn.name() == yt.grad_fn.name() == "Im2ColBackward0"
        g = r.standard_normal(tuple(yt.shape)).astype(dtype)
        g.flat[::7] = -0.0
        ye.backward(ember.tensor(g))
        yt.backward(torch.tensor(g))
        assert _bits(e.grad) == _bits(t.grad), what
        # fold: the gradient's adds as a forward, and its gradient the columns' gather
        ce, ct = ember.tensor(g, requires_grad=True), torch.tensor(g, requires_grad=True)
        fe = ember.nn.functional.fold(ce, (5, 6), **kw)
        ft = torch.nn.functional.fold(ct, (5, 6), **kw)
        assert _bits(fe) == _bits(ft), what
        assert fe.grad_fn.name() == ft.grad_fn.name() == "Col2ImBackward0"
        h = r.standard_normal(tuple(ft.shape)).astype(dtype)
        h.flat[0] = np.inf
        fe.backward(ember.tensor(h))
        ft.backward(torch.tensor(h))
        assert _bits(ce.grad) == _bits(ct.grad), what
        # with no grad, and channels-last inputs: the same values, row-major
        with ember.no_grad():
            xs = [ember.tensor(a), ember.tensor(a).clone()]
            if batched:
                xs.append(ember.tensor(a).contiguous(memory_format=ember.channels_last))
            for x in xs:
                assert _bits(ember.nn.functional.unfold(x, **kw)) == _bits(yt), what
            for cols in (ember.tensor(g), ember.tensor(g).clone()):
                assert _bits(ember.nn.functional.fold(cols, (5, 6), **kw)) == _bits(ft), what


def test_second_order_through_the_one_nodes():
    x = ember.randn(1, 2, 4, 4, dtype=ember.float64, requires_grad=True)
    xt = torch.tensor(x.detach().numpy(), requires_grad=True)
    ge, = ember.autograd.grad((ember.nn.functional.unfold(x, 2, padding=1) ** 2).sum(), x,
                              create_graph=True)
    gt, = torch.autograd.grad((torch.nn.functional.unfold(xt, 2, padding=1) ** 2).sum(), xt,
                              create_graph=True)
    (gge,), (ggt,) = ember.autograd.grad(ge.sum(), x), torch.autograd.grad(gt.sum(), xt)
    np.testing.assert_allclose(gge.numpy(), ggt.numpy(), rtol=1e-12)


def test_pixel_shuffle_and_unshuffle_with_and_without_a_graph():
    r = np.random.default_rng(2)
    for (shape, f), layout in itertools.product(
            [((2, 8, 3, 3), 2), ((8, 3, 3), 2), ((2, 1, 9, 4, 5), 3), ((0, 4, 3, 3), 2),
             ((2, 4, 3, 3), 1)], ("row-major", "channels-last", "offset view")):
        for name in ("pixel_shuffle", "pixel_unshuffle"):
            sh = shape if name == "pixel_shuffle" else shape[:-2] + (shape[-2] * f,
                                                                     shape[-1] * f)
            a = r.standard_normal(sh).astype(np.float32)
            e, t = ember.tensor(a), torch.tensor(a)
            if layout == "channels-last":
                if len(sh) != 4 or not a.size:  # (an empty one's strides: ember's own)
                    continue
                e = e.contiguous(memory_format=ember.channels_last)
                t = t.contiguous(memory_format=torch.channels_last)
            elif layout == "offset view":
                e = ember.tensor(np.stack([a, a]))[1]
            ref = getattr(torch.nn.functional, name)(t, f)
            what = (shape, f, layout, name)
            for _ in range(2):
                assert _bits(getattr(ember.nn.functional, name)(e, f)) == _bits(ref), what
            x, xt = e.detach().requires_grad_(), t.detach().requires_grad_()
            y, yt = getattr(ember.nn.functional, name)(x, f), getattr(torch.nn.functional,
                                                                         name)(xt, f)
            assert _bits(y) == _bits(yt) and y.grad_fn.name() == yt.grad_fn.name(), what
