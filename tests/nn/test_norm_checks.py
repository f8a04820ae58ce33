"""group_norm's and instance_norm's checks of their weight and bias, rms_norm's checks of
its operands, batch_norm's refusal of running statistics that require grad, and the
operand dtypes batch_norm's and instance_norm's CPU kernel takes, against torch's words.

# NOTE: until nn/_functional/layers.py calls these checks, the tests compare the checks'
# errors with the ones torch's functional raises for the same arguments.
"""

import warnings

import pytest
import torch
import torch.nn.functional as F

import ember
import ember.nn.functional as EF
from ember.nn._functional import norm_checks
from ember.nn._functional.norm_checks import (
    check_group_norm_affine,
    check_instance_norm_affine,
)

from helpers import assert_same, same_messages

SHAPE = (2, 8, 4, 4)
AFFINES = [((6,), None), (None, (6,)), ((2, 4), None), ((8,), (2, 4)), ((8,), (6,)),
           ((7,), (2, 4)), ((), None)]


def vec(lib, shape):
    return None if shape is None else lib.ones(shape)


def torch_error(call) -> str:
    with pytest.raises(RuntimeError) as info:
        call()
    return str(info.value)


@pytest.mark.parametrize("weight,bias", AFFINES)
def test_group_norm_affine_of_the_wrong_size(weight, bias):
    expected = torch_error(lambda: F.group_norm(torch.zeros(SHAPE), 4, vec(torch, weight),
                                                vec(torch, bias)))
    with pytest.raises(RuntimeError) as info:
        check_group_norm_affine(ember.zeros(SHAPE), vec(ember, weight), vec(ember, bias))
    assert str(info.value) == expected


@pytest.mark.parametrize("weight,bias", AFFINES)
def test_instance_norm_affine_of_the_wrong_size(weight, bias):
    expected = torch_error(lambda: F.instance_norm(torch.zeros(SHAPE), weight=vec(torch, weight),
                                                   bias=vec(torch, bias)))
    x, w, b = ember.zeros(SHAPE), vec(ember, weight), vec(ember, bias)
    with pytest.raises(RuntimeError) as info:
        check_instance_norm_affine(x, w, b, repeated=False)
        check_instance_norm_affine(x, w, b, repeated=True)
    assert str(info.value) == expected


def test_affines_of_one_value_per_channel_pass():
    x = ember.zeros(SHAPE)
    check_group_norm_affine(x, ember.ones(8), ember.zeros(8))
    check_group_norm_affine(x, None, None)
    for repeated in (False, True):
        check_instance_norm_affine(x, ember.ones(8), ember.zeros(8), repeated=repeated)


# (input shape, input dtype, normalized_shape, weight shape or None); weights are float32
RMS_REFUSED = [
    ((2, 33), "float32", (32,), None),  # trailing size: no comma after `*` in rms_norm's words
    ((2, 3, 33), "float32", (3, 32), None),
    ((2, 33), "int64", (32,), None),  # (the shape is checked before the dtype)
    ((2, 33), "float32", (32,), (31,)),  # the weight's shape is checked first
    ((3,), "float32", (4, 5), (3,)),
    ((3,), "float32", (4, 5), None),  # fewer dims than normalized_shape: a ValueError
    ((3,), "float32", (4, 5), (4, 5)),
    ((3,), "int64", (4, 5), None),
    ((3,), "float32", (), None),
    ((3,), "int64", (3,), None),  # integer and bool inputs have no kernel
    ((2,), "bool", (2,), None),
]


def _rms_call(lib, shape, dtype, normalized, weight):
    x = lib.ones(shape, dtype=getattr(lib, dtype))
    return lambda: lib.nn.functional.rms_norm(x, normalized, None if weight is None
                                              else lib.ones(weight))


@pytest.mark.parametrize("shape,dtype,normalized,weight", RMS_REFUSED)
def test_rms_norm_refuses_as_torch(shape, dtype, normalized, weight):
    with pytest.raises(Exception) as expected:
        _rms_call(torch, shape, dtype, normalized, weight)()
    with pytest.raises(Exception) as got:
        _rms_call(ember, shape, dtype, normalized, weight)()
    assert (type(got.value), str(got.value)) == (type(expected.value), str(expected.value))


@pytest.mark.parametrize("fn", ["layer_norm", "rms_norm"])
def test_functional_norms_refuse_an_int_normalized_shape(fn):
    # (the module classes wrap an int themselves; the functions take a sequence only)
    with pytest.raises(TypeError) as expected:
        getattr(F, fn)(torch.ones(2, 3), 3)
    with pytest.raises(TypeError) as got:
        getattr(EF, fn)(ember.ones(2, 3), 3)
    assert str(got.value) == str(expected.value)


def test_normalized_shape_of_plain_ints_is_taken_as_given_and_others_as_torch_reads_them():
    """A tuple of ints (what the modules pass) skips the argument parser; a list, a Size,
    bools, floats and tensors still go through it, in torch's words."""
    for shape in ((3,), [3], ember.Size([3]), (2, 3), (True,), (3.0,), (ember.tensor(3),)):
        t_shape = torch.Size(shape) if isinstance(shape, ember.Size) else tuple(
            torch.tensor(3) if isinstance(v, ember.Tensor) else v for v in shape) \
            if isinstance(shape, tuple) else shape
        for fn in ("layer_norm", "rms_norm"):
            try:
                want = getattr(F, fn)(torch.ones(2, 3), t_shape)
            except (TypeError, RuntimeError) as e:
                with pytest.raises(type(e)) as got:
                    getattr(EF, fn)(ember.ones(2, 3), shape)
                assert str(got.value) == str(e)
            else:
                assert_same(getattr(EF, fn)(ember.ones(2, 3), shape), want)
    assert norm_checks.normalized_shape_arg("layer_norm", (4, 5)) == (4, 5)


@pytest.mark.parametrize("x_dtype,w_dtype", [("float32", "float64"), ("float64", "float32"),
                                             ("bfloat16", "float32"), ("float32", "bfloat16")])
def test_rms_norm_with_a_weight_of_another_dtype_keeps_the_input_dtype(x_dtype, w_dtype):
    # (the values go through a mean of squares and rsqrt: float tolerance)
    x = torch.randn(3, 8, generator=torch.Generator().manual_seed(0)).to(getattr(torch, x_dtype))
    w = torch.linspace(0.5, 2.0, 8).to(getattr(torch, w_dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = F.rms_norm(x, (8,), w)
        got = EF.rms_norm(ember.tensor(x.float().numpy()).to(getattr(ember, x_dtype)), (8,),
                          ember.tensor(w.float().numpy()).to(getattr(ember, w_dtype)))
    assert_same(got, expected, rtol=1e-2 if "bfloat16" in (x_dtype, w_dtype) else 1e-5)


def test_rms_norm_dtype_mismatch_warns_once_per_process(monkeypatch):
    # PyTorch's TORCH_WARN_ONCE: the first mismatch warns, later ones (other dtypes too) do not
    monkeypatch.setattr(norm_checks, "_warned_mismatch", [])
    with pytest.warns(UserWarning) as record:
        EF.rms_norm(ember.ones(2, 4, dtype=ember.float64), (4,), ember.ones(4))
    assert [str(w.message) for w in record] == [
        "Mismatch dtype between input and weight: input dtype = double, weight dtype = float, "
        "Cannot dispatch to fused implementation."]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        EF.rms_norm(ember.ones(2, 4), (4,), ember.ones(4, dtype=ember.bfloat16))
        EF.rms_norm(ember.ones(2, 4) + 0j, (4,), ember.ones(4))  # complex: no fused path


# --- layer_norm's and group_norm's dtypes: the CPU kernels' "mixed dtype" rules --------------

NORM_DTYPES = [  # (input, weight, bias): None for no tensor
    ("float64", "float32", None), ("float64", None, "float32"), ("float32", "float64", None),
    ("float32", None, "float16"), ("float32", "float32", "float64"), ("float16", "float32", None),
    ("bfloat16", "float32", "float32"), ("float16", "float32", "float16"),
    ("float16", "float16", "float32"), ("int64", None, None), ("int64", "float32", None),
    ("int64", "int64", "float32"), ("bool", None, None), ("complex64", None, None),
    ("complex64", "float32", None), ("complex64", "complex64", "float32"),
    ("float64", "float64", None),
]


def _norm_call(fn, dtypes):
    x_d, w_d, b_d = dtypes

    def call(L):
        x = L.ones(2, 4, 3, dtype=getattr(L, x_d))
        w = None if w_d is None else L.ones(4 if fn == "group_norm" else 3, dtype=getattr(L, w_d))
        b = None if b_d is None else L.ones(4 if fn == "group_norm" else 3, dtype=getattr(L, b_d))
        if fn == "group_norm":
            return L.nn.functional.group_norm(x, 2, w, b)
        return L.nn.functional.layer_norm(x, (3,), w, b)
    return call


@pytest.mark.parametrize("fn", ["layer_norm", "group_norm"])
@pytest.mark.parametrize("dtypes", NORM_DTYPES, ids=str)
def test_affine_and_input_dtypes_as_torch(fn, dtypes):
    """Regression: a float64 input with float32 parameters (nn.LayerNorm on a .double()
    input) was normalised, where torch refuses; int and bool inputs crashed inside NumPy;
    complex ones were normalised."""
    call = _norm_call(fn, dtypes)
    try:
        want = call(torch)
    except (RuntimeError, NotImplementedError) as exc:
        with pytest.raises(type(exc)) as got:
            call(ember)
        assert str(got.value) == str(exc)
    else:
        # (normalisation reduces: the values are compared with a tolerance, the dtype exactly)
        assert_same(call(ember), want, rtol=1e-3, atol=1e-3)


def test_layer_norm_module_refuses_a_double_input():
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="mixed dtype"):
            lib.nn.LayerNorm(3)(lib.ones(2, 3, dtype=lib.float64))


def test_batch_norm_refuses_complex_inputs():
    same = [lambda L: L.nn.functional.batch_norm(L.ones(2, 3, dtype=L.complex64), None, None,
                                                 training=True),
            lambda L: L.nn.functional.instance_norm(L.ones(1, 2, 3, dtype=L.complex64))]
    for call in same:
        msgs = []
        for lib in (torch, ember):
            with pytest.raises(NotImplementedError) as err:
                call(lib)
            msgs.append(str(err.value))
        assert msgs[0] == msgs[1] == "\"batch_norm\" not implemented for 'ComplexFloat'"


@pytest.mark.parametrize("which", ["running_mean", "running_var"])
@pytest.mark.parametrize("training", [False, True])
def test_batch_norm_running_stats_that_require_grad_are_refused(which, training):
    # the statistics are not differentiable inputs of PyTorch's kernel: with grad mode on,
    # one that requires grad is refused (after the size checks), with grad mode off it runs
    def call(lib, enabled=True):
        stats = {"running_mean": lib.zeros(3), "running_var": lib.ones(3)}
        stats[which].requires_grad_()
        x = lib.arange(12.0).reshape(4, 3)
        with lib.set_grad_enabled(enabled):
            return lib.nn.functional.batch_norm(x, stats["running_mean"], stats["running_var"],
                                                training=training)

    assert torch_error(lambda: call(ember)) == torch_error(lambda: call(torch))
    got, want = call(ember, False), call(torch, False)
    # (exact small integers in, one rsqrt per channel: a few ulp of float32 apart at most)
    assert torch.allclose(torch.tensor(got.tolist()), want, rtol=1e-6, atol=1e-6)


def test_instance_norm_and_module_name_the_running_mean():
    def call(lib):
        x = lib.arange(24.0).reshape(2, 3, 4)
        return lib.nn.functional.instance_norm(x, lib.zeros(3, requires_grad=True), lib.ones(3),
                                               use_input_stats=False)

    def module_call(lib):
        bn = lib.nn.BatchNorm1d(3).eval()
        return lib.func.functional_call(bn, {"running_mean": lib.nn.Parameter(lib.ones(3))},
                                        (lib.ones(2, 3),))

    assert torch_error(lambda: call(ember)) == torch_error(lambda: call(torch))
    assert torch_error(lambda: module_call(ember)) == torch_error(lambda: module_call(torch))
    with pytest.raises(RuntimeError, match="should contain 3 elements not 5"):  # sizes first
        EF.batch_norm(ember.ones(4, 3), ember.zeros(5, requires_grad=True), ember.ones(3))


# --- batch_norm's and instance_norm's dtypes: the CPU kernel's "mixed dtype" rules ----------

BN_DTYPES = [  # (input, weight, bias, running statistics): None for no tensor
    ("float32", "float64", "float64", "float64"), ("float32", None, None, "float64"),
    ("float32", "float32", "float64", "bfloat16"), ("float32", "float32", None, "float64"),
    ("float32", None, "bfloat16", "float32"), ("float64", "float32", "float32", "float32"),
    ("float64", "float32", "float32", "float64"), ("float64", "float64", "float64", "float32"),
    ("bfloat16", "float32", "float32", "float32"), ("bfloat16", "float32", "float32", "float64"),
    ("float16", None, None, "float32"), ("bfloat16", "bfloat16", "bfloat16", "float32"),
    ("float16", "bfloat16", None, None), ("float16", "float32", "float16", None),
]


def _bn_call(dtypes, training, instance=False):
    x_d, w_d, b_d, s_d = dtypes

    def call(L):
        def vec(d, v):
            return None if d is None else L.full((3,), v, dtype=getattr(L, d))
        x = (L.arange(24.0).reshape(4, 3, 2) % 5).to(getattr(L, x_d))
        if instance:
            return L.nn.functional.instance_norm(x, vec(s_d, 0.5), vec(s_d, 2.0), vec(w_d, 1.5),
                                                 vec(b_d, 0.25), use_input_stats=training)
        return L.nn.functional.batch_norm(x, vec(s_d, 0.5), vec(s_d, 2.0), vec(w_d, 1.5),
                                          vec(b_d, 0.25), training=training)
    return call


@pytest.mark.parametrize("instance", [False, True], ids=["batch_norm", "instance_norm"])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("dtypes", BN_DTYPES, ids=str)
def test_batch_norm_operand_dtypes_as_torch(dtypes, training, instance):
    """Regression: batch_norm and instance_norm normalised a float32 input with float64
    parameters or statistics (BatchNorm1d(...).double() fed float32 data), where torch
    refuses; instance_norm of a bfloat16 input with float32 affine returned float32."""
    if dtypes[3] is None and not training:
        return
    call = _bn_call(dtypes, training, instance)
    try:
        want = call(torch)
    except RuntimeError as exc:
        assert torch_error(lambda: call(ember)) == str(exc)
    else:
        # (16-bit results: a last-bit rounding apart at most; the dtype compared exactly)
        assert_same(call(ember), want, rtol=1e-2, atol=1e-2)


def test_instance_norm_runs_one_batch_norm_as_torch():
    """Regression: instance_norm applied its affine after the batch norm (AddBackward0);
    torch runs one batch_norm with the affine repeated per sample, under a view."""
    def call(L):
        x = (L.arange(24.0).reshape(2, 3, 4) % 5).requires_grad_()
        w = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = L.tensor([0.5, 0.0, -1.0], requires_grad=True)
        y = L.nn.functional.instance_norm(x, weight=w, bias=b)
        (y * L.arange(24.0).reshape(2, 3, 4).cos()).sum().backward()
        return y, x.grad, w.grad, b.grad, y.grad_fn.name(), y.grad_fn.next_functions[0][0].name()

    got, want = call(ember), call(torch)
    assert got[4:] == want[4:] == ("ViewBackward0", "NativeBatchNormBackward0")
    for g, w in zip(got[:4], want[:4]):  # (a reduction over 4 values: a few float32 ulp)
        assert_same(g, w, rtol=1e-5, atol=1e-6)


def test_operands_on_another_device_are_named_as_torchs_kernels_name_them():
    # batch_norm (and instance_norm through it) checks every operand against the input's
    # device, nll_loss against the target's; layer_norm and group_norm against the input's.
    # A meta operand beside CPU ones stands for any second device.
    def calls(L):
        F_ = L.nn.functional
        x = L.ones(2, 3, 4)
        m = lambda *s: L.empty(*s, device="meta")  # noqa: E731
        yield "bn stats", lambda: F_.batch_norm(x, m(3), m(3))
        yield "bn stats training", lambda: F_.batch_norm(x, m(3), m(3), training=True)
        yield "bn weight", lambda: F_.batch_norm(x, L.zeros(3), L.ones(3), m(3))
        yield "bn input", lambda: F_.batch_norm(m(2, 3, 4), L.zeros(3), L.ones(3))
        yield "bn input training", lambda: F_.batch_norm(m(2, 3, 4), None, None, L.ones(3),
                                                         training=True)
        yield "bn stats dtype", lambda: F_.batch_norm(x, m(3).double(), m(3))
        yield "in stats", lambda: F_.instance_norm(x, m(3), m(3))
        yield "in stats eval", lambda: F_.instance_norm(x, m(3), m(3), use_input_stats=False)
        yield "in input", lambda: F_.instance_norm(m(2, 3, 4), L.zeros(3), L.ones(3))
        yield "in weight", lambda: F_.instance_norm(x, weight=m(3), bias=m(3))
        yield "ln weight", lambda: F_.layer_norm(x, (4,), m(4), m(4))
        yield "ln input", lambda: F_.layer_norm(m(2, 3, 4), (4,), L.ones(4), L.ones(4))
        yield "gn weight", lambda: F_.group_norm(x, 3, m(3), m(3))
        yield "gn input", lambda: F_.group_norm(m(2, 3, 4), 3, L.ones(3), L.ones(3))
        yield "nll target", lambda: F_.nll_loss(L.ones(2, 3), m(2).long())
        yield "nll input", lambda: F_.nll_loss(m(2, 3), L.tensor([0, 1]))
        yield "nll weight", lambda: F_.nll_loss(L.ones(2, 3), L.tensor([0, 1]), m(3))
        yield "nll 2d target", lambda: F_.nll_loss(L.ones(2, 3, 4, 4), m(2, 4, 4).long())
        yield "cross_entropy target", lambda: F_.cross_entropy(L.ones(2, 3), m(2).long())
        yield "BatchNorm1d", lambda: L.nn.BatchNorm1d(3).to("meta")(x)

    same_messages(calls)
