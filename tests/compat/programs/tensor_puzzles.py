"""Tensor puzzles: the indexing, sorting, scanning and reshaping code written around models.

Exercises advanced indexing (slices, ellipsis, None, bool and uint8 masks, broadcast integer
arrays, index_put_ with accumulate), masked_select/masked_scatter_, take/take_along_dim/put_,
index_copy_/index_fill_, scatter reductions, searchsorted/bucketize/histc, sorting and
order statistics, scans, unique_consecutive, combinatorics, flips and rolls, diagonal and
scatter helpers, narrow/narrow_copy, joining, reductions with dims, diff, einsum/tensordot,
ragged padding, sliding windows, and the errors users hit along the way.
"""

import torch
from torch.nn.utils.rnn import pad_sequence

torch.manual_seed(0)


def show(name, t):
    if t.is_floating_point():
        vals = [round(v, 4) for v in t.flatten().tolist()]
    else:
        vals = t.flatten().tolist()
    print(f"{name}: {tuple(t.shape)} {t.dtype} {vals}")


# -- advanced indexing -----------------------------------------------------------------
x = torch.arange(60).reshape(3, 4, 5)
show("mixed", x[1:, [0, 2], ::2])
show("ellipsis", x[..., -1])
show("none", x[None, :, 1, None].squeeze(-1))
rows = torch.tensor([[0], [2]])
cols = torch.tensor([1, 3, -1])
show("broadcast", x[rows, cols])
show("split adv", x[[0, 2], :, [1, 4]])
mask = x[0] % 3 == 0
show("mask", x[0][mask])
show("mask rows", x[:, torch.tensor([True, False, True, False])])
show("byte mask", x[0, torch.tensor([0, 1, 1, 0], dtype=torch.uint8)])
y = torch.zeros(4, 5)
y[1:3] = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0])
y[:, [0, -1]] = -1.0
y[y > 2] *= 10
show("assign", y)
acc = torch.zeros(5)
acc.index_put_((torch.tensor([0, 1, 1, 3, 3, 3]),), torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
               accumulate=True)
show("accumulate", acc)
grid = torch.zeros(3, 3, dtype=torch.long)
grid.index_put_((torch.tensor([0, 2, 0]), torch.tensor([1, 1, 1])), torch.tensor(7),
                accumulate=True)
show("acc 2d", grid)

# -- masked and flat selection ---------------------------------------------------------
vals = torch.randn(3, 4)
keep = vals > 0
show("masked_select", vals.masked_select(keep))
filled = torch.zeros(3, 4).masked_scatter_(keep, torch.arange(1.0, 13.0))
show("masked_scatter", filled)
show("take", torch.take(x, torch.tensor([[0, 59], [7, -1]])))
order = vals.argsort(dim=1)
show("take_along", torch.take_along_dim(vals, order, dim=1))
show("take_along flat", torch.take_along_dim(vals, torch.tensor([0, 5, 11])))
flat = torch.zeros(2, 3)
flat.put_(torch.tensor([0, 4, 4]), torch.tensor([1.0, 2.0, 3.0]), accumulate=True)
show("put", flat)
dst = torch.zeros(4, 3)
dst.index_copy_(0, torch.tensor([3, 0]), torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
dst.index_fill_(1, torch.tensor([1]), -2.5)
show("index_copy/fill", dst)
src = torch.arange(1.0, 7.0).reshape(2, 3)
idx = torch.tensor([[0, 1, 0], [1, 1, 0]])
show("scatter add", torch.ones(2, 3).scatter(0, idx, src, reduce="add"))
show("scatter mul", torch.ones(2, 3).scatter(0, idx, src, reduce="multiply"))
show("scatter_reduce amax", torch.zeros(3).scatter_reduce(0, torch.tensor([0, 0, 2, 2]),
                                                          torch.tensor([1.0, 5.0, -2.0, 3.0]),
                                                          reduce="amax", include_self=False))

# -- searching and binning -------------------------------------------------------------
edges = torch.tensor([0.0, 1.0, 2.5, 4.0])
queries = torch.tensor([-1.0, 1.0, 2.5, 3.0, 9.0])
show("searchsorted", torch.searchsorted(edges, queries))
show("searchsorted right", torch.searchsorted(edges, queries, right=True))
show("side right i32", torch.searchsorted(edges, queries, side="right", out_int32=True))
unsorted = torch.tensor([4.0, 0.0, 2.5, 1.0])
show("sorter", torch.searchsorted(unsorted, queries, sorter=unsorted.argsort()))
show("bucketize", torch.bucketize(queries, edges, right=True))
show("histc", torch.histc(torch.tensor([0.5, 1.0, 1.5, 2.0, 3.9, 4.0, 7.0]), bins=4, min=0,
                          max=4))

# -- sorting and order statistics ------------------------------------------------------
ties = torch.tensor([3, 1, 2, 1, 3, 0, 2])
s = torch.sort(ties, stable=True, descending=True)
show("sort values", s.values)
show("sort indices", s.indices)
show("argsort stable", torch.argsort(ties, stable=True))
m = torch.tensor([[2.0, 7.0, 1.0, 7.0], [5.0, 5.0, 3.0, 4.0]])
kv = torch.kthvalue(m, 2, dim=1)
print("kthvalue", kv.values.tolist(), kv.indices.tolist())
mo = torch.mode(torch.tensor([[1, 2, 2, 3], [4, 4, 1, 1]]), dim=1)
votes = torch.tensor([[3.0, float("nan"), 3.0, 1.0, 1.0], [2, 0, 2, 0, 2]] * 2)
print("mode", mo.values.tolist(), mo.indices.tolist(), votes.mode(1).indices.tolist())
md = m.median(dim=1)
print("median", md.values.tolist(), md.indices.tolist(), m.median().item())
nan_m = torch.tensor([[1.0, float("nan"), 3.0], [float("nan"), float("nan"), 2.0]])
nm = nan_m.nanmedian(dim=1)
print("nanmedian", nm.values.tolist(), nm.indices.tolist(), nan_m.nanmedian().item())
show("msort", torch.msort(m.t()))

# -- scans -----------------------------------------------------------------------------
seq = torch.tensor([1.0, 3.0, 2.0, 5.0, 4.0])
cmx = torch.cummax(seq, 0)
cmn = torch.cummin(seq.flip(0), 0)
print("cummax", cmx.values.tolist(), cmx.indices.tolist())
print("cummin", cmn.values.tolist(), cmn.indices.tolist())
show("logcumsumexp", torch.logcumsumexp(seq / 2, 0))
show("cumprod", torch.cumprod(torch.tensor([[1, 2, 3], [4, 5, 6]]), dim=1))

# -- run-length encoding ---------------------------------------------------------------
runs = torch.tensor([5, 5, 5, 2, 2, 7, 5, 5])
u, inv, cnt = torch.unique_consecutive(runs, return_inverse=True, return_counts=True)
print("rle", u.tolist(), inv.tolist(), cnt.tolist())
print("decoded", torch.repeat_interleave(u, cnt).tolist())
rows2 = torch.tensor([[1, 1], [1, 1], [2, 0], [2, 0], [1, 1]])
ur, cr = torch.unique_consecutive(rows2, return_counts=True, dim=0)
print("rle rows", ur.tolist(), cr.tolist())

# -- combinatorics and grids -----------------------------------------------------------
print("tril", torch.tril_indices(3, 4, offset=1).tolist())
print("triu", torch.triu_indices(4, 3, offset=-1).tolist())
abc = torch.tensor([1, 2, 3])
print("comb", torch.combinations(abc, r=2).tolist())
print("comb rep", torch.combinations(abc, r=2, with_replacement=True).shape)
print("cartesian", torch.cartesian_prod(abc, torch.tensor([10, 20])).tolist())
gi, gj = torch.meshgrid(torch.arange(2), torch.arange(3), indexing="ij")
gx, gy = torch.meshgrid(torch.arange(2), torch.arange(3), indexing="xy")
print("meshgrid", gi.shape, gj.tolist(), gx.shape, gy.tolist())

# -- flips, rolls and rotations --------------------------------------------------------
b = torch.arange(12).reshape(3, 4)
print("roll", torch.roll(b, shifts=(1, -1), dims=(0, 1)).tolist(), torch.roll(b, 5).tolist())
print("flip", torch.flip(b, [0, 1]).tolist(), torch.fliplr(b)[0].tolist(),
      torch.flipud(b)[0].tolist())
print("rot90", torch.rot90(b, 1).tolist(), torch.rot90(b, -3, [0, 1]).shape,
      torch.rot90(b, 2)[0].tolist())

# -- diagonals and scatter helpers -----------------------------------------------------
show("diag_embed", torch.diag_embed(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), offset=1))
show("diagflat", torch.diagflat(torch.tensor([1, 2]), offset=-1))
show("block_diag", torch.block_diag(torch.ones(1, 2), torch.full((2, 1), 2.0),
                                    torch.tensor(5.0)))
show("diagonal_scatter", torch.diagonal_scatter(torch.zeros(3, 3), torch.ones(2), offset=1))
show("select_scatter", torch.select_scatter(torch.zeros(2, 3), torch.tensor([7.0, 8.0]), 1, -1))
show("slice_scatter", torch.slice_scatter(torch.zeros(4, 2), torch.ones(2, 2), 0, 0, 4, 2))
show("diagonal", torch.diagonal(x, offset=1, dim1=1, dim2=2))

# -- reshaping and joining -------------------------------------------------------------
print("narrow", x.narrow(2, 1, 3).shape, x.narrow(-1, -2, 2)[0, 0].tolist(),
      x.narrow(1, torch.tensor(1), 2).stride(), torch.narrow_copy(x, 2, 1, 2).stride())
print("unflatten", x.unflatten(2, (1, -1)).shape, x.flatten(0, 1).unflatten(0, (2, 6)).shape)
print("movedim", x.movedim((0, 1), (2, 0)).shape, x.swapaxes(0, 2).stride(),
      x.moveaxis(-1, 0).shape)
p, q = torch.tensor([1, 2]), torch.tensor([3, 4])
print("stack", torch.stack([p, q], dim=1).tolist(), torch.hstack([p, q]).tolist())
print("vstack", torch.vstack([p, q]).tolist(), torch.dstack([p, q]).shape)
print("column_stack", torch.column_stack([p, torch.tensor([[5, 6], [7, 8]])]).tolist())
print("atleast_2d", [t.shape for t in torch.atleast_2d(torch.tensor(1), p, b)])

# -- elementwise utilities -------------------------------------------------------------
print("where1", [t.tolist() for t in torch.where(torch.tensor([[0, 3], [1, 0]]))])
bad = torch.tensor([float("nan"), float("inf"), -float("inf"), 1.5])
show("nan_to_num", torch.nan_to_num(bad, nan=0.0, posinf=99.0))
show("nan_to_num default", torch.nan_to_num(bad)[1:2] / 1e38)
show("clamp tensor", torch.clamp(torch.arange(5.0), min=torch.tensor([1.0, 0, 0, 0, 2]),
                                 max=torch.tensor(3.0)))
print("isin", torch.isin(runs, torch.tensor([2, 7])).tolist(),
      torch.isin(runs, torch.tensor([5]), invert=True).tolist(), torch.isin(runs, 5).sum().item())
a1 = torch.tensor([1.0, float("nan"), 3.0])
a2 = torch.tensor([1.0 + 1e-9, float("nan"), 3.0001])
print("allclose", torch.allclose(a1, a2), torch.allclose(a1, a2, equal_nan=True, atol=1e-3))
print("isclose", torch.isclose(a1, a2, equal_nan=True).tolist())

# -- reductions with dims --------------------------------------------------------------
r = torch.randn(2, 3, 4)
print("count_nonzero", torch.count_nonzero(x % 4, dim=(0, 2)).tolist(), torch.count_nonzero(b))
show("amax", r.amax(dim=(0, 2)))
show("amin keep", r.amin(dim=(-1, 0), keepdim=True))
sd, mu = torch.std_mean(r, dim=1, correction=0)
show("std_mean", torch.stack([sd, mu]))
var, mu2 = torch.var_mean(r, dim=(0, 2), correction=2, keepdim=True)
show("var_mean", torch.cat([var.flatten(), mu2.flatten()]))
d = torch.tensor([1, 4, 9, 16])
print("diff", torch.diff(d).tolist(), torch.diff(d, n=2).tolist(),
      torch.diff(d, prepend=torch.tensor([0]), append=torch.tensor([25, 36])).tolist())
print("diff 2d", torch.diff(b, dim=0).tolist())

# -- contractions ----------------------------------------------------------------------
sq = torch.arange(9.0).reshape(3, 3)
print("trace", torch.einsum("ii", sq).item(), "diag", torch.einsum("ii->i", sq).tolist())
show("einsum ellipsis", torch.einsum("...ij,...jk->...ik", r[:, :, :3], sq))
show("einsum batch diag", torch.einsum("bii->bi", torch.arange(8.0).reshape(2, 2, 2)))
show("einsum outer", torch.einsum("i,j->ij", torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])))
show("tensordot", torch.tensordot(r, torch.ones(4, 3), dims=([2, 1], [0, 1])))
print("tensordot int", torch.tensordot(b, b.t(), dims=1).shape)

# -- ragged sequences ------------------------------------------------------------------
seqs = [torch.tensor([1, 2, 3]), torch.tensor([4]), torch.tensor([5, 6])]
print("pad", pad_sequence(seqs, batch_first=True, padding_value=-1).tolist())
print("pad T", pad_sequence(seqs).shape)
print("pad left", pad_sequence(seqs, batch_first=True, padding_side="left").tolist())
lengths = torch.tensor([len(s) for s in seqs])
print("lengths mask", (torch.arange(3)[None, :] < lengths[:, None]).tolist())
sig = torch.arange(10.0)
win = sig.unfold(0, 4, 3)
print("unfold", win.shape, win.tolist(), win.mean(dim=1).tolist())
print("unfold 2d", b.unfold(1, 2, 1).shape, b.unfold(1, 2, 1).stride())

# -- common mistakes -------------------------------------------------------------------
MISTAKES = [
    lambda: x[0][torch.tensor([True, False])],
    lambda: x[3],
    lambda: x[0, 0, 7],
    lambda: x[:, torch.tensor([0, 9])],
    lambda: torch.searchsorted(edges, queries, sorter=torch.tensor([0, 1])),
    lambda: torch.searchsorted(edges, queries, right=True, side="left"),
    lambda: torch.gather(b, 1, torch.tensor([0, 1])),
    lambda: torch.stack([p, torch.tensor([1, 2, 3])]),
    lambda: torch.einsum("ij,jk->ik", sq, torch.ones(2, 2)),
    lambda: torch.einsum("ij,j", sq),
    lambda: x.narrow(1, 2, 5),
    lambda: torch.roll(b, shifts=(1, 2), dims=0),
    lambda: torch.take(x, torch.tensor([60])),
    lambda: torch.zeros(3).index_put_((torch.tensor([0, 1]),), torch.ones(3)),
    lambda: torch.kthvalue(seq, 9),
    lambda: x.narrow(2, 0, -1),
    lambda: x.narrow(2, 1, 2.0),
    lambda: x.unflatten(-1, (2, 3)),
    lambda: vals.masked_select(torch.tensor([True, False])),
    lambda: torch.zeros(3).masked_scatter_(keep, torch.ones(12)),
    lambda: b.expand(4),
    lambda: y.__setitem__(torch.tensor([1, 0, 1, 0], dtype=torch.uint8), 0.0),
    lambda: pad_sequence([torch.ones(2), torch.tensor(3.0)]),
]
for make in MISTAKES:
    try:
        make()
        print("no error")
    except Exception as e:  # noqa: BLE001 - printed as a program would log it
        print(f"{type(e).__name__}: {e}")
