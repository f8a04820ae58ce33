"""Module hook plumbing (nn/modules/hooks.py): handles and full backward hooks, against torch."""

import pytest
import torch

import ember

from helpers import gradient_killer


@pytest.mark.parametrize("kind", ["forward", "forward_pre", "full_backward",
                                  "full_backward_pre"])
def test_module_hooks_return_plain_removable_handles(kind):
    """Every module hook hands back torch.utils.hooks.RemovableHandle itself (programs
    print its type), and removing it puts the module back on its no-hook path."""
    for lib in (torch, ember):
        m = lib.nn.Linear(2, 2)
        h = getattr(m, f"register_{kind}_hook")(lambda *a: None)
        assert type(h) is lib.utils.hooks.RemovableHandle
        assert type(h).__name__ == "RemovableHandle"
        h.remove()
        store = {"forward": m._forward_hooks, "forward_pre": m._forward_pre_hooks,
                 "full_backward": m._backward_hooks,
                 "full_backward_pre": m._backward_pre_hooks}[kind]
        assert len(store) == 0
    assert ember.nn.Linear(2, 2).__dict__["_hooked"] is False
    assert m.__dict__["_hooked"] is False


def test_removing_a_hook_with_kwargs_clears_its_side_tables_and_context_manager_form():
    for lib in (torch, ember):
        m = lib.nn.Linear(2, 2)
        h = m.register_forward_hook(lambda mod, a, kw, o: o * 2, with_kwargs=True,
                                    always_call=True)
        assert h.id in m._forward_hooks_with_kwargs and h.id in m._forward_hooks_always_called
        with h:
            pass
        assert not m._forward_hooks and not m._forward_hooks_with_kwargs
        assert not m._forward_hooks_always_called
        x = lib.ones(1, 2)
        assert lib.equal(m(x), lib.nn.functional.linear(x, m.weight, m.bias))


def test_global_hook_handles_are_removable_handles_and_restore_the_no_hook_path():
    m = ember.nn.Linear(2, 2)
    calls = []
    h = ember.nn.modules.module.register_module_forward_hook(lambda *a: calls.append(1))
    assert type(h) is ember.utils.hooks.RemovableHandle
    m(ember.ones(1, 2))
    h.remove()
    m(ember.ones(1, 2))
    assert calls == [1]
    assert "_hooked" not in ember.nn.Module.__dict__


def test_full_backward_hook_outputs_are_views_of_what_they_wrap():
    """PyTorch's identity node returns its inputs as-is: a module's output (and the input
    forward sees) is a view, the node named BackwardHookFunctionBackward."""
    seen = []
    for lib in (torch, ember):
        m = lib.nn.Linear(3, 3)
        inner = []
        m.register_forward_pre_hook(lambda mod, a, inner=inner: inner.append(a[0]))
        m.register_full_backward_hook(lambda *a: None)
        x = lib.ones(2, 3, requires_grad=True)
        out = m(x)
        seen.append((out._is_view(), type(out.grad_fn).__name__, inner[0] is x))
        out.sum().backward()
        assert x.grad.shape == (2, 3)
    assert seen[0] == seen[1]


def _legacy_record(lib, make, x_fn):
    """Shapes a legacy backward hook sees, and the warnings the call gives."""
    import warnings

    lib.manual_seed(0)
    m = make(lib)
    seen = []
    m.register_backward_hook(lambda mod, gi, go: seen.append(
        ([None if g is None else tuple(g.shape) for g in gi], [tuple(g.shape) for g in go])))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = m(x_fn(lib))
    (out[0] if isinstance(out, tuple) else out).sum().backward()
    return seen, [(w.category, str(w.message)) for w in caught], m._is_full_backward_hook


@pytest.mark.parametrize("case", ["linear2d", "linear3d", "conv", "relu", "seq", "lstm"])
def test_legacy_backward_hook_sees_the_output_nodes_gradients(case):
    """register_backward_hook is a post-hook of the node that made the output: for a 2-d
    Linear that is addmm's (bias, input, weight.T) gradients, not the module's; PyTorch's
    FutureWarnings say when the two differ."""
    make, x_fn = {
        "linear2d": (lambda L: L.nn.Linear(4, 3), lambda L: L.randn(2, 4, requires_grad=True)),
        "linear3d": (lambda L: L.nn.Linear(4, 3), lambda L: L.randn(2, 5, 4)),
        "conv": (lambda L: L.nn.Conv2d(1, 2, 3), lambda L: L.randn(1, 1, 5, 5,
                                                                   requires_grad=True)),
        "relu": (lambda L: L.nn.ReLU(), lambda L: L.randn(3, requires_grad=True) * 1),
        "seq": (lambda L: L.nn.Sequential(L.nn.Linear(4, 3), L.nn.Tanh()),
                lambda L: L.randn(2, 4, requires_grad=True)),
        "lstm": (lambda L: L.nn.LSTM(4, 3, batch_first=True), lambda L: L.randn(2, 2, 4)),
    }[case]
    assert _legacy_record(torch, make, x_fn) == _legacy_record(ember, make, x_fn)


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_legacy_hook_can_replace_the_nodes_grad_inputs_and_kinds_do_not_mix():
    for lib in (torch, ember):
        m = lib.nn.Linear(3, 2)
        x = lib.ones(1, 3, requires_grad=True)
        m.register_backward_hook(lambda mod, gi, go: (gi[0], gi[1] * 0, gi[2]))
        m(x).sum().backward()
        assert x.grad.abs().sum().item() == 0 and m.bias.grad.tolist() == [1.0, 1.0]
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks"):
            m.register_full_backward_hook(lambda *a: None)
        m2 = lib.nn.Linear(3, 2)
        m2.register_full_backward_hook(lambda *a: None)
        with pytest.raises(RuntimeError, match="Please use only one of them"):
            m2.register_backward_hook(lambda *a: None)


def _ignored_input_record(lib, case):
    """A module's full backward hook when a gradient never reaches one of its inputs (the
    module ignores it) or none reaches its output (a custom Function passes None on)."""
    Kill = gradient_killer(lib)

    class Ignores(lib.nn.Module):
        def forward(self, x, y):
            return x * 2

    def show(gs):
        return [None if g is None else g.tolist() for g in gs]

    log = []
    x = lib.ones(2, requires_grad=True)
    y = lib.ones(2, requires_grad=True)
    m = Ignores() if case == "ignored_input" else lib.nn.Linear(2, 2)
    m.register_full_backward_pre_hook(lambda mod, gout: log.append(("pre", show(gout))))
    m.register_full_backward_hook(lambda mod, gin, gout: log.append((show(gin), show(gout))))
    if case == "ignored_input":
        m(x, y).sum().backward()
    else:
        Kill.apply(m(x)).sum().backward()
    log.append(show([x.grad, y.grad]))
    if case != "ignored_input":
        log.append(m.weight.grad is None)
    return log


@pytest.mark.parametrize("case", ["ignored_input", "no_output_gradient"])
def test_full_backward_hook_materializes_input_grads_as_torch(case):
    # torch's identity node before the module materializes zeros for an input gradient
    # that never arrived (grad_input and .grad get zeros); the node after it passes on
    # None as it came (the weight's .grad stays None)
    assert _ignored_input_record(ember, case) == _ignored_input_record(torch, case)
