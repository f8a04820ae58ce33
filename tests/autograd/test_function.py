"""Custom ops with ember.autograd.Function, each written once and run in ember and torch."""

import warnings

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, rand_array


def define(m):
    """The same custom Functions, built on module `m`'s Function class."""
    F = m.autograd.Function

    class Exp(F):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    class ScaledMul(F):  # the setup_context form, with a non-tensor argument
        @staticmethod
        def forward(a, b, scale):
            return a * b * scale

        @staticmethod
        def setup_context(ctx, inputs, output):
            a, b, scale = inputs
            ctx.save_for_backward(a, b)
            ctx.scale = scale

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            ga = g * b * ctx.scale if ctx.needs_input_grad[0] else None
            gb = g * a * ctx.scale if ctx.needs_input_grad[1] else None
            return ga, gb, None

    class SortWithIndex(F):  # two outputs, one non-differentiable
        @staticmethod
        def forward(ctx, x):
            values, idx = x.sort()
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(idx)
            return values, idx

        @staticmethod
        def backward(ctx, g, g_idx):
            (idx,) = ctx.saved_tensors
            out = g.new_zeros(g.shape) if hasattr(g, "new_zeros") else g * 0
            out[idx] = g
            return out

    class AddOneInPlace(F):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    class TwoOutputs(F):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            ctx.seen = (g1 is None, g2 is None)
            out = 0
            if g1 is not None:
                out = out + g1 * 2
            if g2 is not None:
                out = out + g2 * 3
            return out

    class Cube(F):  # differentiable backward: double backward works
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2

    return {"Exp": Exp, "ScaledMul": ScaledMul, "Sort": SortWithIndex,
            "AddOne": AddOneInPlace, "Two": TwoOutputs, "Cube": Cube}


FNS = {ember: define(ember), torch: define(torch)}


def leaves(m, *shapes):
    return [m.tensor(rand_array(s, np.float64, seed=i), requires_grad=True)
            for i, s in enumerate(shapes)]


def test_forward_ctx_form():
    res = {}
    for m in (ember, torch):
        (x,) = leaves(m, (2, 3))
        y = FNS[m]["Exp"].apply(x)
        assert type(y.grad_fn).__name__ == "ExpBackward"
        (y * y).sum().backward()
        res[m] = (y, x.grad)
    assert_same(res[ember], res[torch])


def test_setup_context_form_and_needs_input_grad():
    res = {}
    for m in (ember, torch):
        a, b = leaves(m, (3,), (3,))
        b.requires_grad_(False)
        y = FNS[m]["ScaledMul"].apply(a, b, 2.5)
        y.sum().backward()
        res[m] = (y, a.grad)
        kinds = [None if f is None else type(f).__name__ for f, _ in y.grad_fn.next_functions]
        assert kinds == ["AccumulateGrad", None]
    assert_same(res[ember], res[torch])


def test_no_node_when_no_input_requires_grad():
    for m in (ember, torch):
        y = FNS[m]["Exp"].apply(m.ones(2))
        assert y.grad_fn is None and not y.requires_grad
        with m.no_grad():
            assert FNS[m]["Exp"].apply(m.ones(2, requires_grad=True)).grad_fn is None


def test_mark_non_differentiable():
    res = {}
    for m in (ember, torch):
        (x,) = leaves(m, (5,))
        values, idx = FNS[m]["Sort"].apply(x)
        assert values.requires_grad and not idx.requires_grad
        (values * m.arange(5, dtype=m.float64)).sum().backward()
        res[m] = x.grad
    assert_same(res[ember], res[torch])


def test_mark_dirty_rewrites_the_history_of_the_input():
    res = {}
    for m in (ember, torch):
        (a,) = leaves(m, (3,))
        x = a * 2
        y = FNS[m]["AddOne"].apply(x)
        assert y is x and x._version == 2  # add_ and mark_dirty each count, as in PyTorch
        assert type(x.grad_fn).__name__ == "AddOneInPlaceBackward"
        (x * x).sum().backward()
        res[m] = a.grad
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            FNS[m]["AddOne"].apply(m.ones(2, requires_grad=True))
    assert_same(res[ember], res[torch])


def test_mark_dirty_on_a_view():
    res = {}
    for m in (ember, torch):
        (a,) = leaves(m, (2, 3))
        x = a * 1
        FNS[m]["AddOne"].apply(x[1])
        (x * x).sum().backward()
        res[m] = (x, a.grad)
        assert type(x.grad_fn).__name__ == "CopySlices"
    assert_same(res[ember], res[torch])


def test_set_materialize_grads_false_passes_none():
    for m in (ember, torch):
        (x,) = leaves(m, (3,))
        y1, y2 = FNS[m]["Two"].apply(x)
        y1.sum().backward()
        assert y1.grad_fn.seen == (False, True)
        assert x.grad.tolist() == [2.0] * 3


def test_materialized_grads_are_zeros_by_default():
    for m in (ember, torch):
        (x,) = leaves(m, (4,))
        values, _ = FNS[m]["Sort"].apply(x)
        values[:2].sum().backward()
        assert sorted(x.grad.tolist()) == [0.0, 0.0, 1.0, 1.0]


def test_double_backward_through_a_custom_function():
    res = {}
    for m in (ember, torch):
        (x,) = leaves(m, (3,))
        (g,) = m.autograd.grad(FNS[m]["Cube"].apply(x).sum(), x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        res[m] = (g, gg)
    assert_same(res[ember], res[torch])


def test_saved_output_unpacks_with_its_node_for_double_backward():
    res = {}
    for m in (ember, torch):
        (x,) = leaves(m, (3,))
        (g,) = m.autograd.grad(FNS[m]["Exp"].apply(x).sum(), x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        res[m] = gg
    assert_same(res[ember], res[torch])


def test_saved_tensor_modified_in_place():
    for m in (ember, torch):
        (a,) = leaves(m, (3,))
        x = a * 1
        y = FNS[m]["Cube"].apply(x)
        x.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_saved_tensors_after_backward_are_freed():
    grads = []
    for m in (ember, torch):
        (x,) = leaves(m, (3,))
        y = FNS[m]["Exp"].apply(x)
        y.sum().backward()
        with pytest.raises(RuntimeError, match="after they have already been freed"):
            _ = y.grad_fn.saved_tensors
        z = FNS[m]["Exp"].apply(x)
        z.sum().backward(retain_graph=True)
        z.sum().backward()
        grads.append(x.grad)
    assert_same(grads[0], grads[1])


def test_wrong_number_of_gradients():
    for m in (ember, torch):
        class Bad(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x * y

            @staticmethod
            def backward(ctx, g):
                return g

        a, b = leaves(m, (2,), (2,))
        with pytest.raises(RuntimeError, match="returned an incorrect number of gradients"):
            Bad.apply(a, b).sum().backward()


def test_gradient_for_a_non_tensor_input_must_be_none():
    for m in (ember, torch):
        class Bad(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                return x * k

            @staticmethod
            def backward(ctx, g):
                return g, g

        (a,) = leaves(m, (2,))
        with pytest.raises(RuntimeError, match="returned a gradient different than None"):
            Bad.apply(a, 2.0).sum().backward()


def test_gradient_is_summed_to_the_input_shape():
    for m in (ember, torch):
        class Broadcasting(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.sum()

            @staticmethod
            def backward(ctx, g):
                return g.expand(2, 3)

        x = m.ones(1, 3, requires_grad=True)
        Broadcasting.apply(x).backward()
        assert x.grad.tolist() == [[2.0, 2.0, 2.0]]


def test_once_differentiable():
    for m in (ember, torch):
        from_mod = ember.autograd.function if m is ember else torch.autograd.function

        class Sq(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            @from_mod.once_differentiable
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * x * g

        x = m.ones(3, requires_grad=True)
        (g,) = m.autograd.grad(Sq.apply(x).sum(), x)
        assert g.tolist() == [2.0] * 3
        v = m.ones(3, requires_grad=True)
        (g,) = m.autograd.grad(Sq.apply(x), x, v, create_graph=True)
        assert g.requires_grad
        with pytest.raises(RuntimeError, match="marked with @once_differentiable"):
            g.sum().backward()


def _once_cube(L):
    from_mod = ember.autograd.function if L is ember else torch.autograd.function

    class Cube(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        @from_mod.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * g

    return Cube


def test_once_differentiable_error_node_is_off_the_path_to_the_inputs():
    # torch's error node hangs off fresh leaves, not off the grad outputs: autograd.grad with
    # inputs= never runs it (the once-differentiable term is left out of the second
    # derivative), while backward() runs every reachable node and raises
    def call(L):
        x = L.tensor([0.5, -1.5, 2.0], dtype=L.float64, requires_grad=True)
        (g,) = L.autograd.grad((_once_cube(L).apply(x) * x).sum(), x, create_graph=True)
        names = [type(f).__name__ for f, _ in g.grad_fn.next_functions]
        (h,) = L.autograd.grad(g.sum(), x, retain_graph=True)
        with pytest.raises(RuntimeError, match="marked with @once_differentiable"):
            g.sum().backward()
        return names, h, x.grad

    e, t = call(ember), call(torch)
    assert e[0] == t[0] == ["MulBackward0", "Error"]
    assert_same(e[1], t[1])
    assert e[2] is None and t[2] is None
    # g = x * 3x^2 (the once term, cut off) + Cube(x) (through Mul): d(sum g)/dx = 3x^2 only
    x = np.array([0.5, -1.5, 2.0])
    np.testing.assert_allclose(e[1].numpy(), 3 * x ** 2, rtol=1e-12)


def test_once_differentiable_gradgradcheck_fails_as_a_mismatch():
    msgs = []
    for L in (ember, torch):
        x = L.tensor([0.5, -1.5, 2.0], dtype=L.float64, requires_grad=True)
        with pytest.raises(RuntimeError) as e:
            L.autograd.gradgradcheck(_once_cube(L).apply, (x,))
        msgs.append((type(e.value).__name__, str(e.value).splitlines()[0]))
    assert msgs[0] == msgs[1] == ("GradcheckError", "Jacobian mismatch for output 0 with "
                                                    "respect to input 0,")


def test_input_returned_unchanged_is_a_new_tensor():
    for m in (ember, torch):
        class Identity(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2

        x = m.ones(2, requires_grad=True)
        y = Identity.apply(x)
        assert y is not x and x.is_leaf and not y.is_leaf
        y.sum().backward()
        assert x.grad.tolist() == [2.0, 2.0]


def test_a_view_returned_by_forward_keeps_the_custom_backward():
    for m in (ember, torch):
        class FirstRow(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x[0]

            @staticmethod
            def backward(ctx, g):
                return (g * 5).unsqueeze(0) * g.new_tensor([[1.0], [0.0]])

        a = m.ones(2, 3, requires_grad=True)
        x = a * 1
        y = FirstRow.apply(x)
        assert type(y.grad_fn).__name__ == "FirstRowBackward"
        y.sum().backward()
        assert a.grad.tolist() == [[5.0] * 3, [0.0] * 3]


def test_custom_function_node_repr_names_its_module_as_torch():
    reprs = []
    for m in (ember, torch):
        class Double(m.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        out = Double.apply(m.ones(2, requires_grad=True))
        reprs.append((repr(out.grad_fn).split(" object at")[0], repr(out)))
    assert reprs[0][0] == reprs[1][0].replace("torch.", "ember.", 1)
    assert reprs[0][1] == reprs[1][1]


def test_save_for_backward_names_the_non_tensor_by_position():
    # (the position was once found by `index`, which compared the tensors before it)
    msgs = []
    for lib in (torch, ember):
        class Save(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, None, 3)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g

        with pytest.raises(TypeError) as info:
            Save.apply(lib.ones(3, 2, requires_grad=True))
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1] == ("save_for_backward can only save variables, but argument 2 "
                                  "is of type int")


def test_instantiating_a_function_warns_as_torch():
    msgs = []
    for lib in (torch, ember):
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        with pytest.warns(DeprecationWarning) as rec:
            Double()
        assert rec[0].filename == __file__  # (reported at the caller's line)
        msgs.append(str(rec[0].message))
    assert msgs[0] == msgs[1]


def _identity_functions(lib):
    F = lib.autograd.Function

    class Id(F):  # returns its input as-is
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3

    class Dirty(F):  # writes its input and says so
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x.mul_(2)

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class Pair(F):  # one input returned as-is among other outputs
        @staticmethod
        def forward(ctx, x, k):
            return x, x * k, k

        @staticmethod
        def backward(ctx, a, b, c):
            return a + b * 2, None

    return Id, Dirty, Pair


@pytest.mark.parametrize("case", ["leaf", "nonleaf", "view", "nograd_input", "no_grad_mode"])
def test_an_input_returned_as_is_is_a_new_view_of_it(case):
    """PyTorch never hands back the input object: with grad mode on the output is a view of
    the input (of its base, for a view); under no_grad a plain alias."""
    seen = []
    for lib in (torch, ember):
        Id, _, _ = _identity_functions(lib)
        base = lib.arange(4.0, requires_grad=case != "nograd_input")
        x = {"nonleaf": base * 1, "view": (base * 1)[1:]}.get(case, base)
        if case == "no_grad_mode":
            with lib.no_grad():
                y = Id.apply(x)
        else:
            y = Id.apply(x)
        expect_base = x if x._base is None else x._base
        seen.append((y is x, y._is_view(), y._base is expect_base, y.requires_grad,
                     type(y.grad_fn).__name__, y.data_ptr() == x.data_ptr()))
    assert seen[0] == seen[1]


def test_as_is_outputs_keep_gradients_and_dirty_inputs_stay_themselves():
    for lib in (torch, ember):
        Id, Dirty, Pair = _identity_functions(lib)
        x = lib.ones(2, requires_grad=True)
        a, b, c = Pair.apply(x, 2.0)
        assert a._base is x and not b._is_view() and c == 2.0
        (a.sum() + b.sum()).backward()
        assert x.grad.tolist() == [3.0, 3.0]
        x.grad = None
        (Id.apply(x) ** 2).sum().backward()
        assert x.grad.tolist() == [6.0, 6.0]  # 3 * 2y with y = 1 (exact)
        z = lib.ones(2) * 1
        assert Dirty.apply(z) is z


@pytest.mark.parametrize("made", ["as_is", "view_in_forward"])
@pytest.mark.parametrize("leaf", [True, False])
def test_writing_a_custom_functions_view_output_in_place_is_refused(made, leaf):
    """A view a custom Function returns (an input as-is, or a view made in forward) may not
    be written in place with grad on: the rebase would override its backward (PyTorch's
    error and words); under no_grad, or when nothing requires grad, it may."""
    msgs = []
    for lib in (torch, ember):
        class Id(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x if made == "as_is" else x.view_as(x)

            @staticmethod
            def backward(ctx, g):
                return g

        x = lib.randn(3, requires_grad=True)
        y = Id.apply(x if leaf else x * 1)
        with pytest.raises(RuntimeError) as info:
            y.relu_()
        msgs.append(str(info.value))
        with lib.no_grad():
            y.add_(1)
        Id.apply(lib.ones(3)).add_(1)
    assert msgs[0] == msgs[1]
    assert msgs[0].startswith("Output 0 of Id is a view and is being modified inplace. This "
                              "view was created inside a custom Function")


def test_a_full_backward_hooked_modules_output_may_not_be_written_in_place():
    msgs = []
    for lib in (torch, ember):
        class InplaceReLU(lib.nn.Module):
            def forward(self, x):
                return x.relu_()

        seq = lib.nn.Sequential(lib.nn.Linear(3, 3), InplaceReLU())
        seq[1].register_full_backward_hook(lambda m, gi, go: None)
        with pytest.raises(RuntimeError) as info:
            seq(lib.randn(2, 3))
        msgs.append(str(info.value))
        m = lib.nn.Linear(3, 3)
        m.register_full_backward_hook(lambda m, gi, go: None)
        out = m(lib.randn(2, 3, requires_grad=True))
        out.clone().add_(1)  # (the fix the message suggests)
    assert msgs[0] == msgs[1]
    assert msgs[0].startswith("Output 0 of BackwardHookFunction is a view")


def _bad_backward_result(lib, value):
    class ReturnsOther(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return value

    try:
        ReturnsOther.apply(lib.ones(2, requires_grad=True)).sum().backward()
    except Exception as e:  # noqa: BLE001 (the type and words are what is compared)
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("value", [1, 2.5, [1.0, 2.0], "g"])
def test_backward_returning_a_non_tensor_raises_torchs_error(value):
    assert _bad_backward_result(ember, value) == _bad_backward_result(torch, value)


def test_mark_dirty_of_a_non_input_warns_as_torch():
    for lib in (ember, torch):
        class DirtyOutput(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x * 2
                ctx.mark_dirty(y)
                return y

            @staticmethod
            def backward(ctx, g):
                return g

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = DirtyOutput.apply(lib.ones(2, requires_grad=True))
        texts = [str(w.message) for w in caught]
        assert any(t.startswith("ctx.mark_dirty() received a tensor that was not an input. "
                                "Only input Tensors that have been mutated should be passed "
                                "to ctx.mark_dirty().") for t in texts), (lib, texts)
        assert y.requires_grad
