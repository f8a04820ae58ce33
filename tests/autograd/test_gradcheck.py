"""gradcheck / gradgradcheck: PyTorch's signature, return value and raising behaviour."""

import inspect
import warnings

import numpy as np
import pytest
import torch

import ember
from ember.autograd.gradcheck import GradcheckError

from helpers import rand_array


def inputs(*shapes, dtype=np.float64):
    return tuple(ember.tensor(rand_array(s, dtype, seed=i), requires_grad=True)
                 for i, s in enumerate(shapes))


class WrongBackward(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3


class WrongSecondDerivative(ember.autograd.Function):
    """Right first derivative (of x**2); its backward uses a detached x, so the second is 0."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 2 * x.detach()


def test_signatures_match_torch():
    for name in ("gradcheck", "gradgradcheck"):
        ours = inspect.signature(getattr(ember.autograd, name))
        theirs = inspect.signature(getattr(torch.autograd, name))
        assert list(ours.parameters) == list(theirs.parameters)
        for p in theirs.parameters.values():
            assert ours.parameters[p.name].default == p.default
            assert ours.parameters[p.name].kind == p.kind


def test_correct_gradients_pass():
    a, b = inputs((3, 4), (4, 2))
    assert ember.autograd.gradcheck(lambda x, w: (x @ w).sigmoid(), (a, b)) is True
    assert ember.autograd.gradcheck(lambda x, w: (x @ w).sigmoid(), (a, b), fast_mode=True)
    assert ember.autograd.gradgradcheck(lambda x, w: (x @ w).sigmoid(), (a, b)) is True


def test_several_outputs_and_non_tensor_arguments():
    (a,) = inputs((4,))
    assert ember.autograd.gradcheck(lambda x, k: (x * k, (x ** 2).sum(), x.argmax()), (a, 3.0))


def test_wrong_backward_raises_gradcheck_error():
    (x,) = inputs((3,))
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to "
                                             "input 0") as e:
        ember.autograd.gradcheck(WrongBackward.apply, (x,))
    assert isinstance(e.value, RuntimeError)
    assert "numerical:" in str(e.value) and "analytical:" in str(e.value)
    assert ember.autograd.gradcheck(WrongBackward.apply, (x,), raise_exception=False) is False
    with pytest.raises(GradcheckError):
        ember.autograd.gradcheck(WrongBackward.apply, (x,), fast_mode=True)


def test_gradgradcheck_catches_a_wrong_second_derivative():
    (x,) = inputs((3,))
    assert ember.autograd.gradcheck(WrongSecondDerivative.apply, (x,))
    with pytest.raises(GradcheckError):
        ember.autograd.gradgradcheck(WrongSecondDerivative.apply, (x,))
    assert not ember.autograd.gradgradcheck(WrongSecondDerivative.apply, (x,),
                                            raise_exception=False)


def test_float32_inputs_warn():
    (x,) = inputs((3,), dtype=np.float32)
    with pytest.warns(UserWarning, match="is not a double precision floating point"):
        ember.autograd.gradcheck(lambda t: t * 2, (x,), eps=1e-2, atol=1e-2, rtol=1e-2)


def test_no_input_requires_grad():
    for m in (ember, torch):
        with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
            m.autograd.gradcheck(lambda t: t * 2, (m.ones(2, dtype=m.float64),))


def test_gradcheck_leaves_inputs_unchanged():
    (x,) = inputs((2, 3))
    before = x.detach().numpy().copy()
    ember.autograd.gradcheck(lambda t: t.exp(), (x,))
    np.testing.assert_array_equal(x.detach().numpy(), before)
    assert x._version == 0 and x.grad is None


# --- failure messages as torch words them ---------------------------------------------------

def _lib_fns(L):
    """(wrong backward with a jvp too, x): a Function whose backward is 3/2 of the truth."""
    class Wrong(L.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 3

        @staticmethod
        def jvp(ctx, t):
            return t * 2.5

    x = L.tensor([0.3, -0.7, 1.1], dtype=L.float64, requires_grad=True)
    return Wrong, x


def _message(L, **kw):
    Wrong, x = _lib_fns(L)
    with pytest.raises(RuntimeError) as e:
        L.autograd.gradcheck(Wrong.apply, (x,), **kw)
    return type(e.value).__name__, str(e.value).replace("ember.", "torch.")


@pytest.mark.parametrize("kw", [
    {},
    {"check_forward_ad": True},  # backward is checked (and fails) before forward mode
    {"check_forward_ad": True, "check_backward_ad": False},
    {"fast_mode": True},
    {"fast_mode": True, "check_forward_ad": True, "check_backward_ad": False},
])
def test_failure_messages_are_torchs(kw):
    # fast mode draws its u, v from a fresh default-seeded generator, as torch does, so even
    # its projected numbers agree; they are dot products of 3 float64 terms (same order)
    assert _message(ember, **kw) == _message(torch, **kw)


def test_fast_mode_leaves_the_global_generator_alone():
    for L in (ember, torch):
        L.manual_seed(3)
        x = L.tensor([0.3, -0.7], dtype=L.float64, requires_grad=True)
        assert L.autograd.gradcheck(lambda a: a.sin(), (x,), fast_mode=True)
        after = L.rand(2).tolist()
        L.manual_seed(3)
        assert after == L.rand(2).tolist()


def test_float32_jacobians_print_in_their_dtype():
    # the numerical Jacobian is differenced in the output's dtype (as torch's is): float32
    # reprs carry no dtype= suffix. The values themselves differ in their last float32 bits
    # (exp's last ulp, divided by 2e-6), so only the structure is compared.
    msgs = []
    for L in (ember, torch):
        x = L.tensor([0.5, 1.5], requires_grad=True)
        with pytest.warns(UserWarning), pytest.raises(RuntimeError) as e:
            L.autograd.gradcheck(lambda a: a.exp(), (x,))
        msgs.append(str(e.value))
    assert all("dtype" not in m for m in msgs)
    assert msgs[0].splitlines()[0] == msgs[1].splitlines()[0]


def test_no_input_requires_grad_message():
    from helpers import same_message

    same_message(lambda L: L.autograd.gradcheck(lambda t: t * 2, (L.ones(2, dtype=L.float64),)),
                 ValueError)


def _x64(L):
    return L.tensor([0.3, -0.7, 1.1], dtype=L.float64, requires_grad=True)


CHECK_ERRORS = {
    # name -> (exception type, call(L))
    "no differentiable output, yet it varies": (RuntimeError, lambda L: L.autograd.gradcheck(
        lambda a: L.tensor([1.0, 2.0], dtype=L.float64) * a.sum().detach(), (_x64(L),))),
    "fast: no differentiable output, yet it varies": (RuntimeError, lambda L: L.autograd.gradcheck(
        lambda a: a.detach() * 2, (_x64(L),), fast_mode=True)),
    "gradgradcheck with no mode": (AssertionError, lambda L: L.autograd.gradgradcheck(
        L.sin, (_x64(L),), check_rev_over_rev=False)),
    "gradgradcheck undefined without rev": (AssertionError, lambda L: L.autograd.gradgradcheck(
        L.sin, (_x64(L),), check_fwd_over_rev=True, check_rev_over_rev=False)),
    "gradgradcheck batched without rev": (AssertionError, lambda L: L.autograd.gradgradcheck(
        L.sin, (_x64(L),), check_fwd_over_rev=True, check_rev_over_rev=False,
        check_undefined_grad=False, check_batched_grad=True)),
}


@pytest.mark.parametrize("name", list(CHECK_ERRORS))
def test_check_errors_match_torch(name):
    from helpers import same_message

    kind, call = CHECK_ERRORS[name]
    same_message(call, kind)


def test_a_constant_function_passes():
    for L in (ember, torch):
        assert L.autograd.gradcheck(lambda a: a.detach() * 2 * 0 + 1, (_x64(L),))


def _wrong_second(L):
    class Sq(L.autograd.Function):
        @staticmethod
        def forward(x):
            return x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.save_for_forward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x.detach()  # the second derivative through this is 0, not 2

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return 2 * x * t

    return Sq


@pytest.mark.parametrize("fn,ok", [(lambda L: L.sin, True),
                                   (lambda L: _wrong_second(L).apply, False)])
def test_gradgradcheck_forward_over_reverse_runs(fn, ok):
    # the forward-mode check of the first-order gradient: the duals it passes are detached,
    # and gradgradcheck gives them back requires_grad (as torch's does) to take the gradient
    for L in (ember, torch):
        res = L.autograd.gradgradcheck(fn(L), (_x64(L),),
                                       check_fwd_over_rev=True, check_rev_over_rev=False,
                                       check_undefined_grad=False, raise_exception=False)
        assert res is ok


class WrongComplex(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * (1 + 2j)

    @staticmethod
    def backward(ctx, g):
        return (g * (1 - 3j)).real  # the imaginary part's derivative should be 2, not 3


def test_complex_outputs_are_checked_by_parts():
    # torch checks the imaginary parts, then the real parts, and says which part failed
    x = _x64(ember)
    assert ember.autograd.gradcheck(lambda a: (a * 1j).exp() * a, (x,))
    with pytest.raises(GradcheckError, match="^While considering the imaginary part of complex "
                                             "outputs only, Jacobian mismatch"):
        ember.autograd.gradcheck(WrongComplex.apply, (x,))
    assert ember.autograd.gradcheck(WrongComplex.apply, (x,), raise_exception=False) is False


def _complex_input(lib):
    return lib.tensor([0.5 + 0.5j, -1.0j, 0.25 - 0.75j], dtype=lib.complex128,
                      requires_grad=True)


class SquareWrongBackward(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * x

    @staticmethod
    def backward(ctx, g):
        return g * 2  # should be 2 * conj(x) * g


COMPLEX_INPUT_FUNCS = [
    lambda t: (t * t.conj()).real.sum(),  # C -> R
    lambda t: t.abs() ** 2 + t.angle(),  # non-holomorphic, real outputs
    lambda t: torch_like(t).view_as_real(torch_like(t).exp(t)),  # C -> R pairs
    lambda t: torch_like(t).sin(t) * t,  # C -> C, checked by parts
]


def torch_like(t):
    return torch if isinstance(t, torch.Tensor) else ember


@pytest.mark.parametrize("k", range(len(COMPLEX_INPUT_FUNCS)))
def test_complex_inputs_compare_conjugate_wirtinger_gradients(k):
    # the numerical column is ds/dx + i ds/dy per real output, as torch builds it
    fn = COMPLEX_INPUT_FUNCS[k]
    assert ember.autograd.gradcheck(fn, (_complex_input(ember),)) is True
    assert torch.autograd.gradcheck(fn, (_complex_input(torch),)) is True


def test_complex_and_real_inputs_together_and_gradgradcheck():
    r = ember.tensor([0.3, 2.0, -1.0], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t, s: ember.exp(t) * s, (_complex_input(ember), r))
    assert ember.autograd.gradgradcheck(lambda t: ember.sin(t) * t, (_complex_input(ember),))


class TorchSquareWrongBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * x

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_complex_input_mismatch_message_matches_torch():
    msgs = []
    for lib, fn in ((ember, SquareWrongBackward.apply), (torch, TorchSquareWrongBackward.apply)):
        with pytest.raises(RuntimeError) as info:
            lib.autograd.gradcheck(fn, (_complex_input(lib),))
        assert type(info.value).__name__ == "GradcheckError"
        msgs.append(str(info.value).replace("torch.", "ember."))
        assert lib.autograd.gradcheck(fn, (_complex_input(lib),), raise_exception=False) is False
    assert msgs[0] == msgs[1]
    assert "complex128" in msgs[0]


def test_complex64_input_warns_like_torch_and_complex128_does_not():
    z64 = ember.zeros(2, dtype=ember.complex64, requires_grad=True)
    with pytest.warns(UserWarning, match="is not a double precision floating point or complex"):
        ember.autograd.gradcheck(lambda t: (t * t).real, (z64,), atol=1e-2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.autograd.gradcheck(lambda t: (t * t).real, (_complex_input(ember),))


def test_complex_inputs_in_fast_or_forward_mode_refuse():
    with pytest.raises(NotImplementedError, match="fast_mode=False"):
        ember.autograd.gradcheck(lambda t: (t * t).real, (_complex_input(ember),),
                                 fast_mode=True)
    with pytest.raises(NotImplementedError, match="backward mode"):
        ember.autograd.gradcheck(lambda t: (t * t).real, (_complex_input(ember),),
                                 check_forward_ad=True)


def _both(build):
    """build(lib) for ember and torch: each lib's result, or its exception's (type, text)."""
    out = []
    for lib in (ember, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                out.append(build(lib))
            except Exception as e:  # noqa: BLE001 (the comparison is the point)
                out.append((type(e).__name__, str(e).split("\n")[0]))
    return out


def _deq_like(lib, log):
    """A function with state, as the implicit-layers tutorial writes one: each call hooks its
    output with a hook that removes `self.hook` (the LAST call's handle) and records calls."""
    state = {}

    def fn(x):
        log.append("call")
        z = x.tanh() * 2
        def hook(g):
            log.append("hook")
            state["hook"].remove()
            return g * 3
        state["hook"] = z.register_hook(hook)
        return z

    return fn


def test_backward_runs_on_the_first_calls_outputs_as_in_torch():
    # torch differentiates the outputs of its first call of func (after all the finite
    # differences): the hook removal above then removes a stale handle and the check fails
    # consistently; a fresh call for the backward would make every row after the first
    # unhooked.
    logs = {}

    def build(lib):
        log = logs.setdefault(lib.__name__, [])
        x = lib.tensor([0.3, -0.2, 0.5], dtype=lib.float64, requires_grad=True)
        return lib.autograd.gradcheck(_deq_like(lib, log), (x,), raise_exception=False,
                                      check_undefined_grad=False)

    got = _both(build)
    assert got[0] == got[1]
    assert logs["ember"] == logs["torch"]


def test_func_runs_minus_then_plus_as_torchs_finite_differences():
    seen = {}

    def build(lib):
        log = seen.setdefault(lib.__name__, [])

        def fn(x):
            log.append(round(float(x.detach()[0]), 9))
            return x * x

        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        return lib.autograd.gradcheck(fn, (x,), eps=1e-3)

    assert _both(build) == [True, True]
    assert seen["ember"] == seen["torch"]


def _scale_ignoring_grad(lib):
    class Ones(lib.autograd.Function):
        """Backward of x.sum() that forgets to multiply by grad_output: the Jacobian rows
        (all ones) are right, the zero-grad_output check is not."""

        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, g):
            return lib.ones(3, dtype=lib.float64)

    return Ones


def _none_unsafe(lib, returns_ones=False):
    class NoneUnsafe(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            if returns_ones:
                return g * 2 if g is not None else lib.ones(3, dtype=lib.float64)
            return g * 2  # (None * 2 when the gradient is undefined)

    return NoneUnsafe


@pytest.mark.parametrize("case", ["ignores_grad", "none_typeerror", "none_to_ones",
                                  "none_off", "two_outputs"])
@pytest.mark.parametrize("raise_exception", [True, False])
def test_grad_output_and_undefined_grad_checks_as_torchs(case, raise_exception):
    def build(lib):
        x = lib.tensor([0.3, -0.2, 0.5], dtype=lib.float64, requires_grad=True)
        kw = {"raise_exception": raise_exception}
        if case == "ignores_grad":
            fn = _scale_ignoring_grad(lib).apply
        elif case == "none_typeerror":
            fn = _none_unsafe(lib).apply
        elif case == "none_to_ones":
            fn = _none_unsafe(lib, returns_ones=True).apply
        elif case == "none_off":
            fn = _none_unsafe(lib).apply
            kw["check_undefined_grad"] = False
        else:
            def fn(t):
                return t.sin(), _none_unsafe(lib, returns_ones=True).apply(t)
        return lib.autograd.gradcheck(fn, (x,), **kw)

    got = _both(build)
    assert got[0] == got[1]


def _noisy_wrong(lib):
    class NoisyWrong(lib.autograd.Function):
        """A wrong backward that is also not reentrant (it counts its calls)."""

        calls = 0

        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            NoisyWrong.calls += 1
            return g * (3 + NoisyWrong.calls)

    return NoisyWrong


@pytest.mark.parametrize("case", ["nondiff_first_input", "reentrance_before_mismatch",
                                  "second_output"])
def test_failure_order_and_indices_are_torchs(case):
    # torch checks reentrance before the Jacobians, per differentiable output, and numbers
    # outputs and inputs among the differentiable ones
    def build(lib):
        w = lib.tensor([0.3, -0.2], dtype=lib.float64, requires_grad=True)
        c = lib.tensor([1.0, 2.0], dtype=lib.float64)
        if case == "nondiff_first_input":
            return lib.autograd.gradcheck(lambda a, b: WrongBackward_for(lib).apply(a * b),
                                          (c, w))
        if case == "reentrance_before_mismatch":
            return lib.autograd.gradcheck(_noisy_wrong(lib).apply, (w,))
        return lib.autograd.gradcheck(
            lambda a: (a.sin(), (a * 2).detach(), WrongBackward_for(lib).apply(a)), (w,))

    got = _both(build)
    assert got[0] == got[1]
    assert got[0][0] == "GradcheckError"


def WrongBackward_for(lib):
    return WrongBackward if lib is ember else _torch_wrong_backward()


def _torch_wrong_backward():
    class WrongBackward(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3

    return WrongBackward
