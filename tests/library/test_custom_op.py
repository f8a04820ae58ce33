"""ember.library.custom_op against torch.library.custom_op: the call, the schema read from
type hints, register_fake / register_autograd / register_kernel / register_vmap, the
errors, and how the op meets autograd, `func.grad` and `vmap`."""

import itertools
import re
import warnings

import numpy as np
import pytest
import torch
from tests.helpers import assert_same, numeric_grad, to_ember

import ember

_ids = itertools.count()


def same_message(call, kind: type = RuntimeError) -> str:
    """`call(L)` raises `kind` in both with the same message, each op's own namespace read
    as NS, and PyTorch's pybind11 detail line and kernel module path left out."""
    msgs = []
    for L in (ember, torch):
        with pytest.raises(kind) as info:
            call(L)
        text = re.sub(r"gaps_co_[et]\d+", "NS", str(info.value))
        text = re.sub(r" \(with implementation in <module [^>]*>\)", "", text)
        msgs.append(text.split("\nCast error details")[0])
    assert msgs[0] == msgs[1], msgs
    return msgs[0]


def _ns(L) -> str:
    """A namespace of its own per op (both registries are global to the process)."""
    return f"gaps_co_{'t' if L is torch else 'e'}{next(_ids)}"


def _sin_op(L, **kw):
    @L.library.custom_op(_ns(L) + "::npsin", mutates_args=(), **kw)
    def npsin(x: L.Tensor) -> L.Tensor:
        # a kernel outside the framework (NumPy), the reason custom ops exist
        return L.from_numpy(np.sin(x.numpy()))

    return npsin


def _with_autograd(op, L):
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.cos()

    op.register_autograd(backward, setup_context=setup_context)
    return op


X = np.array([[0.3, -1.2, 2.0], [0.5, 0.25, -0.7]], dtype=np.float32)


@pytest.mark.parametrize("L", [ember, torch])
def test_op_object_names_and_schema(L):
    op = _sin_op(L)
    ns = op._namespace
    assert repr(op) == f"<CustomOpDef({ns}::npsin)>"
    assert op._schema == "(Tensor x) -> Tensor"
    packet = getattr(L.ops, ns).npsin
    assert str(packet) == f"{ns}.npsin" and str(packet.default) == f"{ns}.npsin.default"
    assert repr(packet.default) == f"<OpOverload(op='{ns}.npsin', overload='default')>"
    assert str(packet.default._schema) == f"{ns}::npsin(Tensor x) -> Tensor"
    assert packet.default.name() == f"{ns}::npsin" and packet.overloads() == ["default"]


def test_call_matches_torch_through_every_entry_point():
    ops = {L: _sin_op(L) for L in (ember, torch)}
    expected = ops[torch](torch.tensor(X))
    for call in (lambda op, L: op, lambda op, L: getattr(L.ops, op._namespace).npsin,
                 lambda op, L: getattr(L.ops, op._namespace).npsin.default):
        # bitwise: both run the same NumPy sin on the same float32 array
        assert_same(call(ops[ember], ember)(ember.tensor(X)), expected, 0, 0)


def test_backward_without_formula_fails_at_backward_in_torch_words():
    msg = same_message(lambda L: _sin_op(L)(L.tensor(X, requires_grad=True)).sum().backward())
    assert "no autograd formula was registered" in msg


@pytest.mark.parametrize("L", [ember, torch])
def test_output_records_a_node_only_when_grad_is_wanted(L):
    op = _sin_op(L)
    y = op(L.tensor(X, requires_grad=True))
    assert y.requires_grad and type(y.grad_fn).__name__.startswith(
        f"GeneratedBackwardFor_{op._namespace}_npsin_default")
    with L.no_grad():
        assert not op(L.tensor(X, requires_grad=True)).requires_grad
    assert op(L.tensor(X)).grad_fn is None


def test_register_autograd_gradient_matches_torch_and_finite_differences():
    grads = {}
    for L in (ember, torch):
        op = _with_autograd(_sin_op(L), L)
        x = L.tensor(X, requires_grad=True)
        (op(x) * L.tensor(X)).sum().backward()
        grads[L] = x.grad
    # cos(x) * X: the same float32 NumPy-free ops in both, one rounding each
    assert_same(grads[ember], grads[torch], 1e-6, 1e-7)
    op64 = _with_autograd(_sin_op(ember), ember)
    x = ember.tensor(X.astype(np.float64), requires_grad=True)
    op64(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), numeric_grad(op64, [X], 0), rtol=1e-6)


def test_keyword_only_inputs_and_needs_input_grad():
    seen = {}
    for L in (ember, torch):
        @L.library.custom_op(_ns(L) + "::mymul", mutates_args=())
        def mymul(x: L.Tensor, y: L.Tensor, *, scale: float = 1.0) -> L.Tensor:
            return x * y * scale

        def setup_context(ctx, inputs, keyword_only_inputs, output):
            ctx.save_for_backward(*inputs)
            ctx.scale = keyword_only_inputs["scale"]

        def backward(ctx, grad, L=L):
            seen[L] = ctx.needs_input_grad
            x, y = ctx.saved_tensors
            return grad * y * ctx.scale, grad * x * ctx.scale

        mymul.register_autograd(backward, setup_context=setup_context)
        x, y = L.tensor(X, requires_grad=True), L.tensor(X[::-1].copy())
        out = mymul(x, y, scale=2.0)
        out.sum().backward()
        seen[L, "grad"] = x.grad
        seen[L, "out"] = out
    assert seen[ember] == seen[torch] == (True, False)
    assert_same(seen[ember, "out"], seen[torch, "out"], 0, 0)  # one product per element
    assert_same(seen[ember, "grad"], seen[torch, "grad"], 0, 0)


def test_tensor_list_inputs_and_outputs():
    res = {}
    for L in (ember, torch):
        @L.library.custom_op(_ns(L) + "::scale_all", mutates_args=())
        def scale_all(xs: list[L.Tensor], w: L.Tensor) -> list[L.Tensor]:
            return [a * w for a in xs]

        def setup_context(ctx, inputs, output):
            ctx.xs, ctx.w = inputs

        def backward(ctx, grads, L=L):
            res[L, "needs"] = ctx.needs_input_grad
            gw = sum((g * a) for g, a in zip(grads, ctx.xs))
            return [g * ctx.w for g in grads], gw

        scale_all.register_autograd(backward, setup_context=setup_context)
        a, b = L.tensor([1.0, 2.0], requires_grad=True), L.tensor([3.0, 4.0], requires_grad=True)
        w = L.tensor([2.0, -1.0], requires_grad=True)
        out = scale_all([a, b], w)
        res[L, "type"] = type(out)
        (out[0].sum() + 2 * out[1].sum()).backward()
        res[L] = (a.grad, b.grad, w.grad)
    assert res[ember, "type"] is res[torch, "type"] is list
    assert res[ember, "needs"] == res[torch, "needs"] == ([True, True], True)
    for e, t in zip(res[ember], res[torch]):
        assert_same(e, t, 0, 0)  # small integers: exact


def test_backward_returning_too_few_gradients():
    def call(L):
        @L.library.custom_op(_ns(L) + "::add2", mutates_args=())
        def add2(x: L.Tensor, y: L.Tensor) -> L.Tensor:
            return x + y

        add2.register_autograd(lambda ctx, g: g)
        add2(L.ones(2, requires_grad=True), L.ones(2)).sum().backward()

    msg = same_message(call)
    assert "returned an incorrect number of gradients (expected 3, got 2)" in msg


def test_func_grad_refused_as_torch_does_but_constants_pass():
    # PyTorch's generated autograd.Function has no setup_context: func.grad through a custom
    # op refuses, whether or not it has a formula; an op on constants inside grad runs
    for formula in (False, True):
        def call(L, formula=formula):
            op = _sin_op(L)
            if formula:
                _with_autograd(op, L)
            return L.func.grad(lambda a: op(a).sum())(L.tensor(X[0]))

        assert "must override the setup_context staticmethod" in same_message(call)
    outs = {}
    for L in (ember, torch):
        op = _sin_op(L)
        outs[L] = L.func.grad(lambda a, op=op, L=L: (op(L.tensor(X[0])) * a).sum())(
            L.tensor(X[1]))
    assert_same(outs[ember], outs[torch], 0, 0)


@pytest.mark.parametrize("in_dims", [0, 1])
def test_vmap_without_rule_runs_per_example_with_torch_warning(in_dims):
    outs, ops = {}, {}
    for L in (ember, torch):
        ops[L] = _sin_op(L)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            outs[L] = L.func.vmap(ops[L], in_dims=in_dims)(L.tensor(X))
        if L is ember:  # (PyTorch's comes from C++ and goes to stderr, not to `warnings`)
            ns = ops[ember]._namespace
            assert any(f"have not yet implemented the batching rule for {ns}::npsin"
                       in str(m.message) for m in w)
    assert_same(outs[ember], outs[torch], 0, 0)


def test_vmap_rule_is_called_with_info_and_in_dims():
    seen = {}
    for L in (ember, torch):
        op = _sin_op(L)

        def rule(info, in_dims, x, L=L):
            seen[L] = (info.batch_size, info.randomness, in_dims)
            return x.sin() * 0 + 7, 0

        op.register_vmap(rule)
        seen[L, "out"] = L.func.vmap(op, in_dims=1)(L.tensor(X))
    assert seen[ember] == seen[torch] == (3, "error", (1,))
    assert_same(seen[ember, "out"], seen[torch, "out"], 0, 0)


def test_mutating_op_bumps_version_and_refuses_vmap_fallback():
    res = {}
    for L in (ember, torch):
        @L.library.custom_op(_ns(L) + "::addin", mutates_args=("x",))
        def addin(x: L.Tensor, y: L.Tensor) -> None:
            x.add_(y)

        assert addin._schema == "(Tensor(a0!) x, Tensor y) -> ()"
        z = L.zeros(3)
        assert addin(z, L.ones(3)) is None
        res[L] = (z.tolist(), z._version)
    assert res[ember] == res[torch] == ([1.0, 1.0, 1.0], 2)

    def call(L):
        @L.library.custom_op(_ns(L) + "::addin", mutates_args=("x",))
        def addin(x: L.Tensor, y: L.Tensor) -> None:
            x.add_(y)

        L.func.vmap(addin)(L.zeros(2, 3), L.ones(2, 3))

    assert "the fallback path doesn't work on out= or view ops" in same_message(call)


def test_output_aliasing_an_input_is_refused():
    def call(L):
        @L.library.custom_op(_ns(L) + "::ident", mutates_args=())
        def ident(x: L.Tensor) -> L.Tensor:
            return x.view(-1)

        ident(L.zeros(2, 2))

    msg = same_message(call)
    assert msg.startswith("ident: The output of this custom operator")
    assert "may not alias any inputs to this custom operator" in msg


def test_fake_impl_runs_for_meta_tensors():
    def call(L):
        return _sin_op(L)(L.empty(2, 3, device="meta"))

    assert "There was no fake impl registered for <CustomOpDef(" in same_message(call)
    for L in (ember, torch):
        op = _sin_op(L)
        fake = op.register_fake(lambda x, L=L: L.empty_like(x))
        assert callable(fake)
        out = op(L.empty(2, 3, device="meta"))
        assert out.device.type == "meta" and tuple(out.shape) == (2, 3)


def test_device_types_and_register_kernel():
    def call(L):
        @L.library.custom_op(_ns(L) + "::cuda_only", mutates_args=(), device_types="cuda")
        def cuda_only(x: L.Tensor) -> L.Tensor:
            return x.clone()

        return cuda_only

    for L in (ember, torch):
        with pytest.raises(NotImplementedError, match="with arguments from the 'CPU' backend"):
            call(L)(L.zeros(1))
        op = call(L)
        op.register_kernel("cpu")(lambda x: x + 1)
        assert op(L.zeros(1)).tolist() == [1.0]
    assert same_message(lambda L: call(L).register_kernel("foo")(lambda x: x)).endswith(
        "device type at start of device string: foo")


@pytest.mark.parametrize("bad", [
    lambda f, L: f(3), lambda f, L: f(L.ones(1), 2.5), lambda f, L: f(n=2),
    lambda f, L: f(L.ones(1), x=L.ones(1)), lambda f, L: f(L.ones(1), z=1),
    lambda f, L: f(L.ones(1), 1, 2), lambda f, L: f([1]), lambda f, L: f(L.ones(1), n="a"),
])
def test_bad_calls_raise_torch_errors(bad):
    def call(L):
        @L.library.custom_op(_ns(L) + "::f", mutates_args=())
        def f(x: L.Tensor, n: int = 1) -> L.Tensor:
            return x * n

        bad(f, L)

    assert same_message(call).startswith(("NS::f()", "Argument 'x'", "Unknown keyword"))


@pytest.mark.parametrize("name", ["", "nslib", "nslib::a::b", "a b::c", "nslib::1a"])
def test_bad_names(name):
    def call(L):
        L.library.custom_op(name, mutates_args=())(lambda x: x)

    def annotated(L):
        def f(x: L.Tensor) -> L.Tensor:
            return x.clone()

        L.library.custom_op(name, mutates_args=())(f)

    # without type hints the schema fails first, in both
    assert same_message(call, ValueError).startswith("infer_schema(func): Parameter x must")
    for L in (ember, torch):
        kind = ValueError if name.count("::") != 1 else RuntimeError
        with pytest.raises(kind):
            annotated(L)


@pytest.mark.parametrize("L", [ember, torch])
def test_redefinition_replaces_the_op(L):
    name = _ns(L) + "::dup"

    @L.library.custom_op(name, mutates_args=())
    def first(x: L.Tensor) -> L.Tensor:
        return x.clone()

    @L.library.custom_op(name, mutates_args=())
    def second(x: L.Tensor) -> L.Tensor:
        return x + 1

    assert first(L.zeros(1)).tolist() == second(L.zeros(1)).tolist() == [1.0]


def test_gradcheck_through_registered_formula():
    op = _with_autograd(_sin_op(ember), ember)
    x = to_ember(torch.tensor(X, dtype=torch.float64), requires_grad=True)
    assert ember.autograd.gradcheck(op, (x,))


def test_explicit_schema_and_trailing_defaults():
    seen = {}
    for L in (ember, torch):
        def scale(x, n, b=None):
            return x * n if b is None else x * n + b

        op = L.library.custom_op(_ns(L) + "::scale", scale, mutates_args=(),
                                 schema="(Tensor x, int n, Tensor? b=None) -> Tensor")

        def setup_context(ctx, inputs, output):
            ctx.n, ctx.has_b = inputs[1], inputs[2] is not None

        def backward(ctx, g, L=L):
            seen.setdefault(L, []).append(ctx.needs_input_grad)
            return g * ctx.n, None, (g if ctx.has_b else None)

        op.register_autograd(backward, setup_context=setup_context)
        x, b = L.ones(2, requires_grad=True), L.zeros(2, requires_grad=True)
        op(x, 3, b).sum().backward()
        op(x, 2).sum().backward()
        op(x, n=2).sum().backward()
        seen[L, "grads"] = (x.grad.tolist(), b.grad.tolist())
    # a trailing default the call left out is no input of the graph node
    assert seen[ember] == seen[torch] == [(True, False, True), (True, False), (True, False)]
    assert seen[ember, "grads"] == seen[torch, "grads"] == ([7.0, 7.0], [1.0, 1.0])
