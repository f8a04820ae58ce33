"""ember.quasirandom.SobolEngine against torch's: the same points, bit for bit."""

import numpy as np
import pytest
import torch

import ember


def both(dimension, **kw):
    return ember.quasirandom.SobolEngine(dimension, **kw), torch.quasirandom.SobolEngine(
        dimension, **kw)


def same(a, b):
    assert a.dtype == getattr(ember, str(b.dtype).split(".")[1])
    assert a.shape == b.shape
    assert np.array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("dimension", [1, 2, 3, 7, 40, 1024])
@pytest.mark.parametrize("scramble,seed", [(False, None), (True, 0), (True, 7), (True, 2**40)])
def test_draws_match_torch(dimension, scramble, seed):
    e, t = both(dimension, scramble=scramble, seed=seed)
    assert repr(e) == repr(t)
    assert np.array_equal(e.sobolstate.numpy(), t.sobolstate.numpy())
    same(e.shift, t.shift)
    same(e.draw(1, dtype=ember.float64), t.draw(1, dtype=torch.float64))
    same(e.draw(6), t.draw(6))
    same(e.draw(9, dtype=ember.float64), t.draw(9, dtype=torch.float64))
    e.fast_forward(13)
    t.fast_forward(13)
    same(e.draw(4), t.draw(4))
    same(e.quasi, t.quasi)
    assert e.reset() is e and e.num_generated == 0
    t.reset()
    same(e.draw_base2(5), t.draw_base2(5))
    e.reset().fast_forward(3)
    t.reset().fast_forward(3)
    same(e.draw(5), t.draw(5))
    assert e.num_generated == t.num_generated == 8


def test_first_point_and_out():
    e, t = both(3, scramble=True, seed=5)
    out_e, out_t = ember.empty(1), torch.empty(1)
    assert e.draw(4, out=out_e) is out_e
    t.draw(4, out=out_t)
    same(out_e, out_t)


def test_unseeded_scramble_uses_the_global_generator():
    ember.manual_seed(3)
    torch.manual_seed(3)
    e = ember.quasirandom.SobolEngine(4, scramble=True)
    t = torch.quasirandom.SobolEngine(4, scramble=True)
    same(e.draw(8), t.draw(8))
    same(ember.rand(2), torch.rand(2))


def test_errors_match_torch():
    def err(f):
        with pytest.raises(Exception) as info:
            f()
        return type(info.value).__name__, str(info.value)

    for dim in (0, 21202):
        assert err(lambda d=dim: ember.quasirandom.SobolEngine(d)) == err(
            lambda d=dim: torch.quasirandom.SobolEngine(d))
    e, t = both(2)
    e.draw(3)
    t.draw(3)
    assert err(lambda: e.draw_base2(2)) == err(lambda: t.draw_base2(2))
    assert err(lambda: e.draw(2, dtype=ember.float16)) == err(
        lambda: t.draw(2, dtype=torch.float16))


def test_dimensions_past_the_carried_table_are_refused_clearly():
    with pytest.raises(NotImplementedError, match="up to 1024"):
        ember.quasirandom.SobolEngine(1025)


def test_the_table_holds_the_dimensions_the_engine_claims():
    from ember import quasirandom
    from ember.sobol_directions import directions

    assert len(directions()) + 1 == quasirandom._EMBER_MAXDIM == 1024
    for poly, *init in directions()[:50]:  # each polynomial's degree = its initial numbers
        assert poly.bit_length() - 1 == len(init) and all(m % 2 for m in init)
