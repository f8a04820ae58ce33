"""Inference tensors against torch: what may be read, written and flagged outside the mode."""

import pytest
import torch

import ember


def _outcome(call, L):
    """(exception type, message) of `call(L)`, or ("ok", its value)."""
    try:
        value = call(L)
    except Exception as exc:  # noqa: BLE001 - compared with torch's below
        return type(exc), str(exc)
    return "ok", value


def _inference(L):
    with L.inference_mode():
        return L.ones(3)


def _set_requires_grad(t):
    t.requires_grad = True


def _in_mode(L, fn):
    with L.inference_mode():
        return fn(L.ones(3))


CASES = {
    "version_outside": lambda L: _inference(L)._version,
    "version_inside": lambda L: _in_mode(L, lambda t: t._version),
    "version_of_view": lambda L: _inference(L).view(3)._version,
    "is_inference": lambda L: _inference(L).is_inference(),
    "add_outside": lambda L: _inference(L).add_(1),
    "mul_outside": lambda L: _inference(L).mul_(2),
    "setitem_outside": lambda L: _inference(L).__setitem__(0, 5.0),
    "zero_outside": lambda L: _inference(L).zero_(),
    "copy_outside": lambda L: _inference(L).copy_(L.zeros(3)),
    "resize_outside": lambda L: _inference(L).resize_(4),
    "view_add_outside": lambda L: _inference(L).view(3).add_(1),
    "add_under_no_grad": lambda L: _under_no_grad(L),
    "add_inside": lambda L: _in_mode(L, lambda t: t.add_(1).is_inference()),
    "requires_grad_inside": lambda L: _in_mode(L, lambda t: t.requires_grad_().requires_grad),
    "requires_grad_outside": lambda L: _inference(L).requires_grad_(),
    "requires_grad_setter_outside": lambda L: _set_requires_grad(_inference(L)),
    "requires_grad_false_outside": lambda L: _inference(L).requires_grad_(False).requires_grad,
    "clone_is_normal": lambda L: _inference(L).clone().add_(1).is_inference(),
    "normal_version_inside": lambda L: _normal_written_inside(L),
}


def _under_no_grad(L):
    t = _inference(L)
    with L.no_grad():
        return t.add_(1)


def _normal_written_inside(L):
    t = L.ones(2)
    with L.inference_mode():
        t.add_(1)
    return t._version, t.is_inference()


@pytest.mark.parametrize("name", list(CASES))
def test_inference_tensor_rules_like_torch(name):
    e, t = _outcome(CASES[name], ember), _outcome(CASES[name], torch)
    if t[0] == "ok":
        assert e[0] == "ok", e
        if not isinstance(t[1], torch.Tensor):
            assert e[1] == t[1]
    else:
        assert e == t


def test_inference_tensor_version_raises_runtime_error():
    with ember.inference_mode():
        t = ember.ones(2)
    with pytest.raises(RuntimeError, match="Inference tensors do not track version counter"):
        _ = t._version


# --- ops on inference tensors outside inference mode -------------------------------------
# PyTorch's inference tensors carry no autograd dispatch key: an op whose inputs are all
# inference tensors records nothing even when one requires grad (made so inside the mode),
# unless a number operand is passed as a (normal, wrapped) tensor; a copy (clone, cast,
# contiguous) is its composite's `copy_` into a new tensor (CopyBackwards, version 1).


def _grad_leaf(L):
    with L.inference_mode():
        return L.tensor([1.0, -2.0, 3.0], requires_grad=True)


OPS_OUTSIDE = {
    "sum": lambda L, a: a.sum(), "flip": lambda L, a: a.flip(0), "neg": lambda L, a: -a,
    "pow": lambda L, a: a**2, "a+a": lambda L, a: a + a, "relu": lambda L, a: a.relu(),
    "mm": lambda L, a: a.view(1, 3) @ a.view(3, 1), "cat": lambda L, a: L.cat([a, a]),
    "clamp": lambda L, a: a.clamp(0), "view": lambda L, a: a.view(3, 1),
    "select": lambda L, a: a[0], "detach": lambda L, a: a.detach(),
    "a+1": lambda L, a: a + 1, "a-1": lambda L, a: a - 1, "a*2": lambda L, a: a * 2,
    "2*a": lambda L, a: 2 * a, "a/2": lambda L, a: a / 2,
    "add alpha": lambda L, a: a.add(1, alpha=2),
    "div floor": lambda L, a: a.div(2, rounding_mode="floor"),
    "a*normal": lambda L, a: a * L.ones(3),  # (mul saves the inference tensor)
    "a+normal": lambda L, a: a + L.ones(3),
    "clone": lambda L, a: a.clone(), "clone contiguous": lambda L, a: a.clone(
        memory_format=L.contiguous_format),
    "double": lambda L, a: a.double(), "to float64": lambda L, a: a.to(L.float64),
    "type": lambda L, a: a.type(L.float64), "float (same dtype)": lambda L, a: a.float(),
    "contiguous (already)": lambda L, a: a.contiguous(),
    "copy into normal": lambda L, a: L.zeros(3).copy_(a),
}


def _describe(t, version: bool = True):
    """What an op's result is: graph, inference flag, version (PyTorch's composites leave
    their in-place writes' counts on results, `sum` 1, `mean` 2: only copies are compared),
    values."""
    fn = t.grad_fn
    return (t.requires_grad, type(fn).__name__ if fn is not None else None, t.is_inference(),
            None if t.is_inference() or not version else t._version, t.tolist())


@pytest.mark.parametrize("name", list(OPS_OUTSIDE))
def test_ops_on_inference_tensors_outside_the_mode(name):
    def run(L):
        return _describe(OPS_OUTSIDE[name](L, _grad_leaf(L)), version="copy" in name)

    assert _outcome(run, ember) == _outcome(run, torch)


COPIES = {
    "clone": lambda t: t.clone(), "clone of a transpose": lambda t: t.view(3, 1).t().clone(),
    "contiguous of a transpose": lambda t: t.view(1, 3).expand(2, 3).t().contiguous(),
    "double": lambda t: t.double(), "long": lambda t: t.long(),
    "to bfloat16": lambda t: t.to(torch.bfloat16 if isinstance(t, torch.Tensor)
                                  else ember.bfloat16),
}


@pytest.mark.parametrize("grad", [False, True], ids=["plain", "requires-grad"])
@pytest.mark.parametrize("name", list(COPIES))
def test_copies_of_inference_tensors_are_normal_tensors(name, grad):
    def run(L):
        with L.inference_mode():
            t = L.tensor([1.0, -2.0, 3.0], requires_grad=grad)
        c = COPIES[name](t)
        c.add_(1) if not c.requires_grad else None  # a normal tensor: writable
        return (_describe(c), c.stride(), c.dtype is not None)

    assert _outcome(run, ember) == _outcome(run, torch)


PARAMETERS = {
    "made inside": lambda L: _in_mode(L, lambda t: L.nn.Parameter(t)),
    "module made inside": lambda L: _in_mode(L, lambda t: L.nn.Linear(2, 2).weight),
    "wrapped outside, no grad": lambda L: L.nn.Parameter(_inference(L), requires_grad=False),
    "wrapped outside": lambda L: L.nn.Parameter(_inference(L)),
    "data": lambda L: _inference(L).data,
}


@pytest.mark.parametrize("name", list(PARAMETERS))
def test_parameters_of_inference_tensors(name):
    def run(L):
        p = PARAMETERS[name](L)
        return type(p).__name__, p.is_inference(), p.requires_grad

    assert _outcome(run, ember) == _outcome(run, torch)


def _modes_seen(L, outer, inner_mode):
    """(grad enabled, inference enabled, result requires grad) inside inference_mode(inner_mode)
    entered under `outer`, then grad mode after it."""
    x = L.ones(2, requires_grad=True)
    with outer(L):
        with L.inference_mode(inner_mode):
            seen = (L.is_grad_enabled(), L.is_inference_mode_enabled(), (x * 2).requires_grad)
        return seen + (L.is_grad_enabled(),)


OUTER_MODES = {"none": lambda L: L.enable_grad(), "no_grad": lambda L: L.no_grad(),
               "inference": lambda L: L.inference_mode()}


@pytest.mark.parametrize("inner_mode", [True, False])
@pytest.mark.parametrize("outer", OUTER_MODES.values(), ids=OUTER_MODES.keys())
def test_inference_mode_sets_grad_mode_to_its_opposite(outer, inner_mode):
    # inference_mode(False) turns gradients on, even inside no_grad or inference_mode
    assert _modes_seen(ember, outer, inner_mode) == _modes_seen(torch, outer, inner_mode)


@pytest.mark.parametrize("bad", [1, 0, None, 0.0, "no"])
def test_set_grad_enabled_wants_a_bool_and_keeps_the_mode(bad):
    from helpers import same_message

    same_message(lambda L: L.set_grad_enabled(bad), TypeError)
    assert ember.is_grad_enabled()


def test_set_grad_enabled_repr_names_torchs_class():
    import torch

    from ember import _names

    for mode in (False, True):
        want = repr(torch.set_grad_enabled(mode))
        got = repr(ember.set_grad_enabled(mode))
        assert got == want.replace("torch.", f"{_names.prefix}.", 1)


def _grad_modes_in_inference(L, inner):
    """What the grad modes report, and whether ops record, inside inference_mode."""
    x = L.ones(2, requires_grad=True)
    seen = []
    with L.inference_mode():
        with inner(L):
            a = L.ones(2, requires_grad=True)
            seen.append((L.is_grad_enabled(), (a * 2).requires_grad, (x * 2).requires_grad,
                         (a * 2).is_inference()))
            with L.no_grad():
                seen.append(L.is_grad_enabled())
            seen.append(L.is_grad_enabled())
        seen.append((L.is_grad_enabled(), L.is_inference_mode_enabled()))
    seen.append((L.is_grad_enabled(), (x * 2).requires_grad))
    return seen


INNER_MODES = {"enable_grad": lambda L: L.enable_grad(), "no_grad": lambda L: L.no_grad(),
               "set_true": lambda L: L.set_grad_enabled(True),
               "set_false": lambda L: L.set_grad_enabled(False)}


@pytest.mark.parametrize("inner", INNER_MODES.values(), ids=INNER_MODES.keys())
def test_grad_modes_inside_inference_mode_switch_the_flag_not_the_recording(inner):
    # enable_grad inside inference_mode reports grad mode on, yet nothing records: the
    # results are inference tensors without requires_grad, as PyTorch's InferenceMode
    assert _grad_modes_in_inference(ember, inner) == _grad_modes_in_inference(torch, inner)


def test_enable_grad_decorator_inside_inference_mode():
    def run(L):
        @L.enable_grad()
        def f(x):
            return L.is_grad_enabled(), (x * 2).requires_grad

        with L.inference_mode():
            return f(L.ones(2, requires_grad=True))

    assert run(ember) == run(torch) == (True, False)
