"""`torch.ops.aten` against torch in-process: the packets' and overloads' names, reprs and
schemas, calls with ATen's argument conventions (values, dtypes, several outputs,
gradients), and the errors of a call no schema fits or a name ATen does not have."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, rand_array


def _op(m, path: str):
    """`m.ops.aten.<name>[.<overload>]`."""
    op = m.ops.aten
    for part in path.split("."):
        op = getattr(op, part)
    return op


NAMED = ["mm", "add.Tensor", "add.Scalar", "sum.dim_IntList", "native_layer_norm.default",
         "view.default", "split.Tensor", "convolution.default", "empty.memory_format",
         "_scaled_dot_product_flash_attention_for_cpu.default", "copy_.default"]


@pytest.mark.parametrize("path", NAMED)
def test_names_reprs_and_schemas_match_torch(path):
    e, t = _op(ember, path), _op(torch, path)
    assert (str(e), repr(e)) == (str(t), repr(t))
    packet_e = e if "." not in path else e.overloadpacket
    packet_t = t if "." not in path else t.overloadpacket
    assert (str(packet_e), repr(packet_e)) == (str(packet_t), repr(packet_t))
    assert type(packet_e).__name__ == type(packet_t).__name__ == "OpOverloadPacket"
    if "." in path:
        assert (e.name(), str(e._schema), e.__name__, e.namespace, e.is_view) == \
            (t.name(), str(t._schema), t.__name__, t.namespace, t.is_view)
        assert type(e).__name__ == type(t).__name__ == "OpOverload"


def test_every_overload_here_has_torchs_schema_and_packets_are_singletons():
    space = ember.ops.aten
    for name, packet in space._ops.items():
        assert getattr(space, name) is packet
        for overload in packet.overloads():
            op = getattr(packet, overload)
            assert op.overloadpacket is packet
            assert str(op._schema) == str(getattr(getattr(torch.ops.aten, name), overload)._schema)


def test_unknown_names_raise_torchs_attribute_errors():
    for m in (ember, torch):
        with pytest.raises(AttributeError) as info:
            _ = m.ops.aten.nope
        assert str(info.value) == "'_OpNamespace' 'aten' object has no attribute 'nope'"
        with pytest.raises(AttributeError) as info:
            _ = m.ops.aten.mm.nope
        assert str(info.value) == "The underlying op of 'aten.mm' has no overload name 'nope'"


def test_a_call_with_missing_arguments_raises_torchs_message():
    messages = []
    for m in (ember, torch):
        with pytest.raises(RuntimeError) as info:
            m.ops.aten.mm.default(m.ones(2, 3))
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    with pytest.raises(RuntimeError, match="failed to match any schema:\naten::mm\\(\\) is "
                       "missing value for argument 'mat2'"):
        ember.ops.aten.mm(ember.ones(2, 3))


def _t(m, shape, seed=0, dtype=np.float32, low=-2.0, high=2.0):
    return m.tensor(rand_array(shape, dtype, low, high, seed))


def _i(m, values):
    return m.tensor(np.array(values, dtype=np.int64))


# (path, args(m) -> (args, kwargs)); products and transcendental functions run NumPy's and
# PyTorch's own kernels, so values agree to assert_same's float32 tolerance, not bitwise
CALLS = [
    ("mm", lambda m: ((_t(m, (2, 3)), _t(m, (3, 4), 1)), {})),
    ("addmm", lambda m: ((_t(m, (4,)), _t(m, (2, 3)), _t(m, (3, 4), 1)),
                         {"beta": 0.5, "alpha": 2})),
    ("bmm", lambda m: ((_t(m, (2, 2, 3)), _t(m, (2, 3, 4), 1)), {})),
    ("matmul", lambda m: ((_t(m, (5, 2, 3)), _t(m, (3,), 1)), {})),
    ("add.Tensor", lambda m: ((_t(m, (2, 3)), _t(m, (3,), 1)), {"alpha": 3})),
    ("add.Scalar", lambda m: ((_t(m, (2, 3)), 2.5, 2), {})),
    ("add", lambda m: ((_i(m, [1, 2]), 3), {})),
    ("sub.Scalar", lambda m: ((_i(m, [1, 2]), 3, 2), {})),
    ("mul.Tensor", lambda m: ((_t(m, (2, 3)), _t(m, (2, 3), 1)), {})),
    ("div.Tensor_mode", lambda m: ((_t(m, (2, 3)), _t(m, (2, 3), 1)),
                                   {"rounding_mode": "floor"})),
    ("div.Scalar", lambda m: ((_i(m, [3, 4]), 2), {})),
    ("rsub.Scalar", lambda m: ((_t(m, (3,)), 1.0), {})),
    ("pow.Scalar", lambda m: ((2.0, _t(m, (3,))), {})),
    ("relu", lambda m: ((_t(m, (2, 3)),), {})),
    ("gelu", lambda m: ((_t(m, (2, 3)),), {"approximate": "tanh"})),
    ("silu", lambda m: ((_t(m, (2, 3)),), {})),
    ("sigmoid", lambda m: ((_t(m, (2, 3)),), {})),
    ("tanh", lambda m: ((_t(m, (2, 3)),), {})),
    ("exp", lambda m: ((_t(m, (2, 3)),), {})),
    ("log", lambda m: ((_t(m, (2, 3), low=0.1),), {})),
    ("sum.default", lambda m: ((_i(m, [1, 2, 3]),), {"dtype": m.float64})),
    ("sum.dim_IntList", lambda m: ((_t(m, (2, 3, 4)), [0, 2], True), {})),
    ("sum.dim_IntList", lambda m: ((_t(m, (2, 3)), []), {})),
    ("sum.dim_IntList", lambda m: ((_t(m, (2, 3)), None), {})),
    ("mean.dim", lambda m: ((_t(m, (2, 3, 4)), [-1]), {})),
    ("amax", lambda m: ((_t(m, (2, 3)),), {})),
    ("amax", lambda m: ((_t(m, (2, 3)), [1], True), {})),
    ("var.correction", lambda m: ((_t(m, (2, 3)), [1]), {"correction": 0})),
    ("softmax.int", lambda m: ((_t(m, (2, 3)), 1), {"dtype": m.float64})),
    ("_softmax", lambda m: ((_t(m, (2, 3)), 0, False), {})),
    ("log_softmax.int", lambda m: ((_t(m, (2, 3)), -1), {})),
    ("_log_softmax", lambda m: ((_t(m, (2, 3)), 1, False), {})),
    ("view", lambda m: ((_t(m, (2, 6)), [3, 4]), {})),
    ("view.dtype", lambda m: ((_t(m, (2, 2)), m.int32), {})),
    ("reshape", lambda m: ((_t(m, (2, 6)).t(), [-1]), {})),
    ("_unsafe_view", lambda m: ((_t(m, (2, 6)), [4, 3]), {})),
    ("permute", lambda m: ((_t(m, (2, 3, 4)), [2, 0, 1]), {})),
    ("t", lambda m: ((_t(m, (2, 3)),), {})),
    ("transpose.int", lambda m: ((_t(m, (2, 3, 4)), 0, 2), {})),
    ("expand", lambda m: ((_t(m, (3, 1)), [2, 3, 4]), {})),
    ("clone", lambda m: ((_t(m, (2, 3)).t(),), {})),
    ("detach", lambda m: ((_t(m, (2, 3)),), {})),
    ("unsqueeze", lambda m: ((_t(m, (2, 3)), -1), {})),
    ("squeeze", lambda m: ((_t(m, (2, 1, 3, 1)),), {})),
    ("squeeze.dim", lambda m: ((_t(m, (2, 1, 3)), 1), {})),
    ("select.int", lambda m: ((_t(m, (2, 3)), 1, -1), {})),
    ("slice.Tensor", lambda m: ((_t(m, (4, 6)), 1, 1, None, 2), {})),
    ("slice.Tensor", lambda m: ((_t(m, (4, 6)),), {"end": 3})),
    ("cat", lambda m: (([_t(m, (2, 3)), _t(m, (1, 3), 1)],), {})),
    ("stack", lambda m: (([_t(m, (2, 3)), _t(m, (2, 3), 1)], 1), {})),
    ("split.Tensor", lambda m: ((_t(m, (5, 2)), 2), {})),
    ("index_select", lambda m: ((_t(m, (4, 3)), 0, _i(m, [3, 0, 3])), {})),
    ("gather", lambda m: ((_t(m, (3, 4)), 1, _i(m, [[0, 3], [1, 1], [2, 0]])), {})),
    ("scatter.src", lambda m: ((m.zeros(3, 4), 1, _i(m, [[0], [3], [1]]), _t(m, (3, 1))), {})),
    ("scatter.value", lambda m: ((m.zeros(3, 4), 1, _i(m, [[0], [3], [1]]), 2.5), {})),
    ("scatter_add", lambda m: ((m.zeros(3, 4), 1, _i(m, [[0, 0], [3, 1], [1, 1]]),
                                _t(m, (3, 2))), {})),
    ("index.Tensor", lambda m: ((_t(m, (4, 5)), [None, _i(m, [4, 0])]), {})),
    ("embedding", lambda m: ((_t(m, (5, 3)), _i(m, [[4, 0], [2, 2]])), {})),
    ("embedding", lambda m: ((_t(m, (5, 3)), _i(m, [1, 4]), 4), {})),
    ("where.self", lambda m: ((_t(m, (2, 3)) > 0, _t(m, (2, 3), 1), _t(m, (3,), 2)), {})),
    ("masked_fill.Scalar", lambda m: ((_t(m, (2, 3)), _t(m, (3,), 1) > 0, -1.0), {})),
    ("masked_fill.Tensor", lambda m: ((_t(m, (2, 3)), _t(m, (3,), 1) > 0, m.tensor(7.0)), {})),
    ("zeros", lambda m: (([2, 3],), {"dtype": m.int32})),
    ("ones", lambda m: (([2],), {})),
    ("full", lambda m: (([2, 2], 3), {})),
    ("full", lambda m: (([2], 1.5), {"dtype": m.float64, "device": "cpu"})),
    ("arange.start", lambda m: ((1, 7), {"dtype": m.float32})),
    ("_to_copy", lambda m: ((_t(m, (2, 3)),), {"dtype": m.float64})),
    ("linear", lambda m: ((_t(m, (2, 3)), _t(m, (4, 3), 1), _t(m, (4,), 2)), {})),
    ("addcmul", lambda m: ((_t(m, (3,)), _t(m, (3,), 1), _t(m, (3,), 2)), {"value": 0.5})),
    ("eq.Scalar", lambda m: ((_i(m, [1, 2, 1]), 1), {})),
    ("convolution", lambda m: ((_t(m, (2, 3, 6, 5)), _t(m, (4, 3, 3, 2), 1), _t(m, (4,), 2),
                                [2, 1], [1, 0], [1, 1], False, [0, 0], 1), {})),
    ("convolution", lambda m: ((_t(m, (1, 4, 5)), _t(m, (4, 3, 3), 1), None, [2], [1], [1],
                                True, [1], 2), {})),
    ("native_layer_norm", lambda m: ((_t(m, (2, 3, 4)), [4], _t(m, (4,), 1), _t(m, (4,), 2),
                                      1e-5), {})),
    ("native_batch_norm", lambda m: ((_t(m, (4, 3, 2)), _t(m, (3,), 1), None, m.zeros(3),
                                      m.ones(3), True, 0.1, 1e-5), {})),
    ("native_dropout", lambda m: ((_t(m, (3, 4)), 0.25, False), {})),
    ("scaled_dot_product_attention", lambda m: ((_t(m, (2, 3, 4)), _t(m, (2, 5, 4), 1),
                                                 _t(m, (2, 5, 4), 2)), {"scale": 0.3})),
    ("clamp", lambda m: ((_t(m, (2, 3)), -0.5), {})),
    ("clamp_min", lambda m: ((_i(m, [1, 5]), 2), {})),
    ("max", lambda m: ((_t(m, (2, 3)),), {})),
    ("max.dim", lambda m: ((_t(m, (2, 3)), 1, True), {})),
    ("min.dim", lambda m: ((_t(m, (2, 3)), 0), {})),
    ("argmax", lambda m: ((_t(m, (2, 3)),), {"dim": 1})),
    ("softplus", lambda m: ((_t(m, (2, 3)), 2, 1), {})),
    ("leaky_relu", lambda m: ((_t(m, (2, 3)), 0.2), {})),
    ("hardtanh", lambda m: ((_t(m, (2, 3)), -0.5, 0.5), {})),
    ("elu", lambda m: ((_t(m, (2, 3)), 1.5), {})),
    ("elu", lambda m: ((_t(m, (2, 3)), 1.5, 2, 0.5), {})),
    ("logsumexp", lambda m: ((_t(m, (2, 3)), [1]), {})),
    ("tril", lambda m: ((_t(m, (3, 3)), -1), {})),
    ("topk", lambda m: ((_t(m, (2, 5)), 2), {})),
    ("sort", lambda m: ((_t(m, (2, 5)), 1, True), {})),
    ("cumsum", lambda m: ((_i(m, [1, 2, 3]), 0), {"dtype": m.float32})),
    ("minimum", lambda m: ((_t(m, (2, 3)), _t(m, (3,), 1)), {})),
    ("mse_loss", lambda m: ((_t(m, (2, 3)), _t(m, (2, 3), 1)), {})),
    ("mse_loss", lambda m: ((_t(m, (2, 3)), _t(m, (2, 3), 1), 0), {})),
    ("binary_cross_entropy_with_logits", lambda m: ((_t(m, (2, 3)), _t(m, (2, 3), 1, low=0.0,
                                                     high=1.0), None, _t(m, (3,), 2, low=0.5),
                                                     2), {})),
    ("nll_loss_forward", lambda m: ((_t(m, (3, 4)), _i(m, [0, -100, 2]), None, 1, -100), {})),
    ("nll_loss_forward", lambda m: ((_t(m, (3, 4)), _i(m, [0, -100, 2]), None, 0, -100), {})),
    ("nll_loss_forward", lambda m: ((_t(m, (3, 4)), _i(m, [0, 3, 3]), _t(m, (4,), 1, low=0.5),
                                     2, 3), {})),
    ("max_pool2d_with_indices", lambda m: ((_t(m, (1, 2, 5, 5)), [2, 2]), {})),
    ("max_pool2d_with_indices", lambda m: ((_t(m, (1, 2, 5, 5)), [3, 3], [2, 1], 1), {})),
    ("avg_pool2d", lambda m: ((_t(m, (1, 2, 5, 5)), [2, 2]), {"ceil_mode": True})),
    ("native_group_norm", lambda m: ((_t(m, (2, 4, 3)), _t(m, (4,), 1), None, 2, 4, 3, 2,
                                      1e-5), {})),
    ("zeros_like", lambda m: ((_t(m, (2, 3)),), {"dtype": m.int64})),
    ("full_like", lambda m: ((_t(m, (2, 3)), 7), {})),
    ("constant_pad_nd", lambda m: ((_t(m, (2, 3)), [1, 2]), {"value": -1.0})),
    ("repeat", lambda m: ((_t(m, (2, 3)), [2, 1, 2]), {})),
    ("flip", lambda m: ((_t(m, (2, 3)), [0, 1]), {})),
    ("roll", lambda m: ((_t(m, (2, 3)), [1]), {})),
    ("roll", lambda m: ((_t(m, (2, 3)), [1, -1], [0, 1]), {})),
    ("unbind.int", lambda m: ((_t(m, (2, 3)), 1), {})),
    ("contiguous", lambda m: ((_t(m, (2, 3)).t(),), {})),
    ("index_add", lambda m: ((m.zeros(3, 2), 0, _i(m, [2, 2]), _t(m, (2, 2))), {"alpha": 2})),
    ("alias", lambda m: ((_t(m, (2, 3)),), {})),
    ("add_.Tensor", lambda m: ((_t(m, (2, 3)), _t(m, (3,), 1)), {"alpha": 2})),
    ("mul_.Tensor", lambda m: ((_t(m, (2, 3)), _t(m, (3,), 1)), {})),
    ("div_.Scalar", lambda m: ((_t(m, (2, 3)), 4), {})),
    ("fill_.Scalar", lambda m: ((_t(m, (2, 3)), 2), {})),
    ("zero_", lambda m: ((_t(m, (2, 3)),), {})),
    ("masked_fill_.Scalar", lambda m: ((_t(m, (2, 3)), _t(m, (3,), 1) > 0, 9), {})),
    ("index_put_", lambda m: ((m.zeros(4), [_i(m, [1, 1, 3])], m.ones(3), True), {})),
    # a Python number standing for a Tensor, where PyTorch allows it: it promotes as a
    # wrapped number (int tensor * 2.5 is float32, not float64)
    ("add.Tensor", lambda m: ((_t(m, (2, 3)), 2), {})),
    ("mul.Tensor", lambda m: ((_i(m, [1, 2]), 2.5), {})),
    ("sub.Tensor", lambda m: ((3, _i(m, [1, 2])), {"alpha": 2})),
    ("div", lambda m: ((_i(m, [3, 4]), 2), {"rounding_mode": "floor"})),
    ("copy_", lambda m: ((m.zeros(2, 3), 2.0), {})),
    ("sum", lambda m: ((_t(m, (2, 3)), 1), {})),
    ("where", lambda m: ((_t(m, (2, 3)) > 0, _t(m, (2, 3), 1), 0.0), {})),
    ("where.Scalar", lambda m: ((_t(m, (2, 3)) > 0, 1.0, 0), {})),
    ("max.other", lambda m: ((_t(m, (2, 3)), _t(m, (3,), 1)), {})),
    ("max", lambda m: ((_t(m, (2, 3)), 0), {})),
    ("scatter_reduce.two", lambda m: ((m.ones(3), 0, _i(m, [0, 0, 2]), _t(m, (3,)), "amax"),
                                      {"include_self": False})),
    ("scatter.value_reduce", lambda m: ((m.ones(3), 0, _i(m, [0, 0]), 2.0),
                                        {"reduce": "multiply"})),
    ("ge.Tensor", lambda m: ((_t(m, (2, 3)), _t(m, (3,), 1)), {})),
    ("le.Scalar", lambda m: ((_i(m, [1, 2, 3]), 2), {})),
    ("bitwise_and.Tensor", lambda m: ((_i(m, [6, 3]), _i(m, [3, 3])), {})),
    ("bitwise_not", lambda m: ((_i(m, [6, -3]),), {})),
    ("logical_not", lambda m: ((_t(m, (3,)),), {})),
    ("argmin", lambda m: ((_t(m, (2, 3)), 0, True), {})),
    ("any", lambda m: ((_i(m, [0, 0, 1]),), {})),
    ("std.correction", lambda m: ((_t(m, (2, 3)), 1), {"keepdim": True})),
    ("nonzero", lambda m: ((_i(m, [[0, 1], [2, 0]]),), {})),
]


@pytest.mark.parametrize("path, make", CALLS, ids=[c[0] for c in CALLS])
def test_calls_with_aten_conventions_match_torch(path, make):
    args_e, kw_e = make(ember)
    args_t, kw_t = make(torch)
    assert_same(_op(ember, path)(*args_e, **kw_e), _op(torch, path)(*args_t, **kw_t))


def test_empty_takes_atens_keywords():
    for m in (ember, torch):
        x = m.ops.aten.empty.memory_format([2, 3], dtype=m.float64, device="cpu",
                                           pin_memory=False)
        assert (tuple(x.shape), str(x.dtype).split(".")[1]) == ((2, 3), "float64")


def test_copy_writes_into_its_first_argument():
    out = []
    for m in (ember, torch):
        dst = m.zeros(2, 3)
        got = m.ops.aten.copy_.default(dst, m.arange(3.0))
        assert got is dst
        out.append(dst)
    assert_same(out[0], out[1])


def test_half_to_float_softmax_refused_as_on_torchs_cpu():
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match="softmax with half to float conversion is not "
                           "supported on CPU"):
            m.ops.aten._softmax(m.ones(3), 0, True)


def test_bernoulli_draws_torchs_stream():
    # the RNG stream is torch's: bit for bit
    out = []
    for m in (ember, torch):
        m.manual_seed(5)
        p = m.linspace(0, 1, 7)
        out.append((m.ops.aten.bernoulli(p), m.ops.aten.bernoulli.p(p, 0.3)))
    assert_same(out[0], out[1], rtol=0, atol=0)


def test_native_dropout_draws_torchs_mask():
    # the RNG stream is torch's, so the mask and scaled output agree bit for bit
    out = []
    for m in (ember, torch):
        m.manual_seed(3)
        out.append(m.ops.aten.native_dropout(m.ones(4, 5), 0.4, True))
    assert_same(out[0], out[1], rtol=0, atol=0)


def test_flash_attention_for_cpu_returns_output_and_logsumexp():
    for causal in (False, True):
        outs = []
        for m in (ember, torch):
            q, k, v = _t(m, (1, 2, 3, 4)), _t(m, (1, 2, 5, 4), 1), _t(m, (1, 2, 5, 4), 2)
            outs.append(m.ops.aten._scaled_dot_product_flash_attention_for_cpu(
                q, k, v, is_causal=causal))
        # both are float32 sums of exponentials in different orders: a few ulp apart
        assert_same(outs[0], outs[1], rtol=1e-5, atol=1e-6)


def test_flash_attention_backward_gives_torchs_gradients():
    outs = []
    for m in (ember, torch):
        q, k, v = _t(m, (1, 2, 3, 4)), _t(m, (1, 2, 5, 4), 1), _t(m, (1, 2, 5, 4), 2)
        out, lse = m.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v)
        g = _t(m, (1, 2, 3, 4), 3)
        outs.append(m.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward(
            g, q, k, v, out, lse, 0.0, False))
    assert_same(outs[0], outs[1], rtol=1e-5, atol=1e-6)  # (float32 sums in other orders)


@pytest.mark.parametrize("transposed, mask", [(False, [True, True, True]),
                                              (False, [True, False, False]),
                                              (True, [False, True, True])])
def test_convolution_backward_gives_the_masked_gradients(transposed, mask):
    outs = []
    for m in (ember, torch):
        x = _t(m, (2, 4, 6))
        w = _t(m, (4, 3, 3), 1) if transposed else _t(m, (3, 4, 3), 1)
        y = m.ops.aten.convolution(x, w, None, [1], [1], [1], transposed, [0], 1)
        g = _t(m, tuple(y.shape), 2)
        outs.append(m.ops.aten.convolution_backward(
            g, x, w, [3], [1], [1], [1], transposed, [0], 1, mask))
    assert [o is None for o in outs[0]] == [o is None for o in outs[1]]
    assert_same([o for o in outs[0] if o is not None], [o for o in outs[1] if o is not None])


def test_gradients_flow_through_aten_calls():
    grads = []
    for m in (ember, torch):
        a = _t(m, (2, 3)).requires_grad_()
        b = _t(m, (3, 4), 1).requires_grad_()
        out, mean, rstd = m.ops.aten.native_layer_norm(m.ops.aten.mm(a, b), [4], None, None,
                                                       1e-5)
        m.ops.aten.gelu(out).sum().backward()
        grads.append((a.grad, b.grad))
    assert_same(grads[0], grads[1], rtol=1e-5, atol=1e-6)  # (float32, other summation orders)


def test_flop_counter_mapping_keys_are_the_aten_packets():
    def count(m):
        from importlib import import_module

        fc = import_module(f"{m.__name__}.utils.flop_counter")
        with fc.FlopCounterMode(display=False,
                                custom_mapping={m.ops.aten.mm: lambda *a, **k: 7}) as c:
            m.ones(2, 3) @ m.ones(3, 4)
        (key,) = c.get_flop_counts()["Global"]
        return key is m.ops.aten.mm, c.get_total_flops()

    assert count(ember) == count(torch) == (True, 7)


@pytest.mark.parametrize("path, make", [
    ("exp.default", lambda m: (2.0,)),  # (only arithmetic and copies take a number)
    ("eq.Tensor", lambda m: (m.ones(2), 1)),
    ("masked_fill.Tensor", lambda m: (m.ones(2), m.ones(2) > 0, 2.0)),
    ("expand.default", lambda m: (m.ones(1), 3)),  # (a SymInt[] takes no single int)
    ("zeros", lambda m: (2,)),
    ("mm", lambda m: (2, m.ones(2, 2))),
])
def test_refused_calls_raise_torchs_first_line(path, make):
    lines = []
    for m in (ember, torch):
        with pytest.raises(RuntimeError) as info:
            _op(m, path)(*make(m))
        lines.append(str(info.value).splitlines()[0])
    assert lines[0] == lines[1]


def test_aten_ops_compose_with_transforms_and_meta():
    out = []
    for m in (ember, torch):
        a, b, x = _t(m, (5, 2, 3)), _t(m, (3, 4), 1), _t(m, (3,), 2)
        batched = m.func.vmap(m.ops.aten.mm.default, in_dims=(0, None))(a, b)
        g = m.func.grad(lambda v, m=m: m.ops.aten.sum.default(m.ops.aten.tanh(v)))(x)
        rstd = m.func.vmap(
            lambda v, m=m: m.ops.aten.native_layer_norm(v, [3], None, None, 1e-5)[2])(a)
        meta = m.ops.aten.mm(m.empty(2, 3, device="meta"), m.empty(3, 5, device="meta"))
        out.append((batched, g, rstd, tuple(meta.shape), meta.device.type))
    # (float32 products and transcendental functions: a few ulp apart)
    assert_same(out[0][:3], out[1][:3], rtol=1e-5, atol=1e-6)
    assert out[0][3:] == out[1][3:] == ((2, 5), "meta")


def test_op_classes_are_torchs_private_ops_classes():
    for m in (ember, torch):
        assert isinstance(m.ops.aten.mm.default, m._ops.OpOverload)
        assert isinstance(m.ops.aten.mm, m._ops.OpOverloadPacket)
        assert not isinstance(m.ops.aten.mm, m._ops.OpOverload)
        assert isinstance(m.ops.aten, m._ops._OpNamespace)
        assert m._ops.ops is m.ops
