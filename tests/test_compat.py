"""`import torch` resolving to ember: the alias, its removal, and error messages."""

import importlib.util
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import ember
from ember import compat

from helpers import assert_same


@pytest.fixture
def as_torch():
    compat.install()
    yield
    compat.uninstall()


def test_install_aliases_modules_and_prints_torch_names(as_torch):
    import torch
    import torch.nn.functional as F
    from torch.utils.data import DataLoader

    assert torch is ember
    assert F is ember.nn.functional
    assert DataLoader is ember.utils.data.DataLoader
    assert repr(torch.Size([2, 3])) == "torch.Size([2, 3])"
    assert repr(torch.tensor([1.0], dtype=torch.float64)) == \
        "tensor([1.], dtype=torch.float64)"


def test_uninstall_restores_real_torch():
    import torch as real

    compat.install()
    import torch

    assert torch is ember
    compat.uninstall()
    import torch

    assert torch is real
    assert repr(ember.Size([1])) == "ember.Size([1])"


def test_missing_api_is_named_as_pytorch_names_it(as_torch):
    import torch

    with pytest.raises(AttributeError, match=r"^torch\.not_an_op is not implemented in ember$"):
        torch.not_an_op  # noqa: B018
    with pytest.raises(ModuleNotFoundError, match="torch.no_such_module is not implemented"):
        import torch.no_such_module  # noqa: F401


def test_cpu_only_system_answers(as_torch):
    import torch

    assert torch.cuda.is_available() is False
    assert torch.backends.mps.is_available() is False
    assert torch.distributed.is_available() is (importlib.util.find_spec("mpi4py") is not None)
    assert torch.accelerator.current_accelerator() is None
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.set_float32_matmul_precision("high")
    assert torch.get_float32_matmul_precision() == "high"
    torch.set_float32_matmul_precision("highest")
    scaler = torch.amp.GradScaler(enabled=False)
    x = torch.tensor(2.0)
    assert scaler.scale(x) is x and scaler.get_scale() == 1.0
    fn = torch.compile(lambda t: t * 2)
    assert fn(x).item() == 4.0
    assert torch.jit.script(fn) is fn


def test_legacy_constructors_and_type_checks(as_torch):
    import torch

    t = torch.FloatTensor([1, 2])
    assert t.dtype is torch.float32 and isinstance(t, torch.FloatTensor)
    assert not isinstance(t, torch.LongTensor)
    assert torch.LongTensor(3).shape == (3,)
    assert torch.typename(t) == "torch.FloatTensor"
    assert isinstance(t, torch.Tensor) and torch.is_tensor(t) and torch.numel(t) == 2


def test_runner_runs_a_torch_script_unmodified(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent("""
        import sys
        import torch
        x = torch.arange(6.0).reshape(2, 3)
        print(x.sum(1), x.dtype, sys.argv[1:])
        print(torch.__name__)
    """))
    out = subprocess.run([sys.executable, "-m", "ember.run", str(script), "a", "b"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["tensor([ 3., 12.]) torch.float32 ['a', 'b']", "ember"]


# --- autocast: torch's CPU policy (lower-precision matmuls, float32 losses) -------------------

def _inputs(m):
    """The same float32 inputs in module `m` (ember or torch)."""
    r = np.random.default_rng(0)
    arr = lambda *s: m.tensor(r.standard_normal(s).astype(np.float32))  # noqa: E731
    return {"a": arr(3, 4), "b": arr(4, 5), "c": arr(3, 5), "x3": arr(2, 3, 4), "y3": arr(2, 4, 5),
            "w": arr(5, 4), "bias": arr(5), "img": arr(1, 2, 6, 6), "k": arr(3, 2, 3, 3),
            "kb": arr(3), "q": arr(1, 2, 4, 8), "target": m.tensor([1, 0, 4]),
            "p": m.tensor(r.uniform(0.1, 0.9, (3, 5)).astype(np.float32)),
            "d": m.tensor(r.standard_normal((3, 4))), "i": m.tensor([[1, 2], [3, 4]])}


AUTOCAST_CASES = {
    "mm": lambda m, F, t: m.mm(t["a"], t["b"]),
    "matmul": lambda m, F, t: t["x3"] @ t["b"],
    "bmm": lambda m, F, t: m.bmm(t["x3"], t["y3"]),
    "addmm": lambda m, F, t: m.addmm(t["c"], t["a"], t["b"]),
    "baddbmm": lambda m, F, t: m.baddbmm(t["c"], t["x3"], t["y3"]),
    "linear": lambda m, F, t: F.linear(t["a"], t["w"], t["bias"]),
    "conv2d": lambda m, F, t: F.conv2d(t["img"], t["k"], t["kb"], padding=1),
    "sdpa": lambda m, F, t: F.scaled_dot_product_attention(t["q"], t["q"], t["q"],
                                                          is_causal=True),
    "cross_entropy": lambda m, F, t: F.cross_entropy(m.mm(t["a"], t["b"]), t["target"]),
    "nll_loss": lambda m, F, t: F.nll_loss(m.mm(t["a"], t["b"]).log_softmax(1), t["target"]),
    "mse_loss": lambda m, F, t: F.mse_loss(m.mm(t["a"], t["b"]), t["c"]),
    "l1_loss": lambda m, F, t: F.l1_loss(m.mm(t["a"], t["b"]), t["c"]),
    "smooth_l1": lambda m, F, t: F.smooth_l1_loss(m.mm(t["a"], t["b"]), t["c"]),
    "huber": lambda m, F, t: F.huber_loss(m.mm(t["a"], t["b"]), t["c"]),
    "bce": lambda m, F, t: F.binary_cross_entropy(m.mm(t["a"], t["b"]).sigmoid(), t["p"]),
    "bce_logits": lambda m, F, t: F.binary_cross_entropy_with_logits(m.mm(t["a"], t["b"]),
                                                                      t["p"]),
    "kl_div": lambda m, F, t: F.kl_div(m.mm(t["a"], t["b"]).log_softmax(1), t["p"],
                                       reduction="batchmean"),
    # not on the lists: run in their inputs' dtype
    "add": lambda m, F, t: t["a"] + t["a"],
    "relu_of_low": lambda m, F, t: m.mm(t["a"], t["b"]).relu(),
    "float64_mm": lambda m, F, t: m.mm(t["d"], t["d"].t()),
    "int_mm": lambda m, F, t: m.mm(t["i"], t["i"]),
}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("case", sorted(AUTOCAST_CASES))
def test_autocast_gives_torchs_dtypes_and_values(case, dtype):
    fn = AUTOCAST_CASES[case]
    with torch.autocast("cpu", dtype=getattr(torch, dtype)):
        want = fn(torch, torch.nn.functional, _inputs(torch))
    with ember.autocast("cpu", dtype=getattr(ember, dtype)):
        got = fn(ember, ember.nn.functional, _inputs(ember))
    assert_same(got, want, 1e-2, 1e-2)
    outside = fn(ember, ember.nn.functional, _inputs(ember))
    assert outside.dtype in (ember.float32, ember.float64, ember.int64)


def test_autocast_gradients_reach_float32_leaves_as_in_torch():
    results = []
    for m in (torch, ember):
        m.manual_seed(0)
        lin = m.nn.Linear(4, 3)
        x = m.ones(2, 4)
        with m.autocast("cpu"):
            out = lin(x)
            loss = m.nn.functional.cross_entropy(out, m.tensor([0, 2]))
        loss.backward()
        results.append((out, loss, lin.weight.grad, lin.bias.grad))
    for e, t in zip(results[1], results[0]):
        assert_same(e, t)


def test_autocast_nesting_decorator_and_queries():
    assert not ember.is_autocast_enabled("cpu")
    with ember.autocast("cpu"):
        assert ember.is_autocast_enabled("cpu") and not ember.is_autocast_enabled()
        assert ember.get_autocast_dtype("cpu") is ember.bfloat16
        with ember.autocast("cpu", enabled=False):
            assert ember.mm(ember.ones(2, 2), ember.ones(2, 2)).dtype is ember.float32
        assert ember.mm(ember.ones(2, 2), ember.ones(2, 2)).dtype is ember.bfloat16

    @ember.autocast("cpu")
    def product(a):
        return a @ a

    assert product(ember.ones(2, 2)).dtype is ember.bfloat16
    assert not ember.is_autocast_enabled("cpu")
    with pytest.warns(UserWarning, match="CUDA is not available"):
        region = ember.autocast("cuda")
    with region:
        assert ember.mm(ember.ones(2, 2), ember.ones(2, 2)).dtype is ember.float32


# --- the namespace programs import by name ---------------------------------------------------

def test_module_paths_hold_the_same_objects(as_torch):
    import torch
    from torch.nn.modules.linear import Linear
    from torch.nn.modules.rnn import LSTM
    from torch.nn.parameter import Parameter
    from torch.optim.adamw import AdamW
    from torch.optim.optimizer import Optimizer
    from torch.serialization import add_safe_globals, safe_globals
    from torch.utils.data.dataloader import DataLoader

    assert (Linear, LSTM, Parameter) == (torch.nn.Linear, torch.nn.LSTM, torch.nn.Parameter)
    assert (Optimizer, AdamW, DataLoader) == (torch.optim.Optimizer, torch.optim.AdamW,
                                              torch.utils.data.DataLoader)
    assert safe_globals is ember.serialization.safe_globals
    assert add_safe_globals is ember.serialization.add_safe_globals
    # submodules torch imports eagerly are reachable as attributes
    assert torch.utils.checkpoint.checkpoint is ember.utils.checkpoint.checkpoint
    assert torch.testing.assert_close is ember.testing.assert_close
    assert torch.version.cuda is None and torch.cpu.is_available()


@pytest.mark.parametrize("path, attr", [
    ("torch.nn", "NotALayer"), ("torch.nn.functional", "not_a_function"),
    ("torch.optim", "NotAnOptimizer"), ("torch.utils.data", "NotALoader"),
    ("torch.linalg", "not_a_solver"), ("torch.autograd", "not_a_thing"),
    ("torch.nn.init", "not_an_init"), ("torch.cuda", "not_a_query"),
])
def test_missing_names_in_subpackages_are_named_as_pytorch_names_them(as_torch, path, attr):
    import importlib

    module = importlib.import_module(path)
    with pytest.raises(AttributeError, match=rf"^{path}\.{attr} is not implemented in ember$"):
        getattr(module, attr)


def test_classes_print_torch_paths_only_while_installed():
    compat.install()
    try:
        import torch

        assert repr(torch.Tensor) == "<class 'torch.Tensor'>"
        assert repr(type(torch.nn.Parameter(torch.ones(1)))) == \
            "<class 'torch.nn.parameter.Parameter'>"
        assert torch.typename(torch.nn.Linear(1, 1)) == "torch.nn.modules.linear.Linear"
        assert repr(torch.nn.Parameter(torch.ones(1))).startswith("Parameter containing:\ntensor(")
        # named-tuple results, those made before install and those made after (`_out` types)
        x = torch.arange(4.0)
        assert repr(type(torch.topk(x, 1))) == "<class 'torch.return_types.topk'>"
        out = (torch.empty(0), torch.empty(0, dtype=torch.long))
        assert repr(type(torch.cummax(x, 0, out=out))) == "<class 'torch.return_types.cummax_out'>"
        vals, idx = torch.empty(0), torch.empty(0, dtype=torch.long)
        r = torch.topk(x, 2, out=(vals, idx))  # (out= of a type renamed at install)
        assert type(r).__name__ == "topk_out" and r.indices is idx
    finally:
        compat.uninstall()
    assert ember.Tensor.__module__ == "ember._tensor"
    assert ember.nn.Linear.__module__ == "ember.nn.modules.linear"
    assert type(ember.topk(ember.arange(4.0), 1)).__module__ == "ember.return_types"


def test_tensor_data_grad_assignment_and_legacy_construction(as_torch):
    import torch

    p = torch.nn.Parameter(torch.ones(3))
    p.data = torch.tensor([1.0, 2.0, 3.0])
    p.data.mul_(2)
    assert p.tolist() == [2.0, 4.0, 6.0] and p.requires_grad and p.is_leaf
    p.grad = torch.full((3,), 0.5)
    (p * p).sum().backward()
    assert p.grad.tolist() == [4.5, 8.5, 12.5]
    with pytest.raises(RuntimeError, match="attempting to assign a gradient of size"):
        p.grad = torch.zeros(2)
    assert torch.Tensor([1, 2]).dtype is torch.float32 and torch.Tensor(2, 3).shape == (2, 3)
    assert torch.Tensor().shape == (0,) and torch.DoubleTensor([1]).dtype is torch.float64


# --- save/load of a whole model ----------------------------------------------------------------

class _Tiny(ember.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = ember.nn.Linear(2, 2)


class _NotAModule:
    pass


def test_whole_model_loads_with_weights_only_false_and_allowlists(tmp_path):
    path = tmp_path / "model.pt"
    model = _Tiny()
    ember.save(model, path)
    with pytest.raises(ember.serialization.UnpicklingError):
        ember.load(path, weights_only=True)
    loaded = ember.load(path, weights_only=False)
    assert type(loaded) is _Tiny and ember.equal(loaded.fc.weight, model.fc.weight)
    with ember.serialization.safe_globals([_Tiny, ember.nn.Linear, set]):
        assert type(ember.load(path, weights_only=True)) is _Tiny
    assert ember.serialization.get_safe_globals() == []
    ember.save({"x": _NotAModule()}, tmp_path / "obj.pt")
    with pytest.raises(ember.serialization.UnpicklingError, match="_NotAModule"):
        ember.load(tmp_path / "obj.pt", weights_only=False)  # only Module classes are rebuilt


# --- torch.testing, torch.utils.checkpoint, DistributedSampler ---------------------------------

ASSERT_CLOSE_CASES = [
    lambda m: (m.tensor([1.0, 2.0, 3.0]), m.tensor([1.0, 2.1, 3.0])),
    lambda m: (m.tensor([1.0, 2.0]), m.tensor([1.0, 2.0], dtype=m.float64)),
    lambda m: (m.tensor([1.0, 2.0]), m.tensor([1.0, 2.0, 3.0])),
    lambda m: (m.tensor([1, 2]), m.tensor([1, 3])),
    lambda m: (m.tensor(float("nan")), m.tensor(float("nan"))),
    lambda m: (1.0, 1.1),
    lambda m: ({"a": [m.ones(2)]}, {"a": [m.zeros(2)]}),
    lambda m: (m.tensor([1.0, 0.0]), m.tensor([1.0, 1e-3])),
    lambda m: (m.tensor([1.0, 2.0], dtype=m.bfloat16), m.tensor([1.0, 2.02], dtype=m.bfloat16)),
    lambda m: (m.ones(2, 2), m.ones(2, 2).t()),
]


@pytest.mark.parametrize("case", range(len(ASSERT_CLOSE_CASES)))
def test_assert_close_fails_like_torch(case):
    def outcome(m):
        try:
            m.testing.assert_close(*ASSERT_CLOSE_CASES[case](m))
        except (AssertionError, TypeError, ValueError) as e:
            return type(e), str(e).replace("torch.", "").replace("ember.", "")
        return None

    assert outcome(ember) == outcome(torch)


def test_checkpoint_matches_torch_including_dropout_replay():
    results = []
    for m in (torch, ember):
        m.manual_seed(0)
        block = m.nn.Sequential(m.nn.Linear(4, 4), m.nn.Dropout(0.5), m.nn.Tanh(),
                                m.nn.Linear(4, 2))
        x = m.randn(3, 4, requires_grad=True)
        for reentrant in (True, False):
            y = m.utils.checkpoint.checkpoint(block, x, use_reentrant=reentrant)
            y.sum().backward()
            results.append((y, x.grad.clone(), block[0].weight.grad.clone()))
            x.grad = None
            block.zero_grad()
    for e, t in zip(results[2:], results[:2]):
        assert_same(e, t)


@pytest.mark.parametrize("n, replicas, rank, shuffle, drop_last",
                         [(10, 3, 1, True, False), (10, 3, 2, False, True), (2, 5, 4, True, False),
                          (11, 4, 0, True, True)])
def test_distributed_sampler_partitions_like_torch(n, replicas, rank, shuffle, drop_last):
    from torch.utils.data.distributed import DistributedSampler as TorchSampler

    from ember.utils.data.distributed import DistributedSampler

    got = DistributedSampler(range(n), replicas, rank, shuffle, seed=3, drop_last=drop_last)
    want = TorchSampler(range(n), replicas, rank, shuffle, seed=3, drop_last=drop_last)
    for epoch in (0, 1):
        got.set_epoch(epoch)
        want.set_epoch(epoch)
        assert list(got) == list(want) and len(got) == len(want)
    with pytest.raises(ValueError, match="process group has not been initialized"):
        DistributedSampler(range(n))  # num_replicas and rank come from the process group


def test_runner_names_the_missing_api_and_supports_module_mode(tmp_path):
    (tmp_path / "prog.py").write_text("import torch\ntorch.nn.functional.not_a_loss\n")
    out = subprocess.run([sys.executable, "-m", "ember.run", str(tmp_path / "prog.py")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 1
    assert out.stderr.splitlines()[-1] == \
        "AttributeError: torch.nn.functional.not_a_loss is not implemented in ember"
    (tmp_path / "pkgmod.py").write_text("import torch\nprint(torch.ones(2).sum())\n")
    out = subprocess.run([sys.executable, "-m", "ember.run", "-m", "pkgmod"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "tensor(2.)\n"


def test_spawned_workers_see_torch_as_ember_too(tmp_path):
    (tmp_path / "prog.py").write_text(textwrap.dedent("""
        import torch
        from torch.utils.data import DataLoader, Dataset

        class Squares(Dataset):
            def __len__(self):
                return 6

            def __getitem__(self, i):
                return torch.tensor([i, i * i])

        if __name__ == "__main__":
            loader = DataLoader(Squares(), batch_size=3, num_workers=2,
                                multiprocessing_context="spawn")
            print([b.tolist() for b in loader], torch.__name__)
    """))
    out = subprocess.run([sys.executable, "-m", "ember.run", str(tmp_path / "prog.py")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "[[[0, 0], [1, 1], [2, 4]], [[3, 9], [4, 16], [5, 25]]] ember\n"


def test_distributed_and_device_calls_fail_clearly(as_torch):
    import torch

    with pytest.raises(ValueError, match="init_process_group"):
        torch.distributed.get_rank()
    torch.distributed.destroy_process_group()
    with pytest.raises(ValueError, match="init_process_group"):
        torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2))
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        torch.cuda.set_device(0)  # NOTE: PyTorch's CPU build trips on a missing binding here
    m = torch.nn.Linear(2, 2)
    assert m.compile() is None and m(torch.ones(1, 2)).shape == (1, 2)
    from torch.nn.modules.activation import MultiheadAttention
    from torch.nn.modules.linear import NonDynamicallyQuantizableLinear

    assert isinstance(MultiheadAttention(4, 2).out_proj, NonDynamicallyQuantizableLinear)


# --- the alias and printed names (issue 14) ------------------------------------------------

_NAMES_PROGRAM = textwrap.dedent("""
    {header}
    x = torch.ones(2, dtype=torch.float64)
    print(x.dtype, x.shape, torch.tensor([1], dtype=torch.int8), type(x))
    try:
        torch.iinfo(torch.float32)
    except TypeError as e:
        print(e)
""")


def _run_program(tmp_path, header: str, runner: bool) -> list[str]:
    script = tmp_path / "names.py"
    script.write_text(_NAMES_PROGRAM.format(header=header))
    cmd = [sys.executable, "-m", "ember.run", str(script)] if runner else \
        [sys.executable, str(script)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_every_way_of_installing_the_alias_prints_torchs_names(tmp_path):
    expected = _run_program(tmp_path, "import torch", runner=False)  # real PyTorch
    assert expected[0].startswith("torch.float64 torch.Size([2]) tensor([1], dtype=torch.int8)")
    assert _run_program(tmp_path, "import torch", runner=True) == expected
    in_script = "import ember.compat\nember.compat.install()\nimport torch"
    assert _run_program(tmp_path, in_script, runner=False) == expected


def test_import_ember_as_torch_prints_embers_own_names(tmp_path):
    # A local alias is invisible to the library: objects print the name of the library that
    # made them (the README says to use ember.run or compat.install() for torch's names).
    lines = _run_program(tmp_path, "import ember as torch", runner=False)
    assert lines[0] == ("ember.float64 ember.Size([2]) tensor([1], dtype=ember.int8) "
                        "<class 'ember._tensor.Tensor'>")
    assert lines[1] == ("ember.iinfo() requires an integer input type. Use ember.finfo to "
                        "handle 'ember.iinfo'")


def test_runner_names_the_script_by_its_absolute_path_as_python_does(tmp_path):
    # (a relative path: `python prog.py` reports /abs/prog.py in warnings and tracebacks)
    (tmp_path / "prog.py").write_text("import warnings\nwarnings.warn('here')\n")
    runs = [subprocess.run([sys.executable, *launcher, "prog.py"], capture_output=True,
                           text=True, cwd=tmp_path, check=True).stderr.splitlines()[0]
            for launcher in ((), ("-m", "ember.run"))]
    assert runs[0] == runs[1] == f"{tmp_path / 'prog.py'}:2: UserWarning: here"
