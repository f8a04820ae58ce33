"""examples/two_faces.py: the PyTorch face and the MLX face train one model alike."""

import os
import re
import subprocess
import sys

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "two_faces.py")


def test_two_faces_give_the_same_losses_within_1e_5():
    out = subprocess.run([sys.executable, EXAMPLE], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    rows = re.findall(r"^\s*(\d+)\s+(\S+)\s+(\S+)$", out.stdout, re.M)
    assert len(rows) >= 10
    for _, torch_loss, mlx_loss in rows:
        assert abs(float(torch_loss) - float(mlx_loss)) < 1e-5
    assert float(rows[-1][1]) < 0.5 * float(rows[0][1])  # and the model learned
    largest = float(re.search(r"largest loss difference over \d+ steps: (\S+)",
                              out.stdout).group(1))
    assert largest < 1e-5
