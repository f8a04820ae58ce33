"""F.interpolate(mode='lanczos', antialias=True): the Lanczos-3 windowed sinc as PyTorch's
antialiased resampling (PIL's), float and uint8, and the argument checks in its words."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
from ember.nn import functional as F

from helpers import check_op, rand_array, same_message

# float32: six taps per dim (more when downscaling) summed in another order than ATen's
# kernel, a few ulps apart; float64 only its last bit or two (the weights are the same)
TOL = {np.float32: dict(rtol=1e-5, atol=3e-6), np.float64: dict(rtol=1e-13, atol=1e-14)}

SIZES = [{"size": (4, 5)}, {"size": (13, 21)}, {"size": (2, 30)}, {"scale_factor": 0.37},
         {"scale_factor": (1.5, 0.5)}, {"size": (9, 11)}]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kwargs", SIZES, ids=str)
def test_lanczos_matches_torch_with_its_gradient(kwargs, dtype):
    check_op(lambda a: F.interpolate(a, mode="lanczos", antialias=True, **kwargs),
             lambda a: TF.interpolate(a, mode="lanczos", antialias=True, **kwargs),
             rand_array((2, 3, 9, 11), dtype), **TOL[dtype])


@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("kwargs", SIZES, ids=str)
def test_lanczos_uint8_is_torchs_fixed_point_result(kwargs, channels_last):
    """Exact: int16 weights, integer sums, rounding and clamping as ATen's uint8 kernel."""
    a = (rand_array((2, 3, 9, 11), np.float64, 0.0, 1.0) * 255).round().astype(np.uint8)
    outs = []
    for lib, fn in ((torch, TF.interpolate), (ember, F.interpolate)):
        x = lib.from_numpy(a.copy())
        if channels_last:
            x = x.contiguous(memory_format=lib.channels_last)
        y = fn(x, mode="lanczos", antialias=True, **kwargs)
        outs.append((y.numpy(), y.dtype == lib.uint8,
                     y.is_contiguous(memory_format=lib.channels_last)))
    np.testing.assert_array_equal(outs[1][0], outs[0][0])
    assert outs[1][1:] == outs[0][1:]


def test_lanczos_node_is_torchs():
    names = []
    for lib, fn in ((torch, TF.interpolate), (ember, F.interpolate)):
        x = lib.ones(1, 1, 6, 6, requires_grad=True)
        names.append(type(fn(x, size=(3, 3), mode="lanczos", antialias=True).grad_fn).__name__)
    assert names[1] == names[0] == "UpsampleLanczos2DAaBackward0"


REFUSED = {
    "without antialias": (ValueError, lambda L: L.nn.functional.interpolate(
        L.ones(1, 1, 6, 6), size=(3, 3), mode="lanczos")),
    "align_corners": (ValueError, lambda L: L.nn.functional.interpolate(
        L.ones(1, 1, 6, 6), size=(3, 3), mode="lanczos", antialias=True, align_corners=True)),
    "Upsample": (ValueError, lambda L: L.nn.Upsample(scale_factor=0.5, mode="lanczos")(
        L.ones(1, 1, 6, 6))),
    "3-d antialiased": (ValueError, lambda L: L.nn.functional.interpolate(
        L.ones(1, 6, 6), size=3, mode="lanczos", antialias=True)),
    "3-d": (NotImplementedError, lambda L: L.nn.functional.interpolate(
        L.ones(1, 6, 6), size=3, mode="lanczos")),
    "5-d": (NotImplementedError, lambda L: L.nn.functional.interpolate(
        L.ones(1, 1, 2, 6, 6), size=(1, 3, 3), mode="lanczos")),
    "half": (NotImplementedError, lambda L: L.nn.functional.interpolate(
        L.ones(1, 1, 6, 6, dtype=L.half), size=(3, 3), mode="lanczos", antialias=True)),
    "int64": (NotImplementedError, lambda L: L.nn.functional.interpolate(
        L.ones(1, 1, 6, 6, dtype=L.long), size=(3, 3), mode="lanczos", antialias=True)),
}


@pytest.mark.parametrize("name", REFUSED)
def test_lanczos_refusals_in_torchs_words(name):
    kind, call = REFUSED[name]
    same_message(call, kind)
