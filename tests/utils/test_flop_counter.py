"""ember.utils.flop_counter against torch.utils.flop_counter in-process: the same counts per
module and per op (integers, so exact) for the same programs, forward and backward; the
table text as torch prints it with tabulate 0.10 installed (literal strings, since tabulate
is no dependency here); registration errors; the counter leaves the `bind` stack as it
found it."""

import pytest
import torch
import torch.utils.flop_counter as tfc

import ember
import ember.utils.flop_counter as efc
from ember._core import dispatch
from ember.utils.module_tracker import ModuleTracker


def counts(lib, fc_mod, fn, **kw):
    """Run fn(lib) under the library's counter: ({module: {op name: flops}}, total)."""
    lib.manual_seed(0)
    with fc_mod.FlopCounterMode(display=False, **kw) as fc:
        fn(lib)
    return ({m: {str(k): v for k, v in ops.items()} for m, ops in fc.get_flop_counts().items()},
            fc.get_total_flops())


def mlp(t, backward=True, grad_input=False):
    m = t.nn.Sequential(t.nn.Linear(8, 16), t.nn.ReLU(),
                        t.nn.Sequential(t.nn.Linear(16, 16), t.nn.Linear(16, 3, bias=False)))
    out = m(t.randn(5, 8, requires_grad=grad_input))
    if backward:
        out.sum().backward()


def cnn(t):
    conv = t.nn.Sequential(t.nn.Conv2d(3, 4, 3, padding=1), t.nn.ReLU(),
                           t.nn.Conv2d(4, 6, 3, stride=2, groups=2))
    conv(t.randn(2, 3, 9, 9)).sum().backward()


def conv_family(t):
    F = t.nn.functional
    x1 = t.randn(2, 4, 11, requires_grad=True)
    F.conv1d(x1, t.randn(6, 2, 3, requires_grad=True), groups=2, dilation=2).sum().backward()
    x3 = t.randn(1, 2, 5, 5, 5)
    F.conv3d(x3, t.randn(3, 2, 2, 2, 2, requires_grad=True), stride=2).sum().backward()
    xt = t.randn(2, 3, 4, 4, requires_grad=True)
    F.conv_transpose2d(xt, t.randn(3, 5, 3, 3, requires_grad=True), stride=2,
                       padding=1, output_padding=1).sum().backward()
    F.conv_transpose1d(t.randn(1, 2, 6), t.randn(2, 4, 3), stride=3)


def attention_block(t):
    F = t.nn.functional
    lin = t.nn.Linear(16, 48)
    x = t.randn(2, 5, 16, requires_grad=True)
    q, k, v = lin(x).view(2, 5, 3, 4, 4).permute(2, 0, 3, 1, 4)
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    z = F.scaled_dot_product_attention(q, k, v, dropout_p=0.3)  # (PyTorch's math path)
    (y + z).sum().backward()


def products(t):
    a, b = t.randn(3, 4, requires_grad=True), t.randn(4, 5, requires_grad=True)
    (a @ b).sum().backward()
    t.einsum("ij,jk->ik", a, b)
    t.einsum("bij,bjk->bik", t.randn(2, 3, 4), t.randn(2, 4, 5))
    t.bmm(t.randn(2, 3, 4), t.randn(2, 4, 5), out=t.empty(2, 3, 5))
    t.baddbmm(t.randn(2, 3, 5), t.randn(2, 3, 4), t.randn(2, 4, 5))
    t.addmm(t.randn(5), t.randn(3, 4), t.randn(4, 5))
    t.randn(4) @ t.randn(4)  # dot: no formula
    t.randn(3, 4) @ t.randn(4)  # mv: no formula
    t.addmv(t.randn(3), t.randn(3, 4), t.randn(4))
    t.tensordot(t.randn(2, 3, 4), t.randn(4, 3, 5), dims=([1, 2], [1, 0]))
    t.linalg.multi_dot([t.randn(2, 3), t.randn(3, 4), t.randn(4, 2)])


@pytest.mark.parametrize("shapes", [
    ((4,), (4, 5)), ((3, 4), (4,)), ((2, 3, 4), (4,)), ((4,), (2, 4, 5)),
    ((3, 4), (2, 4, 5)), ((2, 1, 3, 4), (3, 4, 5)), ((2, 3, 4), (1, 4, 5)),
    ((5, 3, 4), (1, 4, 5)), ((1, 3, 4), (5, 4, 5)), ((2, 2, 3, 4), (1, 1, 4, 5)),
])
@pytest.mark.parametrize("grad", [False, True])
def test_matmul_ranks_pick_the_kernel_torch_counts(shapes, grad):
    def run(t):
        a = t.randn(*shapes[0], requires_grad=grad)
        b = t.randn(*shapes[1], requires_grad=grad)
        out = a @ b
        if grad:
            out.sum().backward()
    assert counts(ember, efc, run) == counts(torch, tfc, run)


@pytest.mark.parametrize("fn", [mlp, cnn, conv_family, attention_block, products,
                                lambda t: mlp(t, backward=False),
                                lambda t: mlp(t, grad_input=True)])
def test_counts_per_module_match_torch(fn):
    assert counts(ember, efc, fn) == counts(torch, tfc, fn)


def test_hand_formulas():
    got, total = counts(ember, efc, lambda t: mlp(t, backward=False))
    assert total == 2 * 5 * (8 * 16 + 16 * 16 + 16 * 3)
    assert got["Sequential.2.1"] == {"aten.mm": 2 * 5 * 16 * 3}
    # conv: 2 * N * Cout * Cin/groups * kh * kw * Hout * Wout
    _, total = counts(ember, efc, lambda t: t.nn.functional.conv2d(
        t.randn(2, 4, 7, 7), t.randn(6, 2, 3, 3), groups=2))
    assert total == 2 * 2 * 6 * 2 * 3 * 3 * 5 * 5


def test_keys_print_as_torch_ops_and_are_shared():
    with efc.FlopCounterMode(display=False) as fc:
        ember.randn(2, 3) @ ember.randn(3, 2)
    (key,) = fc.get_flop_counts()["Global"]
    assert (str(key), repr(key)) == ("aten.mm", "<OpOverloadPacket(op='aten.mm')>")
    with efc.FlopCounterMode(display=False) as fc2:
        ember.mm(ember.randn(2, 3), ember.randn(3, 2))
    assert list(fc2.get_flop_counts()["Global"]) == [key]
    # the key is the op `torch.ops.aten` names, callable with ATen's arguments
    assert key is ember.ops.aten.mm
    a, b = ember.randn(2, 3), ember.randn(3, 2)
    assert ember.equal(key(a, b), ember.mm(a, b))


TABLE_DEPTH_2 = """\
Module           FLOP    % Total
------------  -------  ---------
Sequential    11.680K    100.00%
- aten.addmm   3.840K     32.88%
- aten.mm      7.840K     67.12%
Sequential.0   2.560K     21.92%
- aten.addmm   1.280K     10.96%
- aten.mm      1.280K     10.96%
Sequential.2   9.120K     78.08%
- aten.addmm   2.560K     21.92%
- aten.mm      6.560K     56.16%"""

TABLE_GLOBAL = """\
Module       FLOP    % Total
---------  ------  ---------
Global         24    100.00%
- aten.mm      24    100.00%"""


def test_table_text(capsys):
    # (the strings are torch's get_table output with tabulate 0.10 installed)
    ember.manual_seed(0)
    with efc.FlopCounterMode(display=False) as fc:
        mlp(ember)
    assert fc.get_table() == TABLE_DEPTH_2
    assert fc.get_table(1) == "\n".join(TABLE_DEPTH_2.splitlines()[:5])
    assert fc.get_table(3).count("Sequential.2.1") == 1
    with efc.FlopCounterMode(display=True):
        ember.randn(2, 3) @ ember.randn(3, 2)
    assert capsys.readouterr().out == TABLE_GLOBAL + "\n"
    with efc.FlopCounterMode(display=True):
        ember.randn(3) + 1
    assert capsys.readouterr().out == (
        "Module      FLOP    % Total\n--------  ------  ---------\nGlobal         0         0%\n")


def test_large_totals_use_one_suffix():
    big = ember.nn.Linear(1000, 1000)
    with efc.FlopCounterMode(display=False) as fc:
        big(ember.randn(600, 1000))
    assert fc.get_table().splitlines()[2] == "Linear        1200.000M    100.00%"


def test_custom_mapping_and_register_errors():
    with efc.FlopCounterMode(display=False) as fc:
        ember.randn(2, 3) @ ember.randn(3, 4)
    (mm,) = fc.get_flop_counts()["Global"]
    with efc.FlopCounterMode(display=False,
                             custom_mapping={mm: lambda a, b, out_shape=None: 7}) as fc:
        ember.randn(2, 3) @ ember.randn(3, 4)
    assert fc.get_total_flops() == 7
    for lib in (tfc, efc):
        with pytest.raises(ValueError, match="expected each target to be OpOverloadPacket"):
            lib.register_flop_formula("aten::mm")(lambda *a, **k: 0)
    with pytest.raises(RuntimeError, match="duplicate registrations for aten.mm"):
        efc.register_flop_formula(mm)(lambda *a, **k: 0)
    with pytest.warns(UserWarning, match="mods argument is not needed anymore"):
        efc.FlopCounterMode(ember.nn.Linear(2, 2))


def test_leaves_the_stack_as_it_found_it():
    before = (dispatch._pushed[0], dispatch.current_interpreter())
    with pytest.raises(RuntimeError):
        with efc.FlopCounterMode(display=False):
            ember.randn(2, 3) @ ember.randn(4, 2)
    assert (dispatch._pushed[0], dispatch.current_interpreter()) == before
    fc = efc.FlopCounterMode(display=False)
    with fc:
        with efc.FlopCounterMode(display=False) as inner:  # both count
            ember.randn(2, 3) @ ember.randn(3, 2)
    assert fc.get_total_flops() == inner.get_total_flops() == 24
    assert (dispatch._pushed[0], dispatch.current_interpreter()) == before


def fused_kernels(t):
    """Calls PyTorch's CPU build runs as one kernel with no formula: nothing inside counts,
    forward or backward; the same modules off those kernels count their products."""
    nn, F = t.nn, t.nn.functional
    nn.LSTM(8, 16, num_layers=2, bidirectional=True)(t.randn(3, 2, 8))[0].sum().backward()
    nn.LSTM(8, 16).double()(t.randn(3, 2, 8, dtype=t.float64))[0].sum().backward()
    nn.LSTM(8, 16, proj_size=4)(t.randn(3, 2, 8))[0].sum().backward()
    nn.LSTMCell(8, 16)(t.randn(2, 8))[0].sum().backward()
    nn.GRU(8, 16)(t.randn(3, 2, 8))[0].sum().backward()
    F.bilinear(t.randn(3, 4, requires_grad=True), t.randn(3, 5), t.randn(6, 4, 5)).sum() \
        .backward()
    x = t.randn(2, 5, 16)
    mha = nn.MultiheadAttention(16, 4, batch_first=True)
    enc = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True)
    mha(x, x, x)[0].sum().backward()
    enc(x).sum().backward()
    mha.eval()
    enc.eval()
    with t.no_grad():
        mha(x, x, x)
        enc(x)


def test_fused_kernels_count_as_torch_counts_them():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch: LSTM with projections skips oneDNN)
        expected = counts(torch, tfc, fused_kernels)
    assert counts(ember, efc, fused_kernels) == expected


def test_checkpoint_recompute_counts_again():
    def run(t):
        lin = t.nn.Sequential(t.nn.Linear(8, 8), t.nn.ReLU(), t.nn.Linear(8, 8))
        x = t.randn(4, 8, requires_grad=True)
        t.utils.checkpoint.checkpoint(lin, x, use_reentrant=False).sum().backward()
    import torch.utils.checkpoint  # noqa: F401

    import ember.utils.checkpoint  # noqa: F401
    assert counts(ember, efc, run) == counts(torch, tfc, run)


def test_module_tracker_matches_torch():
    from torch.utils.module_tracker import ModuleTracker as TorchTracker

    def trace(t, tracker_cls):
        seen = []

        class Net(t.nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = t.nn.Sequential(t.nn.Linear(3, 3), t.nn.Tanh())

            def forward(self, x):
                seen.append(("fwd", sorted(tracker.parents), tracker.is_bw))
                return self.inner(x).sum()

        net = Net()
        x = t.randn(2, 3, requires_grad=True)
        with tracker_cls() as tracker:
            x.register_hook(lambda g: seen.append(("x", sorted(tracker.parents), tracker.is_bw)))
            out = net(x)
            seen.append(("after", sorted(tracker.parents), tracker.is_bw))
            out.backward()
            seen.append(("done", sorted(tracker.parents), tracker.is_bw))
        return seen

    assert trace(ember, ModuleTracker) == trace(torch, TorchTracker)


def test_multi_grad_hook_does_not_count_the_roots():
    """PyTorch's engine does not count a pass's root among the nodes it will execute (nor,
    for autograd.grad, leaves out the nodes whose gradient it captures): a hook over the
    root alone never runs, over the root and another tensor it runs once per gradient."""
    def run(t):
        log = []
        for how in ("backward", "grad", "grad_y", "backward_y"):
            x = t.randn(3, requires_grad=True)
            y = x * 2
            out = y.sum()
            t.autograd.graph.register_multi_grad_hook([out], lambda g: log.append("root"))
            t.autograd.graph.register_multi_grad_hook(
                [out, y], lambda g, how=how: log.append((how, [v is None for v in g])))
            if how == "backward":
                out.backward()
            elif how == "grad":
                t.autograd.grad(out, x)
            elif how == "grad_y":
                t.autograd.grad(out, y)
            else:
                y.backward(t.ones(3))
        return log

    import torch.autograd.graph  # noqa: F401

    import ember.autograd.graph  # noqa: F401
    assert run(ember) == run(torch)


def neighbours(t):
    nn, F = t.nn, t.nn.functional
    nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect")(
        t.randn(1, 2, 5, 5, requires_grad=True)).sum().backward()
    nn.ConvTranspose2d(4, 6, 3, stride=2, groups=2, dilation=2)(
        t.randn(1, 4, 5, 5, requires_grad=True)).sum().backward()
    nn.ConvTranspose3d(2, 2, 2, stride=2)(t.randn(1, 2, 3, 3, 3)).sum().backward()
    nn.Conv2d(2, 3, 3)(t.randn(2, 5, 5)).sum().backward()  # unbatched
    nn.Linear(4, 3)(t.randn(2, 3, 5, 4, requires_grad=True)).sum().backward()
    nn.Linear(4, 3)(t.randn(5, 2, 4).transpose(0, 1)).sum().backward()
    (t.randn(2, 3, 4, 5, requires_grad=True) @ t.randn(2, 3, 5, 6, requires_grad=True)) \
        .sum().backward()
    F.scaled_dot_product_attention(
        t.randn(1, 2, 4, 8, requires_grad=True), t.randn(1, 2, 4, 8), t.randn(1, 2, 4, 8),
        attn_mask=t.ones(4, 4, dtype=t.bool).tril()).sum().backward()
    nn.TransformerDecoderLayer(16, 4, 32, dropout=0.0, batch_first=True)(
        t.randn(2, 3, 16), t.randn(2, 4, 16)).sum().backward()


def test_neighbouring_layers_match_torch():
    assert counts(ember, efc, neighbours) == counts(torch, tfc, neighbours)
