"""torch.nn.attention: SDPBackend, sdpa_kernel and the switches it sets, against torch."""

import warnings

import pytest
import torch
from torch.nn import attention as TA

import ember
from ember.backends import cuda as flags
from ember.nn import attention as EA


def test_backend_enum_matches():
    assert [(b.name, b.value) for b in EA.SDPBackend] == \
        [(n, int(v)) for n, v in TA.SDPBackend.__members__.items()]
    for b in EA.SDPBackend:
        t = getattr(TA.SDPBackend, b.name)
        assert repr(b) == repr(t) and str(b) == str(t) and int(b) == int(t)
    assert (EA.SDPBackend.MATH == 0) == (TA.SDPBackend.MATH == 0)


def _switches(mod):
    c = mod.backends.cuda
    return (c.flash_sdp_enabled(), c.mem_efficient_sdp_enabled(), c.math_sdp_enabled(),
            c.cudnn_sdp_enabled())


@pytest.mark.parametrize("names", [["FLASH_ATTENTION"], ["MATH"], [], ["MATH", "CUDNN_ATTENTION"],
                                   ["EFFICIENT_ATTENTION", "MATH", "MATH"]])
def test_sdpa_kernel_sets_and_restores_switches(names):
    assert _switches(ember) == _switches(torch)
    with TA.sdpa_kernel([getattr(TA.SDPBackend, n) for n in names]):
        want = _switches(torch), [b.name for b in TA._cur_sdpa_kernel_backends()]
    with EA.sdpa_kernel([getattr(EA.SDPBackend, n) for n in names]) as ctx:
        got = _switches(ember), [b.name for b in EA._cur_sdpa_kernel_backends()]
        assert ctx == {}
    assert got == want
    assert _switches(ember) == _switches(torch)


def test_sdpa_kernel_priority_restored():
    before = list(flags.SDP_PRIORITY)
    with TA.sdpa_kernel([TA.SDPBackend.MATH, TA.SDPBackend.CUDNN_ATTENTION], set_priority=True):
        want = torch._C._get_sdp_priority_order()
        want_cur = [b.name for b in TA._cur_sdpa_kernel_backends(with_priority=True)]
    with EA.sdpa_kernel([EA.SDPBackend.MATH, EA.SDPBackend.CUDNN_ATTENTION], set_priority=True):
        assert flags.SDP_PRIORITY == list(want)
        assert [b.name for b in EA._cur_sdpa_kernel_backends(with_priority=True)] == want_cur
    assert flags.SDP_PRIORITY == before == list(torch._C._get_sdp_priority_order())


@pytest.mark.parametrize("arg", [3, "MATH", (0,)])
def test_sdpa_kernel_refuses_non_backends(arg):
    with pytest.raises(AssertionError) as want:
        with TA.sdpa_kernel(arg):
            pass
    with pytest.raises(AssertionError) as got:
        with EA.sdpa_kernel(arg):
            pass
    assert str(got.value) == str(want.value)


def _torch_outcome(names, **kw):
    q = torch.randn(1, 2, 3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with TA.sdpa_kernel([getattr(TA.SDPBackend, n) for n in names]):
                torch.nn.functional.scaled_dot_product_attention(q, q, q, **kw)
            return None
        except RuntimeError as e:
            return str(e)


@pytest.mark.parametrize("names", [["FLASH_ATTENTION"], ["MATH"], ["EFFICIENT_ATTENTION"],
                                   ["CUDNN_ATTENTION", "OVERRIDEABLE"], ["ERROR"]])
@pytest.mark.parametrize("dropout", [0.0, 0.5])
def test_cpu_backend_choice_matches_torch(names, dropout):
    # the fused kernel fits 4-D inputs without dropout: choose_cpu_backend's verdict on
    # whether the call can run, and its message, are torch's
    want = _torch_outcome(names, dropout_p=dropout)
    with EA.sdpa_kernel([getattr(EA.SDPBackend, n) for n in names]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                EA.choose_cpu_backend(dropout == 0.0)
                got = None
            except RuntimeError as e:
                got = str(e)
    assert got == want


def test_backends_cuda_switches_round_trip():
    for name in ("flash", "mem_efficient", "math", "cudnn"):
        getattr(ember.backends.cuda, f"enable_{name}_sdp")(False)
        assert flags.SDP_ENABLED[name] is False
        getattr(ember.backends.cuda, f"enable_{name}_sdp")(True)
    assert _switches(ember) == (True, True, True, True)


@pytest.mark.parametrize("backend", ["FLASH_ATTENTION", "MATH"])
def test_sdpa_kernel_picks_the_kernel_scaled_dot_product_attention_runs(backend):
    """Under sdpa_kernel the choice is torch's: the flash kernel's node (or the composite's
    under MATH), and "No available kernel" where the only backend allowed cannot run."""
    import importlib

    import torch

    names, refusals = [], []
    for m in (ember, torch):
        att = importlib.import_module(m.__name__ + ".nn.attention")
        q = m.ones(1, 2, 4, 8, requires_grad=True)
        with att.sdpa_kernel(getattr(att.SDPBackend, backend)):
            out = m.nn.functional.scaled_dot_product_attention(q, q, q)
            names.append(type(out.grad_fn).__name__ if m is torch else out.grad_fn.name())
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    m.nn.functional.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
                    refusals.append(None)
                except RuntimeError as e:
                    refusals.append(str(e))
    assert names[0] == names[1] and refusals[0] == refusals[1]
