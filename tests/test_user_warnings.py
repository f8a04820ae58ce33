"""Warnings PyTorch raises from C++ are reported at the user's line, and the TORCH_WARN_ONCE
ones only once a process, whatever the filters say: each script runs under torch and ember
in a fresh process (tests/fresh_process.py) and the two stderr texts are compared."""

import os
import textwrap

import pytest

from fresh_process import with_server

SCRIPTS = {
    "searchsorted_non_contiguous_once": """
        b = torch.tensor([[3., 1., 2.], [6., 4., 5.]])
        v = torch.tensor([[2.5, 1.0], [5.5, 4.0]]).t()
        s = torch.tensor([[1, 1], [2, 2], [0, 0]]).t()
        for _ in range(2):
            torch.searchsorted(b.sort().values, v)
            torch.bucketize(v, torch.tensor([1., 2.]))
            torch.searchsorted(b.t().contiguous().t(), v.contiguous())
            torch.searchsorted(b, v.contiguous(), sorter=s)
        """,
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
    "grid_sample_default_align": """
        F = torch.nn.functional
        for _ in range(2):
            F.grid_sample(torch.ones(1, 1, 2, 2), torch.zeros(1, 2, 2, 2))
            F.affine_grid(torch.zeros(1, 2, 3), (1, 1, 2, 2))
        """,
    "deprecations_once": """
        a = torch.randn(2, 3)
        for _ in range(2):
            torch.cross(a, a)
            a.cross(a)
            torch.cholesky(torch.eye(2))
            torch.eye(2).cholesky()
            torch.lu_solve(torch.ones(2, 1), *torch.linalg.lu_factor(torch.eye(2)))
        """,
    "istft_once": """
        s = torch.stft(torch.randn(64), 16, window=torch.ones(16), return_complex=True)
        for _ in range(2):
            torch.istft(s, 16)
            torch.istft(s, 16, window=torch.ones(16), length=200)
        """,
    "complex_cast_once": """
        z = torch.tensor([1j, 2])
        z.bool()  # (bool keeps the imaginary part: no warning)
        for _ in range(2):
            z.to(torch.uint8)
            torch.zeros(2).copy_(z)
            z.float()
        """,
    "istft_warns_before_checking": """
        try:
            torch.istft(torch.randn(9, 4), 16)  # a real input: the window warning comes first
        except RuntimeError:
            pass
        """,
}

# Warnings PyTorch raises from C++ under a Python wrapper of its own (torch/functional.py),
# so torch names that file: ember names the user's line, once a process all the same.
WRAPPED = {
    "meshgrid_indexing": """
        for _ in range(2):
            torch.meshgrid(torch.ones(2), torch.ones(2))
        """,
    "meshgrid_warns_before_checking": """
        try:
            torch.meshgrid()
        except RuntimeError:
            pass
        """,
    "stft_once": """
        x = torch.randn(64)
        for _ in range(2):
            torch.stft(x, 16, window=torch.ones(16), return_complex=False)
            x.stft(16, return_complex=True)
        """,
    "stft_warns_before_checking": """
        try:  # n_fft longer than the signal: both warnings, then the error
            torch.stft(torch.randn(10), 64, center=False, return_complex=False)
        except RuntimeError:
            pass
        """,
    "stft_warns_before_asking_for_return_complex": """
        try:
            torch.stft(torch.randn(100), 16)
        except RuntimeError:
            pass
        """,
}


def _stderr(body: str, *launcher: str, tmp_path) -> str:
    path = tmp_path / "prog.py"
    path.write_text("import warnings\nwarnings.simplefilter('always')\nimport numpy\n"
                    "import torch\n" + textwrap.dedent(body))
    env = {**os.environ, "PYTHONWARNINGS": "always"}
    lib = "ember.run" if launcher == ("-m", "ember.run") else "torch"
    proc = with_server(lib, env).run_path(path, timeout=120)  # (a fresh child per script)
    assert proc.returncode == 0, proc.stderr
    # NOTE: torch appends "(Triggered internally at <its build's C++ path>.)": not ember's.
    return "\n".join(line.split(" (Triggered internally at")[0]
                     for line in proc.stderr.splitlines())


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_warning_line_and_count(name, tmp_path):
    expected = _stderr(SCRIPTS[name], tmp_path=tmp_path)
    assert "UserWarning" in expected
    assert _stderr(SCRIPTS[name], "-m", "ember.run", tmp_path=tmp_path) == expected


@pytest.mark.parametrize("name", sorted(WRAPPED))
def test_wrapped_warning_text_count_and_line(name, tmp_path):
    def warnings_in(text):
        return [line.split(": ", 1) for line in text.splitlines() if "Warning: " in line]

    expected = warnings_in(_stderr(WRAPPED[name], tmp_path=tmp_path))
    got = warnings_in(_stderr(WRAPPED[name], "-m", "ember.run", tmp_path=tmp_path))
    assert expected and [w[1] for w in got] == [w[1] for w in expected]
    assert all(where.startswith(str(tmp_path / "prog.py")) for where, _ in got)
