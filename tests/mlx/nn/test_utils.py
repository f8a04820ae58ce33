"""nn.value_and_grad against MLX's: gradients over the trainable parameters only, the
model left holding its parameters, auxiliary outputs."""

import numpy as np

import ember.mlx.core as mx
import ember.mlx.nn as nn
from ember.mlx.utils import tree_flatten

X = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
Y = np.array([0, 2, 1], np.int32)


def _model(nn_):
    return nn_.Sequential(nn_.Linear(4, 5), nn_.Tanh(), nn_.Linear(5, 3))


def _step(mx_, nn_, model):
    def loss(x, y):
        return nn_.losses.cross_entropy(model(x), y, reduction="mean")
    return nn_.value_and_grad(model, loss)(mx_.array(X), mx_.array(Y))


def test_value_and_grad_matches_mlx(mlx, mlx_nn, copy_params, close):
    theirs = _model(mlx_nn)
    ours = copy_params(theirs, _model(nn))
    (v1, g1), (v2, g2) = _step(mx, nn, ours), _step(mlx, mlx_nn, theirs)
    close(v1, v2, atol=1e-6)
    close(g1, g2, atol=1e-6)


def test_frozen_parameters_get_no_gradient(mlx, mlx_nn, copy_params, close):
    theirs = _model(mlx_nn)
    ours = copy_params(theirs, _model(nn))
    ours.layers[0].freeze()
    theirs.layers[0].freeze()
    (_, g1), (_, g2) = _step(mx, nn, ours), _step(mlx, mlx_nn, theirs)
    assert [k for k, _ in tree_flatten(g1)] == ["layers.2.weight", "layers.2.bias"]
    close(g1, g2, atol=1e-6)


def test_model_keeps_usable_parameters_after_the_call():
    model = _model(nn)
    before = {k: np.array(v) for k, v in tree_flatten(model.parameters())}
    _step(mx, nn, model)
    after = {k: np.array(v) for k, v in tree_flatten(model.parameters())}
    assert before.keys() == after.keys()
    assert all(np.array_equal(before[k], after[k]) for k in before)
    np.array(model(mx.array(X)))  # the parameters are plain arrays again, not tracers


def test_aux_outputs_come_back_with_the_loss():
    model = _model(nn)

    def loss(x):
        out = model(x)
        return mx.sum(out), out

    (value, out), grads = nn.value_and_grad(model, loss)(mx.array(X))
    assert value.shape == () and out.shape == (3, 3)
    assert grads["layers"][0]["weight"].shape == (5, 4)


def test_a_training_loop_lowers_the_loss():
    model = _model(nn)
    losses = []
    for _ in range(20):
        value, grads = _step(mx, nn, model)
        model.update({k: v for k, v in _sgd(model.trainable_parameters(), grads).items()})
        losses.append(value.item())
    assert losses[-1] < losses[0] * 0.7


def _sgd(params, grads, lr=0.5):
    from ember.mlx.utils import tree_map
    return tree_map(lambda p, g: p - lr * g, params, grads)


def test_compiled_training_step_with_model_state():
    """MLX's pattern: mx.compile with the model's state as inputs and outputs."""
    from functools import partial

    model = _model(nn)
    loss_and_grad = nn.value_and_grad(
        model, lambda x, y: nn.losses.cross_entropy(model(x), y, reduction="mean"))
    state = [model.state]

    @partial(mx.compile, inputs=state, outputs=state)
    def step(x, y):
        loss, grads = loss_and_grad(x, y)
        model.update(_sgd(model.trainable_parameters(), grads))
        return loss

    losses = [step(mx.array(X), mx.array(Y)).item() for _ in range(10)]
    assert all(b < a for a, b in zip(losses, losses[1:]))


def test_checkpoint_recomputes_and_matches_mlx(mlx, mlx_nn, copy_params, close):
    """nn.checkpoint: the same values and gradients as the plain model, and the forward
    pass run again during backward as often as MLX runs it."""
    def run(mx_, nn_, model):
        calls = [0]
        inner = model.layers[0]

        def counted(x):
            calls[0] += 1
            return inner(x)

        ck = nn_.utils.checkpoint(inner, counted)  # (MLX keeps it out of `nn`)

        def loss(x, y):
            out = model.layers[2](model.layers[1](ck(x)))
            return nn_.losses.cross_entropy(out, y, reduction="mean")

        value, grads = nn_.value_and_grad(model, loss)(mx_.array(X), mx_.array(Y))
        mx_.eval(value, grads)
        return value, grads, calls[0]

    theirs = _model(mlx_nn)
    ours = copy_params(theirs, _model(nn))
    v1, g1, n1 = run(mx, nn, ours)
    v2, g2, n2 = run(mlx, mlx_nn, theirs)
    close(v1, v2, atol=1e-6)
    close(g1, g2, atol=1e-6)
    assert n1 == n2 == 2  # once forward, once again in backward
    v3, g3 = _step(mx, nn, ours)  # the plain model
    close(v1, v3, atol=1e-6)
    close(g1, g3, atol=1e-6)
