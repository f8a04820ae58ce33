"""The example programs run and print what they claim (small settings, so CI stays fast)."""

import json
import os
import re

import pytest

from fresh_process import with_server

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def run(name, *args, timeout=300):
    """What `python examples/name args` prints, run from here in a fresh child of a server
    that imported ember once (tests/fresh_process.py: saves an interpreter start each)."""
    out = with_server("ember").run_path(os.path.join(EXAMPLES, name), *args, cwd=os.getcwd(),
                                        timeout=timeout)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_tour_shows_views_and_bytes():
    text = run("tour.py")
    assert "view" in text and "reshape" in text and "bytes" in text


def test_gradient_walk_reaches_1260_and_960():
    text = run("gradient_walk.py")
    assert "a.grad = 1260, b.grad = 960" in text


def test_quadratic_descent_converges(tmp_path):
    text = run("quadratic_descent.py", "--dim", "10", "--cond", "10", "--steps", "200",
               "--out", str(tmp_path))
    dist = float(re.search(r"distance to the minimiser: (\S+)", text).group(1))
    assert dist < 1e-6
    assert (tmp_path / "quadratic_descent.png").stat().st_size > 0


def test_logistic_regression_separates_the_blobs():
    text = run("logistic_regression.py")
    acc = float(re.findall(r"accuracy (\S+)", text)[-1])
    assert acc > 0.9


def test_char_model_learns_the_grammar():
    text = run("char_model.py", "--steps", "100")
    losses = [float(v) for v in re.findall(r"loss (\S+)", text)]
    assert losses[-1] < losses[0] * 0.7
    assert text.count("sample:") == 1


@pytest.mark.parametrize("flags", [[], ["--cnn"]])
def test_digits_trains_saves_and_reloads(tmp_path, flags):
    text = run("digits.py", "--epochs", "3", "--out", str(tmp_path), *flags)
    acc = float(re.search(r"test accuracy ([\d.]+)%", text).group(1))
    assert acc > 70
    assert "same predictions: True" in text
    assert (tmp_path / "digits.pt").exists() and (tmp_path / "digits.png").exists()


def test_two_styles_give_equal_gradients_and_per_example_ones():
    text = run("two_styles.py")
    tape, functional = re.search(r"loss: tape (\S+), functional (\S+)", text).groups()
    assert tape == functional
    assert "per-example gradient of weight: (8, 2, 3)" in text
    assert text.count("max difference between the two styles") == 2


def test_inside_draws_explains_counts_and_logs(tmp_path):
    text = run("inside.py", "--out", str(tmp_path), "--steps", "5")
    assert "a.grad = 1260, b.grad = 960" in text
    assert (tmp_path / "course_graph.png").read_bytes().startswith(b"\x89PNG")
    assert ".view(6) fails" in text
    assert re.search(r"^float32\s+4\s+28\.00\s+26\.08$", text, re.M)  # 7B in fp32: 28 GB
    assert re.search(r"^4-bit\s+0\.5\s+3\.50\s+3\.26$", text, re.M)
    # the profiled step's table: its top row is the range that holds the whole step (which
    # op rows make the top ten moves with the machine's load), and the trace has every op
    assert re.search(r"^\s+train_step\s+[\d.]+%", text, re.M) and "Self CPU %" in text
    events = json.loads((tmp_path / "train_step_trace.json").read_text())["traceEvents"]
    assert {"aten::addmm", "aten::_log_softmax", "aten::nll_loss"} <= {e.get("name")
                                                                      for e in events}
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    ea = EventAccumulator(str(tmp_path / "runs" / "inside"))
    ea.Reload()
    assert [e.step for e in ea.Scalars("loss")] == list(range(5)) and ea.Graph().node


def test_compile_example_prints_equal_losses_a_graph_and_c():
    text = run("compile.py", "--steps", "12")
    assert text.count("same: True") == 3 and "same: False" not in text
    assert "graph breaks: 0" in text and "def program(" in text
    assert "addmm" in text and ("fused C loop" in text or "no C compiler" in text)
