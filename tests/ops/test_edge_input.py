"""Edge input against torch: 0-d tensors, size-0 dims, shapes that do not broadcast, and the
order PyTorch checks arguments in. Each case runs the same code on both libraries and expects
the same result (shape, dtype, values) or the same exception type and message."""

import itertools
import warnings

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same


def _run(fn, lib):
    """fn(lib) -> ("ok", result, warning categories) or ("err", exception, [])."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fn(lib)
        except Exception as e:  # noqa: BLE001 - the exception is what is compared
            return "err", e, []
    return "ok", out, sorted({w.category.__name__ for w in caught})


def _norm(msg: str) -> str:
    return msg.replace("torch.", "").replace("ember.", "")


def same_outcome(fn, *, exact_message: bool = True):
    """Run fn on torch and ember: same results (tuples compared piecewise) and warnings, or
    the same exception type with the same message (or, when the wording may differ, a
    message naming the same numbers)."""
    t_kind, t_val, t_warn = _run(fn, torch)
    e_kind, e_val, e_warn = _run(fn, ember)
    assert e_kind == t_kind, f"torch: {t_kind} {t_val!r}; ember: {e_kind} {e_val!r}"
    if t_kind == "err":
        assert type(e_val) is type(t_val), f"torch raised {t_val!r}, ember {e_val!r}"
        if exact_message:
            assert _norm(str(e_val)) == _norm(str(t_val))
        else:
            nums = sorted(set(__import__("re").findall(r"\d+", str(t_val))))
            for n in nums:
                assert n in str(e_val), f"{e_val!s} does not name {n} (torch: {t_val!s})"
        return e_val
    assert e_warn == t_warn
    if isinstance(t_val, (tuple, list)):
        assert len(e_val) == len(t_val), f"{len(e_val)} pieces, torch gives {len(t_val)}"
        for e, t in zip(e_val, t_val):
            assert_same(e, t)
    else:
        assert_same(e_val, t_val)
    return e_val


# --- NumPy's broadcast ValueError must not escape: RuntimeError naming the sizes ---------

NOT_BROADCASTABLE = {
    "masked_fill": lambda m: m.ones(3).masked_fill(m.ones(4, dtype=m.bool), 0.0),
    "masked_fill_tensor_value": lambda m: m.ones(3).masked_fill(m.ones(4, dtype=m.bool),
                                                                m.tensor(0.0)),
    "masked_select": lambda m: m.masked_select(m.ones(3), m.ones(4, dtype=m.bool)),
    "masked_scatter": lambda m: m.ones(3).masked_scatter(m.ones(4, dtype=m.bool), m.ones(4)),
    "where_condition": lambda m: m.where(m.ones(4, dtype=m.bool), m.ones(3), m.ones(3)),
    "where_values": lambda m: m.where(m.ones(3, dtype=m.bool), m.ones(3), m.ones(4)),
    "lerp": lambda m: m.lerp(m.ones(3), m.ones(4), 0.5),
    "lerp_weight": lambda m: m.lerp(m.ones(3), m.ones(3), m.ones(4)),
    "addcmul": lambda m: m.addcmul(m.ones(3), m.ones(4), m.ones(3)),
    "addcdiv": lambda m: m.addcdiv(m.ones(3), m.ones(3), m.ones(2, 4)),
    "clamp_tensor_bounds": lambda m: m.clamp(m.ones(3), m.zeros(4)),
    "clamp_both_bounds": lambda m: m.clamp(m.ones(3), m.zeros(3), m.ones(2)),
    "mse_loss": lambda m: m.nn.functional.mse_loss(m.ones(3), m.ones(4)),
    "smooth_l1_loss": lambda m: m.nn.functional.smooth_l1_loss(m.ones(3), m.ones(4)),
    "huber_loss": lambda m: m.nn.functional.huber_loss(m.ones(2, 3), m.ones(2, 4)),
}


@pytest.mark.parametrize("case", sorted(NOT_BROADCASTABLE))
def test_shapes_that_do_not_broadcast_raise_runtime_error(case):
    err = same_outcome(NOT_BROADCASTABLE[case], exact_message=False)
    assert "must match the size of tensor" in str(err)
    assert not isinstance(err, ValueError)


def test_broadcastable_shapes_still_broadcast():
    same_outcome(lambda m: m.ones(2, 3).masked_fill(m.tensor([True, False, True]), 5.0))
    same_outcome(lambda m: m.where(m.tensor([[True], [False]]), m.ones(3), m.zeros(2, 1)))
    same_outcome(lambda m: m.lerp(m.zeros(2, 1), m.ones(3), 0.25))
    # a broadcast mse warns and still computes, as in torch
    same_outcome(lambda m: m.nn.functional.mse_loss(m.arange(3.0).reshape(3, 1), m.ones(3)))


def test_broadcast_errors_renames_only_broadcast_clashes():
    from ember.ops._common import broadcast_errors

    @broadcast_errors
    def adds(a, b):
        return a + b

    @broadcast_errors
    def refuses(a, b):
        raise ValueError("not about shapes")

    with pytest.raises(RuntimeError, match=r"tensor a \(3\) must match .* b \(4\)"):
        adds(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="not about shapes"):  # shapes broadcast: kept
        refuses(np.ones(3), np.ones(1))


# --- split / chunk / tensor_split / unbind -------------------------------------------------

SHAPES_DIMS = [((0, 4), 0), ((0, 4), 1), ((3, 0), 1), ((3, 0), -1), ((0,), 0), ((5,), 0),
               ((4, 6), 1), ((7,), 0), ((2, 0, 3), 1)]


@pytest.mark.parametrize("shape,dim", SHAPES_DIMS)
@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_split_chunk_tensor_split_piece_counts(shape, dim, k):
    def x(m):
        return m.arange(float(np.prod(shape))).reshape(shape)

    same_outcome(lambda m: x(m).split(k, dim))
    same_outcome(lambda m: m.split(x(m), k, dim))
    same_outcome(lambda m: x(m).chunk(k, dim))
    same_outcome(lambda m: x(m).tensor_split(k, dim))
    same_outcome(lambda m: x(m).tensor_split([0, k], dim))


@pytest.mark.parametrize("shape,dim", SHAPES_DIMS)
def test_split_sizes_unbind_and_zero_size(shape, dim):
    n = shape[dim]

    def x(m):
        return m.zeros(shape)

    same_outcome(lambda m: x(m).split([n], dim))
    same_outcome(lambda m: x(m).split([0, n, 0], dim))
    same_outcome(lambda m: x(m).split([1, n], dim))  # sizes that do not sum to n
    same_outcome(lambda m: x(m).unbind(dim))
    same_outcome(lambda m: x(m).split(0, dim))  # only allowed when the dim is empty
    same_outcome(lambda m: x(m).split(-1, dim))
    same_outcome(lambda m: x(m).chunk(0, dim))


def test_chunk_on_an_empty_batch_unpacks():
    q, k = ember.zeros(0, 8).chunk(2)
    assert q.shape == k.shape == (0, 8)
    same_outcome(lambda m: m.zeros(0, 8).chunk(2))


def test_split_and_chunk_need_a_dim():
    same_outcome(lambda m: m.tensor(1.0).split(1))
    same_outcome(lambda m: m.tensor(1.0).chunk(2))


def test_split_grads_over_an_empty_dim():
    for m in (torch, ember):
        x = m.zeros(0, 4, requires_grad=True)
        a, b = x.chunk(2)
        (a.sum() + b.sum()).backward()
        assert tuple(x.grad.shape) == (0, 4)


# --- transposes of a 0-d tensor ---------------------------------------------------------------

ZERO_D = {
    "transpose_00": lambda m, x: x.transpose(0, 0),
    "transpose_-1-1": lambda m, x: x.transpose(-1, -1),
    "transpose_0-1": lambda m, x: x.transpose(0, -1),
    "transpose_01": lambda m, x: x.transpose(0, 1),
    "torch_transpose": lambda m, x: m.transpose(x, 0, 0),
    "swapaxes": lambda m, x: x.swapaxes(0, 0),
    "swapaxes_bad": lambda m, x: x.swapaxes(0, 1),
    "swapdims": lambda m, x: m.swapdims(x, -1, 0),
    "movedim": lambda m, x: x.movedim(0, 0),
    "movedim_neg": lambda m, x: x.movedim(-1, -1),
    "movedim_bad": lambda m, x: x.movedim(0, 1),
    "movedim_list": lambda m, x: x.movedim([0], [0]),
    "moveaxis": lambda m, x: m.moveaxis(x, 0, -1),
    "permute_empty": lambda m, x: x.permute(()),
    "permute_one": lambda m, x: x.permute(0),
    "permute_no_dims": lambda m, x: x.permute(),
    "t": lambda m, x: x.t(),
    "T": lambda m, x: x.T,
    "mT": lambda m, x: x.mT,
    "H": lambda m, x: x.H,
    "mH": lambda m, x: x.mH,
    "adjoint": lambda m, x: x.adjoint(),
    "flatten": lambda m, x: x.flatten(),
    "flatten_0_-1": lambda m, x: x.flatten(0, -1),
    "flatten_bad_end": lambda m, x: x.flatten(0, 1),
    "flatten_bad_start": lambda m, x: x.flatten(-2),
    "flatten_1_1": lambda m, x: x.flatten(1, 1),
}


@pytest.mark.parametrize("case", sorted(ZERO_D))
def test_transposes_of_a_0d_tensor(case):
    same_outcome(lambda m: ZERO_D[case](m, m.tensor(2.5)))


def test_unflatten_of_a_0d_tensor():
    # (torch's message carries a C++ stack trace after the sentence)
    for m in (torch, ember):
        with pytest.raises(RuntimeError, match="Dimension specified as 0 but tensor has no "
                                               "dimensions"):
            m.tensor(1.0).unflatten(0, (1,))


def test_0d_transpose_is_a_view_with_a_gradient():
    for m in (torch, ember):
        x = m.tensor(2.0, requires_grad=True)
        y = x.transpose(0, 0)
        assert y._base is x
        (y * 3).backward()
        assert float(x.grad) == 3.0


def test_1d_matrix_transposes_still_refuse():
    same_outcome(lambda m: m.ones(3).mT)
    same_outcome(lambda m: m.ones(3).adjoint())
    same_outcome(lambda m: m.ones(3).mH)
    same_outcome(lambda m: m.ones(3).transpose(0, 2))


def test_repeated_dims_are_refused():
    same_outcome(lambda m: m.ones(2, 3).movedim([0, 0], [0, 1]))
    same_outcome(lambda m: m.ones(2, 3).movedim([0, 1], [1, 1]))
    err = same_outcome(lambda m: m.ones(2, 3).permute(0, 0), exact_message=False)
    assert "duplicate dims" in str(err)


# --- products with a zero inner or outer size ---------------------------------------------------

RANK_SHAPES = {1: [(0,), (3,)], 2: [(2, 0), (0, 3), (2, 3)],
               3: [(4, 2, 0), (4, 0, 3), (0, 2, 3), (1, 2, 3)],
               4: [(5, 4, 2, 0), (5, 4, 0, 3)]}
PAIRS = [(sa, sb) for ra, rb in itertools.product(RANK_SHAPES, repeat=2)
         for sa in RANK_SHAPES[ra] for sb in RANK_SHAPES[rb]]


@pytest.mark.parametrize("sa,sb", PAIRS, ids=[f"{a}@{b}" for a, b in PAIRS])
def test_matmul_of_every_rank_pair_with_empty_dims(sa, sb):
    same_outcome(lambda m: m.ones(sa) @ m.ones(sb))


@pytest.mark.parametrize("sa,sb", [((4, 2, 0), (0, 3)), ((4, 2, 0), (0,)), ((2, 0), (0, 3)),
                                   ((5, 4, 2, 0), (4, 0, 3)), ((4, 0, 3), (3, 5)),
                                   ((4, 2, 3), (3, 0))])
def test_matmul_grads_with_empty_dims(sa, sb):
    def grads(m):
        a = m.ones(sa, requires_grad=True)
        b = m.ones(sb, requires_grad=True)
        (a @ b).sum().backward()
        return a.grad, b.grad

    same_outcome(grads)


@pytest.mark.parametrize("fn", ["mm", "bmm"])
def test_mm_bmm_with_empty_dims(fn):
    shapes = {"mm": [((2, 0), (0, 3)), ((0, 2), (2, 3)), ((2, 3), (3, 0)), ((2, 0), (3, 3))],
              "bmm": [((4, 2, 0), (4, 0, 3)), ((0, 2, 3), (0, 3, 4)), ((4, 0, 3), (4, 3, 5)),
                      ((4, 2, 3), (4, 3, 0)), ((4, 2, 0), (3, 0, 3))]}[fn]
    for sa, sb in shapes:
        same_outcome(lambda m, sa=sa, sb=sb: getattr(m, fn)(m.ones(sa), m.ones(sb)))


@pytest.mark.parametrize("xs,ws", [((4, 2, 0), (3, 0)), ((2, 0), (3, 0)), ((0,), (3, 0)),
                                   ((4, 0, 5), (3, 5)), ((4, 2, 5), (0, 5))])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_with_empty_dims_and_grads(xs, ws, bias):
    def run(m):
        x = m.ones(xs, requires_grad=True)
        w = m.ones(ws, requires_grad=True)
        b = m.full((ws[0],), 0.5, requires_grad=True) if bias else None
        y = m.nn.functional.linear(x, w, b)
        y.sum().backward()
        return (y, x.grad, w.grad) + ((b.grad,) if bias else ())

    same_outcome(run)


# --- argument check order: stack and cat check the dim first ------------------------------------

@pytest.mark.parametrize("dim", [5, -5, 2, -3, 1, 0])
def test_stack_checks_the_dim_before_the_sizes(dim):
    same_outcome(lambda m: m.stack([m.ones(2), m.ones(3)], dim=dim))
    same_outcome(lambda m: m.stack([m.ones(2), m.ones(3, 2)], dim=dim))
    same_outcome(lambda m: m.stack([m.ones(2), m.ones(2)], dim=dim))


@pytest.mark.parametrize("dim", [5, -5, 2, 1, 0])
def test_cat_checks_the_dim_before_the_sizes(dim):
    same_outcome(lambda m: m.cat([m.ones(2, 3), m.ones(3, 4)], dim=dim))
    same_outcome(lambda m: m.cat([m.ones(2, 3), m.ones(3)], dim=dim))
    same_outcome(lambda m: m.cat([m.ones(2, 3), m.tensor(1.0)], dim=dim))
