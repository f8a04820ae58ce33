"""`ember.mlx.nn`'s distributed layers (`mlx.nn.layers.distributed`) against mlx 0.32.4
in-process: on the group of one every collective is the identity, so outputs, gradients,
parameters and reprs must be MLX's; a stand-in group (size and rank only, which is all
MLX's constructors and sharding read) checks the shards each rank keeps, the reprs of a
larger group and the divisibility errors. Across processes: a program run by ember's
launcher compares the sharded layers with the plain ones on every rank."""

import os
from typing import NamedTuple

import numpy as np
import pytest

import ember.mlx.core as mx
import ember.mlx.nn as nn
import ember.mlx.utils as mu
from ember.mlx.nn.layers import distributed as dist

mlx = pytest.importorskip("mlx.core")
mlx_nn = pytest.importorskip("mlx.nn")
mlx_utils = pytest.importorskip("mlx.utils")
mlx_dist = pytest.importorskip("mlx.nn.layers.distributed")

SIDES = [(mx, nn, mu, dist), (mlx, mlx_nn, mlx_utils, mlx_dist)]


class StandIn:
    """A group of `n` whose member this process is rank `r`: enough for construction and
    sharding, which only ask a group its size and rank."""

    def __init__(self, n: int, r: int) -> None:
        self.n, self.r = n, r

    def size(self) -> int:
        return self.n

    def rank(self) -> int:
        return self.r


class Raised(NamedTuple):
    kind: type
    message: str


def _both(call, fails: bool = False):
    """`call(m, nn, utils, dist)` on ember's side and MLX's: results, or Raised(type,
    message); MLX's side must raise if `fails`, and must not otherwise."""
    out = []
    for side in SIDES:
        try:
            out.append(call(*side))
        except Exception as e:  # noqa: BLE001  (the exception is what is compared)
            out.append(Raised(type(e), str(e)))
    assert isinstance(out[1], Raised) == fails, out[1]
    return out


def _params(module, utils) -> list:
    return [(k, v.dtype.__repr__(), np.array(v).tolist())
            for k, v in utils.tree_flatten(module.parameters())]


def test_the_names_mlx_nn_exports():
    names = ["AllToShardedLinear", "ShardedToAllLinear", "QuantizedAllToShardedLinear",
             "QuantizedShardedToAllLinear", "FullyShardedModule", "fully_shard"]
    for name in names:
        assert hasattr(nn, name) and hasattr(mlx_nn, name)
    assert nn.distributed is dist and mlx_nn.distributed is mlx_dist
    defined = {k for k, v in vars(mlx_dist).items()  # what the module itself defines
               if not k.startswith("_") and getattr(v, "__module__", "") == mlx_dist.__name__}
    assert defined == {"shard_inplace", "shard_linear", "sum_gradients", *names}
    assert defined <= set(dir(dist))


@pytest.mark.parametrize("kind", ["AllToShardedLinear", "ShardedToAllLinear"])
@pytest.mark.parametrize("bias", [True, False])
def test_sharded_linear_of_a_group_of_one(kind, bias):
    """Construction draws the same parameters; `from_linear` copies the layer; outputs and
    gradients (input and parameters) agree. The values go through the same float32
    matmul/addmm on both sides, compared within a few ulps."""
    def run(m, nn_, utils, _):
        m.random.seed(7)
        fresh = getattr(nn_, kind)(6, 4, bias=bias)
        linear = nn_.Linear(6, 4, bias=bias)
        layer = getattr(nn_, kind).from_linear(linear)
        x = m.random.normal((3, 6))
        loss = lambda x: (layer(x) * m.arange(4)).sum()  # noqa: E731
        _, grads = nn_.value_and_grad(layer, lambda x: loss(x))(x)
        return (repr(fresh), _params(fresh, utils), repr(layer), _params(layer, utils),
                np.array(layer(x)), np.array(m.grad(loss)(x)),
                [np.array(v) for _, v in utils.tree_flatten(grads)])
    ours, theirs = _both(run)
    assert ours[:4] == theirs[:4]
    for a, b in zip(ours[4:6] + tuple(ours[6]), theirs[4:6] + tuple(theirs[6]), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("kind", ["AllToShardedLinear", "ShardedToAllLinear"])
@pytest.mark.parametrize("n,r,segments", [(2, 1, 1), (2, 0, [0.5]), (3, 2, 1), (2, 1, 2),
                                          (2, 0, [2, 6])])
def test_from_linear_keeps_this_ranks_shard(kind, n, r, segments):
    """Bit for bit: sharding only slices and concatenates."""
    def run(m, nn_, utils, _):
        m.random.seed(1)
        layer = getattr(nn_, kind).from_linear(nn_.Linear(12, 12), segments=segments,
                                               group=StandIn(n, r))
        return repr(layer), _params(layer, utils)
    ours, theirs = _both(run)
    assert ours == theirs


@pytest.mark.parametrize("kind", ["QuantizedAllToShardedLinear",
                                  "QuantizedShardedToAllLinear"])
@pytest.mark.parametrize("mode", ["affine", "mxfp4"])
def test_quantized_sharded_linear(kind, mode):
    """Parameters (packed weights, scales, biases: bit for bit), frozen as MLX freezes
    them also after `unfreeze`, reprs, the output of a group of one (the same quantized
    matmul, float32: within a few ulps), and the shards a stand-in group keeps."""
    def run(m, nn_, utils, _):
        m.random.seed(2)
        q = nn_.QuantizedLinear(128, 32, bias=True, mode=mode)
        layer = getattr(nn_, kind).from_quantized_linear(q)
        frozen = sorted(layer.trainable_parameters())
        layer.unfreeze()
        x = m.random.normal((2, 128))
        two = getattr(nn_, kind).from_quantized_linear(q, group=StandIn(2, 1))
        fresh = getattr(nn_, kind)(128, 16, bias=False, mode=mode, group_size=32)
        return (repr(layer), _params(layer, utils), frozen,
                sorted(layer.trainable_parameters()), repr(two), _params(two, utils),
                repr(fresh), _params(fresh, utils), np.array(layer(x)))
    ours, theirs = _both(run)
    assert ours[:-1] == theirs[:-1]
    np.testing.assert_allclose(ours[-1], theirs[-1], rtol=1e-5, atol=1e-6)


def test_shard_linear_and_shard_inplace():
    def run(m, nn_, utils, d):
        m.random.seed(4)
        linear, q = nn_.Linear(8, 12), nn_.QuantizedLinear(128, 12)
        made = [d.shard_linear(layer, s, group=StandIn(2, 1)) for layer in (linear, q)
                for s in ("all-to-sharded", "sharded-to-all")]
        fused = nn_.Linear(4, 9)
        d.shard_inplace(fused, "all-to-sharded", segments=3, group=StandIn(3, 2))
        cols = nn_.Linear(6, 2)
        d.shard_inplace(cols, "sharded-to-all", group=StandIn(3, 0))
        custom = nn_.Sequential(nn_.Linear(4, 4), nn_.Linear(4, 4))
        d.shard_inplace(custom, lambda path, w: 0 if path.startswith("layers.1") else None,
                        group=StandIn(2, 1))
        return ([repr(x) for x in made] + [_params(x, utils) for x in made]
                + [repr(fused), _params(fused, utils), repr(cols), _params(cols, utils),
                   _params(custom, utils), np.array(linear.weight).shape])
    ours, theirs = _both(run)
    assert ours == theirs


@pytest.mark.parametrize("call", [
    lambda nn_, d: d.shard_linear(nn_.Linear(2, 2), "sharded"),
    lambda nn_, d: d.shard_inplace(nn_.Linear(2, 2), "all_to_sharded"),
    lambda nn_, d: d.shard_inplace(nn_.Linear(2, 2), lambda p, w: "0", group=StandIn(2, 0)),
    lambda nn_, d: d.shard_inplace(nn_.Linear(3, 3), "all-to-sharded", group=StandIn(2, 0)),
    lambda nn_, d: nn_.AllToShardedLinear(4, 5, group=StandIn(2, 0)),
    lambda nn_, d: nn_.ShardedToAllLinear(5, 4, group=StandIn(2, 0)),
    lambda nn_, d: nn_.QuantizedAllToShardedLinear(64, 5, group=StandIn(2, 0)),
    lambda nn_, d: nn_.QuantizedShardedToAllLinear(96, 4, group=StandIn(3, 0)),
    lambda nn_, d: nn_.QuantizedShardedToAllLinear(64, 4, group=StandIn(2, 0)),
    lambda nn_, d: nn_.FullyShardedModule(nn_.Linear(4, 5), group=StandIn(2, 0)),
    lambda nn_, d: nn_.FullyShardedModule(nn_.LayerNorm(4), group=StandIn(3, 0)),
    lambda nn_, d: nn_.AllToShardedLinear.from_linear(nn_.Linear(4, 6), segments=[0.5],
                                                      group=StandIn(2, 0)),
])
def test_errors_match_mlx(call):
    ours, theirs = _both(lambda m, nn_, utils, d: call(nn_, d), fails=True)
    assert ours == theirs


def test_fully_shard_wraps_as_mlx_does():
    """A group of one, a module already wrapped, or one without parameters comes back
    as it was; otherwise each parameter keeps the rank's block of axis 0 (bit for bit)."""
    def run(m, nn_, utils, _):
        m.random.seed(5)
        model = nn_.Sequential(nn_.Linear(4, 6), nn_.ReLU(), nn_.Linear(6, 2))
        wrapped = nn_.fully_shard(model, group=StandIn(2, 1))
        scalar = nn_.Linear(2, 2)
        scalar.s = m.array(1.0)
        return (nn_.fully_shard(model) is model, repr(wrapped), _params(wrapped, utils),
                nn_.fully_shard(wrapped, group=StandIn(2, 0)) is wrapped,
                type(nn_.fully_shard(nn_.ReLU(), group=StandIn(2, 0))).__name__,
                type(nn_.fully_shard(nn_.Sequential(nn_.Linear(4, 4), wrapped),
                                     group=StandIn(2, 0))).__name__)
    ours, theirs = _both(run)
    assert ours == theirs


@pytest.mark.parametrize("compute_dtype", [None, "float16", "bfloat16"])
def test_fully_sharded_module_of_a_group_of_one(compute_dtype):
    """The gathered call: outputs in the compute dtype, gradients back in the parameters'
    dtype, and the shards restored after the call. Values through low-precision matmuls
    on both sides: within the compute dtype's rounding."""
    def run(m, nn_, utils, _):
        m.random.seed(6)
        model = nn_.Sequential(nn_.Linear(4, 6), nn_.ReLU(), nn_.Linear(6, 2))
        dtype = getattr(m, compute_dtype) if compute_dtype else None
        wrapped = nn_.FullyShardedModule(model, compute_dtype=dtype)
        x = m.random.normal((3, 4))
        y = wrapped(x)
        _, grads = nn_.value_and_grad(
            wrapped, lambda x: wrapped(x).astype(m.float32).sum())(x)
        flat = utils.tree_flatten(grads)
        return (repr(wrapped), repr(y.dtype), _params(wrapped, utils),
                [(k, repr(v.dtype)) for k, v in flat],
                np.array(y.astype(m.float32)), [np.array(v) for _, v in flat])
    ours, theirs = _both(run)
    assert ours[:4] == theirs[:4]
    tol = 1e-5 if compute_dtype is None else 2e-2
    np.testing.assert_allclose(ours[4], theirs[4], rtol=tol, atol=tol)
    for a, b in zip(ours[5], theirs[5], strict=True):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


PROGRAM = os.path.join(os.path.dirname(__file__), "programs", "mlx_sharded_layers.py")


@pytest.mark.parametrize("nproc", [2, 3])
def test_sharded_layers_equal_the_plain_ones_across_processes(nproc):
    pytest.importorskip("mpi4py")
    from distributed.conftest import _launch  # (tests/distributed's way of starting programs)

    out = _launch(PROGRAM, nproc, timeout=90)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = sorted(line for line in out.stdout.splitlines() if line.endswith(" ok"))
    assert lines == [f"rank {r} of {nproc} ok" for r in range(nproc)], out.stdout + out.stderr
