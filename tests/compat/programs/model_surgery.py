"""Model surgery and checkpoint plumbing, as a fine-tuning script does it.

A small "pretrained" CNN backbone gets a new head, frozen layers, per-layer learning
rates and BatchNorm kept in eval; its state dict is saved, renamed by hooks from an old
checkpoint format, loaded strictly and not, built on the meta device and materialized;
the optimizer is checkpointed and resumed on the same trajectory.
"""

import copy
import io
import pickle
import re
import tempfile
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def show_error(label, fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the program prints what a user would see
        msg = str(e).strip().splitlines()
        print(f"{label}: {type(e).__name__}: {' | '.join(m.strip() for m in msg[:6])}")
    else:
        print(f"{label}: no error")


class ConvBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


class Backbone(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(OrderedDict([
            ("block1", ConvBlock(3, 8)),
            ("pool1", nn.MaxPool2d(2)),
            ("block2", ConvBlock(8, 16)),
            ("gap", nn.AdaptiveAvgPool2d(1)),
        ]))
        self.fc = nn.Linear(16, num_classes)
        self.register_buffer("step_count", torch.zeros((), dtype=torch.long))
        self.register_buffer("scratch", torch.ones(4), persistent=False)

    def forward(self, x):
        self.step_count += 1
        return self.fc(torch.flatten(self.features(x), 1))


class Scaled(nn.Linear):
    def __init__(self, cin, cout, scale):
        super().__init__(cin, cout)
        self.scale = scale

    def extra_repr(self):
        return super().extra_repr() + f", scale={self.scale}"

    def forward(self, x):
        return super().forward(x) * self.scale


# --- 1. the "pretrained" backbone and its state dict --------------------------------
pretrained = Backbone()
x = torch.randn(6, 3, 8, 8)
with torch.no_grad():
    pretrained.train()
    for _ in range(3):
        pretrained(x)
sd = pretrained.state_dict()
print("keys:", list(sd.keys()))
print("num_batches_tracked:", sd["features.block1.bn.num_batches_tracked"].item(),
      sd["features.block1.bn.num_batches_tracked"].dtype)
print("step_count:", sd["step_count"].item(), "scratch in sd:", "scratch" in sd)
print("metadata:", {k: dict(v) for k, v in sd._metadata.items()})
print("requires_grad in sd:", sd["fc.weight"].requires_grad,
      "keep_vars:", pretrained.state_dict(keep_vars=True)["fc.weight"].requires_grad,
      type(pretrained.state_dict(keep_vars=True)["fc.weight"]).__name__)
psd = pretrained.state_dict(prefix="backbone.")
print("prefixed:", list(psd.keys())[:3], list(psd._metadata.keys())[:3])
print("shares memory:", sd["fc.weight"].data_ptr() == pretrained.fc.weight.data_ptr())
running_mean = pretrained.features.block1.bn.running_mean
print("running_mean:", [f"{v:.5f}" for v in running_mean.tolist()[:4]])

# --- 2. save / load through a temporary file -------------------------------------------
with tempfile.TemporaryDirectory() as tmp:
    path = f"{tmp}/backbone.pt"
    torch.save(pretrained.state_dict(), path)
    loaded_sd = torch.load(path, weights_only=True)
print("loaded type:", type(loaded_sd).__name__, "same keys:", list(loaded_sd) == list(sd))
print("equal tensors:", all(torch.equal(loaded_sd[k], sd[k]) for k in sd))
print("loaded metadata:", sorted(loaded_sd._metadata.keys())[:3])

# --- 3. head replacement and submodule access ---------------------------------------
model = Backbone()
print("load all:", model.load_state_dict(loaded_sd))
model.fc = nn.Linear(16, 4)
print("new fc:", model.fc)
model.set_submodule("features.gap", nn.AdaptiveMaxPool2d(1))
print("gap now:", model.get_submodule("features.gap"))
print("get_parameter:", tuple(model.get_parameter("features.block2.conv.weight").shape))
print("get_buffer:", model.get_buffer("features.block1.bn.running_var").shape)
show_error("get_submodule missing", lambda: model.get_submodule("features.block3"))
show_error("get_parameter of buffer",
           lambda: model.get_parameter("features.block1.bn.running_mean"))
show_error("get_buffer missing", lambda: model.get_buffer("features.block1.bn.bias"))
show_error("get_parameter missing", lambda: model.get_parameter("fc.scale"))
show_error("set_submodule missing parent",
           lambda: model.set_submodule("head.proj", nn.Linear(1, 1)))
show_error("assign tensor to param",
           lambda: setattr(model.fc, "weight", torch.zeros(4, 16)))
show_error("module before init", lambda: Scaled.__new__(Scaled).__setattr__("lin", nn.ReLU()))

# --- 4. strict=False and shape mismatches -------------------------------------------
show_error("strict=False, new head", lambda: model.load_state_dict(loaded_sd, strict=False))
body_only = {k: v for k, v in loaded_sd.items() if not k.startswith("fc.")}
body_only["head.weight"] = torch.zeros(1)
result = model.load_state_dict(body_only, strict=False)
print("result type:", type(result).__name__)
print("missing:", result.missing_keys)
print("unexpected:", result.unexpected_keys)
print("result repr:", result)
bad = dict(loaded_sd)
bad["fc.weight"] = torch.zeros(10, 16)
bad["features.block1.conv.weight"] = torch.zeros(8, 3, 5, 5)
model.fc = nn.Linear(16, 10)
show_error("shape mismatch", lambda: model.load_state_dict(bad))
extra = dict(loaded_sd)
extra["fc.extra"] = torch.zeros(1)
del extra["fc.bias"]
show_error("strict missing+unexpected", lambda: model.load_state_dict(extra))
show_error("not a mapping", lambda: model.load_state_dict([1, 2]))
print("strict=False:", model.load_state_dict(extra, strict=False))

# --- 5. old checkpoint format via hooks ---------------------------------------------
old_ckpt = {k.replace("features.", "body.").replace(".bn.", ".norm."): v
            for k, v in loaded_sd.items()}


def rename_old_keys(module, state_dict, prefix, local_metadata, strict, missing_keys,
                    unexpected_keys, error_msgs):
    for key in list(state_dict.keys()):
        if key.startswith(prefix + "body."):
            new = prefix + "features." + key[len(prefix + "body."):]
            new = new.replace(".norm.", ".bn.")
            state_dict[new] = state_dict.pop(key)


fresh = Backbone()
handle = fresh.register_load_state_dict_pre_hook(rename_old_keys)
seen = []


def after_load(module, incompatible_keys):
    seen.append((type(module).__name__, len(incompatible_keys.missing_keys),
                 len(incompatible_keys.unexpected_keys)))


post_handle = fresh.register_load_state_dict_post_hook(after_load)
print("old format load:", fresh.load_state_dict(old_ckpt))
print("post hook saw:", seen)
print("weights equal:", torch.equal(fresh.fc.weight, pretrained.fc.weight))
handle.remove()
post_handle.remove()
show_error("old format, no hook", lambda: fresh.load_state_dict(old_ckpt))


def drop_scratch_pre(module, prefix, keep_vars):
    seen.append(("pre", prefix, keep_vars))


def to_old_format(module, state_dict, prefix, local_metadata):
    for key in list(state_dict.keys()):
        if key.startswith(prefix + "features."):
            state_dict[prefix + "body." + key[len(prefix + "features."):]] = state_dict.pop(key)


h1 = fresh.register_state_dict_pre_hook(drop_scratch_pre)
h2 = fresh.register_state_dict_post_hook(to_old_format)
seen.clear()
exported = fresh.state_dict()
print("pre hook:", seen)
print("exported:", list(exported.keys())[:4], len(exported))
h1.remove()
h2.remove()
print("after remove:", list(fresh.state_dict().keys())[:2])

# a checkpoint written from a DataParallel-wrapped model: every key starts with "module."
dp_ckpt = pretrained.state_dict(prefix="module.")
show_error("DataParallel keys", lambda: Backbone().load_state_dict(dp_ckpt))
torch.nn.modules.utils.consume_prefix_in_state_dict_if_present(dp_ckpt, "module.")
print("consumed:", list(dp_ckpt)[:2], list(dp_ckpt._metadata)[:3])
print("load consumed:", Backbone().load_state_dict(dp_ckpt))

# --- 6. freezing by name pattern and per-layer learning rates -------------------------
model = Backbone()
model.load_state_dict(loaded_sd)
model.fc = nn.Linear(16, 4)
for name, p in model.named_parameters():
    if re.match(r"features\.block1\.", name):
        p.requires_grad_(False)
frozen = [n for n, p in model.named_parameters() if not p.requires_grad]
trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
print("frozen:", frozen)
print("trainable params:", trainable, "total:", sum(p.numel() for p in model.parameters()))
backbone_params = [p for n, p in model.named_parameters()
                   if n.startswith("features.block2") and p.requires_grad]
opt = torch.optim.SGD([{"params": backbone_params, "lr": 1e-3}], lr=0.1, momentum=0.9)
opt.add_param_group({"params": model.fc.parameters(), "weight_decay": 1e-4})
print("groups:", [(len(g["params"]), g["lr"], g["weight_decay"]) for g in opt.param_groups])
named_opt = torch.optim.AdamW(model.fc.named_parameters(), lr=1e-3)
print("named groups:", named_opt.state_dict()["param_groups"][0]["param_names"])
show_error("param in two groups",
           lambda: opt.add_param_group({"params": [model.fc.weight]}))
show_error("params not iterable", lambda: torch.optim.SGD(model.fc.weight, lr=0.1))
show_error("empty param list", lambda: torch.optim.SGD([], lr=0.1))


def set_bn_eval(module):
    if isinstance(module, nn.modules.batchnorm._BatchNorm):
        module.eval()


model.train()
model.apply(set_bn_eval)
print("training flags:", [(n, m.training) for n, m in model.named_modules() if n][:5])
targets = torch.tensor([0, 1, 2, 3, 0, 1])
bn_before = model.features.block2.bn.running_mean.clone()
for step in range(3):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), targets)
    loss.backward()
    opt.step()
    print(f"step {step}: loss={loss.item():.5f}")
print("eval output grad_fn:", type(pretrained.eval()(x).grad_fn).__name__,
      type(model.features.block2.bn(torch.ones(2, 16, 2, 2, requires_grad=True)).grad_fn).__name__)
print("block1 grad is None:", model.features.block1.conv.weight.grad is None)
print("bn stats unchanged:", torch.equal(bn_before, model.features.block2.bn.running_mean))
print("fc grad norm:", f"{model.fc.weight.grad.norm().item():.5f}")
opt.zero_grad(set_to_none=False)
print("zeroed grad:", model.fc.weight.grad.abs().sum().item(), model.fc.weight.grad is not None)
opt.zero_grad()
print("set_to_none:", model.fc.weight.grad)
model.zero_grad(set_to_none=False)
print("module zero_grad keeps None:", model.fc.weight.grad)

# --- 7. optimizer checkpoint and resume ---------------------------------------------
def make_run():
    torch.manual_seed(1)
    net = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))
    return net, torch.optim.Adam(net.parameters(), lr=0.05, betas=(0.8, 0.95))


data = torch.randn(16, 5)
target = data.sum(1, keepdim=True)


def train(net, opt, steps):
    out = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(net(data), target)
        loss.backward()
        opt.step()
        out.append(f"{loss.item():.5f}")
    return out


net, adam = make_run()
print("straight:", train(net, adam, 6))
net, adam = make_run()
first = train(net, adam, 3)
buf = io.BytesIO()
torch.save({"model": net.state_dict(), "optim": adam.state_dict()}, buf)
buf.seek(0)
ckpt = torch.load(buf, weights_only=True)
print("optim sd keys:", list(ckpt["optim"].keys()), list(ckpt["optim"]["state"].keys()))
print("state keys:", sorted(ckpt["optim"]["state"][0].keys()),
      ckpt["optim"]["state"][0]["step"])
print("param_groups:", {k: v for k, v in ckpt["optim"]["param_groups"][0].items()
                        if k in ("lr", "betas", "eps", "params", "amsgrad")})
net2, adam2 = make_run()
net2.load_state_dict(ckpt["model"])
adam2.load_state_dict(ckpt["optim"])
print("resumed:", first + train(net2, adam2, 3))
show_error("whole checkpoint into model", lambda: net2.load_state_dict(ckpt))
buf.seek(0)
on_cpu = torch.load(buf, map_location="cpu", weights_only=True)
print("map_location:", on_cpu["model"]["0.weight"].device, type(on_cpu["optim"]["state"]).__name__)
bad_opt = torch.optim.Adam(nn.Linear(2, 2).parameters())
show_error("optim groups mismatch", lambda: bad_opt.load_state_dict(ckpt["optim"]))

# --- 8. meta device construction, to_empty and custom init ---------------------------
with torch.device("meta"):
    big = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.Linear(6, 2))
print("meta:", big[0].weight.device, big[0].weight.shape, big[1].running_mean.device)
show_error("meta to numpy", lambda: big[0].weight.tolist())
big = big.to_empty(device="cpu")
print("after to_empty:", big[0].weight.device, big[1].num_batches_tracked.dtype)
torch.manual_seed(2)


@torch.no_grad()
def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)
        nn.init.zeros_(m.bias)
    elif isinstance(m, nn.BatchNorm1d):
        m.reset_parameters()


big.apply(init_weights)
print("init weight:", big[0].weight[0].tolist()[:3])
print("bn reset:", big[1].running_var.tolist()[:3], big[1].num_batches_tracked.item())
show_error("meta module .to(cpu)", lambda: nn.Linear(2, 2, device="meta").to("cpu"))
torch.manual_seed(3)
skipped = nn.utils.skip_init(nn.Linear, 3, 2)
print("skip_init:", skipped.weight.shape, skipped.weight.device,
      f"rng untouched: {torch.rand(1).item():.6f}")
show_error("skip_init no device arg", lambda: nn.utils.skip_init(Backbone))
meta_model = Backbone().to("meta")
print("assign load:", meta_model.load_state_dict(loaded_sd, assign=True))
print("assigned device:", meta_model.fc.weight.device, type(meta_model.fc.weight).__name__,
      meta_model.fc.weight.requires_grad)
print("assigned is same tensor:", meta_model.fc.bias.data_ptr() == loaded_sd["fc.bias"].data_ptr())

# --- 9. tied modules and duplicate handling ---------------------------------------
shared = nn.Linear(4, 4)
tied = nn.Sequential(OrderedDict([("enc", shared), ("act", nn.ReLU()), ("dec", shared)]))
print("modules:", [n for n, _ in tied.named_modules()])
print("modules dup:", [n for n, _ in tied.named_modules(remove_duplicate=False)])
print("params:", [n for n, _ in tied.named_parameters()])
print("params dup:", [n for n, _ in tied.named_parameters(remove_duplicate=False)])
print("params prefix:", [n for n, _ in tied.named_parameters(prefix="model")])
print("children:", [n for n, _ in tied.named_children()])
print("buffers recurse=False:", list(pretrained.named_buffers(recurse=False)))
print("state dict keys:", list(tied.state_dict().keys()))
emb = nn.Embedding(10, 4)
lm = nn.Linear(4, 10, bias=False)
lm.weight = emb.weight
pair = nn.ModuleDict({"emb": emb, "lm": lm})
print("tied weight params:", len(list(pair.parameters())),
      [n for n, _ in pair.named_parameters(remove_duplicate=False)])
print("tied same:", pair.lm.weight is pair.emb.weight)
pair_copy = copy.deepcopy(pair)
print("deepcopy keeps tie:", pair_copy.lm.weight is pair_copy.emb.weight,
      pair_copy.lm.weight is pair.lm.weight)

# --- 10. deepcopy and pickling whole modules -------------------------------------------
clone = copy.deepcopy(pretrained)
print("clone equal:", torch.equal(clone.fc.weight, pretrained.fc.weight),
      clone.fc.weight.data_ptr() != pretrained.fc.weight.data_ptr())
with torch.no_grad():
    clone.fc.weight.add_(1.0)
print("original untouched:", torch.equal(pretrained.fc.weight + 1.0, clone.fc.weight))
buf = io.BytesIO()
torch.save(pretrained, buf)
buf.seek(0)
whole = torch.load(buf, weights_only=False)
print("whole module:", type(whole).__name__, whole.step_count.item(),
      whole.scratch.tolist(), whole.training)
buf.seek(0)
try:
    torch.load(buf, weights_only=True)
except Exception as e:  # noqa: BLE001
    lines = [ln for ln in str(e).splitlines() if "Unsupported global" in ln]
    print("weights_only module:", type(e).__name__, lines[0].split(" was ")[0].strip())
restored = pickle.loads(pickle.dumps(nn.Sequential(nn.Linear(2, 3), nn.ReLU())))
print("pickle:", restored)

# --- 11. parameters_to_vector / vector_to_parameters ---------------------------------
head = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
vec = nn.utils.parameters_to_vector(head.parameters())
print("vector:", vec.shape, vec.requires_grad, vec.grad_fn is not None)
nn.utils.vector_to_parameters(torch.arange(vec.numel(), dtype=torch.float32), head.parameters())
print("after v2p:", head[0].weight.tolist(), head[1].bias.tolist())
show_error("v2p not a tensor", lambda: nn.utils.vector_to_parameters([1.0], head.parameters()))

# --- 12. dtype conversion of a module ---------------------------------------------
conv_model = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
conv_model.half()
print("half:", conv_model[0].weight.dtype, conv_model[1].running_mean.dtype,
      conv_model[1].num_batches_tracked.dtype)
conv_model.double()
print("double:", conv_model[0].weight.dtype, conv_model[1].running_var.dtype)
conv_model.to(torch.bfloat16)
print("to bf16:", conv_model[0].bias.dtype, conv_model[1].num_batches_tracked.dtype)
conv_model.float()
print("float:", conv_model[0].weight.dtype, type(conv_model[0].weight).__name__,
      conv_model[0].weight.is_leaf)
show_error("to int dtype", lambda: conv_model.to(torch.int32))
show_error("to bad args", lambda: conv_model.to("cpu", torch.float32, 1))
cl = nn.Conv2d(3, 4, 3).to(memory_format=torch.channels_last)
print("channels_last:", cl.weight.stride(),
      cl.weight.is_contiguous(memory_format=torch.channels_last))
print("x.half() into float model:", end=" ")
show_error("dtype mismatch", lambda: conv_model[0](torch.ones(1, 3, dtype=torch.float16)))

# --- 13. repr of nested containers ---------------------------------------------
net = nn.Sequential(
    Scaled(4, 8, 0.5),
    nn.ModuleList([nn.ReLU(), nn.Dropout(0.1)]),
    nn.ModuleDict({"out": nn.Linear(8, 2), "norm": nn.LayerNorm(2)}),
    nn.Sequential(),
)
print(net)
print(pretrained)

# --- 14. typical mistakes ---------------------------------------------------------
show_error("buffer name clash", lambda: model.register_buffer("fc", torch.zeros(1)))
show_error("param name with dot", lambda: model.register_parameter("a.b", None))
show_error("buffer not a tensor", lambda: model.register_buffer("buf", [1, 2]))
show_error("add_module bad name", lambda: model.add_module("", nn.ReLU()))
show_error("add_module not module", lambda: model.add_module("x", 3))
show_error("missing attribute", lambda: model.classifier)
show_error("requires_grad on int", lambda: torch.zeros(2, dtype=torch.long).requires_grad_())
show_error("Parameter of int", lambda: nn.Parameter(torch.zeros(2, dtype=torch.long)))
show_error("train(mode=str)", lambda: model.train("yes"))
