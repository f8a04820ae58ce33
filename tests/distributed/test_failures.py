"""A rank that dies or raises ends the whole job with a clear error, never a hang."""

import pytest

pytest.importorskip("mpi4py")


def test_killed_rank_makes_the_others_fail_within_the_timeout(launch):
    out = launch("failing_rank.py", 3, "kill", timeout=60)
    assert out.returncode != 0
    text = out.stdout + out.stderr
    assert "did not complete within the timeout (3 s)" in text, text
    assert "which it should not have" not in text


def test_raising_rank_aborts_the_job_with_its_traceback(launch):
    out = launch("failing_rank.py", 2, "raise", timeout=60)
    assert out.returncode != 0
    assert "ValueError: rank 1 gives up" in out.stderr, out.stderr
    assert "which it should not have" not in out.stdout
