"""Integer arguments past a C++ int, bound as MLX 0.32.4's bindings bind them
(`_nb_types`): an `int` or an int sequence refused with the binding's TypeError, a
shape's OverflowError (or `std::bad_cast` past int64), an index's ValueError, and the
wide parameters that take more (`as_strided`'s strides and offset, `arange`'s bounds)."""

import pytest

import ember.mlx.core as mx
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")

B = 2**31  # one past int32
# NOTE: MLX aborts the process on an out-of-range `split` index list, an `as_strided`
# shape and an `fft.fftn` `s=` (its caster's exception escapes), and reads past the buffer
# for huge strides: those calls are left out.
CALLS = [
    # an `int` parameter: axes, counts, offsets (functions and methods)
    "mx.sum(mx.ones((2, 3)), axis=B)", "mx.sum(mx.ones((2, 3)), axis=-B - 1)",
    "mx.sum(mx.ones((2, 3)), axis=(0, B))", "mx.ones((2, 3)).sum(axis=2**32 + 1)",
    "mx.argmax(mx.ones(3), axis=B)", "mx.cumsum(mx.ones(3), B)", "mx.softmax(mx.ones(3), B)",
    "mx.concatenate([mx.ones(2)], axis=2**63)", "mx.stack([mx.ones(2)], axis=B)",
    "mx.expand_dims(mx.arange(4), (0, B))", "mx.transpose(mx.ones((2, 3)), (0, B))",
    "mx.split(mx.arange(4), B)", "mx.ones((6,)).split(2**63)", "mx.repeat(mx.arange(2), B)",
    "mx.tile(mx.arange(2), (1, B))", "mx.roll(mx.arange(4), B)", "mx.roll(mx.arange(4), 1, B)",
    "mx.diag(mx.ones((2, 2)), k=B)", "mx.tril(mx.ones((2, 2)), k=B)", "mx.eye(2, 2, B)",
    "mx.eye(B)", "mx.tri(2, B)", "mx.topk(mx.arange(4), B)", "mx.partition(mx.ones(3), B)",
    "mx.std(mx.ones(3), ddof=B)", "mx.ones((2, 3)).var(correction=B)",
    "mx.round(mx.ones(2), B)", "mx.ones(2).round(B)", "mx.ones((2, 2)).diagonal(B)",
    "mx.ones((2, 3)).flatten(B)", "mx.ones((2, 3)).moveaxis(B, 0)",
    "mx.tensordot(mx.ones((2, 2)), mx.ones((2, 2)), B)",
    "mx.tensordot(mx.ones((2, 2)), mx.ones((2, 2)), [[0], [B]])",
    "mx.conv2d(mx.ones((1, 4, 4, 1)), mx.ones((1, 2, 2, 1)), stride=(1, B))",
    "mx.linalg.norm(mx.ones(4), axis=B)", "mx.fft.fft(mx.ones(4), n=B)",
    "mx.pad(mx.arange(4), B)", "mx.pad(mx.arange(4), ((0, B),))", "mx.pad(mx.arange(4), -B - 1)",
    "mx.random.permutation(B)", "mx.random.split(mx.random.key(0), B)",
    "mx.quantize(mx.ones((4, 64)), B)", "mx.quantize(mx.ones((4, 64)), bits=B)",
    "mx.dequantize(mx.ones((4, 8), mx.uint32), mx.ones((4, 1)), mx.ones((4, 1)), B)",
    "mx.slice(mx.arange(4), mx.array([0]), [B], [1])", "mx.permute_dims(mx.ones((2, 3)), (0, B))",
    "mx.slice_update(mx.arange(4), mx.array([1]), mx.array([0]), [B])",
    # (the bindings added for this: their ordinary calls and refusals)
    "[x.shape for x in mx.quantize(mx.ones((4, 64)), 32, 4, 'mxfp4')]",
    "mx.dequantize(*mx.quantize(mx.ones((4, 64))), dtype=mx.bfloat16).dtype",
    "mx.quantize([1.0], 32)", "mx.slice(mx.arange(4), [1], [0], [2])",
    "mx.slice_update(mx.arange(4), mx.array([7]), mx.array([1]), axes=[0])",
    "mx.permute_dims(mx.ones((2, 3)), axes=[1, 0]).shape", "mx.round(1.5)",
    # a shape: int32 elements, OverflowError past them, refused (or a bad cast) past int64
    "mx.zeros((B,))", "mx.zeros(B)", "mx.ones(-B - 1)", "mx.full(B, 1)", "mx.zeros(2**63)",
    "mx.zeros((2**63,))", "mx.zeros([B - 1, 0]).shape", "mx.zeros((np.int64(B),))",
    "mx.reshape(mx.zeros((0,)), (B, 0))", "mx.reshape(mx.zeros((0,)), (2**63, 0))",
    "mx.broadcast_to(mx.ones(1), (B,))", "mx.broadcast_to(mx.ones(1), B)",
    "mx.unflatten(mx.arange(4), 0, (B, 2))", "mx.random.normal((B,))",
    "mx.slice(mx.arange(4), mx.array([0]), [0], [B])",
    "mx.slice(mx.arange(4), mx.array([0]), [0], (2**63,))",
    "mx.random.normal((2**63,))",
    "mx.ones((2, 3)).reshape(2, B)", "mx.ones((2, 3)).reshape(B, 0)",
    "mx.ones((2, 3)).reshape((B,))", "mx.ones((2, 3)).reshape((2**63,))",
    "mx.ones((2, 3)).transpose(B, 0)", "mx.ones((2, 3)).transpose((1, B))",
    # an index: 32 bits, a bad cast past 64
    "mx.arange(4)[B]", "mx.arange(4)[-B - 1]", "mx.arange(4)[np.int64(B)]",
    "mx.arange(4)[0:B + 2]", "mx.arange(4)[::B]", "mx.arange(8).reshape(2, 4)[:, B:]",
    "mx.arange(8).reshape(2, 4)[0, B]", "mx.arange(4)[2**64]", "mx.arange(4).at[B].add(1)",
    "mx.take(mx.arange(4), B)", "mx.take(mx.arange(4), -B)",
    # wider parameters
    "mx.arange(B, B + 2)", "mx.arange(0, 4, B)", "mx.arange(2**63)", "mx.random.key(2**63)",
    "mx.random.key(2**64)", "mx.as_strided(mx.arange(4), (2,), (1,), 2**64)",
    "mx.as_strided(mx.arange(4), (2,), (2**63,))",
]


def test_int_arguments_bind_as_mlxs():
    setup = f"B = {B}"
    show = (lambda v: repr(v) if not isinstance(v, list | tuple) else str(v))
    wrong = [(c, outcome(c, mx, setup, show), outcome(c, mlx, setup, show)) for c in CALLS
             if outcome(c, mx, setup, show) != outcome(c, mlx, setup, show)]
    assert wrong == []


def test_within_range_still_binds():
    assert mx.sum(mx.ones((2, 3)), axis=-1).shape == (2,) and mx.eye(2, k=-1).sum().item() == 1
    assert mx.ones((2, 3)).reshape(3, 2).shape == (3, 2)
    assert mx.ones((2, 3)).reshape([-1]).shape == (6,)
    assert mx.ones((2, 3)).transpose(1, 0).shape == (3, 2)
    assert mx.pad(mx.arange(2), ((1, 2),)).tolist() == [0, 0, 1, 0, 0]
    assert mx.arange(4)[2**31 - 1:].tolist() == [] and mx.arange(4)[-(2**31):].size == 4
    assert mx.as_strided(mx.arange(6), (2,), (2,), 1).tolist() == [1, 3]
