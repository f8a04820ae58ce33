"""The `_saved_*` attributes of nodes whose op takes dims (and the corrections, orders and
indices beside them), against torch: PyTorch's node keeps an argument as the caller gave
it, a negative dim shown as the unsigned 64-bit number its int64 reads as, a tuple of dims
in the caller's order, None where no dim was given; the spread reductions show the
correction of the overload the call picked (None, 1, 0 or as given).

One table, one test: every case's node class, its `_saved_*` names, each number, tuple or
None exactly, and each saved tensor by value.
"""

import numpy as np
import torch

import ember

from helpers import assert_same


def _idx(m, rows):
    return m.tensor(rows)


# `fn(m, a, b)` with a, b (3, 4) float64 leaves; the node read is the first output's
CASES = {
    # sum / mean / nansum / prod: negative, positive, tuple (its order kept), None, ()
    "sum_neg": lambda m, a, b: a.sum(-1),
    "sum_pos_keep": lambda m, a, b: a.sum(1, keepdim=True),
    "sum_tuple": lambda m, a, b: a.sum((1, -2)),
    "sum_list": lambda m, a, b: a.sum([-1]),
    "sum_none": lambda m, a, b: a.sum(None),
    "sum_empty": lambda m, a, b: a.sum(()),
    "sum_all": lambda m, a, b: a.sum(),
    "sum_dtype": lambda m, a, b: a.sum(-1, dtype=m.float64),
    "mean_neg": lambda m, a, b: a.mean(-1),
    "mean_tuple_keep": lambda m, a, b: a.mean((1, -2), keepdim=True),
    "mean_none": lambda m, a, b: a.mean(None),
    "mean_all": lambda m, a, b: a.mean(),
    "nansum_neg": lambda m, a, b: a.nansum(-1),
    "nansum_none": lambda m, a, b: a.nansum(),
    "nansum_tuple_keep": lambda m, a, b: m.nansum(a, (-1, 0), True),
    "prod_neg": lambda m, a, b: a.prod(-1),
    "prod_keep": lambda m, a, b: a.prod(-2, True),
    "prod_all": lambda m, a, b: a.prod(),
    # extrema
    "amax_neg": lambda m, a, b: a.amax(-1),
    "amax_tuple": lambda m, a, b: a.amax((1, 0)),
    "amax_all": lambda m, a, b: a.amax(),
    "amin_list_keep": lambda m, a, b: a.amin([-1], keepdim=True),
    "max_neg": lambda m, a, b: a.max(-1),
    "max_pos_keep": lambda m, a, b: a.max(dim=1, keepdim=True),
    "min_neg": lambda m, a, b: m.min(a, -2),
    "max_all": lambda m, a, b: a.max(),
    "logsumexp_neg": lambda m, a, b: a.logsumexp(-1),
    "logsumexp_tuple_keep": lambda m, a, b: m.logsumexp(a, (1, 0), keepdim=True),
    # var / std / var_mean / std_mean: the correction as the overload picked shows it
    "std_all": lambda m, a, b: a.std(),
    "std_keep_only": lambda m, a, b: a.std(keepdim=True),
    "std_neg": lambda m, a, b: a.std(-1),
    "std_none": lambda m, a, b: a.std(None),
    "std_dim_none_kw": lambda m, a, b: a.std(dim=None),
    "std_legacy_false": lambda m, a, b: a.std(False),
    "std_unbiased_false": lambda m, a, b: a.std(unbiased=False),
    "std_neg_unbiased_keep": lambda m, a, b: a.std(-1, True, True),
    "std_correction": lambda m, a, b: a.std(correction=2),
    "std_correction_float": lambda m, a, b: a.std(1, correction=0.5),
    "std_correction_none": lambda m, a, b: a.std(-1, correction=None),
    "std_tuple": lambda m, a, b: a.std((1, 0)),
    "var_pos_c0": lambda m, a, b: a.var(1, correction=0),
    "var_list_keep": lambda m, a, b: a.var([-1, -2], keepdim=True),
    "var_correction_tensor": lambda m, a, b: a.var(0, correction=m.tensor(2)),
    "var_mean_all": lambda m, a, b: m.var_mean(a),
    "var_mean_neg": lambda m, a, b: m.var_mean(a, -1),
    "std_mean_unbiased": lambda m, a, b: m.std_mean(a, unbiased=False),
    "std_mean_pos_keep": lambda m, a, b: m.std_mean(a, 0, keepdim=True),
    # norms: the dims and the order as given
    "vector_norm_neg": lambda m, a, b: m.linalg.vector_norm(a, dim=-1),
    "vector_norm_all": lambda m, a, b: m.linalg.vector_norm(a),
    "vector_norm_ord_tuple": lambda m, a, b: m.linalg.vector_norm(a, 3, (1, 0), True),
    "vector_norm_inf": lambda m, a, b: m.linalg.vector_norm(a, float("inf"), -2),
    "norm_all": lambda m, a, b: a.norm(),
    "norm_p1_neg": lambda m, a, b: a.norm(p=1, dim=-1),
    "norm_fro_dims": lambda m, a, b: a.norm(p="fro", dim=(0, 1)),
    "linalg_norm_neg": lambda m, a, b: m.linalg.norm(a, dim=-1),
    "linalg_norm_all": lambda m, a, b: m.linalg.norm(a),
    # picks along one dim
    "median_neg": lambda m, a, b: a.median(-1),
    "nanmedian_keep": lambda m, a, b: a.nanmedian(-2, True),
    "mode_default": lambda m, a, b: a.mode(),
    "kthvalue_neg": lambda m, a, b: a.kthvalue(2, -2),
    "sort_default": lambda m, a, b: a.sort(),
    "sort_stable_pos": lambda m, a, b: a.sort(dim=1, stable=True),
    "topk_neg": lambda m, a, b: a.topk(2, -2),
    # softmax and scans
    "softmax_neg": lambda m, a, b: a.softmax(-1),
    "softmax_pos": lambda m, a, b: m.nn.functional.softmax(a, dim=1),
    "log_softmax_neg": lambda m, a, b: a.log_softmax(-2),
    "cumsum_neg": lambda m, a, b: a.cumsum(-1),
    "cumprod_neg": lambda m, a, b: a.cumprod(dim=-2),
    "logcumsumexp_neg": lambda m, a, b: a.logcumsumexp(-1),
    "cummax_neg": lambda m, a, b: a.cummax(-1),
    "cummin_pos": lambda m, a, b: a.cummin(0),
    # views, joins and splits
    "select_neg": lambda m, a, b: a.select(-1, -2),
    "getitem_neg_index": lambda m, a, b: a[:, -1],
    "getitem_ellipsis": lambda m, a, b: a[..., -2],
    "slice_neg": lambda m, a, b: a[:, -3:-1],
    "slice_open_end": lambda m, a, b: a[1:],
    "slice_step": lambda m, a, b: a[::2],
    "narrow_neg": lambda m, a, b: a.narrow(-1, -2, 1),
    "unsqueeze_neg": lambda m, a, b: a.unsqueeze(-1),
    "squeeze_neg": lambda m, a, b: a[None].squeeze(-3),
    "squeeze_tuple": lambda m, a, b: a[None].squeeze((-3,)),
    "transpose_neg": lambda m, a, b: a.transpose(-1, 0),
    "permute_neg": lambda m, a, b: a.permute(-1, 0),
    "flip_neg": lambda m, a, b: a.flip(-1, 0),
    "roll_neg": lambda m, a, b: a.roll((1, -2), (-1, 0)),
    "roll_flat": lambda m, a, b: a.roll(1),
    "diagonal_neg": lambda m, a, b: m.diagonal(a, 1, -1, 0),
    "unfold_neg": lambda m, a, b: a.unfold(-1, 2, 1),
    "cat_neg": lambda m, a, b: m.cat([a, b], -1),
    "cat_default": lambda m, a, b: m.cat([a, b]),
    "stack_neg": lambda m, a, b: m.stack([a, b], -1),
    "unbind_neg": lambda m, a, b: a.unbind(-1),
    "split_neg": lambda m, a, b: a.split(2, -1),
    "split_sizes_neg": lambda m, a, b: a.split([1, 3], -1),
    "chunk_neg": lambda m, a, b: a.chunk(2, -1),
    # indexing along a dim
    "gather_neg": lambda m, a, b: a.gather(-1, _idx(m, [[0], [1], [2]])),
    "scatter_neg": lambda m, a, b: a.scatter(-1, _idx(m, [[0], [1], [2]]), b[:, :1]),
    "scatter_add_neg": lambda m, a, b: a.scatter_add(-1, _idx(m, [[0], [1], [2]]), b[:, :1]),
    "index_add_neg": lambda m, a, b: a.index_add(-1, _idx(m, [0, 2]), b[:, :2]),
    "index_copy_neg": lambda m, a, b: a.index_copy(-1, _idx(m, [0, 2]), b[:, :2]),
    "index_select_neg": lambda m, a, b: a.index_select(-2, _idx(m, [0, 2])),
    "index_fill_neg": lambda m, a, b: a.index_fill(-1, _idx(m, [0, 2]), 1.0),
    "scatter_reduce_neg": lambda m, a, b: a.scatter_reduce(-1, _idx(m, [[0], [1], [2]]),
                                                           b[:, :1], "amax",
                                                           include_self=False),
    "cross_neg": lambda m, a, b: m.linalg.cross(a[:, :3], b[:, :3], dim=-1),
    "cross_pos": lambda m, a, b: m.cross(a[:, :3], b[:, :3], 1),
    "tril_neg": lambda m, a, b: a.tril(-1),
    # in-place variants (on a copy of the leaf) show the dims as given too
    "cumsum__neg": lambda m, a, b: a.clone().cumsum_(-1),
    "cumprod__neg": lambda m, a, b: a.clone().cumprod_(-2),
    "index_fill__neg": lambda m, a, b: a.clone().index_fill_(-1, _idx(m, [0, 2]), 1.0),
    "index_fill__tensor": lambda m, a, b: a.clone().index_fill_(-1, _idx(m, [0]), m.tensor(1.)),
    "index_add__neg": lambda m, a, b: a.clone().index_add_(-1, _idx(m, [0, 2]), b[:, :2]),
    "index_copy__neg": lambda m, a, b: a.clone().index_copy_(-1, _idx(m, [0, 2]), b[:, :2]),
    # (a source needing no gradient is not saved; its number of dims is)
    "index_copy_no_grad_source": lambda m, a, b: a.index_copy(-1, _idx(m, [0]), b.detach()[:, :1]),
    "index_copy__no_grad_source": lambda m, a, b: a.clone().index_copy_(0, _idx(m, [1]),
                                                                         b.detach()[:1]),
    "scatter__value": lambda m, a, b: a.clone().scatter_(-1, _idx(m, [[0], [1], [2]]), 2.0),
    "scatter_value": lambda m, a, b: a.scatter(-1, _idx(m, [[0], [1], [2]]), 2.0),
    "scatter__src": lambda m, a, b: a.clone().scatter_(-1, _idx(m, [[0], [1], [2]]), b[:, :1]),
    "scatter_add__neg": lambda m, a, b: a.clone().scatter_add_(-1, _idx(m, [[0], [1], [2]]),
                                                                b[:, :1]),
    "scatter_reduce__neg": lambda m, a, b: a.clone().scatter_reduce_(
        -1, _idx(m, [[0], [1], [2]]), b[:, :1], "max"),
    "tril__neg": lambda m, a, b: a.clone().tril_(-1),
    "triu__pos": lambda m, a, b: a.clone().triu_(1),
    "transpose__neg": lambda m, a, b: a.clone().transpose_(-1, 0),
    "swapdims__neg": lambda m, a, b: a.clone().swapdims_(0, -1),
    "squeeze__all": lambda m, a, b: a[:, :1].clone().squeeze_(),
    "squeeze__neg": lambda m, a, b: a[:, :1].clone().squeeze_(-1),
    "squeeze__tuple": lambda m, a, b: a[:, :1].clone().squeeze_((-1, 0)),
    "unsqueeze__neg": lambda m, a, b: a.clone().unsqueeze_(-1),
}


def _leaves(m):
    rs = np.random.RandomState(0)
    return tuple(m.tensor(rs.uniform(0.2, 1.5, (3, 4)), dtype=m.float64, requires_grad=True)
                 for _ in range(2))


def _node(m, name):
    out = CASES[name](m, *_leaves(m))
    return (out[0] if isinstance(out, tuple) else out).grad_fn


def _saved(fn) -> dict:
    # (`*_sym_strides`, an input's layout, is one ember's nodes do not keep)
    return {n: getattr(fn, n) for n in dir(fn)
            if n.startswith("_saved_") and not n.endswith("_sym_strides")}


def test_saved_dims_and_arguments_as_torchs():
    for name in CASES:
        fe, ft = _node(ember, name), _node(torch, name)
        assert type(fe).__name__ == type(ft).__name__, name
        got, want = _saved(fe), _saved(ft)
        assert sorted(got) == sorted(want), name
        for attr, w in want.items():
            g = got[attr]
            if isinstance(w, torch.Tensor):
                # (a saved result of std, norm, logsumexp ...: the two libraries' reductions
                # may order their sums differently, a few ulps apart; inputs are exact)
                assert_same(g, w, rtol=1e-13, atol=0)
            else:
                assert g == w and type(g) is type(w), (name, attr, g, w)


def test_given_values_stay_readable_after_backward():
    # (numbers are kept with the node, not with the saved tensors backward frees)
    for m in (ember, torch):
        a, _ = _leaves(m)
        y = a.std(-1, keepdim=True)
        y.sum().backward()
        fn = y.grad_fn
        assert (fn._saved_dim, fn._saved_correction, fn._saved_keepdim) == \
            ((2 ** 64 - 1,), 1, True)
