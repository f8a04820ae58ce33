"""F.fractional_max_pool2d / 3d and nn.FractionalMaxPool2d / 3d against torch: the windows
placed by the same samples (given, or drawn from the same random stream), the same winners
(ties to the first, NaN to the last), their gradient, and the checks in torch's words."""

import numpy as np
import pytest
import torch

import ember

from helpers import same_message


def _both(fn, x: np.ndarray, samples: np.ndarray | None = None, grad: bool = False):
    """fn(lib, input, samples) in torch then ember; (output, input) per library."""
    res = []
    for lib in (torch, ember):
        xt = lib.tensor(x, requires_grad=grad)
        st = None if samples is None else lib.tensor(samples)
        res.append((fn(lib, xt, st), xt))
    return res


def _same(a, b):
    for t, e in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
        assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
        np.testing.assert_array_equal(e.detach().numpy(), t.detach().numpy())


CASES2D = [((2, 2), (5, 6)), ((3, 2), (7, 9)), ((2, 3), (10, 11)), ((1, 1), (11, 13)),
           ((3, 3), (1, 1)), ((2, 2), (2, 3)), ((4, 1), (3, 12))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k, out", CASES2D, ids=str)
def test_windows_and_winners_are_torchs(k, out, dtype):
    """Exact: the window starts come from the same arithmetic in the samples' precision and
    a maximum is one of the input's values."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 11, 13)).astype(dtype)
    s = rng.random((2, 3, 2)).astype(dtype)
    (t, _), (e, _) = _both(lambda L, a, r: L.nn.functional.fractional_max_pool2d(
        a, k, output_size=out, return_indices=True, _random_samples=r), x, s)
    _same(t, e)


def test_ties_go_to_the_first_and_nan_to_the_last():
    x = np.zeros((1, 2, 6, 6), np.float32)
    x[0, 1, 0, 0] = x[0, 1, 1, 1] = np.nan
    s = np.full((1, 2, 2), 0.5, np.float32)
    (t, _), (e, _) = _both(lambda L, a, r: L.nn.functional.fractional_max_pool2d(
        a, 2, output_size=3, return_indices=True, _random_samples=r), x, s)
    _same(t, e)


def test_samples_drawn_from_the_same_stream():
    x = np.random.default_rng(1).standard_normal((2, 3, 9, 10)).astype(np.float32)
    outs = []
    for lib in (torch, ember):
        lib.manual_seed(7)
        outs.append(lib.nn.functional.fractional_max_pool2d(lib.tensor(x), 3, output_ratio=(
            0.5, 0.7), return_indices=True))
    _same(outs[0], outs[1])


def test_gradient_is_torchs():
    # float64: where windows overlap, a winner's cotangents add in the backward pass's order
    rng = np.random.default_rng(2)
    x, s = rng.standard_normal((2, 2, 9, 10)), rng.random((2, 2, 2))
    g = rng.standard_normal((2, 2, 6, 7))
    grads = []
    for lib in (torch, ember):
        xt = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.fractional_max_pool2d(xt, 3, output_size=(6, 7),
                                                    _random_samples=lib.tensor(s))
        assert type(y.grad_fn).__name__ == "FractionalMaxPool2DBackward0"
        y.backward(lib.tensor(g))
        grads.append(xt.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("shape, k, out", [((1, 2, 5, 6, 7), 2, (3, 4, 5)),
                                           ((2, 6, 7, 5), (2, 3, 1), (4, 2, 4))], ids=str)
def test_3d_is_torchs(shape, k, out):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape).astype(np.float32)
    s = rng.random((shape[0] if len(shape) == 5 else 1, shape[-4], 3)).astype(np.float32)
    (t, _), (e, _) = _both(lambda L, a, r: L.nn.functional.fractional_max_pool3d(
        a, k, output_size=out, return_indices=True, _random_samples=r), x, s)
    _same(t, e)


@pytest.mark.parametrize("name", ["unbatched", "empty batch", "empty window", "half"])
def test_edge_inputs(name):
    x = np.random.default_rng(4).standard_normal((2, 3, 9, 10)).astype(np.float32)
    s = np.random.default_rng(5).random((2, 3, 2)).astype(np.float32)
    x, s, k, dtype = {"unbatched": (x[0], s[:1], 2, None), "empty batch": (x[:0], s[:0], 2, None),
                      "empty window": (x, s, 0, None), "half": (x, s, 2, "float16")}[name]
    outs = []
    for lib in (torch, ember):
        a, r = lib.tensor(x), lib.tensor(s)
        if dtype:
            a, r = a.to(getattr(lib, dtype)), r.to(getattr(lib, dtype))
        outs.append(lib.nn.functional.fractional_max_pool2d(a, k, output_size=(4, 5),
                                                             return_indices=True,
                                                             _random_samples=r))
    _same(outs[0], outs[1])


def _fmp(shape, k=2, out=(4, 5), samples=(2, 3, 2), sdtype="float32", **kw):
    def call(L):
        r = None if samples is None else L.rand(*samples, dtype=getattr(L, sdtype))
        return L.nn.functional.fractional_max_pool2d(L.ones(shape), k, output_size=out,
                                                     _random_samples=r, **kw)
    return call


REFUSED = {
    "pool too high": _fmp((2, 3, 9, 10), 3, (8, 5)),
    "pool too wide": _fmp((2, 3, 9, 10), 3, (4, 9)),
    "5-d input": _fmp((1, 2, 3, 9, 10)),
    "5-d input before the samples' dtype": _fmp((1, 2, 3, 9, 10), sdtype="float64"),
    "empty channels": _fmp((2, 0, 9, 10), samples=(2, 0, 2)),
    "kernel length": _fmp((2, 3, 9, 10), (2, 2, 2)),
    "output length": _fmp((2, 3, 9, 10), 2, (4, 5, 6)),
    "samples dtype": _fmp((2, 3, 9, 10), sdtype="float64"),
    "samples dims": _fmp((2, 3, 9, 10), samples=(2, 2)),
    "samples batch": _fmp((2, 3, 9, 10), samples=(1, 3, 3)),
    "samples channels": _fmp((2, 3, 9, 10), samples=(2, 1, 2)),
    "samples last dim": _fmp((2, 3, 9, 10), samples=(2, 3, 3)),
    "pool too large after a ratio": lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(2, 3, 9, 10), 2, output_ratio=(1.5, 0.5)),
}




def _fmp3(k=2, out=(2, 2, 2), shape=(2, 3, 6, 7, 5), samples=(2, 3, 3)):
    return lambda L: L.nn.functional.fractional_max_pool3d(
        L.ones(shape), k, output_size=out, _random_samples=L.rand(*samples))


REFUSED.update({  # the 3-d kernel words its checks its own way, and wants room to spare
    "3-d pool as wide as the input allows in 2-d": _fmp3((2, 3, 1), (4, 2, 5)),
    "3-d pool too long": _fmp3((2, 3, 2), (5, 4, 3)),
    "3-d rank": _fmp3(shape=(1, 2, 3, 6, 7, 5)),
    "3-d empty channels": _fmp3(shape=(2, 0, 6, 7, 5), samples=(2, 0, 3)),
    "3-d kernel length": _fmp3(k=(2, 2)),
    "3-d output length": _fmp3(out=(2, 2)),
    "3-d samples last dim": _fmp3(samples=(2, 3, 2)),
})


@pytest.mark.parametrize("name", REFUSED)
def test_refused_in_torchs_words(name):
    same_message(REFUSED[name])


@pytest.mark.parametrize("nd", [2, 3])
def test_integer_input_is_refused_after_the_checks(nd):
    def call(L):
        x = L.ones((2, 3) + (6,) * nd, dtype=L.long)
        return getattr(L.nn.functional, f"fractional_max_pool{nd}d")(
            x, 2, output_size=2, _random_samples=L.ones(2, 3, nd, dtype=L.long))
    same_message(call, NotImplementedError)


VALUE_ERRORS = {
    "no size": lambda L: L.nn.functional.fractional_max_pool2d(L.ones(1, 1, 4, 4), 2),
    "3 ratios": lambda L: L.nn.functional.fractional_max_pool2d(L.ones(1, 1, 4, 4), 2,
                                                                output_ratio=(0.5,) * 3),
    "3-d no size": lambda L: L.nn.functional.fractional_max_pool3d(L.ones(1, 1, 4, 4, 4), 2),
    "module no size": lambda L: L.nn.FractionalMaxPool2d(3),
    "module both": lambda L: L.nn.FractionalMaxPool2d(3, output_size=4, output_ratio=0.5),
    "module ratio": lambda L: L.nn.FractionalMaxPool3d(3, output_ratio=1.5),
}


@pytest.mark.parametrize("name", VALUE_ERRORS)
def test_value_errors_in_torchs_words(name):
    same_message(VALUE_ERRORS[name], ValueError)


def test_module_draws_like_torch_and_prints_like_torch():
    x = np.random.default_rng(6).standard_normal((2, 3, 9, 10)).astype(np.float32)
    outs, reprs = [], []
    for lib in (torch, ember):
        lib.manual_seed(3)
        m = lib.nn.FractionalMaxPool2d(3, output_size=(4, 5), return_indices=True)
        outs.append(m(lib.tensor(x)))
        reprs.append(repr(m))
    _same(outs[0], outs[1])
    assert reprs[1] == reprs[0]


def test_double_backward():
    # PyTorch's fractional_max_pool derivative kernel takes the input: a create_graph
    # gradient requires grad, its own gradient zeros (the node's name is not compared:
    # ember's pooling is a gather, its gradient ends in a view)
    from helpers import check_double_backward

    cases = [(f"{nd}d", lambda M, v, nd=nd: getattr(M.nn.functional, f"fractional_max_pool{nd}d")(
        v, 2, output_size=3, _random_samples=M.full((1, 2, nd), 0.3, dtype=M.float64)),
        (1, 2) + (6,) * nd, False) for nd in (2, 3)]
    check_double_backward(cases)
