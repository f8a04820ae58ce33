"""Which activation a Transformer layer applies, against torch: after copying or pickling a
decoder layer built with an activation module, and in the encoder's inference fast path."""

import copy
import io
import pickle

import numpy as np
import pytest
import torch

import ember
from ember import nn

from helpers import assert_same, copy_module_state, rand_array

# float32 layers (matmuls, LayerNorm, softmax) add in another order than torch's kernels
TOL = {"rtol": 1e-4, "atol": 1e-5}


def _act(ns, name):
    return {"GELU": ns.GELU(), "GELU_tanh": ns.GELU("tanh"), "SiLU": ns.SiLU(),
            "ReLU": ns.ReLU(), "gelu_str": "gelu"}[name]


def _roundtrip(how, layer):
    if how == "deepcopy":
        return copy.deepcopy(layer)
    if how == "copy":
        return copy.copy(layer)
    return pickle.loads(pickle.dumps(layer))


@pytest.mark.parametrize("act", ["GELU", "SiLU", "gelu_str"])
@pytest.mark.parametrize("how", ["deepcopy", "copy", "pickle"])
def test_copied_decoder_layer_uses_the_same_activation_as_torch(act, how):
    # torch's TransformerDecoderLayer.__setstate__ puts F.relu in the instance dict when the
    # activation was a module (kept in _modules), so copies of it apply relu
    outs = []
    for ns, mod in ((ember, nn), (torch, torch.nn)):
        ns.manual_seed(0)
        layer = mod.TransformerDecoderLayer(8, 2, 16, 0.0, activation=_act(mod, act))
        outs.append(_roundtrip(how, layer))
    copy_module_state(outs[0], outs[1])
    tgt, mem = rand_array((3, 2, 8)), rand_array((4, 2, 8), seed=1)
    got = outs[0](ember.tensor(tgt), ember.tensor(mem))
    want = outs[1](torch.tensor(tgt), torch.tensor(mem))
    assert_same(got, want, **TOL)
    # the module is still a child: same state_dict keys and module names
    assert [n for n, _ in outs[0].named_modules()] == [n for n, _ in outs[1].named_modules()]


def test_transformer_with_activation_module_matches_torch():
    # nn.Transformer deep-copies its decoder layer into the stack, so this is the common route
    src, tgt = rand_array((2, 5, 8)), rand_array((2, 4, 8), seed=1)
    outs = []
    for ns, mod in ((ember, nn), (torch, torch.nn)):
        ns.manual_seed(0)
        tr = mod.Transformer(8, 2, 1, 1, 16, 0.0, activation=mod.GELU(), batch_first=True)
        outs.append(tr(ns.tensor(src), ns.tensor(tgt)))
    assert_same(outs[0], outs[1], **TOL)


def test_unpickled_decoder_layer_through_ember_save_matches_torch():
    layers = []
    for ns, mod in ((ember, nn), (torch, torch.nn)):
        layer = mod.TransformerDecoderLayer(8, 2, 16, 0.0, activation=mod.GELU())
        buf = io.BytesIO()
        ns.save(layer, buf)
        buf.seek(0)
        layers.append(ns.load(buf, weights_only=False))
    assert (layers[0].activation is ember.nn.functional.relu) == (
        layers[1].activation is torch.nn.functional.relu)


@pytest.mark.parametrize("act", ["GELU", "GELU_tanh", "ReLU", "SiLU"])
@pytest.mark.parametrize("mode", ["eval_no_grad", "eval_grad", "train"])
@pytest.mark.parametrize("batch_first", [True, False])
def test_encoder_layer_fast_path_activation_matches_torch(act, mode, batch_first):
    # in inference torch runs a batch_first encoder layer as one fused kernel that applies
    # relu or exact gelu, whatever module of those families was given
    layers = []
    for ns, mod in ((ember, nn), (torch, torch.nn)):
        ns.manual_seed(0)
        layer = mod.TransformerEncoderLayer(8, 2, 16, 0.0, activation=_act(mod, act),
                                            batch_first=batch_first)
        layers.append(layer.train(mode == "train"))
    copy_module_state(layers[0], layers[1])
    src = rand_array((2, 5, 8))
    outs = []
    for ns, layer in ((ember, layers[0]), (torch, layers[1])):
        with ns.set_grad_enabled(mode != "eval_no_grad"):
            outs.append(layer(ns.tensor(src)).detach())
    assert_same(outs[0], outs[1], **TOL)
    if act == "GELU_tanh":  # the two gelus differ by more than the tolerance here
        exact = layers[0]._ff_block(ember.ones(1, 8), ember.nn.functional.gelu)
        tanh = layers[0]._ff_block(ember.ones(1, 8))
        assert not np.allclose(exact.detach().numpy(), tanh.detach().numpy(), rtol=1e-6)
