"""The course texts' MLX programs (tests/mlx/course/), run unmodified on ember through
`python -m ember.run`, print what MLX 0.32.4 printed for each (its output beside each
program): the same lines, numbers within a relative 1e-3; lines that report a time are not
compared. The numbers come from MLX's random streams, so this also checks that
`mx.random` draws MLX's numbers."""

import os
import re
from pathlib import Path

import pytest

from fresh_process import with_server

COURSE = Path(__file__).parent / "course"
PROGRAMS = sorted(p.name for p in COURSE.glob("m000_*.py"))
# lines (by index) that print a wall-clock time
TIMED = {"m000_05_lazy_timing.py": {0, 1}, "m000_06_timing_eval.py": {0}}
# programs that draw without `mx.random.seed`: MLX 0.32.4 starts its key from the clock,
# so MLX itself prints other numbers on each run; their lines are compared as text with
# the numbers left out
UNSEEDED = {"m000_02_cheatsheet_lazy.py"}
_NUMBER = re.compile(r"-?\d+(?:\.\d*)?(?:e[+-]?\d+)?|nan|-?inf")


def _same_line(ours: str, theirs: str, numbers: bool = True) -> bool:
    """Equal text around the numbers, and each number within a relative 1e-3."""
    if _NUMBER.sub("#", ours) != _NUMBER.sub("#", theirs):
        return False
    if not numbers:
        return True
    for a, b in zip(_NUMBER.findall(ours), _NUMBER.findall(theirs)):
        x, y = float(a), float(b)
        if not (x == y or abs(x - y) <= 1e-3 * max(abs(x), abs(y))):
            return False
    return True


@pytest.mark.parametrize("program", PROGRAMS)
def test_course_program_prints_what_mlx_prints(program, tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(__file__).parents[2] / "src"), os.environ.get("PYTHONPATH", "")])}
    # (as `python -m ember.run`, in a fresh child of a server that imported ember once:
    # tests/fresh_process.py)
    run = with_server("ember.run", env).run_path(COURSE / program, cwd=tmp_path, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    ours = run.stdout.splitlines()
    theirs = (COURSE / program.replace(".py", ".mlx-0.32.4.out")).read_text().splitlines()
    assert len(ours) == len(theirs), (ours, theirs)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if i in TIMED.get(program, ()):
            float(a.rpartition(" ")[2])  # a time is printed there
            continue
        assert _same_line(a, b, program not in UNSEEDED), (i, a, b)
