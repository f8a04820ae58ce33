"""quantile / nanquantile against PyTorch: how its argument parser takes and refuses the
arguments (q as a list, dim as a bool or a tensor, keepdim as an int), in the function and
method forms, and the node that ends their graph."""

import numpy as np
import pytest
import torch

import ember

DATA = np.arange(15.0).reshape(3, 5) ** 1.5


def _call(mod, name, method, q, args, kwargs):
    x = mod.tensor(DATA)
    q = q(mod) if callable(q) else q
    kwargs = {k: (v(mod) if callable(v) else v) for k, v in kwargs.items()}
    return getattr(x, name)(q, *args, **kwargs) if method else \
        getattr(mod, name)(x, q, *args, **kwargs)


# calls torch's parser refuses: (q, positional args after q, keywords)
REFUSED = [
    ([0.5], (), {}), ((0.1, 0.2), (), {}), ("a", (), {}), (None, (), {}), (1 + 0j, (), {}),
    (0.5, (), {"dim": 1.5}), (0.5, (), {"dim": True}), (0.5, (0,), {"keepdim": 1}),
    (0.5, (), {"dim": 0, "keepdim": np.bool_(True)}), (0.5, (), {"interpolation": 3}),
    (0.5, (), {"interpolation": None}), (0.5, (), {"out": 3}), (0.5, (), {"bogus": 1}),
    ([0.5], (), {"dim": 0, "keepdim": False}), ([0.5], (0, True), {"interpolation": "lower"}),
    (0.5, (), {"dim": lambda m: m.tensor(1.0)}), (0.5, (), {"dim": lambda m: m.tensor([1])}),
    (0.5, (), {"dim": lambda m: m.tensor(True)}),
]


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("method", [False, True], ids=["function", "method"])
@pytest.mark.parametrize("q,args,kwargs", REFUSED)
def test_refused_calls_say_what_torch_says(name, method, q, args, kwargs):
    with pytest.raises(TypeError) as t_info:
        _call(torch, name, method, q, args, kwargs)
    with pytest.raises(TypeError) as e_info:
        _call(ember, name, method, q, args, kwargs)
    assert type(e_info.value) is type(t_info.value)
    assert str(e_info.value) == str(t_info.value)


# calls it takes though they look odd: integers for q, numpy scalars, a 0-d int tensor dim
TAKEN = [
    (1, (), {}), (True, (), {}), (np.float32(0.25), (), {}), (0.5, (), {"dim": np.int64(1)}),
    (0.5, (), {"dim": lambda m: m.tensor(1)}),
    (0.5, (), {"dim": lambda m: m.tensor(0, dtype=m.uint8), "keepdim": True}),
]


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("method", [False, True], ids=["function", "method"])
@pytest.mark.parametrize("q,args,kwargs", TAKEN)
def test_taken_calls_match(name, method, q, args, kwargs):
    t = _call(torch, name, method, q, args, kwargs)
    e = _call(ember, name, method, q, args, kwargs)
    assert tuple(e.shape) == tuple(t.shape)
    # exact: an order statistic is a copied element, a lerp of two is one rounded op
    np.testing.assert_array_equal(e.numpy(), t.numpy())


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("q", ["scalar", "0-d", "1-d"])
@pytest.mark.parametrize("dim", [None, 0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("interpolation", ["linear", "lower", "midpoint"])
def test_graph_ends_in_squeeze_and_grads_match(name, q, dim, keepdim, interpolation):
    """PyTorch's result always comes out of an in-place squeeze_(-1) (SqueezeBackward4)."""
    def run(mod):
        x = mod.tensor(DATA, requires_grad=True)
        qv = {"scalar": 0.3, "0-d": mod.tensor(0.3, dtype=mod.float64),
              "1-d": mod.tensor([0.1, 0.5, 0.8], dtype=mod.float64)}[q]
        r = getattr(mod, name)(x, qv, dim, keepdim, interpolation=interpolation)
        (r * mod.arange(1.0, r.numel() + 1, dtype=mod.float64).reshape(r.shape)).sum().backward()
        return r, x.grad

    (re, ge), (rt, gt) = run(ember), run(torch)
    assert type(re.grad_fn).__name__ == type(rt.grad_fn).__name__ == "SqueezeBackward4"
    assert tuple(re.shape) == tuple(rt.shape)
    np.testing.assert_array_equal(re.detach().numpy(), rt.detach().numpy())
    # the weights 1 - w and w of a lerp are single roundings on both sides
    np.testing.assert_allclose(ge.numpy(), gt.numpy(), rtol=1e-15, atol=0)


def test_zero_dim_input_and_out():
    for mod in (ember, torch):
        z = mod.tensor(2.5, dtype=mod.float64, requires_grad=True)
        r = mod.quantile(z, mod.tensor([0.2, 0.9], dtype=mod.float64), 0, True)
        assert tuple(r.shape) == (2,) and r.tolist() == [2.5, 2.5]
        assert type(r.grad_fn).__name__ == "SqueezeBackward4"
        out = mod.empty(0, dtype=mod.float64)
        mod.quantile(mod.tensor(DATA), 0.4, dim=1, out=out)
        assert tuple(out.shape) == (3,)
    e_out, t_out = ember.empty(0, dtype=ember.float64), torch.empty(0, dtype=torch.float64)
    ember.quantile(ember.tensor(DATA), 0.4, dim=1, out=e_out)
    torch.quantile(torch.tensor(DATA), 0.4, dim=1, out=t_out)
    np.testing.assert_array_equal(e_out.numpy(), t_out.numpy())


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
def test_out_of_another_dtype_is_refused(name):
    for mod in (torch, ember):
        x = mod.tensor(DATA)
        with pytest.raises(RuntimeError, match=r"^quantile\(\) out tensor must be same dtype "
                                               "as the input tensor$"):
            getattr(mod, name)(x, 0.5, out=mod.empty(0))
        # the earlier checks come first (q's range, an empty input)
        with pytest.raises(RuntimeError, match=r"q must be in the range"):
            getattr(mod, name)(x, 1.5, out=mod.empty(0))
        with pytest.raises(RuntimeError, match=r"must be non-empty"):
            getattr(mod, name)(mod.tensor([]), 0.5, out=mod.empty(0, dtype=mod.float64))
