"""The node class and `_saved_*` attributes of ops ember builds from several pieces, or from
a primitive that stands for several PyTorch ops (renorm, glu, rot90, index_reduce, take,
put ...), and of the primitives whose table entries name the arguments PyTorch's formula
reads (losses, indexing, as_strided, diag_embed ...), against torch.

One table, one test: each case's node class, its `_saved_*` names, each number, tuple or
None exactly, and each saved tensor by value (and by identity where torch returns the
caller's tensor itself).
"""

import warnings

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same


def _i(m, rows):
    return m.tensor(rows)


# `fn(m, a, b)` with a, b (4, 4) float64 leaves; the node read is the output's
CASES = {
    "renorm_neg": lambda m, a, b: a.renorm(2, -1, 1.0),
    "renorm_int_args": lambda m, a, b: a.renorm(3, 0, 2),
    "renorm_": lambda m, a, b: a.clone().renorm_(1.5, 1, 0.5),
    "glu_default": lambda m, a, b: m.nn.functional.glu(a),
    "glu_dim0": lambda m, a, b: m.nn.functional.glu(a, 0),
    "glu_half": lambda m, a, b: m.nn.functional.glu(a.half(), -2),
    "rot90_default": lambda m, a, b: a.rot90(),
    "rot90_list_dims": lambda m, a, b: a.rot90(2, [1, 0]),
    "rot90_negative": lambda m, a, b: a.rot90(-1, (-1, 0)),
    "rot90_zero": lambda m, a, b: a.rot90(0),
    "rot90_five": lambda m, a, b: a.rot90(5),
    "diag_embed_default": lambda m, a, b: a.diag_embed(),
    "diag_embed_dims": lambda m, a, b: a.diag_embed(1, -1, 0),
    "diag_vector": lambda m, a, b: a[0].diag(1),
    "diagflat_neg": lambda m, a, b: a.diagflat(-1),
    "as_strided": lambda m, a, b: a.as_strided((2, 2), (1, 2)),
    "as_strided_offset": lambda m, a, b: a.as_strided((2, 2), (1, 2), 1),
    "as_strided_": lambda m, a, b: a.clone().as_strided_((2, 2), (1, 2), 3),
    "t_of_view": lambda m, a, b: a.clone()[1:].t_(),
    "index_reduce_prod": lambda m, a, b: a.index_reduce(0, _i(m, [0, 2]), b[:2], "prod"),
    "index_reduce_amax": lambda m, a, b: a.index_reduce(-1, _i(m, [3, 1]), b[:, :2], "amax",
                                                        include_self=False),
    "index_reduce_": lambda m, a, b: a.clone().index_reduce_(-2, _i(m, [1]), b[:1], "mean"),
    "take": lambda m, a, b: a.take(_i(m, [0, 5, 15])),
    "put": lambda m, a, b: a.put(_i(m, [0, 2]), b[0, :2]),
    "put_accumulate_no_grad_source": lambda m, a, b: a.put(_i(m, [1]), b.detach()[0, :1], True),
    "getitem_index": lambda m, a, b: a[_i(m, [0, 2])],
    "getitem_whole_dim_first": lambda m, a, b: a[:, _i(m, [0, 2])],
    "getitem_int_then_index": lambda m, a, b: a[0, _i(m, [0, 2])],
    "getitem_mask": lambda m, a, b: a[_i(m, [True, False, True, False])],
    "index_put": lambda m, a, b: a.index_put((_i(m, [0, 2]),), b[0]),
    "index_put_acc": lambda m, a, b: a.index_put((_i(m, [1]),), b[1], accumulate=True),
    "masked_scatter": lambda m, a, b: a.masked_scatter(_i(m, [True, False, True, True]), b),
    "embedding": lambda m, a, b: m.nn.functional.embedding(_i(m, [0, 2]), a),
    "embedding_padding": lambda m, a, b: m.nn.functional.embedding(_i(m, [0, 2]), a,
                                                                   padding_idx=-1),
    "mse_mean": lambda m, a, b: m.nn.functional.mse_loss(a, b),
    "mse_none": lambda m, a, b: m.nn.functional.mse_loss(a, b, reduction="none"),
    "smooth_l1_sum": lambda m, a, b: m.nn.functional.smooth_l1_loss(a, b, reduction="sum",
                                                                    beta=0.5),
    "huber": lambda m, a, b: m.nn.functional.huber_loss(a, b, delta=2.0),
    "bce": lambda m, a, b: m.nn.functional.binary_cross_entropy(a.sigmoid(), b.detach() / 2),
    "lerp_tensor": lambda m, a, b: a.lerp(b, b.detach() / 2),
    "fmod_tensor": lambda m, a, b: a.fmod(b),
    "remainder_tensor": lambda m, a, b: a.remainder(b),
    "ldexp": lambda m, a, b: a.ldexp(_i(m, [1, 2, 3, 4])),
    "dist": lambda m, a, b: a.dist(b),
    "dist_p_no_grad_other": lambda m, a, b: a.dist(b.detach(), 1.5),
    "prelu": lambda m, a, b: m.nn.functional.prelu(a, b[0, :1]),
    "softshrink": lambda m, a, b: m.nn.functional.softshrink(a, 0.75),
    "hardshrink": lambda m, a, b: m.nn.functional.hardshrink(a),
    "threshold": lambda m, a, b: m.nn.functional.threshold(a, 0.5, 0.0),
    "celu": lambda m, a, b: m.nn.functional.celu(a, 0.5),
}


def _leaves(m):
    rs = np.random.RandomState(0)
    return tuple(m.tensor(rs.uniform(0.2, 1.5, (4, 4)), dtype=m.float64, requires_grad=True)
                 for _ in range(2))


def _saved(fn) -> dict:
    # (`*_sym_strides`, an input's layout, is one ember's nodes do not keep)
    return {n: getattr(fn, n) for n in dir(fn)
            if n.startswith("_saved_") and not n.endswith("_sym_strides")}


def _same_value(g, w, where):
    if isinstance(w, torch.Tensor):
        # (a saved result of prod / mean: the libraries may order the products apart)
        assert_same(g, w, rtol=1e-13, atol=0)
    elif isinstance(w, tuple) and any(isinstance(v, torch.Tensor) for v in w):
        assert isinstance(g, tuple) and len(g) == len(w), where
        for gv, wv in zip(g, w):
            assert (gv is None) == (wv is None), where
            if wv is not None:
                assert_same(gv, wv)
    else:
        assert g == w and type(g) is type(w), (where, g, w)


def test_composite_nodes_show_torchs_saved_attributes():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (index_reduce's beta warning)
        for name, fn in CASES.items():
            (ea, eb), (ta, tb) = _leaves(ember), _leaves(torch)
            fe, ft = fn(ember, ea, eb).grad_fn, fn(torch, ta, tb).grad_fn
            assert type(fe).__name__ == type(ft).__name__, name
            got, want = _saved(fe), _saved(ft)
            assert sorted(got) == sorted(want), name
            for attr, w in want.items():
                _same_value(got[attr], w, (name, attr))
                # (the caller's own tensor where torch gives it back: renorm's self ...)
                if w is ta or w is tb:
                    assert got[attr] is (ea if w is ta else eb), (name, attr)


def test_shown_tensors_are_freed_and_guarded_as_saved_ones():
    for m in (ember, torch):
        a, _ = _leaves(m)
        y = a.renorm(2, 0, 1.0)
        y.sum().backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            _ = y.grad_fn._saved_self
        assert y.grad_fn._saved_p == 2  # (a number stays readable)
        # an in-place change to a tensor the node shows makes its backward refuse
        c = a.detach().clone().requires_grad_()
        d = c * 1
        z = d.take(_i(m, [0, 5]))  # (ember's pieces read only the input's shape)
        d.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()
