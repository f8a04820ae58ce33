"""The softmax family against PyTorch: softmax, log_softmax, logsumexp.

Besides values and gradients: numerical stability on large inputs, infinities, the fused
nodes' names, second derivatives (create_graph=True) and meta shapes.
"""

import warnings

import numpy as np
import pytest
import torch

import ember
from ember.ops.registry import apply
from ember.ops.softmax import softmax_backward_p
from op_oracle import array, check_double, meta_same, oracle, raises_like

from helpers import DTYPE_PAIRS, assert_same, check_grads, check_op

ALL_DTYPES = [e for e, _ in DTYPE_PAIRS]


def ns(x):
    """The namespace (ember or torch) matching tensor `x`."""
    return ember if isinstance(x, ember.Tensor) else torch


CALLS = {
    "softmax": lambda x: x.softmax(1),
    "softmax_fn": lambda x: ns(x).softmax(x, 0),
    "log_softmax": lambda x: x.log_softmax(-1),
    "log_softmax_fn": lambda x: ns(x).log_softmax(x, dim=0),
    "logsumexp": lambda x: x.logsumexp(1),
    "logsumexp_tuple": lambda x: ns(x).logsumexp(x, (0, 1), keepdim=True),
}


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("call", CALLS, ids=str)
def test_every_dtype_matches_torch(call, dtype):
    # Integers: softmax raises NotImplementedError, logsumexp computes in float32.
    oracle(CALLS[call], array((3, 4), dtype), grad=dtype in (ember.float32, ember.float64))


@pytest.mark.parametrize("shape,dim", [((), 0), ((), -1), ((5,), 0), ((2, 3, 4), 1),
                                       ((2, 3, 4), -1), ((0, 3), 1), ((3, 0), 1),
                                       ((0, 3), 0)])
@pytest.mark.parametrize("op", ["softmax", "log_softmax", "logsumexp"])
def test_shapes_and_dims(op, shape, dim):
    oracle(lambda x: getattr(x, op)(dim), array(shape, ember.float64))


@pytest.mark.parametrize("op", ["softmax", "log_softmax", "logsumexp"])
def test_non_contiguous_inputs_give_contiguous_results(op):
    a = array((3, 4, 5))
    fn = (lambda x: getattr(x.permute(2, 0, 1), op)(1))
    check_op(fn, fn, a, check_stride=True)
    oracle(lambda x: getattr(x.transpose(0, 2)[::2], op)(0), a)


def test_numerically_stable_on_large_inputs():
    a = np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1002.0, -1001.0]], np.float32)
    for fn in (lambda x: x.softmax(1), lambda x: x.log_softmax(1), lambda x: x.logsumexp(1),
               lambda x: x.logsumexp(0)):
        out, _ = oracle(fn, a)
        assert np.isfinite(out.detach().numpy()).all()


def test_infinities_and_nan_match_torch():
    inf = np.inf
    a = np.array([[inf, 1.0, 0.0], [-inf, -inf, -inf], [-inf, 2.0, 1.0], [np.nan, 1, 2]],
                 np.float64)
    for fn in (lambda x: x.softmax(1), lambda x: x.log_softmax(1), lambda x: x.logsumexp(1)):
        oracle(fn, a, grad=False)
    oracle(lambda x: x.logsumexp(1), a[2:3])  # gradient with a -inf entry


def test_low_precision_rounds_once_from_float32():
    a = array((4, 50), ember.float16, low=-8, high=8)
    for fn in (lambda x: x.softmax(1), lambda x: x.log_softmax(1), lambda x: x.logsumexp(1)):
        check_op(fn, fn, a, grad=False, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("name", ["float64", "float16", "bfloat16"])
def test_dtype_argument_casts_first(name):
    for op in ("softmax", "log_softmax"):
        oracle(lambda x, op=op: getattr(ns(x), op)(x, 1, dtype=getattr(ns(x), name)),
               array((3, 4)), grad=False)
    oracle(lambda x: x.softmax(0, dtype=getattr(ns(x), name)), array((3,), ember.int64),
           grad=False)


def test_implicit_dim_warns_and_picks_torchs_dim():
    # ember.softmax needs a dim (as torch.softmax does); nn.functional's legacy dim=None
    # goes through implicit_softmax_dim.
    import ember.nn.functional as F

    a = array((2, 3, 4))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = F.softmax(ember.tensor(a), None)
    assert any("Implicit dimension" in str(w.message) for w in caught)
    assert_same(out, torch.nn.functional.softmax(torch.tensor(a), dim=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same(F.log_softmax(ember.tensor(a[0]), None),
                    torch.nn.functional.log_softmax(torch.tensor(a[0]), dim=1))
    raises_like(lambda x: ns(x).softmax(x, None), a)
    raises_like(lambda x: ns(x).logsumexp(x, None), a)


def test_softmax_rows_sum_to_one():
    x = ember.tensor(array((6, 7), ember.float64, low=-30, high=30))
    np.testing.assert_allclose(x.softmax(1).sum(1).numpy(), np.ones(6), rtol=1e-12)
    np.testing.assert_allclose(x.log_softmax(0).exp().sum(0).numpy(), np.ones(7), rtol=1e-12)


def test_errors_match_torch():
    raises_like(lambda x: x.softmax(2), array((3, 4)))
    raises_like(lambda x: x.log_softmax(-3), array((3, 4)))
    raises_like(lambda x: x.logsumexp(2), array((3, 4)))
    raises_like(lambda x: x.logsumexp((0, 0)), array((3, 4)))
    raises_like(lambda x: x.softmax(0), array((3,), ember.complex64))


# --- gradients -------------------------------------------------------------------------

def test_fused_nodes_have_torchs_names():
    for e, t in ((ember.rand(2, 3, requires_grad=True), torch.rand(2, 3, requires_grad=True)),):
        for op in ("softmax", "log_softmax", "logsumexp"):
            assert type(getattr(e, op)(1).grad_fn).__name__ == \
                type(getattr(t, op)(1).grad_fn).__name__


def test_finite_differences():
    a = array((3, 5), ember.float64, seed=2)
    for fn in (lambda x: x.softmax(1) * x, lambda x: x.log_softmax(0) ** 2,
               lambda x: x.logsumexp(1), lambda x: x.logsumexp((0, 1)) * x.sum()):
        check_grads(fn, a)


@pytest.mark.parametrize("fn", [
    lambda x: x.softmax(1), lambda x: x.softmax(0), lambda x: x.log_softmax(1),
    lambda x: x.log_softmax(0) * x, lambda x: x.logsumexp(1), lambda x: x.logsumexp((0, 1)),
    lambda x: x.logsumexp(0, keepdim=True) * x,
])
def test_second_derivatives_match_torch(fn):
    check_double(fn, array((3, 4), ember.float64))


def test_second_derivatives_on_0d_and_3d():
    check_double(lambda x: x.softmax(0), array((), ember.float64))
    check_double(lambda x: x.log_softmax(2) * x, array((2, 3, 4), ember.float64))


def test_complex_logsumexp_gradient():
    oracle(lambda x: x.logsumexp(1), array((2, 3), ember.complex128))


def test_softmax_cross_entropy_shape_workload():
    # The issue-9 workload shape, in small: log_softmax + gather of the targets.
    a = array((64, 100), ember.float32, low=-5, high=5)
    targets = np.arange(64) % 100

    def loss(x):
        lp = x.log_softmax(1)
        idx = (ember if isinstance(x, ember.Tensor) else torch).tensor(targets).reshape(-1, 1)
        return -lp.gather(1, idx).mean()

    check_op(loss, loss, a)


# --- meta ----------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda x: x.softmax(1), lambda x: x.log_softmax(0), lambda x: x.logsumexp(1),
    lambda x: x.logsumexp((0, 2), keepdim=True),
    lambda x: x.softmax(-1, dtype=ns(x).float64),
])
@pytest.mark.parametrize("transpose", [False, True])
def test_meta_shapes_dtypes_strides(call, transpose):
    meta_same(call, (2, 3, 4), transpose=transpose)


def test_meta_logsumexp_of_integers_is_float():
    meta_same(lambda x: x.logsumexp(0), (2, 3), ember.int32)


def test_large_inputs_take_the_blocked_threaded_path():
    # > 4 MiB of float32 rows: the kernels run in cache-sized blocks spread over threads.
    a = array((1037, 1013), ember.float32, low=-20, high=20)
    for fn in (lambda x: x.softmax(1), lambda x: x.log_softmax(-1)):
        check_op(fn, fn, a)
    check_op(lambda x: x.softmax(1), lambda x: x.softmax(1), array((97, 9000), ember.float16),
             grad=False)


@pytest.mark.parametrize("value", [0.5, float("inf"), float("-inf"), float("nan")])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_of_a_0d_tensor_is_torchs_for_every_value(value, log):
    """A 0-d input is a row of one: 1 (or 0 for log_softmax) for a finite value, NaN for
    an infinite or NaN one, as PyTorch's kernel computes it."""
    import torch

    got = []
    for m in (ember, torch):
        x = m.tensor(value)
        got.append(float(x.log_softmax(0) if log else x.softmax(0)))
    np.testing.assert_equal(got[0], got[1])


def _low_pair(name: str, shape, seed: int):
    """A float16 / bfloat16 tensor (scaled normal values) for ember and the same for torch."""
    g = torch.Generator().manual_seed(seed)
    t = (torch.randn(shape, generator=g) * 4).to(getattr(torch, name))
    return ember.tensor(t.float().numpy()).to(getattr(ember, name)), t


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(64, 10), (4, 5, 300), (3, 1000), (1, 7), (7,)])
def test_low_log_softmax_last_dim_rounds_where_torch_does(name, shape):
    # torch's last-dim kernel rounds each row's exp-sum and its log to 16 bits before the
    # float32 subtraction: the bits agree. (float32 exp / log are within 1 ulp on both
    # sides and the results are rounded to 8 / 11 bits, so no case here lands on a tie.)
    e, t = _low_pair(name, shape, 0)
    got = ember.log_softmax(e, -1).float().numpy()
    want = torch.log_softmax(t, -1).float().numpy()
    np.testing.assert_array_equal(got, want)
    got = ember.log_softmax(e.transpose(0, -1), -1).float().numpy()  # (non-contiguous)
    np.testing.assert_array_equal(got, torch.log_softmax(t.transpose(0, -1), -1).float().numpy())


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_low_log_softmax_other_dims_round_once(name):
    # Other dims: computed in float32 and rounded once, on both sides.
    e, t = _low_pair(name, (4, 37, 6), 1)
    np.testing.assert_array_equal(ember.log_softmax(e, 1).float().numpy(),
                                  torch.log_softmax(t, 1).float().numpy())


def test_low_log_softmax_known_bfloat16_row():
    # Worked by hand: x - max = -0.525390625 and log(sum) = 1.33944785 give -1.8648, whose
    # nearest bfloat16 is -1.8671875; torch rounds log(sum) to 1.3359375 first and prints
    # -1.859375.
    e, t = _low_pair("bfloat16", (8, 10), 2)
    np.testing.assert_array_equal(ember.log_softmax(e, -1).float().numpy(),
                                  torch.log_softmax(t, -1).float().numpy())
    x = ember.tensor([[0.0, -0.525390625, -1.0, 0.5]]).to(ember.bfloat16)
    np.testing.assert_array_equal(
        ember.log_softmax(x, -1).float().numpy(),
        torch.log_softmax(torch.tensor(x.float().numpy()).bfloat16(), -1).float().numpy())


def _same_bits(got, want):
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
@pytest.mark.parametrize("shape,dim", [((4, 37, 6), 1), ((64, 20), 0), ((5, 9, 33), 0),
                                       ((3, 70, 40), 1), ((7, 3, 50), 1), ((1, 3, 300), 1),
                                       ((2, 5, 100), 1), ((3, 1, 7), 1)])
@pytest.mark.parametrize("threads", [1, 2])
def test_low_softmax_other_dims_rounds_where_torch_does(name, shape, dim, threads):
    # torch's non-last-dim kernel keeps exp(x - max) in float32 for the columns it takes
    # in whole vector steps of 32 and rounds it to 16 bits first for the rest; which
    # columns those are depends on the thread count, set alike on both sides. (float32
    # exp is within 1 ulp on both sides; none of these cases lands near a 16-bit tie.)
    before = (ember.get_num_threads(), torch.get_num_threads())
    ember.set_num_threads(threads)
    torch.set_num_threads(threads)
    try:
        e, t = _low_pair(name, shape, 3)
        _same_bits(ember.softmax(e, dim), torch.softmax(t, dim))
        et, tt = e.transpose(0, -1), t.transpose(0, -1)  # (non-contiguous)
        _same_bits(ember.softmax(et, 0), torch.softmax(tt, 0))
    finally:
        ember.set_num_threads(before[0])
        torch.set_num_threads(before[1])


def test_low_softmax_other_dims_rounds_the_exp_in_tail_columns():
    # Worked by hand: a column [0, -0.340087890625] in float16: exp(x) = 0.71170771 and the
    # float32 sum is 1.71170771. Rounded once, 0.71170771 / 1.71170771 = 0.41578811 is
    # 0.415771484375 in float16; torch's tail column stores exp(x) as 0.7119140625 first,
    # and 0.7119140625 / 1.71170771 = 0.4159087 rounds to 0.416015625.
    x = ember.tensor([[0.0], [-0.340087890625]]).to(ember.float16)
    got = ember.softmax(x, 0).float().numpy()
    assert got[1, 0] == 0.416015625
    _same_bits(ember.softmax(x, 0), torch.softmax(torch.tensor(x.float().numpy()).half(), 0))


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
@pytest.mark.parametrize("shape,dim", [((8, 50, 3), 2), ((500, 7), 1), ((500, 20), 1),
                                       ((300, 16), 1), ((300, 64), 1), ((100, 1000), 1),
                                       ((200, 37), 1), ((5, 9, 33), 0), ((64, 200), 0),
                                       ((3, 500, 50), 1)])
def test_low_softmax_backward_sums_in_torchs_order(name, shape, dim):
    # torch's 16-bit softmax backward sums g * out in float32 in a fixed order (lanes
    # along the last dim, one after another along others), then rounds (g - s) * out
    # once; torch's own forward output goes into ember's backward primitive (the node
    # softmax's VJP applies), so only the backward is compared.
    e, t = _low_pair(name, shape, 5)
    out = torch.softmax(t, dim)
    g = torch.randn(shape, generator=torch.Generator().manual_seed(6)).to(t.dtype)
    want = torch.ops.aten._softmax_backward_data(g, out, dim, t.dtype)
    eo = ember.tensor(out.float().numpy()).to(e.dtype)
    eg = ember.tensor(g.float().numpy()).to(e.dtype)
    _same_bits(apply(softmax_backward_p, eg, eo, dim=dim), want)
