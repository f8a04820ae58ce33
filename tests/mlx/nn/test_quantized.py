"""QuantizedLinear, QuantizedEmbedding and nn.quantize against mlx.nn 0.32.4: parameter
trees (packed weights, scales, biases equal bit for bit), frozen parameters, reprs,
forward outputs, and in-place quantization of a small model."""

import numpy as np
import pytest

import ember.mlx.core as mx
import ember.mlx.nn as nn
from ember.mlx.utils import tree_flatten, tree_unflatten

RNG = np.random.default_rng(0)


def _flat(tree) -> dict:
    return {k: np.array(v) for k, v in tree_flatten(tree)}


def _same_tree(ours, theirs) -> None:
    from mlx.utils import tree_flatten as their_flatten
    a, b = _flat(ours), {k: np.array(v) for k, v in their_flatten(theirs)}
    assert list(a) == list(b)
    for k in a:
        assert a[k].dtype == b[k].dtype and a[k].shape == b[k].shape, k
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


def _ours_from(theirs_module, ours_module):
    """`ours_module` given MLX's float parameters (before quantization)."""
    from mlx.utils import tree_flatten as their_flatten
    flat = [(k, mx.array(np.array(v))) for k, v in their_flatten(theirs_module.parameters())]
    return ours_module.update(tree_unflatten(flat))


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize(("mode", "group_size", "bits"),
                         [("affine", None, None), ("affine", 32, 3), ("affine", 128, 8),
                          ("mxfp4", None, None), ("nvfp4", None, None)])
def test_quantized_linear_from_linear(mlx, mlx_nn, close, bias, mode, group_size, bits):
    theirs_lin = mlx_nn.Linear(128, 24, bias=bias)
    ours_lin = _ours_from(theirs_lin, nn.Linear(128, 24, bias=bias))
    theirs = mlx_nn.QuantizedLinear.from_linear(theirs_lin, group_size, bits, mode)
    ours = nn.QuantizedLinear.from_linear(ours_lin, group_size, bits, mode)
    _same_tree(ours.parameters(), theirs.parameters())
    # frozen as MLX's: the quantized members; a bias copied from the Linear stays trainable
    trainable = [k for k, _ in tree_flatten(ours.trainable_parameters())]
    assert trainable == (["bias"] if bias else [])
    _same_tree(ours.trainable_parameters(), theirs.trainable_parameters())
    assert repr(ours) == repr(theirs)
    assert ("biases" in ours) == ("biases" in theirs)
    x = RNG.standard_normal((2, 3, 128)).astype(np.float32)
    # NOTE: MLX's kernel sums element by element, ember dequantizes then calls matmul.
    close(ours(mx.array(x)), theirs(mlx.array(x)), rtol=1e-5, atol=1e-5)


def test_quantized_linear_init_draws_as_mlx(mlx, mlx_nn):
    mlx.random.seed(5)
    mx.random.seed(5)
    theirs, ours = mlx_nn.QuantizedLinear(64, 8, bits=2), nn.QuantizedLinear(64, 8, bits=2)
    _same_tree(ours.parameters(), theirs.parameters())
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize(("mode", "group_size", "bits"),
                         [("affine", None, None), ("affine", 32, 6), ("mxfp8", None, None)])
def test_quantized_embedding(mlx, mlx_nn, close, mode, group_size, bits):
    theirs_emb = mlx_nn.Embedding(20, 64)
    ours_emb = _ours_from(theirs_emb, nn.Embedding(20, 64))
    theirs = mlx_nn.QuantizedEmbedding.from_embedding(theirs_emb, group_size, bits, mode)
    ours = nn.QuantizedEmbedding.from_embedding(ours_emb, group_size, bits, mode)
    _same_tree(ours.parameters(), theirs.parameters())
    assert tree_flatten(ours.trainable_parameters()) == []
    assert repr(ours) == repr(theirs)
    idx = np.array([[3, 0, 19], [7, 7, 1]], np.int32)
    a, b = ours(mx.array(idx)), theirs(mlx.array(idx))
    assert repr(a.dtype) == repr(b.dtype)
    np.testing.assert_array_equal(np.array(a.astype(mx.float32)),
                                  np.array(b.astype(mlx.float32)))  # a dequantize: exact
    x = RNG.standard_normal((4, 64)).astype(np.float32)
    close(ours.as_linear(mx.array(x)), theirs.as_linear(mlx.array(x)), rtol=1e-5, atol=1e-5)


def _model(N):
    class Net(N.Module):
        def __init__(self):
            super().__init__()
            self.emb = N.Embedding(16, 64)
            self.proj = N.Linear(64, 128)
            self.layers = [N.Linear(128, 64), N.ReLU(), N.Linear(64, 16, bias=False)]

        def __call__(self, idx):
            h = self.proj(self.emb(idx))
            for layer in self.layers:
                h = layer(h)
            return h
    return Net()


@pytest.mark.parametrize("predicate", [None, "skip_last", "dict"])
def test_nn_quantize_replaces_layers_in_place(mlx, mlx_nn, close, predicate):
    theirs = _model(mlx_nn)
    ours = _ours_from(theirs, _model(nn))
    preds = {
        None: None,
        "skip_last": lambda p, m: hasattr(m, "to_quantized") and p != "layers.2",
        "dict": lambda p, m: ({"group_size": 32, "bits": 8} if p == "proj"
                              else hasattr(m, "to_quantized")),
    }
    mlx_nn.quantize(theirs, 64, 4, class_predicate=preds[predicate])
    nn.quantize(ours, 64, 4, class_predicate=preds[predicate])
    assert repr(ours).replace("Net", "") == repr(theirs).replace("Net", "")
    _same_tree(ours.parameters(), theirs.parameters())
    _same_tree(ours.trainable_parameters(), theirs.trainable_parameters())
    idx = np.array([[1, 5, 15], [0, 2, 9]], np.int32)
    close(ours(mx.array(idx)), theirs(mlx.array(idx)), rtol=1e-5, atol=1e-5)


def test_nn_quantize_errors(mlx_nn):
    for N in (mlx_nn, nn):
        m, relu = _model(N), N.ReLU
        with pytest.raises(ValueError, match="Unable to quantize model of type"):
            N.quantize(m, class_predicate=lambda p, m, relu=relu: isinstance(m, relu))
        with pytest.raises(ValueError, match="must return a bool or a dict"):
            N.quantize(m, class_predicate=lambda p, m: 1 if hasattr(m, "to_quantized") else 0)
        with pytest.raises(ValueError, match="Invalid quantization mode 'foo'. Valid modes"):
            N.QuantizedLinear(64, 8, mode="foo")
        with pytest.raises(ValueError, match="Quantized input is not supported."):
            N.Embedding(4, 32).to_quantized(quantize_input=True)


# -- QQLinear ---------------------------------------------------------------------------------
# MLX's CPU build computes `qqmm` for one input row against packed weights only, so an
# eval-mode QQLinear answers single rows (bit for bit: see test_quantize) and refuses the
# rest; in training mode (float weights) it refuses everything.

def _outcome(call):
    try:
        out = call()
        return "ok", repr(out.dtype), out.tolist()  # (exact values)
    except Exception as e:  # noqa: BLE001  (the exception is what is compared)
        return type(e).__name__, str(e)


@pytest.mark.parametrize(("mode", "group_size", "bits"),
                         [("nvfp4", None, None), ("mxfp8", None, None), ("mxfp4", 32, 4)])
def test_qq_linear_modes_and_outputs(mlx, mlx_nn, mode, group_size, bits):
    mlx.random.seed(3)
    mx.random.seed(3)
    theirs = mlx_nn.QQLinear(64, 8, group_size, bits, mode=mode)
    ours = nn.QQLinear(64, 8, group_size, bits, mode=mode)
    _same_tree(ours.parameters(), theirs.parameters())  # (the same draws)
    assert repr(ours) == repr(theirs) and ours.training
    x = RNG.standard_normal((3, 64)).astype(np.float32)
    for rows in [x[:1], x[:2], x[0]]:  # training: weights float, refused
        assert _outcome(lambda r=rows: ours(mx.array(r))) == \
            _outcome(lambda r=rows: mlx.eval(theirs(mlx.array(r))))
    ours.eval()
    theirs.eval()
    _same_tree(ours.parameters(), theirs.parameters())  # packed weight and scales
    _same_tree(ours.trainable_parameters(), theirs.trainable_parameters())  # (not frozen)
    assert repr(ours) == repr(theirs)
    for rows in [x[:1], x[0], x[None, :1], x]:
        assert _outcome(lambda r=rows: ours(mx.array(r))) == \
            _outcome(lambda r=rows: mlx.eval(theirs(mlx.array(r))) or theirs(mlx.array(r)))
    ours.eval()  # (again: nothing to do)
    ours.train()
    theirs.train()
    assert ours.weight.dtype == mx.bfloat16 and theirs.weight.dtype == mlx.bfloat16
    np.testing.assert_array_equal(np.array(ours.weight.astype(mx.float32)),
                                  np.array(theirs.weight.astype(mlx.float32)))  # dequantized
    assert "scales" not in ours and repr(ours) == repr(theirs)


def test_qq_linear_from_linear_and_errors(mlx, mlx_nn):
    for N, m in ((mlx_nn, mlx), (nn, mx)):
        lin = N.Linear(64, 8, bias=False)
        q = N.QQLinear.from_linear(lin)
        assert q.weight is lin.weight and q.training
        lin.eval()
        q = N.QQLinear.from_linear(lin, mode="mxfp8")
        assert not q.training and q.weight.dtype == m.uint32 and q.scales.dtype == m.uint8
        assert repr(q) == "QQLinear(input_dims=64, output_dims=8, group_size=32, bits=8, " \
                          "mode=mxfp8)"
        with pytest.raises(NotImplementedError, match="QQLinear does not support bias yet."):
            N.QQLinear.from_linear(N.Linear(64, 8))
        with pytest.raises(ValueError, match="Invalid quantization mode 'foo'. Valid modes"):
            N.QQLinear(64, 8, mode="foo")
        with pytest.raises(ValueError, match="too many values to unpack"):
            N.QQLinear(64, 8, mode="affine").eval()  # (quantize gives three arrays)
