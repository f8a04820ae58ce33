"""A convolution's stride / padding / dilation / output_padding / groups read as torch's
argument parser reads them (ember/ops/_conv_args.py): NumPy and tensor integers taken,
floats, bools, strings, ranges and arrays refused with torch's TypeError and words."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

from helpers import same_message

X = {1: (1, 2, 5), 2: (1, 2, 5, 5), 3: (1, 2, 4, 4, 4)}


def _call(name: str, nd: int, **kw):
    transposed = "transpose" in name
    w = ((2, 3) if transposed else (3, 2)) + (3,) * nd

    def convert(v, L):
        if isinstance(v, torch.Tensor):
            return L.tensor(v.tolist())
        return [convert(u, L) for u in v] if isinstance(v, list) else v

    def call(L):
        kwargs = {k: convert(v, L) for k, v in kw.items()}
        return getattr(L.nn.functional, name)(L.ones(*X[nd]), L.ones(*w), **kwargs)
    return call


# (values the parser takes, with the shape they give)
TAKEN = [dict(stride=np.int64(2)), dict(padding=np.int64(1)), dict(dilation=np.int32(2)),
         dict(stride=torch.tensor(2)), dict(stride=[np.int64(2), torch.tensor(1)]),
         dict(groups=np.int64(1)), dict(groups=torch.tensor(1)), dict(padding=[1, True])]


@pytest.mark.parametrize("name, nd", [("conv2d", 2), ("conv_transpose2d", 2)])
@pytest.mark.parametrize("kw", TAKEN, ids=str)
def test_numpy_and_tensor_integers_are_taken(name, nd, kw):
    shapes = [tuple(_call(name, nd, **kw)(L).shape) for L in (ember, torch)]
    assert shapes[0] == shapes[1]


REFUSED = [1.5, True, "x", None, range(1, 3), np.array([1, 2]), torch.tensor([1, 2]),
           torch.tensor(1.0), [1, "x"], [1, 1.0], (1.5, 1)]
ARGS = [(name, nd, arg) for name, nd in (("conv2d", 2), ("conv_transpose2d", 2))
        for arg in ("stride", "padding", "dilation", "groups", "output_padding")
        if arg != "output_padding" or "transpose" in name] + [
    ("conv1d", 1, "stride"), ("conv3d", 3, "dilation"), ("conv_transpose1d", 1, "padding"),
    ("conv_transpose3d", 3, "output_padding")]
# (a tuple is read as passed by position: see test_a_modules_float_sizes_...; a string
# padding is the second overload's own check)
CASES = [(name, nd, arg, v) for name, nd, arg in ARGS for v in REFUSED
         if not (type(v) is tuple and arg != "groups" or arg == "padding" and isinstance(v, str))]


@pytest.mark.parametrize("name, nd, arg, value", CASES, ids=repr)
def test_refused_in_torchs_words(name, nd, arg, value):
    same_message(_call(name, nd, **{arg: value}), TypeError)


def test_positional_and_keyword_words():
    # (the parser's "got" list: the arguments as a functional call spells them)
    same_message(lambda L: L.nn.functional.conv2d(L.ones(1, 2, 5, 5), L.ones(3, 2, 3, 3),
                                                  L.ones(3), 1, (1, 1.0)), TypeError)
    same_message(lambda L: L.nn.functional.conv2d(L.ones(1, 2, 5, 5), L.ones(3, 2, 3, 3),
                                                  L.ones(3), stride=2, groups=2.0), TypeError)


@pytest.mark.parametrize("layer, kw", [
    ("ConvTranspose2d", dict(stride=1.5)), ("ConvTranspose1d", dict(padding=1.0)),
    ("ConvTranspose3d", dict(output_padding=(1.0, 0, 0), stride=2)),
    ("ConvTranspose2d", dict(dilation=(2, 1.0))),
])
def test_a_modules_float_sizes_refused_in_torchs_words(layer, kw):
    nd = int(layer[-2])

    def call(L):
        L.manual_seed(0)
        return getattr(L.nn, layer)(2, 3, 3, **kw)(L.ones(*X[nd]))
    msg = same_message(call, TypeError)
    assert "found element of type float" in msg or "failed to unpack" in msg


@pytest.mark.parametrize("layer", ["Conv2d", "Conv1d"])
def test_a_modules_float_padding_refused_as_an_invalid_combination(layer):
    nd = int(layer[-2])
    msg = same_message(lambda L: getattr(L.nn, layer)(2, 3, 3, padding=3 / 2)(L.ones(*X[nd])),
                       TypeError)
    # (the note reads a piece with a default as typeless: only the input fits)
    assert "(Tensor, !Parameter!, !Parameter!, !tuple of (int, int)!" in msg or nd == 1
