"""functional_call / stack_module_state refuse bad input with torch's exception types and
words (compared in-process): repeated keys across dicts (all listed), non-dict entries,
strict mode's missing and unexpected keys, models that differ."""

import pytest
import torch

import ember


def _outcome(lib, make_call):
    try:
        out = make_call(lib)
        return "ok", out.detach().numpy().round(6).tolist()
    except Exception as exc:  # noqa: BLE001 - the type and words are compared
        return type(exc).__name__, str(exc)


def _dicts(lib, kind):
    W, b = lib.ones(2, 3), lib.ones(2)
    return {
        "repeated_two": ({"weight": W, "bias": b}, {"bias": b, "weight": W}),
        "repeated_one": ({"bias": b}, {"weight": W}, {"bias": b}),
        "not_a_dict": ({"weight": W}, [("bias", b)]),
        "split_ok": [{"weight": W}, {"bias": b}],
        "one_dict": {"weight": W, "bias": b},
    }[kind]


@pytest.mark.parametrize("kind", ["repeated_two", "repeated_one", "not_a_dict", "split_ok",
                                  "one_dict"])
def test_functional_call_dict_sequences(kind):
    def call(lib):
        lib.manual_seed(0)
        m = lib.nn.Linear(3, 2)
        return lib.func.functional_call(m, _dicts(lib, kind), (lib.ones(1, 3),))

    assert _outcome(ember, call) == _outcome(torch, call)


@pytest.mark.parametrize("given", [{"weight"}, {"weight", "bias", "extra"}])
def test_functional_call_strict_keys(given):
    def call(lib):
        m = lib.nn.Linear(3, 2)
        params = {"weight": lib.zeros(2, 3), "bias": lib.zeros(2), "extra": lib.zeros(1)}
        return lib.func.functional_call(m, {k: params[k] for k in sorted(given)},
                                        (lib.ones(1, 3),), strict=True)

    assert _outcome(ember, call) == _outcome(torch, call)


@pytest.mark.parametrize("models", ["shapes", "keys", "empty"])
def test_stack_module_state_refusals(models):
    def call(lib):
        nn = lib.nn
        ms = {"shapes": [nn.Linear(3, 2), nn.Linear(4, 2)],
              "keys": [nn.Linear(3, 2), nn.Linear(3, 2, bias=False)],
              "empty": []}[models]
        return lib.func.stack_module_state(ms)[0]["weight"]

    got, want = _outcome(ember, call), _outcome(torch, call)
    assert got[0] == want[0] and got[1] == want[1]


@pytest.mark.parametrize("kind", ["float", "list", "none_bias", "int_attr", "missing_sub",
                                  "sub_not_module", "empty_name", "new_attr"])
def test_functional_call_names_and_values(kind):
    # PyTorch's accessor: the path first (a missing attribute, a non-module), then the value
    # (a tensor or None), then the name, then an existing attribute that is not a tensor
    def call(lib):
        lib.manual_seed(0)
        seq = lib.nn.Sequential(lib.nn.Linear(3, 2))
        given = {"float": {"0.weight": 1.0}, "list": {"0.weight": [1.0]},
                 "none_bias": {"0.bias": None}, "int_attr": {"0.in_features": lib.ones(1)},
                 "missing_sub": {"5.weight": lib.ones(2, 3)},
                 "sub_not_module": {"0.in_features.x": lib.ones(1)},
                 "empty_name": {"0.": lib.ones(1)},
                 "new_attr": {"0.extra": lib.ones(1), "0.bias": lib.zeros(2)}}[kind]
        return lib.func.functional_call(seq, given, (lib.ones(1, 3),))

    assert _outcome(ember, call) == _outcome(torch, call)


def test_functional_call_refusal_restores_the_module():
    for lib in (ember, torch):
        m = lib.nn.Linear(3, 2)
        w = m.weight
        with pytest.raises(TypeError, match="is not an instance of torch.Tensor"):
            lib.func.functional_call(m, {"weight": lib.zeros(2, 3), "bias": 2.0},
                                     (lib.ones(1, 3),))
        assert m.weight is w


@pytest.mark.parametrize("frozen", ["weight", "bias", "all", "buffer"])
def test_stack_module_state_requires_grad_flags(frozen):
    # a mix of frozen and trainable tensors under one name is refused; all frozen stack to
    # a plain tensor, all trainable to a new leaf
    def call(lib):
        nn = lib.nn
        ms = [nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2)) for _ in range(2)]
        if frozen == "all":
            for m in ms:
                m.requires_grad_(False)
        elif frozen == "buffer":
            ms[0][1].running_mean.requires_grad_()
        else:
            getattr(ms[0][0], frozen).requires_grad_(False)
        params, buffers = lib.func.stack_module_state(ms)
        flags = [(k, v.requires_grad, v.is_leaf) for k, v in {**params, **buffers}.items()]
        return lib.tensor([float(f[1]) for f in flags])

    assert _outcome(ember, call) == _outcome(torch, call)


def test_stack_module_state_wants_a_sized_sequence():
    for lib in (ember, torch):
        with pytest.raises(TypeError, match="has no len"):
            lib.func.stack_module_state(m for m in [lib.nn.Linear(2, 2)])
        assert list(lib.func.stack_module_state((lib.nn.Linear(2, 2),))[0]) == ["weight", "bias"]


@pytest.mark.parametrize("tie", [True, False])
def test_functional_call_strict_counts_tied_twins(tie):
    # with tie_weights a name given for one of two tied entries serves both before strict
    # mode looks for missing names; without it the twin is missing
    def call(lib):
        nn = lib.nn

        class Tied(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.Linear(3, 3, bias=False)
                self.b = nn.Linear(3, 3, bias=False)
                self.b.weight = self.a.weight

            def forward(self, x):
                return self.b(self.a(x))

        return lib.func.functional_call(Tied(), {"a.weight": lib.eye(3) * 2}, (lib.ones(1, 3),),
                                        tie_weights=tie, strict=True)

    assert _outcome(ember, call) == _outcome(torch, call)
