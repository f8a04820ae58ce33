"""Calls MLX's bindings refuse before MLX's own checks run, as MLX 0.32.4 refuses them:
`mx.fast` kernels called with a missing, extra or unknown argument or a value nanobind
will not convert (a list for an array, None or a string for a float, a float for an int,
1 for a bool); `mx.random` functions naming every argument's type in the message; and the
typed (non-array) parameters of `mx`'s functions: ints, floats, bools and int sequences."""

import pytest

import ember.mlx.core as mx
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")

SETUP = ("x = mx.arange(6, dtype=mx.float32).reshape(2, 3)\n"
         "q = mx.zeros((1, 2, 3, 4))\n"
         "sdpa = mx.fast.scaled_dot_product_attention\n"
         "k = mx.random.key(0)")


def _same(call: str) -> None:
    ours, theirs = outcome(call, mx, SETUP), outcome(call, mlx, SETUP)
    assert ours == theirs, (call, ours, theirs)


@pytest.mark.parametrize("call", [
    # arity and keywords
    "sdpa(q, q, q)",
    "sdpa(q, q, q, 0.5)",
    "sdpa(q, q, q, scale=0.5, masks=None)",
    "mx.fast.rms_norm(x)",
    "mx.fast.rms_norm(x, None, 1e-5, 3)",
    "mx.fast.rms_norm(x, None, 1e-5, bad=1)",
    "mx.fast.layer_norm(x, None, None)",
    "mx.fast.layer_norm(x, None, None, 1e-5, 2)",
    "mx.fast.rope(q, 4, traditional=False, base=10000.0, scale=1.0)",
    "mx.fast.rope(q, 4, False, 10000.0, 1.0, 0)",
    "mx.fast.cross_entropy(x)",
    # values nanobind does not convert
    "mx.fast.rms_norm([1.0, 2.0], None, 1e-5)",
    "mx.fast.rms_norm(x, [1.0, 2.0, 3.0], 1e-5)",
    "mx.fast.rms_norm(x, None, 'a')",
    "mx.fast.rms_norm(x, None, 1e-5, stream='cpu')",
    "mx.fast.layer_norm(x, 1.0, None, 1e-5)",
    "mx.fast.layer_norm(x, None, None, None)",
    "mx.fast.layer_norm(np.ones((2, 3), np.float32), None, None, 1e-5)",
    "sdpa(q, q, q, scale='a')",
    "sdpa(q, q, q, scale=None)",
    "sdpa(q, q, np.zeros((1, 2, 3, 4), np.float32), scale=0.5)",
    "sdpa(q, q, q, scale=0.5, sinks=[0.0, 0.0])",
    "sdpa(q, q, q, scale=0.5, force_fused=1)",
    "mx.fast.rope(q, 4.0, traditional=False, base=10000.0, scale=1.0, offset=0)",
    "mx.fast.rope(q, 4, traditional=1, base=10000.0, scale=1.0, offset=0)",
    "mx.fast.rope(q, 4, traditional=np.True_, base=10000.0, scale=1.0, offset=0)",
    "mx.fast.cross_entropy(x, [0, 1])",
])
def test_fast_refuses_what_its_binding_refuses(call):
    _same(call)


@pytest.mark.parametrize("call", [
    # values nanobind converts: the results agree
    "sdpa(q, q, q, scale=mx.array(0.5)).shape",
    "sdpa(q, q, q, scale=1).shape",
    "sdpa(q, q, q, scale=True).shape",
    "mx.fast.rms_norm(x, None, 1).round(4)",
    "mx.fast.rms_norm(x, None, np.float32(1e-5)).round(4)",
    "mx.fast.rms_norm(x, weight=None, eps=1e-5, stream=mx.cpu).round(4)",
    "mx.fast.layer_norm(x, None, None, mx.array(1e-5)).round(4)",
    "mx.fast.rope(q, np.int64(4), traditional=False, base=10000, scale=1, offset=0).shape",
    "mx.fast.rope(q, mx.array(4), traditional=False, base=mx.array(1e4), scale=1.0,"
    " offset=0).shape",
    "mx.fast.rope(q, True, traditional=False, base=10000.0, scale=1.0, offset=0)",  # dims 1
])
def test_fast_takes_what_its_binding_converts(call):
    _same(call)


@pytest.mark.parametrize("call", [
    "mx.random.bernoulli(0.5, 3, key=k)",
    "mx.random.bernoulli(0.5, (2,), key=[0, 1])",
    "mx.random.bernoulli(None, (2,), key=k)",
    "mx.random.bernoulli('a', (2,), key=k)",
    "mx.random.bernoulli({}, (2,), key=k)",
    "mx.random.randint(0, 5, 3, key=k)",
    "mx.random.randint(0, 5, (2,), key=k, dtype='int32')",
    "mx.random.uniform(shape=3, key=k)",
    "mx.random.uniform(0, 1, (2,), key=k, bad=1)",
    "mx.random.uniform(None, 1, (2,), key=k)",
    "mx.random.split(k, 2.0)",
    "mx.random.split(k, 2, 3, 4)",
    "mx.random.permutation(5.0, key=k)",
    "mx.random.normal((2,), mx.float32, 0.0, 1.0, k, None, 3)",
    "mx.random.categorical([0.0, 1.0], key=k)",
    "mx.random.seed(1.5)",
    "mx.random.key()",
])
def test_random_refusals_name_every_argument(call):
    _same(call)


def test_random_refused_none_does_not_advance_the_global_key():
    # nanobind refuses None for `scalar | array` before a key is taken; a value it cannot
    # make an array of is refused after (the second draw shows which)
    for module in (mx, mlx):
        draws = []
        for bad in (None, "a"):
            module.random.seed(3)
            with pytest.raises((TypeError, ValueError)):
                module.random.uniform(bad)
            draws.append(module.random.uniform().item())
        module.random.seed(3)
        first, second = module.random.uniform().item(), module.random.uniform().item()
        assert draws == [first, second], module


@pytest.mark.parametrize("call", [
    "mx.reshape(x, 6)",
    "mx.reshape(x, (6.0,))",
    "mx.reshape(x, np.array([3, 2])).shape",
    "mx.reshape(x, [np.int64(3), mx.array(2)]).shape",
    "mx.transpose(x, 1)",
    "mx.transpose(x, (1.0, 0))",
    "mx.squeeze(x[None], 0.0)",
    "mx.squeeze(x[None], mx.array([0])).shape",
    "mx.expand_dims(x, (0, 1.0))",
    "mx.split(x, (1.0,))",
    "mx.split(x, 3, axis=1.0)",
    "mx.split(x, np.int32(3), axis=1)[0].shape",
    "mx.sum(x, axis=1.0)",
    "mx.sum(x, axis=(0, 1.0))",
    "mx.sum(x, axis='a')",
    "mx.sum(x, axis=np.int64(1))",
    "mx.sum(x, axis=True)",
    "mx.mean(x, 0, 1)",
    "mx.mean(x, 0, np.True_)",
    "mx.tile(x, 2.0)",
    "mx.repeat(x, 2.0)",
    "mx.flatten(x, 0.0)",
    "mx.moveaxis(x, 0.0, 1)",
    "mx.swapaxes(x, 0, 1.0)",
    "mx.argmax(x, axis=1.0)",
    "mx.softmax(x, axis=1.0)",
    "mx.topk(x, 2.0)",
    "mx.unflatten(x, 1, 3)",
    "mx.unflatten(x, 1.0, (3, 1))",
    "mx.concatenate([x, x], axis=1.0)",
    "mx.stack([x, x], axis=1.0)",
    "mx.take(x, mx.array([0]), axis=1.0)",
    "mx.tril(x, 1.0)",
    "mx.eye(3.0)",
    "mx.isclose(x, x, rtol='a')",
    "mx.isclose(x, x, 1, 1)",
    "mx.zeros(3.0)",
    "mx.ones((3, 2.0))",
    "mx.ones('a')",
    "mx.zeros(np.array([3, 2])).shape",
])
def test_typed_parameters_take_what_nanobind_converts(call):
    _same(call)


@pytest.mark.parametrize("call", [
    "mx.broadcast_to(x, 4)",
    "mx.broadcast_to(x, (2, 3.0))",
    "mx.broadcast_to(x, 'ab')",
    "mx.broadcast_to(x, np.array([2, 2, 3])).shape",
    "mx.broadcast_to(2.0, [2])",
    "mx.broadcast_to(x, shape=(1, 2, 3)).shape",
])
def test_broadcast_to_takes_what_nanobind_converts(call):
    _same(call)
