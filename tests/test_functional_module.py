"""ember.functional against torch.functional: the same names, each the package's own
function, and the deprecated chain_matmul."""

import warnings

import numpy as np
import pytest
import torch
from tests.helpers import assert_same, same_message

import ember
from ember import _user_warnings


def test_names_are_torch_functionals_and_the_package_functions():
    assert ember.functional.__all__ == torch.functional.__all__
    for name in torch.functional.__all__:
        assert getattr(ember.functional, name) is getattr(ember, name), name
    from ember.functional import einsum, norm, split

    assert (einsum, norm, split) == (ember.einsum, ember.norm, ember.split)


def test_chain_matmul_values_and_warning():
    rng = np.random.default_rng(0)
    mats = [rng.standard_normal(s) for s in ((3, 4), (4, 5), (5, 2))]
    outs = {}
    _user_warnings._warned_once.discard(ember.functional._DEPRECATED)  # (as a fresh process)
    for L in (ember, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            outs[L] = L.functional.chain_matmul(*[L.tensor(m) for m in mats])
            L.functional.chain_matmul(*[L.tensor(m) for m in mats])
        # (once a process, whatever the filters; torch's may have fired in an earlier test)
        count = len([m for m in w if "torch.chain_matmul is deprecated" in str(m.message)])
        assert count == 1 if L is ember else count <= 1
    # float64 products in a possibly different order: a few ulps
    assert_same(outs[ember], outs[torch], 1e-12, 1e-12)
    one = {L: L.functional.chain_matmul(L.tensor(mats[0])) for L in (ember, torch)}
    assert_same(one[ember], one[torch], 0, 0)


@pytest.mark.parametrize("args", [(), ((2,),), ((2, 3), (4, 4)), ((2, 3), (3,))])
def test_chain_matmul_refusals(args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_message(lambda L: L.functional.chain_matmul(*[L.ones(*s) for s in args]))
