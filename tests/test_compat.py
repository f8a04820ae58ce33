"""`import torch` resolving to ember: the alias, its removal, and error messages."""

import subprocess
import sys
import textwrap

import pytest

import ember
from ember import compat


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
    assert torch.distributed.is_available() is False
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
