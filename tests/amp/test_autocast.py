"""Autocast's state against torch: the weight cache, nesting, the per-device flags and dtypes,
`custom_fwd`/`custom_bwd`, and the errors for device types autocast does not know."""

import pytest
import torch

import ember

from helpers import assert_same, same_message


def _train(m, steps: int = 3, **region):
    """A loop whose forward and optimizer step both sit inside one autocast region."""
    m.manual_seed(0)
    x = m.randn(4, 6)
    lin = m.nn.Linear(6, 1)
    opt = m.optim.SGD(lin.parameters(), lr=0.5)
    losses = []
    with m.autocast("cpu", dtype=m.bfloat16, **region):
        for _ in range(steps):
            opt.zero_grad()
            loss = lin(x).float().pow(2).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    return losses, lin.weight.detach()


@pytest.mark.parametrize("region", [{}, {"cache_enabled": False}, {"cache_enabled": True}])
def test_weight_cache_holds_the_low_precision_copy_for_the_region(region):
    # NOTE: with the cache, torch reuses the bfloat16 copy of each parameter made at the first
    # step, so the loss stays put although the float32 weights move; without it they agree.
    (got, w_e), (want, w_t) = _train(ember, **region), _train(torch, **region)
    assert got == pytest.approx(want, rel=1e-3)
    assert_same(w_e, w_t, 1e-3, 1e-3)
    if region.get("cache_enabled", True):
        assert got[0] == got[1] == got[2]


def _cache_rule(m):
    """Which casts come from the cache: float32 leaves requiring grad only, cleared when the
    outermost region exits or on `clear_autocast_cache`, skipped with the cache disabled."""
    w = m.ones(2, 2, requires_grad=True)
    plain = m.ones(2, 2)
    view = w[:1]
    out = []
    with m.autocast("cpu"):
        a = m.mm(w, w)
        out.append(a.grad_fn.next_functions[0][0] is m.mm(w, w).grad_fn.next_functions[0][0])
        with m.autocast("cpu", enabled=False):
            pass  # an inner region leaves the cache alone
        out.append(a.grad_fn.next_functions[0][0] is m.mm(w, w).grad_fn.next_functions[0][0])
        w.data.mul_(2)  # the cached copy does not see it
        out.append(m.mm(w, w).sum().item())
        m.clear_autocast_cache()
        out.append(m.mm(w, w).sum().item())
        with m.autocast("cpu", cache_enabled=False):
            out.append(m.is_autocast_cache_enabled())
            w.data.mul_(2)
            out.append(m.mm(w, w).sum().item())
        out.append(m.is_autocast_cache_enabled())
        out.append(m.mm(plain, plain).dtype == m.bfloat16)
        out.append(m.mm(view, w).sum().item())
    with m.autocast("cpu"):
        out.append(m.mm(w, w).sum().item())  # a fresh region casts afresh
    return out


def test_which_casts_the_cache_keeps_matches_torch():
    assert _cache_rule(ember) == _cache_rule(torch)


def _state(m):
    out = [m.is_autocast_enabled(), m.is_autocast_enabled("cpu"), m.is_autocast_cache_enabled(),
           str(m.get_autocast_dtype("cpu")), str(m.get_autocast_dtype("cuda")),
           str(m.get_autocast_dtype("xpu")), str(m.get_autocast_dtype("hpu")),
           m.autocast_increment_nesting(), m.autocast_increment_nesting(),
           m.autocast_decrement_nesting(), m.autocast_decrement_nesting()]
    m.set_autocast_enabled("cpu", True)
    out.append(str(m.mm(m.ones(2, 2), m.ones(2, 2)).dtype))
    m.set_autocast_dtype("cpu", m.float16)
    out.append(str(m.mm(m.ones(2, 2), m.ones(2, 2)).dtype))
    m.set_autocast_dtype("cpu", m.bfloat16)
    m.set_autocast_enabled("cpu", False)
    m.set_autocast_enabled("xpu", True)
    out.append(m.is_autocast_enabled("xpu"))
    m.set_autocast_enabled("xpu", False)
    m.set_autocast_cache_enabled(False)
    out.append(m.is_autocast_cache_enabled())
    m.set_autocast_cache_enabled(True)
    with m.autocast("cpu", dtype=m.float16):
        out += [m.is_autocast_enabled("cpu"), str(m.get_autocast_dtype("cpu")),
                m.amp.is_autocast_available("cpu"), m.amp.is_autocast_available("mps")]
    out.append(m.is_autocast_enabled("cpu"))
    return [str(o).replace("torch.", "").replace("ember.", "") for o in out]


def test_state_functions_match_torch():
    assert _state(ember) == _state(torch)


@pytest.mark.parametrize("device", ["tpu", "foo", "", "meta", "hip"])
def test_unknown_device_types_raise_torchs_error(device):
    same_message(lambda m: m.autocast(device))
    same_message(lambda m: m.autocast(device, dtype=m.bfloat16))


def test_unknown_device_type_message_names_the_known_ones():
    msg = same_message(lambda m: m.autocast("tpu"))
    assert msg.startswith("Expected one of cpu, cuda, ") and msg.endswith("device string: tpu")


def _custom(m):
    log = []

    class Fp32Mm(m.autograd.Function):
        @staticmethod
        @m.amp.custom_fwd(device_type="cpu", cast_inputs=m.float32)
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            log.append(("fwd", str(a.dtype), str(b.dtype), m.is_autocast_enabled("cpu")))
            return a.mm(b)

        @staticmethod
        @m.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            log.append(("bwd", str(g.dtype), m.is_autocast_enabled("cpu")))
            return g.mm(b.t()), a.t().mm(g)

    class Square(m.autograd.Function):
        @staticmethod
        @m.amp.custom_fwd(device_type="cpu")
        def forward(ctx, a):
            return a.mm(a)

        @staticmethod
        @m.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            log.append(("sq bwd", str(g.dtype), m.is_autocast_enabled("cpu"),
                        str(m.get_autocast_dtype("cpu"))))
            return g

    a = m.ones(2, 2, dtype=m.bfloat16, requires_grad=True)
    b = m.full((2, 2), 0.5, requires_grad=True)
    with m.autocast("cpu"):
        y = Fp32Mm.apply(a, b)
        z = Square.apply(b)
    log += [str(y.dtype), str(z.dtype)]
    (y.float().sum() + z.float().sum()).backward()
    log += [str(a.grad.dtype), str(b.grad.dtype), b.grad.sum().item()]
    log.append(str(Fp32Mm.apply(a.float(), b).dtype))  # outside a region: no cast
    return [str(x).replace("torch.", "").replace("ember.", "") for x in log]


def test_custom_fwd_casts_inputs_and_custom_bwd_restores_the_state():
    assert _custom(ember) == _custom(torch)


def test_custom_fwd_needs_a_device_type():
    for m in (ember, torch):
        with pytest.raises(TypeError, match="device_type"):
            m.amp.custom_fwd(lambda ctx: 0)
        with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
            m.amp.custom_bwd(device_type=1)


def test_autocast_decorator_rejects_a_non_callable():
    same_message(lambda m: m.autocast("cpu")(3), TypeError)
