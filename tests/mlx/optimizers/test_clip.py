"""clip_grad_norm against MLX's: the norm, the scaled gradients, dtypes, errors."""

import numpy as np
import pytest

import ember.mlx.core as mx
import ember.mlx.optimizers as optim

mlx_core = pytest.importorskip("mlx.core")
mlx_opt = pytest.importorskip("mlx.optimizers")


def twin_trees(dtype, scale: float = 1.0):
    """One gradient tree (dict, list, 0-d leaf) as (ember.mlx tree, mlx tree)."""
    rng = np.random.default_rng(0)
    tree = {"w": rng.standard_normal((4, 5)) * scale,
            "layers": [{"b": rng.standard_normal(3) * scale}, rng.standard_normal(()) * scale]}

    def conv(t, array):
        if isinstance(t, dict):
            return {k: conv(v, array) for k, v in t.items()}
        if isinstance(t, list):
            return [conv(v, array) for v in t]
        return array(t.astype(dtype))

    return conv(tree, mx.array), conv(tree, mlx_core.array)


@pytest.mark.parametrize("max_norm", [0.0, 0.5, 3.0, 100.0])
def test_clip_grad_norm_matches_mlx(assert_same_tree, max_norm):
    ours, theirs = twin_trees(np.float32)
    g_ours, n_ours = optim.clip_grad_norm(ours, max_norm)
    g_theirs, n_theirs = mlx_opt.clip_grad_norm(theirs, max_norm)
    # NOTE: the squares may be summed in another order than MLX's: an ulp in the norm
    assert_same_tree(n_ours, n_theirs, rtol=1e-6)
    assert_same_tree(g_ours, g_theirs, rtol=1e-6)


def test_small_gradients_are_returned_unscaled():
    grads = {"a": mx.array([0.3, 0.4])}
    clipped, norm = optim.clip_grad_norm(grads, max_norm=1.0)
    assert norm.item() == pytest.approx(0.5)
    assert clipped["a"].tolist() == grads["a"].tolist()


def test_clipped_gradients_have_norm_max_norm():
    grads = {"a": mx.array([3.0, 4.0]), "b": [mx.array([[12.0]])]}
    clipped, norm = optim.clip_grad_norm(grads, max_norm=2.0)
    assert norm.item() == pytest.approx(13.0)
    total = sum((x * x).sum().item() for x in (clipped["a"], clipped["b"][0]))
    assert total ** 0.5 == pytest.approx(2.0, rel=1e-5)


def test_float16_gradients_are_summed_in_float32_and_stay_float16(assert_same_tree):
    ours, theirs = twin_trees(np.float16, scale=300.0)  # their squares overflow float16
    g_ours, n_ours = optim.clip_grad_norm(ours, 1.0)
    g_theirs, n_theirs = mlx_opt.clip_grad_norm(theirs, 1.0)
    assert str(n_ours.dtype) == "mlx.core.float32" and np.isfinite(n_ours.item())
    assert_same_tree(n_ours, n_theirs, rtol=1e-6)
    assert_same_tree(g_ours, g_theirs, rtol=1e-3)  # float16: one rounding apart at most


def test_empty_tree_has_norm_zero():
    grads, norm = optim.clip_grad_norm({}, 1.0)
    assert grads == {} and norm.item() == 0.0 == mlx_opt.clip_grad_norm({}, 1.0)[1].item()


def test_negative_max_norm_raises_as_mlx(same_error):
    same_error(lambda o: o.clip_grad_norm({}, -1.0))
