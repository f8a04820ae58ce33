"""Warnings PyTorch raises from C++ are reported at the user's line, and the TORCH_WARN_ONCE
ones only once a process, whatever the filters say: each script runs under torch and ember
in a fresh interpreter and the two stderr texts are compared."""

import os
import subprocess
import sys
import textwrap

import pytest

SCRIPTS = {
    "index_reduce": """
        x = torch.zeros(3)
        for _ in range(2):
            x.index_reduce_(0, torch.tensor([0]), torch.ones(1), "amax")
            torch.index_reduce(x, 0, torch.tensor([1]), torch.ones(1), "amin",
                               include_self=False)
        """,
    "scatter_reduce_argument": """
        x = torch.zeros(3)
        for _ in range(2):
            x.scatter(0, torch.tensor([0]), torch.ones(1), reduce="add")
            x.scatter_(0, torch.tensor([1]), torch.ones(1), reduce="multiply")
        """,
    "masked_fill_expanded": """
        for _ in range(2):
            torch.zeros(3).expand(2, 3).masked_fill_(torch.tensor([True, False, False]), 1.0)
        """,
    "arrays_in_a_list": """
        for _ in range(2):
            torch.tensor([numpy.zeros(2), numpy.ones(2)])
        """,
}


def _stderr(body: str, *launcher: str, tmp_path) -> str:
    path = tmp_path / "prog.py"
    path.write_text("import warnings\nwarnings.simplefilter('always')\nimport numpy\n"
                    "import torch\n" + textwrap.dedent(body))
    env = {**os.environ, "PYTHONWARNINGS": "always"}
    proc = subprocess.run([sys.executable, *launcher, str(path)], capture_output=True,
                          text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    # NOTE: torch appends "(Triggered internally at <its build's C++ path>.)": not ember's.
    return "\n".join(line.split(" (Triggered internally at")[0]
                     for line in proc.stderr.splitlines())


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_warning_line_and_count(name, tmp_path):
    expected = _stderr(SCRIPTS[name], tmp_path=tmp_path)
    assert "UserWarning" in expected
    assert _stderr(SCRIPTS[name], "-m", "ember.run", tmp_path=tmp_path) == expected
