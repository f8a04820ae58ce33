"""Bad arguments to nn.functional and its modules raise PyTorch's exception type with its
message (found by real programs: each of these raised a NumPy error, raised other words,
or returned a result where torch refuses)."""

import warnings

import pytest
import torch

import ember

from helpers import same_error, same_message

BAD = {
    "conv groups not dividing the weight": lambda L: L.nn.functional.conv2d(
        L.ones(1, 4, 3, 3), L.ones(4, 2, 3, 3), groups=3),
    "transposed conv groups": lambda L: L.nn.functional.conv_transpose2d(
        L.ones(1, 4, 3, 3), L.ones(4, 2, 3, 3), groups=3),
    "conv groups beyond the weight": lambda L: L.nn.functional.conv1d(
        L.ones(1, 4, 3), L.ones(2, 2, 3), groups=4),
    "conv zero groups": lambda L: L.nn.functional.conv2d(L.ones(1, 4, 3, 3),
                                                         L.ones(4, 2, 3, 3), groups=0),
    "output padding 1d": lambda L: L.nn.functional.conv_transpose1d(
        L.ones(1, 2, 3), L.ones(2, 2, 3), stride=2, output_padding=2),
    "output padding 2d width": lambda L: L.nn.functional.conv_transpose2d(
        L.ones(1, 2, 3, 3), L.ones(2, 2, 3, 3), stride=(2, 1), output_padding=(1, 1)),
    "output padding 3d": lambda L: L.nn.functional.conv_transpose3d(
        L.ones(1, 2, 3, 3, 3), L.ones(2, 2, 3, 3, 3), stride=(2, 1, 1),
        output_padding=(1, 1, 0)),
    "pixel_shuffle of 2-d": lambda L: L.nn.functional.pixel_shuffle(L.ones(4, 2), 2),
    "pixel_unshuffle of 2-d": lambda L: L.nn.functional.pixel_unshuffle(L.ones(4, 2), 2),
    "pixel_shuffle by 0": lambda L: L.nn.functional.pixel_shuffle(L.ones(1, 4, 2, 2), 0),
    "pixel_unshuffle height": lambda L: L.nn.PixelUnshuffle(3)(L.ones(1, 2, 4, 4)),
    "pixel_unshuffle width": lambda L: L.nn.PixelUnshuffle(2)(L.ones(1, 2, 4, 5)),
    "unfold of int64": lambda L: L.nn.functional.unfold(L.ones(1, 1, 3, 3, dtype=L.long), 2),
    "fold of uint8": lambda L: L.nn.functional.fold(L.ones(1, 4, 4, dtype=L.uint8), (3, 3), 2),
    "fold channels": lambda L: L.nn.functional.fold(L.ones(1, 5, 4), (3, 3), 2),
    "local response norm of 1-d": lambda L: L.nn.LocalResponseNorm(2)(L.ones(3)),
    "batch_norm running_mean size": lambda L: L.nn.functional.batch_norm(
        L.ones(2, 4), L.zeros(3), L.ones(3)),
    "batch_norm running_var size": lambda L: L.nn.functional.batch_norm(
        L.ones(2, 4), L.zeros(4), L.ones(3)),
    "batch_norm weight size": lambda L: L.nn.functional.batch_norm(
        L.ones(2, 4), L.zeros(4), L.ones(4), L.ones(3)),
    "batch_norm bias size": lambda L: L.nn.functional.batch_norm(
        L.ones(2, 4), L.zeros(4), L.ones(4), None, L.ones(3)),
    "batch_norm of int64": lambda L: L.nn.functional.batch_norm(
        L.ones(2, 4, dtype=L.long), None, None, training=True),
    "instance_norm running stats size": lambda L: L.nn.functional.instance_norm(
        L.ones(2, 4, 3), L.zeros(3), L.ones(3)),
    "instance_norm without stats": lambda L: L.nn.functional.instance_norm(
        L.ones(2, 4, 3), use_input_stats=False),
    "instance_norm of one position": lambda L: L.nn.functional.instance_norm(L.ones(2, 4, 1)),
    "instance_norm of int64": lambda L: L.nn.functional.instance_norm(
        L.arange(8).view(1, 2, 2, 2)),
    "InstanceNorm running stats": lambda L: L.nn.InstanceNorm2d(3, track_running_stats=True)(
        L.ones(1, 4, 2, 2)),
    "cross_entropy probabilities with ignore_index": lambda L: L.nn.functional.cross_entropy(
        L.zeros(2, 3), L.full((2, 3), 0.5), ignore_index=1),
    "cross_entropy 2-d target shape": lambda L: L.nn.functional.cross_entropy(
        L.zeros(2, 3, 4, 4), L.zeros(2, 3, 4, dtype=L.long)),
    "nll_loss 2-d target rank": lambda L: L.nn.functional.nll_loss(
        L.zeros(2, 3, 4, 4), L.zeros(2, 4, dtype=L.long)),
    "indices that do not broadcast, out of bounds too": lambda L: L.ones(2, 3)[
        L.arange(3)[:, None], L.zeros(2, 8, dtype=L.long)],
}


def message(call, kind: type) -> str:
    """The message `call(L)` raises in both libraries, the same but for the library's name
    in reprs (`ember.Size` is `torch.Size` under `import ember as torch`)."""
    msgs = []
    for L in (ember, torch):
        with pytest.raises(kind) as info:
            call(L)
        msgs.append(str(info.value).replace("ember.", "torch."))
    assert msgs[0] == msgs[1], msgs
    return msgs[0]


@pytest.mark.parametrize("case", BAD)
def test_bad_call_raises_torchs_error(case):
    message(BAD[case], same_error(BAD[case]))


@pytest.mark.parametrize("output_size", [(20, 20), [1, 2, 20, 20], [20, 20]], ids=str)
def test_transposed_conv_output_size_message(output_size):
    def call(L):
        L.manual_seed(0)
        size = L.Size(output_size) if isinstance(output_size, list) and len(output_size) == 2 \
            else output_size
        L.nn.ConvTranspose2d(2, 2, 3, stride=2)(L.ones(1, 2, 5, 5), output_size=size)

    msg = message(call, ValueError)
    assert "valid sizes range from [11, 11] to [12, 12]" in msg


def test_max_unpool_output_size_message_shows_the_callers_sequence():
    msg = same_message(lambda L: L.nn.functional.max_unpool2d(
        L.ones(1, 1, 2, 2), L.zeros(1, 1, 2, 2, dtype=L.long), 2, output_size=(9, 9)),
        ValueError)
    assert '"(9, 9)"' in msg


def test_instance_norm_warns_when_channels_differ_from_num_features():
    for L in (ember, torch):
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            out = L.nn.InstanceNorm2d(3)(L.arange(16.0).view(1, 4, 2, 2))
        assert [str(w.message) for w in got] == [
            "input's size at dim=1 does not match num_features. You can silence this warning "
            "by not passing in num_features, which is not used because affine=False"]
        assert abs(out[0, 3, 1, 1].item() - 1.3416) < 1e-4  # (3 - 1.5) / sqrt(1.25 + eps)


@pytest.mark.parametrize("args", [({"x": 1}, "w"), ([1.0], "w"), (None, "w"), ("x", None),
                                  ("x", "w", 3)], ids=str)
def test_linear_of_a_non_tensor_is_torchs_type_error(args):
    def call(L):
        real = {"x": L.ones(2, 2), "w": L.ones(2, 2)}
        L.nn.functional.linear(*(real.get(a, a) if isinstance(a, str) else a for a in args))

    message(call, TypeError)


@pytest.mark.parametrize("dtype", ["int16", "bool", "complex64", "float64"])
def test_conv_input_and_bias_dtype_message_names_cpp_types(dtype):
    def call(L):
        d = getattr(L, dtype)
        L.nn.functional.conv2d(L.ones(1, 1, 3, 3, dtype=d), L.ones(1, 1, 1, 1, dtype=d),
                               L.ones(1))

    message(call, RuntimeError)
