"""Under `python -m ember.run`, `import torchviz` gives ember's make_dot."""

import subprocess
import sys
import textwrap

from ember import compat
from ember.utils import viz


def test_install_aliases_torchviz_and_uninstall_removes_it():
    before = sys.modules.get("torchviz")
    compat.install()
    try:
        import torchviz
        from torchviz.dot import make_dot

        assert torchviz is viz and make_dot is viz.make_dot
    finally:
        compat.uninstall()
    assert sys.modules.get("torchviz") is before
    assert sys.modules.get("torchviz.dot") is None


def test_a_torchviz_script_runs_unmodified(tmp_path):
    script = tmp_path / "draw.py"
    script.write_text(textwrap.dedent(f"""\
        import torch
        from torchviz import make_dot

        model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh(),
                                    torch.nn.Linear(3, 1))
        y = model(torch.randn(2, 4)).mean()
        dot = make_dot(y, params=dict(model.named_parameters()), show_attrs=True,
                       show_saved=True)
        print(dot.source.count("AccumulateGrad"), "accumulators")
        dot.format = "png"
        print(dot.render({str(tmp_path / "model")!r}))
        """))
    out = subprocess.run([sys.executable, "-m", "ember.run", str(script)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "4 accumulators"
    assert lines[1].endswith("model.png") and (tmp_path / "model.png").stat().st_size > 0
