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
