"""memory.summary: counts on the meta device, against hand arithmetic and torch's own counts.

Oracles: the course's 7B arithmetic; torch's saved-tensor hooks (what a forward really
saves for backward, each storage once); torch's optimizer state after one real step.
"""

import functools

import pytest
import torch

import ember
from ember.utils.memory import summary


def test_seven_billion_parameters_cost_what_the_course_says():
    # 70,000 x 100,000 = 7e9 weights, on meta: no memory behind them
    model = ember.nn.Linear(70_000, 100_000, bias=False, device="meta")
    s = summary(model, optimizer=ember.optim.Adam, verbose=0)
    assert s.total_params == s.trainable_params == 7_000_000_000
    # bytes per parameter: fp32 4, bf16 2, fp16 2, int8 1, 4-bit 1/2
    assert s.by_dtype["float32"].parameters == 28_000_000_000  # 28 GB
    assert s.by_dtype["bfloat16"].parameters == 14_000_000_000  # 14 GB
    assert s.by_dtype["float16"].parameters == 14_000_000_000
    assert s.by_dtype["int8"].parameters == 7_000_000_000  # 7 GB
    assert s.by_dtype["int4"].parameters == 3_500_000_000  # 3.5 GB
    # training in fp32 with Adam: weights + gradients + two moments + one 4-byte step count
    fp32 = s.by_dtype["float32"]
    assert fp32.gradients == 28_000_000_000
    assert fp32.optimizer_state == 2 * 28_000_000_000 + 4
    assert fp32.activations is None and fp32.total == 112_000_000_004
    text = str(s).splitlines()
    # GB as the course counts, GiB beside: 28e9 / 2^30 = 26.077...
    assert text[text.index(next(t for t in text if t.startswith("Weights by dtype"))) + 2] \
        .split() == ["float32", "4", "28.00", "26.08"]
    assert next(t for t in text if t.startswith("4-bit")).split() == ["4-bit", "0.5", "3.50",
                                                                       "3.26"]
    assert "Weights by dtype (GB = 1,000,000,000 bytes, GiB = 1,073,741,824 bytes)" in text


def test_the_model_itself_is_untouched():
    model = ember.nn.Sequential(ember.nn.Linear(4, 3), ember.nn.BatchNorm1d(3))
    before = {k: v.clone() for k, v in model.state_dict().items()}
    summary(model, input_size=(6, 4), optimizer=ember.optim.Adam, verbose=0)
    for k, v in model.state_dict().items():
        assert v.device.type == "cpu" and ember.equal(v, before[k]), k
    assert model[1].num_batches_tracked.item() == 0


def _build(m, kind):
    m.manual_seed(0)
    nn = m.nn
    if kind == "tanh_mlp":
        return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4)), (5, 8)
    if kind == "relu_mlp":
        return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)), (5, 8)
    if kind == "convnet":
        return nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                             nn.Linear(8 * 3 * 3, 10)), (2, 3, 8, 8)
    if kind == "softmax":
        return nn.Sequential(nn.Linear(8, 16), nn.Softmax(-1)), (5, 8)
    return nn.Sequential(nn.Linear(8, 16), nn.Sigmoid(), nn.Linear(16, 16), nn.SiLU()), (5, 8)


def _torch_saved_bytes(model, x):
    """What torch's forward saves for backward, each storage once, less params and input."""
    held = {t.untyped_storage().data_ptr() for t in [*model.parameters(), *model.buffers(), x]}
    sizes = {}

    def pack(t):
        key = t.untyped_storage().data_ptr()
        if key not in held:
            sizes[key] = t.untyped_storage().nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        model(x)
    return sum(sizes.values())


@pytest.mark.parametrize("kind", ["tanh_mlp", "relu_mlp", "convnet", "softmax", "silu_mlp"])
def test_activations_are_what_torch_saves_for_backward(kind):
    tm, shape = _build(torch, kind)
    em, _ = _build(ember, kind)
    s = summary(em, input_size=shape, verbose=0)
    for name, dtype in [("float32", torch.float32), ("bfloat16", torch.bfloat16),
                        ("float16", torch.float16)]:
        # torch's copy of the model in that dtype (a max-pool's int64 indices stay int64)
        expect = _torch_saved_bytes(tm.to(dtype), torch.randn(shape, dtype=dtype))
        assert s.by_dtype[name].activations == expect, name
    assert s.total_params == sum(p.numel() for p in tm.parameters())


def test_activations_by_hand():
    # Linear(8,16) -> ReLU -> Linear(16,4) on a batch of 5: the ReLU's output (5 x 16
    # float32 = 320 bytes) is saved by the ReLU and, as the same storage, by the second
    # Linear; the input and the weights are not activations.
    model = ember.nn.Sequential(ember.nn.Linear(8, 16), ember.nn.ReLU(), ember.nn.Linear(16, 4))
    s = summary(model, input_size=(5, 8), verbose=0)
    assert s.by_dtype["float32"].activations == 5 * 16 * 4
    assert s.input_bytes == 5 * 8 * 4
    # and batch_dim puts a batch of 1 in front
    s1 = summary(model, input_size=(8,), batch_dim=0, verbose=0)
    assert s1.input_shapes == [[1, 8]] and s1.by_dtype["float32"].activations == 16 * 4


_OPTIMIZERS = {
    "adam": lambda m: m.optim.Adam,
    "adamw_partial": lambda m: functools.partial(m.optim.AdamW, lr=1e-3),
    "adam_amsgrad": lambda m: functools.partial(m.optim.Adam, amsgrad=True),
    "sgd": lambda m: functools.partial(m.optim.SGD, lr=0.1),
    "sgd_momentum": lambda m: functools.partial(m.optim.SGD, lr=0.1, momentum=0.9),
    "rmsprop": lambda m: m.optim.RMSprop,
    "adagrad": lambda m: m.optim.Adagrad,
}


@pytest.mark.parametrize("name", list(_OPTIMIZERS))
def test_optimizer_state_is_what_torchs_optimizer_keeps(name):
    tm, _ = _build(torch, "tanh_mlp")
    opt = _OPTIMIZERS[name](torch)(tm.parameters())
    for p in tm.parameters():
        p.grad = torch.zeros_like(p)
    opt.step()
    expect = sum({v.untyped_storage().data_ptr(): v.untyped_storage().nbytes()
                  for state in opt.state.values() for v in state.values()
                  if isinstance(v, torch.Tensor)}.values())
    em, _ = _build(ember, "tanh_mlp")
    s = summary(em, optimizer=_OPTIMIZERS[name](ember), verbose=0)
    assert s.by_dtype["float32"].optimizer_state == expect


def test_an_optimizer_instance_is_rebuilt_with_its_groups():
    em, _ = _build(ember, "tanh_mlp")
    # momentum only on the first layer: 16*8 + 16 floats of buffer
    opt = ember.optim.SGD([{"params": em[0].parameters(), "momentum": 0.9},
                           {"params": em[2].parameters()}], lr=0.1)
    s = summary(em, optimizer=opt, verbose=0)
    assert s.by_dtype["float32"].optimizer_state == (16 * 8 + 16) * 4
    assert s.by_dtype["bfloat16"].optimizer_state == (16 * 8 + 16) * 2
    assert opt.state == {} or all(not st for st in opt.state.values())  # untouched
    assert "optimizer: SGD (momentum_buffer)" in str(s)


def test_frozen_parameters_have_no_gradient_and_tied_weights_count_once():
    class LM(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = ember.nn.Embedding(100, 16)
            self.head = ember.nn.Linear(16, 100, bias=False)
            self.head.weight = self.emb.weight
            self.norm = ember.nn.LayerNorm(16)
            self.norm.requires_grad_(False)

        def forward(self, x):
            return self.head(self.norm(self.emb(x)))

    s = summary(LM(), input_data=ember.zeros(2, 5, dtype=ember.long), verbose=0)
    assert s.total_params == 1600 + 32 and s.trainable_params == 1600
    fp32 = s.by_dtype["float32"]
    assert fp32.parameters == (1600 + 32) * 4 and fp32.gradients == 1600 * 4
    assert s.input_shapes == [[2, 5]] and s.input_bytes == 10 * 8  # int64 ids stay int64


def test_layer_table_and_printing(capsys):
    model = ember.nn.Sequential(ember.nn.Linear(8, 16), ember.nn.ReLU(),
                                ember.nn.Sequential(ember.nn.Linear(16, 4), ember.nn.Tanh()))
    s = summary(model, input_size=[(5, 8)])
    printed = capsys.readouterr().out
    assert printed.strip() == str(s).strip()
    rows = [(r.name, r.kind, r.depth, r.output_shape, r.params) for r in s.layers]
    assert rows == [("Sequential", "Sequential", 0, [5, 4], None),
                    ("0", "Linear", 1, [5, 16], 8 * 16 + 16),
                    ("1", "ReLU", 1, [5, 16], 0),
                    ("2", "Sequential", 1, [5, 4], None),
                    ("2.0", "Linear", 2, [5, 4], 16 * 4 + 4),
                    ("2.1", "Tanh", 2, [5, 4], 0)]
    assert "    0 (Linear)" in printed and "[5, 16]" in printed
    # the parameters here are (144 + 68) * 4 = 848 bytes: the table counts in kB
    assert "Weights by dtype (kB = 1,000 bytes, KiB = 1,024 bytes)" in printed
    summary(model, verbose=0)
    assert capsys.readouterr().out == ""
    shallow = summary(model, input_size=(5, 8), depth=1, verbose=0)
    assert [(r.name, r.params) for r in shallow.layers] == [("Sequential", None), ("0", 144),
                                                           ("1", 0), ("2", 68)]


def test_bad_arguments():
    model = ember.nn.Linear(3, 2)
    with pytest.raises(ValueError, match="2 dtypes for 1 inputs"):
        summary(model, input_size=(4, 3), dtypes=[ember.float32, ember.float32], verbose=0)
    with pytest.raises(ValueError, match="input_size entries must be shapes"):
        summary(model, input_size=[(4, "3")], verbose=0)
    with pytest.raises(TypeError, match="input_data holds a list"):
        summary(model, input_data=[[1.0, 2.0, 3.0]], verbose=0)
    with pytest.raises(TypeError, match="optimizer must be an optimizer"):
        summary(model, optimizer="adam", verbose=0)
