"""nn.Module and containers against torch.nn: registration, names, state_dict, repr, hooks."""

import copy
from collections import OrderedDict

import numpy as np
import pytest
import torch

import ember
from ember import nn

from helpers import assert_same, copy_module_state, rand_array, same_message, to_ember


def build_model(nn_ns):
    """The same nested model in either framework: Sequential, ModuleList, ModuleDict, custom."""
    lib = torch if nn_ns is torch.nn else ember

    class Block(nn_ns.Module):
        def __init__(self, d):
            super().__init__()
            self.proj = nn_ns.Linear(d, d)
            self.norm = nn_ns.LayerNorm(d)
            self.scale = nn_ns.Parameter(lib.ones(1))
            self.register_buffer("steps", lib.zeros(2))
            self.register_buffer("cache", lib.zeros(3), persistent=False)

        def forward(self, x):
            return self.norm(self.proj(x)) * self.scale

    class Net(nn_ns.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn_ns.Embedding(10, 4, padding_idx=0)
            self.blocks = nn_ns.ModuleList([Block(4) for _ in range(2)] + [nn_ns.Identity()])
            self.heads = nn_ns.ModuleDict({"cls": nn_ns.Linear(4, 3), "reg": nn_ns.Sequential(
                nn_ns.Linear(4, 2, bias=False), nn_ns.GELU(approximate="tanh"),
                nn_ns.Dropout(0.25))})
            self.extra = nn_ns.ParameterList([nn_ns.Parameter(lib.zeros(2, 3))])
            self.table = nn_ns.ParameterDict({"a": nn_ns.Parameter(lib.zeros(5))})

        def forward(self, idx):
            x = self.embed(idx)
            for b in self.blocks:
                x = b(x)
            return self.heads["cls"](x), self.heads["reg"](x)

    return Net()


def _same_text(e: str, t: str) -> None:
    assert e.replace("ember.", "torch.") == t


def test_nested_model_names_shapes_and_repr_match_torch():
    e, t = build_model(nn), build_model(torch.nn)
    _same_text(repr(e), repr(t))
    assert list(e.state_dict().keys()) == list(t.state_dict().keys())
    assert [(n, tuple(p.shape)) for n, p in e.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in t.named_parameters()]
    assert [n for n, _ in e.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert [n for n, _ in e.named_modules()] == [n for n, _ in t.named_modules()]
    assert [n for n, _ in e.named_children()] == [n for n, _ in t.named_children()]


def test_nested_model_forward_matches_torch_after_loading_its_state():
    e, t = build_model(nn), build_model(torch.nn)
    copy_module_state(e, t)
    e.eval()
    t.eval()
    idx = np.array([[1, 0, 3], [9, 2, 2]])
    out_e = e(ember.tensor(idx))
    out_t = t(torch.tensor(idx))
    assert_same(out_e, out_t)


def test_load_state_dict_errors_match_torch():
    e, t = nn.Linear(3, 2), torch.nn.Linear(3, 2)
    sd_t = {"weight": torch.zeros(2, 4), "extra": torch.zeros(1)}
    sd_e = {k: to_ember(v) for k, v in sd_t.items()}
    with pytest.raises(RuntimeError) as ee:
        e.load_state_dict(sd_e)
    with pytest.raises(RuntimeError) as et:
        t.load_state_dict(sd_t)
    _same_text(str(ee.value), str(et.value))
    keys_e = e.load_state_dict({"weight": ember.zeros(2, 3), "junk": ember.zeros(1)},
                               strict=False)
    keys_t = t.load_state_dict({"weight": torch.zeros(2, 3), "junk": torch.zeros(1)},
                               strict=False)
    assert keys_e.missing_keys == keys_t.missing_keys == ["bias"]
    assert keys_e.unexpected_keys == keys_t.unexpected_keys == ["junk"]
    assert repr(e.load_state_dict(e.state_dict())) == "<All keys matched successfully>"
    with pytest.raises(TypeError):
        e.load_state_dict([1, 2])


def test_state_dict_detaches_unless_keep_vars_and_shares_memory():
    m = nn.Linear(2, 2)
    sd = m.state_dict()
    assert not sd["weight"].requires_grad
    assert type(sd["weight"]) is ember.Tensor
    assert m.state_dict(keep_vars=True)["weight"] is m.weight
    sd["weight"].fill_(3.0)
    assert float(m.weight.sum()) == 12.0
    assert list(m.state_dict(prefix="enc.").keys()) == ["enc.weight", "enc.bias"]


def test_registration_rules_and_errors():
    m = nn.Module()
    m.w = nn.Parameter(ember.zeros(2))
    m.register_buffer("b", ember.ones(1))
    m.sub = nn.Linear(1, 1)
    assert list(m._parameters) == ["w"] and list(m._buffers) == ["b"]
    assert list(m._modules) == ["sub"]
    with pytest.raises(TypeError, match="cannot assign 'ember.FloatTensor' as parameter 'w'"):
        m.w = ember.zeros(2)
    m.b = ember.zeros(4)  # a plain tensor replaces a registered buffer
    assert m.b.shape == (4,)
    with pytest.raises(KeyError, match="attribute 'sub' already exists"):
        m.register_buffer("sub", ember.zeros(1))
    with pytest.raises(KeyError):
        m.register_parameter("a.b", None)
    m.register_parameter("none", None)
    assert "none" not in m.state_dict()
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor"):
        m.register_parameter("bad", _nonleaf_parameter())
    m.plain = 3
    assert m.plain == 3 and "plain" not in m._parameters
    del m.w
    assert "w" not in m._parameters
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'nope'"):
        m.nope  # noqa: B018
    m.buf = nn.Buffer(ember.zeros(2), persistent=False)
    assert "buf" in m._buffers and "buf" not in m.state_dict()


def _nonleaf_parameter():
    p = nn.Parameter(ember.zeros(1))
    q = p * 2
    q.__class__ = nn.Parameter
    return q


def test_missing_super_init_is_a_clear_error():
    class Bad(nn.Module):
        def __init__(self):
            self.linear = nn.Linear(1, 1)

    with pytest.raises(AttributeError, match="cannot assign module before Module.__init__"):
        Bad()

    class Bad2(nn.Module):
        def __init__(self):
            pass

        def forward(self, x):
            return x

    with pytest.raises(AttributeError, match="super\\(\\).__init__"):
        Bad2()(1)


def test_parameter_basics_match_torch():
    p = nn.Parameter(ember.tensor([1.0, 2.0]))
    pt = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    assert p.requires_grad and p.is_leaf and isinstance(p, ember.Tensor)
    assert repr(p) == repr(pt)
    assert not nn.Parameter(ember.zeros(1), requires_grad=False).requires_grad
    q = copy.deepcopy(p)
    assert type(q) is nn.Parameter and q.requires_grad and q is not p
    y = p * 2
    assert type(y) is ember.Tensor


def test_train_eval_requires_grad_zero_grad_apply():
    m = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Dropout(), nn.Linear(2, 1)))
    m.eval()
    assert not any(x.training for x in m.modules())
    m.train()
    assert all(x.training for x in m.modules())
    with pytest.raises(ValueError):
        m.train("yes")
    m(ember.randn(3, 2)).sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad(set_to_none=False)
    assert all(float(p.grad.abs().sum()) == 0 for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Linear", "Dropout", "Linear", "Sequential", "Sequential"]


def test_dtype_conversions_keep_parameter_identity():
    m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    w = m[0].weight
    m.double()
    assert m[0].weight is w and w.dtype is ember.float64
    assert m[1].num_batches_tracked.dtype is ember.int64
    m.to(ember.float16)
    assert w.dtype is ember.float16 and m[1].running_mean.dtype is ember.float16
    m.bfloat16()
    assert w.dtype is ember.bfloat16
    m.float()
    assert w.dtype is ember.float32
    with pytest.raises(TypeError, match="only accepts floating point or complex dtypes"):
        m.to(ember.int32)


def test_meta_model_counts_parameters_then_materialises():
    m = nn.Sequential(nn.Linear(1000, 1000, device="meta"), nn.LayerNorm(1000, device="meta"))
    assert m[0].weight.is_meta
    assert sum(p.numel() for p in m.parameters()) == 1000 * 1000 + 1000 + 2000
    assert sum(p.nbytes for p in m.parameters()) == 4 * (1000 * 1000 + 3000)
    m.to_empty(device="cpu")
    assert m[0].weight.device.type == "cpu" and isinstance(m[0].weight, nn.Parameter)
    m[0].reset_parameters()
    assert m(ember.zeros(1, 1000)).shape == (1, 1000)


def test_get_submodule_parameter_buffer():
    e, t = build_model(nn), build_model(torch.nn)
    assert e.get_submodule("heads.reg.0") is e.heads["reg"][0]
    assert e.get_parameter("blocks.1.proj.weight") is e.blocks[1].proj.weight
    assert e.get_buffer("blocks.0.steps") is e.blocks[0].steps
    for target in ("blocks.7", "heads.nope"):
        with pytest.raises(AttributeError) as ee:
            e.get_submodule(target)
        with pytest.raises(AttributeError) as et:
            t.get_submodule(target)
        assert str(ee.value) == str(et.value)


def test_shared_modules_and_parameters_are_listed_once():
    lin = nn.Linear(2, 2)
    m = nn.Sequential(lin, lin)
    assert len(list(m.parameters())) == 2
    assert len(list(m.named_modules())) == 2
    assert len(list(m.named_parameters(remove_duplicate=False))) == 4


# --- hooks ----------------------------------------------------------------------------------


def test_forward_hooks_run_in_order_and_can_replace_values():
    m = nn.Linear(2, 2)
    calls = []
    h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
    h2 = m.register_forward_hook(lambda mod, args, out: calls.append("post") or out + 1)
    h0 = m.register_forward_pre_hook(lambda mod, args: calls.append("first"), prepend=True)
    out = m(ember.ones(1, 2))
    assert calls == ["first", "post"]
    np.testing.assert_allclose(out.detach().numpy(), (m.bias + 1).detach().numpy()[None])
    h0.remove()
    h1.remove()
    h2.remove()
    out = m(ember.ones(1, 2))
    np.testing.assert_allclose(out.detach().numpy(),
                               (m.weight.sum(1) + m.bias).detach().numpy()[None], rtol=1e-6)

    def kw_hook(mod, args, kwargs):
        return args, kwargs

    with m.register_forward_pre_hook(kw_hook, with_kwargs=True):
        m(ember.ones(1, 2))
    assert not m._hooked


def test_full_backward_hook_sees_torch_grads():
    x = rand_array((3, 4))
    seen = {}

    def run(ns, lib, key):
        lin = ns.Linear(4, 2)
        if lib is torch:
            seen["w"] = lin.weight.detach().clone()
        else:
            lin.load_state_dict({"weight": to_ember(seen["w"]), "bias": ember.zeros(2)})
        if lib is torch:
            with torch.no_grad():
                lin.bias.zero_()

        def hook(mod, grad_in, grad_out):
            seen[key] = (grad_in, grad_out)
            return (grad_in[0] * 2,)

        pre = []
        lin.register_full_backward_hook(hook)
        lin.register_full_backward_pre_hook(lambda mod, g: pre.append(len(g)))
        inp = lib.tensor(x, requires_grad=True)
        (lin(inp) ** 2).sum().backward()
        return inp.grad, pre

    g_t, pre_t = run(torch.nn, torch, "t")
    g_e, pre_e = run(nn, ember, "e")
    assert pre_e == pre_t == [1]
    assert_same(g_e, g_t)
    assert_same(seen["e"][0][0], seen["t"][0][0])
    assert_same(seen["e"][1][0], seen["t"][1][0])


# --- containers ---------------------------------------------------------------------------


def test_sequential_indexing_slicing_and_editing():
    layers = [nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 3)]
    s = nn.Sequential(*layers)
    assert len(s) == 3 and s[-1] is layers[2] and list(s) == layers
    sub = s[1:]
    assert isinstance(sub, nn.Sequential) and list(sub._modules) == ["1", "2"]
    s.append(nn.Tanh())
    s.insert(0, nn.Identity())
    assert [type(m).__name__ for m in s] == ["Identity", "Linear", "ReLU", "Linear", "Tanh"]
    del s[0]
    assert list(s._modules) == ["0", "1", "2", "3"]
    s[3] = nn.Sigmoid()
    assert isinstance(s[3], nn.Sigmoid)
    with pytest.raises(IndexError, match="index 9 is out of range"):
        s[9]  # noqa: B018
    named = nn.Sequential(OrderedDict([("a", nn.ReLU()), ("b", nn.Tanh())]))
    assert list(named.state_dict()) == [] and list(named._modules) == ["a", "b"]
    assert s.pop(3).__class__ is nn.Sigmoid and len(s) == 3


def test_container_reprs_match_torch():
    def make(ns, lib):
        return ns.ModuleList([
            ns.Linear(2, 2), ns.Linear(2, 2), ns.Linear(2, 2), ns.ReLU(),
            ns.ParameterList([ns.Parameter(lib.zeros(2, 3)), lib.zeros(4)]),
            ns.ModuleDict({"x": ns.Conv2d(1, 2, 3, stride=2, bias=False)}),
        ])

    _same_text(repr(make(nn, ember)), repr(make(torch.nn, torch)))
    e = nn.ParameterDict({"b": nn.Parameter(ember.zeros(1)), "a": ember.zeros(2)})
    t = torch.nn.ParameterDict({"b": torch.nn.Parameter(torch.zeros(1)), "a": torch.zeros(2)})
    _same_text(repr(e), repr(t))
    assert list(e.keys()) == list(t.keys())
    assert isinstance(e["a"], nn.Parameter)


def test_module_list_and_dict_operations():
    ml = nn.ModuleList([nn.ReLU()])
    ml.extend([nn.Tanh(), nn.Sigmoid()])
    ml += [nn.Identity()]
    ml.insert(1, nn.GELU())
    assert [type(m).__name__ for m in ml] == ["ReLU", "GELU", "Tanh", "Sigmoid", "Identity"]
    del ml[1:3]
    assert list(ml._modules) == ["0", "1", "2"]
    with pytest.raises(NotImplementedError, match="missing the required \"forward\""):
        ml(1)
    md = nn.ModuleDict([("a", nn.ReLU()), ("b", nn.Tanh())])
    md.update({"c": nn.Identity()})
    assert list(md) == ["a", "b", "c"] and "b" in md and len(md) == 3
    assert type(md.pop("b")).__name__ == "Tanh" and list(md.keys()) == ["a", "c"]


def test_deepcopy_and_pickle_round_trip_of_a_module():
    import pickle

    m = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    copies = [copy.deepcopy(m)]
    serialization = pytest.importorskip("ember.serialization")
    if hasattr(serialization, "_reduce_tensor"):
        copies.append(pickle.loads(pickle.dumps(m)))
    x = ember.randn(4, 2)
    m.eval()
    for m2 in copies:
        m2.eval()
        np.testing.assert_array_equal(m(x).detach().numpy(), m2(x).detach().numpy())
        assert isinstance(m2[0].weight, nn.Parameter) and m2[0].weight is not m[0].weight


def test_load_state_dict_assign_materialises_a_meta_model():
    src = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    meta = nn.Sequential(nn.Linear(3, 2, device="meta"), nn.BatchNorm1d(2, device="meta"))
    with pytest.warns(UserWarning, match="copying from a non-meta parameter"):
        meta.load_state_dict(src.state_dict())
    assert meta[0].weight.is_meta
    meta.load_state_dict(src.state_dict(), assign=True)
    assert isinstance(meta[0].weight, nn.Parameter) and meta[0].weight.requires_grad
    assert not meta[0].weight.is_meta and not meta[1].running_var.is_meta
    x = ember.randn(4, 3)
    src.eval()
    meta.eval()
    np.testing.assert_array_equal(src(x).detach().numpy(), meta(x).detach().numpy())


@pytest.mark.parametrize("make", [lambda m: m.nn.Parameter(m.ones(1, dtype=m.int64)),
                                  lambda m: m.ones(1, dtype=m.int64).requires_grad_(),
                                  lambda m: m.tensor([1], requires_grad=True)])
def test_integer_tensors_refuse_grad_in_torchs_words_per_path(make):
    same_message(make)


# --- hooks every module runs (register_module_*_hook) ---------------------------------------

def _global_hook_log(lib):
    """Run a nested model forward and backward with all four global hooks and one module
    hook; the calls in order, then the handles (not yet removed)."""
    mm = lib.nn.modules.module
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU(),
                            lib.nn.Sequential(lib.nn.Linear(3, 1)))
    log = []
    net[0].register_forward_hook(lambda m, a, out: log.append(("own", type(m).__name__)))
    handles = [
        mm.register_module_forward_pre_hook(lambda m, a: log.append(("pre", type(m).__name__))),
        mm.register_module_forward_hook(lambda m, a, out: log.append(("fwd", type(m).__name__))),
        mm.register_module_full_backward_pre_hook(
            lambda m, go: log.append(("bw_pre", type(m).__name__))),
        mm.register_module_full_backward_hook(
            lambda m, gi, go: log.append(("bw", type(m).__name__, len(gi), len(go)))),
    ]
    x = lib.ones(4, 2, requires_grad=True)
    net(x).sum().backward()
    return net, log, handles


def test_global_hooks_fire_for_nested_modules_in_torchs_order():
    net_e, log_e, handles_e = _global_hook_log(ember)
    net_t, log_t, handles_t = _global_hook_log(torch)
    try:
        assert log_e == log_t
        assert log_e[:3] == [("pre", "Sequential"), ("pre", "Linear"), ("fwd", "Linear")]
        assert all(m._hooked for m in net_e.modules())  # (what the graph layer's checks read)
        assert ember.nn.Linear(1, 1)._hooked  # (modules made later too)
    finally:
        for h in handles_e + handles_t:
            h.remove()
    assert net_e[0]._hooked and not any(m._hooked for m in net_e.modules() if m is not net_e[0])
    log_e.clear()
    net_e(ember.ones(1, 2))
    assert log_e == [("own", "Linear")]  # (only the module's own hook is left)


def test_global_hooks_can_replace_inputs_and_outputs_and_take_kwargs():
    results = []
    for lib in (ember, torch):
        mm = lib.nn.modules.module
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Tanh())
        seen = []
        hs = [mm.register_module_forward_pre_hook(lambda m, a: (a[0] * 2,)),
              mm.register_module_forward_hook(
                  lambda m, a, kw, out, seen=seen: seen.append(kw) or out + 1, with_kwargs=True)]
        try:
            results.append(net(lib.ones(3, 2)))
        finally:
            for h in hs:
                h.remove()
        assert seen == [{}, {}, {}]
    assert_same(*results)


def test_global_always_call_hook_runs_when_forward_raises():
    class Broken(nn.Module):
        def forward(self, x):
            raise ValueError("no")

    seen = []
    h = nn.modules.module.register_module_forward_hook(
        lambda m, a, out: seen.append(out), always_call=True)
    try:
        with pytest.raises(ValueError):
            Broken()(ember.ones(1))
    finally:
        h.remove()
    assert seen == [None]


def test_global_backward_hook_gradients_match_torch():
    grads = []
    net_t = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Sigmoid())
    net_e = nn.Sequential(nn.Linear(3, 2), nn.Sigmoid())
    copy_module_state(net_e, net_t)
    for lib, net in ((ember, net_e), (torch, net_t)):
        seen = []
        h = lib.nn.modules.module.register_module_full_backward_hook(
            lambda m, gi, go, seen=seen: seen.append((type(m).__name__, gi[0], go[0])))
        try:
            x = lib.tensor(rand_array((4, 3)), requires_grad=True)
            net(x).sum().backward()
        finally:
            h.remove()
        grads.append(seen)
    for (ne, gie, goe), (nt, git, got) in zip(*grads):
        assert ne == nt
        assert_same(gie, git)
        assert_same(goe, got)


def _compiled_run(compiled: bool) -> tuple:
    """Twelve SGD steps of a small MLP, with a global forward hook (scaling every module's
    output) added before step 4 and removed before step 9."""
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    opt = ember.optim.SGD(model.parameters(), lr=0.05)
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((5, 6)).astype(np.float32))
    y = ember.tensor(rng.integers(0, 3, 5))
    loss_fn = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    fn = ember.compile(step) if compiled else step
    losses, calls, handle = [], [], None
    for i in range(12):
        if i == 4:
            handle = nn.modules.module.register_module_forward_hook(
                lambda m, a, out, i=i: calls.append(i) or out * 0.5)
        if i == 9:
            handle.remove()
        losses.append(fn().item())
    return fn, losses, calls, [p.detach().numpy().copy() for p in model.parameters()]


def test_a_compiled_step_sees_a_global_hook_added_between_calls():
    fn, losses_c, calls_c, params_c = _compiled_run(True)
    _, losses_e, calls_e, params_e = _compiled_run(False)
    assert fn.replayed > 0
    assert calls_c == calls_e and len(calls_e) == 5 * 5  # (5 modules, loss included; 5 steps)
    assert losses_c == losses_e
    for c, e in zip(params_c, params_e):
        np.testing.assert_array_equal(c, e)


@pytest.mark.parametrize("dtype", ["complex64", "bool", "bfloat16", "int16"])
def test_assigning_a_tensor_to_a_parameter_names_its_type_as_torch(dtype):
    import torch

    msgs = []
    for m in (ember, torch):
        lin = m.nn.Linear(2, 2)
        with pytest.raises(TypeError) as e:
            lin.weight = m.zeros(2, dtype=getattr(m, dtype))
        msgs.append(str(e.value).replace("ember.", "torch."))
    assert msgs[0] == msgs[1]


def test_pickling_a_compiled_module_drops_its_compiled_call():
    """torch's Module.__getstate__ leaves `compile()`'s call out: a deep copy or a whole
    model saved and loaded runs uncompiled, with the same weights and outputs (and a deep
    copy keeps its hooks)."""
    import io

    for lib in (ember, torch):
        lib.manual_seed(0)
        m = lib.nn.Linear(3, 2)
        m.compile(backend="eager")
        buf = io.BytesIO()
        lib.save(m, buf)
        buf.seek(0)
        hooked = copy.deepcopy(m)
        hooked.register_forward_hook(lambda mod, args, out: out * 2)
        x = lib.ones(1, 3)
        for copied in (copy.deepcopy(m), lib.load(buf, weights_only=False)):
            assert "_compiled_call" not in copied.__dict__
            assert "_compiled_call_impl" not in copied.__dict__
            assert lib.equal(copied(x), m(x))
        assert lib.equal(hooked(x), m(x) * 2)
