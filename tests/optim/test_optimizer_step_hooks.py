"""Step hooks see what PyTorch's see: the whole call (`self` first), rewrites of it, and no
hooks at all on a wrapper optimizer that skipped `Optimizer.__init__`."""

import pytest
import torch

import ember


class _Plain:
    """A tiny hand-written optimizer, the same source under both libraries."""

    @staticmethod
    def make(lib):
        class Halve(lib.optim.Optimizer):
            def __init__(self, params):
                super().__init__(params, {"lr": 0.5})

            @lib.no_grad()
            def step(self, closure=None):
                for g in self.param_groups:
                    for p in g["params"]:
                        p.mul_(g["lr"])
                return None if closure is None else closure()

        return Halve


def _calls(lib):
    w = lib.ones(2, requires_grad=True)
    opt = _Plain.make(lib)([w])
    seen = []

    def pre(o, args, kwargs):
        seen.append(("pre", len(args), args[0] is o, sorted(kwargs)))
        return args, {"closure": lambda: 7}

    opt.register_step_pre_hook(pre)
    opt.register_step_post_hook(lambda o, a, k: seen.append(("post", len(a), sorted(k))))
    seen.append(("result", opt.step()))
    seen.append(("w", w.tolist()))
    return seen


def test_hooks_receive_self_first_and_may_rewrite_the_call_like_torch():
    assert _calls(ember) == _calls(torch)


def test_a_hook_returning_something_else_raises_runtime_error_like_torch():
    def raised(lib):
        opt = _Plain.make(lib)([lib.ones(1, requires_grad=True)])
        opt.register_step_pre_hook(lambda o, a, k: 3)
        with pytest.raises(RuntimeError) as e:
            opt.step()
        return str(e.value).split(" must return ")[1]

    assert raised(ember) == raised(torch)


def test_wrapper_that_skips_optimizer_init_steps_like_torch():
    def run(lib):
        w = lib.ones(2, requires_grad=True)
        base = lib.optim.SGD([w], lr=0.25)

        class Wrapper(lib.optim.Optimizer):
            def __init__(self, base):  # no super().__init__, as timm's Lookahead
                self.base = base
                self.param_groups = base.param_groups
                self.state = base.state
                self.defaults = base.defaults

            def step(self, closure=None):
                return self.base.step(closure)

        wrapped = Wrapper(base)
        w.grad = lib.ones(2)
        wrapped.step()
        return w.tolist()

    assert run(ember) == run(torch) == [0.75, 0.75]


def test_add_param_group_names_the_class_of_a_non_dict_like_torch():
    def message(lib):
        opt = lib.optim.SGD([lib.ones(1, requires_grad=True)], lr=0.1)
        with pytest.raises(TypeError) as e:
            opt.add_param_group([lib.zeros(1, requires_grad=True)])
        return str(e.value)

    assert message(ember) == message(torch)


def _builtin_hook_message(lib, name):
    """The refusal of a pre-hook's bad return, for a built-in algorithm."""
    opt = getattr(lib.optim, name)([lib.ones(1, requires_grad=True)], lr=0.1)
    opt.register_step_pre_hook(lambda o, a, k: 5)
    with pytest.raises(RuntimeError) as e:
        opt.step()
    head, tail = str(e.value).split(" at 0x")
    return head, tail.split(" ", 1)[1]  # (the function's address differs between runs)


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop"])
def test_a_bad_hook_on_a_builtin_names_its_step_like_torch(name):
    assert _builtin_hook_message(ember, name) == _builtin_hook_message(torch, name)
    assert _builtin_hook_message(ember, name)[0] == f"<function {name}.step"


def _bare_step(lib, make):
    """What `step` does on an optimizer without an algorithm (bare base class or a
    subclass that defines no step), with and without gradients."""
    w = lib.ones(2, requires_grad=True)
    opt = make(lib)([w])
    out = []
    for grad in (None, lib.ones(2)):
        w.grad = grad
        with pytest.raises(NotImplementedError) as e:
            opt.step()
        out.append(str(e.value))
    return out, w.tolist()


def _bare(lib):
    return lambda params: lib.optim.Optimizer(params, {"lr": 0.1})


def _no_step_subclass(lib):
    class NoStep(lib.optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": 0.1})

    return NoStep


@pytest.mark.parametrize("make", [_bare, _no_step_subclass])
def test_step_without_an_algorithm_raises_not_implemented_like_torch(make):
    assert _bare_step(ember, make) == _bare_step(torch, make) == (["", ""], [1.0, 1.0])


def _step_names(lib):
    names = ["SGD", "Adam", "AdamW", "Adagrad", "RMSprop", "Rprop", "LBFGS", "SparseAdam"]
    return [getattr(lib.optim, n).step.__qualname__ for n in names]


def test_builtin_steps_carry_their_algorithm_names_like_torch():
    # (AdamW inherits Adam's step in both libraries)
    assert _step_names(ember) == _step_names(torch)
    assert ember.optim.Optimizer.step.__qualname__ == "Optimizer.step"
