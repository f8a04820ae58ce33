"""torch.signal.windows against torch: every window, both symmetries, both dtypes, the
degenerate lengths, and the argument checks in PyTorch's words."""

import numpy as np
import pytest
import torch

import ember
from ember import _names

from helpers import same_message

NAMES = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "hamming", "hann",
         "kaiser", "nuttall"]

# The windows go through exp / sin / cos / i0, whose float32 results come from PyTorch's
# vectorised (SLEEF) kernels, a few ulps from correctly rounded; kaiser's float64 i0 is a
# Chebyshev series summed in another order. Bartlett (linspace and abs) is exact.
RTOL = {torch.float32: 1e-6, torch.float64: 1e-14}


def _window(lib, name, *args, **kwargs):
    dtype = kwargs.pop("dtype", None)
    if dtype is not None:
        kwargs["dtype"] = getattr(lib, str(dtype).split(".")[1])
    return getattr(lib.signal.windows, name)(*args, **kwargs)


def _compare(name, *args, **kwargs):
    t = _window(torch, name, *args, **kwargs)
    e = _window(ember, name, *args, **kwargs)
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    assert e.requires_grad == t.requires_grad
    rtol = 0.0 if name == "bartlett" else RTOL[t.dtype]
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=rtol,
                               atol=rtol * 1e-3)


@pytest.mark.parametrize("dtype", [None, torch.float64], ids=str)
@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("M", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("name", NAMES)
def test_window_matches_torch(name, M, sym, dtype):
    _compare(name, M, sym=sym, dtype=dtype)


@pytest.mark.parametrize("name, kwargs", [
    ("gaussian", {"std": 2.5}), ("exponential", {"center": 1.0, "tau": 3.0, "sym": False}),
    ("kaiser", {"beta": 3.5}), ("kaiser", {"beta": 0.0}), ("hann", {"requires_grad": True}),
    ("general_cosine", {"a": [0.46, 0.23, 0.31, 0.1]}),
    ("general_hamming", {"alpha": 0.7, "sym": False})], ids=str)
def test_window_parameters_match_torch(name, kwargs):
    _compare(name, 7, **kwargs)


REFUSED = {
    "negative length": lambda L: L.signal.windows.gaussian(-1),
    "negative length, named by general_cosine": lambda L: L.signal.windows.hann(-2),
    "integer dtype": lambda L: L.signal.windows.kaiser(3, dtype=L.int32),
    "half dtype": lambda L: L.signal.windows.blackman(3, dtype=L.float16),
    "sparse layout": lambda L: L.signal.windows.bartlett(3, layout=L.sparse_coo),
    "std": lambda L: L.signal.windows.gaussian(7, std=0),
    "tau": lambda L: L.signal.windows.exponential(7, tau=-1.0),
    "center of a symmetric window": lambda L: L.signal.windows.exponential(7, center=1.0),
    "beta": lambda L: L.signal.windows.kaiser(9, beta=-1.0),
    "no coefficients": lambda L: L.signal.windows.general_cosine(6, a=[]),
}


@pytest.mark.parametrize("name", REFUSED)
def test_window_refusals_in_torchs_words(name):
    msgs = []
    for lib in (torch, ember):
        with pytest.raises(ValueError) as info:
            REFUSED[name](lib)
        msgs.append(str(info.value))
    # (a dtype or layout prints with ember's own prefix outside `ember.compat.install()`)
    assert msgs[1] == msgs[0].replace("torch.", f"{_names.prefix}.")


def test_coefficients_must_be_iterable():
    same_message(lambda L: L.signal.windows.general_cosine(6, a=0.5), TypeError)


def test_signal_is_a_torch_submodule():
    import ember.signal.windows as windows

    assert ember.signal.windows is windows
    assert set(windows.__all__) == set(torch.signal.windows.__all__)
