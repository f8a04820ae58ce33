"""The `__torch_function__` protocol (ember/overrides.py, ember/_torch_function.py): each
script runs as a fresh program under torch 2.13 and under ember (`python -m ember.run`),
and prints the same. A fresh process each, because the protocol switches on for good once
a program defines a Tensor subclass or a tensor-like type (tests/fresh_process.py forks
them from a server, so the start is paid once)."""

from __future__ import annotations

import textwrap

import pytest

from fresh_process import with_server

SCRIPTS = {
    "priority_subclass_before_base_then_left_to_right": """
        class A(torch.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                print("A sees", func.__name__, [t.__name__ for t in types])
                return NotImplemented if func.__name__ == "mul" else "A"
        class B(A):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                print("B sees", func.__name__, [t.__name__ for t in types])
                return NotImplemented
        class C:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                print("C sees", func.__name__, [t.__name__ for t in types])
                return "C"
        a = torch.ones(2).as_subclass(A)
        b = torch.ones(2).as_subclass(B)
        print(torch.add(a, b))
        print(torch.mul(a, C()))
        print(torch.cat([C(), b]))
        print(torch.stack((a, a)))
    """,
    "every_handler_returning_not_implemented_is_a_type_error": """
        class N(torch.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return NotImplemented
        class L:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return NotImplemented
        n = torch.ones(1).as_subclass(N)
        for call in (lambda: torch.exp(L()), lambda: torch.add(n, L()), lambda: n.exp(),
                     lambda: torch.linalg.norm(L())):
            try:
                call()
            except TypeError as e:
                print(str(e).replace(" at 0x", "@").split("@")[0])
        def mine(x):
            return handle_torch_function(mine, (x,), x)
        try:
            mine(L())
        except TypeError as e:
            print(e)
    """,
    "a_mode_sees_every_call_once_and_not_its_own": """
        class Log(TorchFunctionMode):
            def __init__(self, tag):
                super().__init__()
                self.tag = tag
            def __torch_function__(self, func, types, args=(), kwargs=None):
                print(self.tag, func.__name__)
                return func(*args, **(kwargs or {}))
        with Log("outer"):
            with Log("inner"):
                x = torch.zeros(2) + torch.full((2,), 3.0)
            y = x.sum()
        print(y)
        class Refuse(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return NotImplemented
        one = torch.ones(1)
        try:
            with Refuse():
                torch.exp(one)
        except TypeError as e:
            print(str(e).split(";")[0])
        class Sub(torch.Tensor):
            pass
        sub = one.as_subclass(Sub)
        with Log("mode"):
            print(type(torch.exp(sub)).__name__, type(sub.exp()).__name__)
    """,
    "properties_are_handed_over_as_get_and_set": """
        class P(torch.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                print(func.__name__, resolve_name(func))
                return super().__torch_function__(func, types, args, kwargs)
        p = torch.ones(2, 3).as_subclass(P)
        print(p.shape, type(p.T).__name__, p.dtype)
        p.requires_grad = True
        print(p.requires_grad, type(p.grad))
    """,
    "opting_out_keeps_results_plain": """
        class Off(torch.Tensor):
            __torch_function__ = torch._C._disabled_torch_function_impl
        class MyParam(torch.nn.Parameter):
            pass
        o = torch.ones(2).as_subclass(Off)
        m = MyParam(torch.ones(2))
        print(type(o + 1).__name__, type(o.sum()).__name__, type(m * 2).__name__)
        print(has_torch_function((o,)), has_torch_function((m,)), is_tensor_like(o))
        class Tagged(torch.Tensor):
            pass
        t = torch.arange(4.0).as_subclass(Tagged)
        with torch._C.DisableTorchFunctionSubclass():
            print(type(t + 1).__name__, torch._C._is_torch_function_enabled())
        print(type(t + 1).__name__, torch._C._is_torch_function_enabled())
    """,
    "a_plain_tensor_s_method_with_a_subclass_argument_is_handed_over": """
        class S(torch.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                print("S sees", func.__name__, [type(a).__name__ for a in args])
                return super().__torch_function__(func, types, args, kwargs)
        s = torch.ones(2).as_subclass(S)
        p = torch.ones(2)
        for out in (p + s, p.add(s), p.mul(s), torch.add(p, s), p.expand_as(s), p * 2):
            print(type(out).__name__)
    """,
    "sequences_and_named_tuples_of_results_convert": """
        class T(torch.Tensor):
            pass
        t = torch.tensor([[3.0, 1.0], [2.0, 4.0]]).as_subclass(T)
        for out in (t.split(1), torch.chunk(t, 2, 1), t.sort(), t.max(0), torch.unbind(t),
                    t.tolist(), t.unique(return_counts=True), t.__reduce_ex__(2)[0]):
            print(type(out).__name__, [type(o).__name__ for o in out]
                  if isinstance(out, (tuple, list)) else "")
        print(type(t.grad).__name__, type(t.data).__name__, type(t.detach()).__name__)
    """,
    "overridable_and_ignored_functions": """
        print(torch.add in get_overridable_functions()[torch])
        print(torch.Tensor.add in get_overridable_functions()[torch.Tensor])
        print(torch.nn.functional.relu in get_overridable_functions()[torch.nn.functional])
        print(torch.zeros in get_ignored_functions(), torch.add in get_ignored_functions())
        print(is_tensor_method_or_property(torch.Tensor.add),
              is_tensor_method_or_property(torch.add))
        print(resolve_name(torch.add), resolve_name(torch.Tensor.add))
        print(resolve_name(torch.nn.functional.relu), resolve_name(torch.Tensor.shape.__get__))
    """,
    "a_tensor_like_defined_before_any_subclass_is_seen": """
        class S:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return f"{func.__name__} of S"
        for f in (torch.exp, torch.mean, torch.nn.functional.relu, torch.linalg.norm,
                  torch.nn.functional.softmax):
            print(f(S()))
        print(torch.add(S(), torch.ones(1)), torch.cat([torch.ones(1), S()]))
        print(torch.exp(torch.zeros(1)))
    """,
}


def _run(lib: str, code: str, tmp_path) -> str:
    head = ("import torch\nfrom torch.overrides import (TorchFunctionMode, "
            "get_ignored_functions, get_overridable_functions, handle_torch_function, "
            "has_torch_function, is_tensor_like, is_tensor_method_or_property, resolve_name)\n")
    result = with_server(lib).run_code(head + textwrap.dedent(code), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_prints_what_torch_prints(name, tmp_path):
    ours = _run("ember.run", SCRIPTS[name], tmp_path)
    theirs = _run("torch", SCRIPTS[name], tmp_path)
    assert ours == theirs


def test_nothing_is_wrapped_until_something_could_override(tmp_path):
    code = """
        import ember, ember.nn.functional as F
        wrapped = lambda: [hasattr(f, "_torch_function_wrapped")
                           for f in (ember.Tensor.add, ember.Tensor.__add__, ember.cat, F.relu)]
        print(wrapped(), ember.Tensor.__dict__["shape"].fget.__name__)
        class Plain(ember.nn.Module):
            pass
        print(wrapped())
        class Tagged(ember.Tensor):
            pass
        print(wrapped(), ember.Tensor.__dict__["shape"].fget.__name__)
    """
    out = with_server("ember").run_code(textwrap.dedent(code), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "[False, False, False, False] shape", "[False, False, False, False]",
        "[True, True, True, True] fget"]


def test_the_protocol_comes_off_again_and_back_on(tmp_path):
    code = """
        import builtins, ember, ember._torch_function as tf
        add, shape, watch = ember.add, ember.Tensor.__dict__["shape"], builtins.__build_class__
        class A(ember.Tensor):
            pass
        on = (ember.add is not add, type(ember.ones(1).as_subclass(A) + 1).__name__,
              builtins.__build_class__ is watch)
        tf.deactivate()
        off = (ember.add is add, ember.Tensor.__dict__["shape"] is shape,
               "__add__" in vars(ember.Tensor), type(ember.ones(1).as_subclass(A) + 1).__name__)
        class L:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return "L"
        print(on, off, ember.exp(L()))
    """
    out = with_server("ember").run_code(textwrap.dedent(code), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "(True, 'A', False) (True, True, True, 'Tensor') L"


def test_warnings_name_the_callers_line_with_the_protocol_on(tmp_path):
    """A warning raised inside an op names the line that called it, also when the call went
    through the protocol's wrapper, which adds a frame (all three named _torch_function.py
    while ember's warnings counted a fixed number of frames)."""
    code = """
        import warnings, torch
        class Tagged(torch.Tensor):
            pass
        x = torch.ones(3)
        warnings.simplefilter("always")
        with warnings.catch_warnings(record=True) as caught:
            torch.tensor(x)
            x.T
            x.storage()
        print([(w.lineno, w.category.__name__) for w in caught])
    """
    outs = [_run(lib, code, tmp_path) for lib in ("ember.run", "torch")]
    assert outs[0] == outs[1]
