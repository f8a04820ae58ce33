"""The compiled-module wrapper (ember/_dynamo/eval_frame.py's OptimizedModule) against
torch 2.13's: attribute reads, writes and deletes go to the original module, `training`
is the original's, `len` and `dir` forward, and it prints as PyTorch prints it."""

from __future__ import annotations

import pytest
import torch

import ember


def _pair(lib):
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(nn.Linear(3, 4), nn.Sequential(nn.ReLU(), nn.Dropout(0.5)))
    return model, lib.compile(model, backend="eager")


def test_repr_nests_as_torchs():
    assert repr(_pair(ember)[1]) == repr(_pair(torch)[1])


@pytest.mark.parametrize("lib", [ember, torch])
def test_setattr_and_delattr_reach_the_original(lib):
    model, cm = _pair(lib)
    cm.extra = 3
    assert model.extra == 3 and "extra" not in cm.__dict__
    cm.head = lib.nn.Linear(4, 2)  # model surgery through the wrapper
    assert model.head is cm.head
    keys = list(cm.state_dict())
    assert keys[-2:] == ["_orig_mod.head.weight", "_orig_mod.head.bias"]
    assert all(k.startswith("_orig_mod.") for k in keys)
    del cm.head
    assert not hasattr(model, "head")
    cm.register_buffer("steps", lib.zeros(()))  # (a Module method: registered on the wrapper)
    assert "steps" in dict(cm.named_buffers())


def test_setattr_matches_torch_state_dict_keys():
    outs = []
    for lib in (ember, torch):
        model, cm = _pair(lib)
        cm.head = lib.nn.Linear(4, 2)
        cm.scale = lib.nn.Parameter(lib.ones(2))
        outs.append((list(cm.state_dict()), list(model.state_dict()),
                     [n for n, _ in cm.named_modules()]))
    assert outs[0] == outs[1]


@pytest.mark.parametrize("lib", [ember, torch])
def test_training_is_the_originals(lib):
    model, cm = _pair(lib)
    cm.training = False  # a plain assignment, not train(): torch mirrors it too
    assert model.training is False and cm.training is False
    assert model[1][1].training is True  # (only the attribute, as a plain assignment does)
    model.train()
    assert cm.training is True
    cm.eval()
    assert (model.training, model[0].training, model[1][1].training) == (False, False, False)


def test_len_and_dir_forward():
    for lib in (ember, torch):
        model, cm = _pair(lib)
        assert len(cm) == 2
        names = dir(cm)
        assert "_orig_mod" in names and "append" in names  # (Sequential's method)
        _, lin = model, lib.compile(lib.nn.Linear(2, 2), backend="eager")
        with pytest.raises(TypeError, match="^Linear does not support len\\(\\)$"):
            len(lin)


def test_wrapper_runs_the_original_and_keeps_its_parameters():
    model, cm = _pair(ember)
    cm.eval()
    x = ember.randn(5, 3)
    assert ember.equal(cm(x), model(x))
    assert [p is q for p, q in zip(cm.parameters(), model.parameters())] == [True] * 2


def test_pickled_wrapper_compiles_afresh_with_its_settings():
    import copy
    import io

    for lib in (ember, torch):
        model, cm = _pair(lib)
        cm.eval()
        buf = io.BytesIO()
        lib.save(cm, buf)
        buf.seek(0)
        x = lib.randn(4, 3)
        for copied in (copy.deepcopy(cm), lib.load(buf, weights_only=False)):
            assert type(copied).__name__ == "OptimizedModule"
            assert list(copied.state_dict()) == list(cm.state_dict())
            assert copied._orig_mod is not model
            assert lib.equal(copied(x), cm(x))
    c = copy.deepcopy(ember.compile(ember.nn.Linear(2, 2), backend="aot_eager",
                                    fullgraph=True))
    assert (c._compiled_fn.backend, c._compiled_fn.fullgraph) == ("aot_eager", True)


def test_hooks_on_the_wrapper_and_the_original_both_run():
    logs = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        m = lib.nn.Linear(2, 2)
        cm = lib.compile(m, backend="eager")
        log = []
        m.register_forward_hook(lambda mod, a, o, log=log: log.append("orig hook"))
        cm.register_forward_hook(
            lambda mod, a, o, log=log: log.append(("wrapper", type(mod).__name__)))
        cm.register_forward_pre_hook(lambda mod, a, log=log: log.append("wrapper pre"))
        cm(lib.ones(1, 2))
        h = cm.register_forward_hook(lambda mod, a, o: o * 0 + 1)  # (replaces the output)
        log.append(cm(lib.ones(1, 2)).tolist())
        h.remove()
        log.append(cm(lib.ones(1, 2)).tolist() != [[1.0, 1.0]])
        logs.append(log)
    assert logs[0] == logs[1]
