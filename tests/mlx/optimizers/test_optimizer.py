"""The optimizer shell: state layout, init, loading a state, learning rates,
`update` on a model, and MultiOptimizer, each against MLX's."""

import numpy as np
import pytest

import ember.mlx.core as mx
import ember.mlx.optimizers as optim

mlx_core = pytest.importorskip("mlx.core")
mlx_opt = pytest.importorskip("mlx.optimizers")


def both(tree):
    """`tree` of NumPy arrays as (ember.mlx tree, mlx tree)."""
    def conv(t, array):
        if isinstance(t, dict):
            return {k: conv(v, array) for k, v in t.items()}
        if isinstance(t, list | tuple):
            return type(t)(conv(v, array) for v in t)
        return array(t)
    return conv(tree, mx.array), conv(tree, mlx_core.array)


PARAMS = {"weight": np.ones((2, 3), np.float32), "bias": np.zeros(2, np.float32),
          "blocks": [{"w": np.full(3, 2.0, np.float32)}, (np.ones(1, np.float32),)]}


def test_state_before_any_step_holds_step_and_learning_rate(assert_same_tree):
    ours, theirs = optim.Adam(1e-3), mlx_opt.Adam(1e-3)
    assert_same_tree(ours.state, theirs.state)
    assert list(ours.state) == ["step", "learning_rate"]
    assert str(ours.step.dtype) == "mlx.core.uint64" and ours.step.shape == ()
    assert str(ours.learning_rate.dtype) == "mlx.core.float32"


def test_init_lays_out_the_state_like_the_parameters(assert_same_tree):
    p_ours, p_theirs = both(PARAMS)
    ours, theirs = optim.SGD(0.1, momentum=0.9), mlx_opt.SGD(0.1, momentum=0.9)
    ours.init(p_ours)
    theirs.init(p_theirs)
    assert list(ours.state) == ["step", "learning_rate", "weight", "bias", "blocks"]
    assert isinstance(ours.state["blocks"][1], tuple)  # a tuple of parameters stays one
    assert_same_tree(ours.state, theirs.state)


def test_init_keeps_entries_that_exist():
    p, _ = both(PARAMS)
    opt = optim.Adam(1e-3)
    opt.init(p)
    m = opt.state["weight"]["m"]
    opt.init(p)
    assert opt.state["weight"]["m"] is m


def test_a_loaded_state_is_kept_and_grown(assert_same_tree):
    # a state saved after two steps, loaded into a fresh optimizer, continues the run
    p, _ = both({"a": np.ones(3, np.float32)})
    g, _ = both({"a": np.full(3, 0.5, np.float32)})
    first = optim.Adam(0.1)
    p1 = first.apply_gradients(g, first.apply_gradients(g, p))
    second = optim.Adam(0.1)
    second.state = first.state
    second.apply_gradients(g, p1)
    assert second.state["step"].item() == 3
    # and a state that lacks a parameter gets its entry at the next step
    grown = optim.Adam(0.1)
    grown.state = {"step": mx.array(0).astype(mx.uint64), "learning_rate": mx.array(0.1)}
    q, _ = both({"a": np.ones(3, np.float32), "b": np.ones(2, np.float32)})
    grown.apply_gradients(q, q)
    assert sorted(grown.state) == ["a", "b", "learning_rate", "step"]


def test_apply_gradients_updates_only_what_has_a_gradient():
    # the parameters may be a superset (a whole model); the result is shaped like grads
    p_ours, p_theirs = both(PARAMS)
    g_ours, g_theirs = both({"bias": np.ones(2, np.float32)})
    out_ours = optim.SGD(0.5).apply_gradients(g_ours, p_ours)
    out_theirs = mlx_opt.SGD(0.5).apply_gradients(g_theirs, p_theirs)
    assert list(out_ours) == list(out_theirs) == ["bias"]
    assert out_ours["bias"].tolist() == out_theirs["bias"].tolist() == [-0.5, -0.5]


def test_learning_rate_setter_stores_an_array(assert_same_tree):
    ours, theirs = optim.SGD(0.1), mlx_opt.SGD(0.1)
    ours.learning_rate = 0.25
    theirs.learning_rate = 0.25
    assert_same_tree(ours.learning_rate, theirs.learning_rate)
    ours.learning_rate = mx.array(0.5)
    assert ours.state["learning_rate"].item() == 0.5


def test_learning_rate_may_be_an_array():
    opt = optim.SGD(mx.array(0.5))
    p, _ = both({"a": np.ones(2, np.float32)})
    assert opt.apply_gradients(p, p)["a"].tolist() == [0.5, 0.5]


def test_step_counts_updates():
    opt = optim.SGD(0.1)
    p, _ = both({"a": np.ones(2, np.float32)})
    for _ in range(3):
        p = opt.apply_gradients(p, p)
    assert opt.step.item() == 3 and str(opt.step.dtype) == "mlx.core.uint64"


class DictModel(dict):
    """The two methods of MLX's `nn.Module` an optimizer uses (a dict of parameters)."""

    def trainable_parameters(self):
        return dict(self)

    def update(self, params):
        for k, v in params.items():
            self[k] = v
        return self


def test_update_writes_the_new_parameters_into_the_model():
    model = DictModel(weight=mx.array([1.0, 2.0]), frozen=mx.array([7.0]))
    opt = optim.SGD(0.5)
    opt.update(model, {"weight": mx.array([2.0, 2.0])})
    assert model["weight"].tolist() == [0.0, 1.0]
    assert model["frozen"].tolist() == [7.0]


@pytest.mark.parametrize("make", [lambda o: o.Adam(learning_rate=0.05),
                                  lambda o: o.SGD(0.1, momentum=0.9, weight_decay=1e-3)])
def test_update_trains_an_nn_model_as_mlx_does(make, assert_same_tree):
    nn = pytest.importorskip("ember.mlx.nn")
    mlx_nn = pytest.importorskip("mlx.nn")
    rng = np.random.default_rng(0)
    weights = {"layers": [{"weight": rng.standard_normal((8, 3)), "bias": np.zeros(8)},
                          {}, {"weight": rng.standard_normal((1, 8)), "bias": np.zeros(1)}]}
    x, y = rng.standard_normal((16, 3)), rng.standard_normal((16, 1))
    w_ours, w_theirs = both(weights)
    x_ours, x_theirs = both(x)
    y_ours, y_theirs = both(y)

    def train(nn, core, opt_module, w, x, y):
        model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
        model.update(w)
        opt = make(opt_module)
        opt.init(model.trainable_parameters())
        loss_and_grad = nn.value_and_grad(model, lambda m: core.mean(core.square(m(x) - y)))
        losses = []
        for _ in range(10):
            loss, grads = loss_and_grad(model)
            opt.update(model, grads)
            losses.append(loss.item())
        return model, opt, losses

    m_ours, opt_ours, losses_ours = train(nn, mx, optim, w_ours, x_ours, y_ours)
    m_theirs, opt_theirs, losses_theirs = train(mlx_nn, mlx_core, mlx_opt, w_theirs, x_theirs,
                                                y_theirs)
    assert losses_ours[-1] < losses_ours[0]
    # NOTE: matmuls and the mean sum in other orders than MLX's: ulps in the gradients
    np.testing.assert_allclose(losses_ours, losses_theirs, rtol=1e-5)
    assert_same_tree(m_ours.trainable_parameters(), m_theirs.trainable_parameters(),
                     rtol=1e-4, atol=1e-6)
    assert_same_tree(opt_ours.state, opt_theirs.state, rtol=1e-4, atol=1e-6)


# -- MultiOptimizer ----------------------------------------------------------------------

def split_by_rank(o):
    """Vectors and scalars (biases) with SGD, matrices and more with Adam."""
    return o.MultiOptimizer([o.SGD(0.1, momentum=0.5), o.Adam(1e-2)],
                            [lambda path, w: w.ndim < 2])


def test_multi_optimizer_matches_mlx(twin_run):
    ours, _, _, _ = twin_run(split_by_rank, rtol=0)
    sgd_state, adam_state = ours.state["states"]
    assert list(sgd_state) == ["step", "learning_rate", "b", "layers"]
    assert list(adam_state) == ["step", "learning_rate", "w", "layers"]


def test_multi_optimizer_filters_see_dotted_paths(twin_run):
    def by_path(o):
        return o.MultiOptimizer([o.SGD(0.1), o.RMSprop(1e-2)],
                                [lambda path, w: path.startswith("layers.1")])
    ours, _, _, _ = twin_run(by_path, rtol=0)
    assert list(ours.state["states"][0]) == ["step", "learning_rate", "layers"]


def test_multi_optimizer_learning_rate_is_the_first_and_sets_all():
    opt = optim.MultiOptimizer([optim.SGD(0.1), optim.Adam(0.2)], [lambda p, w: True])
    assert opt.learning_rate.item() == pytest.approx(0.1)
    opt.learning_rate = 0.5
    assert [o.learning_rate.item() for o in opt.optimizers] == [0.5, 0.5]


def test_multi_optimizer_state_can_be_set_back():
    opt = optim.MultiOptimizer([optim.SGD(0.1), optim.Adam(0.2)], [lambda p, w: True])
    saved = opt.state
    opt.state = saved
    assert opt.optimizers[1].state is saved["states"][1]


@pytest.mark.parametrize("make", [
    lambda o: o.MultiOptimizer([o.SGD(0.1), o.Adam(0.1)]),
    lambda o: o.MultiOptimizer([o.SGD(0.1)], [lambda p, w: True]),
])
def test_multi_optimizer_needs_one_filter_fewer_than_optimizers(same_error, make):
    same_error(make)


@pytest.mark.parametrize("state", [{}, {"states": [{}]}])
def test_multi_optimizer_refuses_a_state_of_the_wrong_shape(same_error, state):
    def set_state(o):
        o.MultiOptimizer([o.SGD(0.1), o.SGD(0.2)], [lambda p, w: True]).state = state
    same_error(set_state)
