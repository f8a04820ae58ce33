"""View ops against torch: geometry, values, no copying, gradients, meta, and errors."""

import warnings

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, check_grads, check_op, rand_array

# Each case: (name, fn(module, x)) applied to a (2, 3, 4) input.
VIEW_CASES = [
    ("view", lambda m, x: x.view(6, 4)),
    ("view_infer", lambda m, x: x.view(-1, 2)),
    ("view_tuple", lambda m, x: x.view((4, 6))),
    ("view_as", lambda m, x: x.view_as(m.ones(24))),
    ("view_transposed_ok", lambda m, x: x.transpose(0, 1).view(3, 2, 2, 2)),
    ("view_sliced_ok", lambda m, x: x[:, :, 1:3].view(6, 2)),
    ("view_expanded_ok", lambda m, x: x[:, :1].expand(2, 5, 4).view(2, 5, 2, 2)),
    ("reshape_view", lambda m, x: x.reshape(4, 6)),
    ("reshape_as", lambda m, x: x.reshape_as(m.ones(4, 6))),
    ("reshape_copy", lambda m, x: x.transpose(0, 2).reshape(-1)),
    ("transpose", lambda m, x: x.transpose(0, 2)),
    ("transpose_neg", lambda m, x: x.transpose(-1, 0)),
    ("swapaxes", lambda m, x: x.swapaxes(0, 1)),
    ("swapdims", lambda m, x: m.swapdims(x, 1, 2)),
    ("permute", lambda m, x: x.permute(2, 0, 1)),
    ("permute_tuple", lambda m, x: x.permute((1, 2, 0))),
    ("t", lambda m, x: x[0].t()),
    ("T", lambda m, x: x[0].T),
    ("mT", lambda m, x: x.mT),
    ("expand", lambda m, x: x[:, :1].expand(2, 3, 4)),
    ("expand_new", lambda m, x: x.expand(2, 2, 3, 4)),
    ("expand_keep", lambda m, x: x[:, :1].expand(-1, 5, -1)),
    ("expand_as", lambda m, x: x[0, :1].expand_as(x)),
    ("broadcast_to", lambda m, x: m.broadcast_to(x[0, 0], (3, 4))),
    ("squeeze", lambda m, x: x[:, :1].squeeze()),
    ("squeeze_dim", lambda m, x: x[:, :1].squeeze(1)),
    ("squeeze_noop", lambda m, x: x.squeeze(1)),
    ("squeeze_dims", lambda m, x: x[:1, :1].squeeze((0, 1))),
    ("unsqueeze", lambda m, x: x.unsqueeze(1)),
    ("unsqueeze_end", lambda m, x: x.unsqueeze(-1)),
    ("unsqueeze_transposed", lambda m, x: x.transpose(0, 2).unsqueeze(1)),
    ("flatten", lambda m, x: x.flatten()),
    ("flatten_tail", lambda m, x: x.flatten(1)),
    ("flatten_transposed", lambda m, x: x.transpose(0, 2).flatten(0, 1)),
    ("unflatten", lambda m, x: x.unflatten(2, (2, 2))),
    ("unflatten_infer", lambda m, x: x.unflatten(-1, (2, -1))),
    ("ravel", lambda m, x: x.transpose(0, 1).ravel()),
    ("narrow", lambda m, x: x.narrow(2, 1, 2)),
    ("narrow_neg", lambda m, x: x.narrow(-1, -3, 2)),
    ("select", lambda m, x: x.select(1, 2)),
    ("select_neg", lambda m, x: x.select(-1, -1)),
    ("unbind", lambda m, x: x.unbind(1)),
    ("split", lambda m, x: x.split(3, dim=2)),
    ("split_sizes", lambda m, x: x.split([1, 3], dim=2)),
    ("chunk", lambda m, x: x.chunk(3, 2)),
    ("chunk_uneven", lambda m, x: x.chunk(2, 1)),
    ("tensor_split", lambda m, x: x.tensor_split(3, 2)),
    ("tensor_split_idx", lambda m, x: x.tensor_split([1, 3], dim=2)),
    ("diagonal", lambda m, x: x.diagonal()),
    ("diagonal_offset", lambda m, x: x.diagonal(1, 1, 2)),
    ("diagonal_neg", lambda m, x: x.diagonal(-1, -1, 1)),
    ("diagonal_empty", lambda m, x: x.diagonal(9)),
    ("unfold", lambda m, x: x.unfold(2, 2, 1)),
    ("unfold_step", lambda m, x: x.unfold(1, 2, 2)),
    ("as_strided", lambda m, x: x.as_strided((3, 3), (1, 2))),
    ("as_strided_offset", lambda m, x: x.as_strided((2, 2), (4, 1), 5)),
    ("as_strided_of_view", lambda m, x: x[1].as_strided((2, 2), (4, 1))),
    ("movedim", lambda m, x: x.movedim(0, 2)),
    ("movedim_many", lambda m, x: x.movedim((0, 1), (2, 0))),
    ("moveaxis", lambda m, x: m.moveaxis(x, -1, 0)),
    ("index_int", lambda m, x: x[1]),
    ("index_slices", lambda m, x: x[:, ::2, 1::2]),
    ("index_none_ellipsis", lambda m, x: x[None, ..., None, 1]),
    ("index_neg", lambda m, x: x[-1, -2]),
    ("index_empty_slice", lambda m, x: x[:, 2:1]),
    ("index_alias", lambda m, x: x[...]),
    ("contiguous_noop", lambda m, x: x.contiguous()),
    ("contiguous_copy", lambda m, x: x.transpose(0, 1).contiguous()),
]


def _pieces(r):
    return list(r) if isinstance(r, (tuple, list)) else [r]


@pytest.mark.parametrize("name,fn", VIEW_CASES, ids=[c[0] for c in VIEW_CASES])
def test_view_op_geometry_values_and_sharing(name, fn):
    e_base, t_base = ember.arange(24.0).reshape(2, 3, 4), torch.arange(24.0).reshape(2, 3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        es, ts = _pieces(fn(ember, e_base)), _pieces(fn(torch, t_base))
    assert len(es) == len(ts)
    for e, t in zip(es, ts):
        assert_same(e, t, check_stride=True)
        assert e.storage_offset() == t.storage_offset()
        assert e.is_contiguous() == t.is_contiguous()
        shares_t = t.untyped_storage().data_ptr() == t_base.untyped_storage().data_ptr()
        shares_e = e.untyped_storage().data_ptr() == e_base.untyped_storage().data_ptr()
        assert shares_e == shares_t


@pytest.mark.parametrize("name,fn", VIEW_CASES, ids=[c[0] for c in VIEW_CASES])
def test_view_op_gradients_match_torch(name, fn):
    def run(m):
        def op(x):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                out = fn(m, x)
            return tuple(out) if isinstance(out, (tuple, list)) else out
        return op

    check_op(run(ember), run(torch), rand_array((2, 3, 4), np.float64))


@pytest.mark.parametrize("name,fn", VIEW_CASES[::4], ids=[c[0] for c in VIEW_CASES[::4]])
def test_view_op_finite_difference_gradients(name, fn):
    def op(x):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            out = _pieces(fn(ember, x))
        return sum((p * (i + 1)).sum() for i, p in enumerate(out))

    check_grads(op, rand_array((2, 3, 4), np.float64))


@pytest.mark.parametrize("name,fn", VIEW_CASES, ids=[c[0] for c in VIEW_CASES])
def test_view_op_on_meta(name, fn):
    e_base = ember.empty(2, 3, 4, device="meta")
    t_base = torch.empty(2, 3, 4, device="meta")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        es, ts = _pieces(fn(ember, e_base)), _pieces(fn(torch, t_base))
    for e, t in zip(es, ts):
        assert e.is_meta
        assert (e.shape, e.stride(), e.storage_offset()) == (t.shape, t.stride(),
                                                             t.storage_offset())


def test_views_record_pytorch_grad_fn_names():
    e = ember.ones(2, 3, requires_grad=True)
    t = torch.ones(2, 3, requires_grad=True)
    for fn in (lambda x: x.view(6), lambda x: x.t(), lambda x: x.transpose(0, 1),
               lambda x: x.permute(1, 0), lambda x: x.expand(4, 2, 3), lambda x: x.unsqueeze(0),
               lambda x: x[1], lambda x: x[:, 1:], lambda x: x.diagonal(),
               lambda x: x.as_strided((2, 2), (1, 2)), lambda x: x[...],
               lambda x: x.unfold(1, 2, 1)):
        assert type(fn(e).grad_fn).__name__ == type(fn(t).grad_fn).__name__


def test_view_dtype_reinterprets_bytes():
    base = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    for fn in (lambda m, x: x.view(m.int32), lambda m, x: x.view(m.int16),
               lambda m, x: x.view(m.uint8), lambda m, x: x.view(m.float64),
               lambda m, x: x.view(m.complex64), lambda m, x: x.transpose(1, 2).view(m.int32),
               lambda m, x: x.view(-1)[2:6].view(m.float64), lambda m, x: x[0, 0, 0].view(m.int32),
               lambda m, x: x.to(m.uint8).view(m.bool), lambda m, x: x.view(m.bfloat16)):
        e, t = fn(ember, ember.tensor(base)), fn(torch, torch.tensor(base))
        assert_same(e, t, check_stride=True, equal_nan=True)
        assert e.storage_offset() == t.storage_offset()


@pytest.mark.parametrize("bad", [
    lambda m, x: x.transpose(0, 2).view(-1), lambda m, x: x.view(5, 5),
    lambda m, x: x.view(-1, -1), lambda m, x: x[:, :1].expand(2, 5, 4).view(10, 4),
    lambda m, x: x.transpose(1, 2).view(m.int16), lambda m, x: x[..., :3].view(m.float64),
    lambda m, x: x[0, 0, 0].view(m.int16), lambda m, x: x.transpose(0, 3),
    lambda m, x: x.permute(0, 0, 1), lambda m, x: x.permute(0, 1), lambda m, x: x.t(),
    lambda m, x: x[0, 0].mT, lambda m, x: x.expand(2, 4, 4), lambda m, x: x.expand(3, 4),
    lambda m, x: x.expand(-1, 2, 3, 4), lambda m, x: x.squeeze(5), lambda m, x: x.unsqueeze(4),
    lambda m, x: x.flatten(2, 1), lambda m, x: x.unflatten(2, (3, 2)),
    lambda m, x: x.narrow(2, 3, 2), lambda m, x: x.select(1, 3), lambda m, x: x[0, 0, 0].select(
        0, 0), lambda m, x: x.split([1, 2], dim=2), lambda m, x: x.chunk(0),
    lambda m, x: x.diagonal(0, 1, 1), lambda m, x: x[0, 0].diagonal(),
    lambda m, x: x.unfold(2, 5, 1), lambda m, x: x.unfold(2, 2, 0),
    lambda m, x: x.as_strided((5, 5), (5, 1)), lambda m, x: x.as_strided((2,), (1, 1)),
    lambda m, x: x.movedim((0, 0), (1, 2)), lambda m, x: x[::-1], lambda m, x: x[:, ::0],
    lambda m, x: x[2], lambda m, x: x[0, 0, 0, 0],
    lambda m, x: x[1.0], lambda m, x: x[0, 0, 0][0],
])
def test_view_errors_raise_torch_exception_types(bad):
    with pytest.raises(Exception) as err:
        bad(torch, torch.arange(24.0).reshape(2, 3, 4))
    with pytest.raises(err.type):
        bad(ember, ember.arange(24.0).reshape(2, 3, 4))


def test_view_error_message_suggests_reshape():
    with pytest.raises(RuntimeError, match=r"Use \.reshape\(\.\.\.\) instead"):
        ember.ones(2, 3).t().view(-1)


def test_negative_step_message_matches_torch():
    with pytest.raises(ValueError, match="step must be greater than zero"):
        ember.ones(3)[::-1]


def test_reshape_copies_only_when_no_view_exists():
    x = ember.arange(6.0).reshape(2, 3)
    assert x.reshape(3, 2).data_ptr() == x.data_ptr()
    y = x.t().reshape(-1)
    assert y.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
    assert y._base is None
    assert_same(y, torch.arange(6.0).reshape(2, 3).t().reshape(-1))


def test_empty_and_zero_dim_views():
    for fn in (lambda m, x: x[:, :0].view(0, 5), lambda m, x: x[:, :0].reshape(4, 0),
               lambda m, x: x[0, 0, 0].view(1, 1), lambda m, x: x[0, 0, 0].view(()),
               lambda m, x: x[0, 0, 0].unsqueeze(0), lambda m, x: x[0, 0, 0].squeeze(0),
               lambda m, x: x[0, 0, 0].flatten(), lambda m, x: x[0, 0, 0].t(),
               lambda m, x: x[0, 0, 0].unfold(0, 1, 1), lambda m, x: x[:, :0].expand(3, 2, 0, 4),
               lambda m, x: x[:0].permute(2, 0, 1).clone(), lambda m, x: x[:, 2:1].unbind(1)):
        e, t = fn(ember, ember.arange(24.0).reshape(2, 3, 4)), fn(torch, torch.arange(24.0)
                                                                   .reshape(2, 3, 4))
        for pe, pt in zip(_pieces(e), _pieces(t)):
            assert_same(pe, pt, check_stride=True)


def test_writes_through_views_reach_the_base():
    e, t = ember.zeros(3, 4), torch.zeros(3, 4)
    for fn in (lambda x: x.t()[1:], lambda x: x[:, ::2], lambda x: x.diagonal(),
               lambda x: x.view(2, 6)[1], lambda x: x.unfold(1, 2, 2)[..., 0]):
        fn(e).add_(1)
        fn(t).add_(1)
    assert_same(e, t)


# --- found by the differential fuzzer (python -m fuzz) -----------------------------------

@pytest.mark.parametrize("call", [
    lambda L: L.ones(()).unsqueeze("x"),      # TypeError (was AttributeError)
    lambda L: L.squeeze(L.ones(4, 1), "x"),
    lambda L: L.ones(4).flatten("x"),
    lambda L: L.flatten(L.ones(4), 0, 1.5),
    lambda L: L.diagonal(L.ones(3), "x"),     # TypeError before the dims' IndexError
    lambda L: L.split(L.tensor(1.0), [1], dim=-1),  # 0-d: RuntimeError (was IndexError)
    lambda L: L.tensor(1.0).split(2),
    lambda L: L.chunk(L.tensor(1.0), 2),
    lambda L: L.tensor(True).chunk(1, dim=0),
])
def test_bad_arguments_raise_pytorchs_error_type(call):
    from helpers import same_error

    same_error(call)


def test_view_and_reshape_need_a_shape():
    from helpers import same_error, same_result

    same_error(lambda L: L.ones(1, 1).view())
    same_error(lambda L: L.ones(()).reshape())
    same_result(lambda L: L.ones(1, 1).reshape(()))
    same_result(lambda L: L.ones(1, 1).view(()))


@pytest.mark.parametrize("make,shape", [
    (lambda x: x.t(), (3, 2, 1)), (lambda x: x.t(), (6,)), (lambda x: x, (6,)),
    (lambda x: x.unsqueeze(0).permute(1, 2, 0), (1, 2, 3)),
    (lambda x: x.t().unsqueeze(0).permute(1, 0, 2), (1, 3, 2)),
], ids=["t_3d", "t_flat", "contiguous", "size1_permuted", "t_permuted"])
def test_reshape_names_its_node_as_torch(make, shape):
    """reshape of a contiguous tensor is a view (ViewBackward0); of a non-contiguous one that
    can still be viewed, PyTorch's _reshape_alias (ReshapeAliasBackward0); else a copy
    (UnsafeViewBackward0)."""
    a = rand_array((2, 3), np.float64)
    te = make(torch.tensor(a, requires_grad=True)).reshape(shape)
    ee = make(ember.tensor(a, requires_grad=True)).reshape(shape)
    assert ee.grad_fn.name() == te.grad_fn.name()
    assert ee.stride() == te.stride()
    assert (ee._base is not None) == (te._base is not None)
