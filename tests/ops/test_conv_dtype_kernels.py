"""Convolutions refuse the dtypes ATen's CPU kernels are not built for, with PyTorch's
NotImplementedError naming the kernel: bool for every convolution, the small integers for a
dilated one (int64 has a dilated kernel), and none for an empty input (no kernel runs)."""

import pytest

import ember

from helpers import same_message, same_result

SMALL = ["bool", "int8", "uint8", "int16", "int32"]

DILATED = {
    "conv1d": lambda L, x: L.nn.functional.conv1d(x(1, 1, 5), x(1, 1, 3), dilation=2),
    "conv1d same": lambda L, x: L.nn.functional.conv1d(x(1, 1, 5), x(1, 1, 3), padding="same",
                                                       dilation=2),
    "conv1d bias": lambda L, x: L.nn.functional.conv1d(x(1, 1, 5), x(1, 1, 3), x(1),
                                                       dilation=2),
    "conv1d k=1": lambda L, x: L.nn.functional.conv1d(x(1, 1, 5), x(1, 1, 1), dilation=2),
    "conv2d groups": lambda L, x: L.nn.functional.conv2d(x(1, 2, 5, 5), x(2, 1, 2, 2),
                                                         dilation=2, groups=2),
    "conv3d one axis": lambda L, x: L.nn.functional.conv3d(x(1, 1, 5, 5, 5), x(1, 1, 2, 2, 2),
                                                           dilation=(1, 2, 1)),
}


def _ones(L, dtype):
    return lambda *shape: L.ones(*shape, dtype=getattr(L, dtype))


@pytest.mark.parametrize("dtype", SMALL)
@pytest.mark.parametrize("case", sorted(DILATED))
def test_dilated_convolution_of_small_dtypes_refused(case, dtype):
    msg = same_message(lambda L: DILATED[case](L, _ones(L, dtype)), NotImplementedError)
    assert msg.startswith('"slow_conv_dilated<>" not implemented')


@pytest.mark.parametrize("case", sorted(DILATED))
def test_dilated_convolution_of_int64_runs(case):
    same_result(lambda L: DILATED[case](L, _ones(L, "int64")))  # (integers: exact)


UNDILATED = {
    "conv1d": lambda L, x: L.nn.functional.conv1d(x(1, 1, 5), x(1, 1, 3)),
    "conv1d unbatched": lambda L, x: L.nn.functional.conv1d(x(1, 5), x(1, 1, 3)),
    "conv1d stride": lambda L, x: L.nn.functional.conv1d(x(1, 1, 5), x(1, 1, 3), stride=2),
    "conv2d 1x1": lambda L, x: L.nn.functional.conv2d(x(1, 1, 3, 3), x(1, 1, 1, 1)),
    "conv2d groups": lambda L, x: L.nn.functional.conv2d(x(1, 2, 4, 4), x(2, 1, 3, 3),
                                                         groups=2),
    "conv3d": lambda L, x: L.nn.functional.conv3d(x(1, 1, 3, 3, 3), x(1, 1, 2, 2, 2)),
}


@pytest.mark.parametrize("case", sorted(UNDILATED))
def test_bool_convolution_refused(case):
    msg = same_message(lambda L: UNDILATED[case](L, _ones(L, "bool")), NotImplementedError)
    assert msg.endswith("not implemented for 'Bool'")


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32"])
@pytest.mark.parametrize("case", sorted(UNDILATED))
def test_undilated_convolution_of_small_integers_runs(case, dtype):
    same_result(lambda L: UNDILATED[case](L, _ones(L, dtype)))  # (small integers: exact)


@pytest.mark.parametrize("dtype", SMALL)
@pytest.mark.parametrize("call", [
    lambda L, x: L.nn.functional.conv1d(x(0, 1, 5), x(1, 1, 3)),
    lambda L, x: L.nn.functional.conv1d(x(0, 1, 5), x(1, 1, 3), dilation=2),
    lambda L, x: L.nn.functional.conv_transpose1d(x(0, 1, 3), x(1, 1, 2)),
    lambda L, x: L.nn.functional.conv_transpose2d(x(0, 1, 3, 3), x(1, 1, 2, 2), stride=2),
])
def test_empty_input_runs_no_kernel(call, dtype):
    out = same_result(lambda L: call(L, _ones(L, dtype)))
    assert out.dtype is getattr(ember, dtype)
