"""Legacy weight_norm and DataParallel against torch."""

import numpy as np
import pytest
import torch

import ember
from ember import nn

from helpers import assert_same, check_module, rand_array


@pytest.mark.filterwarnings("ignore:`torch.nn.utils.weight_norm` is deprecated")
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_matches_torch(dim):
    e_mod = nn.utils.weight_norm(nn.Conv1d(3, 4, 2), dim=dim)
    t_mod = torch.nn.utils.weight_norm(torch.nn.Conv1d(3, 4, 2), dim=dim)
    assert list(e_mod.state_dict()) == list(t_mod.state_dict())
    assert [n for n, _ in e_mod.named_parameters()] == [n for n, _ in t_mod.named_parameters()]
    check_module(e_mod, t_mod, rand_array((2, 3, 5)))
    nn.utils.remove_weight_norm(e_mod)
    torch.nn.utils.remove_weight_norm(t_mod)
    assert list(e_mod.state_dict()) == list(t_mod.state_dict())
    assert_same(e_mod.weight, t_mod.weight)
    assert not e_mod._hooked
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        nn.utils.remove_weight_norm(e_mod)


def test_data_parallel_prefixes_state_dict_and_forwards():
    e = nn.DataParallel(nn.Linear(3, 2))
    t = torch.nn.DataParallel(torch.nn.Linear(3, 2))
    assert list(e.state_dict()) == list(t.state_dict()) == ["module.weight", "module.bias"]
    check_module(e, t, rand_array((4, 3)))
    assert repr(e) == repr(t)


@pytest.mark.filterwarnings("ignore:`torch.nn.utils.weight_norm` is deprecated")
@pytest.mark.parametrize("dim", [-2, -3, 2])
def test_weight_norm_negative_and_last_dims(dim):
    """A negative dim other than -1 counts from the end (as torch's norm_except_dim does);
    -1 alone means "over every dim"."""
    for wrap in (nn.utils.weight_norm, nn.utils.parametrizations.weight_norm):
        twrap = (torch.nn.utils.weight_norm if wrap is nn.utils.weight_norm
                 else torch.nn.utils.parametrizations.weight_norm)
        e_mod, t_mod = wrap(nn.Conv1d(3, 4, 2), dim=dim), twrap(torch.nn.Conv1d(3, 4, 2), dim=dim)
        for (name, pe), (_, pt) in zip(e_mod.named_parameters(), t_mod.named_parameters()):
            assert pe.shape == pt.shape, name
        check_module(e_mod, t_mod, rand_array((2, 3, 5)))


def test_weight_norm_functions_at_the_top_level():
    v, g = rand_array((4, 3, 2), seed=1), rand_array((1, 3, 1), seed=2)
    for dim, gshape in ((1, (1, 3, 1)), (-2, (1, 3, 1)), (0, (4, 1, 1)), (-1, ())):
        gg = rand_array(gshape, seed=2)
        e = ember._weight_norm(ember.tensor(v), ember.tensor(gg), dim)
        t = torch._weight_norm(torch.tensor(v), torch.tensor(gg), dim)
        assert_same(e, t, rtol=1e-6)  # (a float32 sum of squares: the order of the adds)
        for p in (2, 1, 3):
            assert_same(ember.norm_except_dim(ember.tensor(v), p, dim),
                        torch.norm_except_dim(torch.tensor(v), p, dim), rtol=1e-6)
    ve = ember.tensor(v, requires_grad=True)
    vt = torch.tensor(v, requires_grad=True)
    ember._weight_norm(ve, ember.tensor(g), 1).sum().backward()
    torch._weight_norm(vt, torch.tensor(g), 1).sum().backward()
    assert_same(ve.grad, vt.grad, rtol=1e-5, atol=1e-6)
    for L in (ember, torch):
        with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range "
                                             r"of \[-3, 2\], but got 5\)"):
            L.norm_except_dim(L.tensor(v), 2, 5)
        with pytest.raises(TypeError, match=r"norm_except_dim\(\): argument 'pow' \(position 2\) "
                                            r"must be int, not float"):
            L.norm_except_dim(L.tensor(v), 2.0, 0)


V_SHAPES_DIMS = [((3, 4, 2), 0), ((3, 4, 2), 1), ((3, 4, 2), 2), ((3, 4, 2), -2), ((3, 4, 2), -1),
                 ((4,), 0), ((4,), -1), ((), 0), ((), 1), ((), -1)]


@pytest.mark.parametrize("shape,dim", V_SHAPES_DIMS)
def test_norm_except_dim_and_weight_norm_match_torch(shape, dim):
    # shapes, values (one float32 rounding: sums of squares in another order), node names and
    # errors of norm_except_dim and torch._weight_norm for every rank and dim kind
    v = rand_array(shape)
    results = []
    for lib in (torch, ember):
        tv = lib.tensor(v, requires_grad=True)
        try:
            g = lib.norm_except_dim(tv.detach(), 2, dim) * 2
            w = lib._weight_norm(tv, g, dim)
            results.append((tuple(g.shape), w.grad_fn.name(), w.detach().numpy()))
        except Exception as e:  # the comparison is of the exception itself
            results.append((type(e).__name__, str(e)))
    (t0, t1, *t2), (e0, e1, *e2) = results
    assert (e0, e1) == (t0, t1)
    if t2:
        np.testing.assert_allclose(e2[0], t2[0], rtol=2e-7)


def test_weight_norm_of_a_bias_keeps_one_magnitude_per_entry():
    # a 1-d parameter with dim=0: g = |v| entry by entry, as torch's legacy hook stores it
    with pytest.warns(FutureWarning):
        e = nn.utils.weight_norm(nn.Linear(3, 4), name="bias")
    assert tuple(e.bias_g.shape) == (4,)
    assert ember.equal(e.bias_g.detach(), e.bias_v.detach().abs())
    p = nn.utils.parametrizations.weight_norm(nn.Linear(3, 4), name="bias")
    assert tuple(p.parametrizations.bias.original0.shape) == (4,)
    assert p.bias.grad_fn.name() == "WeightNormInterfaceBackward0"


def test_fused_weight_norm_wants_g_in_v_dtype():
    v = ember.ones(3, 2, dtype=ember.float64)
    with pytest.raises(RuntimeError, match="expected scalar type Double but found Float"):
        ember._weight_norm(v, ember.ones(3, 1), 0)
    # a middle dim is not fused: the dtypes promote
    assert ember._weight_norm(ember.ones(3, 2, 2), ember.ones(1, 2, 1, dtype=ember.float64),
                              1).dtype == ember.float64


@pytest.mark.parametrize("fn,args", [
    ("_weight_norm", (None, "ones", 0)), ("_weight_norm", ("ones", None, 0)),
    ("_weight_norm", ("ones", "ones", 0.5)), ("_weight_norm", ([1.0, 2.0], "ones", 0)),
    ("norm_except_dim", (None, 2, 0)), ("norm_except_dim", ([1.0], 2, 0)),
    ("norm_except_dim", ("ones", 2.5, 0)), ("norm_except_dim", ("ones", 2, 0.0))])
def test_weight_norm_ops_refuse_wrong_argument_types_like_torch(fn, args):
    # e.g. legacy weight_norm(name="bias") on a module built with bias=False reaches here
    def message(lib):
        with pytest.raises(TypeError) as info:
            getattr(lib, fn)(*(lib.ones(2) if a == "ones" else a for a in args))
        return str(info.value)
    assert message(ember) == message(torch)


@pytest.mark.filterwarnings("ignore:`torch.nn.utils.weight_norm` is deprecated")
def test_legacy_weight_norm_of_a_missing_bias_is_a_type_error():
    with pytest.raises(TypeError, match=r"\(position 1\) must be Tensor, not NoneType"):
        nn.utils.weight_norm(nn.Linear(3, 4, bias=False), name="bias")


def test_weight_norm_deprecation_warns_once_at_the_library_call():
    """torch deprecates `WeightNorm.apply`, so its FutureWarning names the line calling
    apply (inside `weight_norm`): under the default filter, repeated calls warn once."""
    import warnings

    counts = []
    for lib in (torch, ember):
        with warnings.catch_warnings(record=True) as caught:
            warnings.resetwarnings()
            warnings.simplefilter("default")
            # a fresh registry per library, so torch's run does not hide ember's
            warnings.filterwarnings("default", category=FutureWarning)
            for _ in range(3):
                lib.nn.utils.weight_norm(lib.nn.Linear(2, 2))
        hits = [w for w in caught if issubclass(w.category, FutureWarning)]
        assert all("weight_norm` is deprecated in favor of" in str(w.message) for w in hits)
        assert all(w.filename.endswith("weight_norm.py") for w in hits)
        counts.append(len(hits))
    assert counts[0] == counts[1] == 1
