"""The window functions bind their arguments as torch's argument parser does: `periodic`,
`alpha` and `beta` only after every argument before them (`kaiser_window(4, beta=8.0)` is a
TypeError), booleans that must be bool, 0-d tensors for numbers, and torch's three kinds of
message (invalid combination, one overload's own error, an overload's missing or extra
argument), with the keywords listed in torch's (libstdc++ unordered_map) order."""

import itertools

import numpy as np
import pytest
import torch

import ember

NAMES = ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
         "kaiser_window"]

# (args, kwargs); "T:" strings name a torch/ember attribute, "t:" a 0-d tensor of that value
CASES = [
    ((4,), {"beta": 8.0}), ((4,), {"alpha": 0.5}), ((4,), {"alpha": 0.5, "beta": 0.3}),
    ((4, False), {"beta": 8.0}), ((4, False), {"alpha": 0.5}), ((4, False, 0.5), {"beta": 0.3}),
    ((4,), {"periodic": False}), ((4, False, 8.0), {}), ((4, False, 0.5, 0.3), {}),
    ((4, False, 0.5, 0.3, 0.1), {}), ((4, 1), {}), ((4, False, 8), {}), ((4, False, "a"), {}),
    ((4,), {"foo": 1}), ((4,), {"window_length": 3}), ((), {"window_length": 3}), ((), {}),
    ((4.0,), {}), ((True,), {}), ((4, None), {}), ((4,), {"periodic": None}),
    ((4,), {"dtype": "float"}), ((4,), {"requires_grad": 1}), ((4, False, True), {}),
    ((4, False, 8.0), {"beta": 3.0}), ((4,), {"periodic": False, "beta": 8.0}),
    ((4,), {"periodic": False, "alpha": 0.5}), ((4,), {"layout": "T:strided"}),
    ((4,), {"device": "cpu", "pin_memory": False}), ((4, False), {"periodic": True}),
    (("t:4",), {}), ((4, "t:True"), {}), ((4, False, "t:2.0"), {}), (("t:4.0",), {}),
    ((4,), {"dtype": "T:float64", "periodic": True}), ((), {"dtype": "T:float64"}),
    ((), {"foo": 1}), ((4, False, 1, 1, 1, 1, 1, 1), {}), ((4,), {"pin_memory": None}),
    ((4,), {"requires_grad": None}), ((4,), {"layout": None, "device": None, "dtype": None}),
    ((np.int64(4),), {}), ((4,), {"dtype": 1.5}), ((4, False, np.float32(2.0)), {}),
    ((4, np.bool_(True)), {}), ((4,), {"requires_grad": 1, "foo": 2}),
    ((4, False), {"dtype": "T:float64", "device": "cpu", "requires_grad": "x"}),
    ((4,), {"device": "T:cpu_device"}), ((4,), {"requires_grad": True}),
    ((4,), {"dtype": "T:int64"}), ((-2,), {}), ((0,), {}), ((1, False), {}),
    # as many arguments as an overload's printed parameters: torch's "didn't match" lines
    ((4, None, None, None, None, None, None), {}),
    ((np.int64(4), False, (1,), [2, 3], (), "T:float64", "x"), {}),
    ((4, False, 0.5, 0.3, None, None, None, None, False, True), {}),
    ((4, False), {"alpha": 1, "beta": 2, "dtype": None, "device": None, "layout": None,
                  "requires_grad": False}),
    ((4,), {"periodic": True, "alpha": 1, "beta": 2, "dtype": None, "device": None,
            "layout": None, "requires_grad": False, "pin_memory": False, "foo": 1}),
]


def _resolve(L, value):
    if isinstance(value, str) and value.startswith("T:"):
        return L.device("cpu") if value == "T:cpu_device" else getattr(L, value[2:])
    if isinstance(value, str) and value.startswith("t:"):
        text = value[2:]
        return L.tensor(True if text == "True" else float(text) if "." in text else int(text))
    return value


def _outcome(L, name, args, kwargs):
    args = tuple(_resolve(L, a) for a in args)
    kwargs = {k: _resolve(L, v) for k, v in kwargs.items()}
    try:
        w = getattr(L, name)(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the exception is what is compared
        return type(exc).__name__, str(exc).replace(f"{L.__name__}.", "<lib>.")
    return str(w.dtype).split(".")[-1], w.requires_grad, np.round(w.detach().numpy(), 5).tolist()


@pytest.mark.parametrize("case", CASES, ids=lambda c: repr(c))
@pytest.mark.parametrize("name", NAMES)
def test_window_arguments_bind_as_torch(name, case):
    args, kwargs = case
    assert _outcome(ember, name, args, kwargs) == _outcome(torch, name, args, kwargs)


def test_speech_program_kaiser_keyword_beta():
    with pytest.raises(TypeError) as t_info:
        torch.kaiser_window(4, beta=8.0)
    with pytest.raises(TypeError) as e_info:
        ember.kaiser_window(4, beta=8.0)
    assert str(e_info.value) == str(t_info.value).replace("torch.", "ember.")
    assert str(e_info.value).startswith(
        "kaiser_window() received an invalid combination of arguments - got (int, beta=float), "
        "but expected one of:\n * (int window_length, *, ember.dtype dtype = None, ")


@pytest.mark.parametrize("count", [2, 3, 4])
def test_keywords_listed_in_torchs_order(count):
    # torch collects the keywords in a std::unordered_map: its order, not the call's
    keys = ["alpha", "beta", "periodic", "dtype", "device", "layout", "requires_grad", "foo"]
    for combo in itertools.islice(itertools.permutations(keys, count), 0, None, 7):
        kwargs = dict.fromkeys(combo, 1.5)
        with pytest.raises(TypeError) as t_info:
            torch.hann_window(4, **kwargs)
        with pytest.raises(TypeError) as e_info:
            ember.hann_window(4, **kwargs)
        assert str(e_info.value) == str(t_info.value).replace("torch.", "ember.")


def test_parsed_windows_keep_their_values():
    for name in NAMES:
        w = getattr(ember, name)(window_length=6, periodic=False, dtype=ember.float64)
        want = getattr(torch, name)(window_length=6, periodic=False, dtype=torch.float64)
        np.testing.assert_allclose(w.numpy(), want.numpy(), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(ember.kaiser_window(7, True, ember.tensor(5.0)).numpy(),
                               torch.kaiser_window(7, True, torch.tensor(5.0)).numpy(),
                               rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(ember.hamming_window(7, False, alpha=0.6, beta=0.3).numpy(),
                               torch.hamming_window(7, False, alpha=0.6, beta=0.3).numpy(),
                               rtol=0, atol=5e-7)
