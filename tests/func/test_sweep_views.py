"""torch.func sweep of views, joins and data movement (the `view` family, repeat, flip, roll,
tril / triu, diag_embed, pad, cat / stack, clone, contiguous) and of indexing (index,
index_put, gather, the `scatter` family, masked ops, index_copy / index_add, take):
jvp, vmap and vjp against torch."""

from __future__ import annotations

from tests.func.sweep import Case, make_tests

S = [(3, 4)]
ND = "not differentiable: vmap only"


def _v(name, fn, shapes=S, **kw) -> Case:
    return Case(name, fn, shapes, complex=kw.pop("complex", True), **kw)


def _i(m, *v):
    return m.tensor(list(v))


def _scaled_column(y):
    z = y.clone()
    z.narrow(1, 0, 1).mul_(3)
    return z


CASES = [
    _v("view", lambda m, x: (x.contiguous().view(4, 3), x.reshape(-1),
                                x.contiguous().view(2, 2, 3).flatten(1))),
    _v("view_noncontiguous", lambda m, x: x.t().reshape(12)),
    _v("view_as_complex", lambda m, x: m.view_as_complex(x.reshape(6, 2).contiguous()) * 2,
       complex=False),
    _v("view_dtype", lambda m, x: x.view(m.int64) % 7, complex=False,
       jvp="a reinterpretation of the bits has no derivative: vmap only",
       vjp="a reinterpretation of the bits has no derivative"),
    _v("alias_view_as", lambda m, x: (x.view_as(x) * 2, m.alias_copy(x) if hasattr(
        m, "alias_copy") else x, x[...], x.detach() * 0 + x)),
    _v("permute", lambda m, x: (x.permute(1, 0), x.unsqueeze(0).permute(2, 0, 1),
                                x.movedim(0, 1), x.mT, x.mH), extra=[[(0, 4)]]),
    _v("transpose", lambda m, x: (x.transpose(0, 1), m.swapaxes(x, 1, 0))),
    _v("t", lambda m, x: (x.t(), x.T, x[0].t())),
    _v("expand", lambda m, x: (x[:, :1].expand(3, 5), x.expand(2, 3, 4),
                               x[0].expand_as(x), m.broadcast_to(x, (2, 3, 4)))),
    _v("squeeze", lambda m, x: (x[:1].squeeze(), x[:, :1].squeeze(1),
                                x[:1, :1].squeeze((0, 1)), x.unsqueeze(0).squeeze(0))),
    _v("unsqueeze", lambda m, x: (x.unsqueeze(0), x.unsqueeze(-1), x[None, ..., None]),
       extra=[[()]]),
    _v("slice", lambda m, x: (x[1:], x[:, ::2], x[-2:, 1:3], x.narrow(1, 1, 2),
                              x[1:][:, 1:].sum())),
    _v("select", lambda m, x: (x[1], x[:, -1], x.select(1, 2), x.unbind(0)[2])),
    _v("split_chunk", lambda m, x: x.split(2, 1) + x.chunk(3, 0) + m.tensor_split(x, 2, 1)),
    _v("diagonal", lambda m, x: (x.diagonal(), x.diagonal(1), m.diagonal(x, -1, 1, 0),
                                 m.diag(x))),
    _v("unfold", lambda m, x: (x.unfold(1, 2, 1), x.unfold(0, 2, 2))),
    _v("as_strided", lambda m, x: m.as_strided(x.contiguous(), (2, 2), (1, 2), 1)),
    _v("repeat", lambda m, x: (x.repeat(2, 1), x.repeat(1, 2, 1), x.tile((2,)),
                               x.repeat_interleave(2, 0))),
    _v("flip", lambda m, x: (x.flip(0), m.flip(x, (0, 1)), m.fliplr(x), m.rot90(x))),
    _v("roll", lambda m, x: (x.roll(1, 0), m.roll(x, (1, -2), (0, 1)), x.roll(3))),
    _v("triangle", lambda m, x: (x.tril(), m.triu(x, 1), x.tril(-1))),
    _v("diag_embed", lambda m, x: (m.diag_embed(x), m.diag_embed(x, 1, 0, 2), m.diag(x[0]))),
    _v("constant_pad_nd", lambda m, x: (m.nn.functional.pad(x, (1, 2)),
                                        m.nn.functional.pad(x, (0, 1, 2, 0), value=1.5))),
    _v("cat_stack", lambda m, x, y: (m.cat([x, y], 0), m.stack([x, y], 2), m.hstack([x, y]),
                                     m.cat([x, y[:, :2]], 1)), [(3, 4), (3, 4)]),
    _v("cat_unbatched", lambda m, x: m.cat([x, m.ones(1, 4, dtype=x.dtype)], 0)),
    _v("clone_contiguous", lambda m, x: (x.clone(), x.t().contiguous(), x.t().clone())),
    # the derivative kernels of the views: a selecting view's gradient (restride), and an
    # in-place op through a view of a tensor autograd records (copy_slices)
    _v("restride", lambda m, x: m.func.grad(lambda y: (y[1:, ::2] ** 2).sum()
                                            + (y.diagonal() * 3).sum())(x), complex=False),
    _v("copy_slices", lambda m, x: m.func.grad(lambda y: (_scaled_column(y) ** 2).sum())(x),
       complex=False),
    # indexing
    _v("index", lambda m, x: (x[_i(m, 2, 0, 2)], x[:, _i(m, 1, 3)], x[_i(m, 0, 1), _i(m, 2, 3)],
                              x.index_select(1, _i(m, 3, 0)),
                              m.take(x, _i(m, 0, 11, 5)))),
    _v("index_put", lambda m, x, v: (x.index_put((_i(m, 0, 2),), v[:2]),
                                     x.index_put((_i(m, 0, 0),), v[:2], accumulate=True)),
       [(3, 4), (3, 4)]),
    _v("gather", lambda m, x: (x.gather(1, _i(m, [0, 3], [1, 1], [2, 0])),
                               m.take_along_dim(x, _i(m, [0], [3], [1]), 1))),
    _v("scatter", lambda m, x, s: (x.scatter(1, _i(m, [0, 3], [1, 2], [2, 0]), s[:, :2]),),
       [(3, 4), (3, 4)]),
    _v("scatter_value", lambda m, x: x.scatter(0, _i(m, [0, 2, 1, 1]), 1.5)),
    _v("scatter_add", lambda m, x, s: (x.scatter_add(1, _i(m, [0, 0], [1, 2], [3, 3]),
                                                     s[:, :2]),
                                       x.index_add(0, _i(m, 2, 0), s[:2])), [(3, 4), (3, 4)]),
    _v("scatter_reduce", lambda m, x, s: (
        x.scatter_reduce(1, _i(m, [0, 0], [1, 2], [3, 3]), s[:, :2], "sum"),
        x.scatter_reduce(0, _i(m, [0, 1, 0, 2]), s[:1], "mean", include_self=False),
        x.scatter_reduce(1, _i(m, [0, 0], [1, 2], [3, 3]), s[:, :2], "amax")),
        [(3, 4), (3, 4)], complex=False),
    _v("index_copy", lambda m, x, s: (x.index_copy(0, _i(m, 2, 0), s[:2]),
                                      x.index_fill(1, _i(m, 1), 0.5)), [(3, 4), (3, 4)]),
    _v("masked_fill", lambda m, x: (x.masked_fill(x.real > 0.5, 0.25),
                                    x.masked_fill(m.tensor([True, False, True, False]), 1.0))),
    _v("masked_scatter", lambda m, x, s: x.masked_scatter(
        m.tensor([[True, False, True, False]] * 3), s), [(3, 4), (3, 4)]),
    _v("masked_select", lambda m, x: (m.masked_select(x, m.tensor([True, False, True, True])),
                                      x[x.real > 0.5]),
       vmap="torch's vmap refuses masked_select (a data-dependent shape)"),
    _v("nonzero", lambda m, x: (m.nonzero(x > 0), m.argwhere(x > 1)), jvp=ND, vjp=ND,
       complex=False,
       vmap="torch's vmap refuses nonzero (a data-dependent shape)"),
]


test_jvp, test_vmap, test_vjp = make_tests(CASES)
