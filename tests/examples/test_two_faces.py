"""examples/two_faces.py: the PyTorch face and the MLX face train one model alike."""

import os
import re

from fresh_process import with_server

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "two_faces.py")


def test_two_faces_give_the_same_losses_within_1e_5():
    # (as `python EXAMPLE`, in a fresh child of a server that imported ember once:
    # tests/fresh_process.py)
    out = with_server("ember").run_path(EXAMPLE, cwd=os.getcwd(), timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    rows = re.findall(r"^\s*(\d+)\s+(\S+)\s+(\S+)$", out.stdout, re.M)
    assert len(rows) >= 10
    for _, torch_loss, mlx_loss in rows:
        assert abs(float(torch_loss) - float(mlx_loss)) < 1e-5
    assert float(rows[-1][1]) < 0.5 * float(rows[0][1])  # and the model learned
    largest = float(re.search(r"largest loss difference over \d+ steps: (\S+)",
                              out.stdout).group(1))
    assert largest < 1e-5
