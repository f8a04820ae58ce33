"""`torch.compile`'s argument checks (ember/_dynamo/backends.py) against torch 2.13's, in
process: the same exception type and message for each mistake, in the same order, and
the same accepted calls."""

from __future__ import annotations

import pytest
import torch

import ember


def _fn(x):
    return x + 1


# (description, keyword arguments, model): each either raises in both or in neither
CASES = [
    ("unknown mode", {"mode": "fastest"}, _fn),
    ("lite mode", {"mode": "lite"}, _fn),
    ("empty mode", {"mode": ""}, _fn),
    ("unknown mode, eager backend", {"mode": "fastest", "backend": "eager"}, _fn),
    ("unknown backend", {"backend": "not_a_backend"}, _fn),
    ("backend in capitals", {"backend": "Eager"}, _fn),
    ("debug backends", {"backend": "aot_eager_decomp_partition"}, _fn),
    ("backend None", {"backend": None}, _fn),
    ("mode and options", {"mode": "max-autotune", "options": {"max_autotune": True}}, _fn),
    ("mode and empty options", {"mode": "default", "options": {}}, _fn),
    ("unknown option", {"options": {"max_autotuning": True}}, _fn),
    ("option with a dash", {"options": {"max-autotune": True}}, _fn),
    ("option of the wrong type", {"options": {"max_autotune": "yes"}}, _fn),
    ("int for a bool option", {"options": {"max_autotune": 1}}, _fn),
    ("bool for an int option", {"options": {"cpp.threads": True}}, _fn),
    ("option of several types", {"options": {"cpp.simdlen": "4"}}, _fn),
    ("unknown option, eager backend", {"options": {"nosuch": 1}, "backend": "eager"}, _fn),
    ("dynamic not a bool", {"dynamic": "auto"}, _fn),
    ("dynamic an int", {"dynamic": 1}, _fn),
    ("dynamic with disable", {"dynamic": "auto", "disable": True}, _fn),
    ("not callable", {}, 42),
    ("not callable, disabled", {"disable": True}, "abc"),
    ("not callable and bad dynamic", {"dynamic": "x"}, 42),
    ("not callable and bad mode", {"mode": "zz"}, 42),
    ("disabled with a bad mode", {"mode": "zz", "disable": True}, _fn),
]


def _outcome(lib, kwargs, model):
    try:
        lib.compile(model, **kwargs)
    except Exception as e:  # noqa: BLE001  (the type and text are what is compared)
        return type(e).__name__, str(e).split(", known options are")[0]
    return None


@pytest.mark.parametrize("what,kwargs,model", CASES, ids=[c[0] for c in CASES])
def test_compile_arguments_raise_what_torch_raises(what, kwargs, model):
    torch._dynamo.reset()
    assert _outcome(ember, kwargs, model) == _outcome(torch, kwargs, model)


def test_unknown_option_lists_the_known_ones():
    # NOTE: torch lists its 600-odd inductor settings; ember the ones it knows (it
    # compiles the same way whatever they say), sorted
    with pytest.raises(RuntimeError, match=r"^Unexpected optimization option nosuch, known "
                                           r"options are \[.*'max_autotune'"):
        ember.compile(_fn, options={"nosuch": True})


def test_decorator_checks_when_applied():
    deco = ember.compile(mode="fastest")  # (torch checks only once there is a model)
    with pytest.raises(RuntimeError, match="Unrecognized mode=fastest"):
        deco(_fn)
    with pytest.raises(RuntimeError, match="^Model can't be None$"):
        ember.compile()(None)
    with pytest.raises(RuntimeError, match="^Model can't be None$"):
        torch.compile()(None)


def test_invalid_backend_is_a_dynamo_exception():
    with pytest.raises(ember._dynamo.exc.InvalidBackend) as info:
        ember.nn.Linear(2, 2).compile(backend="zz")
    assert isinstance(info.value, ember._dynamo.exc.TorchDynamoException)
    assert isinstance(info.value, RuntimeError)
    assert [c.__name__ for c in torch._dynamo.exc.InvalidBackend.__mro__[:3]] == \
        [c.__name__ for c in ember._dynamo.exc.InvalidBackend.__mro__[:3]]


def test_list_backends():
    assert ember._dynamo.list_backends() == torch._dynamo.list_backends()
    assert ember.compiler.list_backends() == torch.compiler.list_backends()
    # every name ember lists is one torch lists (torch also has testing-only ones)
    everything = ember._dynamo.list_backends(exclude_tags=None)
    assert set(everything) <= set(torch._dynamo.list_backends(exclude_tags=None))
    assert {"eager", "aot_eager", "inductor"} <= set(everything)


def test_every_listed_backend_runs_with_eagers_result():
    x = ember.arange(6.0).reshape(2, 3)
    for name in ember._dynamo.list_backends(exclude_tags=()):
        f = ember.compile(lambda t: (t * 2.0 + 1.0).relu().sum(dim=0), backend=name)
        assert f(x).tolist() == [8.0, 12.0, 16.0], name
