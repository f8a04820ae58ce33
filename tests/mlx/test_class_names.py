"""Under `ember.run` (`import mlx` meaning ember.mlx) the MLX face's classes carry MLX's
module paths, so `type(x)`, class reprs in messages and `__module__` print as on MLX."""

import subprocess
import sys

import pytest

pytest.importorskip("mlx.core")

# each line prints a class (or its module) the way a program would
PROGRAM = """
import mlx.core as mx, mlx.nn as nn, mlx.optimizers as optim
print(type(mx.array(1)), type(mx.float32), type(mx.default_stream(mx.cpu)))
print(type(nn.Linear(1, 1)), nn.QuantizedLinear.__module__, nn.Module.__module__)
print(type(optim.Adam(0.1)), optim.SGD.__module__, optim.Optimizer.__module__)
print(type(nn.GELU()), type(nn.MultiHeadAttention(4, 2)), type(nn.LSTM(2, 2)))
print(type(nn.Conv2d(1, 1, 1)), type(nn.ConvTranspose2d(1, 1, 1)), nn.ConvTranspose1d.__module__)
try:
    nn.quantize(nn.Sequential(nn.Conv1d(64, 8, 1)), class_predicate=lambda p, m: True)
except ValueError as e:
    print(e)
"""


def _run(args: list) -> str:
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_class_paths_print_as_mlx_s_under_ember_run(tmp_path):
    script = tmp_path / "names.py"
    script.write_text(PROGRAM)
    # (plain strings: no arithmetic, compared exactly)
    assert _run(["-m", "ember.run", str(script)]) == _run([str(script)])


def test_uninstall_restores_ember_s_module_paths():
    import ember.mlx.nn as nn
    from ember import compat

    was = compat.is_installed()
    compat.install()
    import mlx.nn  # noqa: F401 - through the alias, which renames the classes

    assert nn.Linear.__module__ == "mlx.nn.layers.linear"
    if not was:
        compat.uninstall()
        assert nn.Linear.__module__ == "ember.mlx.nn.layers.linear"
