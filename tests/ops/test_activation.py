"""Activation ops (activation.py) against torch.nn.functional: every dtype, 0-d / empty /
transposed inputs, gradients (vs torch, finite differences, second order), in-place, meta."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import ember
from ember.ops import activation as A
from ops._elementwise import Spec, make, same_outcome, unary_tests

from helpers import assert_same, rand_array, same_message


def _inplace(e_fn, t_fn):
    """In-place forms as the `inplace=True` keyword of the F-style functions."""
    return (lambda x: e_fn(x, inplace=True), lambda x: t_fn(x, inplace=True))


SPECS = [
    Spec("relu", ember.relu, torch.relu),
    Spec("relu6", A.relu6, F.relu6, inplace=_inplace(A.relu6, F.relu6)),
    Spec("gelu", A.gelu, F.gelu, inplace=None),
    Spec("gelu_tanh", lambda x: A.gelu(x, approximate="tanh"),
         lambda x: F.gelu(x, approximate="tanh"), inplace=None),
    Spec("silu", A.silu, F.silu, inplace=_inplace(A.silu, F.silu)),
    Spec("softplus", A.softplus, F.softplus, inplace=None),
    Spec("softplus_beta", lambda x: A.softplus(x, beta=2.0, threshold=1.5),
         lambda x: F.softplus(x, beta=2.0, threshold=1.5), inplace=None),
    Spec("mish", A.mish, F.mish, inplace=_inplace(A.mish, F.mish)),
    Spec("hardtanh", lambda x, **k: A.hardtanh(x, -0.5, 1.5, **k),
         lambda x, **k: F.hardtanh(x, -0.5, 1.5, **k),
         inplace=(lambda x: A.hardtanh_(x, -0.5, 1.5), lambda x: F.hardtanh_(x, -0.5, 1.5))),
    Spec("leaky_relu", lambda x: A.leaky_relu(x, 0.2), lambda x: F.leaky_relu(x, 0.2),
         inplace=(lambda x: A.leaky_relu_(x, 0.2), lambda x: F.leaky_relu_(x, 0.2))),
    Spec("elu", lambda x: A.elu(x, 0.7), lambda x: F.elu(x, 0.7),
         inplace=(lambda x: A.elu_(x, 0.7), lambda x: F.elu_(x, 0.7))),
    Spec("selu", ember.selu, torch.selu),
    # NOTE: torch's celu backward is off by ~3e-8 relative in float64 (it rounds alpha).
    Spec("celu", lambda x: ember.celu(x, 1.3), lambda x: torch.celu(x, 1.3), tol=(1e-6, 1e-8),
         inplace=(lambda x: ember.celu_(x, 1.3), lambda x: torch.celu_(x, 1.3))),
    Spec("hardsigmoid", A.hardsigmoid, F.hardsigmoid, ((-4.0, 4.0),),
         inplace=_inplace(A.hardsigmoid, F.hardsigmoid)),
    Spec("hardswish", A.hardswish, F.hardswish, ((-4.0, 4.0),),
         inplace=_inplace(A.hardswish, F.hardswish)),
    # (meta strides: PyTorch's CPU result is row-major, as ember's on either device; its
    # meta one follows the input's strides)
    Spec("logsigmoid", A.logsigmoid, F.logsigmoid, inplace=None,
         extra={"meta_stride": False}),
    Spec("softsign", A.softsign, F.softsign, inplace=None),
    Spec("tanhshrink", A.tanhshrink, F.tanhshrink, inplace=None),
    Spec("threshold", lambda x: ember.threshold(x, 0.3, -2.0),
         lambda x: torch.threshold(x, 0.3, -2.0),
         inplace=(lambda x: ember.threshold_(x, 0.3, -2.0),
                  lambda x: torch.threshold_(x, 0.3, -2.0))),
]
test_values, test_grad_vs_torch, test_grad_fd, test_inplace, test_meta = unary_tests(SPECS)


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_extreme_inputs_stay_finite_like_torch(spec):
    vals = [-1000.0, -30.0, -3.0, -1e-3, 0.0, 1e-3, 3.0, 30.0, 1000.0]
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        t = torch.tensor(vals, dtype=dtype)
        e = ember.tensor(vals).to(getattr(ember, str(dtype).split(".")[1]))
        same_outcome(spec.e, spec.t, (e,), (t,))


def test_grad_fn_names_match_torch():
    pairs = [(ember.relu, torch.relu), (A.gelu, F.gelu), (A.silu, F.silu),
             (A.softplus, F.softplus), (A.mish, F.mish), (A.hardtanh, F.hardtanh),
             (A.relu6, F.relu6), (A.leaky_relu, F.leaky_relu), (A.elu, F.elu),
             (ember.selu, torch.selu), (ember.celu, torch.celu), (A.hardsigmoid, F.hardsigmoid),
             (A.hardswish, F.hardswish), (A.logsigmoid, F.logsigmoid)]
    for fe, ft in pairs:
        e = ember.tensor([0.5, -1.5], requires_grad=True)
        t = torch.tensor([0.5, -1.5], requires_grad=True)
        assert type(fe(e).grad_fn).__name__ == type(ft(t).grad_fn).__name__, fe.__name__


def test_gelu_rejects_unknown_approximation():
    e, t = make((3,), ember.float32)
    same_outcome(lambda x: A.gelu(x, approximate="fast"),
                 lambda x: F.gelu(x, approximate="fast"), (e,), (t,))


def test_exported_names_follow_torch_namespace():
    for name in A.__all__:
        assert hasattr(torch, name), name
    for name in ("gelu", "silu", "softplus", "mish", "hardswish"):
        assert not hasattr(ember, name) or hasattr(torch, name)


def test_relu_inplace_on_non_leaf_keeps_gradient_path():
    xe = ember.tensor([[-1.0, 2.0], [3.0, -4.0]], requires_grad=True)
    xt = torch.tensor([[-1.0, 2.0], [3.0, -4.0]], requires_grad=True)
    ye, yt = xe * 2, xt * 2
    ye.relu_()
    yt.relu_()
    (ye * ye).sum().backward()
    (yt * yt).sum().backward()
    same_outcome(lambda x: x, lambda x: x, (xe.grad,), (xt.grad,))


def test_gelu_float32_is_accurate_across_the_range_and_in_chunks():
    # Large enough to be split across the kernel threads. The lower tail keeps its digits
    # (PyTorch's float32 1 + erf loses them past x = -3, so torch is compared inside that).
    import math

    import numpy as np

    x = np.linspace(-12.0, 12.0, 300_001).astype(np.float32)
    ref = np.array([0.5 * v * math.erfc(-v / math.sqrt(2)) for v in x.astype(np.float64)])
    got = A.gelu(ember.tensor(x)).numpy().astype(np.float64)
    np.testing.assert_allclose(got, ref, rtol=5e-6, atol=1e-37)
    mid = np.linspace(-3.0, 3.0, 200_001).astype(np.float32)
    same_outcome(A.gelu, F.gelu, (ember.tensor(mid),), (torch.tensor(mid),))
    xe, xt = ember.tensor(mid, requires_grad=True), torch.tensor(mid, requires_grad=True)
    A.gelu(xe).sum().backward()
    F.gelu(xt).sum().backward()
    same_outcome(lambda g: g, lambda g: g, (xe.grad,), (xt.grad,))


def test_gelu_double_backward_matches_torch():
    vals = [[-3.0, -0.7, 0.0], [0.4, 1.5, 5.0]]
    xe = ember.tensor(vals, dtype=ember.float64, requires_grad=True)
    xt = torch.tensor(vals, dtype=torch.float64, requires_grad=True)
    (ge,) = ember.autograd.grad(A.gelu(xe).pow(2).sum(), xe, create_graph=True)
    (gt,) = torch.autograd.grad(F.gelu(xt).pow(2).sum(), xt, create_graph=True)
    assert type(ge.grad_fn).__name__ == type(gt.grad_fn).__name__
    same_outcome(lambda g: g, lambda g: g, (ge,), (gt,))
    ge.sum().backward()
    gt.sum().backward()
    same_outcome(lambda g: g, lambda g: g, (xe.grad,), (xt.grad,))


def test_relu_and_threshold_backward_match_torch_on_special_values():
    # threshold_backward keeps g where x > t (NaN x included) and zeroes it elsewhere, even
    # an inf or NaN g; double backward goes through ThresholdBackwardBackward0.
    x = [-1.0, 0.0, 2.0, float("nan"), 3.0, -2.0]
    g = [float("inf"), 5.0, 1.0, 2.0, float("nan"), float("nan")]
    for fe, ft in ((ember.relu, torch.relu), (lambda v: ember.threshold(v, 0.5, -1.0),
                                              lambda v: torch.threshold(v, 0.5, -1.0))):
        for dtype in ("float32", "float64", "bfloat16"):
            xe = ember.tensor(x, dtype=getattr(ember, dtype), requires_grad=True)
            xt = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True)
            ge = ember.tensor(g, dtype=getattr(ember, dtype))
            gt = torch.tensor(g, dtype=getattr(torch, dtype))
            (de,) = ember.autograd.grad(fe(xe), xe, ge, create_graph=True)
            (dt,) = torch.autograd.grad(ft(xt), xt, gt, create_graph=True)
            assert type(de.grad_fn).__name__ == type(dt.grad_fn).__name__
            same_outcome(lambda d: d, lambda d: d, (de,), (dt,))


@pytest.mark.parametrize("size", [40, 300_001])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_relu_hardtanh_relu6_match_torch_bit_for_bit(dtype, size):
    """NaN, signed zeros (relu(-0.0) is -0.0: the input kept on a tie with the bound) and
    infinities come out as torch's; large inputs take the blockwise comparison
    (`_common.bounded`), past the last whole block too."""
    x = rand_array(size, dtype=dtype)
    x[::7], x[::11], x[::13], x[::17] = np.nan, -0.0, -np.inf, np.inf
    for name, kw in (("relu", {}), ("hardtanh", {"min_val": -0.5, "max_val": 0.25}),
                     ("relu6", {})):
        got = getattr(ember.nn.functional, name)(ember.tensor(x), **kw).numpy()
        want = getattr(torch.nn.functional, name)(torch.tensor(x), **kw).numpy()
        assert np.array_equal(got.view(f"i{x.itemsize}"), want.view(f"i{x.itemsize}")), name


# --- found by the differential fuzzer (python -m fuzz) -----------------------------------

@pytest.mark.parametrize("call", [
    lambda L: L.nn.functional.softplus(L.ones(2), "x"),
    lambda L: L.nn.functional.leaky_relu(L.ones(2), "x"),
    lambda L: L.nn.functional.elu(L.ones(2, dtype=L.int32), "x"),  # TypeError before dtype
    lambda L: L.nn.functional.celu(L.ones(2), None),
    lambda L: L.nn.functional.gelu(L.ones(2), "tanh"),  # approximate is keyword-only
    lambda L: L.nn.functional.hardtanh(L.ones(2, dtype=L.bool), "x"),
    lambda L: L.nn.functional.hardtanh(L.ones(2), 2.0, 1.0),  # min_val > max_val
])
def test_bad_parameters_raise_pytorchs_error_type(call):
    from helpers import same_error

    same_error(call)


def test_numeric_parameters_still_take_ints_and_bools():
    from helpers import same_result

    same_result(lambda L: L.nn.functional.leaky_relu(L.tensor([-2.0, 3.0]), 1))
    same_result(lambda L: L.nn.functional.softplus(L.tensor([-2.0, 3.0]), True))


def test_torch_relu_takes_the_tensor_alone_and_f_relu_its_inplace_flag():
    from helpers import same_error, same_result

    same_error(lambda L: L.relu(L.ones(3), "x"))
    same_error(lambda L: L.ones(3).relu(True))
    same_result(lambda L: L.nn.functional.relu(L.tensor([-1.0, 2.0]), True))
    same_result(lambda L: L.tensor([-1.0, 2.0]).relu())


@pytest.mark.parametrize("name, call", [
    ("clamp", lambda lib, x: x.clamp(-1, 1)),
    ("clamp_min", lambda lib, x: x.clamp_min(0)),
    ("clamp tensor bounds", lambda lib, x: x.clamp(lib.tensor(-1.0), lib.tensor(1.0))),
    ("hardtanh", lambda lib, x: lib.nn.functional.hardtanh(x)),
    ("relu6", lambda lib, x: lib.nn.functional.relu6(x)),
    ("hardsigmoid", lambda lib, x: lib.nn.functional.hardsigmoid(x)),
    ("hardswish", lambda lib, x: lib.nn.functional.hardswish(x)),
    ("relu", lambda lib, x: lib.nn.functional.relu(x)),
])
def test_flat_regions_pass_no_infinite_or_nan_gradient(name, call):
    # PyTorch selects the incoming gradient where the slope is nonzero and 0 elsewhere, so
    # an infinite or NaN gradient arriving at a clamped element gives 0 there, not NaN
    x0 = [-5.0, -0.5, 0.5, 5.0, -5.0, 5.0]
    g0 = [float("nan"), 1.0, float("inf"), float("-inf"), float("inf"), float("nan")]
    grads = []
    for lib in (ember, torch):
        x = lib.tensor(x0, requires_grad=True)
        call(lib, x).backward(lib.tensor(g0))
        grads.append(x.grad.tolist())
    np.testing.assert_array_equal(*grads)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "int8", "int32", "uint8"])
@pytest.mark.parametrize("limits", [(-1e5, 1e5), (-1.0, 1e39), (-300, 1), (-1, 300), (0.5, 2.5)])
def test_hardtanh_limits_convert_as_torchs_kernel(dtype, limits):
    # Integer tensors read the limits as int64 (uint8 refuses negatives), then each must fit
    # the tensor's C type; float16 refuses -1e5 ("c10::Half"). Exact: a clamp.
    for call in (lambda L: L.nn.functional.hardtanh(L.tensor([1, 7]).to(getattr(L, dtype)),
                                                    *limits),
                 lambda L: L.nn.functional.hardtanh(L.tensor([1, 7]).to(getattr(L, dtype)),
                                                    *limits, inplace=True),
                 lambda L: L.nn.Hardtanh(*limits)(L.tensor([1, 7]).to(getattr(L, dtype)))):
        try:
            want = call(torch)
        except RuntimeError:
            same_message(call)
        else:
            assert call(ember).tolist() == want.tolist()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "int32", "int8"])
def test_threshold_values_must_fit_the_tensor_type(dtype):
    same_message(lambda L: F.threshold(torch.ones(2, dtype=getattr(torch, dtype)), 1e5, 1e39)
                 if L is torch else
                 L.nn.functional.threshold(L.ones(2, dtype=getattr(L, dtype)), 1e5, 1e39))



_NAMED = ["relu", "relu6", "hardtanh", "selu", "elu", "celu", "leaky_relu", "rrelu", "silu",
          "mish", "hardswish", "hardsigmoid", "gelu", "softplus", "hardshrink", "softshrink"]
_INPLACE = ["relu", "relu6", "hardtanh", "selu", "elu", "celu", "leaky_relu", "rrelu", "silu",
            "mish", "hardswish", "hardsigmoid"]


@pytest.mark.parametrize("bad", ["s", 3, None], ids=["str", "int", "None"])
@pytest.mark.parametrize("name", _NAMED)
def test_a_non_tensor_input_is_refused_in_the_called_functions_words(name, bad):
    """Each F activation names itself (not the op it is built on: relu6 is no `relu()`,
    selu no `elu()`), with a trailing `_` for the in-place form."""
    msg = same_message(lambda L: getattr(L.nn.functional, name)(bad), TypeError)
    assert msg.startswith(f"{name}(): argument 'input' (position 1)")
    if name in _INPLACE:
        msg = same_message(lambda L: getattr(L.nn.functional, name)(bad, inplace=True),
                           TypeError)
        assert msg.startswith(f"{name}_(): ")


@pytest.mark.parametrize("bad", ["s", None])
def test_underscore_forms_and_compositions_refuse_a_non_tensor_as_torch(bad):
    for fn in ("relu_", "hardtanh_", "selu_", "elu_", "celu_", "leaky_relu_", "rrelu_"):
        assert same_message(lambda L, fn=fn: getattr(L.nn.functional, fn)(bad),
                            TypeError).startswith(f"{fn}(): ")
    same_message(lambda L: L.nn.functional.threshold_(bad, 0.1, 0.0), TypeError)
    same_message(lambda L: L.nn.functional.logsigmoid(bad), TypeError)  # log_sigmoid()
    for fn in ("softsign", "tanhshrink"):  # (Python compositions: their first method call)
        same_message(lambda L, fn=fn: getattr(L.nn.functional, fn)(bad), AttributeError)


def test_prelu_names_the_argument_that_is_not_a_tensor():
    same_message(lambda L: L.nn.functional.prelu("s", L.ones(1)), TypeError)
    msg = same_message(lambda L: L.nn.functional.prelu(L.ones(2), 0.25), TypeError)
    assert "'weight' (position 2)" in msg


@pytest.mark.parametrize("module", ["Tanh", "Sigmoid", "ReLU6", "Hardtanh", "SELU", "RReLU",
                                    "Hardshrink", "Softshrink", "PReLU", "ELU", "ReLU"])
def test_activation_modules_refuse_a_non_tensor_as_torch(module):
    """nn.Tanh / nn.Sigmoid call torch.tanh / torch.sigmoid (a TypeError naming the op), not
    the F function's method call."""
    same_message(lambda L: getattr(L.nn, module)()("s"), TypeError)


@pytest.mark.parametrize("fn", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize("dim", [None, -1])
@pytest.mark.parametrize("bad", ["s", 3])
def test_softmax_family_non_tensor_fails_on_the_attribute_torch_reads(fn, dim, bad):
    """PyTorch reads `input.dim()` only without a dim, then calls the method: its
    AttributeError names that attribute (softmin negates first: a str's TypeError)."""
    kind = TypeError if (fn, dim, bad) == ("softmin", -1, "s") else AttributeError
    same_message(lambda L: getattr(L.nn.functional, fn)(bad, dim), kind)


@pytest.mark.parametrize("name", ["hardswish", "hardsigmoid", "selu", "mish", "silu", "relu",
                                  "relu6"])
def test_a_truthy_inplace_flag_of_another_type_acts_in_place(name):
    # PyTorch tests `if inplace:`; ember named the op with "_" * inplace (a str raised)
    outs = []
    for lib in (ember, torch):
        x = lib.tensor([-1.5, 0.25, 2.0])
        y = getattr(lib.nn.functional, name)(x, "x")
        outs.append((y, x))
    assert_same(outs[0][0], outs[1][0])
    assert_same(outs[0][1], outs[1][1])


# 1 + 2**-11 + 2**-40 is float16's 1 through float32 (a tie there) and 1 + 2**-10 rounded
# once; 1 + 2**-8 + 2**-40 likewise for bfloat16
_TIES = {"float16": 1 + 2**-11 + 2**-40, "bfloat16": 1 + 2**-8 + 2**-40}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("call", [
    lambda L, x, v: F.hardtanh(x, -v, v) if L is torch else L.nn.functional.hardtanh(x, -v, v),
    lambda L, x, v: (F if L is torch else L.nn.functional).threshold(x, 0.25, v),
    lambda L, x, v: (F if L is torch else L.nn.functional).threshold(x.clone(), 0.25, v, True)],
    ids=["hardtanh", "threshold", "threshold_"])
def test_16_bit_limits_and_values_convert_as_a_scalar(dtype, call):
    """A number limit or fill value reaches a 16-bit kernel as PyTorch's Scalar conversion
    makes it (a double to float to 16 bits), not NumPy's single rounding (ml_dtypes 0.7 for
    bfloat16; NumPy's float16 always)."""
    v = _TIES[dtype]
    vals = [1.0, 1.0078125, -1.0, 0.5, 1.0009765625, -1.0009765625, 0.125, -2.0]
    got, want = (call(L, L.tensor(vals).to(getattr(L, dtype)), v) for L in (ember, torch))
    assert got.float().tolist() == want.float().tolist()


# A complex slope / alpha / beta beside a real tensor, or one beyond float32's range:
# refused in c10's words, naming the C type the kernel reads it as (float for 16-bit
# floats; celu reads a double first); with a zero imaginary part it is the real number.
COMPLEX_PARAM = {
    "leaky_relu": lambda m, x: m.nn.functional.leaky_relu(x, 1j),
    "leaky_relu_ f16": lambda m, x: m.nn.functional.leaky_relu_(x.half(), 0.2 + 1j),
    "softplus beta f64": lambda m, x: m.nn.functional.softplus(x.double(), beta=2j),
    "softplus threshold": lambda m, x: m.nn.functional.softplus(x, threshold=1j),
    "elu": lambda m, x: m.nn.functional.elu(x.bfloat16(), alpha=1j),
    "celu": lambda m, x: m.nn.functional.celu(x, alpha=1j),
    "leaky_relu beyond float": lambda m, x: m.nn.functional.leaky_relu(x.half(), 1e300),
}


@pytest.mark.parametrize("name", sorted(COMPLEX_PARAM))
def test_complex_parameter_is_refused_as_torch(name):
    same_message(lambda m: COMPLEX_PARAM[name](m, m.tensor([-1.0, 2.0])))


def test_complex_parameter_with_zero_imaginary_part_is_its_real_part():
    got = [(L.nn.functional.leaky_relu(L.tensor([-1.0, 2.0]), 0.5 + 0j).tolist(),
            L.nn.functional.elu(L.tensor([-0.0, 2.0]), alpha=2 + 0j).tolist(),
            L.nn.functional.celu(L.tensor([-0.0, 2.0]), alpha=2 + 0j).tolist())
           for L in (ember, torch)]
    assert got[0] == got[1]


# threshold reads its threshold as its kernel computes (float32 for 16-bit floats: 1e6 is
# no overflow there; a C int for integers: -1.5 is -1, and -1 wraps into uint8), its value
# in the input's own type; `x <= threshold ? value : x`, so a NaN x or threshold keeps x.
THRESHOLD_FORMS = {
    "F.threshold": lambda L, x, t, v: L.nn.functional.threshold(x, t, v),
    "F.threshold_": lambda L, x, t, v: L.nn.functional.threshold_(x.clone(), t, v),
    "nn.Threshold": lambda L, x, t, v: L.nn.Threshold(t, v)(x),
    "torch.threshold": lambda L, x, t, v: L.threshold(x, t, v),
}
THRESHOLDS = [1e6, 1e39, -1.5, 1.7, 0.09997, float("nan"), 1j, 1 + 0j, True, -1, 2 ** 63,
              2 ** 70]


def test_threshold_reads_its_arguments_as_torchs_kernel():
    values = [0.0999755859375, float("nan"), -2.0, 1.0, 3.0]
    for dname in ("float16", "bfloat16", "float32", "float64", "int32", "int8", "uint8"):
        for t in THRESHOLDS:
            for v in (5.0, 1e6, -1):
                for fname, form in THRESHOLD_FORMS.items():
                    got = []
                    for L in (ember, torch):
                        d = getattr(L, dname)
                        x = L.tensor(values if d.is_floating_point else [-2, 0, 1, 3], dtype=d)
                        try:
                            got.append(form(L, x, t, v).double().tolist())
                        except (RuntimeError, OverflowError) as exc:
                            got.append((type(exc).__name__, str(exc)))
                    # (NaN != NaN: compare the lists' reprs)
                    assert repr(got[0]) == repr(got[1]), (dname, t, v, fname, got)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_threshold_gradient_compares_as_the_forward(dtype):
    """threshold_backward compares x with the threshold as the forward does (in float32 for
    16-bit inputs), so a 16-bit x just above a threshold that rounds onto it keeps g."""
    grads = []
    for L in (ember, torch):
        x = L.tensor([0.0999755859375, 0.5, float("nan"), -1.0],
                     dtype=getattr(L, dtype)).requires_grad_()
        L.nn.functional.threshold(x, 0.09997, 5.0).sum().backward()
        grads.append(repr(x.grad.double().tolist()))
    assert grads[0] == grads[1]


# Python ints past uint64 fit no Scalar: each activation's number argument is refused as
# torch's parser refuses it (an OverflowError), whatever the input's dtype; a non-finite
# rrelu bound is refused by rrelu itself.
BIG_INT_PARAM = {
    "elu": lambda L, x, v: L.nn.functional.elu(x, v),
    "celu": lambda L, x, v: L.nn.functional.celu(x, v),
    "leaky_relu": lambda L, x, v: L.nn.functional.leaky_relu(x, v),
    "softplus beta": lambda L, x, v: L.nn.functional.softplus(x, v),
    "softplus threshold": lambda L, x, v: L.nn.functional.softplus(x, 1.0, v),
    "rrelu": lambda L, x, v: L.nn.functional.rrelu(x, v, v),
    "softshrink": lambda L, x, v: L.nn.functional.softshrink(x, v),
    "threshold": lambda L, x, v: L.nn.functional.threshold(x, v, 0.0),
}


def test_number_arguments_past_uint64_and_non_finite_rrelu_bounds_are_refused():
    for dname in ("float16", "bfloat16", "float32", "float64"):
        for name, call in BIG_INT_PARAM.items():
            for v in (2 ** 64, -(2 ** 63) - 1, float("inf"), float("nan")):
                if not name.startswith("rrelu") and isinstance(v, float):
                    continue
                got = []
                for L in (ember, torch):
                    try:
                        call(L, L.tensor([-1.0, 2.0], dtype=getattr(L, dname)), v)
                        got.append("returned")
                    except (RuntimeError, OverflowError) as exc:
                        got.append((type(exc).__name__, str(exc)))
                assert got[0] == got[1], (dname, name, v, got)


def test_elu_family_multiplies_by_its_coefficients_as_torch():
    """x * scale, or expm1(x * input_scale) * (alpha * scale) with the product of the
    coefficients taken first, in the computing type: selu(-2.0) in float64 is
    -1.5201664685956948 (scale * (alpha * expm1) is one ulp away). One element at a time,
    so that torch takes its scalar loop (libm's expm1, as NumPy's), not the vector one."""
    calls = {"selu": lambda L, x: L.nn.functional.selu(x),
             "elu": lambda L, x: L.nn.functional.elu(x, 1.3),
             "celu": lambda L, x: L.nn.functional.celu(x, 0.7)}
    xs = [-2.0, -0.1, -7.5, -1e-3, -30.0, 0.7, -0.0, 3.3]
    for dname in ("float64", "float32"):
        for name, call in calls.items():
            for v in xs:
                got = [call(L, L.tensor([v], dtype=getattr(L, dname))).item()
                       for L in (ember, torch)]
                assert got[0] == got[1], (dname, name, v, got)


def test_softplus_follows_torchs_formula_past_exps_range():
    """log1p(exp(beta x)) / beta as PyTorch writes it: with the threshold raised past exp's
    range, beta x beyond it gives inf (and its gradient, g e / (e + 1), NaN), where a stable
    form would give x; NumPy's exp / log1p and torch's vectorised ones are a few ulps apart
    in range."""
    cases = [("float64", 1e30, 1e40, [-1.0, 0.0, 1e-30, 1e-29, 1.0, 2.0]),
             ("float64", 1e300, 1e305, [-1.0, 1e-300, 1e-298, 1.0]),
             ("float32", 1e30, 1e38, [-1.0, 0.0, 1e-30, 1e-36, 1.0, 30.0]),
             ("float32", 1.0, 100.0, [-50.0, -3.0, 0.5, 19.9, 90.0, 120.0])]
    for dname, beta, threshold, xs in cases:
        outs = []
        for L in (ember, torch):
            x = L.tensor(xs, dtype=getattr(L, dname), requires_grad=True)
            y = L.nn.functional.softplus(x, beta=beta, threshold=threshold)
            y.sum().backward()
            outs.append((y.detach(), x.grad))
        for got, want in zip(*outs):
            assert_same(got, want, rtol=4 * torch.finfo(want.dtype).eps, atol=0)


# The piecewise activations (one C pass where native kernels are on, bitwise selects on
# NumPy), the ELU family and softplus (expm1 / exp over every element, then a select) and
# float64 GELU (ember.erf's kernel): forward, in place and gradient against torch, on both
# kernel lines, over special values and layouts. `exact`: compares, selects and single
# correctly rounded operations in torch's order, so the same bits; else ulps apart in
# exp / expm1 / log1p / erf (NumPy's or ember_math.h's against torch's vectorised ones).
_REWRITTEN = [
    ("leaky_relu", lambda F, x: F.leaky_relu(x, 0.2), True),
    ("leaky_relu_", lambda F, x: F.leaky_relu(x * 1, 1.5, inplace=True), True),
    ("rrelu_eval", lambda F, x: F.rrelu(x, training=False), True),
    ("threshold", lambda F, x: F.threshold(x, 0.1, -0.0), True),
    ("threshold_", lambda F, x: F.threshold(x * 1, -1.0, 7.5, inplace=True), True),
    ("hardtanh", lambda F, x: F.hardtanh(x, -0.3, 0.1), True),
    ("relu6", lambda F, x: F.relu6(x), True),
    ("hardsigmoid", lambda F, x: F.hardsigmoid(x), True),
    ("hardswish", lambda F, x: F.hardswish(x), True),
    ("elu", lambda F, x: F.elu(x, 0.7), False),
    ("selu", lambda F, x: F.selu(x), False),
    ("celu", lambda F, x: F.celu(x, 0.5), False),
    ("softplus", lambda F, x: F.softplus(x), False),
    ("softplus_beta", lambda F, x: F.softplus(x, 2.0, 5.0), False),
    ("silu", lambda F, x: F.silu(x), False),
    ("gelu", lambda F, x: F.gelu(x), False),
]
# The gradients at a NaN x are those of torch's vectorised loops (hardtanh's 0, the ELU
# family's and hardswish's NaN); torch's scalar loop, which runs where the input and its
# gradient are not both contiguous (and over a short tail), gives g there: on the stepped
# and transposed layouts those NaN gradients are left out.
_NAN_GRAD_SCALAR_LOOP = ("hardtanh", "relu6", "elu", "selu", "celu", "hardswish")
_SPECIALS = [np.nan, np.inf, -np.inf, -0.0, 0.0, -3.0, 3.0, 6.0, -1.0, 0.1, 100.0, -100.0,
             1e-40, -1e-40, 30.0, -30.0, 800.0, -800.0]


def _activation_inputs():
    """(name, float64 values, view of an ember/torch tensor) over sizes 0, 1 and 37 x 41
    (past the native gate) read contiguous, transposed, broadcast and with a step."""
    big = rand_array((37, 41), np.float64, low=-8, high=8)
    big.reshape(-1)[: len(_SPECIALS)] = _SPECIALS
    row = big[:1].copy()
    yield "contiguous", big, lambda t: t
    yield "transposed", np.ascontiguousarray(big.T), lambda t: t.t()
    yield "broadcast", row, lambda t: t.expand(37, 41)
    yield "stepped", big, lambda t: t[:, ::2]
    yield "empty", np.zeros((0, 3)), lambda t: t
    yield "one", np.array([-0.0]), lambda t: t


def test_rewritten_activations_match_torch_forward_and_gradient():
    from ember import native

    for mode in ("numpy",) + (("native",) if native.available() else ()):
        for dname in ("float32", "float64", "bfloat16", "float16"):
            for lname, values, view in _activation_inputs():
                for name, call, exact in _REWRITTEN:
                    if name == "gelu" and dname != "float64":
                        continue  # (float32 GELU's kernel is its own: test_gelu_float32_...)
                    outs = []
                    for L in (ember, torch):
                        with native.use(mode):
                            leaf = L.tensor(values, dtype=getattr(L, dname), requires_grad=True)
                            y = call(L.nn.functional, view(leaf))
                            w = L.linspace(-2, 2, y.numel(), dtype=y.dtype).reshape(y.shape)
                            y.backward(w)
                        grad = leaf.grad
                        if name in _NAN_GRAD_SCALAR_LOOP and lname in ("stepped",
                                                                         "transposed"):
                            grad = grad.masked_fill(leaf.detach().isnan(), 0)
                        outs.append((y.detach(), grad))
                    for part, got, want in zip(("forward", "gradient"), *outs):
                        eps = torch.finfo(want.dtype).eps
                        if exact and dname in ("float32", "float64"):
                            tol = (0, 0)
                        elif dname in ("float32", "float64"):
                            # (a few ulps of the transcendental; atol: GELU's and softplus's
                            # results where they cancel or vanish, ulps of the inputs' scale)
                            tol = (8 * eps, 8 * eps)
                        else:  # (16 bits: computed in float32 and rounded once, as torch)
                            tol = (eps, 1e-6)
                        if part == "gradient" and dname in ("bfloat16", "float16"):
                            continue  # (their derivatives are unchanged compositions here)
                        if lname == "broadcast" and part == "gradient":
                            # (37 rows summed by the expand's gradient, in another order)
                            tol = (max(tol[0], 64 * eps), max(tol[1], 64 * eps))
                        try:
                            assert_same(got, want, *tol)
                        except AssertionError as e:
                            raise AssertionError((mode, dname, lname, name, part)) from e


# The piecewise activations (and clamps) at NaN, +-inf, -0.0 and each breakpoint, forward
# and gradient, against torch on a contiguous input of a length its vectorised loops cover
# whole (a multiple of 32: no scalar tail on AVX2 or AVX-512), where torch's gradient at
# NaN is the vectorised loop's. `exact`: compares, selects and single IEEE operations in
# torch's order, so the same bits (the sign of a zero included); else exp's ulps.
_BREAKS = [np.nan, np.inf, -np.inf, -0.0, 0.0, -3.0, 3.0, 6.0, -1.0, 1.0, 0.5, -0.5, 0.3,
           -0.3, 2.0, -2.0]
_PIECEWISE = [
    ("relu", lambda F, x: F.relu(x), True),
    ("relu6", lambda F, x: F.relu6(x), True),
    ("hardtanh", lambda F, x: F.hardtanh(x, -0.3, 2.0), True),
    ("hardtanh_min_eq_max", lambda F, x: F.hardtanh(x, 0.5, 0.5), True),
    ("hardtanh_", lambda F, x: F.hardtanh(x * 1, inplace=True), True),
    ("leaky_relu", lambda F, x: F.leaky_relu(x, 0.2), True),
    ("leaky_relu_negative", lambda F, x: F.leaky_relu(x, -0.2), True),
    ("rrelu_eval", lambda F, x: F.rrelu(x, training=False), True),
    ("prelu", lambda F, x: F.prelu(x, x.new_tensor([0.25])), True),
    ("threshold", lambda F, x: F.threshold(x, 1.0, 5.0), True),
    ("hardsigmoid", lambda F, x: F.hardsigmoid(x), True),
    ("hardswish", lambda F, x: F.hardswish(x), True),
    ("hardshrink", lambda F, x: F.hardshrink(x, 0.5), True),
    ("softshrink", lambda F, x: F.softshrink(x, 0.5), True),
    ("clamp", lambda F, x: x.clamp(-1, 2), True),
    ("clamp_min_eq_max", lambda F, x: x.clamp(0.5, 0.5), True),
    ("clamp_min", lambda F, x: x.clamp_min(0.5), True),
    ("clamp_max", lambda F, x: x.clamp_max(0.5), True),
    ("clamp_tensor_bounds", lambda F, x: x.clamp(x.new_tensor(-1.0), x.new_tensor(2.0)), True),
    ("elu", lambda F, x: F.elu(x, 0.7), False),
    ("elu_", lambda F, x: F.elu(x * 1, 0.7, inplace=True), False),
    ("selu", lambda F, x: F.selu(x), False),
    ("celu", lambda F, x: F.celu(x, 0.5), False),
]


def _bits(t) -> np.ndarray:
    """Values with NaNs made one, so that equal arrays compare equal bit for bit."""
    a = t.detach().numpy().copy()
    a[np.isnan(a)] = np.nan
    return a.view(f"u{a.itemsize}")


def test_piecewise_activations_at_nan_inf_signed_zero_and_breakpoints_match_torch():
    from ember import native

    values = np.array(_BREAKS * 128)  # (2048: past the native piecewise kernels' gate)
    for mode in ("numpy",) + (("native",) if native.available() else ()):
        for dname in ("float32", "float64"):
            for name, call, exact in _PIECEWISE:
                outs = []
                for L in (ember, torch):
                    with native.use(mode):
                        leaf = L.tensor(values, dtype=getattr(L, dname), requires_grad=True)
                        y = call(L.nn.functional, leaf)
                        y.backward(L.full(y.shape, 1.5, dtype=y.dtype))
                    outs.append((y, leaf.grad))
                for part, got, want in zip(("forward", "gradient"), *outs):
                    where = (mode, dname, name, part)
                    if exact:
                        assert (_bits(got) == _bits(want)).all(), where
                    else:  # (exp's ulps; NaN where torch's is)
                        eps = torch.finfo(want.dtype).eps
                        assert_same(got.detach(), want, 8 * eps, 8 * eps), where


def test_inplace_activations_with_a_negative_slope_refuse_backward_as_torch():
    # torch's in-place leaky_relu_ / elu_ / celu_ (and rrelu_ in eval, a leaky_relu_)
    # differentiate from their result: a negative or NaN slope is refused in backward; a
    # positive one, -0.0 and selu_ differentiate. Their nodes (and threshold_'s) are
    # `...Backward1`; hardtanh_'s is HardtanhBackward0.
    cases = [
        ("leaky", lambda F, x: F.leaky_relu(x, -0.2, inplace=True)),
        ("leaky_nan", lambda F, x: F.leaky_relu(x, float("nan"), inplace=True)),
        ("leaky_negzero", lambda F, x: F.leaky_relu(x, -0.0, inplace=True)),
        ("leaky_pos", lambda F, x: F.leaky_relu_(x, 0.3)),
        ("leaky_module", lambda F, x: ember_or_torch(F).nn.LeakyReLU(-0.1, True)(x)),
        ("elu", lambda F, x: F.elu(x, -0.5, inplace=True)),
        ("elu_nan", lambda F, x: F.elu_(x, float("nan"))),
        ("elu_pos", lambda F, x: F.elu(x, 0.5, inplace=True)),
        ("celu", lambda F, x: F.celu(x, -0.5, inplace=True)),
        ("celu_pos", lambda F, x: F.celu(x, 0.5, inplace=True)),
        ("selu", lambda F, x: F.selu(x, inplace=True)),
        ("rrelu_eval", lambda F, x: F.rrelu(x, -0.5, 0.1, inplace=True)),
        ("rrelu_eval_pos", lambda F, x: F.rrelu(x, -0.5, 0.5, inplace=True)),
        ("rrelu_train", lambda F, x: F.rrelu(x, -0.5, -0.1, True, inplace=True)),
        ("view", lambda F, x: F.leaky_relu(x[1:4], -0.2, inplace=True)),
        ("view_pos", lambda F, x: F.elu(x[1:4], 0.5, inplace=True)),
        ("threshold_", lambda F, x: F.threshold(x, 0.1, 2.0, inplace=True)),
        ("hardtanh_", lambda F, x: F.hardtanh(x, inplace=True)),
    ]
    for name, call in cases:
        seen = []
        for L in (ember, torch):
            x = L.tensor([-1.5, -0.5, 0.0, 0.5, 2.0], requires_grad=True)
            y = call(L.nn.functional, x * 1)
            node = type(y.grad_fn).__name__
            try:
                y.sum().backward()
            except RuntimeError as e:
                seen.append((node, str(e)))
            else:
                seen.append((node, x.grad.numpy()))
        (node, got), (want_node, want) = seen
        assert node == want_node, (name, seen)
        if isinstance(want, str):
            assert got == want, (name, seen)
        else:  # (the in-place ELU's gradient: torch's from its result, ulps apart)
            np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=name)


def ember_or_torch(F):
    return ember if F is ember.nn.functional else torch
